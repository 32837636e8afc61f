//! Ordering rules that every policy keeps, whatever it reorders:
//!
//! 1. A flush never overtakes earlier writes: it leaves the scheduler only
//!    when every write queued before it has been sent *and* completed (a flush
//!    covers completed writes only, on SATA and NVMe alike). Writes queued
//!    after a flush stay behind it.
//! 2. A read that overlaps a queued write is not sent before that write, so it
//!    cannot return data older than what its producer wrote first. (`steer`
//!    answers a read that queued writes cover from their data instead,
//!    without sending it.)
//!
//! Rule 2 must be cheap: a throttled write queue may hold thousands of
//! writes, and every read would otherwise scan them. Queued writes are
//! counted in a small counting filter indexed by 1 MiB granule; a read whose
//! granules are all zero cannot overlap anything (the common case, two loads).
//! Only on a hit does the read look, in an index of the unsent writes by
//! granule, for the last write it overlaps, and remember that write's
//! sequence number (a scan of the queue made a backlog that grew all run
//! cost the square of its length). Writes leave in order, so the read may go
//! once the write sequence has passed it.

use std::collections::{BTreeMap, HashMap, VecDeque};

use crate::request::{Command, Op, Request};
use crate::units::Nanos;

/// Granule of the overlap filter: 1 MiB, about one large sequential write.
const GRANULE_SHIFT: u32 = 20;
/// Filter slots; granules alias modulo this (4 GiB apart), which costs only a
/// needless scan.
const FILTER_SLOTS: usize = 4096;
/// Granules a write or read may span and still be looked up granule by
/// granule in [`Barrier`]'s index; wider ones are few and scanned.
const INDEXED_GRANULES: u64 = 64;

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

/// Queued writes counted per filter slot: a read whose granules all count
/// zero overlaps none of them, without a scan.
#[derive(Debug)]
struct OverlapFilter {
    slots: Box<[u32]>,
    /// Queued writes too wide for the filter (they match every read).
    wide_writes: u32,
}

impl Default for OverlapFilter {
    fn default() -> Self {
        OverlapFilter {
            slots: vec![0; FILTER_SLOTS].into_boxed_slice(),
            wide_writes: 0,
        }
    }
}

impl OverlapFilter {
    fn may_overlap(&self, read: &Request) -> bool {
        if self.wide_writes > 0 {
            return true;
        }
        match granules(read) {
            Some((first, last)) => (first..=last).any(|g| self.slots[slot(g)] > 0),
            None => true,
        }
    }

    /// Counts a write in (`add`) or out; flushes and empty writes are not counted.
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
            Some((first, last)) => (first..=last).for_each(|g| bump(&mut self.slots[slot(g)])),
            None => bump(&mut self.wide_writes),
        }
    }
}

/// Tracks queued writes so that overlapping reads wait for them.
#[derive(Debug)]
pub struct WriteOrder {
    filter: OverlapFilter,
    unsent: UnsentWrites,
    next_seq: u64,
    sent_seq: u64,
}

impl Default for WriteOrder {
    fn default() -> Self {
        WriteOrder {
            filter: OverlapFilter::default(),
            unsent: UnsentWrites::default(),
            next_seq: 1,
            sent_seq: 0,
        }
    }
}

/// Writes not yet sent, by sequence number and by the granules they touch,
/// so that a read looks only at the writes near it, not at a whole
/// throttled backlog (those wider than `INDEXED_GRANULES` are kept apart).
#[derive(Debug, Default)]
struct UnsentWrites {
    by_seq: BTreeMap<u64, (u64, u64)>,
    by_granule: HashMap<u64, BTreeMap<u64, (u64, u64)>>,
    wide: BTreeMap<u64, (u64, u64)>,
}

impl UnsentWrites {
    fn insert(&mut self, seq: u64, write: &Request) {
        self.by_seq.insert(seq, (write.offset.0, write.end()));
        self.index(seq, write, true);
    }

    /// Takes a write out; whether it was in.
    fn remove(&mut self, seq: u64, write: &Request) -> bool {
        let was_in = self.by_seq.remove(&seq).is_some();
        if was_in {
            self.index(seq, write, false);
        }
        was_in
    }

    fn is_empty(&self) -> bool {
        self.by_seq.is_empty()
    }

    /// The lowest sequence number unsent.
    fn first(&self) -> Option<u64> {
        self.by_seq.keys().next().copied()
    }

    /// The last unsent write up to `upto` that overlaps `read`.
    fn last_overlap(&self, read: &Request, upto: u64) -> Option<u64> {
        let (start, end) = (read.offset.0, read.end());
        let last = |writes: &BTreeMap<u64, (u64, u64)>| {
            writes
                .range(..=upto)
                .rev()
                .find(|(_, (s, e))| *s < end && start < *e)
                .map(|(seq, _)| *seq)
        };
        let Some((first, last_granule)) = indexed_granules(read) else {
            return last(&self.by_seq);
        };
        let near = (first..=last_granule).filter_map(|g| self.by_granule.get(&g).and_then(last));
        near.chain(last(&self.wide)).max()
    }

    /// Adds an unsent write to the index by granule, or takes it out.
    fn index(&mut self, seq: u64, write: &Request, add: bool) {
        let range = (write.offset.0, write.end());
        let Some((first, last)) = indexed_granules(write) else {
            if add {
                self.wide.insert(seq, range);
            } else {
                self.wide.remove(&seq);
            }
            return;
        };
        for g in first..=last {
            if add {
                self.by_granule.entry(g).or_default().insert(seq, range);
            } else if let Some(writes) = self.by_granule.get_mut(&g) {
                writes.remove(&seq);
                if writes.is_empty() {
                    self.by_granule.remove(&g);
                }
            }
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

/// Granules `[first, last]` of a non-empty request narrow enough for the
/// barrier's index.
fn indexed_granules(request: &Request) -> Option<(u64, u64)> {
    let first = request.offset.0 >> GRANULE_SHIFT;
    let last = (request.end() - 1) >> GRANULE_SHIFT;
    (last - first < INDEXED_GRANULES).then_some((first, last))
}

fn slot(granule: u64) -> usize {
    (granule as usize) & (FILTER_SLOTS - 1)
}

impl WriteOrder {
    /// Registers a write or flush entering the write queue; returns its tag.
    pub fn enqueue_write(&mut self, write: &Request) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        if write.op == Op::Write && write.len.0 > 0 {
            self.unsent.insert(seq, write);
            self.filter.adjust(write, true);
        }
        seq
    }

    /// A write or flush left the queue (writes leave in sequence order).
    pub fn sent_write(&mut self, write: &Queued) {
        self.sent_seq = write.tag;
        if self.unsent.remove(write.tag, &write.request) {
            self.filter.adjust(&write.request, false);
        }
    }

    /// The tag for a read entering the read queue: the last queued write
    /// it overlaps, or 0.
    pub fn read_tag(&self, read: &Request) -> u64 {
        if self.unsent.is_empty() || read.len.0 == 0 || !self.filter.may_overlap(read) {
            return 0;
        }
        self.unsent.last_overlap(read, u64::MAX).unwrap_or(0)
    }

    /// Whether a read with this tag may be sent now.
    pub fn read_may_go(&self, tag: u64) -> bool {
        tag <= self.sent_seq
    }
}

/// The same two rules for policies whose writes leave out of arrival order
/// (sorted by offset, queued per tenant, held by a throttle), where
/// [`WriteOrder`]'s "writes leave in sequence" does not hold.
///
/// - Writes and flushes are admitted through [`Barrier::admit`]. While a
///   flush waits, it and every write or flush queued after it are held here,
///   outside the policy's queues; so the policy only ever reorders writes of
///   one epoch between two flushes. [`Barrier::take_flush`] hands the flush
///   over once every earlier write has been sent (the caller adds "and
///   completed", from its in-flight count, if the flush goes straight to the
///   device), and [`Barrier::release`] then hands over the writes behind it.
/// - A read that overlaps a queued write carries the sequence number of the
///   last such write; it may go once no unsent write up to that number
///   overlaps it ([`Barrier::read_ready`]), whatever order the writes left in.
///
/// "Sent" is whatever the policy reports through [`Barrier::sent_write`]: the
/// hand-off to the device, or to a strict FIFO in front of it.
#[derive(Debug)]
pub struct Barrier {
    filter: OverlapFilter,
    next_seq: u64,
    /// Writes admitted or held and not yet sent.
    unsent: UnsentWrites,
    /// A waiting flush at the head, and everything write-side queued after it.
    held: VecDeque<Queued>,
    /// Writes of the epoch after the last flush handed over, not released yet.
    releasing: bool,
}

impl Default for Barrier {
    fn default() -> Self {
        Barrier {
            filter: OverlapFilter::default(),
            next_seq: 1,
            unsent: UnsentWrites::default(),
            held: VecDeque::new(),
            releasing: false,
        }
    }
}

impl Barrier {
    /// Registers a write or flush. Returns it tagged when the policy may queue
    /// it now, or `None` when it waits behind a flush (here).
    pub fn admit(&mut self, request: Request) -> Option<Queued> {
        let tag = self.next_seq;
        self.next_seq += 1;
        if request.op == Op::Write && request.len.0 > 0 {
            self.unsent.insert(tag, &request);
            self.filter.adjust(&request, true);
        }
        let entry = Queued { request, tag };
        if entry.request.op == Op::Flush || !self.held.is_empty() {
            self.held.push_back(entry);
            return None;
        }
        Some(entry)
    }

    /// A request arriving at a policy that queues only what may go:
    /// returned when it may be queued now; kept when it may not, a write or
    /// flush behind a flush here, a read over an unsent write in
    /// `held_reads` (the policy releases those as their writes are sent).
    /// Trims pass at once, untagged: neither rule is about them.
    pub fn pass(&mut self, request: Request, held_reads: &mut Vec<Queued>) -> Option<Queued> {
        match request.op {
            Op::Trim => Some(Queued { request, tag: 0 }),
            Op::Read => {
                let mut read = self.tag_read(request);
                if self.read_ready(&mut read) {
                    return Some(read);
                }
                held_reads.push(read);
                None
            }
            Op::Write | Op::Flush => self.admit(request),
        }
    }

    /// A read entering a read queue, tagged with [`Barrier::read_tag`].
    pub fn tag_read(&self, request: Request) -> Queued {
        Queued {
            tag: self.read_tag(&request),
            request,
        }
    }

    /// The tag for a read entering a read queue: the last unsent write it
    /// overlaps, or 0.
    pub fn read_tag(&self, read: &Request) -> u64 {
        if self.unsent.is_empty() || read.len.0 == 0 || !self.filter.may_overlap(read) {
            return 0;
        }
        self.unsent.last_overlap(read, u64::MAX).unwrap_or(0)
    }

    /// Whether a queued read may be sent now. Its tag becomes the last unsent
    /// write up to it that it overlaps (the same writes block it), so it need
    /// only be asked again once that write is sent; 0 once it may go, so the
    /// answer is cheap from then on.
    pub fn read_ready(&self, read: &mut Queued) -> bool {
        if read.tag == 0 {
            return true;
        }
        read.tag = self
            .unsent
            .last_overlap(&read.request, read.tag)
            .unwrap_or(0);
        read.tag == 0
    }

    /// A write (or flush) left the policy's queues for the device.
    pub fn sent_write(&mut self, write: &Queued) {
        if self.unsent.remove(write.tag, &write.request) {
            self.filter.adjust(&write.request, false);
        }
    }

    /// Whether a flush waits here.
    pub fn flush_waiting(&self) -> bool {
        self.held.front().is_some_and(|q| q.request.op == Op::Flush)
    }

    /// Whether the waiting flush may leave: every write queued before it has
    /// been sent.
    pub fn flush_due(&self) -> bool {
        let Some(flush) = self.held.front() else {
            return false;
        };
        self.unsent.first().is_none_or(|first| first > flush.tag)
    }

    /// Takes the waiting flush once it is due; the writes behind it then come
    /// out of [`Barrier::release`].
    pub fn take_flush(&mut self) -> Option<Queued> {
        if !self.flush_due() {
            return None;
        }
        self.releasing = true;
        self.held.pop_front()
    }

    /// The next write released by the last flush taken, up to the next flush.
    pub fn release(&mut self) -> Option<Queued> {
        if !self.releasing {
            return None;
        }
        match self.held.front() {
            Some(next) if next.request.op != Op::Flush => self.held.pop_front(),
            _ => {
                self.releasing = false;
                None
            }
        }
    }

    /// Held requests (a flush and what queued behind it).
    pub fn held(&self) -> impl Iterator<Item = &Request> {
        self.held.iter().map(|q| &q.request)
    }

    pub fn has_held(&self) -> bool {
        !self.held.is_empty()
    }
}

/// A read queue and a write queue in arrival order, for policies that send
/// writes in order from one queue and reads from another, with [`WriteOrder`]
/// or [`Barrier`] keeping the rules between them. A read that must wait for
/// its write does not hold back the reads queued behind it, which overlap
/// nothing: the first read that may go leaves first.
#[derive(Debug, Default)]
pub struct ReadWriteQueues {
    /// Reads; callers only push to the back, so the index of a read
    /// [`ReadWriteQueues::find_ready_read`] found stays its index until it
    /// is taken.
    pub reads: VecDeque<Queued>,
    /// Writes and flushes.
    pub writes: VecDeque<Queued>,
    /// Index in `reads` of the read [`ReadWriteQueues::find_ready_read`]
    /// last found may go.
    ready_read: Option<usize>,
}

impl ReadWriteQueues {
    /// Whether a read may go: looks for the first queued read that `ready`
    /// (the tracker's rule) lets go, and keeps it for
    /// [`ReadWriteQueues::send_ready_read`].
    pub fn find_ready_read(&mut self, ready: impl FnMut(&mut Queued) -> bool) -> bool {
        self.ready_read = self.reads.iter_mut().position(ready);
        self.ready_read.is_some()
    }

    /// Sends the read the last [`ReadWriteQueues::find_ready_read`] found.
    pub fn send_ready_read(&mut self, now: Nanos) -> Command {
        let read = self
            .ready_read
            .take()
            .and_then(|index| self.reads.remove(index))
            .expect("find_ready_read found a read that may go");
        Command::single(read.request, now)
    }

    /// Sends the write (or flush) at the head of the write queue and tells
    /// `sent` of it, the tracker's `sent_write`, so that the reads it held
    /// may go. Policies pick the write class only when a write is queued.
    pub fn send_write(&mut self, sent: impl FnOnce(&Queued), now: Nanos) -> Command {
        let write = self.writes.pop_front().expect("a write is queued");
        sent(&write);
        Command::single(write.request, now)
    }

    /// Whether neither queue holds anything.
    pub fn is_empty(&self) -> bool {
        self.reads.is_empty() && self.writes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let tag = order.read_tag(&read);
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
        order.enqueue_write(&w);
        assert_eq!(order.read_tag(&req(2, Op::Read, 1 << 20, 4096)), 0);
        // Same filter slot 4 GiB away: the filter sends it to the index,
        // which finds no overlap.
        let aliased = req(3, Op::Read, 4 << 30, 4096);
        assert!(order.filter.may_overlap(&aliased));
        assert_eq!(order.read_tag(&aliased), 0);
    }

    #[test]
    fn huge_writes_are_still_seen() {
        let mut order = WriteOrder::default();
        let w = req(1, Op::Write, 0, 8 << 30);
        let tag = order.enqueue_write(&w);
        assert_eq!(order.read_tag(&req(2, Op::Read, 7 << 30, 4096)), tag);
        order.sent_write(&Queued { request: w, tag });
        assert_eq!(order.filter.wide_writes, 0);
    }

    #[test]
    fn a_read_behind_its_write_lets_later_reads_go_and_goes_once_the_write_is_sent() {
        let mut order = WriteOrder::default();
        let mut queues = ReadWriteQueues::default();
        let write = req(1, Op::Write, 0, 4096);
        let tag = order.enqueue_write(&write);
        queues.writes.push_back(Queued {
            request: write,
            tag,
        });
        for (id, offset) in [(2, 0), (3, 1 << 30)] {
            let read = req(id, Op::Read, offset, 4096);
            let tag = order.read_tag(&read);
            queues.reads.push_back(Queued { request: read, tag });
        }
        assert!(queues.find_ready_read(|read| order.read_may_go(read.tag)));
        let now = Nanos::ZERO;
        let first_id = |command: Command| command.requests[0].id.0;
        assert_eq!(first_id(queues.send_ready_read(now)), 3);
        assert!(!queues.find_ready_read(|read| order.read_may_go(read.tag)));
        let sent = queues.send_write(|write| order.sent_write(write), now);
        assert_eq!(first_id(sent), 1);
        assert!(queues.find_ready_read(|read| order.read_may_go(read.tag)));
        assert_eq!(first_id(queues.send_ready_read(now)), 2);
        assert!(queues.is_empty());
    }

    #[test]
    fn a_barrier_holds_writes_behind_a_flush_until_it_is_taken() {
        let mut b = Barrier::default();
        let w1 = b.admit(req(1, Op::Write, 0, 4096)).unwrap();
        assert!(b.admit(req(2, Op::Flush, 0, 0)).is_none());
        assert!(b.admit(req(3, Op::Write, 8192, 4096)).is_none());
        assert!(b.admit(req(4, Op::Flush, 0, 0)).is_none());
        assert!(b.flush_waiting() && !b.flush_due());
        assert!(b.take_flush().is_none());
        b.sent_write(&w1);
        let flush = b.take_flush().unwrap();
        assert_eq!(flush.request.id.0, 2);
        assert_eq!(b.release().map(|q| q.request.id.0), Some(3));
        assert!(b.release().is_none(), "the second flush stops the release");
        assert!(
            b.flush_waiting() && !b.flush_due(),
            "write 3 is not sent yet"
        );
    }

    #[test]
    fn pass_holds_what_must_wait_and_lets_trims_through() {
        let mut b = Barrier::default();
        let mut held_reads = Vec::new();
        let w1 = b.pass(req(1, Op::Write, 0, 4096), &mut held_reads).unwrap();
        assert!(b.pass(req(2, Op::Flush, 0, 0), &mut held_reads).is_none());
        assert!(b.pass(req(3, Op::Read, 0, 4096), &mut held_reads).is_none());
        assert_eq!(held_reads.len(), 1, "the read over write 1 waits");
        let read = b.pass(req(4, Op::Read, 1 << 30, 4096), &mut held_reads);
        assert_eq!(read.map(|q| q.tag), Some(0), "a read elsewhere goes");
        let trim = b.pass(req(5, Op::Trim, 0, 4096), &mut held_reads);
        assert_eq!(
            trim.map(|q| q.tag),
            Some(0),
            "a trim goes, even behind the flush"
        );
        b.sent_write(&w1);
        assert!(b.read_ready(&mut held_reads[0]), "its write has gone");
    }

    #[test]
    fn a_read_waits_for_every_overlapping_write_whatever_order_they_leave_in() {
        let mut b = Barrier::default();
        let w1 = b.admit(req(1, Op::Write, 0, 8192)).unwrap();
        let w2 = b.admit(req(2, Op::Write, 4096, 8192)).unwrap();
        let mut read = Queued {
            request: req(3, Op::Read, 0, 16384),
            tag: 0,
        };
        read.tag = b.read_tag(&read.request);
        assert_eq!(read.tag, 2);
        b.sent_write(&w2);
        assert!(!b.read_ready(&mut read), "write 1 is still queued");
        b.sent_write(&w1);
        assert!(b.read_ready(&mut read));
        assert_eq!(read.tag, 0);
        let elsewhere = req(4, Op::Read, 1 << 30, 4096);
        assert_eq!(b.read_tag(&elsewhere), 0);
    }

    #[test]
    fn a_held_read_is_retagged_to_the_last_write_still_in_its_way() {
        let mut b = Barrier::default();
        let near = b.admit(req(1, Op::Write, 0, 4096)).unwrap();
        // A backlog elsewhere, and one write wider than the index.
        let backlog: Vec<Queued> = (0..1000)
            .map(|i| b.admit(req(10 + i, Op::Write, (1 << 30) + (i << 20), 4096)))
            .map(Option::unwrap)
            .collect();
        let wide = b.admit(req(2, Op::Write, 0, 1 << 30)).unwrap();
        let mut read = Queued {
            request: req(3, Op::Read, 0, 4096),
            tag: 0,
        };
        read.tag = b.read_tag(&read.request);
        assert_eq!(read.tag, wide.tag);
        b.sent_write(&wide);
        assert!(!b.read_ready(&mut read));
        assert_eq!(read.tag, near.tag, "waits on the write still overlapping");
        b.sent_write(&backlog[0]);
        assert!(!b.read_ready(&mut read));
        b.sent_write(&near);
        assert!(b.read_ready(&mut read));
        assert_eq!(read.tag, 0);
    }
}
