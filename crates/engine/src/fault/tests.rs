use super::*;
use crate::runner::{Clock, Observer, RunLimits, RunSummary, Source};
use iosteer_sched::{policy, Request, Scheduler};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::cell::Cell;
use std::rc::Rc;

/// Operations per policy over all its cases; `IOSTEER_FAULT_OPS` sets
/// it (`scripts/fault-soak.sh` runs 100,000).
fn ops_per_policy() -> u64 {
    std::env::var("IOSTEER_FAULT_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400)
}

/// Cases (seeds and fault mixes) per policy.
const CASES: u32 = 4;

type SharedClock = Rc<Cell<Nanos>>;

struct VirtualClock(SharedClock);

impl Clock for VirtualClock {
    fn now(&self) -> Nanos {
        self.0.get()
    }
}

/// A drive in virtual time: `slots` commands at once, each done a fixed
/// time after it is sent; waiting moves the shared clock on to the next
/// completion or the timeout, so seconds of delays and stalls cost
/// nothing.
struct VirtualDrive {
    clock: SharedClock,
    slots: u32,
    busy: Vec<(Nanos, Command)>,
}

impl Backend for VirtualDrive {
    fn view(&self) -> DeviceView {
        DeviceView::new(self.slots, self.busy.len() as u32)
    }

    fn submit(&mut self, command: Command, now: Nanos) -> Result<(), EngineError> {
        if self.busy.len() as u32 >= self.slots {
            return Err(EngineError::Full {
                in_flight: self.busy.len() as u32,
                slots: self.slots,
            });
        }
        let latency = match command.op {
            Op::Read => Nanos::from_micros(100),
            Op::Write => Nanos::from_micros(300),
            Op::Trim => Nanos::from_millis(1),
            Op::Flush => Nanos::from_millis(2),
        };
        self.busy.push((now + latency, command));
        Ok(())
    }

    fn submit_queued(&mut self) -> Result<(), EngineError> {
        Ok(())
    }

    fn wait(&mut self, now: Nanos, timeout: Duration) -> Result<(), EngineError> {
        let until = now + Nanos(timeout.as_nanos() as u64);
        let next = self.busy.iter().map(|(done, _)| *done).min();
        let to = next.map_or(until, |n| n.min(until));
        self.clock.set(self.clock.get().max(to));
        Ok(())
    }

    fn reap(&mut self, now: Nanos, finished: &mut Vec<Finished>) {
        let (mut done, busy): (Vec<_>, Vec<_>) = std::mem::take(&mut self.busy)
            .into_iter()
            .partition(|(at, _)| *at <= now);
        self.busy = busy;
        done.sort_by_key(|(at, _)| *at);
        finished.extend(done.into_iter().map(|(at, command)| Finished {
            command,
            at,
            outcome: Outcome::Ok,
            errno: None,
            data: None,
        }));
    }
}

/// Passes everything through, noting each request's errno as it comes
/// back from the backend.
struct Recording<B> {
    inner: B,
    errnos: HashMap<u64, Option<i32>>,
}

impl<B: Backend> Backend for Recording<B> {
    fn view(&self) -> DeviceView {
        self.inner.view()
    }

    fn submit(&mut self, command: Command, now: Nanos) -> Result<(), EngineError> {
        self.inner.submit(command, now)
    }

    fn submit_queued(&mut self) -> Result<(), EngineError> {
        self.inner.submit_queued()
    }

    fn wait(&mut self, now: Nanos, timeout: Duration) -> Result<(), EngineError> {
        self.inner.wait(now, timeout)
    }

    fn reap(&mut self, now: Nanos, finished: &mut Vec<Finished>) {
        let from = finished.len();
        self.inner.reap(now, finished);
        for f in &finished[from..] {
            for request in &f.command.requests {
                self.errnos.insert(request.id.0, f.errno);
            }
        }
    }
}

/// `left` requests of every kind, about `gap` apart, over 64 MiB, at
/// most [`OUTSTANDING`] at once (an application's own concurrency: a
/// stalled device backs it up instead of queueing without end).
struct RandomSource {
    dice: SplitMix64,
    left: u64,
    next: Nanos,
    gap: Nanos,
    outstanding: u64,
    /// Requests completed, shared with the loop's stop test.
    completed: Rc<Cell<u64>>,
}

const OUTSTANDING: u64 = 32;

impl Source for RandomSource {
    fn next_at(&self) -> Option<Nanos> {
        (self.left > 0 && self.outstanding < OUTSTANDING).then_some(self.next)
    }

    fn issue(&mut self, now: Nanos, next_id: &mut u64, out: &mut Vec<Request>) {
        let op = match self.dice.next_u64() % 10 {
            0..=4 => Op::Read,
            5..=7 => Op::Write,
            8 => Op::Trim,
            _ => Op::Flush,
        };
        let (offset, len) = match op {
            Op::Flush => (0, 0),
            _ => (
                self.dice.next_u64() % 16384 * 4096,
                (1 + self.dice.next_u64() % 16) * 4096,
            ),
        };
        out.push(Request::new(*next_id, op, offset, len, now));
        *next_id += 1;
        self.left -= 1;
        self.outstanding += 1;
        self.next = now + Nanos(1 + self.dice.next_u64() % (2 * self.gap.0));
    }

    fn completed(&mut self, _request: &Request, at: Nanos) {
        self.outstanding -= 1;
        self.next = self.next.max(at);
        self.completed.set(self.completed.get() + 1);
    }
}

/// Counts each request's completions and checks, every second, that
/// the scheduler's statistics, its pressure and the backend agree.
#[derive(Default)]
struct Checker {
    done: HashMap<u64, (u32, Outcome)>,
    failed: [u64; 4],
    problems: Vec<String>,
    last_completion: Nanos,
    /// Set when requests wait and none has completed for [`STUCK`]:
    /// the run stops there.
    stuck: Rc<Cell<bool>>,
}

/// Longer than any delay plus any stall ([`FaultConfig::mixed`]'s 2 s
/// and 5 s) plus a policy's longest hold: a queue with requests and no
/// completion for this long is stuck.
const STUCK: Nanos = Nanos::from_secs(60);

fn class_index(op: Op) -> usize {
    Op::ALL
        .iter()
        .position(|o| *o == op)
        .expect("one of Op::ALL")
}

impl Observer for Checker {
    fn request_done(&mut self, request: &Request, outcome: Outcome, at: Nanos, _: bool) {
        self.last_completion = self.last_completion.max(at);
        let entry = self.done.entry(request.id.0).or_insert((0, outcome));
        entry.0 += 1;
        if outcome == Outcome::Error {
            self.failed[class_index(request.op)] += 1;
        }
    }

    fn second(&mut self, now: Nanos, sched: &dyn Scheduler, backend: &dyn Backend) {
        let (stats, pressure, view) = (sched.stats(), sched.pressure(now), backend.view());
        let in_flight: u32 = Op::ALL.iter().map(|op| stats.class(*op).in_flight).sum();
        if in_flight != view.in_flight || view.in_flight > view.slots {
            self.problems.push(format!(
                "at {now:?}: the scheduler has {in_flight} commands in flight, the backend {} of {} slots",
                view.in_flight, view.slots
            ));
        }
        let waiting = !sched.is_idle() || view.in_flight > 0;
        if waiting && now > self.last_completion + STUCK {
            self.problems.push(format!(
                "at {now:?}: stuck, no completion since {:?}",
                self.last_completion
            ));
            self.stuck.set(true);
        }
        for op in Op::ALL {
            if stats.class(op).queued != pressure.class(op).queued {
                self.problems.push(format!(
                    "at {now:?}: {op:?} queued {} in stats, {} in pressure",
                    stats.class(op).queued,
                    pressure.class(op).queued
                ));
            }
        }
    }
}

/// One run of `ops` requests through `policy` on a faulty virtual
/// drive; stopped after `stop_after` turns of the loop if given.
struct Case<B> {
    backend: Recording<Faulty<B>>,
    sched: Box<dyn Scheduler>,
    checker: Checker,
    summary: RunSummary,
    limits: RunLimits,
}

fn run_case(
    policy: &str,
    faults: FaultConfig,
    ops: u64,
    stop_after: Option<u64>,
) -> Case<VirtualDrive> {
    let clock: SharedClock = Rc::new(Cell::new(Nanos::ZERO));
    let drive = VirtualDrive {
        clock: clock.clone(),
        slots: 8,
        busy: Vec::new(),
    };
    let run = Run {
        policy,
        ops,
        gap: Nanos::from_micros(500),
        stop_after,
    };
    drive_case(drive, faults, &run, &VirtualClock(clock))
}

/// What to run: `ops` requests about `gap` apart through `policy`,
/// stopped after `stop_after` turns of the loop if given.
struct Run<'a> {
    policy: &'a str,
    ops: u64,
    gap: Nanos,
    stop_after: Option<u64>,
}

fn drive_case<B: Backend>(drive: B, faults: FaultConfig, run: &Run, clock: &dyn Clock) -> Case<B> {
    let Run {
        policy,
        ops,
        gap,
        stop_after,
    } = *run;
    let seed = faults.seed;
    let mut backend = Recording {
        inner: Faulty::new(drive, faults),
        errnos: HashMap::new(),
    };
    let mut sched = policy::build(policy).expect("a catalog policy builds");
    let completed = Rc::new(Cell::new(0));
    let source = RandomSource {
        dice: SplitMix64(seed ^ 0x5eed),
        left: ops,
        next: Nanos::ZERO,
        gap,
        outstanding: 0,
        completed: completed.clone(),
    };
    let mut sources: Vec<Box<dyn Source>> = vec![Box::new(source)];
    // Time without end, in effect: a policy that throttles hard on
    // delayed completions is slow, not stuck. The run ends when every
    // request has completed, or when the checker finds no completion
    // for [`STUCK`] while requests wait.
    let limits = RunLimits {
        duration: Nanos(ops * Nanos::from_secs(10).0) + Nanos::from_secs(120),
        drain: Nanos::from_secs(600),
    };
    let stuck = Rc::new(Cell::new(false));
    let mut checker = Checker {
        stuck: stuck.clone(),
        ..Checker::default()
    };
    let turns = Cell::new(0u64);
    let stop = || {
        turns.set(turns.get() + 1);
        let ended = completed.get() == ops || stuck.get();
        ended || stop_after.is_some_and(|n| turns.get() > n)
    };
    let summary = crate::runner::run(
        &mut backend,
        sched.as_mut(),
        &mut sources,
        limits,
        &mut checker,
        &stop,
        clock,
    )
    .expect("the drive accepts what the view allows");
    Case {
        backend,
        sched,
        checker,
        summary,
        limits,
    }
}

/// Every request completed exactly once, with the error injected into
/// its own command if any; no queue stuck; statistics and pressure
/// consistent at every second and at the end.
fn check_complete<B: Backend>(case: &Case<B>, ops: u64) -> Result<(), String> {
    let Case {
        backend,
        sched,
        checker,
        summary,
        limits,
    } = case;
    let faulty = &backend.inner;
    if let Some(problem) = checker.problems.first() {
        return Err(problem.clone());
    }
    if summary.submitted != ops || summary.completed != ops {
        return Err(format!("{summary:?}: not all of {ops} completed (stuck)"));
    }
    if summary.elapsed >= limits.duration + limits.drain {
        return Err(format!("ran into the drain limit: {summary:?}"));
    }
    let injected: HashMap<u64, i32> = faulty.injected().iter().copied().collect();
    for id in 0..ops {
        let (times, outcome) = checker.done.get(&id).copied().unwrap_or((0, Outcome::Ok));
        if times != 1 {
            return Err(format!("request {id} completed {times} times"));
        }
        let want = injected.get(&id).copied();
        if (outcome == Outcome::Error) != want.is_some() {
            return Err(format!("request {id}: {outcome:?}, injected {want:?}"));
        }
        if let Some(got) = backend.errnos.get(&id) {
            if *got != want {
                return Err(format!("request {id}: errno {got:?}, injected {want:?}"));
            }
        }
    }
    let (stats, pressure) = (sched.stats(), sched.pressure(summary.elapsed));
    for op in Op::ALL {
        let class = stats.class(op);
        let idle = class.queued == 0 && class.in_flight == 0 && class.in_flight_requests == 0;
        let counted = class.enqueued == class.completed
            && class.errors == checker.failed[class_index(op)]
            && pressure.class(op).queued == 0;
        if !idle || !counted {
            return Err(format!(
                "{op:?}: enqueued {} completed {} errors {} (observed {}) queued {} in flight {}",
                class.enqueued,
                class.completed,
                class.errors,
                checker.failed[class_index(op)],
                class.queued,
                class.in_flight
            ));
        }
    }
    if !sched.is_idle() || faulty.held() > 0 || backend.view().in_flight > 0 {
        return Err("something is still in flight at the end".into());
    }
    Ok(())
}

/// Stopped mid-run, every request issued is completed, queued in the
/// scheduler, or in flight: none lost, and dropping holds nothing up.
fn check_stopped<B: Backend>(case: Case<B>) -> Result<(), String> {
    let stats = case.sched.stats();
    let queued: u64 = Op::ALL
        .iter()
        .map(|op| u64::from(stats.class(*op).queued))
        .sum();
    let in_device: u64 = Op::ALL
        .iter()
        .map(|op| u64::from(stats.class(*op).in_flight_requests))
        .sum();
    let summary = &case.summary;
    if summary.submitted != summary.completed + queued + in_device {
        return Err(format!(
            "{summary:?}: {queued} queued, {in_device} in the device: requests lost"
        ));
    }
    let commands: u32 = Op::ALL.iter().map(|op| stats.class(*op).in_flight).sum();
    if commands != case.backend.view().in_flight {
        return Err(format!(
            "{commands} commands in flight by the scheduler, {} by the backend",
            case.backend.view().in_flight
        ));
    }
    drop(case);
    Ok(())
}

fn fault_mix() -> impl Strategy<Value = FaultConfig> {
    (
        any::<u64>(),
        0.0..0.1f64,
        0.0..0.1f64,
        0.0..0.1f64,
        0.0..0.5f64,
        0.0..0.01f64,
    )
        .prop_map(|(seed, at_once, device, short, delay, stall)| FaultConfig {
            seed,
            fail_at_once: at_once,
            fail_by_device: device,
            short_transfer: short,
            delay,
            stall,
            ..FaultConfig::mixed(seed)
        })
}

fn runner() -> TestRunner {
    TestRunner::new(Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    })
}

#[test]
fn every_policy_completes_every_request_once_under_faults() {
    let ops = (ops_per_policy() / u64::from(CASES)).max(1);
    for info in policy::catalog() {
        let totals = Cell::new((0u64, FaultCounts::default()));
        let result = runner().run(&fault_mix(), |faults| {
            let case = run_case(info.name, faults, ops, None);
            check_complete(&case, ops).map_err(TestCaseError::fail)?;
            let (mut requests, mut counts) = totals.get();
            requests += ops;
            counts += case.backend.inner.counts();
            totals.set((requests, counts));
            Ok(())
        });
        if let Err(e) = result {
            panic!("{}: {e}", info.name);
        }
        let (requests, counts) = totals.get();
        eprintln!(
            "fault totals: {:<9} requests {requests} {counts:?}",
            info.name
        );
    }
}

#[test]
fn every_policy_can_be_stopped_and_dropped_at_any_moment() {
    let ops = (ops_per_policy() / u64::from(CASES)).max(1);
    for info in policy::catalog() {
        let result = runner().run(&(fault_mix(), 0..4 * ops), |(faults, turns)| {
            let case = run_case(info.name, faults, ops, Some(turns));
            check_stopped(case).map_err(TestCaseError::fail)
        });
        if let Err(e) = result {
            panic!("{}: {e}", info.name);
        }
    }
}

#[test]
fn a_faulty_engine_completes_every_request_once_and_drops_promptly_mid_run() {
    let path = crate::engine::tests::temp_file("faulty.img", 64 << 20);
    let faults = FaultConfig {
        max_delay: Duration::from_millis(20),
        max_stall: Duration::from_millis(50),
        ..FaultConfig::mixed(3)
    };
    let mut run = Run {
        policy: "deadline",
        ops: 300,
        gap: Nanos::from_micros(200),
        stop_after: None,
    };
    let Some(engine) = crate::engine::tests::engine_or_skip(&path, false) else {
        return;
    };
    let clock = crate::runner::WallClock::starting_now();
    let case = drive_case(engine, faults.clone(), &run, &clock);
    if let Err(problem) = check_complete(&case, run.ops) {
        panic!("{problem}");
    }
    drop(case);
    let Some(engine) = crate::engine::tests::engine_or_skip(&path, false) else {
        return;
    };
    run.stop_after = Some(40);
    let clock = crate::runner::WallClock::starting_now();
    let case = drive_case(engine, faults, &run, &clock);
    assert!(case.summary.interrupted);
    let started = std::time::Instant::now();
    check_stopped(case).unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(1), "dropping took {took:?}");
}

#[test]
fn the_same_seed_injects_the_same_faults() {
    let counts = |seed| {
        let case = run_case("fifo", FaultConfig::mixed(seed), 300, None);
        (
            case.backend.inner.counts(),
            case.backend.inner.injected().to_vec(),
        )
    };
    assert_eq!(counts(7), counts(7));
    assert_ne!(counts(7), counts(8));
}

/// When each tenant's first request was issued.
#[derive(Default)]
struct FirstIssues(HashMap<u32, Nanos>);

impl Observer for FirstIssues {
    fn request_done(&mut self, request: &Request, _outcome: Outcome, _at: Nanos, _: bool) {
        let first = self.0.entry(request.tenant.0).or_insert(request.submitted);
        *first = (*first).min(request.submitted);
    }

    fn second(&mut self, _now: Nanos, _sched: &dyn Scheduler, _backend: &dyn Backend) {}
}

/// Runs the job file `text` under fifo on a drive that answers at once,
/// in virtual time, for at most `duration` (and a second's drain): the
/// sources as they ended, the run's summary and each tenant's first issue.
fn run_job_file(
    text: &str,
    duration: Nanos,
) -> (Vec<Box<dyn Source>>, crate::runner::RunSummary, FirstIssues) {
    let jobs = iosteer_workload::fio::parse(text, "t.fio", 1 << 30).unwrap();
    let mut sources: Vec<Box<dyn Source>> =
        iosteer_workload::workload::Generator::for_jobs(&jobs, 1)
            .into_iter()
            .map(|g| Box::new(crate::drive::JobSource(g.keep_schedule())) as _)
            .collect();
    let clock = Rc::new(Cell::new(Nanos::ZERO));
    let mut drive = VirtualDrive {
        clock: clock.clone(),
        slots: 32,
        busy: Vec::new(),
    };
    let mut sched = policy::build("fifo").unwrap();
    let mut firsts = FirstIssues::default();
    let limits = RunLimits {
        duration,
        drain: Nanos::from_secs(1),
    };
    let summary = crate::runner::run(
        &mut drive,
        sched.as_mut(),
        &mut sources,
        limits,
        &mut firsts,
        &|| false,
        &VirtualClock(clock),
    )
    .unwrap();
    (sources, summary, firsts)
}

/// A job that stops on steady state with nothing out (found at its next
/// due issue) lets the job waiting for it (stonewall) start at once, not
/// at the loop's next wake-up.
#[test]
fn a_job_stopped_by_steady_state_releases_its_waiters_at_once() {
    let text = "[global]\nrw=randread\nbs=4k\nsize=64m\nrate_iops=100\nruntime=10\ntime_based\n\
                ss=iops:5%\nss_dur=2\n[a]\n[b]\nstonewall\n";
    let (_, _, firsts) = run_job_file(text, Nanos::from_secs(30));
    // Job a reached steady state at the check of 2 s, its next read due then.
    assert_eq!(
        firsts.0.get(&1),
        Some(&Nanos::from_secs(2)),
        "{:?}",
        firsts.0
    );
}

/// A time-based job whose next request would come after its stop has
/// issued all it will, but lasts until its stop, as fio's does (fio reports
/// a runtime of 1000 ms for this job): the run ends there, not at its last
/// completion, and the job has ended by then (the run's report named it
/// as cut short).
#[test]
fn a_time_based_job_lasts_until_its_stop_though_done_issuing_before() {
    let text = "[j]\nrw=read\nbs=4k\nsize=1m\nrate_iops=64\nruntime=1\ntime_based\n";
    let (sources, summary, _) = run_job_file(text, Nanos::from_secs(5));
    assert_eq!(summary.submitted, 64);
    assert_eq!(summary.elapsed, Nanos::from_secs(1));
    assert!(sources[0].ended(summary.elapsed));
}

/// A stop that comes once the run's time is over, while its last requests
/// drain, cuts nothing the run meant to measure: it is not an interruption
/// (found by a review: a probe step stopped then read "interrupted at 4.2 s
/// of 4.0 s", and its result was thrown away). One before the end is.
#[test]
fn a_stop_while_the_run_drains_is_no_interruption() {
    for (stop_at, interrupted) in [(Nanos::from_millis(3), false), (Nanos::ZERO, true)] {
        let clock: SharedClock = Rc::new(Cell::new(Nanos::ZERO));
        let mut drive = VirtualDrive {
            clock: clock.clone(),
            slots: 1,
            busy: Vec::new(),
        };
        let source = RandomSource {
            dice: SplitMix64(7),
            left: 1000,
            next: Nanos::ZERO,
            gap: Nanos(1),
            outstanding: 0,
            completed: Rc::new(Cell::new(0)),
        };
        let mut sources: Vec<Box<dyn Source>> = vec![Box::new(source)];
        let mut sched = policy::build("fifo").unwrap();
        let limits = RunLimits {
            duration: Nanos::from_millis(1),
            drain: Nanos::from_secs(10),
        };
        let stop = || clock.get() >= stop_at;
        let summary = crate::runner::run(
            &mut drive,
            sched.as_mut(),
            &mut sources,
            limits,
            &mut Checker::default(),
            &stop,
            &VirtualClock(clock.clone()),
        )
        .unwrap();
        assert!(
            summary.completed < summary.submitted,
            "stopped with requests out"
        );
        assert_eq!(summary.interrupted, interrupted, "stop at {stop_at}");
    }
}
