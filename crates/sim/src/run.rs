//! The discrete-event loop that joins jobs, a scheduler and the drive.
//!
//! Time is integer nanoseconds and advances to the earliest of: the next
//! arrival of any job, the drive's next event (a completion or an idle GC
//! step) and the scheduler's timer. At each instant, in this order: the drive
//! hands back what it finished (each completion goes to the scheduler and to
//! the job that issued it), the scheduler ticks if due, due jobs issue, and
//! the scheduler dispatches into the drive until it holds back. Equal times
//! resolve the same way every run, and all randomness comes from the seed:
//! same inputs, same output.

use std::time::Instant;

use iosteer_device::{Device, DeviceConfig, Finished, Precondition};
use iosteer_sched::{policy, Dispatch, Nanos, Op, Request, Scheduler};
use thiserror::Error;

use crate::report::{DeviceReport, Phase, PhaseAccumulator, RunReport};
use crate::series::SeriesCollector;
use crate::workload::{Generator, Job};

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SimError {
    #[error("--sched {spec}: {message}")]
    Scheduler { spec: String, message: String },
    #[error("device: {0}")]
    Device(String),
    #[error("{0}")]
    Workload(String),
}

/// Everything a run needs but the scheduler.
#[derive(Clone, Debug)]
pub struct Simulation {
    pub device: DeviceConfig,
    pub precondition: Precondition,
    pub jobs: Vec<Job>,
    /// Named phases by completion time; `all` is added.
    pub phases: Vec<Phase>,
    /// Reads slower than this count as SLO violations (35 ms in the paper).
    pub slo: Nanos,
    pub seed: u64,
    /// How long after the last job stops requests may still finish.
    pub drain: Nanos,
    /// Said in the report (for example, that a trace was remapped).
    pub notes: Vec<String>,
}

impl Simulation {
    /// `jobs` on `device`, aged full and fragmented (the default
    /// preconditioning), measured in one phase named `phase` that lasts until
    /// the workload ends plus `drain`.
    pub fn of_jobs(
        device: DeviceConfig,
        jobs: Vec<Job>,
        phase: &str,
        seed: u64,
        drain: Nanos,
    ) -> Simulation {
        let mut sim = Simulation {
            device,
            precondition: Precondition {
                seed,
                ..Precondition::default()
            },
            jobs,
            phases: Vec::new(),
            slo: Nanos::from_millis(35),
            seed,
            drain,
            notes: Vec::new(),
        };
        sim.phases.push(Phase {
            name: phase.to_string(),
            start: Nanos::ZERO,
            end: sim.workload_end() + drain,
        });
        sim
    }

    /// When the last job stops issuing (or its trace ends).
    pub fn workload_end(&self) -> Nanos {
        self.jobs
            .iter()
            .map(|j| match (&j.kind, j.stop) {
                (_, Some(stop)) => stop,
                (crate::workload::JobKind::Trace(r), None) => {
                    j.start + r.last().map_or(Nanos::ZERO, |x| x.at)
                }
                _ => j.start,
            })
            .max()
            .unwrap_or(Nanos::ZERO)
    }

    /// Checks the workload against the drive.
    pub fn validate(&self) -> Result<(), SimError> {
        if self.jobs.is_empty() {
            return Err(SimError::Workload("the workload has no job".into()));
        }
        let capacity = self.device.logical_bytes();
        for job in &self.jobs {
            if job.end_offset() > capacity {
                return Err(SimError::Workload(format!(
                    "job {} reaches byte {} but drive {} holds {} bytes",
                    job.name,
                    job.end_offset(),
                    self.device.name,
                    capacity
                )));
            }
        }
        Ok(())
    }

    /// The aged drive every run starts from.
    pub fn aged_device(&self) -> Result<Device, SimError> {
        let mut device =
            Device::new(self.device.clone()).map_err(|e| SimError::Device(e.to_string()))?;
        device
            .precondition(self.precondition)
            .map_err(|e| SimError::Device(e.to_string()))?;
        Ok(device)
    }

    /// Runs `spec` on a copy of `aged`; `progress` hears the simulated time
    /// now and at the end, now and then.
    pub fn run(
        &self,
        spec: &str,
        aged: &Device,
        progress: &mut dyn FnMut(Nanos, Nanos) -> bool,
    ) -> Result<RunReport, SimError> {
        let sched = policy::build(spec).map_err(|e| SimError::Scheduler {
            spec: spec.to_string(),
            message: e.to_string(),
        })?;
        let mut state = State::new(self, sched, aged.clone());
        let outcome = state.run(self, progress);
        let mut report = state.report(self, spec);
        let at = state.now.as_secs_f64();
        report.interrupted = !matches!(outcome, Ok(true));
        match outcome {
            Ok(true) => {}
            Ok(false) => report.notes.push(format!(
                "interrupted at {at:.1} s of simulated time: figures cover the run up to there"
            )),
            Err(e) => report.notes.push(format!(
                "stopped at {at:.1} s of simulated time by an error: {e}"
            )),
        }
        Ok(report)
    }
}

struct State {
    sched: Box<dyn Scheduler>,
    device: Device,
    jobs: Vec<Generator>,
    phases: Vec<PhaseAccumulator>,
    /// Drive counters (host pages written, GC pages moved) when each phase
    /// started and ended, for its write amplification.
    phase_counters: Vec<[Option<(u64, u64)>; 2]>,
    now: Nanos,
    next_id: u64,
    submitted: u64,
    completed: u64,
    errors: u64,
    issued: Vec<Request>,
    finished: Vec<Finished>,
    series: SeriesCollector,
}

impl State {
    fn new(sim: &Simulation, sched: Box<dyn Scheduler>, device: Device) -> State {
        State {
            sched,
            device,
            jobs: sim
                .jobs
                .iter()
                .enumerate()
                .map(|(i, job)| Generator::new(job.clone(), i as u32, sim.seed))
                .collect(),
            phases: vec![PhaseAccumulator::default(); sim.phases.len()],
            phase_counters: vec![[None; 2]; sim.phases.len()],
            now: Nanos::ZERO,
            next_id: 0,
            submitted: 0,
            completed: 0,
            errors: 0,
            issued: Vec::new(),
            finished: Vec::new(),
            series: SeriesCollector::default(),
        }
    }

    fn next_arrival(&self) -> Option<Nanos> {
        self.jobs.iter().filter_map(Generator::next_at).min()
    }

    /// Runs to the end (`Ok(true)`) or until `progress` says stop (`Ok(false)`).
    fn run(
        &mut self,
        sim: &Simulation,
        progress: &mut dyn FnMut(Nanos, Nanos) -> bool,
    ) -> Result<bool, SimError> {
        let deadline = sim.workload_end() + sim.drain;
        let mut steps = 0u64;
        loop {
            steps += 1;
            if steps % (1 << 16) == 0 && !progress(self.now, sim.workload_end()) {
                return Ok(false);
            }
            let arrival = self.next_arrival();
            let busy = self.submitted > self.completed;
            if arrival.is_none() && !busy {
                break;
            }
            // With nothing queued a tick has nothing to release; skipping
            // them lets idle stretches pass in one step (a late tick catches
            // up on its own).
            let timer = if self.sched.stats().queued() == 0 {
                None
            } else {
                self.sched.next_timer()
            };
            let Some(next) = [arrival, self.device.next_event(), timer]
                .into_iter()
                .flatten()
                .min()
            else {
                break;
            };
            if next > deadline {
                break;
            }
            self.now = self.now.max(next);
            self.step(sim)?;
        }
        Ok(true)
    }

    fn step(&mut self, sim: &Simulation) -> Result<(), SimError> {
        let now = self.now;
        if self.series.wants_sample(now) {
            let stats = self.sched.stats();
            let queued = [Op::Read, Op::Write, Op::Trim].map(|op| stats.class(op).queued);
            let ftl = self.device.ftl();
            let (free, gc) = (ftl.total_free_blocks(), ftl.counters.gc_pages_moved);
            let in_flight = self.device.view().in_flight;
            self.series.sample(now, queued, in_flight, free, gc);
        }
        self.device.advance(now, &mut self.finished);
        self.mark_phases(sim, now);
        let mut finished = std::mem::take(&mut self.finished);
        for f in finished.drain(..) {
            let _ = self.sched.complete(&f.command.completion(f.outcome), f.at);
            if f.outcome == iosteer_sched::Outcome::Error {
                self.errors += f.command.requests.len() as u64;
            }
            for request in &f.command.requests {
                self.request_done(sim, request, f.at);
            }
        }
        self.finished = finished;
        if self.sched.next_timer().is_some_and(|t| t <= now) {
            let _ = self.sched.tick(now);
        }
        for job in &mut self.jobs {
            while job.next_at().is_some_and(|t| t <= now) {
                job.issue(now, &mut self.next_id, &mut self.issued);
            }
        }
        for request in self.issued.drain(..) {
            self.submitted += 1;
            self.sched.enqueue(request, now);
        }
        while let Some(d) = self.sched.dispatch(now, self.device.view()) {
            match d {
                Dispatch::ToDevice(command) => {
                    self.device
                        .submit(command, now)
                        .map_err(|e| SimError::Device(e.to_string()))?;
                }
                Dispatch::CompletedWithoutDevice(request) => self.request_done(sim, &request, now),
            }
        }
        Ok(())
    }

    /// Notes the drive's counters at the phase boundaries `now` has passed.
    fn mark_phases(&mut self, sim: &Simulation, now: Nanos) {
        let c = self.device.ftl().counters;
        let counters = (c.host_pages_written, c.gc_pages_moved);
        for (phase, marks) in sim.phases.iter().zip(&mut self.phase_counters) {
            for (edge, mark) in [phase.start, phase.end].into_iter().zip(marks.iter_mut()) {
                if mark.is_none() && now >= edge {
                    *mark = Some(counters);
                }
            }
        }
    }

    fn request_done(&mut self, sim: &Simulation, request: &Request, at: Nanos) {
        self.completed += 1;
        let latency = at - request.submitted;
        self.series.record(request.op, request.len.0, latency, at);
        for (phase, acc) in sim.phases.iter().zip(&mut self.phases) {
            if at >= phase.start && at < phase.end {
                acc.record(request.op, request.len.0, latency, sim.slo);
            }
        }
        if let Some(job) = self.jobs.get_mut(request.tenant.0 as usize) {
            job.completed(at);
        }
    }

    fn report(&mut self, sim: &Simulation, spec: &str) -> RunReport {
        let c = self.device.ftl().counters;
        let at_end = (c.host_pages_written, c.gc_pages_moved);
        let mut phases: Vec<_> = sim
            .phases
            .iter()
            .zip(&self.phases)
            .zip(&self.phase_counters)
            .map(|((p, acc), marks)| {
                let mut report = acc.report(p);
                let start = marks[0].unwrap_or(at_end);
                report.waf = waf_between(start, marks[1].unwrap_or(at_end));
                report
            })
            .collect();
        let mut all = PhaseAccumulator::default();
        for acc in &self.phases {
            all.merge(acc);
        }
        let span = Phase {
            name: "all".into(),
            start: sim.phases.first().map_or(Nanos::ZERO, |p| p.start),
            end: sim.phases.last().map_or(self.now, |p| p.end),
        };
        let mut all = all.report(&span);
        all.waf = waf_between((0, 0), at_end);
        phases.push(all);
        let stats = self.device.stats();
        let mut notes = sim.notes.clone();
        if self.errors > 0 {
            notes.push(format!("{} requests failed in the drive", self.errors));
        }
        RunReport {
            scheduler: spec.to_string(),
            device: sim.device.name.clone(),
            phases,
            device_stats: DeviceReport {
                waf: crate::report::round(stats.write_amplification(), 3),
                gc_pages_moved: stats.ftl.gc_pages_moved,
                erases: stats.ftl.blocks_erased,
                foreground_gc_blocks: stats.foreground_victims,
                background_gc_blocks: stats.background_victims,
                read_wait_behind_gc_s: crate::report::round(
                    stats.read_wait_behind_gc.as_secs_f64(),
                    3,
                ),
                read_wait_behind_program_s: crate::report::round(
                    stats.read_wait_behind_program.as_secs_f64(),
                    3,
                ),
                merged_writes: stats.merged_writes,
                merged_reads: stats.merged_reads,
                wear_erases_min: stats.wear.min,
                wear_erases_mean: crate::report::round(stats.wear.mean, 2),
                wear_erases_max: stats.wear.max,
            },
            unfinished: self.submitted - self.completed,
            requests: self.submitted,
            notes,
            series: std::mem::take(&mut self.series)
                .finish(self.device.ftl().counters.gc_pages_moved),
            interrupted: false,
        }
    }
}

/// Write amplification between two (host pages written, GC pages moved)
/// marks; `None` when no host page was written.
fn waf_between(start: (u64, u64), end: (u64, u64)) -> Option<f64> {
    let host = end.0.saturating_sub(start.0);
    let moved = end.1.saturating_sub(start.1);
    (host > 0).then(|| crate::report::round((host + moved) as f64 / host as f64, 3))
}

/// Runs every spec on the same aged drive; returns the reports and the wall
/// time. `progress` hears (run index, simulated now, simulated end); when it
/// returns `false` the current run stops, reports what it measured, and the
/// remaining runs are skipped.
pub fn run_all(
    sim: &Simulation,
    specs: &[String],
    progress: &mut dyn FnMut(usize, Nanos, Nanos) -> bool,
) -> Result<(Vec<RunReport>, f64), SimError> {
    sim.validate()?;
    for spec in specs {
        policy::build(spec).map_err(|e| SimError::Scheduler {
            spec: spec.clone(),
            message: e.to_string(),
        })?;
    }
    let aged = sim.aged_device()?;
    let started = Instant::now();
    let mut reports = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let report = sim.run(spec, &aged, &mut |now, end| progress(i, now, end))?;
        let stop = report.interrupted;
        reports.push(report);
        if stop {
            break;
        }
    }
    Ok((reports, started.elapsed().as_secs_f64()))
}
