//! # iosteer-workload: what runs, and what a run reports
//!
//! The jobs a run issues and the report it ends with, shared by both worlds:
//! the simulator (`iosteer-sim`) and the real engine (`iosteer-engine`) take
//! the same jobs and fill in the same [`RunReport`], so a simulated run and a
//! real one print, chart and compare alike.
//!
//! ## Where to start
//!
//! - [`workload`]: a [`Job`](workload::Job) (synthetic or a trace) and the
//!   [`Generator`](workload::Generator) that turns it into requests: rates,
//!   Poisson arrivals, I/O depth, think time, back-pressure; a
//!   [`Workload`](workload::Workload): the jobs with their phases, SLO and
//!   seed, what a simulation and a real run both take.
//! - [`fio`]: fio job files as people write them become jobs
//!   ([`fio_options`]: which options it takes, ignores and refuses;
//!   [`fio_text`]: comments, `${VAR}`; [`bssplit`], [`distribution`] and
//!   [`job_shape`]: the finer shapes of a job; [`job_phases`]: phases that
//!   follow the jobs; [`depth_search`]: fio's latency target;
//!   [`steady_state`]: fio's steady state); [`trace`]: trace formats (ascii, SPC, MSR,
//!   Alibaba, Tencent, FIU), compressed or not, streamed from disk, cut to
//!   a window and fitted to a drive, with [`blkparse`], [`blktrace`] and
//!   [`ftrace`] for the kernel's block-layer events, and [`iolog`] for
//!   fio's iologs.
//! - [`report`]: phases, the [`Recorder`](report::Recorder) of every
//!   completed request, the per-phase [`RunReport`] with its JSON schema, and
//!   the terminal table.
//! - [`summary`]: a run's answer in one sentence per scheduler, for the
//!   terminal and report.html; [`html`]: the report page.
//! - [`series`] and [`chart`]: one-second CSV series and SVG charts; `chart`
//!   also holds the palette and frame every chart of the toolkit uses;
//!   [`html`]: the one-page report; [`output`]: output paths checked before
//!   a run and the files a run leaves.

pub mod blkparse;
pub mod blktrace;
pub mod bssplit;
pub mod chart;
pub mod depth_search;
pub mod distribution;
pub mod fio;
pub mod fio_options;
pub mod fio_text;
pub mod flow;
pub mod ftrace;
pub mod granule;
pub mod html;
pub mod iolog;
pub mod job_phases;
pub mod job_shape;
pub mod output;
pub mod report;
pub mod series;
pub mod steady_state;
pub mod summary;
#[cfg(test)]
mod test_reports;
pub mod trace;
pub mod workload;

pub use report::{round, RunReport};
