//! Ordering rules that every policy keeps, whatever it reorders:
//!
//! 1. A flush never overtakes earlier writes: it leaves the scheduler only
//!    when every write queued before it has been sent *and* completed (a flush
//!    covers completed writes only, on SATA and NVMe alike). Writes queued
//!    after a flush stay behind it.
//! 2. A read that overlaps a queued write is not sent before that write, so it
//!    cannot return data older than what its producer wrote first.
//!
//! Rule 2 must be cheap: a throttled write queue may hold thousands of
//! writes, and every read would otherwise scan them. Queued writes are
//! counted in a small counting filter indexed by 1 MiB granule; a read whose
//! granules are all zero cannot overlap anything (the common case, two loads).
//! Only on a hit does the read scan the write queue, newest first, for the
//! last write it overlaps, and remember that write's sequence number. Writes
//! leave in order, so the read may go once the write sequence has passed it.

use std::collections::VecDeque;

use crate::request::{Op, Request};

/// Granule of the overlap filter: 1 MiB, about one large sequential write.
const GRANULE_SHIFT: u32 = 20;
/// Filter slots; granules alias modulo this (4 GiB apart), which costs only a
/// needless scan.
const FILTER_SLOTS: usize = 4096;

/// A queued request and its ordering tag: for writes and flushes their
/// sequence number, for reads the sequence number of the last queued write they
/// overlap (0 when none).
#[derive(Clone, Debug)]
pub struct Queued {
    pub request: Request,
    pub tag: u64,
}

/// A flush may go once no write is in the device.
pub fn flush_may_go(writes_in_flight: u32) -> bool {
    writes_in_flight == 0
}

/// Tracks queued writes so that overlapping reads wait for them.
#[derive(Debug)]
pub struct WriteOrder {
    filter: Box<[u32]>,
    /// Queued writes too wide for the filter (they match every read).
    wide_writes: u32,
    next_seq: u64,
    sent_seq: u64,
}

impl Default for WriteOrder {
    fn default() -> Self {
        WriteOrder {
            filter: vec![0; FILTER_SLOTS].into_boxed_slice(),
            wide_writes: 0,
            next_seq: 1,
            sent_seq: 0,
        }
    }
}

/// Granules `[first, last]` of a non-empty request, or `None` when it spans the
/// whole filter.
fn granules(request: &Request) -> Option<(u64, u64)> {
    let first = request.offset.0 >> GRANULE_SHIFT;
    let last = (request.end() - 1) >> GRANULE_SHIFT;
    (last - first < FILTER_SLOTS as u64).then_some((first, last))
}

fn slot(granule: u64) -> usize {
    (granule as usize) & (FILTER_SLOTS - 1)
}

impl WriteOrder {
    /// Registers a write or flush entering the write queue; returns its tag.
    pub fn enqueue_write(&mut self, write: &Request) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.adjust(write, true);
        seq
    }

    /// A write or flush left the queue (writes leave in sequence order).
    pub fn sent_write(&mut self, write: &Queued) {
        self.sent_seq = write.tag;
        self.adjust(&write.request, false);
    }

    /// The tag for a read entering the read queue.
    pub fn read_tag(&self, read: &Request, writes: &VecDeque<Queued>) -> u64 {
        if writes.is_empty() || read.len.0 == 0 || !self.may_overlap(read) {
            return 0;
        }
        writes
            .iter()
            .rev()
            .find(|w| w.request.op == Op::Write && w.request.overlaps(read))
            .map_or(0, |w| w.tag)
    }

    /// Whether a read with this tag may be sent now.
    pub fn read_may_go(&self, tag: u64) -> bool {
        tag <= self.sent_seq
    }

    fn may_overlap(&self, read: &Request) -> bool {
        if self.wide_writes > 0 {
            return true;
        }
        match granules(read) {
            Some((first, last)) => (first..=last).any(|g| self.filter[slot(g)] > 0),
            None => true,
        }
    }

    fn adjust(&mut self, write: &Request, add: bool) {
        if write.op != Op::Write || write.len.0 == 0 {
            return;
        }
        let bump = |count: &mut u32| {
            if add {
                *count += 1
            } else {
                *count -= 1
            }
        };
        match granules(write) {
            Some((first, last)) => (first..=last).for_each(|g| bump(&mut self.filter[slot(g)])),
            None => bump(&mut self.wide_writes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Nanos;

    fn req(id: u64, op: Op, offset: u64, len: u64) -> Request {
        Request::new(id, op, offset, len, Nanos::ZERO)
    }

    #[test]
    fn a_read_waits_for_the_last_write_it_overlaps() {
        let mut order = WriteOrder::default();
        let mut writes = VecDeque::new();
        for (id, offset) in [(1, 0), (2, 8192), (3, 0)] {
            let w = req(id, Op::Write, offset, 4096);
            let tag = order.enqueue_write(&w);
            writes.push_back(Queued { request: w, tag });
        }
        let read = req(9, Op::Read, 0, 4096);
        let tag = order.read_tag(&read, &writes);
        assert_eq!(tag, 3);
        for _ in 0..2 {
            let w = writes.pop_front().unwrap();
            order.sent_write(&w);
            assert!(!order.read_may_go(tag));
        }
        order.sent_write(&writes.pop_front().unwrap());
        assert!(order.read_may_go(tag));
    }

    #[test]
    fn a_read_elsewhere_does_not_wait() {
        let mut order = WriteOrder::default();
        let w = req(1, Op::Write, 0, 1 << 20);
        let tag = order.enqueue_write(&w);
        let writes = VecDeque::from([Queued { request: w, tag }]);
        assert_eq!(order.read_tag(&req(2, Op::Read, 1 << 20, 4096), &writes), 0);
        // Same filter slot 4 GiB away: the filter sends it to the scan, which
        // finds no overlap.
        let aliased = req(3, Op::Read, 4 << 30, 4096);
        assert!(order.may_overlap(&aliased));
        assert_eq!(order.read_tag(&aliased, &writes), 0);
    }

    #[test]
    fn huge_writes_are_still_seen() {
        let mut order = WriteOrder::default();
        let w = req(1, Op::Write, 0, 8 << 30);
        let tag = order.enqueue_write(&w);
        let writes = VecDeque::from([Queued {
            request: w.clone(),
            tag,
        }]);
        assert_eq!(
            order.read_tag(&req(2, Op::Read, 7 << 30, 4096), &writes),
            tag
        );
        order.sent_write(&Queued { request: w, tag });
        assert_eq!(order.wide_writes, 0);
    }
}
