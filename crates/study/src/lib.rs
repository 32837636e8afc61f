//! # iosteer-study: questions answered by many runs
//!
//! Each module is one study, with its procedure in its top comment; the
//! `iosteer` binary only parses arguments, calls one, and prints.
//!
//! ## Where to start
//!
//! - [`sweep`]: one simulated scenario across a grid of scheduler settings
//!   and seeds, in parallel; the best setting that keeps a read objective.
//! - [`probe`]: the write limit of a real target or an emulated drive,
//!   found by stepping the write rate up while reads are served, over any
//!   [`Backend`](iosteer_engine::runner::Backend).
//! - [`oracle`]: the best write schedule with hindsight on one run, to
//!   state a controller's write rate as a share of what was possible.
//! - [`objective`]: the read-latency objective both judge by (`p99<=2x`);
//!   [`page`]: the report.html of a sweep or a probe.
//! - [`bench`](mod@bench): what a policy costs per request; [`device`]: the drive model
//!   on its own (loading a drive, the write-amplification check, its speed).
//! - [`emulated`]: a simulation's workload in real time on the drive model.

pub mod bench;
pub mod device;
pub mod emulated;
pub mod objective;
pub mod oracle;
pub mod page;
pub mod probe;
pub mod sweep;
