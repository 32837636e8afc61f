//! `iosteer probe`: the paper's weeks of trial on production machines (which
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

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use iosteer_device::{Device, Precondition};
use iosteer_engine::emulate::Emulated;
use iosteer_engine::runner::Backend;
use iosteer_engine::{
    Engine, EngineConfig, EngineError, Finished, OpenOptionsSpec, Target, TargetKind,
};
use iosteer_sched::{policy, Command, DeviceView, LifetimeHint, Nanos};
use iosteer_sim::fio::{size_value, time_value};
use iosteer_sim::report::{Phase, PhaseReport, RunReport};
use iosteer_sim::scenario::FillWhileServing;
use iosteer_sim::workload::{Arrival, Job, JobKind, Synthetic};
use plotters::prelude::*;
use serde::Serialize;

use crate::device_cmd::load_device;
use crate::run_cmd::{self, drive, open_engine, Plan, DRAIN};
use crate::sweep_cmd::{self, Bound, Objective};

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
const MAX_STEPS: usize = 1000;
/// Largest write, bytes (each of the target's 32 slots holds one).
const MAX_WRITE_BS: u64 = 16 << 20;
/// Consecutive misses that end the stepping.
const MISSES_TO_STOP: usize = 2;
/// How long commands a step left in the target may take to finish.
const QUIESCE: Duration = Duration::from_secs(30);

#[derive(Debug, clap::Args)]
pub struct ProbeArgs {
    /// File or block device to probe (it is written).
    #[arg(long, value_name = "PATH", required_unless_present = "emulate")]
    pub target: Option<PathBuf>,
    /// Probe the simulator's drive model in real time instead: a preset
    /// (consumer-sata, enterprise-nvme, diskSim-slc) or a drive TOML file.
    /// It is aged once, with its idle-GC pool cut to 4 blocks per die, and
    /// kept across the steps, as a real drive is.
    #[arg(long, value_name = "PRESET|FILE", conflicts_with_all = ["target", "size", "force"])]
    pub emulate: Option<String>,
    /// Create the target file, or grow it, to this size (fio syntax: 1g);
    /// what it adds is written through once before the probe.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Allow writing to a block device (its data is destroyed).
    #[arg(long)]
    pub force: bool,
    /// fio job file with the read load (reads only) [default: random 128 KiB
    /// reads at --read-rate].
    #[arg(long, value_name = "FILE")]
    pub read_job: Option<String>,
    /// Rate of the default reads, per second (fio size: 100m) [default: 40%
    /// of the emulated drive's host link, or of what a real target read in a
    /// calibration step].
    #[arg(long, value_name = "RATE", conflicts_with = "read_job")]
    pub read_rate: Option<String>,
    /// Size of each write (fio size, a multiple of 4k).
    #[arg(long, value_name = "SIZE", default_value = "128k")]
    pub write_bs: String,
    /// What holds the writes to each step's rate: the scheduler (netflix's
    /// bandwidth limiter, the writer keeps 32 writes queued: the limit to
    /// configure) or the writer (it issues at the rate, fio's rate=: the
    /// load the drive tolerates).
    #[arg(long, value_enum, default_value_t = Throttle::Scheduler)]
    pub throttle: Throttle,
    /// Scheduler spec. With --throttle scheduler, netflix settings the
    /// limiter is added to [default: netflix]; with --throttle writer, the
    /// policy the writes go through [default: fifo].
    #[arg(long = "sched", value_name = "SPEC")]
    pub sched: Option<String>,
    /// Write rates to step through, per second, lowest first (fio sizes:
    /// 5m,10m,20m).
    #[arg(long, value_name = "LIST", conflicts_with_all = ["start", "step", "max"])]
    pub rates: Option<String>,
    /// First write rate, per second.
    #[arg(long, value_name = "RATE", default_value = "5m")]
    pub start: String,
    /// Increase of the write rate per step.
    #[arg(long, value_name = "RATE", default_value = "5m")]
    pub step: String,
    /// Highest write rate.
    #[arg(long, value_name = "RATE", default_value = "100m")]
    pub max: String,
    /// How long each step runs (fio time: 10s, 1m).
    #[arg(long, value_name = "TIME", default_value = "10s")]
    pub step_time: String,
    /// How long the start of each step is left out of its measurement.
    #[arg(long, value_name = "TIME", default_value = "2s")]
    pub settle: String,
    /// Read objective: `METRIC<=Nx` (times the baseline step's) or
    /// `METRIC<=DURATION`; METRIC is mean, p50, p99, p99.9 or max.
    #[arg(long, default_value = "p99<=2x")]
    pub objective: String,
    /// Seed of the reads' random choices and the emulated drive's aging.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Reads slower than this count as SLO violations.
    #[arg(long, default_value_t = 35.0)]
    pub slo_ms: f64,
    /// Print the JSON report on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Write probe.csv, probe.svg, probe.json and each step's one-second
    /// series (CSV and SVG) into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<String>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Throttle {
    /// netflix's bandwidth limiter holds the writes to the rate: the limit
    /// to configure.
    Scheduler,
    /// the writer issues at the rate: the load the drive tolerates.
    Writer,
}

/// Where the reads come from.
enum ReadLoad {
    /// `--read-job FILE`.
    File(String),
    /// The default reads at `--read-rate` (bytes per second).
    Rate(f64),
    /// The default reads at 40% of what the drive can read.
    Default,
}

/// The options, checked.
struct Options {
    objective: Objective,
    /// The objective's metric as given (`p99`), for the chart.
    metric: String,
    /// Write rates, bytes per second, increasing.
    rates: Vec<u64>,
    throttle: Throttle,
    /// The scheduler spec of the baseline (and of writer-throttled steps).
    base_spec: String,
    write_bs: u64,
    reads: ReadLoad,
    step_time: Nanos,
    settle: Nanos,
    slo: Nanos,
    seed: u64,
}

fn rate_value(option: &str, text: &str) -> Result<u64, String> {
    size_value(text).filter(|r| *r > 0).ok_or_else(|| {
        format!("{option} {text}: expected a positive rate per second like 5m or 500k")
    })
}

fn time_option(option: &str, text: &str) -> Result<Nanos, String> {
    time_value(text, 1_000_000_000)
        .ok_or_else(|| format!("{option} {text}: expected a time like 10s or 500ms"))
}

/// The write rates of `--rates`, or of `--start`, `--step` and `--max`.
fn rates(args: &ProbeArgs) -> Result<Vec<u64>, String> {
    let Some(list) = &args.rates else {
        let start = rate_value("--start", &args.start)?;
        let step = rate_value("--step", &args.step)?;
        let max = rate_value("--max", &args.max)?;
        if max < start {
            return Err(format!("--max {}: below --start {}", args.max, args.start));
        }
        let count = (max - start) / step + 1;
        if count > MAX_STEPS as u64 {
            return Err(format!(
                "--start {} --step {} --max {}: {count} steps; at most {MAX_STEPS}",
                args.start, args.step, args.max
            ));
        }
        return Ok((0..count).map(|i| start + i * step).collect());
    };
    let rates = list
        .split(',')
        .map(|r| rate_value("--rates", r.trim()))
        .collect::<Result<Vec<_>, _>>()?;
    if rates.windows(2).any(|w| w[1] <= w[0]) {
        return Err(format!("--rates {list}: the rates must increase"));
    }
    if rates.len() > MAX_STEPS {
        return Err(format!(
            "--rates: {} rates; at most {MAX_STEPS}",
            rates.len()
        ));
    }
    Ok(rates)
}

impl Options {
    fn check(args: &ProbeArgs) -> Result<Options, String> {
        let objective = sweep_cmd::parse_objective(&args.objective)?;
        let metric = args
            .objective
            .split_once("<=")
            .map_or("", |(m, _)| m)
            .trim()
            .to_string();
        let write_bs = size_value(&args.write_bs)
            .filter(|b| *b >= 4096 && b % 4096 == 0 && *b <= MAX_WRITE_BS)
            .ok_or_else(|| {
                format!(
                    "--write-bs {}: expected a multiple of 4k from 4k to 16m, like 128k",
                    args.write_bs
                )
            })?;
        let step_time = time_option("--step-time", &args.step_time)?;
        let settle = time_option("--settle", &args.settle)?;
        if settle >= step_time || step_time > Nanos::from_secs(3600) {
            return Err(format!(
                "--step-time {} --settle {}: a step must outlast its settle time, and last at most 1h",
                args.step_time, args.settle
            ));
        }
        let reads = match (&args.read_job, &args.read_rate) {
            (Some(file), _) => ReadLoad::File(file.clone()),
            (None, Some(rate)) => ReadLoad::Rate(rate_value("--read-rate", rate)? as f64),
            (None, None) => ReadLoad::Default,
        };
        if !(args.slo_ms.is_finite() && args.slo_ms > 0.0) {
            return Err(format!(
                "--slo-ms {}: expected a positive number",
                args.slo_ms
            ));
        }
        let base_spec = args.sched.clone().unwrap_or_else(|| {
            match args.throttle {
                Throttle::Scheduler => "netflix",
                Throttle::Writer => "fifo",
            }
            .to_string()
        });
        let options = Options {
            objective,
            metric,
            rates: rates(args)?,
            throttle: args.throttle,
            base_spec,
            write_bs,
            reads,
            step_time,
            settle,
            slo: Nanos((args.slo_ms * 1e6) as u64),
            seed: args.seed,
        };
        options.check_specs()?;
        Ok(options)
    }

    /// Builds every step's scheduler once, so that a bad spec is refused
    /// before the drive is aged or written.
    fn check_specs(&self) -> Result<(), String> {
        let base = &self.base_spec;
        policy::build(base).map_err(|e| format!("--sched {base}: {e}"))?;
        if self.throttle == Throttle::Writer {
            return Ok(());
        }
        for spec in self.rates.iter().map(|rate| self.spec(Some(*rate))) {
            policy::build(&spec).map_err(|e| {
                format!("--sched {spec}: {e} (--throttle scheduler adds netflix's bandwidth limiter to the spec; --throttle writer takes any policy)")
            })?;
        }
        Ok(())
    }

    /// The scheduler of a step writing at `rate` (`None`: the baseline).
    fn spec(&self, rate: Option<u64>) -> String {
        match (self.throttle, rate) {
            (Throttle::Scheduler, Some(rate)) => {
                // The limiter counts kB/s; its ceiling goes with the rate, so
                // rates over its default ceiling (300,000) are allowed.
                let kbps = rate.div_ceil(1000);
                let join = if self.base_spec.contains(':') {
                    ','
                } else {
                    ':'
                };
                format!(
                    "{}{join}write.limiter=bandwidth,write.max={kbps},write.current={kbps}",
                    self.base_spec
                )
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

/// The probe's one backend across its steps. Each step's loop counts time
/// from zero, but a drive's clock must not go back (the emulated drive keeps
/// its dies, link and idle GC on absolute time), so the backend sees the
/// probe's clock: the step's time plus when the step began.
struct Continuous<B> {
    inner: B,
    origin: Instant,
    offset: Nanos,
}

impl<B: Backend> Continuous<B> {
    fn new(inner: B) -> Continuous<B> {
        Continuous {
            inner,
            origin: Instant::now(),
            offset: Nanos::ZERO,
        }
    }

    fn now(&self) -> Nanos {
        Nanos(self.origin.elapsed().as_nanos() as u64)
    }

    /// A step begins: its time zero is now.
    fn begin_step(&mut self) {
        self.offset = self.now();
    }

    /// Waits for commands a step left in the target when its drain time ran
    /// out, so that the next step's scheduler never hears of them.
    fn quiesce(&mut self) -> Result<(), String> {
        let started = Instant::now();
        let mut finished = Vec::new();
        while self.inner.view().in_flight > 0 {
            if started.elapsed() > QUIESCE {
                return Err(format!(
                    "{} commands did not finish within {} s of the end of a step",
                    self.inner.view().in_flight,
                    QUIESCE.as_secs()
                ));
            }
            let now = self.now();
            self.inner
                .wait(now, Duration::from_millis(50))
                .map_err(|e| e.to_string())?;
            self.inner.reap(self.now(), &mut finished);
            finished.clear();
        }
        Ok(())
    }
}

impl<B: Backend> Backend for Continuous<B> {
    fn view(&self) -> DeviceView {
        self.inner.view()
    }

    fn submit(&mut self, command: Command, now: Nanos) -> Result<(), EngineError> {
        self.inner.submit(command, now + self.offset)
    }

    fn submit_queued(&mut self) -> Result<(), EngineError> {
        self.inner.submit_queued()
    }

    fn wait(&mut self, now: Nanos, timeout: Duration) -> Result<(), EngineError> {
        self.inner.wait(now + self.offset, timeout)
    }

    fn reap(&mut self, now: Nanos, finished: &mut Vec<Finished>) {
        let from = finished.len();
        self.inner.reap(now + self.offset, finished);
        for f in &mut finished[from..] {
            f.at = Nanos(f.at.0.saturating_sub(self.offset.0));
        }
    }

    fn drive_gauges(&self) -> Option<(u64, u64)> {
        self.inner.drive_gauges()
    }
}

/// One step's figures (latencies in ms, rates in MB/s of 10^6 bytes), of
/// what completed in its measured part.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// The write rate asked, bytes per second (`null`: the baseline).
    pub rate_bytes_per_s: Option<u64>,
    /// The scheduler spec it ran.
    pub spec: String,
    pub write_mbps: f64,
    pub read_mbps: f64,
    pub read_ops: u64,
    pub read_p50_ms: f64,
    pub read_p99_ms: f64,
    pub read_p999_ms: f64,
    pub read_slo_violations: u64,
    pub write_p99_ms: f64,
    /// The objective's metric of the measured reads.
    pub value_ms: f64,
    /// Whether it meets the objective (`null`: the baseline).
    pub meets: Option<bool>,
    /// Cut short (Ctrl-C or an error).
    pub interrupted: bool,
    /// What the run said of itself (a busy machine waking the loop late).
    pub notes: Vec<String>,
}

impl Step {
    fn asked_mbps(&self) -> Option<f64> {
        self.rate_bytes_per_s.map(|r| r as f64 / 1e6)
    }
}

#[derive(Debug, Serialize)]
pub struct ProbeReport {
    /// What was probed.
    pub target: String,
    pub reads: String,
    pub writes: String,
    pub throttle: Throttle,
    pub step_s: f64,
    pub settle_s: f64,
    pub objective: String,
    /// The bound the objective's metric must stay within, ms (`null` when
    /// the baseline measured no reads or was cut short).
    pub bound_ms: Option<f64>,
    pub baseline: Step,
    pub steps: Vec<Step>,
    /// Index in `steps` of the highest rate that meets the objective.
    pub best: Option<usize>,
    /// Why the stepping ended.
    pub stopped: String,
    pub notes: Vec<String>,
    pub wall_s: f64,
}

/// What a probe measured, and the error that ended it, if one did.
struct Outcome {
    report: ProbeReport,
    /// Every run (calibration and steps), for their one-second series.
    runs: Vec<RunReport>,
    error: Option<String>,
}

pub fn probe(args: ProbeArgs) -> Result<(), String> {
    let options = Options::check(&args)?;
    let started = Instant::now();
    let mut outcome = match (&args.emulate, &args.target) {
        (Some(drive), _) => emulated(&options, drive)?.ramp(&options)?,
        (None, Some(path)) => real(&args, &options, path)?.ramp(&options)?,
        (None, None) => return Err("give --target PATH or --emulate PRESET".into()),
    };
    outcome.report.wall_s = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
    if let Some(dir) = &args.out {
        write_out(Path::new(dir), &outcome, &options.metric)?;
    }
    if args.json {
        let json = serde_json::to_string_pretty(&outcome.report).map_err(|e| e.to_string())?;
        println!("{json}");
    } else {
        print!("{}", table(&outcome.report));
    }
    outcome.error.map_or(Ok(()), Err)
}

/// Writes the stretch beside the reads must hold for the writer to stay in
/// it (else it covers the whole target, reads and all).
const MIN_WRITE_SPAN: u64 = 1024;

/// Open-loop reads are capped by their rate alone (as the scenario's are).
const OPEN_LOOP: u32 = 100_000;

/// The default reads: random, over the whole target, Poisson at `rate`
/// bytes per second, or closed loop with `iodepth` outstanding when `None`.
fn default_reads(capacity: u64, rate: Option<f64>, iodepth: u32) -> Job {
    let size = FillWhileServing::standard().read_size;
    let readers = Synthetic {
        read_percent: 100,
        trim: false,
        sequential: false,
        block_min: size,
        block_max: size,
        align: size,
        offset: 0,
        size: capacity / size * size,
        arrival: Arrival {
            iops: None,
            bytes_per_s: rate,
            poisson: true,
            iodepth,
            thinktime: Nanos::ZERO,
        },
        trim_ahead: None,
        hint: LifetimeHint::None,
        backpressure: None,
    };
    Job {
        name: "reads".into(),
        kind: JobKind::Synthetic(readers),
        start: Nanos::ZERO,
        stop: None,
        shape: Default::default(),
    }
}

/// The default reads at `rate`, and what they are.
fn reads_at(capacity: u64, rate: f64, why: &str) -> (Vec<Job>, String) {
    let text = format!(
        "reads random {} KiB at {:.1} MB/s ({why})",
        FillWhileServing::standard().read_size >> 10,
        rate / 1e6
    );
    (vec![default_reads(capacity, Some(rate), OPEN_LOOP)], text)
}

/// The read jobs of `--read-job FILE` against `capacity` bytes.
fn file_reads(file: &str, capacity: u64) -> Result<Vec<Job>, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("--read-job {file}: {e}"))?;
    let jobs = iosteer_sim::fio::parse(&text, file, capacity).map_err(|e| e.to_string())?;
    if jobs.is_empty() {
        return Err(format!("--read-job {file}: the job file has no job"));
    }
    if let Some(job) = jobs
        .iter()
        .find(|j| run_cmd::writes(std::slice::from_ref(j)))
    {
        return Err(format!(
            "--read-job {file}: job {} writes or trims; the probe adds the writes itself",
            job.name
        ));
    }
    if let Some(job) = jobs.iter().find(|j| j.end_offset() > capacity) {
        return Err(format!(
            "--read-job {file}: job {} reaches byte {} of a {capacity}-byte target",
            job.name,
            job.end_offset()
        ));
    }
    Ok(jobs)
}

/// Refuses a target smaller than one read or one write.
fn check_fits(what: &str, capacity: u64, options: &Options) -> Result<(), String> {
    let needed = options.write_bs.max(FillWhileServing::standard().read_size);
    if capacity < needed {
        return Err(format!(
            "{what}: {capacity} bytes; the probe needs at least {needed} (give --size to create or grow a file)"
        ));
    }
    Ok(())
}

/// The emulated drive, aged, with its reads.
fn emulated(options: &Options, drive_name: &str) -> Result<Probe<Emulated>, String> {
    // load_device names the option `iosteer sim` takes; here it is --emulate.
    let mut config = load_device(drive_name).map_err(|e| {
        e.strip_prefix("--device ")
            .map_or(e.clone(), |rest| format!("--emulate {rest}"))
    })?;
    config.gc.high_watermark = config
        .gc
        .high_watermark
        .min(config.gc.low_watermark + POOL_BLOCKS);
    let capacity = config.logical_bytes();
    check_fits(&format!("--emulate {drive_name}"), capacity, options)?;
    let (readers, reads) = match &options.reads {
        ReadLoad::File(file) => (file_reads(file, capacity)?, format!("reads of {file}")),
        ReadLoad::Rate(rate) => reads_at(capacity, *rate, "--read-rate"),
        ReadLoad::Default => {
            let share = FillWhileServing::standard().read_share_of_link;
            let rate = config.timing.host_link_mb_per_s * 1e6 * share;
            reads_at(
                capacity,
                rate,
                &format!("{:.0}% of the host link", share * 100.0),
            )
        }
    };
    let name = config.name.clone();
    let mut device = Device::new(config).map_err(|e| format!("--emulate {drive_name}: {e}"))?;
    eprintln!("iosteer: aging the emulated {name} drive...");
    let aging = Precondition {
        seed: options.seed,
        ..Precondition::default()
    };
    device
        .precondition(aging)
        .map_err(|e| format!("--emulate {drive_name}: {e}"))?;
    let drive = Emulated::new(device);
    let description = format!(
        "the emulated {name} drive (real time, {} command slots)",
        drive.view().slots
    );
    let mut probe = Probe::new(drive, format!("emulated {name}"), description, capacity);
    probe.set_reads(readers, reads, options.write_bs);
    Ok(probe)
}

/// A file or block device, opened as `iosteer run` opens it, with its reads.
fn real(args: &ProbeArgs, options: &Options, path: &Path) -> Result<Probe<Engine>, String> {
    let size = args
        .size
        .as_deref()
        .map(|s| {
            size_value(s).ok_or_else(|| format!("--size {s}: expected a size like 1g or 512m"))
        })
        .transpose()?;
    let before = std::fs::metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map_or(0, |m| m.len());
    let spec = OpenOptionsSpec {
        size,
        writes: true,
        force: args.force,
        direct: true,
    };
    let target = Target::open(path, &spec).map_err(|e| e.to_string())?;
    check_fits(&path.display().to_string(), target.size, options)?;
    if target.kind == TargetKind::File && target.size > before {
        write_through(path, before, target.size)?;
    }
    let capacity = target.size;
    let file_jobs = match &options.reads {
        ReadLoad::File(file) => Some(file_reads(file, capacity)?),
        _ => None,
    };
    let read_size = file_jobs
        .as_deref()
        .map_or(FillWhileServing::standard().read_size, run_cmd::largest_io);
    let config = EngineConfig {
        queue_depth: QUEUE_DEPTH,
        max_io_bytes: read_size.max(options.write_bs) as usize,
        ..EngineConfig::default()
    };
    let (engine, label, description) = open_engine(target, &config)?;
    let mut probe = Probe::new(engine, label, description, capacity);
    let (readers, reads) = match (&options.reads, file_jobs) {
        (ReadLoad::File(file), Some(jobs)) => (jobs, format!("reads of {file}")),
        (ReadLoad::Rate(rate), _) => reads_at(capacity, *rate, "--read-rate"),
        _ => {
            let measured = probe.calibrate(options)?;
            let share = FillWhileServing::standard().read_share_of_link;
            let why = format!(
                "{:.0}% of the {:.1} MB/s read with {CALIBRATION_IODEPTH} outstanding",
                share * 100.0,
                measured / 1e6
            );
            reads_at(capacity, measured * share, &why)
        }
    };
    probe.set_reads(readers, reads, options.write_bs);
    Ok(probe)
}

/// Writes bytes `from..to` of the file once (buffered, then synced), so
/// that reads of them reach the disk: reads of a sparse file's holes never
/// do. The bytes are not zeros, which a layer below might not store.
fn write_through(path: &Path, from: u64, to: u64) -> Result<(), String> {
    use std::io::{Seek, SeekFrom};
    let failed = |e: std::io::Error| format!("{}: writing it through: {e}", path.display());
    eprintln!(
        "iosteer: writing the {} MiB the probe added to {} once, so reads reach the disk...",
        (to - from) >> 20,
        path.display()
    );
    let mut file = OpenOptions::new().write(true).open(path).map_err(failed)?;
    file.seek(SeekFrom::Start(from)).map_err(failed)?;
    let chunk = vec![0xa5u8; 1 << 20];
    let mut at = from;
    while at < to {
        let n = (to - at).min(chunk.len() as u64) as usize;
        file.write_all(&chunk[..n]).map_err(failed)?;
        at += n as u64;
    }
    file.sync_all().map_err(failed)
}

/// A target to probe: the backend, the reads, and what has run.
struct Probe<B> {
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
        options: &Options,
        spec: &str,
        label: String,
        jobs: Vec<Job>,
    ) -> Result<(RunReport, Option<String>), String> {
        let sched = policy::build(spec).map_err(|e| format!("--sched {spec}: {e}"))?;
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
            jobs,
            phases: options.phases(),
            run_for: options.step_time,
            seed: options.seed.wrapping_add(self.runs.len() as u64),
            slo: options.slo,
            per_second: false,
            metrics: None,
        };
        self.backend.begin_step();
        let measured = drive(plan, &mut self.backend, &self.label, &self.description);
        let error = match measured.error {
            Some(e) => Some(e),
            None => self.backend.quiesce().err(),
        };
        self.runs.push(measured.report.clone());
        Ok((measured.report, error))
    }

    /// A real target's read rate: what closed-loop reads with 32 outstanding
    /// and no writes reached, bytes per second.
    fn calibrate(&mut self, options: &Options) -> Result<f64, String> {
        let job = default_reads(self.capacity, None, CALIBRATION_IODEPTH);
        let label = "calibration".to_string();
        let (run, error) = self.run(options, &options.base_spec, label, vec![job])?;
        if let Some(e) = error {
            return Err(e);
        }
        if run.interrupted {
            return Err("interrupted in the calibration step".into());
        }
        let mbps = measured(&run)?.read.mbps;
        if mbps <= 0.0 {
            return Err("the calibration step read nothing; give --read-rate".into());
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
    fn writer(&mut self, options: &Options, rate: u64) -> Job {
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
            trim: false,
            sequential: true,
            block_min: bs,
            block_max: bs,
            align: bs,
            offset: self.cursor,
            size: end - self.cursor,
            arrival: Arrival {
                iops: None,
                bytes_per_s: open_loop.then_some(rate as f64),
                poisson: false,
                iodepth: WRITE_IODEPTH,
                thinktime: Nanos::ZERO,
            },
            trim_ahead: None,
            hint: LifetimeHint::None,
            backpressure: None,
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
        options: &Options,
        rate: Option<u64>,
    ) -> Result<(Step, Option<String>), String> {
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
    fn ramp(mut self, options: &Options) -> Result<Outcome, String> {
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
            (None, None) if run_cmd::stop_requested() => report.stopped = INTERRUPTED.into(),
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
        options: &Options,
        bound: f64,
        report: &mut ProbeReport,
    ) -> Result<Option<String>, String> {
        let mut misses = 0;
        for &rate in &options.rates {
            let (mut step, error) = self.step(options, Some(rate))?;
            let meets = !step.interrupted && step.read_ops > 0 && step.value_ms <= bound;
            step.meets = Some(meets);
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
            if interrupted {
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

/// Why stepping ended when Ctrl-C ended it.
const INTERRUPTED: &str = "interrupted (Ctrl-C)";

fn measured(run: &RunReport) -> Result<&PhaseReport, String> {
    run.phase("measure")
        .ok_or_else(|| "a step without its measure phase".to_string())
}

/// A step's figures; `meets` is left to the caller.
fn figures(
    run: &RunReport,
    options: &Options,
    rate: Option<u64>,
    spec: String,
) -> Result<Step, String> {
    let p = measured(run)?;
    let value_ms = sweep_cmd::point(run, &options.objective, "measure", "measure")?.value_ms;
    let ms = |us: f64| us / 1e3;
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

/// What the table alone would not say.
fn notes(report: &ProbeReport, options: &Options) -> Vec<String> {
    let mut notes = Vec::new();
    let Some(best) = report.best else {
        return notes;
    };
    if let Some(miss) = report.steps[..best]
        .iter()
        .find(|s| s.meets == Some(false) && !s.interrupted)
    {
        notes.push(format!(
            "{:.1} MB/s missed the objective below the best: the boundary is noisy there; a longer --step-time measures it better",
            miss.asked_mbps().unwrap_or(0.0)
        ));
    }
    let last = options.rates.len() - 1;
    if best == last {
        notes.push(format!(
            "the highest rate tried, {:.1} MB/s, met the objective: the limit may be higher (raise --max)",
            report.steps[best].asked_mbps().unwrap_or(0.0)
        ));
    }
    if options.throttle == Throttle::Scheduler {
        let step = &report.steps[best];
        let asked = step.asked_mbps().unwrap_or(0.0);
        if step.write_mbps < 0.9 * asked {
            notes.push(format!(
                "at the best step the drive wrote {:.1} of the {asked:.1} MB/s allowed: the drive, not the limit, held the writes",
                step.write_mbps
            ));
        }
    }
    notes
}

/// Row `i` of the table: the baseline, then the steps from 1.
fn step_name(i: usize) -> String {
    if i == 0 {
        "base".into()
    } else {
        i.to_string()
    }
}

/// The terminal table.
fn table(report: &ProbeReport) -> String {
    let mut out = format!(
        "probe of {}: {}; {}\n",
        report.target, report.reads, report.writes
    );
    out += &format!(
        "steps of {} s measured after {} s; objective: {}",
        report.step_s, report.settle_s, report.objective
    );
    out += &match report.bound_ms {
        Some(b) => format!(" (bound {b:.2} ms)\n"),
        None => "\n".into(),
    };
    out += &format!(
        "  {:>4}  {:>10}  {:>10}  {:>9}  {:>8}  {:>8}  {:>10}  {:>6}  {}\n",
        "step",
        "asked MB/s",
        "write MB/s",
        "read MB/s",
        "read p50",
        "read p99",
        "read p99.9",
        ">SLO",
        "meets"
    );
    let rows = std::iter::once(&report.baseline).chain(&report.steps);
    for (i, s) in rows.enumerate() {
        let asked = s
            .asked_mbps()
            .map_or("-".to_string(), |a| format!("{a:.1}"));
        let mark = match (s.meets, s.interrupted) {
            (_, true) => "interrupted",
            (None, _) => "baseline",
            (Some(true), _) if report.best == Some(i - 1) => "yes  <- best",
            (Some(true), _) => "yes",
            (Some(false), _) => "no",
        };
        out += &format!(
            "  {:>4}  {asked:>10}  {:>10.1}  {:>9.1}  {:>8.2}  {:>8.2}  {:>10.2}  {:>6}  {mark}\n",
            step_name(i),
            s.write_mbps,
            s.read_mbps,
            s.read_p50_ms,
            s.read_p99_ms,
            s.read_p999_ms,
            s.read_slo_violations
        );
    }
    out += &format!("stopped: {}\n", report.stopped);
    out += &match report.best.map(|i| &report.steps[i]) {
        Some(s) => {
            let how = match report.throttle {
                Throttle::Scheduler => "; the setting",
                Throttle::Writer => ", issued by the writer through",
            };
            format!(
                "highest write rate meeting the objective: {:.1} MB/s asked ({:.1} written){how} {}\n",
                s.asked_mbps().unwrap_or(0.0),
                s.write_mbps,
                s.spec
            )
        }
        None => "no write rate met the objective\n".into(),
    };
    for note in &report.notes {
        out += &format!("note: {note}\n");
    }
    for (i, s) in std::iter::once(&report.baseline)
        .chain(&report.steps)
        .enumerate()
    {
        for note in &s.notes {
            out += &format!("note: step {}: {note}\n", step_name(i));
        }
    }
    out
}

/// The steps as CSV, one line each, the baseline first.
fn csv(report: &ProbeReport) -> String {
    let mut out = String::from(
        "step,asked_mbps,spec,write_mbps,read_mbps,read_p50_ms,read_p99_ms,read_p999_ms,read_slo_violations,write_p99_ms,value_ms,meets\n",
    );
    for (i, s) in std::iter::once(&report.baseline)
        .chain(&report.steps)
        .enumerate()
    {
        let asked = s.asked_mbps().map_or(String::new(), |a| format!("{a:.3}"));
        let meets = s.meets.map_or(String::new(), |m| m.to_string());
        out += &format!(
            "{i},{asked},\"{}\",{:.3},{:.3},{:.3},{:.3},{:.3},{},{:.3},{:.3},{meets}\n",
            s.spec,
            s.write_mbps,
            s.read_mbps,
            s.read_p50_ms,
            s.read_p99_ms,
            s.read_p999_ms,
            s.read_slo_violations,
            s.write_p99_ms,
            s.value_ms
        );
    }
    out
}

/// probe.csv, probe.svg, probe.json and each run's one-second series.
fn write_out(dir: &Path, outcome: &Outcome, metric: &str) -> Result<(), String> {
    let mut written =
        iosteer_sim::chart::write_outputs(dir, &outcome.runs).map_err(|e| format!("--out {e}"))?;
    let failed = |path: &Path, e: &dyn std::fmt::Display| format!("--out {}: {e}", path.display());
    let path = dir.join("probe.csv");
    std::fs::write(&path, csv(&outcome.report)).map_err(|e| failed(&path, &e))?;
    written.push(path);
    let path = dir.join("probe.json");
    let json = serde_json::to_string_pretty(&outcome.report).map_err(|e| e.to_string())?;
    std::fs::write(&path, json).map_err(|e| failed(&path, &e))?;
    written.push(path);
    let path = dir.join("probe.svg");
    chart(&path, &outcome.report, metric).map_err(|e| failed(&path, &e))?;
    written.push(path);
    eprintln!(
        "iosteer: wrote {} files to {}",
        written.len(),
        dir.display()
    );
    Ok(())
}

const BLUE: RGBColor = RGBColor(31, 119, 180);
const RED: RGBColor = RGBColor(214, 39, 40);
const GREEN: RGBColor = RGBColor(44, 160, 44);

/// Write MB/s against the objective's read metric, step by step (each point
/// labelled with the rate asked), with the bound dashed and the best ringed.
/// Text is SVG `<text>`, so no font is needed to draw it.
fn chart(
    path: &Path,
    report: &ProbeReport,
    metric: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (900, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let steps: Vec<&Step> = std::iter::once(&report.baseline)
        .chain(&report.steps)
        .collect();
    let bound = report.bound_ms.unwrap_or(f64::NAN);
    let x_max = steps.iter().map(|s| s.write_mbps).fold(1.0, f64::max) * 1.15;
    let values = steps.iter().map(|s| s.value_ms).chain([bound]);
    let finite = values.filter(|v| v.is_finite() && *v > 0.0);
    let (lo, hi) = finite.fold((f64::MAX, 0.01f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = (lo.min(hi) * 0.6, hi * 2.0);
    let mut c = ChartBuilder::on(&root)
        .caption(
            format!(
                "probe of {}: write MB/s against read {metric}",
                report.target
            ),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..x_max, (lo..hi).log_scale())?;
    c.configure_mesh()
        .x_desc("write MB/s written in the measured part of each step")
        .y_desc(format!("read {metric} (ms)"))
        .draw()?;
    let points: Vec<(f64, f64)> = steps
        .iter()
        .map(|s| (s.write_mbps, s.value_ms.max(lo)))
        .collect();
    c.draw_series(LineSeries::new(points.clone(), BLUE.stroke_width(1)))?;
    c.draw_series(steps.iter().zip(&points).map(|(s, p)| {
        let color = if s.meets == Some(false) { RED } else { BLUE };
        Circle::new(*p, 4, color.filled())
    }))?
    .label(format!("read {metric} (red: misses the objective)"))
    .legend(|(x, y)| Circle::new((x + 9, y), 4, BLUE.filled()));
    c.draw_series(steps.iter().zip(&points).map(|(s, p)| {
        let text = s
            .asked_mbps()
            .map_or("baseline".to_string(), |a| format!("{a:.1}"));
        Text::new(text, (p.0, p.1 * 1.12), ("sans-serif", 11))
    }))?;
    if bound.is_finite() {
        let style = ShapeStyle::from(&BLACK.mix(0.6)).stroke_width(1);
        c.draw_series(DashedLineSeries::new(
            vec![(0.0, bound), (x_max, bound)],
            6,
            4,
            style,
        ))?
        .label(format!("objective: {}", report.objective))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
    }
    if let Some(i) = report.best {
        let s = &report.steps[i];
        let at = (s.write_mbps, s.value_ms.max(lo));
        c.draw_series(std::iter::once(Circle::new(at, 9, GREEN.stroke_width(2))))?
            .label(format!(
                "best: {:.1} MB/s asked",
                s.asked_mbps().unwrap_or(0.0)
            ))
            .legend(|(x, y)| Circle::new((x + 9, y), 6, GREEN.stroke_width(2)));
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use iosteer_device::DeviceConfig;
    use iosteer_sched::{Op, Request};

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        probe: ProbeArgs,
    }

    fn options(args: &[&str]) -> Result<Options, String> {
        let mut argv = vec!["probe", "--emulate", "diskSim-slc"];
        argv.extend(args);
        Options::check(&Cli::parse_from(argv).probe)
    }

    #[test]
    fn rates_come_from_a_ramp_or_an_increasing_list() {
        let ramp = options(&["--start", "10m", "--step", "10m", "--max", "35m"]).unwrap();
        assert_eq!(ramp.rates, [10 << 20, 20 << 20, 30 << 20]);
        assert_eq!(ramp.rates.len(), 3, "the ramp stops at --max");
        let list = options(&["--rates", "1m, 4m,16m"]).unwrap();
        assert_eq!(list.rates, [1 << 20, 4 << 20, 16 << 20]);
        for bad in [
            &["--rates", "4m,4m"][..],
            &["--rates", "0"],
            &["--start", "10m", "--max", "5m"],
            &["--step", "1", "--max", "1g"],
        ] {
            assert!(options(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_scheduler_throttle_sets_netflixs_bandwidth_limit_in_kb_per_s() {
        let o = options(&["--sched", "netflix:read_bias=4"]).unwrap();
        assert_eq!(o.spec(None), "netflix:read_bias=4");
        assert_eq!(
            o.spec(Some(5 << 20)),
            "netflix:read_bias=4,write.limiter=bandwidth,write.max=5243,write.current=5243"
        );
        let writer = options(&["--throttle", "writer"]).unwrap();
        assert_eq!(writer.spec(Some(5 << 20)), "fifo");
        let err = options(&["--sched", "deadline"]).err().unwrap();
        assert!(err.contains("--throttle writer"), "{err}");
    }

    /// Sends one read now, on the clock of a step that began at `step`, and
    /// returns how long it took.
    fn one_read(drive: &mut Continuous<Emulated>, step: Instant) -> Nanos {
        let clock = || Nanos(step.elapsed().as_nanos() as u64);
        let sent = clock();
        let read = Request::new(1, Op::Read, 0, 4096, sent);
        drive.submit(Command::single(read, sent), sent).unwrap();
        let mut finished = Vec::new();
        while finished.is_empty() {
            drive.wait(clock(), Duration::from_millis(5)).unwrap();
            drive.reap(clock(), &mut finished);
        }
        Nanos(finished[0].at.0.saturating_sub(sent.0))
    }

    #[test]
    fn each_step_counts_from_zero_while_the_drive_keeps_its_own_clock() {
        let config = DeviceConfig::preset("consumer-sata").unwrap();
        let mut drive = Continuous::new(Emulated::new(Device::new(config).unwrap()));
        // A first step whose read comes 30 ms in, then a second step whose
        // read comes at once: on a drive clock that went back to zero, the
        // second read would wait for the drive's time to reach 30 ms again.
        let step = Instant::now();
        drive.begin_step();
        std::thread::sleep(Duration::from_millis(30));
        let first = one_read(&mut drive, step);
        let step = Instant::now();
        drive.begin_step();
        let second = one_read(&mut drive, step);
        for took in [first, second] {
            assert!(took < Nanos::from_millis(5), "{took:?}");
        }
        drive.quiesce().unwrap();
    }

    #[test]
    fn the_writer_goes_beside_the_reads_when_the_target_has_room() {
        let config = DeviceConfig::preset("diskSim-slc").unwrap();
        let capacity = 4u64 << 30;
        let drive = Emulated::new(Device::new(config).unwrap());
        let mut probe = Probe::new(drive, "t".into(), "t".into(), capacity);
        let options = options(&["--write-bs", "1m"]).unwrap();
        let reads_first_gib = default_reads(1 << 30, Some(1e6), 16);
        probe.set_reads(vec![reads_first_gib], "r".into(), 1 << 20);
        assert_eq!(probe.writes, (1 << 30)..capacity);
        let JobKind::Synthetic(w) = probe.writer(&options, 10 << 20).kind else {
            panic!("a synthetic writer");
        };
        assert_eq!((w.offset, w.offset + w.size), (1 << 30, capacity));
        assert!(probe.write_span().contains("beside the reads"));
        // Reads over the whole target leave no room: the writer shares it.
        let everywhere = default_reads(capacity, Some(1e6), 16);
        probe.set_reads(vec![everywhere], "r".into(), 1 << 20);
        assert_eq!(probe.writes, 0..capacity);
    }
}
