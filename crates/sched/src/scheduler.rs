//! The one interface every policy implements.

use crate::request::{Completion, Dispatch, Op, Request};
use crate::stats::Stats;
use crate::units::{Bytes, Nanos};

/// What the scheduler may know of the device when it dispatches.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DeviceView {
    /// Commands the device accepts at once (32 NCQ tags, an NVMe queue depth).
    pub slots: u32,
    /// Commands in the device now.
    pub in_flight: u32,
    /// The device is draining its queue for a non-queued command (a SATA
    /// non-NCQ TRIM or FLUSH) and accepts nothing until that one finishes.
    pub draining: bool,
}

impl DeviceView {
    pub fn new(slots: u32, in_flight: u32) -> DeviceView {
        DeviceView {
            slots,
            in_flight,
            draining: false,
        }
    }

    pub fn accepts(&self) -> bool {
        !self.draining && self.in_flight < self.slots
    }
}

/// Whether the caller should call [`Scheduler::dispatch`] again.
///
/// The lesson of the Netflix scheduler's stuck queues: when a limiter holds a
/// request back with device slots free, nothing else will ever ask for it
/// again unless a completion or a tick says "try now" (`dadone` had to call
/// `daschedule`). Every call that can unblock a queue returns this.
#[must_use = "ignoring it can leave requests stuck in a limited queue"]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Retry {
    /// Work is waiting that may now be dispatchable: call `dispatch` until it
    /// returns `None`.
    Dispatch,
    /// Nothing waits.
    Idle,
}

impl Retry {
    pub fn when(work_waiting: bool) -> Retry {
        if work_waiting {
            Retry::Dispatch
        } else {
            Retry::Idle
        }
    }

    pub fn should_dispatch(self) -> bool {
        self == Retry::Dispatch
    }
}

/// Back-pressure for one class: what a producer adding a request now should
/// expect.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ClassPressure {
    pub queued: u32,
    pub queued_bytes: Bytes,
    /// Estimated time a request queued now waits before it is sent.
    pub expected_wait: Nanos,
    /// How long the oldest queued request has waited so far.
    pub oldest_wait: Nanos,
    /// A limiter is holding the class back.
    pub limited: bool,
}

/// Back-pressure for every class, from [`Scheduler::pressure`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Pressure {
    classes: [ClassPressure; 4],
}

impl ClassPressure {
    /// This pressure, when a policy's own throttle holds the class for
    /// `wait` more: the expected wait is at least that, and the class counts
    /// as limited while it is non-zero.
    pub fn held_for(mut self, wait: Nanos) -> ClassPressure {
        self.expected_wait = self.expected_wait.max(wait);
        self.limited |= wait > Nanos::ZERO;
        self
    }
}

impl Pressure {
    /// The pressure of every class, from `class`.
    pub fn from_classes(mut class: impl FnMut(Op) -> ClassPressure) -> Pressure {
        let mut pressure = Pressure::default();
        for op in Op::ALL {
            pressure.classes[op.index()] = class(op);
        }
        pressure
    }

    pub fn class(&self, op: Op) -> &ClassPressure {
        &self.classes[op.index()]
    }
}

/// The limit a policy puts on writes now, for displays and metrics.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct WriteLimit {
    /// What is limited, by its configuration name (`queue_depth`,
    /// `bandwidth`, `iops`, ...).
    pub kind: &'static str,
    pub value: f64,
    /// The value's unit, as the policy's tunables state it.
    pub unit: &'static str,
}

/// An I/O scheduling policy. Pure: time comes in as `now`, the device is seen
/// only through [`DeviceView`], and nothing here sleeps, spawns or does I/O.
///
/// The caller's loop:
/// 1. [`enqueue`](Scheduler::enqueue) each new request, then dispatch;
/// 2. [`dispatch`](Scheduler::dispatch) until it returns `None`, sending each
///    [`Dispatch::ToDevice`] command to the device;
/// 3. on each device completion, [`complete`](Scheduler::complete), and
///    dispatch again if it says so;
/// 4. at [`next_timer`](Scheduler::next_timer), [`tick`](Scheduler::tick),
///    and dispatch again if it says so.
pub trait Scheduler: Send {
    /// The policy's name, as in specs (`fifo`, `netflix`, ...).
    fn name(&self) -> &'static str;

    /// Accepts a request; its `submitted` time should be `now`.
    fn enqueue(&mut self, request: Request, now: Nanos);

    /// The next thing to do, or `None` when nothing may go now (queues empty,
    /// device full or draining, or limiters holding the rest back).
    fn dispatch(&mut self, now: Nanos, device: DeviceView) -> Option<Dispatch>;

    /// A command sent by `dispatch` finished.
    fn complete(&mut self, completion: &Completion, now: Nanos) -> Retry;

    /// When `tick` should next be called, if ever.
    fn next_timer(&self) -> Option<Nanos>;

    /// Periodic work: refill rate limiters, run control loops, sample load.
    fn tick(&mut self, now: Nanos) -> Retry;

    fn stats(&self) -> &Stats;

    /// Back-pressure a producer can use to slow down.
    fn pressure(&self, now: Nanos) -> Pressure;

    /// Completes queued trims unsent until `bytes` are covered (all when zero):
    /// a producer short of free space asks for it (FreeBSD's BIO_SPEEDUP). The
    /// trims come back from `dispatch` as [`Dispatch::CompletedWithoutDevice`].
    fn speed_up_trims(&mut self, bytes: Bytes);

    /// The limit on writes in force now, if the policy limits writes.
    fn write_limit(&self) -> Option<WriteLimit> {
        None
    }

    /// The read latency the policy steers to now, if it has one (steer's
    /// target: its objective's bound, over the measured baseline once there
    /// is one, over an estimate before).
    fn read_target(&self) -> Option<Nanos> {
        None
    }

    /// What the policy did that a report should say (a promise it did not
    /// keep, and why), one sentence each; none by default.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// Nothing queued and nothing in the device.
    fn is_idle(&self) -> bool {
        let stats = self.stats();
        stats.queued() == 0 && stats.in_flight() == 0
    }
}
