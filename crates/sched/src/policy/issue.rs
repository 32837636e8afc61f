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

use std::collections::VecDeque;

use crate::ordering::flush_may_go;
use crate::request::{Command, Op, Request};
use crate::stats::Stats;
use crate::trim::TrimQueue;
use crate::units::Nanos;

#[derive(Debug)]
pub(crate) struct IssueQueue {
    /// Reads, writes and flushes with the time they were admitted.
    fifo: VecDeque<(Request, Nanos)>,
    trims: TrimQueue,
}

impl IssueQueue {
    pub(crate) fn new(trim_max_ranges: u32) -> IssueQueue {
        IssueQueue {
            fifo: VecDeque::new(),
            trims: TrimQueue::new(trim_max_ranges, 0),
        }
    }

    /// Admits a request (its policy let it through at `now`).
    pub(crate) fn push(&mut self, request: Request, now: Nanos) {
        match request.op {
            Op::Trim => self.trims.push(request),
            _ => self.fifo.push_back((request, now)),
        }
    }

    /// The next command for a device with a free slot, and how long its first
    /// request waited here since admission.
    pub(crate) fn next_command(&mut self, now: Nanos, stats: &Stats) -> Option<(Command, Nanos)> {
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
    pub(crate) fn trims(&mut self) -> &mut TrimQueue {
        &mut self.trims
    }

    /// Submission time of the oldest admitted request of `op` (not trims).
    pub(crate) fn oldest(&self, op: Op) -> Option<Nanos> {
        self.fifo
            .iter()
            .find(|(r, _)| r.op == op)
            .map(|(r, _)| r.submitted)
    }
}

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
}
