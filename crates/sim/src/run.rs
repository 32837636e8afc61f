//! The discrete-event loop that joins jobs, a scheduler and the drive.
//!
//! Time is integer nanoseconds and advances to the earliest of: the next
//! arrival of any job, the drive's next event (a completion or an idle GC
//! step) and the scheduler's timer. At each instant, in this order: the drive
//! hands back what it finished (each completion goes to the scheduler and to
//! the job that issued it), the scheduler ticks if due, the scheduler
//! dispatches what was already queued (a driver refills the slots a
//! completion freed before any application hears of it), due jobs issue (a
//! job that listens to back-pressure first asks the scheduler's `pressure()`
//! and may hold a write or trim, [`iosteer_workload::workload::Synthetic::backpressure`]),
//! and the scheduler dispatches into the drive until it holds back. Equal
//! times resolve the same way every run, and all randomness comes from the
//! seed: same inputs, same output.

use iosteer_device::config::SECTOR_BYTES;
use iosteer_device::{
    Aging, Device, DeviceConfig, DeviceStats, Finished, KeepGoing, Precondition, PreconditionTable,
    StartState,
};
use iosteer_sched::{policy, Dispatch, Nanos, Op, Request, Scheduler};
use thiserror::Error;

use iosteer_workload::job_phases::{self, PhaseTracker};
use iosteer_workload::report::{round, DeviceReport, Phase, Recorder, RunReport};
use iosteer_workload::series::gauges_of;
use iosteer_workload::workload::{Generator, Job, JobKind, Workload};

mod notes;

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SimError {
    /// A scheduler spec that does not build.
    #[error("scheduler `{spec}`: {source}")]
    Scheduler {
        spec: String,
        source: Box<iosteer_sched::ConfigError>,
    },
    /// The drive's configuration, or a GC mode it cannot switch to now.
    #[error("device: {0}")]
    Device(#[from] iosteer_device::ConfigError),
    /// The drive cannot switch GC mode now (it owes or runs GC).
    #[error("device: {0}")]
    GcMode(#[from] iosteer_device::GcModeBusy),
    /// Aging the drive failed.
    #[error("device: {0}")]
    Aging(#[from] iosteer_device::FtlError),
    /// The drive refused a command the scheduler sent.
    #[error("device: {0}")]
    Refused(#[from] iosteer_device::Refused),
    /// The workload has no job to run.
    #[error("the workload has no job")]
    NoJobs,
    /// A trace job could not read on.
    #[error("job {job}: {source}")]
    Trace {
        job: String,
        source: Box<iosteer_workload::trace::TraceError>,
    },
    /// A synthetic job's requests fall off the sectors a drive addresses.
    #[error("job {job}: its offsets and sizes fall on {granule}-byte boundaries, and a drive takes whole sectors of {SECTOR_BYTES} bytes (the simulation has no page cache to gather smaller writes); give bs, bssplit, blockalign and offset multiples of {SECTOR_BYTES}")]
    OffSector { job: String, granule: u64 },
    /// A job reaches past the drive's logical capacity.
    #[error("job {job} reaches byte {end} but drive {drive} holds {capacity} bytes")]
    BeyondDrive {
        job: String,
        end: u64,
        drive: String,
        capacity: u64,
    },
}

/// Everything a run needs but the scheduler.
#[derive(Clone, Debug)]
pub struct Simulation {
    pub device: DeviceConfig,
    pub precondition: Precondition,
    /// The jobs, their phases, SLO and seed.
    pub workload: Workload,
    /// How long after the last job stops requests may still finish; when
    /// the phases follow the jobs, the run ends this long after the last
    /// job stops issuing.
    pub drain: Nanos,
    /// Said in the report (for example, that a trace was remapped).
    pub notes: Vec<String>,
    /// The phases end when the run does, if sooner: a trace's phase is
    /// measured until its last request completes, not over the drain time
    /// it was allowed (which, for a 10 s trace, would count 60 s of idle
    /// drive in its IOPS and MB/s).
    pub phases_end_with_run: bool,
}

impl Simulation {
    /// `workload` on `device`, aged full and fragmented (the default
    /// preconditioning, seeded as the workload is).
    pub fn new(device: DeviceConfig, workload: Workload, drain: Nanos) -> Simulation {
        Simulation {
            device,
            precondition: Precondition {
                seed: workload.seed,
                ..Precondition::default()
            },
            workload,
            drain,
            notes: Vec::new(),
            phases_end_with_run: false,
        }
    }

    /// `jobs` on `device`, aged as [`new`](Self::new) ages it, measured in
    /// one phase named `phase` that lasts until the workload ends plus
    /// `drain`.
    pub fn of_jobs(
        device: DeviceConfig,
        jobs: Vec<Job>,
        phase: &str,
        seed: u64,
        drain: Nanos,
    ) -> Simulation {
        let mut sim = Simulation::new(device, Workload::in_phases(jobs, Vec::new(), seed), drain);
        sim.workload.phases.push(Phase {
            name: phase.to_string(),
            start: Nanos::ZERO,
            end: sim.workload_end() + drain,
        });
        sim
    }

    /// A job file's `jobs` on `device` (aged as [`new`](Self::new) ages
    /// it), in phases that follow the jobs (stonewall groups, start
    /// delays, runtimes, byte limits), the run ending `drain` after the
    /// last job stops issuing.
    pub fn of_job_file(
        device: DeviceConfig,
        jobs: Vec<Job>,
        seed: u64,
        drain: Nanos,
    ) -> Simulation {
        let note = crate::workload_file::shared_drive_note(&jobs);
        let mut sim = Simulation::new(device, Workload::of_job_file(jobs, seed), drain);
        sim.notes.extend(note);
        sim
    }

    /// When the last job stops issuing (or its trace ends).
    pub fn workload_end(&self) -> Nanos {
        self.workload
            .jobs
            .iter()
            .map(|j| match (&j.kind, j.stop) {
                (_, Some(stop)) => stop,
                (iosteer_workload::workload::JobKind::Trace(r), None) => {
                    j.start + r.summary().last_at
                }
                _ => j.start,
            })
            .max()
            .unwrap_or(Nanos::ZERO)
    }

    /// Checks the workload against the drive.
    pub fn validate(&self) -> Result<(), SimError> {
        if self.workload.jobs.is_empty() {
            return Err(SimError::NoJobs);
        }
        let capacity = self.device.logical_bytes();
        for job in &self.workload.jobs {
            let granule = job.granule().filter(|g| g % u64::from(SECTOR_BYTES) != 0);
            if let (JobKind::Synthetic(_), Some(granule)) = (&job.kind, granule) {
                let job = job.name.clone();
                return Err(SimError::OffSector { job, granule });
            }
            // A plain synthetic job issues its largest block from the start
            // of a range smaller than the block (draw.rs).
            let end = match &job.kind {
                JobKind::Synthetic(s) if job.shape.draws_plainly() => {
                    s.offset.saturating_add(s.size.max(s.block_max))
                }
                _ => job.end_offset(),
            };
            if end > capacity {
                return Err(SimError::BeyondDrive {
                    job: job.name.clone(),
                    end,
                    drive: self.device.name.clone(),
                    capacity,
                });
            }
        }
        Ok(())
    }

    /// The state the drive starts in: the drive file's `[precondition]`
    /// when it has one, else the workload's own (a scenario's aging).
    pub fn start_state(&self) -> StartState {
        self.device
            .precondition
            .map_or(self.precondition.state, |table| table.state)
    }

    /// Starts the drive in `state`, whatever the drive file or the workload
    /// chose (`--precondition`). It is written into the drive's table, the
    /// place a drive file says it, so that [`start_state`](Self::start_state)
    /// is the one rule that decides.
    pub fn set_start_state(&mut self, state: StartState) {
        self.device.precondition = Some(PreconditionTable { state });
    }

    /// The preconditioned drive every run starts from.
    pub fn aged_device(&self) -> Result<Device, SimError> {
        self.aged_device_until(&mut || true)
    }

    /// [`aged_device`](Self::aged_device), asking `keep_going` now and then
    /// whether to go on ([`Device::precondition_until`]).
    pub fn aged_device_until(&self, keep_going: KeepGoing) -> Result<Device, SimError> {
        let mut device = Device::new(self.device.clone())?;
        let plan = Precondition {
            state: self.start_state(),
            seed: self.precondition.seed,
        };
        device.precondition_until(plan, keep_going)?;
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
        self.run_with_stats(spec, aged, progress)
            .map(|(report, _)| report)
    }

    /// [`run`](Self::run), also handing back the drive's statistics at the
    /// end (the NAND operations a benchmark counts).
    pub fn run_with_stats(
        &self,
        spec: &str,
        aged: &Device,
        progress: &mut dyn FnMut(Nanos, Nanos) -> bool,
    ) -> Result<(RunReport, DeviceStats), SimError> {
        self.run_on(spec, aged.clone(), progress)
    }

    /// [`run_with_stats`](Self::run_with_stats) on `device` itself, not a
    /// copy: the last run of an aged drive needs no second one (a large
    /// drive's maps are hundreds of MB).
    pub fn run_on(
        &self,
        spec: &str,
        device: Device,
        progress: &mut dyn FnMut(Nanos, Nanos) -> bool,
    ) -> Result<(RunReport, DeviceStats), SimError> {
        let sched = policy::build(spec).map_err(|source| SimError::Scheduler {
            spec: spec.to_string(),
            source: Box::new(source),
        })?;
        let mut state = State::new(self, sched, device);
        let outcome = state.run(self, progress);
        let mut report = state.report(self, spec, !matches!(outcome, Ok(true)));
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
        Ok((report, state.device.stats()))
    }
}

struct State {
    sched: Box<dyn Scheduler>,
    device: Device,
    jobs: Vec<Generator>,
    recorder: Recorder,
    /// Drive counters (host units written, unit slots programmed beyond
    /// them: GC moves and padding) when each phase started and ended, for
    /// its write amplification.
    phase_counters: Vec<[Option<(u64, u64)>; 2]>,
    now: Nanos,
    next_id: u64,
    submitted: u64,
    completed: u64,
    errors: u64,
    issued: Vec<Request>,
    finished: Vec<Finished>,
    /// Phases that follow the jobs ([`Workload::job_phases`]).
    tracker: Option<PhaseTracker>,
    /// When each job ended (fio's end: issued all and every request done).
    ended_at: Vec<Option<Nanos>>,
    /// When every job had stopped issuing: the drain runs from then.
    issuing_ended: Option<Nanos>,
    /// [`Simulation::workload_end`], which the loop asks every step.
    workload_end: Nanos,
    /// What the last full look at the jobs ([`follow_jobs`](Self::follow_jobs))
    /// found still holds while no job moved and time stays before
    /// `quiet_until`; the loop then skips the look.
    jobs_moved: bool,
    /// The first job start (past its ramp) or stop after the last full
    /// look: time crossing one may end a job or open a phase.
    quiet_until: Nanos,
    /// [`next_stop`](Self::next_stop) as of the last full look.
    stop_ahead: Option<Nanos>,
    /// Jobs still waiting for others to end (none: nothing to release).
    waiting: usize,
    /// Before this no phase edge is left to mark.
    phase_edge_ahead: Nanos,
    /// Why the run stopped with requests still out, if it did.
    cut_short: Option<CutShort>,
}

/// Why a run stopped before every request it issued completed.
#[derive(Clone, Copy)]
enum CutShort {
    /// The drain after the jobs ran out.
    Drained,
    /// Requests were held with no event, arrival or timer left to move them.
    NothingDue,
}

/// A trace job that could not read on stops the run: what would follow is
/// another workload than the one asked for.
fn trace_read_on(job: &mut Generator) -> Result<(), SimError> {
    match job.take_trace_error() {
        Some(source) => Err(SimError::Trace {
            job: job.name().to_string(),
            source: Box::new(source),
        }),
        None => Ok(()),
    }
}

impl State {
    fn new(sim: &Simulation, sched: Box<dyn Scheduler>, device: Device) -> State {
        State {
            sched,
            device,
            jobs: Generator::for_jobs(&sim.workload.jobs, sim.workload.seed),
            recorder: Recorder::new(sim.workload.phases.clone(), sim.workload.slo),
            phase_counters: vec![[None; 2]; sim.workload.phases.len()],
            now: Nanos::ZERO,
            next_id: 0,
            submitted: 0,
            completed: 0,
            errors: 0,
            issued: Vec::new(),
            finished: Vec::new(),
            tracker: sim.workload.job_phases.then(PhaseTracker::default),
            ended_at: vec![None; sim.workload.jobs.len()],
            issuing_ended: None,
            workload_end: sim.workload_end(),
            jobs_moved: true,
            quiet_until: Nanos::ZERO,
            stop_ahead: None,
            waiting: sim
                .workload
                .jobs
                .iter()
                .filter(|job| !job.shape.after.is_empty())
                .count(),
            phase_edge_ahead: Nanos::ZERO,
            cut_short: None,
        }
    }

    /// The run stops after this: the drain after the jobs, known from the
    /// start for jobs with fixed stops, once they have stopped otherwise.
    fn deadline(&self, sim: &Simulation) -> Option<Nanos> {
        if sim.workload.job_phases {
            self.issuing_ended.map(|at| at + sim.drain)
        } else {
            Some(self.workload_end + sim.drain)
        }
    }

    /// Starts the jobs whose stonewall has fallen: the jobs they wait for
    /// have ended.
    fn release_waiting(&mut self, now: Nanos) {
        for i in 0..self.jobs.len() {
            let ready = {
                let waits = self.jobs[i].waits_for();
                !waits.is_empty()
                    // The latest groups first: most likely still running, so
                    // the check stops at once rather than walk every job of
                    // the groups that ended (256 x 96 a step, in one file).
                    && (waits.iter().rev())
                        .all(|&j| self.jobs.get(j).is_none_or(|g| g.ended(now)))
            };
            if ready {
                self.jobs[i].release(now);
                self.waiting -= 1;
                self.jobs_moved = true;
            }
        }
    }

    /// The next stop of a job that has not ended: a job stopped by time
    /// ends there (and its phase with it), so the loop wakes then.
    fn next_stop(&self) -> Option<Nanos> {
        self.jobs
            .iter()
            .zip(&self.ended_at)
            .filter(|(job, ended)| ended.is_none() && job.waits_for().is_empty())
            .filter_map(|(job, _)| job.job().stop)
            .filter(|stop| *stop > self.now)
            .min()
    }

    /// After a step: jobs that ended, the end of issuing, the phases; and
    /// how long that holds. A job's ending, end of issuing and measuring
    /// change only when it is touched while done issuing (before or after:
    /// it cannot end otherwise), when it is released, or when time passes
    /// its start and ramp or its stop; until one of these, a look would
    /// find what the last one found.
    fn follow_jobs(&mut self, now: Nanos) {
        if !self.jobs_moved && now < self.quiet_until {
            return;
        }
        self.jobs_moved = false;
        self.quiet_until = self
            .jobs
            .iter()
            .flat_map(|g| {
                [
                    g.job().start + g.job().shape.ramp,
                    g.job().stop.unwrap_or(Nanos(u64::MAX)),
                ]
            })
            .filter(|at| *at > now)
            .min()
            .unwrap_or(Nanos(u64::MAX));
        // The tracker may open or close phases.
        self.phase_edge_ahead = Nanos::ZERO;
        for (job, ended) in self.jobs.iter().zip(&mut self.ended_at) {
            if ended.is_none() && job.ended(now) {
                *ended = Some(now);
            }
        }
        if self.issuing_ended.is_none() && self.jobs.iter().all(Generator::done_issuing) {
            self.issuing_ended = Some(now);
        }
        if let Some(tracker) = &mut self.tracker {
            tracker.update(now, &self.jobs, &mut self.recorder);
        }
        self.stop_ahead = self.next_stop();
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
        self.stop_ahead = self.next_stop();
        self.jobs.iter_mut().try_for_each(trace_read_on)?;
        let mut steps = 0u64;
        loop {
            steps += 1;
            if steps % (1 << 16) == 0 && !progress(self.now, sim.workload_end()) {
                return Ok(false);
            }
            let arrival = self.next_arrival();
            let busy = self.submitted > self.completed;
            let stop = if sim.workload.job_phases {
                self.stop_ahead
            } else {
                None
            };
            if arrival.is_none() && !busy && stop.is_none() {
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
            let Some(next) = earliest(
                earliest(arrival, self.device.next_event()),
                earliest(timer, stop),
            ) else {
                self.cut_short = busy.then_some(CutShort::NothingDue);
                break;
            };
            if self.deadline(sim).is_some_and(|deadline| next > deadline) {
                self.cut_short = busy.then_some(CutShort::Drained);
                break;
            }
            self.now = self.now.max(next);
            self.step(sim)?;
        }
        Ok(true)
    }

    fn step(&mut self, sim: &Simulation) -> Result<(), SimError> {
        let now = self.now;
        if self.recorder.wants_sample(now) {
            let ftl = self.device.ftl();
            let (free, gc) = (ftl.total_free_blocks(), ftl.counters.gc_pages_moved);
            let in_flight = self.device.view().in_flight;
            let gauges = gauges_of(self.sched.as_ref(), in_flight, (free, gc));
            self.recorder.sample(now, gauges);
        }
        self.device.advance(now, &mut self.finished);
        self.mark_phases(now);
        let mut finished = std::mem::take(&mut self.finished);
        for f in finished.drain(..) {
            let _ = self.sched.complete(&f.command.completion(f.outcome), f.at);
            if f.outcome == iosteer_sched::Outcome::Error {
                self.errors += f.command.requests.len() as u64;
            }
            for request in &f.command.requests {
                self.request_done(request, f.at);
            }
        }
        self.finished = finished;
        if sim.workload.job_phases && self.waiting > 0 {
            self.release_waiting(now);
        }
        if self.sched.next_timer().is_some_and(|t| t <= now) {
            let _ = self.sched.tick(now);
        }
        // The slots the completions freed go first to what was already
        // queued, as a driver refills them from its queue on completion,
        // before any application hears of it and issues again. (With
        // nothing queued the scheduler has nothing to send: skipped, as
        // it is on most steps of a fast drive.)
        if self.sched.stats().queued() > 0 {
            self.dispatch(now)?;
        }
        for job in &mut self.jobs {
            // A job due to issue is not done issuing (it has no next
            // moment once it is), so only its state after counts.
            if job.next_at().is_none_or(|t| t > now) {
                continue;
            }
            while job.next_at().is_some_and(|t| t <= now) {
                if let Some(retry) = must_wait(job, self.sched.as_ref(), now) {
                    job.hold(now, retry);
                    break;
                }
                job.issue(now, &mut self.next_id, &mut self.issued);
                // Enqueued at once (in the same order as ever), so that the
                // next request of a listening job sees this one's pressure.
                for request in self.issued.drain(..) {
                    self.submitted += 1;
                    self.sched.enqueue(request, now);
                }
            }
            self.jobs_moved |= job.done_issuing();
            trace_read_on(job)?;
        }
        // A job may end on its due issue too (steady state found since it
        // last looked), with nothing out: the jobs waiting for it go now.
        if sim.workload.job_phases && self.waiting > 0 && self.jobs_moved {
            self.release_waiting(now);
        }
        self.dispatch(now)?;
        if sim.workload.job_phases {
            self.follow_jobs(now);
        }
        Ok(())
    }

    /// Sends into the drive what the scheduler lets go at `now`.
    fn dispatch(&mut self, now: Nanos) -> Result<(), SimError> {
        while let Some(d) = self.sched.dispatch(now, self.device.view()) {
            match d {
                Dispatch::ToDevice(command) => self.device.submit(command, now)?,
                Dispatch::CompletedWithoutDevice(request) => self.request_done(&request, now),
            }
        }
        Ok(())
    }

    /// Notes the drive's counters at the phase boundaries `now` has passed.
    fn mark_phases(&mut self, now: Nanos) {
        if now < self.phase_edge_ahead {
            return;
        }
        let c = self.device.ftl().counters;
        let counters = (c.host_pages_written, c.nand_units_beyond_host());
        let phases = self.recorder.phases();
        self.phase_counters.resize(phases.len(), [None; 2]);
        for (phase, [start, end]) in phases.iter().zip(&mut self.phase_counters) {
            if start.is_none() && now >= phase.start {
                *start = Some(counters);
            }
            if end.is_none() && now >= phase.end {
                *end = Some(counters);
            }
        }
        self.phase_edge_ahead = phases
            .iter()
            .zip(&self.phase_counters)
            .flat_map(|(phase, [start, end])| {
                [
                    start.is_none().then_some(phase.start),
                    end.is_none().then_some(phase.end),
                ]
            })
            .flatten()
            .min()
            .unwrap_or(Nanos(u64::MAX));
    }

    fn request_done(&mut self, request: &Request, at: Nanos) {
        self.completed += 1;
        let latency = at - request.submitted;
        let job = self.jobs.get_mut(request.tenant.0 as usize);
        // fio counts nothing that completes in its job's ramp.
        if !job.as_ref().is_some_and(|job| job.in_ramp(at)) {
            self.recorder
                .request_done(request.op, request.len.0, latency, at);
        }
        if let Some(job) = job {
            let was_done = job.done_issuing();
            job.completed(request, at);
            // A latency target's search may clear the job's figures.
            let searching = job.job().shape.latency_target.is_some();
            self.jobs_moved |= was_done || searching || job.done_issuing();
        }
    }

    /// The run's report; `cut_short`: stopped before its end (phases are then
    /// cut at the stop, their rates over the time they ran).
    fn report(&mut self, sim: &Simulation, spec: &str, cut_short: bool) -> RunReport {
        if sim.workload.job_phases || sim.phases_end_with_run || cut_short {
            job_phases::settle(self.now, &mut self.recorder);
            self.phase_counters
                .resize(self.recorder.phases().len(), [None; 2]);
        }
        let c = self.device.ftl().counters;
        let at_end = (c.host_pages_written, c.nand_units_beyond_host());
        let mut phases = self.recorder.phase_reports();
        // Each phase's write amplification from the drive's counters at its
        // edges; `all` (last) over the whole run.
        let edges = self
            .phase_counters
            .iter()
            .map(|marks| (marks[0].unwrap_or(at_end), marks[1].unwrap_or(at_end)));
        for (report, (start, end)) in phases.iter_mut().zip(edges.chain([((0, 0), at_end)])) {
            report.waf = waf_between(start, end);
        }
        let stats = self.device.stats();
        // A drive no NAND is like is said first: every figure rests on it.
        let mut notes = sim.device.implausible();
        notes.extend(sim.notes.iter().cloned());
        for job in &self.jobs {
            let Some(bound) = job.backpressure() else {
                continue;
            };
            let l = job.listening;
            let mean = if l.delayed == 0 {
                0.0
            } else {
                l.delay_total.as_secs_f64() / l.delayed as f64
            };
            let mut note = format!(
                "job {} listens to back-pressure (bound {} ms): held {} times; {} of {} requests issued behind its schedule, by {:.2} s on average, {:.2} s at most",
                job.name(),
                bound.as_secs_f64() * 1e3,
                l.holds,
                l.delayed,
                job.issued(),
                mean,
                l.delay_max.as_secs_f64(),
            );
            if let Some(lag) = job.lag_at_stop() {
                note.push_str(&format!(
                    "; {:.2} s behind when it stopped (arrivals never issued)",
                    lag.as_secs_f64()
                ));
            }
            notes.push(note);
        }
        notes.extend(self.jobs.iter().flat_map(Generator::control_notes));
        notes.extend(self.below_rate_min());
        if let Some(tracker) = &self.tracker {
            notes.extend(tracker.ramp_notes(&self.jobs));
        }
        notes.extend(self.sched.notes());
        notes.extend(self.recorder.notes());
        if self.errors > 0 {
            notes.push(format!("{} requests failed in the drive", self.errors));
        }
        notes.extend(self.unfinished_note(sim));
        notes.extend(self.held_past_stop_notes(sim));
        notes.extend(self.gc_owed_note());
        notes.extend(self.unwritten_reads_note());
        notes.extend(self.partial_unit_writes_note());
        RunReport {
            scheduler: spec.to_string(),
            device: sim.device.name.clone(),
            phases,
            verify: None,
            cpu: None,
            device_stats: Some(device_report(&stats, self.device.aging())),
            unfinished: self.submitted - self.completed,
            requests: self.submitted,
            notes,
            series: self
                .recorder
                .take_series(self.device.ftl().counters.gc_pages_moved),
            interrupted: false,
        }
    }
}

/// For a job that listens to back-pressure: `Some(when to ask again)` if
/// its next request (a write or a trim, with the trims ahead of a write)
/// would wait longer than its bound. The wait is the longer of the
/// scheduler's expected wait for a request queued now and the oldest queued
/// request's wait so far (the estimate can be low; a stuck queue is not).
/// It asks again at the scheduler's next timer (limiters refill and control
/// loops move there), or after a quarter of the bound (100 us to 10 ms) when
/// that comes first or the scheduler keeps no timer.
fn must_wait(job: &mut Generator, sched: &dyn Scheduler, now: Nanos) -> Option<Nanos> {
    let bound = job.backpressure()?;
    let (op, trims) = job.next_classes(now)?;
    if op == Op::Read {
        return None;
    }
    let pressure = sched.pressure(now);
    let over = |op: Op| {
        let class = pressure.class(op);
        class.expected_wait.max(class.oldest_wait) > bound
    };
    let wait = over(op) || (trims && over(Op::Trim));
    if !wait {
        return None;
    }
    let backoff = Nanos(bound.0 / 4).clamp(Nanos::from_micros(100), Nanos::from_millis(10));
    let timer = sched.next_timer().filter(|t| *t > now);
    Some(timer.map_or(now + backoff, |t| t.min(now + backoff)))
}

/// The earlier of two times, either of which may be missing (folded pairwise:
/// cheaper than flattening an array every step).
fn earliest(a: Option<Nanos>, b: Option<Nanos>) -> Option<Nanos> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Write amplification between two (host pages written, GC pages moved)
/// marks; `None` when no host page was written.
fn waf_between(start: (u64, u64), end: (u64, u64)) -> Option<f64> {
    let host = end.0.saturating_sub(start.0);
    let moved = end.1.saturating_sub(start.1);
    (host > 0).then(|| round((host + moved) as f64 / host as f64, 3))
}

/// The report's summary of a drive's statistics.
pub fn device_report(stats: &DeviceStats, aging: Option<Aging>) -> DeviceReport {
    DeviceReport {
        precondition: aging.map(|a| a.to_string()),
        precondition_waf: aging.and_then(|a| a.steady_waf).map(|w| round(w, 3)),
        waf: round(stats.write_amplification(), 3),
        gc_pages_moved: stats.ftl.gc_pages_moved,
        erases: stats.ftl.blocks_erased,
        foreground_gc_blocks: stats.foreground_victims,
        background_gc_blocks: stats.background_victims,
        read_wait_behind_gc_s: round(stats.read_waits.behind_gc.as_secs_f64(), 3),
        read_wait_behind_program_s: round(stats.read_waits.behind_program.as_secs_f64(), 3),
        merged_writes: stats.merged_writes,
        merged_reads: stats.merged_reads,
        wear_erases_min: stats.wear.min,
        wear_erases_mean: round(stats.wear.mean, 2),
        wear_erases_max: stats.wear.max,
    }
}
