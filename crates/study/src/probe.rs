//! Probe: the paper's weeks of trial on production machines (which
//! found FreeBSD's 30 MB/s write limit) as one command. It serves reads,
//! steps the write rate up, measures the reads at each step, and reports the
//! highest write rate that keeps the read objective, with the curve as a
//! table and a chart.
//!
//! The procedure, and why each default is what it is:
//! - **Steps.** First a baseline step with reads alone (the drive's unloaded
//!   read latency, which a relative objective is measured against), then one
//!   step per write rate, lowest first: `--rates 5m,10m,...` or `--start`,
//!   `--step`, `--max` (fio sizes per second, powers of 1024), by default 5m
//!   to 100m in steps of 5m: that resolves a limit like the paper's 30 MB/s
//!   to within 5 MiB/s, and 100 MiB/s is well past what the emulated SATA
//!   drive writes while it serves (28 MB/s in `iosteer sweep`).
//!   Stepping stops after two consecutive steps miss the objective: one miss
//!   may be noise, two say the drive is past its limit, and every further
//!   step only costs time and wear.
//! - **Timing.** Each step runs `--step-time` (10 s) and is measured after
//!   `--settle` (2 s): the first seconds hold the queues filling, the limiter
//!   reaching its rate and what the previous step left in the drive. Eight
//!   seconds of the emulated consumer drive's 1,700 reads a second is some
//!   13,000 reads: 130 beyond the p99, 13 beyond the p99.9. Requests are
//!   counted by completion time; the writes still queued when a step ends
//!   finish (up to 5 s) before the next step starts.
//! - **Writes.** One sequential writer of `--write-bs` (128 KiB, FreeBSD's
//!   MAXPHYS, as in the simulator's fill) with 32 writes outstanding (a
//!   SATA drive's command slots), O_DIRECT. It never trims: on a file a trim
//!   punches a hole, and reads of holes never reach the disk. Each step
//!   writes on from where the last one stopped, as a fill does; starting
//!   over would overwrite what the previous step just wrote, whose blocks the
//!   drive's GC then frees for nothing. It writes in the larger stretch the
//!   reads leave, when that holds `MIN_WRITE_SPAN` writes (else over the
//!   whole target): a read that overlaps a queued write waits for the
//!   limiter to send it, which measures the ordering rule, not the drive.
//! - **Throttle.** `--throttle scheduler` (the default) answers the paper's
//!   question, "what write limit do I set": the writer keeps its 32 writes
//!   queued (a fill that writes as fast as it is let) and `netflix`'s
//!   bandwidth limiter holds them to the step's rate (`write.current` in
//!   kB/s, 1 kB = 1000 B; `--sched` may add other `netflix` settings). The
//!   best step's spec is the setting to configure. `--throttle writer`
//!   answers "what write load does the drive tolerate": the writer itself
//!   issues at the rate (fio's `rate=`), through `--sched` (`fifo`: no help
//!   from the scheduler).
//! - **Reads.** `--read-job FILE`: the jobs of a fio job file (parsed as
//!   `iosteer run` parses them; they must not write, and each step runs them
//!   for the step, whatever their `runtime` and `startdelay`). By default:
//!   random 128 KiB reads (video chunks) over the whole target, Poisson
//!   arrivals (clients do not wait for each other), at `--read-rate` or else
//!   at 40% of what the drive can read, as the simulator's fill-while-serving
//!   scenario serves (the paper: 120 MB/s on a 300 MB/s drive). For an
//!   emulated drive that is 40% of its host link, as in the scenario; a real
//!   target's link rate is unknown, so a calibration step first reads with
//!   32 reads outstanding and no writes, and the reads run at 40% of what it
//!   measured.
//! - **Objective.** `--objective` as `iosteer sweep` takes it, with its
//!   default: `p99<=2x` is relative to the baseline step, `p99<=5ms`
//!   absolute; the metric is mean, p50, p99, p99.9 or max of the measured
//!   reads. A step meets it when the reads measured in it do, and it ran to
//!   its end. The best step is the one with the highest asked rate that
//!   meets it; a miss below it is reported (the boundary is noisy there).
//! - **Backends.** `--target PATH` opens a file or block device as `iosteer
//!   run` does (`--size` creates or grows a file, `--force` is needed for a
//!   block device: the probe writes), O_DIRECT with 32 commands in flight. A
//!   file the probe creates or grows is first written through once, so reads
//!   reach the disk. `--emulate PRESET` runs the drive model in real time,
//!   aged once as `iosteer sim` ages it (full, then twice its capacity in
//!   random overwrites) with the free pool it keeps by idle GC cut to 4
//!   blocks per die above the low watermark (as the `quick` scenario does),
//!   so the writes reach foreground GC in the first steps, where a drive in
//!   service sits, and not after 1.4 GB of pool (consumer-sata). All steps
//!   run on that one drive, in real time, one after the other: a real drive
//!   is not reset between steps either, so each step inherits the GC debt of
//!   the ones before it, as in production.
//!
//! Ctrl-C stops the step under way and prints what was measured; the step
//! cut short counts as not meeting the objective.

use std::path::{Path, PathBuf};
use std::time::Instant;

use iosteer_device::DeviceConfig;
use iosteer_engine::drive::{drive, Plan, DRAIN};
use iosteer_engine::runner::Backend;
use iosteer_engine::EngineError;
use iosteer_sched::{policy, Nanos};
use iosteer_workload::fio;
use iosteer_workload::report::{round, Phase, PhaseReport, RunReport};
use iosteer_workload::workload::{Arrival, Job, JobKind, Synthetic, Workload};
use serde::Serialize;
use thiserror::Error;

use crate::objective::{read_value, Bound, Objective};

mod continuous;
mod report;
mod targets;
#[cfg(test)]
mod tests;

pub use continuous::Continuous;
use report::notes;
pub use report::{chart, csv, draw_chart, table, write_out, ProbeReport, Step, CHART_SIZE};
use targets::default_reads;
pub use targets::{emulated, emulated_drive, real};

/// Writes the writer keeps outstanding: a SATA drive's command slots.
const WRITE_IODEPTH: u32 = 32;
/// Commands in a real target at once (as `iosteer run`'s default).
const QUEUE_DEPTH: u32 = 32;
/// Reads outstanding in a real target's calibration step.
const CALIBRATION_IODEPTH: u32 = 32;
/// Free blocks per die an emulated drive's idle GC keeps above its low
/// watermark (the `quick` scenario's).
const POOL_BLOCKS: u32 = 4;
/// Most write rates one probe steps through.
pub const MAX_STEPS: usize = 1000;
/// Largest write, bytes (each of the target's 32 slots holds one).
pub const MAX_WRITE_BS: u64 = 16 << 20;
/// Longest step.
pub const MAX_STEP_TIME: Nanos = Nanos::from_secs(3600);
/// Consecutive misses that end the stepping.
const MISSES_TO_STOP: usize = 2;

/// What went wrong in a probe, in its own terms.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ProbeError {
    #[error("the rates must increase")]
    RatesNotIncreasing,
    /// The target failed requests of a step (full, or failing): its figures
    /// leave them out, so no verdict stands on them.
    #[error("{count} requests failed in a step (the report's notes say how)")]
    RequestsFailed { count: u64 },
    #[error("{count} rates; at most {}", MAX_STEPS)]
    TooManyRates { count: usize },
    #[error("the highest rate is below the first")]
    MaxBelowStart,
    #[error("{count} steps; at most {}", MAX_STEPS)]
    TooManySteps { count: u64 },
    #[error("{bytes} bytes: a write is a multiple of 4k from 4k to 16m")]
    WriteSize { bytes: u64 },
    #[error("a step must outlast its settle time, and last at most 1h")]
    StepTime,
    /// A step's scheduler does not build.
    #[error("scheduler `{spec}`: {source}")]
    Scheduler {
        spec: String,
        source: iosteer_sched::ConfigError,
    },
    /// The scheduler throttle's spec (the base spec and netflix's bandwidth
    /// limiter) does not build.
    #[error("scheduler `{spec}`: {source} (the scheduler throttle adds netflix's bandwidth limiter to the spec; the writer throttle takes any policy)")]
    ThrottledScheduler {
        spec: String,
        source: iosteer_sched::ConfigError,
    },
    #[error(transparent)]
    Fio(#[from] fio::FioError),
    #[error("{file}: {problem}")]
    ReadJob { file: String, problem: String },
    #[error("{capacity} bytes; the probe needs at least {needed}")]
    TooSmall { capacity: u64, needed: u64 },
    #[error(transparent)]
    DriveConfig(#[from] iosteer_device::ConfigError),
    #[error(transparent)]
    Aging(#[from] iosteer_device::FtlError),
    #[error(transparent)]
    Target(#[from] iosteer_engine::TargetError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("{}: writing it through: {source}", path.display())]
    WriteThrough {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{in_flight} commands did not finish within {seconds} s of the end of a step")]
    Quiesce { in_flight: u32, seconds: u64 },
    #[error("interrupted in the calibration step")]
    CalibrationInterrupted,
    #[error("the calibration step read nothing")]
    CalibrationReadNothing,
    #[error("a step without its measure phase")]
    NoMeasurePhase,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Throttle {
    /// netflix's bandwidth limiter holds the writes to the rate: the limit
    /// to configure.
    Scheduler,
    /// the writer issues at the rate: the load the drive tolerates.
    Writer,
}

impl Throttle {
    pub const NAMES: &'static str = "scheduler, writer";

    pub fn parse(name: &str) -> Option<Throttle> {
        match name {
            "scheduler" => Some(Throttle::Scheduler),
            "writer" => Some(Throttle::Writer),
            _ => None,
        }
    }

    /// The scheduler spec when none is given: netflix, whose limiter the
    /// scheduler throttle sets; fifo, no help from the scheduler, for the
    /// writer throttle.
    pub fn default_spec(self) -> &'static str {
        match self {
            Throttle::Scheduler => "netflix",
            Throttle::Writer => "fifo",
        }
    }
}

/// Where the reads come from.
pub enum ReadLoad {
    /// The jobs of a fio job file: its name and text.
    File { name: String, text: String },
    /// The default reads at this many bytes per second.
    Rate(f64),
    /// The default reads at 40% of what the drive can read.
    Default,
}

/// What to probe with, and how to judge it.
pub struct ProbeOptions {
    pub objective: Objective,
    /// The objective's metric as given (`p99`), for the chart.
    pub metric: String,
    /// Write rates, bytes per second, increasing.
    pub rates: Vec<u64>,
    pub throttle: Throttle,
    /// The scheduler spec of the baseline (and of writer-throttled steps).
    pub base_spec: String,
    pub write_bs: u64,
    pub reads: ReadLoad,
    pub step_time: Nanos,
    pub settle: Nanos,
    pub slo: Nanos,
    pub seed: u64,
    /// Asked now and then; `true` ends the step under way (Ctrl-C).
    pub stop: fn() -> bool,
}

/// Write rates from `start` to `max` in steps of `step`, bytes per second.
pub fn ramp(start: u64, step: u64, max: u64) -> Result<Vec<u64>, ProbeError> {
    if max < start {
        return Err(ProbeError::MaxBelowStart);
    }
    let count = (max - start) / step + 1;
    if count > MAX_STEPS as u64 {
        return Err(ProbeError::TooManySteps { count });
    }
    Ok((0..count).map(|i| start + i * step).collect())
}

/// Checks a list of write rates: increasing, and not too many.
pub fn listed(rates: Vec<u64>) -> Result<Vec<u64>, ProbeError> {
    if rates.windows(2).any(|w| w[1] <= w[0]) {
        return Err(ProbeError::RatesNotIncreasing);
    }
    if rates.len() > MAX_STEPS {
        return Err(ProbeError::TooManyRates { count: rates.len() });
    }
    Ok(rates)
}

impl ProbeOptions {
    /// Checks the write size, the timing and every step's scheduler (built
    /// once, so a bad spec is refused before the drive is aged or written).
    pub fn check(&self) -> Result<(), ProbeError> {
        let bs = self.write_bs;
        if bs < 4096 || bs % 4096 != 0 || bs > MAX_WRITE_BS {
            return Err(ProbeError::WriteSize { bytes: bs });
        }
        if self.settle >= self.step_time || self.step_time > MAX_STEP_TIME {
            return Err(ProbeError::StepTime);
        }
        // The spec as given in the error: `spec(None)` lists the limiter
        // only where that makes it build.
        policy::build(&self.spec(None)).map_err(|source| ProbeError::Scheduler {
            spec: self.base_spec.clone(),
            source,
        })?;
        if self.throttle == Throttle::Writer {
            return Ok(());
        }
        for spec in self.rates.iter().map(|rate| self.spec(Some(*rate))) {
            policy::build(&spec)
                .map_err(|source| ProbeError::ThrottledScheduler { spec, source })?;
        }
        Ok(())
    }

    /// The scheduler of a step writing at `rate` (`None`: the baseline).
    fn spec(&self, rate: Option<u64>) -> String {
        let join = if self.base_spec.contains(':') {
            ','
        } else {
            ':'
        };
        match (self.throttle, rate) {
            (Throttle::Scheduler, Some(rate)) => {
                // The limiter counts kB/s; its ceiling goes with the rate, so
                // rates over its default ceiling (300,000) are allowed.
                let kbps = rate.div_ceil(1000);
                format!(
                    "{}{join}write.limiter=bandwidth,write.max={kbps},write.current={kbps}",
                    self.base_spec
                )
            }
            // Settings of the limiter the steps add (`write.bandwidth.min`)
            // need it listed: the baseline, which writes nothing, lists it.
            (Throttle::Scheduler, None) if policy::build(&self.base_spec).is_err() => {
                let listed = format!("{}{join}write.limiter=bandwidth", self.base_spec);
                match policy::build(&listed) {
                    Ok(_) => listed,
                    Err(_) => self.base_spec.clone(),
                }
            }
            _ => self.base_spec.clone(),
        }
    }

    /// What each step's writes are, for the report.
    fn writes(&self) -> String {
        let how = match self.throttle {
            Throttle::Scheduler => format!(
                "{WRITE_IODEPTH} queued, held to each rate by the scheduler's bandwidth limiter"
            ),
            Throttle::Writer => format!(
                "issued at each rate (at most {WRITE_IODEPTH} outstanding) through {}",
                self.base_spec
            ),
        };
        format!("writes sequential {} KiB, {how}", self.write_bs >> 10)
    }

    /// Settle and measure by completion time; what finishes after the step
    /// (the writes still queued) is kept apart, to count where the writer
    /// stopped.
    fn phases(&self) -> Vec<Phase> {
        let phase = |name: &str, start: Nanos, end: Nanos| Phase {
            name: name.into(),
            start,
            end,
        };
        vec![
            phase("settle", Nanos::ZERO, self.settle),
            phase("measure", self.settle, self.step_time),
            phase("drain", self.step_time, self.step_time + DRAIN),
        ]
    }
}

/// What a probe measured, and the error that ended it, if one did.
pub struct Outcome {
    pub report: ProbeReport,
    /// Every run (calibration and steps), for their one-second series.
    pub runs: Vec<RunReport>,
    pub error: Option<ProbeError>,
}

/// Probes the emulated drive `config`: ages it, then steps.
pub fn probe_emulated(options: &ProbeOptions, config: DeviceConfig) -> Result<Outcome, ProbeError> {
    timed(|| emulated(options, config)?.ramp(options))
}

/// Probes a file or block device (see [`real`]).
pub fn probe_real(
    options: &ProbeOptions,
    path: &Path,
    size: Option<u64>,
    force: bool,
) -> Result<Outcome, ProbeError> {
    timed(|| real(options, path, size, force)?.ramp(options))
}

/// The outcome of `probe`, with the wall time it took.
fn timed(probe: impl FnOnce() -> Result<Outcome, ProbeError>) -> Result<Outcome, ProbeError> {
    let started = Instant::now();
    let mut outcome = probe()?;
    outcome.report.wall_s = round(started.elapsed().as_secs_f64(), 3);
    Ok(outcome)
}

/// Writes the stretch beside the reads must hold for the writer to stay in
/// it (else it covers the whole target, reads and all).
const MIN_WRITE_SPAN: u64 = 1024;

/// A target to probe: the backend, the reads, and what has run.
pub struct Probe<B> {
    backend: Continuous<B>,
    label: String,
    description: String,
    /// Bytes the jobs may touch.
    capacity: u64,
    readers: Vec<Job>,
    /// What the reads are, for the report.
    reads: String,
    /// Runs so far (each gets its own seed, so no two read the same offsets).
    runs: Vec<RunReport>,
    /// Where the writer goes on from.
    cursor: u64,
    /// Bytes the writer covers: beside the reads when the target has room.
    writes: std::ops::Range<u64>,
}

impl<B: Backend> Probe<B> {
    fn new(backend: B, label: String, description: String, capacity: u64) -> Probe<B> {
        Probe {
            backend: Continuous::new(backend),
            label,
            description,
            capacity,
            readers: Vec::new(),
            reads: String::new(),
            runs: Vec::new(),
            cursor: 0,
            writes: 0..capacity,
        }
    }

    /// Sets the reads, and puts the writer in the larger stretch of the
    /// target they leave, if it holds `MIN_WRITE_SPAN` writes: a read that
    /// overlaps a queued write waits until the limiter sends it, which is a
    /// cost of the ordering rule, not of the drive (sequential 1 MiB writes
    /// over the 1 GiB a reader covers held 3% of the reads for seconds).
    fn set_reads(&mut self, readers: Vec<Job>, reads: String, write_bs: u64) {
        let lo = readers.iter().map(Job::start_offset).min().unwrap_or(0);
        let hi = readers.iter().map(Job::end_offset).max().unwrap_or(0);
        let (below, above) = (lo, self.capacity.saturating_sub(hi));
        let beside = if above >= below {
            hi..self.capacity
        } else {
            0..lo
        };
        let room = beside.end.saturating_sub(beside.start);
        self.writes = if room >= MIN_WRITE_SPAN * write_bs {
            beside
        } else {
            0..self.capacity
        };
        self.cursor = self.writes.start;
        self.readers = readers;
        self.reads = reads;
    }

    /// Runs `jobs` for a step through `spec`; the report is kept for `--out`.
    /// The error is the backend's, if it failed (what was measured stands).
    fn run(
        &mut self,
        options: &ProbeOptions,
        spec: &str,
        label: String,
        jobs: Vec<Job>,
    ) -> Result<(RunReport, Option<ProbeError>), ProbeError> {
        let sched = policy::build(spec).map_err(|source| ProbeError::Scheduler {
            spec: spec.to_string(),
            source,
        })?;
        let jobs = jobs
            .into_iter()
            .map(|mut job| {
                // Each step runs for its time: a job file's byte limits and
                // stonewalls do not apply to the probe's steps.
                job.shape.bytes_limit = None;
                job.shape.ios_limit = None;
                job.shape.after.clear();
                Job {
                    start: Nanos::ZERO,
                    stop: Some(options.step_time),
                    ..job
                }
            })
            .collect();
        let plan = Plan {
            sched,
            spec: label,
            workload: Workload {
                slo: options.slo,
                ..Workload::in_phases(
                    jobs,
                    options.phases(),
                    options.seed.wrapping_add(self.runs.len() as u64),
                )
            },
            run_for: options.step_time,
            per_second: false,
            metrics: None,
            stop: options.stop,
            notes: Vec::new(),
        };
        self.backend.begin_step();
        let measured = drive(plan, &mut self.backend, &self.label, &self.description);
        let error = match (measured.error, measured.failed) {
            (Some(e), _) => Some(e.into()),
            (None, 0) => self.backend.quiesce().err(),
            (None, count) => Some(ProbeError::RequestsFailed { count }),
        };
        self.runs.push(measured.report.clone());
        Ok((measured.report, error))
    }

    /// A real target's read rate: what closed-loop reads with 32 outstanding
    /// and no writes reached, bytes per second.
    fn calibrate(&mut self, options: &ProbeOptions) -> Result<f64, ProbeError> {
        let job = default_reads(self.capacity, None, CALIBRATION_IODEPTH);
        let label = "calibration".to_string();
        let (run, error) = self.run(options, &options.base_spec, label, vec![job])?;
        if let Some(e) = error {
            return Err(e);
        }
        if run.interrupted {
            return Err(ProbeError::CalibrationInterrupted);
        }
        let mbps = measured(&run)?.read.mbps;
        if mbps <= 0.0 {
            return Err(ProbeError::CalibrationReadNothing);
        }
        Ok(mbps * 1e6)
    }

    /// Where the writes go, for the report.
    fn write_span(&self) -> String {
        let mib = |b: u64| b >> 20;
        if self.writes == (0..self.capacity) {
            return "over the whole target".into();
        }
        format!(
            "over MiB {}..{} (beside the reads)",
            mib(self.writes.start),
            mib(self.writes.end)
        )
    }

    /// The writer of a step at `rate`, going on from where the last stopped
    /// (from the start when too little of the target is left for the step).
    fn writer(&mut self, options: &ProbeOptions, rate: u64) -> Job {
        let bs = options.write_bs;
        let start = self.writes.start.div_ceil(bs) * bs;
        let end = self.writes.end / bs * bs;
        let step_bytes = rate as f64 * options.step_time.as_secs_f64();
        if self.cursor < start || (end.saturating_sub(self.cursor) as f64) < step_bytes.max(1.0) {
            self.cursor = start;
        }
        let open_loop = options.throttle == Throttle::Writer;
        let writer = Synthetic {
            read_percent: 0,
            sequential: true,
            ..Synthetic::reads(
                bs,
                self.cursor,
                end - self.cursor,
                Arrival::open(None, open_loop.then_some(rate as f64), false, WRITE_IODEPTH),
            )
        };
        Job {
            name: "writer".into(),
            kind: JobKind::Synthetic(writer),
            start: Nanos::ZERO,
            stop: None,
            shape: Default::default(),
        }
    }

    /// Runs the step at `rate` (`None`: the baseline) and returns its figures.
    fn step(
        &mut self,
        options: &ProbeOptions,
        rate: Option<u64>,
    ) -> Result<(Step, Option<ProbeError>), ProbeError> {
        let spec = options.spec(rate);
        let mut jobs = self.readers.clone();
        jobs.extend(rate.map(|r| self.writer(options, r)));
        let label = match rate {
            None => "baseline".to_string(),
            Some(r) => format!("writes {:.1} MB/s", r as f64 / 1e6),
        };
        let (run, error) = self.run(options, &spec, label, jobs)?;
        let written = run.phase("all").map_or(0, |p| p.write.ops) * options.write_bs;
        self.cursor = (self.cursor + written).min(self.writes.end);
        let step = figures(&run, options, rate, spec)?;
        Ok((step, error))
    }

    /// The baseline, then the rates until two in a row miss the objective.
    pub fn ramp(mut self, options: &ProbeOptions) -> Result<Outcome, ProbeError> {
        let (baseline, mut error) = self.step(options, None)?;
        let bound_ms = (!baseline.interrupted && baseline.read_ops > 0).then(|| {
            match options.objective.bound {
                Bound::Relative(x) => baseline.value_ms * x,
                Bound::Absolute(t) => t.0 as f64 / 1e6,
            }
        });
        if let Some(bound) = bound_ms {
            eprintln!(
                "iosteer: baseline: read {} {:.2} ms; the bound is {bound:.2} ms",
                options.metric, baseline.value_ms
            );
        }
        let mut report = ProbeReport {
            target: self.label.clone(),
            reads: self.reads.clone(),
            writes: format!("{}, {}", options.writes(), self.write_span()),
            throttle: options.throttle,
            step_s: options.step_time.as_secs_f64(),
            settle_s: options.settle.as_secs_f64(),
            objective: options.objective.to_string(),
            bound_ms,
            baseline,
            steps: Vec::new(),
            best: None,
            stopped: "every rate was tried".into(),
            notes: Vec::new(),
            wall_s: 0.0,
        };
        match (report.bound_ms, &error) {
            (_, Some(_)) => {}
            (Some(bound), None) => error = self.steps(options, bound, &mut report)?,
            (None, None) if (options.stop)() => report.stopped = INTERRUPTED.into(),
            (None, None) => report.stopped = "the baseline step measured no reads".into(),
        }
        if let Some(e) = &error {
            report.stopped = format!("stopped by an error: {e}");
        }
        report.best = report.steps.iter().rposition(|s| s.meets == Some(true));
        report.notes = notes(&report, options);
        Ok(Outcome {
            report,
            runs: self.runs,
            error,
        })
    }

    /// The write steps against `bound`; returns the backend's error, if one
    /// ended them.
    fn steps(
        &mut self,
        options: &ProbeOptions,
        bound: f64,
        report: &mut ProbeReport,
    ) -> Result<Option<ProbeError>, ProbeError> {
        let mut misses = 0;
        for &rate in &options.rates {
            let (mut step, error) = self.step(options, Some(rate))?;
            let meets = !step.interrupted && step.read_ops > 0 && step.value_ms <= bound;
            // A step cut short is not judged (`null`), not a miss.
            step.meets = (!step.interrupted).then_some(meets);
            eprintln!(
                "iosteer: writes asked {:.1} MB/s: wrote {:.1} MB/s, read {} {:.2} ms (bound {bound:.2}): {}",
                rate as f64 / 1e6,
                step.write_mbps,
                options.metric,
                step.value_ms,
                match (step.interrupted, meets) {
                    (true, _) => "interrupted",
                    (false, true) => "meets",
                    (false, false) => "misses",
                }
            );
            let interrupted = step.interrupted;
            report.steps.push(step);
            if error.is_some() {
                return Ok(error);
            }
            // A stop that came as the step drained cut nothing of it: the
            // step stands, and no further one starts.
            if interrupted || (options.stop)() {
                report.stopped = INTERRUPTED.into();
                break;
            }
            misses = if meets { 0 } else { misses + 1 };
            if misses == MISSES_TO_STOP {
                report.stopped = format!("{MISSES_TO_STOP} steps in a row missed the objective");
                break;
            }
        }
        Ok(None)
    }
}

/// Why stepping ended when Ctrl-C or SIGTERM ended it.
const INTERRUPTED: &str = "interrupted (Ctrl-C or SIGTERM)";

fn measured(run: &RunReport) -> Result<&PhaseReport, ProbeError> {
    run.phase("measure").ok_or(ProbeError::NoMeasurePhase)
}

/// A step's figures; `meets` is left to the caller.
fn figures(
    run: &RunReport,
    options: &ProbeOptions,
    rate: Option<u64>,
    spec: String,
) -> Result<Step, ProbeError> {
    let p = measured(run)?;
    let ms = |us: f64| us / 1e3;
    let value_ms = ms(read_value(options.objective.metric, p));
    Ok(Step {
        rate_bytes_per_s: rate,
        spec,
        write_mbps: p.write.mbps,
        read_mbps: p.read.mbps,
        read_ops: p.read.ops,
        read_p50_ms: ms(p.read.lat_us.p50),
        read_p99_ms: ms(p.read.lat_us.p99),
        read_p999_ms: ms(p.read.lat_us.p999),
        read_slo_violations: p.read.slo_violations,
        write_p99_ms: ms(p.write.lat_us.p99),
        value_ms,
        meets: None,
        interrupted: run.interrupted,
        notes: run.notes.clone(),
    })
}
