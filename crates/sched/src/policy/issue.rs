//! The device-side queue below a throttling layer: Linux's `none` scheduler
//! under rq-qos (`wbt`, `iocost`) and blk-throttle (`throttle`).
//!
//! In Linux those policies decide when a bio may *enter* the block layer;
//! what has entered then waits for a device tag in arrival order. Here that
//! wait is this queue: requests a policy admitted leave in admission order as
//! the device has slots. Two rules on top of plain FIFO:
//! - trims wait apart and leave coalesced, every waiting trim (up to
//!   `max_ranges`) in one command, ahead of the FIFO (Linux merges discards
//!   into multi-range requests; it has no one-trim-at-a-time rule);
//! - a flush at the head waits until no write is in the device (rule 1 of
//!   [`crate::ordering`]); the [`Barrier`](crate::ordering::Barrier) of the
//!   policy above has already kept later writes behind it. Reads queued
//!   behind a waiting flush go past it (a flush orders writes only), but never
//!   past a write.
//!
//! Since this queue is a strict FIFO, a write counts as "sent" for the
//! ordering rules when it is admitted here.
//!
//! [`Gate`] is what every such policy keeps around its throttle: the
//! [`Barrier`](crate::ordering::Barrier) in front, the reads it holds, and
//! this queue behind.

use std::collections::{BTreeMap, VecDeque};

use crate::ordering::{flush_may_go, Barrier, Queued};
use crate::request::{Command, Op, Request};
use crate::stats::Stats;
use crate::trim::{cut_queued, TrimCuts, TrimQueue};
use crate::units::{Bytes, Nanos};

#[derive(Debug)]
struct IssueQueue {
    /// Reads, writes and flushes with the time they were admitted.
    fifo: VecDeque<(Request, Nanos)>,
    trims: TrimQueue,
}

impl IssueQueue {
    fn new(trim_max_ranges: u32) -> IssueQueue {
        IssueQueue {
            fifo: VecDeque::new(),
            trims: TrimQueue::new(trim_max_ranges, 0),
        }
    }

    /// Admits a request (its policy let it through at `now`).
    fn push(&mut self, request: Request, now: Nanos) {
        match request.op {
            Op::Trim => self.trims.push(request),
            _ => self.fifo.push_back((request, now)),
        }
    }

    /// The next command for a device with a free slot, and how long its first
    /// request waited here since admission.
    fn next_command(&mut self, now: Nanos, stats: &Stats) -> Option<(Command, Nanos)> {
        if let Some(command) = self.trims.take_command(now) {
            let waited = now - command.requests[0].submitted;
            return Some((command, waited));
        }
        let (head, _) = self.fifo.front()?;
        let index = if head.op == Op::Flush && !flush_may_go(stats.class(Op::Write).in_flight) {
            // The first read before any write: a read behind a write may
            // overlap it, and writes stay behind the flush.
            self.fifo
                .iter()
                .take_while(|(r, _)| r.op != Op::Write)
                .position(|(r, _)| r.op == Op::Read)?
        } else {
            0
        };
        let (request, admitted) = self.fifo.remove(index)?;
        Some((Command::single(request, now), now - admitted))
    }

    /// The waiting trims.
    fn trims(&mut self) -> &mut TrimQueue {
        &mut self.trims
    }

    /// Submission time of the oldest admitted request of `op` (not trims).
    fn oldest(&self, op: Op) -> Option<Nanos> {
        self.fifo
            .iter()
            .find(|(r, _)| r.op == op)
            .map(|(r, _)| r.submitted)
    }
}

/// The ordering rules in front of a throttling policy and the device queue
/// behind it. A request arrives through [`Gate::arrive`], waits in the
/// policy's own queues, and passes on with [`Gate::pass`]; what the rules held
/// comes back out of [`Gate::ready_reads`] and [`Gate::released_write`].
#[derive(Debug)]
pub(crate) struct Gate {
    barrier: Barrier,
    /// Reads that overlap a write not yet passed; they enter the throttle
    /// once it has, so they hold back no other read. Kept by the write each
    /// waits for (its tag), with their order of arrival: only the reads of
    /// a write that passed are looked at again, not every held read each
    /// time (a backlog held by a throttle made that the square of it).
    held_reads: BTreeMap<u64, Vec<(u64, Queued)>>,
    arrived: u64,
    /// Writes passed since the held reads were last looked at.
    passed: Vec<u64>,
    issue: IssueQueue,
}

impl Gate {
    pub(crate) fn new(trim_max_ranges: u32) -> Gate {
        Gate {
            barrier: Barrier::default(),
            held_reads: BTreeMap::new(),
            arrived: 0,
            passed: Vec::new(),
            issue: IssueQueue::new(trim_max_ranges),
        }
    }

    /// A request arriving: returned when it may enter the throttle now (see
    /// [`Barrier::pass`]), kept here when it may not.
    pub(crate) fn arrive(&mut self, request: Request) -> Option<Queued> {
        let mut held = Vec::new();
        let entry = self.barrier.pass(request, &mut held);
        for read in held {
            self.hold(read);
        }
        entry
    }

    fn hold(&mut self, read: Queued) {
        self.arrived += 1;
        let reads = self.held_reads.entry(read.tag).or_default();
        reads.push((self.arrived, read));
    }

    /// The throttle let `entry` through at `now`: on to the device queue.
    /// That queue is a FIFO, so passing counts as sent for the ordering
    /// rules.
    pub(crate) fn pass(&mut self, entry: Queued, now: Nanos) {
        self.barrier.sent_write(&entry);
        if self.held_reads.contains_key(&entry.tag) {
            self.passed.push(entry.tag);
        }
        self.issue.push(entry.request, now);
    }

    /// Straight to the device queue, for what the policy does not throttle.
    pub(crate) fn push(&mut self, request: Request, now: Nanos) {
        self.issue.push(request, now);
    }

    /// Held reads whose writes have passed, in their order.
    pub(crate) fn ready_reads(&mut self) -> Vec<Queued> {
        let mut ready = Vec::new();
        for tag in std::mem::take(&mut self.passed) {
            for (arrived, mut read) in self.held_reads.remove(&tag).unwrap_or_default() {
                // Its new tag, if any, is a write still unsent: not one of
                // those passed.
                match self.barrier.read_ready(&mut read) {
                    true => ready.push((arrived, read)),
                    false => self
                        .held_reads
                        .entry(read.tag)
                        .or_default()
                        .push((arrived, read)),
                }
            }
        }
        ready.sort_unstable_by_key(|(arrived, _)| *arrived);
        ready.into_iter().map(|(_, read)| read).collect()
    }

    /// The next write held behind a flush that has come due. The flush
    /// itself goes on to the device queue at `now`, unthrottled.
    pub(crate) fn released_write(&mut self, now: Nanos) -> Option<Queued> {
        loop {
            if let Some(write) = self.barrier.release() {
                return Some(write);
            }
            let flush = self.barrier.take_flush()?;
            self.issue.push(flush.request, now);
        }
    }

    /// Submission time of the oldest request of `op` waiting anywhere: in
    /// the policy's queues (`throttled`), held here, or in the device queue.
    pub(crate) fn oldest<'a>(
        &'a self,
        op: Op,
        throttled: impl Iterator<Item = &'a Request>,
    ) -> Option<Nanos> {
        let held = self.held_reads.values().flatten().map(|(_, q)| &q.request);
        let waiting = throttled.chain(held).chain(self.barrier.held());
        let first = waiting.filter(|r| r.op == op).map(|r| r.submitted).min();
        [first, self.issue.oldest(op)].into_iter().flatten().min()
    }

    /// The waiting trims, in the device queue.
    pub(crate) fn trims(&mut self) -> &mut TrimQueue {
        self.issue.trims()
    }

    /// Takes `[offset, offset + len)`, which a write now queued overwrites,
    /// out of the trims in the device queue and of those still `waiting`
    /// in a policy's throttle ahead of it (which would otherwise reach the
    /// device after the write); one of those overwritten whole leaves its
    /// queue and completes unsent. How many did.
    pub(crate) fn cut_trims<'a>(
        &mut self,
        waiting: impl Iterator<Item = &'a mut VecDeque<Queued>>,
        offset: Bytes,
        len: Bytes,
        cuts: &mut TrimCuts,
    ) -> u32 {
        self.trims().cut(offset, len, cuts);
        let mut whole = 0;
        for queue in waiting {
            for trim in cut_queued(queue, queued_trim, offset, len, cuts) {
                self.trims().elide(trim.request);
                whole += 1;
            }
        }
        whole
    }

    /// The next command for a device with a free slot.
    pub(crate) fn next_command(&mut self, now: Nanos, stats: &Stats) -> Option<Command> {
        self.next_command_waited(now, stats)
            .map(|(command, _)| command)
    }

    /// [`Gate::next_command`], and how long its first request waited in the
    /// device queue since it passed.
    pub(crate) fn next_command_waited(
        &mut self,
        now: Nanos,
        stats: &Stats,
    ) -> Option<(Command, Nanos)> {
        self.issue.next_command(now, stats)
    }
}

/// The trim a throttle's queue entry is, if it is one.
fn queued_trim(queued: &mut Queued) -> Option<&mut Request> {
    (queued.request.op == Op::Trim).then_some(&mut queued.request)
}

/// [`Policy::trims`](crate::policy::common::Policy::trims) for a policy that
/// keeps its [`Gate`] in its field `gate`: the trims wait in the device
/// queue.
macro_rules! gate_in_field {
    () => {
        fn trims(&mut self) -> Option<&mut $crate::trim::TrimQueue> {
            Some(self.gate.trims())
        }
    };
}
pub(crate) use gate_in_field;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Outcome;

    #[test]
    fn trims_go_first_coalesced_and_a_flush_waits_for_writes_in_flight() {
        let mut q = IssueQueue::new(512);
        let mut stats = Stats::new(Nanos::from_secs(1), Nanos::from_secs(1));
        let now = Nanos(1);
        for (id, op) in [(0, Op::Write), (1, Op::Flush), (2, Op::Trim), (3, Op::Trim)] {
            let r = Request::new(
                id,
                op,
                id << 20,
                if op == Op::Flush { 0 } else { 4096 },
                now,
            );
            stats.on_enqueue(&r, now);
            q.push(r, now);
        }
        let (trim, _) = q.next_command(now, &stats).unwrap();
        assert_eq!((trim.op, trim.requests.len()), (Op::Trim, 2));
        let (write, _) = q.next_command(now, &stats).unwrap();
        stats.on_dispatch(&write, now);
        assert!(q.next_command(now, &stats).is_none());
        stats.on_complete(&write.completion(Outcome::Ok), Nanos(5));
        assert_eq!(q.next_command(now, &stats).unwrap().0.op, Op::Flush);
    }

    #[test]
    fn reads_behind_a_waiting_flush_go_but_not_past_a_write() {
        let mut q = IssueQueue::new(512);
        let mut stats = Stats::new(Nanos::from_secs(1), Nanos::from_secs(1));
        let now = Nanos(1);
        let ops = [Op::Write, Op::Flush, Op::Read, Op::Write, Op::Read];
        for (id, op) in ops.into_iter().enumerate() {
            let len = if op == Op::Flush { 0 } else { 4096 };
            let r = Request::new(id as u64, op, (id as u64) << 20, len, now);
            stats.on_enqueue(&r, now);
            q.push(r, now);
        }
        let (write, _) = q.next_command(now, &stats).unwrap();
        stats.on_dispatch(&write, now);
        // The flush waits for write 0; read 2 goes past it, read 4 not past
        // write 3.
        let (read, _) = q.next_command(now, &stats).unwrap();
        assert_eq!(read.requests[0].id.0, 2);
        stats.on_dispatch(&read, now);
        assert!(q.next_command(now, &stats).is_none());
        stats.on_complete(&write.completion(Outcome::Ok), Nanos(5));
        let ids: Vec<u64> = std::iter::from_fn(|| q.next_command(now, &stats))
            .map(|(c, _)| c.requests[0].id.0)
            .collect();
        assert_eq!(ids, [1, 3, 4]);
    }

    #[test]
    fn a_gate_releases_what_a_flush_held_once_the_writes_before_it_passed() {
        let mut gate = Gate::new(512);
        let now = Nanos(1);
        let write = |id: u64| Request::new(id, Op::Write, id << 20, 4096, now);
        let w0 = gate.arrive(write(0)).unwrap();
        assert!(gate.arrive(Request::new(1, Op::Flush, 0, 0, now)).is_none());
        assert!(gate.arrive(write(2)).is_none());
        assert!(gate
            .arrive(Request::new(3, Op::Read, 2 << 20, 4096, now))
            .is_none());
        assert_eq!(gate.oldest(Op::Read, std::iter::empty()), Some(now));
        assert!(gate.released_write(now).is_none(), "write 0 has not passed");
        gate.pass(w0, now);
        let w2 = gate.released_write(now).unwrap();
        assert_eq!(w2.request.id.0, 2);
        assert!(gate.released_write(now).is_none());
        assert!(gate.ready_reads().is_empty(), "read 3 waits for write 2");
        gate.pass(w2, now);
        let read = gate.ready_reads();
        assert_eq!(read.len(), 1);
        gate.pass(read.into_iter().next().unwrap(), now);
        // The flush went to the device queue when it was released, between
        // the writes; nothing is in the device, so it may go in its turn.
        let stats = Stats::new(Nanos::from_secs(1), Nanos::from_secs(1));
        let ids: Vec<u64> = std::iter::from_fn(|| gate.next_command(now, &stats))
            .map(|c| c.requests[0].id.0)
            .collect();
        assert_eq!(ids, [0, 1, 2, 3]);
    }
}
