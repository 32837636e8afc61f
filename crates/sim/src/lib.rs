//! # iosteer-sim: schedulers on a simulated drive
//!
//! A discrete-event simulation in integer nanoseconds that joins workload
//! jobs, a scheduler from `iosteer-sched` and a drive from `iosteer-device`,
//! deterministic for a given seed.
//!
//! ## Where to start
//!
//! - [`Simulation`] ([`run`]): the drive, its aging, the jobs and the phases;
//!   [`run::run_all`] runs several scheduler specs, each on a fresh copy of
//!   the same aged drive.
//! - [`scenario`]: built-in scenarios, `fill-while-serving` (the Netflix
//!   paper's problem) first.
//! - [`study`]: several runs side by side that differ in drive or workload
//!   (`pgc-workloads`: NPGC against PGC; `hints`: stream separation).
//! - [`workload`]: synthetic jobs and traces; [`fio`]: fio job files;
//!   [`trace`]: trace formats, with [`blkparse`], [`blktrace`] and
//!   [`ftrace`] for the kernel's block layer events.
//! - [`report`]: per-phase results, JSON schema, terminal table;
//!   [`series`] and [`chart`]: one-second CSV series and SVG charts.

pub mod blkparse;
pub mod blktrace;
pub mod chart;
pub mod fio;
pub mod ftrace;
pub mod report;
pub mod run;
pub mod scenario;
pub mod series;
pub mod study;
pub mod trace;
pub mod workload;

pub use report::{RunReport, SimReport};
pub use run::{SimError, Simulation};
