//! `iosteer run`: a fio job file against a real file or block device, through
//! a scheduler policy and the io_uring engine, reported like a simulation.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

use iosteer_engine::emulate::Emulated;
use iosteer_engine::engine::Reap;
use iosteer_engine::metrics::{self, MetricsServer, RunGauges};
use iosteer_engine::runner::{self, Backend, Observer, RunLimits, Source};
use iosteer_engine::{Engine, EngineConfig, EngineError, OpenOptionsSpec, Target};
use iosteer_sched::{policy, Nanos, Op, Outcome, Request, Scheduler};
use iosteer_sim::fio::{size_value, time_value};
use iosteer_sim::report::{
    table, CpuReport, DeviceReport, Phase, Recorder, SimReport, SimSummary, VerifyReport,
};
use iosteer_sim::scenario::{scenario, SCENARIOS};
use iosteer_sim::Simulation;

use crate::device_cmd::load_device;
use iosteer_sim::workload::{Generator, Job, JobKind};

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// File or block device to run against.
    #[arg(long, value_name = "PATH", required_unless_present = "emulate")]
    pub target: Option<PathBuf>,
    /// Run against the simulator's drive model in real time instead of a
    /// target: a preset (consumer-sata, enterprise-nvme, diskSim-slc) or a
    /// drive TOML file, aged as `iosteer sim` ages it.
    #[arg(long, value_name = "PRESET|FILE", conflicts_with_all = ["target", "size", "force", "buffered", "verify", "iopoll"])]
    pub emulate: Option<String>,
    /// fio job file (the subset `iosteer sim --job` accepts).
    #[arg(long, value_name = "FILE", required_unless_present = "scenario")]
    pub job: Option<String>,
    /// With --emulate: one of `iosteer sim`'s built-in scenarios instead of
    /// a job file (its jobs, phases and drive settings), for example `quick`.
    #[arg(
        long,
        value_name = "NAME",
        requires = "emulate",
        conflicts_with = "job"
    )]
    pub scenario: Option<String>,
    /// Scheduler spec `name[:key=value,...]`.
    #[arg(long = "sched", value_name = "SPEC", default_value = "fifo")]
    pub sched: String,
    /// How long jobs issue (fio time syntax: 10s, 2m) [default: the jobs'
    /// runtime, or 10 s].
    #[arg(long, value_name = "TIME")]
    pub duration: Option<String>,
    /// Create the target file, or grow it, to this size (fio syntax: 1g).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Allow writing to a block device (its data is destroyed).
    #[arg(long)]
    pub force: bool,
    /// Commands in the target at once.
    #[arg(long, default_value_t = 32)]
    pub queue_depth: u32,
    /// Use the page cache (no O_DIRECT).
    #[arg(long)]
    pub buffered: bool,
    /// Stamp every written block and check every read one.
    #[arg(long)]
    pub verify: bool,
    /// How completions are reaped: interrupt (sleep until one arrives), poll
    /// (spin on the completion ring: a whole core), hybrid (sleep half the
    /// mean completion time, then spin).
    #[arg(long, value_name = "MODE", default_value = "interrupt", value_parser = clap::builder::PossibleValuesParser::new(Reap::NAMES))]
    pub reap: String,
    /// Poll the driver for completions (io_uring IOPOLL): O_DIRECT reads and
    /// writes only; falls back, saying why, where the target cannot.
    #[arg(long)]
    pub iopoll: bool,
    /// Seed of the jobs' random choices.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Reads slower than this count as SLO violations.
    #[arg(long, default_value_t = 35.0)]
    pub slo_ms: f64,
    /// Print the JSON report (the simulator's schema) on stdout.
    #[arg(long)]
    pub json: bool,
    /// Write the one-second CSV series, SVG charts and report.json into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<String>,
    /// Serve Prometheus metrics at http://ADDR/metrics while the run lasts
    /// (for example 127.0.0.1:9464), updated every second.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,
}

/// A fio job as a request source of the engine's loop.
struct JobSource(Generator);

impl Source for JobSource {
    fn next_at(&self) -> Option<Nanos> {
        self.0.next_at()
    }

    fn issue(&mut self, now: Nanos, next_id: &mut u64, out: &mut Vec<Request>) {
        self.0.issue(now, next_id, out);
    }

    fn completed(&mut self, at: Nanos) {
        self.0.completed(at);
    }

    /// Moved its size (or `number_ios`): fio's end of an untimed job.
    fn done(&self) -> bool {
        self.0.done_issuing() && self.0.limit_reached()
    }
}

/// Records every request and prints a gstat-like line each second.
struct Watch {
    recorder: Recorder,
    /// This second's reads and writes: (ops, bytes, latencies in µs).
    second: [(u64, u64, Vec<u64>); 2],
    errors: u64,
    /// Print the line (else only record).
    print: bool,
    /// Where to publish the metrics each second, and the spec they name.
    metrics: Option<(MetricsServer, String)>,
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i] as f64 / 1e3
}

impl Observer for Watch {
    fn request_done(&mut self, request: &Request, outcome: Outcome, at: Nanos) {
        let latency = at - request.submitted;
        self.recorder
            .request_done(request.op, request.len.0, latency, at);
        if outcome == Outcome::Error {
            self.errors += 1;
        }
        let class = match request.op {
            Op::Read => 0,
            Op::Write => 1,
            _ => return,
        };
        let s = &mut self.second[class];
        s.0 += 1;
        s.1 += request.len.0;
        s.2.push(latency.0 / 1000);
    }

    fn second(&mut self, now: Nanos, sched: &dyn Scheduler, backend: &dyn Backend) {
        let stats = sched.stats();
        let queued = [Op::Read, Op::Write, Op::Trim].map(|op| stats.class(op).queued);
        let (free, gc) = backend.drive_gauges().unwrap_or((0, 0));
        self.recorder
            .sample(now, queued, backend.view().in_flight, free, gc);
        let mut line = format!("{:>5.0}s", now.as_secs_f64());
        for (name, s) in ["read", "write"].iter().zip(self.second.iter_mut()) {
            s.2.sort_unstable();
            line += &format!(
                " | {name} {:>7.1} MB/s {:>6} IOPS p50 {:>7.2} p99 {:>7.2} ms",
                s.1 as f64 / 1e6,
                s.0,
                percentile(&s.2, 0.5),
                percentile(&s.2, 0.99)
            );
            *s = (0, 0, Vec::new());
        }
        line += &format!(
            " | queued {}/{}/{} in device {}",
            queued[0],
            queued[1],
            queued[2],
            backend.view().in_flight
        );
        if let Some(limit) = sched.write_limit() {
            line += &format!(" | write limit {} {}", limit.value, limit.unit);
        }
        if self.print {
            eprintln!("{line}");
        }
        if let Some((server, spec)) = &self.metrics {
            let run = RunGauges { now, spec };
            server.publish(metrics::render(sched, backend, &run));
        }
    }
}

fn job_end(jobs: &[Job]) -> Option<Nanos> {
    jobs.iter()
        .filter_map(|j| match (&j.kind, j.stop) {
            (_, Some(stop)) => Some(stop),
            (JobKind::Trace(records), None) => Some(j.start + records.last()?.at),
            _ => None,
        })
        .max()
}

pub(crate) fn writes(jobs: &[Job]) -> bool {
    jobs.iter().any(|j| match &j.kind {
        JobKind::Synthetic(s) => s.trim || s.read_percent < 100,
        JobKind::Trace(records) => records.iter().any(|r| r.op != Op::Read),
    })
}

fn trims(job: &Job) -> bool {
    match &job.kind {
        JobKind::Synthetic(s) => s.trim || s.trim_ahead.is_some(),
        JobKind::Trace(records) => records.iter().any(|r| r.op == Op::Trim),
    }
}

pub(crate) fn largest_io(jobs: &[Job]) -> u64 {
    jobs.iter()
        .map(|j| match &j.kind {
            JobKind::Synthetic(s) => s.block_max,
            JobKind::Trace(records) => records.iter().map(|r| r.len).max().unwrap_or(0),
        })
        .max()
        .unwrap_or(0)
}

/// The job file and options every run needs, checked.
struct Setup {
    sched: Box<dyn Scheduler>,
    /// The job file's name and text (none with --scenario).
    job: Option<(String, String)>,
    metrics: Option<MetricsServer>,
    size: Option<u64>,
    duration: Option<Nanos>,
}

fn setup(args: &RunArgs) -> Result<Setup, String> {
    let sched = policy::build(&args.sched).map_err(|e| format!("--sched {}: {e}", args.sched))?;
    let size = args
        .size
        .as_deref()
        .map(|s| {
            size_value(s).ok_or_else(|| format!("--size {s}: expected a size like 1g or 512m"))
        })
        .transpose()?;
    let duration = args
        .duration
        .as_deref()
        .map(|d| {
            time_value(d, 1_000_000_000)
                .ok_or_else(|| format!("--duration {d}: expected a time like 10s or 2m"))
        })
        .transpose()?;
    if !(args.slo_ms.is_finite() && args.slo_ms > 0.0) {
        return Err(format!(
            "--slo-ms {}: expected a positive number",
            args.slo_ms
        ));
    }
    let job = match &args.job {
        Some(file) => {
            let text = std::fs::read_to_string(file).map_err(|e| format!("--job {file}: {e}"))?;
            Some((file.clone(), text))
        }
        None => None,
    };
    // Listen before anything slow (aging a drive), so a bad address fails fast.
    let metrics = args
        .metrics
        .as_deref()
        .map(|addr| MetricsServer::start(addr).map_err(|e| format!("--metrics: {e}")))
        .transpose()?;
    if let Some(server) = &metrics {
        eprintln!(
            "iosteer: serving metrics at http://{}/metrics",
            server.local_addr()
        );
    }
    Ok(Setup {
        sched,
        job,
        metrics,
        size,
        duration,
    })
}

/// Parses the job file against a target of `size` bytes.
fn parse_jobs(setup: &Setup, size: u64) -> Result<Vec<Job>, String> {
    let Some((file, text)) = &setup.job else {
        return Err("give --job FILE (or, with --emulate, --scenario NAME)".into());
    };
    let parsed = iosteer_sim::fio::parse_file(text, file, size).map_err(|e| e.to_string())?;
    let jobs = parsed.jobs;
    if jobs.is_empty() {
        return Err(format!("--job {file}: the job file has no job"));
    }
    // The real-time runner starts every job at its startdelay; jobs that
    // wait for others are the simulator's for now.
    if let Some(job) = jobs.iter().find(|j| !j.shape.after.is_empty()) {
        return Err(format!(
            "--job {file}: job {} waits for earlier jobs (stonewall or wait_for), which `iosteer run` does not do yet; `iosteer sim --job` does",
            job.name
        ));
    }
    for note in &parsed.notes {
        eprintln!("iosteer: {file}: {note}");
    }
    Ok(jobs)
}

pub fn run(args: RunArgs) -> Result<(), String> {
    let setup = setup(&args)?;
    match (&args.emulate, &args.target) {
        (Some(drive), _) => run_emulated(&args, setup, drive),
        (None, Some(path)) => run_target(&args, setup, path),
        (None, None) => Err("give --target PATH or --emulate PRESET".into()),
    }
}

fn run_target(args: &RunArgs, setup: Setup, path: &std::path::Path) -> Result<(), String> {
    // Parse once against the largest size the target may have, then check
    // the jobs fit the target as opened.
    let provisional = setup.size.unwrap_or(u64::MAX / 4);
    let jobs = parse_jobs(&setup, provisional)?;
    let spec = OpenOptionsSpec {
        size: setup.size,
        writes: writes(&jobs),
        force: args.force,
        direct: !args.buffered,
    };
    let target = Target::open(path, &spec).map_err(|e| e.to_string())?;
    // Again against the target's real size, for sizes given as percentages.
    let jobs = parse_jobs(&setup, target.size)?;
    let needed = jobs.iter().map(Job::end_offset).max().unwrap_or(0);
    target.check_fits(needed).map_err(|e| e.to_string())?;
    if args.iopoll && jobs.iter().any(trims) {
        return Err(
            "--iopoll: an IOPOLL ring takes only reads and writes, and the job file trims".into(),
        );
    }
    let config = EngineConfig {
        queue_depth: args.queue_depth,
        max_io_bytes: largest_io(&jobs).max(4096) as usize,
        verify: args.verify,
        reap: Reap::from_name(&args.reap).expect("clap checked the name"),
        iopoll: args.iopoll,
        keep_read_data: false,
    };
    let (mut engine, label, mut description) = open_engine(target, &config)?;
    description += &format!(", reaping by {}", args.reap);
    if engine.iopoll() {
        description += " with IOPOLL";
    }
    if let Some(why) = engine.iopoll_refused() {
        eprintln!("iosteer: --iopoll: {why}; using an ordinary ring");
    }
    let plan = Plan::of(args, setup, jobs, None);
    let mut measured = drive(plan, &mut engine, &label, &description);
    let mut mismatches = 0;
    if let Some(v) = engine.verifier() {
        for (offset, problem) in &v.first {
            eprintln!("iosteer: verify: block at offset {offset}: {problem}");
        }
        mismatches = v.mismatches;
        measured.report.verify = Some(VerifyReport {
            blocks: v.checked,
            mismatches: v.mismatches,
        });
    }
    measured.write(args)?;
    if mismatches > 0 {
        return Err(format!(
            "verify: {mismatches} blocks did not read back as written"
        ));
    }
    Ok(())
}

fn run_emulated(args: &RunArgs, setup: Setup, drive_name: &str) -> Result<(), String> {
    let config = load_device(drive_name)?;
    let sim = match &args.scenario {
        Some(name) => scenario(name, config, args.seed).ok_or_else(|| {
            format!(
                "--scenario {name}: no such scenario; choose one of {}",
                SCENARIOS
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?,
        None => {
            let jobs = parse_jobs(&setup, config.logical_bytes())?;
            let mut sim = Simulation::of_jobs(config, jobs, "run", args.seed, DRAIN);
            sim.phases = phases_of(&sim.jobs, run_length(&setup, &sim.jobs), DRAIN);
            sim
        }
    };
    sim.validate().map_err(|e| e.to_string())?;
    eprintln!("iosteer: aging the emulated {} drive...", sim.device.name);
    let aged = sim.aged_device().map_err(|e| e.to_string())?;
    let mut emulated = Emulated::new(aged);
    let label = format!("emulated {}", sim.device.name);
    let description = format!(
        "the emulated {} drive (real time, {} command slots)",
        sim.device.name,
        emulated.view().slots
    );
    let plan = Plan::of(args, setup, sim.jobs, Some(sim.phases));
    let mut measured = drive(plan, &mut emulated, &label, &description);
    measured.report.device_stats = Some(DeviceReport::from_stats(&emulated.device().stats()));
    measured.write(args)
}

/// Starts the engine on an opened target; also returns the target's label
/// and a description for the start-of-run line.
pub(crate) fn open_engine(
    target: Target,
    config: &EngineConfig,
) -> Result<(Engine, String, String), String> {
    let label = target.path.display().to_string();
    let engine = Engine::new(target, config).map_err(|e| match e {
        EngineError::Unsupported(io) => format!(
            "io_uring is not available here ({io}); a container may need its seccomp profile to allow io_uring_setup"
        ),
        other => other.to_string(),
    })?;
    let how = if engine.target().direct {
        "O_DIRECT"
    } else {
        "buffered"
    };
    let description = format!("{label} ({how}, queue depth {})", config.queue_depth);
    Ok((engine, label, description))
}

/// One run to drive: the scheduler, the jobs and how they are measured.
pub(crate) struct Plan {
    pub sched: Box<dyn Scheduler>,
    /// The scheduler spec as given (the report's label).
    pub spec: String,
    pub jobs: Vec<Job>,
    pub phases: Vec<Phase>,
    /// How long the jobs issue; requests may finish for [`DRAIN`] more.
    pub run_for: Nanos,
    pub seed: u64,
    pub slo: Nanos,
    /// Print a gstat-like line per second on stderr.
    pub per_second: bool,
    /// Serves the run's metrics (`--metrics`).
    pub metrics: Option<MetricsServer>,
}

impl Plan {
    /// `iosteer run`'s plan; phases from the jobs unless given.
    fn of(args: &RunArgs, setup: Setup, jobs: Vec<Job>, phases: Option<Vec<Phase>>) -> Plan {
        let run_for = run_length(&setup, &jobs);
        Plan {
            sched: setup.sched,
            spec: args.sched.clone(),
            phases: phases.unwrap_or_else(|| phases_of(&jobs, run_for, DRAIN)),
            jobs,
            run_for,
            seed: args.seed,
            slo: Nanos((args.slo_ms * 1e6) as u64),
            per_second: true,
            metrics: setup.metrics,
        }
    }
}

/// What a run measured, and how it ended.
pub(crate) struct Measured {
    pub report: iosteer_sim::RunReport,
    pub requests: u64,
    pub wall: f64,
    pub error: Option<String>,
}

impl Measured {
    /// Writes the reports (even after an error: what was measured stands),
    /// then returns the run's error, if any.
    fn write(self, args: &RunArgs) -> Result<(), String> {
        let runs = [self.report];
        write_reports(args, &runs, self.requests, self.wall)?;
        match self.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Set by the first Ctrl-C (a second one exits at once).
static STOP: AtomicBool = AtomicBool::new(false);

/// Whether Ctrl-C asked the run to stop; installs the handler once.
pub(crate) fn stop_requested() -> bool {
    static HANDLER: Once = Once::new();
    HANDLER.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            if STOP.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
        });
    });
    STOP.load(Ordering::SeqCst)
}

/// Runs the plan's jobs through its scheduler into `backend` until they end,
/// the drain passes or Ctrl-C, recording every request.
pub(crate) fn drive<B: Backend>(
    mut plan: Plan,
    backend: &mut B,
    label: &str,
    description: &str,
) -> Measured {
    let run_for = plan.run_for;
    let mut sources: Vec<Box<dyn Source>> = plan
        .jobs
        .into_iter()
        .enumerate()
        .map(|(i, job)| {
            let generator = Generator::new(job, i as u32, plan.seed).keep_schedule();
            Box::new(JobSource(generator)) as _
        })
        .collect();
    let mut watch = Watch {
        recorder: Recorder::new(plan.phases, plan.slo),
        second: Default::default(),
        errors: 0,
        print: plan.per_second,
        metrics: plan.metrics.map(|server| (server, plan.spec.clone())),
    };
    stop_requested();
    eprintln!(
        "iosteer: running {} on {description} for {:.1} s...",
        plan.spec,
        run_for.as_secs_f64()
    );
    let limits = RunLimits {
        duration: run_for,
        drain: DRAIN,
    };
    let started = std::time::Instant::now();
    let outcome = runner::run(
        backend,
        plan.sched.as_mut(),
        &mut sources,
        limits,
        &mut watch,
        &stop_requested,
    );
    let wall = started.elapsed().as_secs_f64();
    let cpu = outcome
        .as_ref()
        .ok()
        .and_then(|s| s.cpu)
        .map(|(user, system)| CpuReport {
            user_s: round3(user),
            system_s: round3(system),
            cores: round3((user + system) / wall.max(1e-9)),
        });
    let mut notes = Vec::new();
    let (requests, unfinished, interrupted, end) = match &outcome {
        Ok(s) => (
            s.submitted,
            s.submitted - s.completed.min(s.submitted),
            s.interrupted,
            s.elapsed,
        ),
        Err(e) => {
            notes.push(format!("stopped by an error: {e}"));
            (0, 0, true, Nanos((wall * 1e9) as u64))
        }
    };
    if watch.errors > 0 {
        notes.push(format!("{} requests failed", watch.errors));
    }
    if let Ok(s) = &outcome {
        if s.late_wake_ups > 0 {
            notes.push(format!(
                "the loop woke more than {} ms late {} times (at worst {:.1} ms): the machine was busy, and arrivals and dispatches were late by as much",
                runner::LATE.0 / 1_000_000,
                s.late_wake_ups,
                s.latest_wake_up.as_secs_f64() * 1e3
            ));
        }
    }
    let mut report = watch
        .recorder
        .finish(&plan.spec, label, end, requests, unfinished, notes);
    report.interrupted = interrupted;
    report.cpu = cpu;
    Measured {
        report,
        requests,
        wall,
        error: outcome.err().map(|e| e.to_string()),
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// How long requests may still finish after the jobs stop.
pub(crate) const DRAIN: Nanos = Nanos::from_secs(5);

/// How long the jobs issue: `--duration`, else until the jobs stop, else 10 s.
fn run_length(setup: &Setup, jobs: &[Job]) -> Nanos {
    setup
        .duration
        .or_else(|| job_end(jobs))
        .unwrap_or(Nanos::from_secs(10))
}

/// Phases by the writers' window, as the simulator's scenarios name them:
/// `before` / `fill` / `after` when the writing jobs start late or stop
/// early, so a serve-then-fill job file reads like `iosteer sim`'s default
/// scenario; one `run` phase otherwise.
pub(crate) fn phases_of(jobs: &[Job], run_for: Nanos, drain: Nanos) -> Vec<Phase> {
    let end = run_for + drain;
    let writers = jobs.iter().filter(|j| writes(std::slice::from_ref(j)));
    let first = writers.clone().map(|j| j.start).min();
    let last = writers
        .map(|j| j.stop.unwrap_or(run_for).min(run_for))
        .max();
    let phase = |name: &str, start: Nanos, end: Nanos| Phase {
        name: name.into(),
        start,
        end,
    };
    match (first, last) {
        (Some(start), Some(stop)) if start < stop && (start > Nanos::ZERO || stop < run_for) => {
            let mut phases = vec![phase("before", Nanos::ZERO, start)];
            if stop < run_for {
                phases.push(phase("fill", start, stop));
                phases.push(phase("after", stop, end));
            } else {
                phases.push(phase("fill", start, end));
            }
            phases.retain(|p| p.start < p.end);
            phases
        }
        _ => vec![phase("run", Nanos::ZERO, end)],
    }
}

fn write_reports(
    args: &RunArgs,
    runs: &[iosteer_sim::RunReport],
    requests: u64,
    wall: f64,
) -> Result<(), String> {
    let report = SimReport {
        sim: SimSummary {
            requests,
            wall_s: (wall * 1000.0).round() / 1000.0,
            requests_per_s: (requests as f64 / wall.max(1e-9)).round(),
        },
        runs,
    };
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    if let Some(dir) = &args.out {
        let dir = std::path::Path::new(dir);
        let mut written =
            iosteer_sim::chart::write_outputs(dir, runs).map_err(|e| format!("--out {e}"))?;
        let path = dir.join("report.json");
        std::fs::write(&path, &json).map_err(|e| format!("--out {}: {e}", path.display()))?;
        written.push(path);
        eprintln!(
            "iosteer: wrote {} files to {}",
            written.len(),
            dir.display()
        );
    }
    if args.json {
        println!("{json}");
    } else {
        for run in runs {
            println!("{}", table(run));
            if let Some(c) = &run.cpu {
                println!(
                    "cpu: {:.2} s user, {:.2} s system ({:.2} cores)",
                    c.user_s, c.system_s, c.cores
                );
            }
            if let Some(v) = &run.verify {
                println!(
                    "verify: {} blocks checked, {} mismatches",
                    v.blocks, v.mismatches
                );
            }
        }
    }
    Ok(())
}
