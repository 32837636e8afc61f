//! The real-time loop that joins request sources, a scheduler and the engine,
//! as the simulator's loop does in simulated time: hand finished commands to
//! the scheduler and their sources, tick the scheduler when due, let due
//! sources issue, dispatch until the scheduler holds back, then wait for the
//! next completion, arrival or timer.

use std::time::{Duration, Instant};

use iosteer_sched::{Command, DeviceView, Dispatch, Nanos, Outcome, Request, Scheduler};

use iosteer_workload::workload::Generator;

use crate::engine::{Engine, EngineError, Finished};

/// Where dispatched commands go: the io_uring [`Engine`] on a real target,
/// or an [`crate::emulate::Emulated`] drive in real time. Times are the
/// loop's clock (nanoseconds since the run began).
pub trait Backend {
    /// Slots and what is in flight, for the scheduler's dispatch.
    fn view(&self) -> DeviceView;
    /// Sends a command at `now` (it may sit in a submission queue until
    /// [`Backend::wait`] or [`Backend::submit_queued`]).
    fn submit(&mut self, command: Command, now: Nanos) -> Result<(), EngineError>;
    /// Sends what is queued without waiting.
    fn submit_queued(&mut self) -> Result<(), EngineError>;
    /// Sends what is queued and waits until something may have finished or
    /// `timeout` passes.
    fn wait(&mut self, now: Nanos, timeout: Duration) -> Result<(), EngineError>;
    /// Appends every command finished by `now` to `finished`.
    fn reap(&mut self, now: Nanos, finished: &mut Vec<Finished>);
    /// The drive's free blocks and GC pages moved so far, when it can tell
    /// (an emulated drive can; a real one cannot).
    fn drive_gauges(&self) -> Option<(u64, u64)> {
        None
    }
}

impl Backend for Engine {
    fn view(&self) -> DeviceView {
        Engine::view(self)
    }

    fn submit(&mut self, command: Command, _now: Nanos) -> Result<(), EngineError> {
        Engine::submit(self, command)
    }

    fn submit_queued(&mut self) -> Result<(), EngineError> {
        Engine::submit_queued(self)
    }

    fn wait(&mut self, _now: Nanos, timeout: Duration) -> Result<(), EngineError> {
        Engine::wait(self, timeout)
    }

    fn reap(&mut self, now: Nanos, finished: &mut Vec<Finished>) {
        Engine::reap(self, now, finished)
    }
}

/// Something that issues requests over time: a job.
pub trait Source {
    /// When it next wants to issue, if ever.
    fn next_at(&self) -> Option<Nanos>;
    /// Issues what is due at `now` into `out`, numbering from `next_id`.
    fn issue(&mut self, now: Nanos, next_id: &mut u64, out: &mut Vec<Request>);
    /// `request`, one of its requests, completed at `at`.
    fn completed(&mut self, request: &Request, at: Nanos);
    /// Will issue nothing more before the run's duration (a fio job that
    /// moved its size): when every source is done and has
    /// [`ended`](Self::ended), the run ends.
    fn done(&self) -> bool {
        false
    }
    /// The sources (indices) that must have ended before this one starts
    /// (fio's `stonewall`, `wait_for`); empty once it has started.
    fn waits_for(&self) -> &[usize] {
        &[]
    }
    /// Has ended at `now`: issued all it will and every request finished.
    fn ended(&self, _now: Nanos) -> bool {
        false
    }
    /// What it waited for has ended: it starts, counting from `now`.
    fn release(&mut self, _now: Nanos) {}
    /// When it stops by time, if it has started: it may end then, and the
    /// sources waiting for it start, so the loop wakes.
    fn stop_at(&self) -> Option<Nanos> {
        None
    }
    /// The job behind it, when it is one (for phases that follow jobs).
    fn generator(&self) -> Option<&Generator> {
        None
    }
}

/// Hears what the run does.
pub trait Observer {
    /// A request finished (through the target, or completed by the scheduler
    /// without it); `in_ramp`: within its job's `ramp_time`, so it counts in
    /// no figure.
    fn request_done(&mut self, request: &Request, outcome: Outcome, at: Nanos, in_ramp: bool);
    /// A request failed (told before its `request_done`), with the error the
    /// kernel gave (`errno`), if it gave one.
    fn request_failed(&mut self, _request: &Request, _errno: Option<i32>, _at: Nanos) {}
    /// Called about every second of the run.
    fn second(&mut self, now: Nanos, sched: &dyn Scheduler, backend: &dyn Backend);
    /// Called after each turn of the loop, with the sources as they are.
    fn turn(&mut self, _now: Nanos, _sources: &[Box<dyn Source>]) {}
}

/// How long to run.
#[derive(Copy, Clone, Debug)]
pub struct RunLimits {
    /// Sources stop issuing after this.
    pub duration: Nanos,
    /// How long requests may still finish after that.
    pub drain: Nanos,
}

/// What the loop did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunSummary {
    pub submitted: u64,
    pub completed: u64,
    pub elapsed: Nanos,
    /// The run was stopped before its end.
    pub interrupted: bool,
    /// The process's user and system CPU seconds over the run.
    pub cpu: Option<(f64, f64)>,
    /// Waits that ended more than [`LATE`] after they should have: the
    /// thread was not running (a busy machine). Arrivals and dispatches were
    /// that late, which distorts what a real-time run measures.
    pub late_wake_ups: u64,
    pub latest_wake_up: Nanos,
}

/// A wake-up this late is counted: several NAND reads' worth.
pub const LATE: Nanos = Nanos::from_millis(1);

impl RunSummary {
    fn note_wake_up(&mut self, late: Nanos) {
        if late > LATE {
            self.late_wake_ups += 1;
            self.latest_wake_up = self.latest_wake_up.max(late);
        }
    }
}

/// The process's user and system CPU seconds so far.
pub fn cpu_times() -> Option<(f64, f64)> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: getrusage writes one rusage through the pointer on success.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: it returned 0, so the struct is written.
    let usage = unsafe { usage.assume_init() };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some((seconds(usage.ru_utime), seconds(usage.ru_stime)))
}

/// The longest the loop sleeps at once, so `stop` and the per-second report
/// are heard promptly.
const MAX_WAIT: Duration = Duration::from_millis(50);

/// Where the loop reads the time: the wall clock, or a test's virtual
/// clock that its backend moves on when it waits.
pub trait Clock {
    /// Time since the run began.
    fn now(&self) -> Nanos;
}

/// The wall clock, from when it was made.
pub struct WallClock(Instant);

impl WallClock {
    pub fn starting_now() -> WallClock {
        WallClock(Instant::now())
    }
}

impl Clock for WallClock {
    fn now(&self) -> Nanos {
        Nanos(self.0.elapsed().as_nanos() as u64)
    }
}

/// Runs `sources` through `sched` into `engine` until the duration ends and
/// what was issued has finished (or the drain time passes), or `stop` says
/// so. Time is `clock`'s: [`WallClock`] for real runs; a virtual clock lets
/// a test run hours of faults in moments.
pub fn run<B: Backend>(
    engine: &mut B,
    sched: &mut dyn Scheduler,
    sources: &mut [Box<dyn Source>],
    limits: RunLimits,
    observer: &mut dyn Observer,
    stop: &dyn Fn() -> bool,
    clock: &dyn Clock,
) -> Result<RunSummary, EngineError> {
    let cpu_at_start = cpu_times();
    let clock = || clock.now();
    let mut summary = RunSummary::default();
    let (mut next_id, mut issued, mut finished) = (0u64, Vec::new(), Vec::new());
    let mut next_second = Nanos::from_secs(1);
    loop {
        let now = clock();
        engine.reap(now, &mut finished);
        for f in finished.drain(..) {
            summary.completed += f.command.requests.len() as u64;
            complete(sched, sources, observer, &f);
        }
        release_waiting(sources, now);
        if sched.next_timer().is_some_and(|t| t <= now) {
            let _ = sched.tick(now);
        }
        if now < limits.duration {
            issue_due(sources, now, &mut next_id, &mut issued);
            // A source may end on its due issue (steady state found since
            // it last looked), with nothing out: its waiters start now.
            if release_waiting(sources, now) {
                issue_due(sources, now, &mut next_id, &mut issued);
            }
        }
        for request in issued.drain(..) {
            summary.submitted += 1;
            sched.enqueue(request, now);
        }
        while let Some(d) = sched.dispatch(now, engine.view()) {
            match d {
                Dispatch::ToDevice(command) => engine.submit(command, now)?,
                Dispatch::CompletedWithoutDevice(request) => {
                    summary.completed += 1;
                    finish_request(sources, observer, &request, Outcome::Ok, now);
                }
            }
        }
        observer.turn(now, sources);
        if now >= next_second {
            observer.second(now, sched, &*engine);
            next_second += Nanos::from_secs(1);
        }
        let busy = summary.completed < summary.submitted;
        // Done issuing is not yet ended: a time-based job (fio's
        // `time_based`, a rate) lasts until its stop, as fio's does, even
        // when its next request would come after it.
        let all_done = !sources.is_empty() && sources.iter().all(|s| s.done() && s.ended(now));
        if ((now >= limits.duration || all_done) && !busy) || now >= limits.duration + limits.drain
        {
            break;
        }
        if stop() {
            // Past the run's time only the drain is cut: what was meant to
            // be measured was (the requests still out are counted apart).
            summary.interrupted = now < limits.duration;
            break;
        }
        let wake = [
            sources.iter().filter_map(|s| s.next_at()).min(),
            sources
                .iter()
                .filter_map(|s| s.stop_at())
                .filter(|t| *t > now)
                .min(),
            sched.next_timer(),
            Some(next_second),
            Some(limits.duration),
        ]
        .into_iter()
        .flatten()
        .filter(|t| *t > now)
        .min()
        .unwrap_or(now);
        let wait = Duration::from_nanos((wake - now).0).min(MAX_WAIT);
        if wait.is_zero() {
            engine.submit_queued()?;
        } else {
            engine.wait(now, wait)?;
            summary.note_wake_up(clock() - (now + Nanos(wait.as_nanos() as u64)));
        }
    }
    summary.elapsed = clock();
    summary.cpu = cpu_times()
        .zip(cpu_at_start)
        .map(|((user, system), (user0, system0))| (user - user0, system - system0));
    Ok(summary)
}

/// Issues what every source has due at `now`.
fn issue_due(
    sources: &mut [Box<dyn Source>],
    now: Nanos,
    next_id: &mut u64,
    out: &mut Vec<Request>,
) {
    for source in sources.iter_mut() {
        while source.next_at().is_some_and(|t| t <= now) {
            source.issue(now, next_id, out);
        }
    }
}

/// Starts the sources whose stonewall has fallen: every source they wait
/// for has ended. Whether it started any.
fn release_waiting(sources: &mut [Box<dyn Source>], now: Nanos) -> bool {
    let mut released = false;
    for i in 0..sources.len() {
        let ready = {
            let waits = sources[i].waits_for();
            !waits.is_empty()
                // The latest groups first: most likely still running.
                && (waits.iter().rev()).all(|&j| sources.get(j).is_none_or(|s| s.ended(now)))
        };
        if ready {
            sources[i].release(now);
            released = true;
        }
    }
    released
}

fn complete(
    sched: &mut dyn Scheduler,
    sources: &mut [Box<dyn Source>],
    observer: &mut dyn Observer,
    f: &Finished,
) {
    let _ = sched.complete(&f.command.completion(f.outcome), f.at);
    for request in &f.command.requests {
        if f.outcome == Outcome::Error {
            observer.request_failed(request, f.errno, f.at);
        }
        finish_request(sources, observer, request, f.outcome, f.at);
    }
}

fn finish_request(
    sources: &mut [Box<dyn Source>],
    observer: &mut dyn Observer,
    request: &Request,
    outcome: Outcome,
    at: Nanos,
) {
    let source = sources.get_mut(request.tenant.0 as usize);
    let in_ramp = source
        .as_ref()
        .and_then(|source| source.generator())
        .is_some_and(|job| job.in_ramp(at));
    observer.request_done(request, outcome, at, in_ramp);
    if let Some(source) = source {
        source.completed(request, at);
    }
}
