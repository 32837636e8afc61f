//! # iosteer-sim: schedulers on a simulated drive
//!
//! A discrete-event simulation in integer nanoseconds that joins workload
//! jobs, a scheduler from `iosteer-sched` and a drive from `iosteer-device`,
//! deterministic for a given seed.
//!
//! ## Where to start
//!
//! - [`Simulation`] ([`run`]): the drive, its aging, the jobs and the phases;
//!   [`plan::run_all`] runs several scheduler specs, each on a fresh copy of
//!   the same aged drive.
//! - [`scenario`]: built-in scenarios, `fill-while-serving` (the Netflix
//!   paper's problem) first.
//! - [`study`]: several runs side by side that differ in drive or workload
//!   (`pgc-workloads`: NPGC against PGC; `hints`: stream separation).
//!
//! - [`plan`]: what one `iosteer sim` runs, a simulation under several
//!   schedulers or a study's cases.
//! - [`workload_file`]: the user's own workload, a fio job file or a trace
//!   (with phases cut from it by time).
//!
//! The jobs it runs and the reports it writes are `iosteer-workload`'s,
//! shared with the real engine: synthetic jobs, fio job files and traces in,
//! per-phase reports, CSV series and SVG charts out.

#[cfg(test)]
mod example_job_files;
#[cfg(test)]
mod job_file_tests;
pub mod plan;
pub mod run;
#[cfg(test)]
mod run_tests;
pub mod scenario;
#[cfg(test)]
mod start_state_tests;
pub mod study;
pub mod workload_file;

pub use run::{SimError, Simulation};
