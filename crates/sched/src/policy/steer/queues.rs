//! The queues of unsent writes and of reads held behind them, and the
//! choices of what leaves them next: the write pushed ahead of the limit,
//! the write the limiters admit, a due flush, a trim done being held.

use std::collections::{BTreeMap, VecDeque};

use crate::limiter::LimiterKind;
use crate::ordering::{flush_may_go, Queued};
use crate::request::{Command, Op, Request};
use crate::units::{Bytes, Nanos};

use super::control::{windows, Window};
use super::{Steer, HORIZON};

/// Unsent writes by offset, so that a read finds the writes it overlaps in
/// log time: a throttled queue can hold thousands of writes, and the
/// barrier's own lookup scans them all whenever its coarse filter hits,
/// which a long queue makes most reads do.
#[derive(Debug, Default)]
pub(super) struct Unsent {
    /// (offset, tag) to end.
    by_offset: BTreeMap<(u64, u64), u64>,
    /// The longest write indexed since the index was last empty.
    longest: u64,
}

impl Unsent {
    pub(super) fn insert(&mut self, write: &Request, tag: u64) {
        if write.op == Op::Write && write.len.0 > 0 {
            self.by_offset.insert((write.offset.0, tag), write.end());
            self.longest = self.longest.max(write.len.0);
        }
    }

    pub(super) fn remove(&mut self, write: &Queued) {
        self.by_offset.remove(&(write.request.offset.0, write.tag));
        if self.by_offset.is_empty() {
            self.longest = 0;
        }
    }

    /// Whether the unsent writes cover every byte of `read`: then the
    /// newest unsent one over each byte holds the data the read is answered
    /// with (a write sent ahead of an older one it overlaps, for a read it
    /// held, is not newer data the drive will keep: the older lands last).
    pub(super) fn cover(&self, read: &Request) -> bool {
        let from = read.offset.0.saturating_sub(self.longest);
        // By offset, so a gap shows as a write starting past the covered end.
        let mut covered_to = read.offset.0;
        for ((offset, _), end) in self.by_offset.range((from, 0)..(read.end(), 0)) {
            if *offset > covered_to {
                return false;
            }
            covered_to = covered_to.max(*end);
        }
        covered_to >= read.end()
    }

    /// Tags of the unsent writes `read` overlaps.
    pub(super) fn overlapping<'a>(&'a self, read: &'a Request) -> impl Iterator<Item = u64> + 'a {
        let from = read.offset.0.saturating_sub(self.longest);
        self.by_offset
            .range((from, 0)..(read.end(), 0))
            .filter(move |(_, end)| **end > read.offset.0)
            .map(|((_, tag), _)| *tag)
    }
}

/// Reads that overlap unsent writes, each held until every one of those is
/// sent, indexed by the writes they wait for: sending a write touches only
/// the reads waiting for it. (Thousands of reads can wait at once for writes
/// held behind a flush; a scan of them all per write sent made steer seven
/// times as costly on `iosteer bench sched`.)
#[derive(Debug, Default)]
pub(super) struct HeldReads {
    /// By arrival: the read, and how many unsent writes it still waits for.
    reads: BTreeMap<u64, (Request, usize)>,
    /// Tags of unsent writes held reads wait for, to those reads' arrivals
    /// (oldest first).
    by_write: BTreeMap<u64, Vec<u64>>,
    arrivals: u64,
}

impl HeldReads {
    /// Holds `read` until the writes tagged `awaited` (not empty) are sent.
    pub(super) fn hold(&mut self, read: Request, awaited: &[u64]) {
        let arrival = self.arrivals;
        self.arrivals += 1;
        for tag in awaited {
            self.by_write.entry(*tag).or_default().push(arrival);
        }
        self.reads.insert(arrival, (read, awaited.len()));
    }

    /// The write tagged `tag` was sent: the reads it was the last wait of, in
    /// arrival order.
    pub(super) fn release(&mut self, tag: u64) -> impl Iterator<Item = Request> + '_ {
        let waiting = self.by_write.remove(&tag).unwrap_or_default();
        waiting.into_iter().filter_map(|arrival| {
            let (_, awaited) = self.reads.get_mut(&arrival).expect("a held read");
            *awaited -= 1;
            if *awaited > 0 {
                return None;
            }
            self.reads.remove(&arrival).map(|(read, _)| read)
        })
    }

    /// The oldest write a held read waits for, if its tag is `last` or less.
    pub(super) fn first_awaited(&self, last: u64) -> Option<u64> {
        let (tag, _) = self.by_write.first_key_value()?;
        (*tag <= last).then_some(*tag)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.reads.is_empty()
    }

    pub(super) fn requests(&self) -> impl Iterator<Item = &Request> {
        self.reads.values().map(|(read, _)| read)
    }
}

/// Writes in arrival order (so by tag). An urgent write leaves from the
/// middle: its slot is emptied, not removed (which would move every write
/// behind it, in a throttled queue of thousands), and empty slots are dropped
/// once they reach the front, so the front is always a queued write.
#[derive(Debug, Default)]
pub(super) struct WriteQueue {
    /// Tag, and the write unless it has been sent.
    slots: VecDeque<(u64, Option<Queued>)>,
}

impl WriteQueue {
    pub(super) fn push(&mut self, write: Queued) {
        self.slots.push_back((write.tag, Some(write)));
    }

    pub(super) fn oldest(&self) -> Option<&Queued> {
        self.slots.front().and_then(|(_, write)| write.as_ref())
    }

    /// The newest tag in the queue (its write may have been sent): no queued
    /// write has a higher one.
    pub(super) fn last_tag(&self) -> Option<u64> {
        self.slots.back().map(|(tag, _)| *tag)
    }

    /// Takes the write tagged `tag` out, if queued.
    pub(super) fn take(&mut self, tag: u64) -> Option<Queued> {
        let at = self.slots.binary_search_by_key(&tag, |(t, _)| *t).ok()?;
        let write = self.slots[at].1.take();
        while self.slots.front().is_some_and(|(_, w)| w.is_none()) {
            self.slots.pop_front();
        }
        write
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &Queued> {
        self.slots.iter().filter_map(|(_, write)| write.as_ref())
    }

    pub(super) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

/// Reads in the device dispatched at one instant, and the longest time one
/// of them had waited in the scheduler (completions carry the dispatch time,
/// not the arrival; the longest wait is the cautious guess).
#[derive(Copy, Clone, Debug)]
pub(super) struct ReadsSent {
    at: Nanos,
    count: u32,
    wait: Nanos,
}

impl Steer {
    /// The tag of the oldest queued write.
    pub(super) fn oldest_write(&self) -> Option<u64> {
        self.writes.oldest().map(|w| w.tag)
    }

    /// The oldest write has waited its deadline and, with `deadline=yield`,
    /// the objective can pay for it: no read is about to protect, or the
    /// budget still holds the reserve once the expected misses of the
    /// overdue writes already sent this window are taken off it (so a
    /// backlog gone overdue while the budget was owed trickles out as it
    /// pays, not all at once; and the reserve is the margin the controller
    /// keeps: overdue writes sent while the budget was merely not owed left
    /// 9 of 50 family drives 0.1-0.4% over `p99<=2x`).
    pub(super) fn write_overdue(&self, now: Nanos) -> bool {
        self.writes.oldest().is_some_and(|w| {
            now - w.request.submitted >= self.config.write_deadline
                && (!self.config.deadline_yields
                    || !self.reads_lately()
                    || self.budget - self.current.late_cost >= self.reserve)
        })
    }

    /// Reads queued (not behind a write: holding writes delays those) or in
    /// the device, or completed within `HORIZON`.
    fn reads_lately(&self) -> bool {
        !self.reads.is_empty()
            || !self.released_reads.is_empty()
            || self.base.stats.class(Op::Read).in_flight > 0
            || self.current.reads > 0
            || self.within_horizon(|w| w.reads > 0)
    }

    /// Whether one of the windows of the last `HORIZON` is `seen`.
    fn within_horizon(&self, seen: impl Fn(&Window) -> bool) -> bool {
        self.history.iter().rev().take(windows(HORIZON)).any(seen)
    }

    /// One scheduler tick (rate credit comes in ticks, so a write due now
    /// may go up to a tick late).
    pub(super) fn tick_length(&self) -> Nanos {
        Nanos(1_000_000_000 / u64::from(self.config.quanta))
    }

    /// Misses a write of `len` is expected to cost at the current cost.
    fn expected_misses(&self, len: Bytes) -> f64 {
        self.cost * len.0 as f64 / 1000.0
    }

    /// The tag of the oldest urgent write. Urgent writes behind a waiting
    /// flush (tags above every queued one) wait for it; a sent write is
    /// awaited no more, so the first tag in range is queued.
    pub(super) fn urgent_write(&self) -> Option<u64> {
        let last = self.writes.last_tag()?;
        self.held_reads.first_awaited(last)
    }

    /// The tag of the write that goes ahead of the limit now, if any: the
    /// oldest once overdue, else one a read waits for.
    pub(super) fn pushed_write(&self, now: Nanos) -> Option<u64> {
        if self.write_overdue(now) {
            return self.oldest_write();
        }
        self.urgent_write()
    }

    /// The tag of the oldest write, if the limiters admit it.
    pub(super) fn admitted_write(&mut self, now: Nanos) -> Option<u64> {
        let oldest = self.oldest_write()?;
        if self.trims_waiting(now) || self.calibrating(now) {
            return None;
        }
        let in_flight = self.base.stats.class(Op::Write).in_flight;
        let ok = self.limiter.admits(in_flight);
        if !ok {
            self.base.stats.class_mut(Op::Write).limited = true;
            self.current.limited = true;
            self.current.rate_bound |= self
                .limiter
                .get(LimiterKind::Bandwidth)
                .is_some_and(|l| !l.admits(in_flight));
        }
        ok.then_some(oldest)
    }

    /// A waiting flush goes once every write before it has been sent and
    /// completed; the writes behind it then join the queue.
    pub(super) fn take_flush(&mut self, now: Nanos) -> Option<Command> {
        let in_flight = self.base.stats.class(Op::Write).in_flight;
        if !self.barrier.flush_due() || !flush_may_go(in_flight) {
            return None;
        }
        let flush = self.barrier.take_flush()?;
        while let Some(write) = self.barrier.release() {
            self.writes.push(write);
        }
        self.last_write_activity = Some(now);
        Some(Command::single(flush.request, now))
    }

    /// Whether a trim is done being held and waits to be sent (then writes
    /// wait for it). A trim is held only while writes are about: with none,
    /// no write will cut it soon, and a job that only trims would wait for
    /// nothing.
    pub(super) fn trims_waiting(&self, now: Nanos) -> bool {
        if self.trims.is_empty() || self.base.stats.class(Op::Trim).in_flight > 0 {
            return false;
        }
        let hold = if self.writes_about() {
            self.config.trim_hold
        } else {
            Nanos::ZERO
        };
        self.trims.due_at(hold).is_some_and(|t| t <= now)
    }

    /// Writes queued or in the device, or sent within the last `HORIZON`.
    pub(super) fn writes_about(&self) -> bool {
        let w = self.base.stats.class(Op::Write);
        w.queued + w.in_flight > 0
            || self.current.write_bytes > 0
            || self.within_horizon(|w| w.write_bytes > 0)
    }

    pub(super) fn trim_ready(&self, now: Nanos) -> bool {
        if !self.trims_waiting(now) {
            return false;
        }
        let overdue = self
            .trims
            .due_at(self.config.trim_hold + self.config.trim_deadline)
            .is_some_and(|t| t <= now);
        let writes_pushed = self.pushed_write(now).is_some();
        self.base.stats.class(Op::Write).in_flight == 0 || overdue || writes_pushed
    }

    pub(super) fn send_write(&mut self, tag: u64, now: Nanos) -> Command {
        if self.write_overdue(now) && self.oldest_write() == Some(tag) {
            let len = self.writes.oldest().expect("overdue").request.len;
            self.current.late_cost += self.expected_misses(len);
        }
        let entry = self.writes.take(tag).expect("a write is ready");
        let waited = now - entry.request.submitted;
        if waited > self.config.write_deadline + self.tick_length() {
            self.late_writes += 1;
            self.longest_late = self.longest_late.max(waited);
        }
        self.unsent.remove(&entry);
        self.barrier.sent_write(&entry);
        self.released_reads.extend(self.held_reads.release(tag));
        self.limiter.charge(entry.request.len);
        self.current.write_bytes += entry.request.len.0;
        self.last_write_activity = Some(now);
        Command::single(entry.request, now)
    }

    pub(super) fn send_read(&mut self, read: Request, now: Nanos) -> Command {
        let wait = now - read.submitted;
        match self.reads_sent.back_mut() {
            Some(last) if last.at == now => {
                last.count += 1;
                last.wait = last.wait.max(wait);
            }
            _ => self.reads_sent.push_back(ReadsSent {
                at: now,
                count: 1,
                wait,
            }),
        }
        Command::single(read, now)
    }

    /// The scheduler wait of a read sent at `dispatched`, now completed.
    pub(super) fn read_wait(&mut self, dispatched: Nanos) -> Nanos {
        let i = self.reads_sent.partition_point(|r| r.at < dispatched);
        let Some(entry) = self.reads_sent.get_mut(i).filter(|r| r.at == dispatched) else {
            return Nanos::ZERO;
        };
        let wait = entry.wait;
        entry.count -= 1;
        while self.reads_sent.front().is_some_and(|r| r.count == 0) {
            self.reads_sent.pop_front();
        }
        wait
    }

    /// Whether a read that lived from `submitted` to `done` waited for a
    /// trim: it was in the system while one was in the device, or came in
    /// within one trim's time after it (behind the reads it held back).
    pub(super) fn waited_for_trim(&self, submitted: Nanos, done: Nanos) -> bool {
        if self.trim_sent.is_some_and(|sent| sent < done) {
            return true;
        }
        self.last_trim
            .is_some_and(|(sent, end)| submitted < end + (end - sent) && done > sent)
    }
}
