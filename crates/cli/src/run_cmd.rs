//! `iosteer run`: a fio job file against a real file or block device, through
//! a scheduler policy and the io_uring engine, reported like a simulation.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use iosteer_engine::runner::{self, Observer, RunLimits, Source};
use iosteer_engine::{Engine, EngineConfig, EngineError, OpenOptionsSpec, Target};
use iosteer_sched::{policy, Nanos, Op, Outcome, Request, Scheduler};
use iosteer_sim::fio::{size_value, time_value};
use iosteer_sim::report::{table, Phase, Recorder, SimReport, SimSummary, VerifyReport};
use iosteer_sim::workload::{Generator, Job, JobKind};

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// File or block device to run against.
    #[arg(long, value_name = "PATH")]
    pub target: PathBuf,
    /// fio job file (the subset `iosteer sim --job` accepts).
    #[arg(long, value_name = "FILE")]
    pub job: String,
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
}

/// Records every request and prints a gstat-like line each second.
struct Watch {
    recorder: Recorder,
    /// This second's reads and writes: (ops, bytes, latencies in µs).
    second: [(u64, u64, Vec<u64>); 2],
    errors: u64,
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

    fn second(&mut self, now: Nanos, sched: &dyn Scheduler, engine: &Engine) {
        let stats = sched.stats();
        let queued = [Op::Read, Op::Write, Op::Trim].map(|op| stats.class(op).queued);
        self.recorder.sample(now, queued, engine.in_flight(), 0, 0);
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
            engine.in_flight()
        );
        eprintln!("{line}");
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

fn writes(jobs: &[Job]) -> bool {
    jobs.iter().any(|j| match &j.kind {
        JobKind::Synthetic(s) => s.trim || s.read_percent < 100,
        JobKind::Trace(records) => records.iter().any(|r| r.op != Op::Read),
    })
}

fn largest_io(jobs: &[Job]) -> u64 {
    jobs.iter()
        .map(|j| match &j.kind {
            JobKind::Synthetic(s) => s.block_max,
            JobKind::Trace(records) => records.iter().map(|r| r.len).max().unwrap_or(0),
        })
        .max()
        .unwrap_or(0)
}

pub fn run(args: RunArgs) -> Result<(), String> {
    let mut sched =
        policy::build(&args.sched).map_err(|e| format!("--sched {}: {e}", args.sched))?;
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
    let text =
        std::fs::read_to_string(&args.job).map_err(|e| format!("--job {}: {e}", args.job))?;
    // Parse once against the largest size the target may have, then check
    // the jobs fit the target as opened.
    let provisional = size.unwrap_or(u64::MAX / 4);
    let jobs = iosteer_sim::fio::parse(&text, &args.job, provisional).map_err(|e| e.to_string())?;
    if jobs.is_empty() {
        return Err(format!("--job {}: the job file has no job", args.job));
    }
    let spec = OpenOptionsSpec {
        size,
        writes: writes(&jobs),
        force: args.force,
        direct: !args.buffered,
    };
    let target = Target::open(&args.target, &spec).map_err(|e| e.to_string())?;
    // Again against the target's real size, for sizes given as percentages.
    let jobs = iosteer_sim::fio::parse(&text, &args.job, target.size).map_err(|e| e.to_string())?;
    let needed = jobs.iter().map(Job::end_offset).max().unwrap_or(0);
    target.check_fits(needed).map_err(|e| e.to_string())?;
    let label = target.path.display().to_string();
    let config = EngineConfig {
        queue_depth: args.queue_depth,
        max_io_bytes: largest_io(&jobs).max(4096) as usize,
        verify: args.verify,
    };
    let mut engine = Engine::new(target, &config).map_err(|e| match e {
        EngineError::Unsupported(io) => format!(
            "io_uring is not available here ({io}); a container may need its seccomp profile to allow io_uring_setup"
        ),
        other => other.to_string(),
    })?;
    let run_for = duration
        .or_else(|| job_end(&jobs))
        .unwrap_or(Nanos::from_secs(10));
    let drain = Nanos::from_secs(5);
    let mut sources: Vec<Box<dyn Source>> = jobs
        .into_iter()
        .enumerate()
        .map(|(i, job)| Box::new(JobSource(Generator::new(job, i as u32, args.seed))) as _)
        .collect();
    let phases = vec![Phase {
        name: "run".into(),
        start: Nanos::ZERO,
        end: run_for + drain,
    }];
    let mut watch = Watch {
        recorder: Recorder::new(phases, Nanos((args.slo_ms * 1e6) as u64)),
        second: Default::default(),
        errors: 0,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
    eprintln!(
        "iosteer: running {} on {} ({}, queue depth {}) for {:.1} s...",
        args.sched,
        label,
        if engine.target().direct {
            "O_DIRECT"
        } else {
            "buffered"
        },
        args.queue_depth,
        run_for.as_secs_f64()
    );
    let limits = RunLimits {
        duration: run_for,
        drain,
    };
    let started = std::time::Instant::now();
    let outcome = runner::run(
        &mut engine,
        sched.as_mut(),
        &mut sources,
        limits,
        &mut watch,
        &|| stop.load(Ordering::SeqCst),
    );
    let wall = started.elapsed().as_secs_f64();
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
    let mut mismatches = 0;
    let verify = engine.verifier().map(|v| {
        for (offset, problem) in &v.first {
            eprintln!("iosteer: verify: block at offset {offset}: {problem}");
        }
        mismatches = v.mismatches;
        VerifyReport {
            blocks: v.checked,
            mismatches: v.mismatches,
        }
    });
    let mut report = watch
        .recorder
        .finish(&args.sched, &label, end, requests, unfinished, notes);
    report.verify = verify;
    report.interrupted = interrupted;
    let runs = [report];
    write_reports(&args, &runs, requests, wall)?;
    if let Err(e) = outcome {
        return Err(e.to_string());
    }
    if mismatches > 0 {
        return Err(format!(
            "verify: {mismatches} blocks did not read back as written"
        ));
    }
    Ok(())
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
