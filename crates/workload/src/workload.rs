//! Workloads: jobs that issue requests over simulated time.
//!
//! A [`Job`] is either synthetic (a pattern, block sizes, a region and an
//! arrival process, in the spirit of a fio job) or a recorded trace. Arrivals
//! are open loop at a rate (fixed intervals or Poisson), capped by `iodepth`
//! requests outstanding as fio does, or closed loop (no rate: a new request
//! as soon as one completes); either may think (`thinktime`, as fio's).
//!
//! A synthetic job may listen to back-pressure ([`Synthetic::backpressure`]):
//! before it issues a write or a trim it asks the scheduler's
//! [`pressure()`](iosteer_sched::Scheduler::pressure) for that class, and
//! while a request issued now would wait longer than its bound it holds the
//! request back and asks again at the scheduler's next tick. An open-loop
//! listener delays its arrivals rather than dropping them: it keeps its
//! schedule and catches up, as fast as the pressure allows, when the
//! scheduler drains, as a producer that has the bytes to write (a video
//! fill) does. So the backlog waits in the producer, not in the scheduler.

use iosteer_sched::{LifetimeHint, Nanos, Op, Request, TenantId};
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::depth_search::DepthSearch;
use crate::report::Phase;
use crate::steady_state::SteadyMember;
pub use crate::trace::TraceRecords;

pub use crate::job_shape::JobShape;
use crate::job_shape::Rounds;

/// How requests arrive.
#[derive(Clone, Debug, PartialEq)]
pub struct Arrival {
    /// Requests per second; `None` with `bytes_per_s` also `None` is closed loop.
    pub iops: Option<f64>,
    /// Bytes per second, turned into requests per second by the mean size.
    pub bytes_per_s: Option<f64>,
    /// Poisson (exponential gaps) rather than fixed intervals.
    pub poisson: bool,
    /// Most requests outstanding.
    pub iodepth: u32,
    /// fio's think time: after every `thinktime_blocks` completions the job
    /// lets its requests out complete, then pauses this long.
    pub thinktime: Nanos,
}

/// What a synthetic job issues.
#[derive(Clone, Debug, PartialEq)]
pub struct Synthetic {
    /// Share of reads among reads and writes, in percent.
    pub read_percent: u32,
    /// Issue trims instead of reads and writes.
    pub trim: bool,
    pub sequential: bool,
    /// Block sizes, bytes, inclusive; multiples of `align`.
    pub block_min: u64,
    pub block_max: u64,
    pub align: u64,
    /// The byte range the job works in.
    pub offset: u64,
    pub size: u64,
    pub arrival: Arrival,
    /// Sequential writers: trim each `trim_ahead` bytes of the region just
    /// before writing over it (content replaced by new content).
    pub trim_ahead: Option<u64>,
    pub hint: LifetimeHint,
    /// Back-pressure bound (a project option, `iosteer_backpressure` in job
    /// files): `Some(bound)` makes the job listen. Before it issues a write or
    /// a trim (with the trims ahead of a write) it reads
    /// `Scheduler::pressure(now)` for the class; when the longer of the
    /// expected wait of a request queued now and the oldest queued request's
    /// wait is over `bound`, it does not issue, and tries again at the
    /// scheduler's next timer (or after `bound / 4`, 100 us to 10 ms, if that
    /// comes first or the scheduler has none). Reads are never held. An
    /// open-loop job keeps its schedule while held (arrivals are delayed, not
    /// skipped) and catches up when the pressure falls; a closed-loop one
    /// just waits. `None`: deaf, the job issues on its schedule whatever the
    /// scheduler holds (as fio does).
    pub backpressure: Option<Nanos>,
}

impl Synthetic {
    /// Random reads of `block` bytes over `[offset, offset + size)`, arriving
    /// as `arrival` says: no trims, no lifetime hint, deaf to back-pressure.
    /// Other jobs change fields by struct update.
    pub fn reads(block: u64, offset: u64, size: u64, arrival: Arrival) -> Synthetic {
        Synthetic {
            read_percent: 100,
            trim: false,
            sequential: false,
            block_min: block,
            block_max: block,
            align: block,
            offset,
            size,
            arrival,
            trim_ahead: None,
            hint: LifetimeHint::None,
            backpressure: None,
        }
    }
}

impl Arrival {
    /// Open loop at `iops` or `bytes_per_s` with exponential gaps (or fixed
    /// ones unless `poisson`), at most `iodepth` outstanding, no think time.
    pub fn open(
        iops: Option<f64>,
        bytes_per_s: Option<f64>,
        poisson: bool,
        iodepth: u32,
    ) -> Arrival {
        Arrival {
            iops,
            bytes_per_s,
            poisson,
            iodepth,
            thinktime: Nanos::ZERO,
        }
    }
}

/// One recorded request of a trace.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    pub at: Nanos,
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    /// A write the trace marks FUA (blktrace's `F` after the direction):
    /// replayed as one ([`iosteer_sched::Request::fua`]).
    pub fua: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum JobKind {
    Synthetic(Synthetic),
    Trace(TraceRecords),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub name: String,
    pub kind: JobKind,
    /// When the job starts (fio's `startdelay`).
    pub start: Nanos,
    /// When it stops issuing (start + fio's `runtime`), if ever.
    pub stop: Option<Nanos>,
    /// What a fio job file adds: byte limits, stonewalls, finer shapes
    /// ([`JobShape::default()`] for a plain job).
    pub shape: JobShape,
}

/// What a run issues and how it is measured: the same in the simulator and
/// on a real drive, so both worlds take one description of a workload.
#[derive(Clone, Debug)]
pub struct Workload {
    pub jobs: Vec<Job>,
    /// Named phases by completion time; the report adds `all`.
    pub phases: Vec<Phase>,
    /// Phases follow the jobs, as a fio job file's do
    /// ([`crate::job_phases`]): `phases` holds the whole-workload `job`
    /// phase, and the run adds one per set of jobs running together.
    pub job_phases: bool,
    /// Reads slower than this count as SLO violations (35 ms in the paper).
    pub slo: Nanos,
    /// Every random draw of the jobs comes from this seed.
    pub seed: u64,
}

impl Workload {
    /// The SLO a read is judged by unless a run says otherwise: the paper's.
    pub const DEFAULT_SLO: Nanos = Nanos::from_millis(35);

    /// `jobs` measured in `phases` (named by completion time).
    pub fn in_phases(jobs: Vec<Job>, phases: Vec<Phase>, seed: u64) -> Workload {
        Workload {
            jobs,
            phases,
            job_phases: false,
            slo: Workload::DEFAULT_SLO,
            seed,
        }
    }

    /// A job file's `jobs`, in phases that follow the jobs (stonewall
    /// groups, start delays, runtimes, byte limits).
    pub fn of_job_file(jobs: Vec<Job>, seed: u64) -> Workload {
        Workload {
            job_phases: true,
            ..Workload::in_phases(jobs, vec![crate::job_phases::whole_workload()], seed)
        }
    }
}

/// The next request of a synthetic job, drawn before it is issued so that a
/// listening job can look at its class first.
#[derive(Copy, Clone, Debug)]
struct Planned {
    op: Op,
    offset: u64,
    len: u64,
}

/// What a listening job's holds cost it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Listening {
    /// Times the job asked and was told to wait.
    pub holds: u64,
    /// Requests issued later than their arrival because of a hold (behind
    /// the job's schedule), and by how much.
    pub delayed: u64,
    pub delay_total: Nanos,
    pub delay_max: Nanos,
}

/// A running job: when it wants to issue next, and what.
#[derive(Debug)]
pub struct Generator {
    job: Job,
    tenant: TenantId,
    rng: SmallRng,
    /// When the next request is due (on an open-loop job's schedule).
    due: Option<Nanos>,
    /// A listening job held back by pressure asks again then.
    retry_at: Option<Nanos>,
    /// Held since `due`: the job is behind its schedule and catches up.
    behind: bool,
    /// Open-loop arrivals keep their schedule however late they are issued
    /// (see [`Generator::keep_schedule`]).
    keep_schedule: bool,
    planned: Option<Planned>,
    outstanding: u32,
    /// Next sequential offset of each direction (read, write, trim), from
    /// the region's start: fio walks them apart (its `last_pos[ddir]`).
    cursors: [u64; 3],
    trimmed_up_to: u64,
    /// A trace job's requests still to issue.
    trace: Option<TraceQueue>,
    issued: u64,
    /// Of them, those issued in the job's ramp: fio counts `number_ios`
    /// from the ramp's end (fio 3.33, `rate_iops=100 number_ios=150
    /// ramp_time=1`: 251 requests).
    issued_in_ramp: u64,
    /// Bytes issued per direction (read, write, trim; flushes count none);
    /// their sum against `shape.bytes_limit`.
    direction_bytes: [u64; 3],
    /// Requests issued per direction, against `shape.rate_iops_min`.
    direction_requests: [u64; 3],
    /// When the job finished (its last request completed), once it has.
    finished_at: Option<Nanos>,
    /// When its last request so far completed.
    last_completion: Option<Nanos>,
    pub listening: Listening,
    /// Waiting for the jobs in `shape.after` to end.
    waiting: bool,
    /// fio-shaped draws: see [`crate::job_shape`].
    shaped: ShapedState,
    /// fio's latency target: the depth the job searches.
    depth_search: Option<DepthSearch>,
    /// fio's steady state: the job's, or its reporting group's, judgement,
    /// and whether the job has seen it reached (it looks on its issues and
    /// completions).
    steady: Option<SteadyMember>,
    steady_reached: bool,
    /// What the loop asks of every job every step, worked out once per
    /// change of the job ([`refresh`](Self::refresh)) rather than per ask:
    /// [`next_at`](Self::next_at) and [`done_issuing`](Self::done_issuing).
    issues_at: Option<Nanos>,
    issuing_done: bool,
    /// Asked to issue at or past its stop, arrivals still owed from before
    /// it (behind its rate): fio ends a job at its runtime whatever it owes.
    past_stop: bool,
}

impl Generator {
    pub fn new(job: Job, index: u32, seed: u64) -> Generator {
        let start = job.start;
        let trace = match &job.kind {
            JobKind::Trace(records) => Some(TraceQueue::new(records)),
            JobKind::Synthetic(_) => None,
        };
        let next_at = match &trace {
            Some(trace) => trace.next.map(|r| r.at.max(start)),
            None => Some(start),
        };
        let trimmed_up_to = match &job.kind {
            JobKind::Synthetic(s) => s.offset,
            JobKind::Trace(_) => 0,
        };
        let waiting = !job.shape.after.is_empty();
        let mut generator = Generator {
            due: if waiting { None } else { next_at },
            waiting,
            direction_bytes: [0; 3],
            direction_requests: [0; 3],
            finished_at: None,
            last_completion: None,
            shaped: ShapedState {
                rounds: job.shape.rounds.clone().map(rounds::RoundsState::new),
                // fio's `verify_only` job issues no sync, `end_fsync` or not.
                flushed_at_end: job.shape.rounds.as_ref().is_some_and(Rounds::dry),
                ..ShapedState::default()
            },
            depth_search: new_depth_search(&job),
            steady: job.shape.steady_state.clone().map(SteadyMember::alone),
            steady_reached: false,
            tenant: TenantId(index),
            rng: SmallRng::seed_from_u64(
                seed ^ (u64::from(index) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            retry_at: None,
            behind: false,
            keep_schedule: false,
            planned: None,
            outstanding: 0,
            cursors: [0; 3],
            trimmed_up_to,
            trace,
            issued: 0,
            issued_in_ramp: 0,
            listening: Listening::default(),
            job,
            issues_at: None,
            issuing_done: false,
            past_stop: false,
        };
        generator.steady_started();
        generator.refresh();
        generator
    }

    /// Requests issued (flushes and trims ahead of writes count none).
    pub fn issued(&self) -> u64 {
        self.issued
    }

    /// Bytes issued (flushes count none), against `shape.bytes_limit`.
    pub fn bytes_issued(&self) -> u64 {
        self.direction_bytes.iter().sum()
    }

    /// Works out again what [`next_at`](Self::next_at) and
    /// [`done_issuing`](Self::done_issuing) answer: every method that
    /// changes what they read ends here.
    fn refresh(&mut self) {
        self.follow_queue_drain();
        let resume = self.resume_at();
        let over = self.issuing_over_at(resume);
        let end_flush = self.job.shape.end_flush && !self.shaped.flushed_at_end && over;
        let flush_next = self.shaped.flush_next;
        self.issuing_done = over && !end_flush && !flush_next;
        self.shaped.only_sync_left = over && !end_flush && flush_next;
        self.issues_at = if flush_next {
            // At once when a slot frees, whatever the schedule.
            (!self.at_depth()).then_some(self.shaped.last_issue_at)
        } else if end_flush {
            Some(self.shaped.last_issue_at)
        } else {
            resume.filter(|_| !self.iodepth_full())
        };
        self.leave_flow_when_finished();
        if self.steady.is_some() {
            self.leave_steady_state_when_finished();
        }
    }

    pub fn name(&self) -> &str {
        &self.job.name
    }

    /// The job's back-pressure bound, if it listens.
    pub fn backpressure(&self) -> Option<Nanos> {
        match &self.job.kind {
            JobKind::Synthetic(s) => s.backpressure,
            JobKind::Trace(_) => None,
        }
    }

    /// The class of the next request, and whether trims ahead of it are due
    /// too (drawing it now; [`issue`](Self::issue) then issues it).
    pub fn next_classes(&mut self, now: Nanos) -> Option<(Op, bool)> {
        if !matches!(self.job.kind, JobKind::Synthetic(_)) {
            return None;
        }
        let planned = match self.planned {
            Some(p) => p,
            None => {
                let p = self.draw(now);
                self.planned = Some(p);
                p
            }
        };
        Some((planned.op, self.trims_due(planned)))
    }

    /// Pressure says wait: ask again at `retry` (after `now`).
    pub fn hold(&mut self, now: Nanos, retry: Nanos) {
        self.listening.holds += 1;
        self.behind = true;
        self.retry_at = Some(retry.max(now + Nanos(1)));
        self.refresh();
    }

    /// How far behind its schedule a held open-loop job was when it stopped:
    /// arrivals due before `stop` that it never issued.
    pub fn lag_at_stop(&self) -> Option<Nanos> {
        let stop = self.job.stop?;
        let at = self.due?;
        (self.behind && at < stop).then(|| stop - at)
    }

    /// Real time: the loop wakes a little after each arrival is due, and an
    /// open-loop job that timed its next arrival from that wake-up would fall
    /// short of its rate by the sum of the delays (about 10% at 1,700 IOPS).
    /// Kept, the schedule is the job's, as with fio's `rate`: a late arrival
    /// is issued at once and the next is one gap after this one was due.
    /// The simulator issues every arrival exactly when due; a job file's
    /// job keeps its schedule anyway ([`JobShape::rate_catches_up`]), a
    /// scenario's, held by its iodepth, resumes from when it was freed.
    pub fn keep_schedule(mut self) -> Generator {
        self.keep_schedule = true;
        self
    }

    /// The jobs (indices) that must end before this one starts; empty once
    /// it has started.
    pub fn waits_for(&self) -> &[usize] {
        if self.waiting {
            &self.job.shape.after
        } else {
            &[]
        }
    }

    /// Whether `now` lies in the job's `ramp_time`: fio counts none of the
    /// requests that complete then, in its figures or its logs.
    pub fn in_ramp(&self, now: Nanos) -> bool {
        now < self.job.start + self.job.shape.ramp
    }

    /// The jobs it waited for have ended: the job starts now, or at its
    /// `startdelay` from the run's start if that is later (fio 3.33's
    /// `run_threads` holds a job until its start delay has passed since
    /// the run began, whatever released it), and its runtime counts from
    /// its start.
    pub fn release(&mut self, now: Nanos) {
        if !self.waiting {
            return;
        }
        self.waiting = false;
        let delay = self.job.start;
        let start = delay.max(now);
        self.job.start = start;
        self.job.stop = self.job.stop.map(|stop| stop - delay + start);
        self.due = Some(self.job.start);
        self.depth_search = new_depth_search(&self.job);
        self.steady_started();
        self.refresh();
    }

    /// Every request the job issues when each completes the moment it is
    /// issued, in order (a job waiting for others released at once): what
    /// a job asks of a drive, for tests and for looking at a job file.
    pub fn requests_unloaded(mut self) -> Vec<Request> {
        self.release(Nanos::ZERO);
        let (mut next_id, mut out) = (0, Vec::new());
        while let Some(at) = self.next_at() {
            let before = out.len();
            self.issue(at, &mut next_id, &mut out);
            for request in &out[before..] {
                self.completed(request, at);
            }
        }
        out
    }

    /// The job as it runs (a released job's start and stop are absolute).
    pub fn job(&self) -> &Job {
        &self.job
    }

    /// Bytes a synthetic job issued in each direction (read, write, trim).
    pub fn bytes_by_direction(&self) -> [u64; 3] {
        self.direction_bytes
    }

    /// Issued its `bytes_limit` or `ios_limit` (a job in fio's rounds:
    /// its last round is over, read-back and flush included), or its
    /// latency target's search ended it ([`crate::depth_search`]), or it
    /// reached steady state ([`crate::steady_state`]).
    pub fn limit_reached(&self) -> bool {
        let by_count = match &self.shaped.rounds {
            Some(rounds) => rounds.done(),
            None => self.own_limit_reached(),
        };
        by_count || self.stopped_by_control()
    }

    /// Its latency target's search, its steady state, a request over its
    /// `max_latency` or `create_only` ended the job.
    fn stopped_by_control(&self) -> bool {
        self.depth_search
            .as_ref()
            .is_some_and(DepthSearch::ends_job)
            || self.steady_reached
            || self.shaped.too_slow.is_some()
            || self.job.shape.create_only
    }

    /// Will issue nothing more: its limit reached, its stop passed (or held
    /// past it), or its trace done, and its closing flush (`end_fsync`) out.
    /// A job still waiting has not started.
    pub fn done_issuing(&self) -> bool {
        self.issuing_done
    }

    /// [`done_issuing`](Self::done_issuing) but for the closing flush.
    fn issuing_over(&self) -> bool {
        self.issuing_over_at(self.resume_at())
    }

    fn issuing_over_at(&self, resume: Option<Nanos>) -> bool {
        !self.waiting && resume.is_none() && !self.round_pending()
    }

    /// When the job issues next by its schedule, a held job's retry and its
    /// rates, its iodepth aside; `None` when it will not: its limit reached,
    /// nothing scheduled, or that moment at or past its stop.
    fn resume_at(&self) -> Option<Nanos> {
        if self.limit_reached() || self.past_stop {
            return None;
        }
        let at = match self.round_resume() {
            Some(reading) => reading?,
            None => self.due?,
        };
        let at = match self.writes_open() {
            true => self.rate_allows(self.retry_at.map_or(at, |retry| retry.max(at))),
            false => at,
        };
        self.job.stop.is_none_or(|stop| at < stop).then_some(at)
    }

    /// A synthetic job, or a paced trace, with its iodepth of requests out,
    /// or one letting a full queue drain.
    fn iodepth_full(&self) -> bool {
        let shaped = &self.shaped;
        shaped.draining.is_some()
            || !shaped.trims_awaited.is_empty()
            || self.at_depth()
            || shaped.overlaps.held
            || shaped.draining_to_think
    }

    /// Done issuing and every request completed: fio's end of a job.
    pub fn finished(&self) -> bool {
        // The count first: the loop asks every step, and a running job has
        // requests out far more often than it is done issuing.
        self.outstanding == 0 && self.done_issuing()
    }

    /// Ended at `now`, as fio ends a job: finished, and a job stopped by
    /// time (not by its byte or request limit, nor by its trace's end) has
    /// reached its stop, even when its last arrival came before.
    pub fn ended(&self, now: Nanos) -> bool {
        let by_time = self.job.stop.is_none_or(|stop| now >= stop);
        // A sync owed past the stop does not keep the job on where nothing
        // issues any more (`iosteer run` past its length).
        let owes_a_sync = self.shaped.only_sync_left && self.outstanding == 0;
        (self.finished() || (owes_a_sync && by_time))
            && (self.limit_reached() || self.trace_over() || by_time)
    }

    /// When the job next issues, if it will (not blocked on its iodepth).
    pub fn next_at(&self) -> Option<Nanos> {
        self.issues_at
    }

    /// Issues what is due at `now` into `out` (ids from `next_id`).
    pub fn issue(&mut self, now: Nanos, next_id: &mut u64, out: &mut Vec<Request>) {
        if self.steady.is_some() && self.steady_stops(now) {
            // Steady state came since the job last looked: it stops here.
        } else if std::mem::take(&mut self.shaped.flush_next) {
            // The sync after a write issued before the stop still goes, as
            // fio's time-based job goes on to it.
            self.push_flush(now, next_id, out);
        } else if self.end_flush_pending() {
            self.shaped.flushed_at_end = true;
            self.push_flush(now, next_id, out);
        } else if self.job.stop.is_some_and(|stop| now >= stop) {
            self.past_stop = true;
        } else if !self.issue_in_round(now, next_id, out) {
            match self.job.kind {
                JobKind::Trace(_) => self.issue_trace(now, next_id, out),
                JobKind::Synthetic(_) => self.issue_synthetic(now, next_id, out),
            }
        }
        self.refresh();
    }

    fn issue_synthetic(&mut self, now: Nanos, next_id: &mut u64, out: &mut Vec<Request>) {
        let JobKind::Synthetic(s) = &self.job.kind else {
            unreachable!()
        };
        let s = s.clone();
        if self.held_by_flow(now) {
            return;
        }
        let Planned {
            op,
            offset,
            mut len,
        } = match self.planned.take() {
            Some(p) => p,
            None => self.draw(now),
        };
        if self.job.shape.serialize_overlap && self.shaped.overlaps.hold(offset, len) {
            self.planned = Some(Planned { op, offset, len });
            return;
        }
        let cut = s.sequential || self.job.shape.random_map_holds_bytes();
        if let Some(limit) = self.job.shape.bytes_limit.filter(|_| cut) {
            // The last request stops at the limit, as fio's does, but a
            // random one's not where fio's random map does not hold it
            // ([`JobShape::random_map_holds_bytes`]).
            let left = limit.saturating_sub(self.bytes_issued());
            if left < len {
                len = (left / s.align * s.align).max(s.align.min(len));
            }
        }
        let planned = Planned { op, offset, len };
        if self.send_trims_ahead(&s, planned, now, next_id, out) {
            self.planned = Some(planned);
            return;
        }
        out.push(
            Request::new(*next_id, op, offset, len, now)
                .with_tenant(self.tenant)
                .with_hint(s.hint)
                .with_fua(self.job.shape.fua_writes()),
        );
        // The next write has its own trim to send (`trimwrite`).
        self.shaped.write_trimmed = false;
        if self.job.shape.serialize_overlap {
            self.shaped.overlaps.issued(*next_id, offset, len);
        }
        *next_id += 1;
        self.issued += 1;
        self.record_in_round(op, offset, len);
        self.start_draining_to_think();
        if self.in_ramp(now) {
            self.issued_in_ramp += 1;
        }
        if let Some(direction) = direction_index(op) {
            self.direction_bytes[direction] += len;
            self.direction_requests[direction] += 1;
        }
        self.outstanding += 1;
        self.retry_at = None;
        self.spend_rate(op, s.arrival.poisson);
        self.syncs_after(op, now, next_id, out);
        // A job behind its schedule (held by pressure) keeps the schedule:
        // the next arrival is one gap after this one was due, not after now.
        let open_loop = s.arrival.iops.is_some() || s.arrival.bytes_per_s.is_some();
        if let Some(scheduled) = self.shaped.schedule_before_think.take() {
            self.due = Some(scheduled);
            self.shaped.catching_up = true;
        }
        let catching_up = std::mem::take(&mut self.shaped.catching_up);
        let base = match self.due {
            Some(due)
                if open_loop
                    && (self.behind
                        || self.keep_schedule
                        || catching_up
                        || self.job.shape.rate_catches_up) =>
            {
                let delay = now - due.min(now);
                if self.behind && delay > Nanos::ZERO {
                    self.listening.delayed += 1;
                    self.listening.delay_total += delay;
                    self.listening.delay_max = self.listening.delay_max.max(delay);
                }
                due
            }
            _ => now,
        };
        let next = base + self.gap(&s);
        if next > now || !open_loop {
            self.behind = false;
        } else {
            self.shaped.catching_up = catching_up;
        }
        self.due = Some(next);
        self.shaped.last_issue_at = now;
    }

    /// `request`, one of the job's, completed at `now`.
    #[inline]
    pub fn completed(&mut self, request: &Request, now: Nanos) {
        self.outstanding = self.outstanding.saturating_sub(1);
        if request.op == Op::Trim && !self.shaped.trims_awaited.is_empty() {
            self.shaped.trims_awaited.retain(|&id| id != request.id.0);
        }
        self.check_max_latency(request, now);
        self.search_depth(request, now);
        if self.steady.is_some() {
            self.steady_completed(request, now);
        }
        self.flow_completed(now);
        if self.job.shape.serialize_overlap {
            self.shaped.overlaps.completed(request.id.0);
        }
        // The job thinks after its writes, the last of a round's too (fio
        // thinks once more before it reads back), not after read-backs.
        let thought = match self.round_writing() {
            true => self.think_after_completion(now),
            false => Nanos::ZERO,
        };
        self.round_completed(request, now, thought);
        self.refresh();
        self.last_completion = Some(now);
        if self.finished_at.is_none() && self.finished() {
            self.finished_at = Some(now);
        }
    }

    /// When the job finished (its last request completed), if it has.
    pub fn finished_at(&self) -> Option<Nanos> {
        self.finished_at
    }
}

mod controls;
mod draw;
mod reach;
pub use controls::join_flows;
use controls::new_depth_search;
pub(crate) use draw::map_unit;
mod random_map;
mod rates;
use rates::direction_index;
mod read_back;
mod rounds;
mod shaped;
mod syncs;
use shaped::ShapedState;
mod trace_job;
mod trims_ahead;
use trace_job::TraceQueue;
pub use trace_job::{MAX_BACKLOG, TRACE_DRAIN};
#[cfg(test)]
mod tests;
