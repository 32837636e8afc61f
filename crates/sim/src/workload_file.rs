//! Simulations of the user's own workload: a fio job file or a trace file,
//! on a drive. `iosteer sim` and `iosteer sweep` build theirs here, so a job
//! or trace runs the same under both.
//!
//! A trace's phases can be cut from it by time: `0s..60s` is a phase of
//! that name from 0 to 60 s of the replay ([`add_time_window`]).

use iosteer_device::DeviceConfig;
use iosteer_sched::Nanos;
use iosteer_workload::fio::{self, FioError};
use iosteer_workload::report::Phase;
use iosteer_workload::trace::{
    self, Devices, Event, Fit, TimeUnit, TraceError, TraceFormat, Window, WindowError,
};
use iosteer_workload::workload::{Job, JobKind};
use thiserror::Error;

use crate::run::Simulation;

/// How long after a job file's last job stops issuing its requests may
/// still finish. fio waits for every request it issued, however long that
/// takes (a 64 MiB write on a 27 MB/s drive takes 2.4 s; a backlog a
/// throttle holds, minutes), and so does the run: it ends when the last
/// request completes. This bound is for a scheduler that never lets its
/// held requests go; the report counts those left (and says so in a note).
pub const JOB_DRAIN: Nanos = Nanos::from_secs(3600);
pub use iosteer_workload::workload::TRACE_DRAIN;

/// What is wrong with a job or trace file, or a time window of a trace.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum WorkloadFileError {
    #[error("{file}: {source}")]
    Read {
        file: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Fio(#[from] FioError),
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("{speed}: expected a positive replay speed")]
    Speed { speed: f64 },
    /// Only ascii traces lack a time unit of their own.
    #[error("{format} traces give their own time unit; a unit applies to ascii only")]
    UnitOfItsOwn { format: TraceFormat, unit: TimeUnit },
    /// Only block-layer traces have a queue and an issue event.
    #[error("{format} traces have one event a request; blkparse, blktrace and ftrace have two")]
    OneEvent { format: TraceFormat, event: Event },
    #[error("`{text}`: expected a time window START..END with both ends, such as 0s..60s")]
    WindowSyntax { text: String },
    #[error("`{text}`: the window is empty: it ends where or before it starts")]
    WindowReversed { text: String },
    #[error(
        "`{text}`: outside the run: its requests arrive from 0 to {last_s:.3} s and \
         the run ends at {end_s:.3} s; a window starts before the last arrival and ends by the run's end"
    )]
    WindowOutside {
        text: String,
        last_s: f64,
        end_s: f64,
    },
}

/// How to read a trace file.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct TraceOptions {
    pub format: TraceFormat,
    /// Time unit of ascii traces.
    pub unit: TimeUnit,
    /// Replay speed (2: twice as fast).
    pub speed: f64,
    pub fit: Fit,
    pub devices: Devices,
    /// The block-layer event that is a request's arrival (blkparse,
    /// blktrace, ftrace).
    pub event: Event,
    /// Only the requests arriving in this span of the trace are replayed.
    pub window: Option<Window>,
}

impl TraceOptions {
    /// Checks the options together: a positive speed, a unit for ascii
    /// traces only, an arrival event for traces that have two.
    pub fn check(&self) -> Result<(), WorkloadFileError> {
        let format = self.format;
        if !(self.speed.is_finite() && self.speed > 0.0) {
            return Err(WorkloadFileError::Speed { speed: self.speed });
        }
        if format != TraceFormat::Ascii && self.unit != TimeUnit::Ns {
            let unit = self.unit;
            return Err(WorkloadFileError::UnitOfItsOwn { format, unit });
        }
        if self.event != Event::Queue && !format.has_events() {
            let event = self.event;
            return Err(WorkloadFileError::OneEvent { format, event });
        }
        Ok(())
    }
}

impl Default for TraceOptions {
    /// Ascii in nanoseconds, at its own speed, refused if it does not fit,
    /// devices merged, arrivals at the queue event: the command line's
    /// defaults.
    fn default() -> TraceOptions {
        TraceOptions {
            format: TraceFormat::Ascii,
            unit: TimeUnit::Ns,
            speed: 1.0,
            fit: Fit::Refuse,
            devices: Devices::Merge,
            event: Event::Queue,
            window: None,
        }
    }
}

fn read(file: &str) -> Result<String, WorkloadFileError> {
    iosteer_workload::fio_text::read_text(file).map_err(|source| WorkloadFileError::Read {
        file: file.to_string(),
        source,
    })
}

/// A fio job file's jobs on `device`, in phases that follow the jobs.
pub fn job_simulation(
    file: &str,
    device: DeviceConfig,
    seed: u64,
) -> Result<Simulation, WorkloadFileError> {
    let text = read(file)?;
    let parsed = fio::parse_file(&text, file, device.logical_bytes())?;
    let mut sim = Simulation::of_job_file(device, parsed.jobs, seed, JOB_DRAIN);
    sim.notes.splice(0..0, parsed.notes);
    Ok(sim)
}

/// The simulated drive is the device the jobs run on, as with fio's
/// `filename=/dev/...`: every job's region starts at its `offset`. Jobs
/// that name different files (or none: fio gives each job and copy a file
/// of its own) would lie apart on a file system; here their regions
/// overlap where they do, and a note says so (`iosteer run` on a directory
/// lays the files apart).
pub fn shared_drive_note(jobs: &[Job]) -> Option<String> {
    let file_of = |job: &Job| match job.shape.files.names.as_slice() {
        [] => format!("{} (its own file, in fio)", job.name),
        names => names.join(":"),
    };
    let regions: Vec<(String, u64, u64)> = (jobs.iter())
        .filter(|job| matches!(job.kind, JobKind::Synthetic(_)))
        .map(|job| (file_of(job), job.start_offset(), job.end_offset()))
        .collect();
    let overlapping = regions
        .iter()
        .enumerate()
        .find_map(|(i, (a, start, end))| {
            let other = regions[i + 1..]
                .iter()
                .find(|(b, s, e)| b != a && s < end && start < e);
            other.map(|(b, _, _)| (a, b))
        })?;
    Some(format!(
        "jobs of different files share blocks of the drive ({} and {}, among others): the simulated drive is the device the jobs run on, every job's region starting at its offset, where fio's files would lie apart on a file system; give offset or offset_increment to lay them apart",
        overlapping.0, overlapping.1
    ))
}

/// A trace file replayed on `device`, measured in one phase `trace`.
pub fn trace_simulation(
    file: &str,
    options: &TraceOptions,
    device: DeviceConfig,
    seed: u64,
) -> Result<Simulation, WorkloadFileError> {
    options.check()?;
    let read_options = trace::Options {
        unit: options.unit,
        speed: options.speed,
        devices: options.devices,
        event: options.event,
        window: options.window,
        ..trace::Options::default()
    };
    let page = u64::from(device.geometry.page_size);
    let drive = (device.logical_bytes(), page);
    let trace = trace::open_replay(file, options.format, &read_options, options.fit, drive)?;
    let remapped = trace.remap;
    let job = Job {
        name: file.to_string(),
        kind: JobKind::Trace(trace.records),
        start: Nanos::ZERO,
        stop: None,
        shape: Default::default(),
    };
    let mut sim = Simulation::of_jobs(device, vec![job], "trace", seed, TRACE_DRAIN);
    sim.phases_end_with_run = true;
    if let Some(remap) = remapped {
        sim.notes.push(format!(
            "trace addresses remapped to fit the drive (--trace-fit {}): {remap}",
            options.fit
        ));
    }
    sim.notes.extend(trace.notes);
    Ok(sim)
}

/// Whether `text` is written as a time window (`START..END`).
pub fn is_time_window(text: &str) -> bool {
    text.contains("..")
}

/// Adds the phase `text` (`START..END`, durations as fio writes them: `60s`,
/// `1m`, `500ms`) to `sim`, unless it has it; it must start before it ends
/// before the workload's last request, and end by the run's end (the last
/// request plus the drain).
pub fn add_time_window(sim: &mut Simulation, text: &str) -> Result<(), WorkloadFileError> {
    if sim.workload.phases.iter().any(|p| p.name == text) {
        return Ok(());
    }
    let syntax = || WorkloadFileError::WindowSyntax {
        text: text.to_string(),
    };
    let window = Window::parse(text).map_err(|e| match e {
        WindowError::Empty { .. } => WorkloadFileError::WindowReversed {
            text: text.to_string(),
        },
        _ => syntax(),
    })?;
    let (start, end) = (window.start, window.end.ok_or_else(syntax)?);
    let last = sim.workload_end();
    if start >= last || end > last + sim.drain {
        return Err(WorkloadFileError::WindowOutside {
            text: text.to_string(),
            last_s: last.as_secs_f64(),
            end_s: (last + sim.drain).as_secs_f64(),
        });
    }
    sim.workload.phases.push(Phase {
        name: text.to_string(),
        start,
        end,
    });
    Ok(())
}

/// The shipped Financial1 excerpt, wrapped onto `device`: the trace the
/// crate's tests replay.
#[cfg(test)]
pub(crate) fn financial1_excerpt(device: DeviceConfig) -> Simulation {
    let options = TraceOptions {
        fit: Fit::Wrap,
        ..TraceOptions::default()
    };
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../traces/financial1-excerpt.ascii"
    );
    trace_simulation(file, &options, device, 1).expect("the shipped trace")
}
