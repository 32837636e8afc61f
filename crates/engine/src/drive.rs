//! The real-time run of workload jobs: what `iosteer run` and `iosteer
//! probe` drive through a scheduler into a [`Backend`] (the io_uring engine or
//! the emulated drive), recorded and reported like a simulation.
//!
//! A [`Plan`] holds the scheduler, the jobs, the phases and how long the jobs
//! issue; [`drive`] turns each job into a request [`Source`], runs the
//! real-time loop ([`runner::run`]) until the jobs end, the [`DRAIN`] passes
//! or the plan's `stop` says so, and returns what it [`Measured`]: the
//! simulator's [`RunReport`], with the CPU the run took and notes on what went
//! wrong (failed requests, a loop that woke late).

use iosteer_sched::{Nanos, Op, Outcome, Request, Scheduler};
use iosteer_workload::job_phases::{self, PhaseTracker};
use iosteer_workload::report::{round, CpuReport, Recorder, RunReport};
use iosteer_workload::series::gauges_of;
use iosteer_workload::workload::{Generator, Job, JobKind, Workload, TRACE_DRAIN};

use crate::engine::EngineError;
use crate::metrics::{self, MetricsServer, RunGauges};
use crate::runner::{self, Backend, Observer, RunLimits, Source};
use crate::target::Target;
use crate::{Engine, EngineConfig};

/// A fio job as a request source of the engine's loop.
pub(crate) struct JobSource(pub(crate) Generator);

impl Source for JobSource {
    fn next_at(&self) -> Option<Nanos> {
        self.0.next_at()
    }

    fn issue(&mut self, now: Nanos, next_id: &mut u64, out: &mut Vec<Request>) {
        self.0.issue(now, next_id, out);
    }

    fn completed(&mut self, request: &Request, at: Nanos) {
        self.0.completed(request, at);
    }

    /// Will issue nothing more: moved its size (fio's end of an untimed
    /// job), or past its stop.
    fn done(&self) -> bool {
        self.0.done_issuing()
    }

    fn waits_for(&self) -> &[usize] {
        self.0.waits_for()
    }

    fn ended(&self, now: Nanos) -> bool {
        self.0.ended(now)
    }

    fn release(&mut self, now: Nanos) {
        self.0.release(now)
    }

    fn stop_at(&self) -> Option<Nanos> {
        self.0.job().stop.filter(|_| self.0.waits_for().is_empty())
    }

    fn generator(&self) -> Option<&Generator> {
        Some(&self.0)
    }
}

/// Records every request and prints a gstat-like line each second.
struct Watch {
    recorder: Recorder,
    /// This second's reads and writes: (ops, bytes, latencies in µs).
    second: [(u64, u64, Vec<u64>); 2],
    failures: Failures,
    /// Print the line (else only record).
    print: bool,
    /// Where to publish the metrics each second, and the spec they name.
    metrics: Option<(MetricsServer, String)>,
    /// Phases that follow the jobs ([`Workload::job_phases`]).
    tracker: Option<PhaseTracker>,
}

/// Failed requests, by operation and error: how many, and the first.
#[derive(Default)]
struct Failures(Vec<Failure>);

struct Failure {
    op: Op,
    errno: Option<i32>,
    count: u64,
    first_job: u32,
    first_at: Nanos,
    first_offset: u64,
    first_len: u64,
}

impl Failures {
    fn add(&mut self, request: &Request, errno: Option<i32>, at: Nanos) {
        let kind = |f: &&mut Failure| f.op == request.op && f.errno == errno;
        match self.0.iter_mut().find(kind) {
            Some(failure) => failure.count += 1,
            None => self.0.push(Failure {
                op: request.op,
                errno,
                count: 1,
                first_job: request.tenant.0,
                first_at: at,
                first_offset: request.offset.0,
                first_len: request.len.0,
            }),
        }
    }

    fn total(&self) -> u64 {
        self.0.iter().map(|f| f.count).sum()
    }

    /// "N requests failed ...", naming each kind of failure and its first
    /// (its job by `job_name`).
    fn note(&self, job_name: impl Fn(u32) -> String) -> Option<String> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let kinds: Vec<String> = self
            .0
            .iter()
            .map(|f| {
                let error = f
                    .errno
                    .map_or("the device reported an error".to_string(), |e| {
                        std::io::Error::from_raw_os_error(e).to_string()
                    });
                format!(
                    "{} {} requests: {error} (the first at {:.3} s: job {}, {} bytes at address {})",
                    f.count,
                    f.op.name(),
                    f.first_at.as_secs_f64(),
                    job_name(f.first_job),
                    f.first_len,
                    f.first_offset
                )
            })
            .collect();
        Some(format!(
            "{total} requests failed and are left out of the figures: {}",
            kinds.join("; ")
        ))
    }
}

/// The `p` quantile of `sorted` latencies (us) in ms, by nearest rank as
/// the report's tables and CSV take it.
fn percentile(sorted: &[u64], p: f64) -> f64 {
    let rank = (sorted.len() as f64 * p).ceil() as usize;
    sorted
        .get(rank.max(1) - 1)
        .map_or(0.0, |&us| us as f64 / 1e3)
}

impl Observer for Watch {
    fn turn(&mut self, now: Nanos, sources: &[Box<dyn Source>]) {
        if let Some(tracker) = &mut self.tracker {
            let jobs: Vec<&Generator> = sources.iter().filter_map(|s| s.generator()).collect();
            tracker.update(now, &jobs, &mut self.recorder);
        }
    }

    fn request_failed(&mut self, request: &Request, errno: Option<i32>, at: Nanos) {
        self.failures.add(request, errno, at);
    }

    fn request_done(&mut self, request: &Request, outcome: Outcome, at: Nanos, in_ramp: bool) {
        // A failed request moved no data: it is in the notes, not the figures.
        if outcome == Outcome::Error {
            return;
        }
        // fio counts nothing that completes in its job's ramp: neither do
        // the figures nor the live line.
        if in_ramp {
            return;
        }
        let latency = at - request.submitted;
        self.recorder
            .request_done(request.op, request.len.0, latency, at);
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
        let drive = backend.drive_gauges().unwrap_or((0, 0));
        let gauges = gauges_of(sched, backend.view().in_flight, drive);
        self.recorder.sample(now, gauges);
        let queued = gauges.queued;
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
        if let Some(target_ms) = gauges.read_target_ms {
            line += &format!(" | read target {target_ms:.3} ms");
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

/// When the last job stops by itself (its `stop`, or a trace's last record).
/// Jobs that wait for others (stonewall groups) stop at most every stop in
/// turn after each other; without a stop each, it is not known.
fn job_end(jobs: &[Job]) -> Option<Nanos> {
    if jobs.iter().any(|j| !j.shape.after.is_empty()) {
        // A group starts once the one before has drained, which takes
        // what it takes: each wait may last up to the drain time (the run
        // ends sooner when its jobs do).
        let mut waits: Vec<&Vec<usize>> = (jobs.iter().map(|j| &j.shape.after))
            .filter(|after| !after.is_empty())
            .collect();
        waits.dedup();
        let runs = jobs
            .iter()
            .try_fold(Nanos::ZERO, |sum, j| Some(sum + j.stop?));
        return runs.map(|sum| sum + Nanos(DRAIN.0 * waits.len() as u64));
    }
    jobs.iter()
        .filter_map(|j| match (&j.kind, j.stop) {
            (_, Some(stop)) => Some(stop),
            (JobKind::Trace(records), None) => {
                // A replay may fall behind its trace (a drive slower than
                // it, a paced read_iolog, a version 2 log holding every
                // request at time zero): it has the simulator's drain time
                // to finish, and the run ends sooner when it does.
                let summary = records.summary();
                summary
                    .first_at
                    .map(|_| j.start + summary.last_at + TRACE_DRAIN)
            }
            _ => None,
        })
        .max()
}

/// Whether any of the jobs writes or trims.
pub fn writes(jobs: &[Job]) -> bool {
    jobs.iter().any(|j| match &j.kind {
        JobKind::Synthetic(s) => s.trim || s.read_percent < 100,
        JobKind::Trace(records) => records.summary().has_non_read(),
    })
}

/// Whether the job trims.
pub fn trims(job: &Job) -> bool {
    match &job.kind {
        JobKind::Synthetic(s) => s.trim || s.trim_ahead.is_some() || job.shape.writes_after_trims,
        JobKind::Trace(records) => records.summary().has(Op::Trim),
    }
}

/// The largest request of the jobs, bytes (the engine's buffer size).
pub fn largest_io(jobs: &[Job]) -> u64 {
    jobs.iter()
        .map(|j| match &j.kind {
            JobKind::Synthetic(s) => s.block_max,
            JobKind::Trace(records) => records.summary().max_len,
        })
        .max()
        .unwrap_or(0)
}

/// Starts the engine on opened targets at their base addresses
/// ([`crate::files::place`]); also returns their label and a description
/// for the start-of-run line.
pub fn open_engine(
    targets: Vec<(Target, u64)>,
    config: &EngineConfig,
) -> Result<(Engine, String, String), EngineError> {
    let label = targets
        .iter()
        .map(|(t, _)| t.path.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let engine = Engine::of_targets(targets, config)?;
    let how = if engine.target().direct {
        "O_DIRECT"
    } else {
        "buffered"
    };
    let description = format!("{label} ({how}, queue depth {})", config.queue_depth);
    Ok((engine, label, description))
}

/// One run to drive: the scheduler, the jobs and how they are measured.
pub struct Plan {
    pub sched: Box<dyn Scheduler>,
    /// The scheduler spec as given (the report's label).
    pub spec: String,
    /// The jobs, their phases, SLO and seed.
    pub workload: Workload,
    /// How long the jobs issue; requests may finish for [`DRAIN`] more.
    pub run_for: Nanos,
    /// Print a gstat-like line per second on stderr.
    pub per_second: bool,
    /// Serves the run's metrics.
    pub metrics: Option<MetricsServer>,
    /// Asked now and then; `true` ends the run (the caller's Ctrl-C).
    pub stop: fn() -> bool,
    /// What reading the workload said (a job file's notes): the report's
    /// notes begin with them.
    pub notes: Vec<String>,
}

/// What a run measured, and how it ended.
pub struct Measured {
    pub report: RunReport,
    pub requests: u64,
    pub wall: f64,
    /// The backend's error that ended the run; what was measured stands.
    pub error: Option<EngineError>,
    /// Requests the target failed (left out of the figures, and noted).
    pub failed: u64,
}

impl Measured {
    /// What the run got wrong besides its error: requests the target failed
    /// and blocks `--verify` found wrong (the report says which).
    pub fn faults(&self) -> Result<(), RunFaults> {
        let mismatched = self.report.verify.as_ref().map_or(0, |v| v.mismatches);
        match (self.failed, mismatched) {
            (0, 0) => Ok(()),
            (failed, mismatched) => Err(RunFaults { failed, mismatched }),
        }
    }
}

/// Requests a run's target failed, and blocks that did not read back as
/// written: the run's figures stand, its exit status should not be success.
#[derive(Debug)]
pub struct RunFaults {
    pub failed: u64,
    pub mismatched: u64,
}

impl std::fmt::Display for RunFaults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let failed = (self.failed > 0).then(|| {
            format!(
                "{} requests failed (the report's notes say how)",
                self.failed
            )
        });
        let mismatched = (self.mismatched > 0).then(|| {
            format!(
                "verify: {} blocks did not read back as written",
                self.mismatched
            )
        });
        let faults: Vec<String> = [failed, mismatched].into_iter().flatten().collect();
        f.write_str(&faults.join("; "))
    }
}

impl std::error::Error for RunFaults {}

/// Runs the plan's jobs through its scheduler into `backend` until they end,
/// the drain passes or the plan's `stop` says so, recording every request.
pub fn drive<B: Backend>(
    mut plan: Plan,
    backend: &mut B,
    label: &str,
    description: &str,
) -> Measured {
    let run_for = plan.run_for;
    let depth_note = depth_note(&plan.workload.jobs, backend.view().slots);
    let mut sources: Vec<Box<dyn Source>> =
        Generator::for_jobs(&plan.workload.jobs, plan.workload.seed)
            .into_iter()
            .map(|generator| Box::new(JobSource(generator.keep_schedule())) as _)
            .collect();
    let mut watch = Watch {
        recorder: Recorder::new(plan.workload.phases, plan.workload.slo),
        second: Default::default(),
        failures: Failures::default(),
        print: plan.per_second,
        metrics: plan.metrics.map(|server| (server, plan.spec.clone())),
        tracker: plan.workload.job_phases.then(PhaseTracker::default),
    };
    eprintln!(
        "iosteer: running {} on {description} for at most {:.1} s...",
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
        &plan.stop,
        &runner::WallClock::starting_now(),
    );
    let wall = started.elapsed().as_secs_f64();
    let cpu = outcome
        .as_ref()
        .ok()
        .and_then(|s| s.cpu)
        .map(|(user, system)| CpuReport {
            user_s: round(user, 3),
            system_s: round(system, 3),
            cores: round((user + system) / wall.max(1e-9), 3),
        });
    let mut notes = std::mem::take(&mut plan.notes);
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
    notes.extend(depth_note);
    notes.extend(watch.failures.note(|tenant| {
        let job = sources.get(tenant as usize).and_then(|s| s.generator());
        job.map_or(format!("#{tenant}"), |g| g.name().to_string())
    }));
    if let Ok(s) = &outcome {
        if s.interrupted {
            notes.push(format!(
                "interrupted at {:.1} s of {:.1} s: figures cover the run up to there",
                end.as_secs_f64(),
                run_for.as_secs_f64()
            ));
        }
        if s.late_wake_ups > 0 {
            notes.push(format!(
                "the loop woke more than {} ms late {} times (at worst {:.1} ms): the machine was busy, and arrivals and dispatches were late by as much",
                runner::LATE.0 / 1_000_000,
                s.late_wake_ups,
                s.latest_wake_up.as_secs_f64() * 1e3
            ));
        }
    }
    let unfinished_jobs: Vec<&str> = sources
        .iter()
        .filter_map(|s| s.generator())
        .filter(|g| !g.ended(end))
        .map(Generator::name)
        .collect();
    if plan.workload.job_phases && !interrupted && !unfinished_jobs.is_empty() {
        notes.push(format!(
            "the run's {:.1} s ended before these jobs did: {} (give --duration for longer)",
            run_for.as_secs_f64(),
            unfinished_jobs.join(", ")
        ));
    }
    let resuming: Vec<&str> = (plan.workload.jobs.iter())
        .filter(|j| j.shape.direct.is_some() && !j.shape.rate_catches_up)
        .map(|j| j.name.as_str())
        .collect();
    if !resuming.is_empty() {
        notes.push(format!(
            "{}: iosteer_rate_resumes is for iosteer sim; a real run keeps fio's schedule, catching up after a hold",
            resuming.join(", ")
        ));
    }
    let generators = sources.iter().filter_map(|s| s.generator());
    notes.extend(generators.flat_map(Generator::control_notes));
    notes.extend(plan.sched.notes());
    let generators = sources.iter().filter_map(|s| s.generator());
    notes.extend(generators.flat_map(|g| g.rate_floor_notes(g.finished_at().unwrap_or(end))));
    if plan.workload.job_phases {
        let generators = sources.iter().filter_map(|s| s.generator());
        notes.extend(generators.filter_map(|g| g.held_past_stop_note(Some(run_for))));
    }
    if let Some(tracker) = &watch.tracker {
        let jobs: Vec<&Generator> = sources.iter().filter_map(|s| s.generator()).collect();
        notes.extend(tracker.ramp_notes(&jobs));
        job_phases::settle(end, &mut watch.recorder);
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
        error: outcome.err(),
        failed: watch.failures.total(),
    }
}

/// A note when the iodepths of jobs that run together (those waiting for
/// the same jobs) add up past the commands the target takes at once: the
/// rest wait in the scheduler, where fio has them all in the kernel.
fn depth_note(jobs: &[Job], slots: u32) -> Option<String> {
    let together = |after: &Vec<usize>| -> u64 {
        (jobs.iter())
            // A job file's jobs only (a probe's open-loop reader is not
            // one fio would run).
            .filter(|job| !job.shape.section.is_empty())
            .filter(|job| job.shape.after == *after)
            .filter_map(|job| match &job.kind {
                JobKind::Synthetic(s) => Some(u64::from(s.arrival.iodepth)),
                JobKind::Trace(_) => None,
            })
            .sum()
    };
    let asked = jobs.iter().map(|job| together(&job.shape.after)).max()?;
    (asked > u64::from(slots)).then(|| format!("the jobs' iodepths add up to {asked} requests in flight, and the target takes {slots} commands at once here: the rest wait in the scheduler, where fio would have them all in the kernel (a deeper queue lets them in)"))
}

/// How long requests may still finish after the jobs stop.
pub const DRAIN: Nanos = Nanos::from_secs(5);

/// How long the jobs issue: `duration` if given and not zero (zero is as
/// if not given, as fio's `runtime=0` sets no limit of its own), else until
/// the jobs stop, else 10 s.
pub fn run_length(duration: Option<Nanos>, jobs: &[Job]) -> Nanos {
    duration
        .filter(|d| *d > Nanos::ZERO)
        .or_else(|| job_end(jobs))
        .unwrap_or(Nanos::from_secs(10))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--duration 0` printed an empty report: zero is as if not given, as
    /// fio's `runtime=0` (found by a review).
    /// Found by a review: four clones at iodepth 16 had 32 in flight
    /// where fio has 64, nothing said.
    #[test]
    fn jobs_asking_for_more_in_flight_than_the_target_takes_are_noted() {
        let fio = "[j]\nioengine=libaio\nrw=randread\nsize=1m\niodepth=16\nnumjobs=4\n";
        let jobs = iosteer_workload::fio::parse(fio, "t.fio", 1 << 30).unwrap();
        let note = depth_note(&jobs, 32).expect("64 asked of 32");
        assert!(note.contains("add up to 64"), "{note}");
        assert_eq!(depth_note(&jobs, 64), None);
        // Two groups a stonewall keeps apart never run together.
        let fio = "[a]\nioengine=libaio\nrw=randread\nsize=1m\niodepth=24\n[b]\nstonewall\nioengine=libaio\nrw=randread\nsize=1m\niodepth=24\n";
        let jobs = iosteer_workload::fio::parse(fio, "t.fio", 1 << 30).unwrap();
        assert_eq!(depth_note(&jobs, 32), None);
    }

    #[test]
    fn a_zero_duration_is_as_if_not_given() {
        assert_eq!(run_length(Some(Nanos::ZERO), &[]), Nanos::from_secs(10));
        assert_eq!(run_length(Some(Nanos(7)), &[]), Nanos(7));
        // Two stonewalled groups of 2 s: each wait may take the drain.
        let fio =
            "[global]\ntime_based\nruntime=2\nsize=1m\n[a]\nrw=read\n[b]\nstonewall\nrw=read\n";
        let jobs = iosteer_workload::fio::parse(fio, "t.fio", 1 << 30).unwrap();
        assert_eq!(run_length(None, &jobs), Nanos::from_secs(4) + DRAIN);
    }

    /// A `trimwrite` job trims (each write's blocks, just before it), so an
    /// IOPOLL ring, which takes no trims, is refused for it.
    #[test]
    fn a_trimwrite_job_trims() {
        let job = |rw: &str| {
            let fio = format!("[j]\nrw={rw}\nsize=1m\n");
            iosteer_workload::fio::parse(&fio, "t.fio", 1 << 30)
                .unwrap()
                .remove(0)
        };
        assert!(trims(&job("trimwrite")) && trims(&job("trim")));
        assert!(!trims(&job("write")));
    }

    #[test]
    fn the_live_line_takes_percentiles_by_nearest_rank() {
        // 77 reads in a second: p99 is the slowest (rank 77), as in the CSV.
        let sorted: Vec<u64> = (1..=77).map(|i| i * 1000).collect();
        assert_eq!(percentile(&sorted, 0.99), 77.0);
        assert_eq!(percentile(&sorted, 0.5), 39.0);
        assert_eq!(percentile(&[], 0.99), 0.0);
    }

    #[test]
    fn a_replay_paced_or_open_loop_has_the_drain_time_to_finish() {
        use iosteer_workload::job_shape::IologPacing;
        use iosteer_workload::workload::TraceRecord;
        let record = TraceRecord {
            at: Nanos::ZERO,
            op: Op::Write,
            offset: 0,
            len: 4096,
            fua: false,
        };
        let mut job = Job {
            name: "v2".into(),
            kind: JobKind::Trace(vec![record; 200].into()),
            start: Nanos::ZERO,
            stop: None,
            shape: Default::default(),
        };
        // Open loop (an iosteer_trace): a drive slower than the trace
        // falls behind it.
        assert_eq!(run_length(None, std::slice::from_ref(&job)), TRACE_DRAIN);
        job.shape.iolog_pacing = Some(IologPacing {
            iodepth: 4,
            waits_from_previous: false,
        });
        assert_eq!(run_length(None, &[job]), TRACE_DRAIN);
    }

    /// Both kinds of fault are named (found by a review: a run with both
    /// named only its failed requests).
    #[test]
    fn a_runs_faults_name_failed_requests_and_wrong_blocks_together() {
        let both = RunFaults {
            failed: 2,
            mismatched: 3,
        };
        let text = both.to_string();
        assert_eq!(text, "2 requests failed (the report's notes say how); verify: 3 blocks did not read back as written");
        let one = RunFaults {
            failed: 0,
            mismatched: 1,
        };
        assert_eq!(
            one.to_string(),
            "verify: 1 blocks did not read back as written"
        );
    }

    #[test]
    fn failures_are_noted_by_operation_and_error_with_the_first_of_each() {
        let mut failures = Failures::default();
        assert_eq!(failures.note(|_| unreachable!()), None);
        let write = |id, offset| Request::new(id, Op::Write, offset, 4096, Nanos::ZERO);
        failures.add(
            &write(1, 8192),
            Some(libc::ENOSPC),
            Nanos::from_millis(1500),
        );
        failures.add(&write(2, 0), Some(libc::ENOSPC), Nanos::from_secs(2));
        failures.add(
            &Request::new(3, Op::Read, 4096, 512, Nanos::ZERO),
            None,
            Nanos::from_secs(3),
        );
        let note = failures.note(|tenant| format!("job{tenant}")).unwrap();
        assert!(note.starts_with("3 requests failed and are left out of the figures: 2 write requests: No space left on device (os error 28) (the first at 1.500 s: job job0, 4096 bytes at address 8192); 1 read requests: the device reported an error"), "{note}");
    }
}
