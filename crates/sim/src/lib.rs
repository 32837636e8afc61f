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
//! - [`workload`]: synthetic jobs and traces; [`fio`]: fio job files
//!   ([`fio_options`]: which options it takes, ignores and refuses;
//!   [`fio_text`]: comments, `${VAR}`; [`bssplit`], [`distribution`] and
//!   [`job_shape`]: the finer shapes; [`job_phases`]: phases that follow
//!   the jobs);
//!   [`trace`]: trace formats.
//! - [`report`]: per-phase results, JSON schema, terminal table;
//!   [`series`] and [`chart`]: one-second CSV series and SVG charts.

pub mod bssplit;
pub mod chart;
pub mod distribution;
pub mod fio;
#[cfg(test)]
mod fio_compat_tests;
pub mod fio_options;
pub mod fio_text;
pub mod job_phases;
pub mod job_shape;
pub mod report;
pub mod run;
pub mod scenario;
pub mod series;
pub mod study;
pub mod trace;
pub mod workload;

pub use report::{RunReport, SimReport};
pub use run::{SimError, Simulation};
