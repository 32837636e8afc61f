//! `fifo`: the stock FreeBSD disk scheduling, the paper's "control" scheduler.
//!
//! Algorithm (FreeBSD `da`/`ada` before the Netflix work, flash devices):
//! - reads, writes and flushes share one queue and leave in arrival order, as
//!   many as the device has slots for (no elevator sort: on flash it brings
//!   nothing and costs an ordered insert);
//! - trims (BIO_DELETE) wait in their own queue; when one is waiting and no
//!   trim command is in the device, all waiting trims (up to `trim_max_ranges`)
//!   are coalesced into one command, which goes before the shared queue;
//! - the two ordering rules of [`crate::ordering`] hold: a flush waits until
//!   the writes before it have completed (overlapping reads and writes keep
//!   their order for free in one FIFO).
//!
//! There are no limiters and no bias, so nothing is ever held back while the
//! device has a free slot. The tick only samples the load average.

use std::collections::VecDeque;

use crate::config::{unknown_key, ConfigError, Configurable, Tunable};
use crate::ordering::flush_may_go;
use crate::policy::common::{
    base_in_field, Base, CommonConfig, Policy, BAD_LATENCY, STATS_WINDOW, TRIM_MAX_RANGES,
};
use crate::policy::{construct, PolicyInfo};
use crate::request::{Command, Op, Request};
use crate::trim::TrimQueue;
use crate::units::Nanos;

pub const TUNABLES: &[Tunable] = &[
    Tunable {
        help: "most trims coalesced into one command (ada: 8 DSM blocks of 64 ranges)",
        ..TRIM_MAX_RANGES
    },
    STATS_WINDOW,
    BAD_LATENCY,
];

pub const INFO: PolicyInfo = PolicyInfo {
    name: "fifo",
    summary:
        "stock FreeBSD: one FIFO for reads, writes and flushes; trims coalesced, one at a time",
    tunables: TUNABLES,
    build: |configure| construct(configure, Fifo::new),
};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FifoConfig {
    pub common: CommonConfig,
}

impl Configurable for FifoConfig {
    fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        match key {
            _ if self.common.set(key, value)? => {}
            _ => return Err(unknown_key("fifo", key, TUNABLES)),
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), ConfigError> {
        Ok(())
    }
}

#[derive(Debug)]
pub struct Fifo {
    queue: VecDeque<Request>,
    trims: TrimQueue,
    base: Base,
}

impl Fifo {
    pub fn new(config: FifoConfig) -> Fifo {
        Fifo {
            queue: VecDeque::new(),
            trims: TrimQueue::new(config.common.trim_max_ranges, 0),
            base: Base::new(&config.common),
        }
    }
}

impl Policy for Fifo {
    const INFO: PolicyInfo = INFO;

    base_in_field!();

    fn accept(&mut self, request: Request, _now: Nanos) {
        match request.op {
            Op::Trim => self.trims.push(request),
            _ => self.queue.push_back(request),
        }
    }

    fn trims(&mut self) -> Option<&mut TrimQueue> {
        Some(&mut self.trims)
    }

    fn next_command(&mut self, now: Nanos) -> Option<Command> {
        if !self.trims.is_empty() && self.base.stats.class(Op::Trim).in_flight == 0 {
            return self.trims.take_command(now);
        }
        let head = self.queue.front()?;
        if head.op == Op::Flush && !flush_may_go(self.base.stats.class(Op::Write).in_flight) {
            return None;
        }
        self.queue.pop_front().map(|r| Command::single(r, now))
    }

    fn has_work(&self) -> bool {
        !self.queue.is_empty() || self.trims.has_work()
    }

    fn oldest(&self, op: Op) -> Option<Nanos> {
        match op {
            Op::Trim => None,
            _ => self.queue.iter().find(|r| r.op == op).map(|r| r.submitted),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{drain, ids};
    use crate::request::Outcome;
    use crate::scheduler::{DeviceView, Scheduler};

    fn send_all(s: &mut Fifo, device: DeviceView) -> Vec<Command> {
        drain(s, Nanos(1), device.slots, device.in_flight)
    }

    #[test]
    fn reads_writes_and_flushes_leave_in_arrival_order() {
        let mut s = Fifo::new(FifoConfig::default());
        let ops = [Op::Write, Op::Read, Op::Write, Op::Read];
        for (id, op) in ops.iter().enumerate() {
            s.enqueue(Request::new(id as u64, *op, 0, 4096, Nanos(0)), Nanos(0));
        }
        assert_eq!(ids(&send_all(&mut s, DeviceView::new(32, 0))), [0, 1, 2, 3]);
    }

    #[test]
    fn trims_coalesce_and_go_one_command_at_a_time_ahead_of_the_queue() {
        let mut s = Fifo::new(FifoConfig::default());
        s.enqueue(Request::new(0, Op::Read, 0, 4096, Nanos(0)), Nanos(0));
        for id in 1..4 {
            s.enqueue(
                Request::new(id, Op::Trim, id << 20, 4096, Nanos(0)),
                Nanos(0),
            );
        }
        let sent = send_all(&mut s, DeviceView::new(32, 0));
        assert_eq!(sent[0].op, Op::Trim);
        assert_eq!(sent[0].requests.len(), 3);
        s.enqueue(Request::new(9, Op::Trim, 0, 4096, Nanos(0)), Nanos(0));
        assert!(
            send_all(&mut s, DeviceView::new(32, 2)).is_empty(),
            "a trim is active"
        );
        let retry = s.complete(&sent[0].completion(Outcome::Ok), Nanos(2));
        assert!(retry.should_dispatch());
        assert_eq!(send_all(&mut s, DeviceView::new(32, 1))[0].op, Op::Trim);
    }

    #[test]
    fn a_flush_waits_for_earlier_writes_to_complete() {
        let mut s = Fifo::new(FifoConfig::default());
        s.enqueue(Request::new(0, Op::Write, 0, 4096, Nanos(0)), Nanos(0));
        s.enqueue(Request::new(1, Op::Flush, 0, 0, Nanos(0)), Nanos(0));
        s.enqueue(Request::new(2, Op::Read, 0, 4096, Nanos(0)), Nanos(0));
        let sent = send_all(&mut s, DeviceView::new(32, 0));
        assert_eq!(sent.len(), 1, "the flush holds the queue behind it");
        let _ = s.complete(&sent[0].completion(Outcome::Ok), Nanos(3));
        let sent = send_all(&mut s, DeviceView::new(32, 0));
        assert_eq!(
            sent.iter().map(|c| c.op).collect::<Vec<_>>(),
            [Op::Flush, Op::Read]
        );
    }

    #[test]
    fn a_draining_device_gets_nothing() {
        let mut s = Fifo::new(FifoConfig::default());
        s.enqueue(Request::new(0, Op::Read, 0, 4096, Nanos(0)), Nanos(0));
        let draining = DeviceView {
            draining: true,
            ..DeviceView::new(32, 1)
        };
        assert_eq!(s.dispatch(Nanos(1), draining), None);
    }

    /// A trim a later write cut leaves the queued bytes at zero once sent
    /// (found by a review: the cut bytes stayed counted as queued for good),
    /// and the policy's notes say what the writes took.
    #[test]
    fn a_cut_trim_is_counted_and_noted() {
        let mut s = Fifo::new(FifoConfig::default());
        let t = Nanos::ZERO;
        s.enqueue(Request::new(0, Op::Trim, 0, 64 << 20, t), t);
        s.enqueue(Request::new(1, Op::Write, 1 << 20, 1 << 20, t), t);
        for command in drain(&mut s, Nanos(1), 64, 0) {
            let _ = s.complete(&command.completion(Outcome::Ok), Nanos(2));
        }
        let trim = s.stats().class(Op::Trim);
        assert_eq!((trim.queued, trim.queued_bytes.0), (0, 0));
        let notes = s.notes().join("; ");
        assert!(notes.contains("out of them 1 times"), "{notes}");
        assert!(
            notes.contains("(1.00 MiB written over, and 1.00 MiB beside"),
            "{notes}"
        );
    }
}
