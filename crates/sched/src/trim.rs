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
//! Trims are assumed not to overlap reads or writes that are queued or in
//! flight, as in FreeBSD: the file system does not trim what it still uses.

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
