//! # iosteer-engine: the scheduler policies on real files and devices
//!
//! The same `Scheduler` code the simulator judges, driving real I/O through
//! io_uring: O_DIRECT reads and writes from registered, aligned buffers;
//! trims as hole punches on files and BLKDISCARD on block devices (on a
//! worker thread that answers through the ring, `engine/discards.rs`);
//! flushes as fdatasync; a device queue depth that the scheduler fills.
//!
//! ## Where to start
//!
//! - [`Target`] ([`target`]): open a file (created and sized when asked) or a
//!   block device (only with `force` when the job writes).
//! - [`files`]: the files a run's jobs name (fio's `filename`, `nrfiles`,
//!   `directory`), created, laid out before they are read, and placed each
//!   at its own address range of one engine.
//! - [`Engine`] ([`engine`]): `view`, `submit`, `wait`, `reap`, the same
//!   shape as the simulated drive, so a server can embed it and drive any
//!   scheduler by hand.
//! - [`runner::run`]: the real-time loop joining request [`runner::Source`]s,
//!   a scheduler and the engine, reporting to an [`runner::Observer`].
//! - [`drive`]: workload jobs (`iosteer-workload`, the simulator's) through
//!   that loop into any backend, recorded into the simulator's report with a
//!   line per second: what `iosteer run` and `iosteer probe` run.
//!   [`on_files::run_on_files`] is `iosteer run` on real files, from placing
//!   the jobs to the verified report.
//! - [`verify`]: stamped writes and checked reads (`--verify`).
//!   [`verify::read_back`] checks a target's stamped blocks with no memory
//!   of the run that wrote them.
//! - [`fault::Faulty`]: a backend wrapper injecting errors, short transfers,
//!   late and out-of-order completions and stalls, from a seed.
//! - [`session::Session`]: the API a server embeds: reads and writes with
//!   its own bytes, completions with a read's bytes, statistics and
//!   `pressure()`; `examples/embed.rs` is a whole program.
//! - [`emulate::Emulated`]: the simulator's drive model in real time behind
//!   the same loop (`--emulate`), for trying a policy on a misbehaving drive
//!   on any machine. Both it and the engine are a [`runner::Backend`].
//! - [`metrics`]: the run's Prometheus metrics ([`metrics::render`]) and the
//!   small HTTP server that serves them ([`metrics::MetricsServer`],
//!   `--metrics`).
//!
//! ## Example
//!
//! ```no_run
//! use iosteer_engine::{Engine, EngineConfig, OpenOptionsSpec, Target};
//! use iosteer_sched::{Command, Nanos, Op, Request};
//! use std::time::Duration;
//!
//! let spec = OpenOptionsSpec { size: Some(1 << 30), writes: true, direct: true, ..Default::default() };
//! let target = Target::open("/tmp/iosteer.img".as_ref(), &spec)?;
//! let mut engine = Engine::new(target, &EngineConfig::default())?;
//! let write = Command::single(Request::new(1, Op::Write, 0, 4096, Nanos::ZERO), Nanos::ZERO);
//! engine.submit(write)?;
//! let mut finished = Vec::new();
//! while finished.is_empty() {
//!     engine.wait(Duration::from_millis(10))?;
//!     engine.reap(Nanos::ZERO, &mut finished);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod buffers;
pub mod drive;
pub mod emulate;
pub mod engine;
pub mod fault;
pub mod files;
pub mod metrics;
pub mod on_files;
pub mod runner;
pub mod session;
pub mod target;
pub mod verify;

pub use engine::{Engine, EngineConfig, EngineError, Finished};
pub use target::{OpenOptionsSpec, Target, TargetError, TargetKind};
