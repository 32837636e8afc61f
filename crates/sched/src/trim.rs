//! The trim queue shared by the policies: coalescing, batching and advisory
//! trims.
//!
//! - Coalescing: queued trims leave as one command carrying up to
//!   `max_ranges` ranges, as FreeBSD's `ada` packs BIO_DELETEs into one ATA
//!   DSM TRIM (and NVMe packs ranges into one deallocate).
//! - Batching (Netflix): with a goal, trims are held until `goal` of them wait
//!   or the oldest has waited `max_hold`, so the device sees fewer, larger
//!   trim commands.
//! - Advisory trims: a trim only helps the drive's garbage collector; when
//!   trims pile up behind other work, completing the oldest without sending
//!   them costs nothing but that help. With `advisory_limit` N > 0, trims
//!   beyond N waiting are completed unsent, oldest first; a producer short of
//!   space can also ask for it ([`TrimQueue::speed_up`], FreeBSD's
//!   BIO_SPEEDUP).
//!
//! - Overwritten trims ([`TrimQueue::cut`]): a write queued after a trim
//!   that overlaps it takes its range out of the trim, so the trim cannot
//!   reach the new data whenever it is sent, and a trim overwritten whole is
//!   completed unsent (the overwrite tells the drive the same thing). F2FS
//!   does the same with a discard it has not yet issued when it reuses the
//!   blocks. Every policy with a trim queue does this as it queues a write.
//!
//! Otherwise trims are assumed not to overlap reads or writes that are
//! queued or in flight, as in FreeBSD: the file system does not trim what it
//! still uses.

use std::collections::VecDeque;

use crate::request::{Command, Op, Request};
use crate::units::{Bytes, Nanos};

/// Ranges one ATA DSM TRIM carries in FreeBSD's `ada` by default (8 blocks of
/// 64 ranges).
pub const DEFAULT_MAX_RANGES: u32 = 512;

#[derive(Debug)]
pub struct TrimQueue {
    queue: VecDeque<Request>,
    elided: VecDeque<Request>,
    max_ranges: usize,
    advisory_limit: usize,
}

impl TrimQueue {
    /// `advisory_limit` 0 turns advisory trims off.
    pub fn new(max_ranges: u32, advisory_limit: u32) -> TrimQueue {
        TrimQueue {
            queue: VecDeque::new(),
            elided: VecDeque::new(),
            max_ranges: max_ranges.max(1) as usize,
            advisory_limit: advisory_limit as usize,
        }
    }

    pub fn push(&mut self, request: Request) {
        debug_assert_eq!(request.op, Op::Trim);
        self.queue.push_back(request);
        if self.advisory_limit > 0 && self.queue.len() > self.advisory_limit {
            let oldest = self
                .queue
                .pop_front()
                .expect("queue is longer than the limit");
            self.elided.push_back(oldest);
        }
    }

    /// Trims waiting to be sent.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Whether anything waits, to be sent or to be completed unsent.
    pub fn has_work(&self) -> bool {
        !self.queue.is_empty() || !self.elided.is_empty()
    }

    /// Whether a batch is due: always when there is no goal; otherwise when the
    /// goal is reached or the oldest trim has waited `max_hold`.
    pub fn batch_due(&self, now: Nanos, goal: u32, max_hold: Nanos) -> bool {
        let Some(oldest) = self.queue.front() else {
            return false;
        };
        goal == 0 || self.queue.len() >= goal as usize || now - oldest.submitted >= max_hold
    }

    /// When a held batch becomes due by age.
    pub fn due_at(&self, max_hold: Nanos) -> Option<Nanos> {
        self.queue.front().map(|oldest| oldest.submitted + max_hold)
    }

    /// Takes up to `max_ranges` trims, oldest first, as one command.
    pub fn take_command(&mut self, now: Nanos) -> Option<Command> {
        let first = self.queue.pop_front()?;
        let mut command = Command::single(first, now);
        while command.requests.len() < self.max_ranges {
            match self.queue.pop_front() {
                Some(next) => command.requests.push(next),
                None => break,
            }
        }
        Some(command)
    }

    /// Takes `[offset, offset + len)`, which a write queued after the trims
    /// overwrites, out of every queued trim (counted in `cuts`); a trim
    /// left with nothing is completed unsent.
    pub fn cut(&mut self, offset: Bytes, len: Bytes, cuts: &mut TrimCuts) {
        let whole = cut_queued(&mut self.queue, |trim| Some(trim), offset, len, cuts);
        self.elided.extend(whole);
    }

    /// Completes `trim`, which waited elsewhere (in a throttle ahead of this
    /// queue), unsent.
    pub(crate) fn elide(&mut self, trim: Request) {
        self.elided.push_back(trim);
    }

    /// The next trim to complete without sending, if any.
    pub fn pop_elided(&mut self) -> Option<Request> {
        self.elided.pop_front()
    }

    /// Completes queued trims unsent, oldest first, until `bytes` are covered
    /// (all of them when `bytes` is zero), as BIO_SPEEDUP does upstream.
    pub fn speed_up(&mut self, bytes: Bytes) {
        let mut covered = 0u64;
        while bytes.0 == 0 || covered < bytes.0 {
            let Some(trim) = self.queue.pop_front() else {
                break;
            };
            covered = covered.saturating_add(trim.len.0);
            self.elided.push_back(trim);
        }
    }
}

/// What a write over a trim's bytes left of the trim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Overwritten {
    /// Nothing: they do not overlap.
    No,
    /// The trim is shortened to what the write left.
    Partly,
    /// Every byte: the trim is left as it was, for its owner to complete
    /// unsent.
    Whole,
}

/// What later writes took out of trims that were still waiting: the
/// report says so, since the trims complete shorter than they were asked
/// (those overwritten whole complete unsent, and count as elided).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrimCuts {
    /// Times a write took bytes out of a trim (one trim may be cut by
    /// many writes).
    pub cuts: u64,
    /// Their bytes the writes covered.
    pub written_over: Bytes,
    /// Their bytes beside a write inside them, not sent: one request
    /// carries one range, and the smaller side goes.
    pub dropped: Bytes,
}

impl TrimCuts {
    /// Every byte taken out of the trims.
    pub fn removed(&self) -> Bytes {
        self.written_over + self.dropped
    }

    pub(crate) fn add(&mut self, other: TrimCuts) {
        self.cuts += other.cuts;
        self.written_over += other.written_over;
        self.dropped += other.dropped;
    }
}

/// [`overwrite`]s every trim in `queue` (`trim_of` finds an entry's trim,
/// if it is one); those overwritten whole leave it and are handed back,
/// in order, for their owner to complete unsent.
pub(crate) fn cut_queued<T>(
    queue: &mut VecDeque<T>,
    trim_of: fn(&mut T) -> Option<&mut Request>,
    offset: Bytes,
    len: Bytes,
    cuts: &mut TrimCuts,
) -> Vec<T> {
    let mut whole = Vec::new();
    let mut i = 0;
    while i < queue.len() {
        let overwritten = trim_of(&mut queue[i])
            .is_some_and(|trim| overwrite(trim, offset, len, cuts) == Overwritten::Whole);
        if overwritten {
            whole.extend(queue.remove(i));
        } else {
            i += 1;
        }
    }
    whole
}

/// Takes `[offset, offset + len)`, which a write queued after `trim`
/// overwrites, out of `trim`, counting what it took in `cuts`. A write
/// inside a trim leaves two pieces, and one request carries one range, so
/// the smaller piece is dropped (a trim is advisory; dropping it only
/// withholds a hint from the drive).
pub(crate) fn overwrite(
    trim: &mut Request,
    offset: Bytes,
    len: Bytes,
    cuts: &mut TrimCuts,
) -> Overwritten {
    let (start, end) = (offset.0, offset.0.saturating_add(len.0));
    let (t_start, t_end) = (trim.offset.0, trim.offset.0 + trim.len.0);
    if len.0 == 0 || end <= t_start || t_end <= start {
        return Overwritten::No;
    }
    let before = start.saturating_sub(t_start).min(t_end - t_start);
    let after = t_end.saturating_sub(end).min(t_end - t_start);
    if before == 0 && after == 0 {
        return Overwritten::Whole;
    }
    cuts.cuts += 1;
    cuts.dropped += Bytes(before.min(after));
    cuts.written_over += Bytes(trim.len.0 - before - after);
    if before >= after {
        trim.len = Bytes(before);
    } else {
        trim.offset = Bytes(t_end - after);
        trim.len = Bytes(after);
    }
    Overwritten::Partly
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trim(id: u64, at_ms: u64) -> Request {
        Request::new(
            id,
            Op::Trim,
            id * 1_000_000,
            65536,
            Nanos::from_millis(at_ms),
        )
    }

    #[test]
    fn queued_trims_coalesce_into_one_command() {
        let mut q = TrimQueue::new(3, 0);
        for id in 0..5 {
            q.push(trim(id, 0));
        }
        let cmd = q.take_command(Nanos(9)).unwrap();
        assert_eq!(cmd.requests.len(), 3);
        assert_eq!(cmd.op, Op::Trim);
        assert_eq!(q.len(), 2);
    }

    #[test]
    fn a_batch_waits_for_its_goal_or_its_age() {
        let mut q = TrimQueue::new(512, 0);
        let hold = Nanos::from_millis(50);
        q.push(trim(0, 10));
        assert!(
            q.batch_due(Nanos::from_millis(10), 0, hold),
            "no goal: due at once"
        );
        assert!(!q.batch_due(Nanos::from_millis(20), 2, hold));
        assert!(
            q.batch_due(Nanos::from_millis(60), 2, hold),
            "oldest waited 50 ms"
        );
        q.push(trim(1, 20));
        assert!(q.batch_due(Nanos::from_millis(20), 2, hold), "goal reached");
        assert_eq!(q.due_at(hold), Some(Nanos::from_millis(60)));
    }

    #[test]
    fn advisory_trims_beyond_the_limit_complete_unsent_oldest_first() {
        let mut q = TrimQueue::new(512, 2);
        for id in 0..4 {
            q.push(trim(id, 0));
        }
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop_elided().map(|r| r.id.0), Some(0));
        assert_eq!(q.pop_elided().map(|r| r.id.0), Some(1));
        assert_eq!(q.pop_elided(), None);
    }

    fn ranges(q: &TrimQueue) -> Vec<(u64, u64)> {
        q.queue.iter().map(|t| (t.offset.0, t.len.0)).collect()
    }

    #[test]
    fn writes_cut_the_trims_they_overwrite() {
        let mut q = TrimQueue::new(512, 0);
        let mut cuts = TrimCuts::default();
        q.push(Request::new(0, Op::Trim, 1000, 1000, Nanos::ZERO));
        q.cut(Bytes(500), Bytes(700), &mut cuts);
        assert_eq!(ranges(&q), [(1200, 800)], "a prefix is cut");
        q.cut(Bytes(1900), Bytes(500), &mut cuts);
        assert_eq!(ranges(&q), [(1200, 700)], "a suffix is cut");
        q.cut(Bytes(1300), Bytes(100), &mut cuts);
        assert_eq!(ranges(&q), [(1400, 500)], "inside: the larger piece stays");
        q.cut(Bytes(0), Bytes(1400), &mut cuts);
        assert_eq!(ranges(&q), [(1400, 500)], "a write that only touches it");
        q.cut(Bytes(1600), Bytes::ZERO, &mut cuts);
        assert_eq!(ranges(&q), [(1400, 500)], "an empty write cuts nothing");
        assert_eq!(q.pop_elided(), None);
        let counted = TrimCuts {
            cuts: 3,
            written_over: Bytes(200 + 100 + 100),
            dropped: Bytes(100),
        };
        assert_eq!(
            cuts, counted,
            "500 of the 1000 bytes taken, 100 beside a write"
        );
        q.cut(Bytes(1400), Bytes(500), &mut cuts);
        assert!(q.is_empty());
        assert_eq!(q.pop_elided().map(|r| r.id.0), Some(0), "overwritten whole");
        assert_eq!(cuts, counted, "a trim overwritten whole is elided, not cut");
    }

    #[test]
    fn speed_up_completes_just_enough_bytes() {
        let mut q = TrimQueue::new(512, 0);
        for id in 0..4 {
            q.push(trim(id, 0));
        }
        q.speed_up(Bytes(65536 + 1));
        assert_eq!(q.len(), 2);
        q.speed_up(Bytes::ZERO);
        assert!(q.is_empty() && q.has_work());
    }
}
