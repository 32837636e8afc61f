//! # iosteer-sched: I/O scheduling policies for flash, as pure code
//!
//! One library of policies that the simulator, the io_uring engine and the
//! benchmarks all run. It is pure: time is an argument, never read from a
//! clock; nothing here does I/O, sleeps or spawns threads. So a result seen in
//! simulation comes from the very code that runs against a real device.
//!
//! ## Where to start
//!
//! - [`Scheduler`] is the one interface: `enqueue`, `dispatch`, `complete`,
//!   `next_timer` + `tick`, `stats`, `pressure`.
//! - [`Request`], [`Command`], [`Dispatch`] and [`Completion`] are what flows
//!   through it ([`request`]).
//! - [`policy::build`] makes a scheduler from a spec such as
//!   `netflix:read_bias=100,write.limiter=queue_depth,write.current=1`;
//!   [`policy::catalog`] lists the policies and their tunables.
//! - Each policy is one file under [`policy`] whose top comment explains its
//!   algorithm and constants, and where it differs from upstream:
//!   [`policy::fifo`] (stock FreeBSD, the paper's control),
//!   [`policy::netflix`] (FreeBSD's cam_iosched), and the Linux blk-mq
//!   policies [`policy::deadline`] (mq-deadline), [`policy::kyber`] (Kyber),
//!   [`policy::wbt`] (writeback throttling), [`policy::throttle`]
//!   (blk-throttle, `io.max`) and [`policy::iocost`] (blk-iocost).
//! - Building blocks the policies compose: [`limiter`] (queue depth, IOPS,
//!   bandwidth), [`limit_schedule`] (a limit that changes at given times),
//!   [`trim`] (coalescing, batching, advisory trims),
//!   [`ordering`] (flush and read-after-write rules, also for queues that
//!   reorder writes), [`stats`].
//!
//! ## Example
//!
//! ```
//! use iosteer_sched::{policy, DeviceView, Dispatch, Nanos, Op, Outcome, Request};
//!
//! let mut sched = policy::build("netflix:read_bias=100,write.limiter=queue_depth,write.current=1")?;
//! let now = Nanos::ZERO;
//! sched.enqueue(Request::new(1, Op::Write, 0, 128 << 10, now), now);
//! sched.enqueue(Request::new(2, Op::Write, 128 << 10, 128 << 10, now), now);
//! sched.enqueue(Request::new(3, Op::Read, 1 << 30, 4096, now), now);
//!
//! // The device has 32 slots; dispatch until the scheduler holds back.
//! let mut in_device = Vec::new();
//! while let Some(Dispatch::ToDevice(cmd)) = sched.dispatch(now, DeviceView::new(32, in_device.len() as u32)) {
//!     in_device.push(cmd);
//! }
//! // The read and one write went; the second write waits for the first.
//! assert_eq!(in_device.len(), 2);
//!
//! // When the device finishes, report it, and dispatch again if asked.
//! let write = in_device.iter().position(|c| c.op == Op::Write).unwrap();
//! let done = in_device.remove(write).completion(Outcome::Ok);
//! let later = Nanos::from_millis(2);
//! assert!(sched.complete(&done, later).should_dispatch());
//! assert!(matches!(sched.dispatch(later, DeviceView::new(32, 1)), Some(Dispatch::ToDevice(_))));
//! # Ok::<(), iosteer_sched::ConfigError>(())
//! ```

pub mod config;
pub mod limit_schedule;
pub mod limiter;
pub mod objective;
pub mod ordering;
pub mod policy;
pub mod request;
pub mod scheduler;
pub mod stats;
pub mod trim;
pub mod units;

pub use config::ConfigError;
pub use request::{
    Command, Completion, Dispatch, LifetimeHint, Op, Outcome, Request, RequestId, TenantId,
};
pub use scheduler::{ClassPressure, DeviceView, Pressure, Retry, Scheduler, WriteLimit};
pub use stats::{ClassStats, LatencySummary, Stats};
pub use units::{Bytes, Nanos};

#[cfg(test)]
mod properties;
