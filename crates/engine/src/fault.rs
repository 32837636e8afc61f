//! A fault-injecting [`Backend`]: wraps another backend (the io_uring
//! [`crate::Engine`], an [`crate::emulate::Emulated`] drive, or a test's
//! virtual drive) and, deterministically from a seed, makes its commands
//! fail, come back short, come back late and out of order, or stop coming
//! back for a while, so a policy and the loop around it can be checked
//! against everything a misbehaving drive does.
//!
//! What each fault looks like to the loop:
//! - failed at once: the command never reaches the device and completes
//!   with EINVAL, as the engine completes a request it refuses;
//! - failed by the device: it completes with EIO;
//! - short transfer (reads and writes): it completes with EIO, as the
//!   engine reports a transfer shorter than asked (it does not resubmit the
//!   rest), and a read brings back no bytes;
//! - delayed: its completion is held up to [`FaultConfig::max_delay`],
//!   so completions come back out of order;
//! - stall: the device stops answering for up to
//!   [`FaultConfig::max_stall`]: nothing it finishes meanwhile is seen
//!   before the stall ends.
//!
//! A command the loop has not yet been told of still counts in
//! [`Backend::view`], so the scheduler never has more in flight than the
//! device's slots.

use std::collections::HashMap;
use std::time::Duration;

use iosteer_sched::{Command, DeviceView, Nanos, Op, Outcome};

use crate::engine::{EngineError, Finished};
use crate::runner::Backend;

/// How often each fault happens (chances from 0 to 1, per command) and how
/// long delays and stalls last.
#[derive(Clone, Debug)]
pub struct FaultConfig {
    pub seed: u64,
    /// The command fails without reaching the device (EINVAL).
    pub fail_at_once: f64,
    /// The device fails the command (EIO).
    pub fail_by_device: f64,
    /// A read or write transfers less than asked (EIO).
    pub short_transfer: f64,
    /// The completion is held back up to `max_delay`.
    pub delay: f64,
    pub max_delay: Duration,
    /// The device stops answering, up to `max_stall`, when this command
    /// is sent.
    pub stall: f64,
    pub max_stall: Duration,
}

impl FaultConfig {
    /// Every fault now and then: a few percent of commands each, delays up
    /// to 2 s, stalls up to 5 s.
    pub fn mixed(seed: u64) -> FaultConfig {
        FaultConfig {
            seed,
            fail_at_once: 0.02,
            fail_by_device: 0.03,
            short_transfer: 0.02,
            delay: 0.1,
            max_delay: Duration::from_secs(2),
            stall: 0.002,
            max_stall: Duration::from_secs(5),
        }
    }
}

/// How many of each fault were injected.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultCounts {
    pub commands: u64,
    pub failed_at_once: u64,
    pub failed_by_device: u64,
    pub short_transfers: u64,
    pub delayed: u64,
    pub stalls: u64,
}

impl std::ops::AddAssign for FaultCounts {
    fn add_assign(&mut self, other: FaultCounts) {
        self.commands += other.commands;
        self.failed_at_once += other.failed_at_once;
        self.failed_by_device += other.failed_by_device;
        self.short_transfers += other.short_transfers;
        self.delayed += other.delayed;
        self.stalls += other.stalls;
    }
}

/// What was decided for a command when it was sent, applied when the
/// device finishes it.
#[derive(Copy, Clone, Debug, Default)]
struct Planned {
    errno: Option<i32>,
    delay: Nanos,
}

/// A finished command the loop is not yet told of.
#[derive(Debug)]
struct Held {
    release: Nanos,
    finished: Finished,
}

/// SplitMix64: a seeded stream of numbers, the same for the same seed.
#[derive(Clone, Debug)]
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// True with chance `p`.
    fn chance(&mut self, p: f64) -> bool {
        let unit = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        unit < p
    }

    /// Uniform in `[0, max]`.
    fn up_to(&mut self, max: Duration) -> Nanos {
        Nanos(self.next() % (max.as_nanos() as u64 + 1))
    }
}

/// `inner` with faults injected as `config` says.
pub struct Faulty<B> {
    inner: B,
    config: FaultConfig,
    dice: Dice,
    /// By the first request's id of each command the device holds.
    planned: HashMap<u64, Planned>,
    held: Vec<Held>,
    /// Nothing the device finishes is seen before this.
    stalled_until: Nanos,
    /// Completions are handed back in time order.
    last_release: Nanos,
    counts: FaultCounts,
    /// Each request given an error, with it: for tests to check that every
    /// request got its own. Grows by one entry per failed request.
    injected: Vec<(u64, i32)>,
}

impl<B: Backend> Faulty<B> {
    pub fn new(inner: B, config: FaultConfig) -> Faulty<B> {
        Faulty {
            inner,
            dice: Dice(config.seed),
            config,
            planned: HashMap::new(),
            held: Vec::new(),
            stalled_until: Nanos::ZERO,
            last_release: Nanos::ZERO,
            counts: FaultCounts::default(),
            injected: Vec::new(),
        }
    }

    pub fn inner(&self) -> &B {
        &self.inner
    }

    pub fn counts(&self) -> FaultCounts {
        self.counts
    }

    /// Every request given an error, as (request id, errno).
    pub fn injected(&self) -> &[(u64, i32)] {
        &self.injected
    }

    /// Commands finished but not yet handed back.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    fn maybe_stall(&mut self, now: Nanos) {
        if self.dice.chance(self.config.stall) {
            self.counts.stalls += 1;
            let until = now + self.dice.up_to(self.config.max_stall);
            self.stalled_until = self.stalled_until.max(until);
        }
    }

    /// The error the device will give `command`, if any.
    fn device_error(&mut self, command: &Command) -> Option<i32> {
        if self.dice.chance(self.config.fail_by_device) {
            self.counts.failed_by_device += 1;
            return Some(libc::EIO);
        }
        let transfers = matches!(command.op, Op::Read | Op::Write);
        if transfers && self.dice.chance(self.config.short_transfer) {
            self.counts.short_transfers += 1;
            return Some(libc::EIO);
        }
        None
    }

    fn delay(&mut self) -> Nanos {
        if self.dice.chance(self.config.delay) {
            self.counts.delayed += 1;
            return self.dice.up_to(self.config.max_delay);
        }
        Nanos::ZERO
    }

    /// Holds `finished` until `release` (or the stall's end), with `errno`.
    fn hold(&mut self, mut finished: Finished, errno: Option<i32>, release: Nanos) {
        if let Some(errno) = errno {
            finished.outcome = Outcome::Error;
            finished.errno = Some(errno);
            finished.data = None;
            let ids = finished.command.requests.iter().map(|r| (r.id.0, errno));
            self.injected.extend(ids);
        }
        let release = release.max(self.stalled_until);
        self.held.push(Held { release, finished });
    }

    /// When the next held completion is due, if any.
    fn next_release(&self) -> Option<Nanos> {
        self.held.iter().map(|h| h.release).min()
    }
}

impl<B: Backend> Backend for Faulty<B> {
    fn view(&self) -> DeviceView {
        let mut view = self.inner.view();
        view.in_flight += self.held.len() as u32;
        view
    }

    fn submit(&mut self, command: Command, now: Nanos) -> Result<(), EngineError> {
        self.counts.commands += 1;
        self.maybe_stall(now);
        if self.dice.chance(self.config.fail_at_once) {
            self.counts.failed_at_once += 1;
            let finished = Finished {
                command,
                at: now,
                outcome: Outcome::Error,
                errno: None,
                data: None,
            };
            self.hold(finished, Some(libc::EINVAL), now);
            return Ok(());
        }
        let planned = Planned {
            errno: self.device_error(&command),
            delay: self.delay(),
        };
        let id = command.requests[0].id.0;
        self.inner.submit(command, now)?;
        self.planned.insert(id, planned);
        Ok(())
    }

    fn submit_queued(&mut self) -> Result<(), EngineError> {
        self.inner.submit_queued()
    }

    fn wait(&mut self, now: Nanos, timeout: Duration) -> Result<(), EngineError> {
        let until_release = self
            .next_release()
            .map_or(timeout, |t| Duration::from_nanos(t.0.saturating_sub(now.0)));
        if until_release.is_zero() {
            return self.inner.submit_queued();
        }
        self.inner.wait(now, timeout.min(until_release))
    }

    fn reap(&mut self, now: Nanos, finished: &mut Vec<Finished>) {
        let mut from_device = Vec::new();
        self.inner.reap(now, &mut from_device);
        for f in from_device {
            let planned = self
                .planned
                .remove(&f.command.requests[0].id.0)
                .unwrap_or_default();
            let release = f.at + planned.delay;
            // An error of the device's own stays; a planned one replaces it.
            self.hold(f, planned.errno, release);
        }
        self.release(now, finished);
    }

    fn drive_gauges(&self) -> Option<(u64, u64)> {
        self.inner.drive_gauges()
    }
}

impl<B> Faulty<B> {
    /// Hands back, in time order, what is due by `now`.
    fn release(&mut self, now: Nanos, finished: &mut Vec<Finished>) {
        let (mut due, held): (Vec<Held>, Vec<Held>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|h| h.release <= now);
        self.held = held;
        due.sort_by_key(|h| h.release);
        for mut h in due {
            self.last_release = self.last_release.max(h.release);
            h.finished.at = self.last_release;
            finished.push(h.finished);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::{run_on_clock, Clock, Observer, RunLimits, RunSummary, Source};
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
        dice: Dice,
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
            let op = match self.dice.next() % 10 {
                0..=4 => Op::Read,
                5..=7 => Op::Write,
                8 => Op::Trim,
                _ => Op::Flush,
            };
            let (offset, len) = match op {
                Op::Flush => (0, 0),
                _ => (
                    self.dice.next() % 16384 * 4096,
                    (1 + self.dice.next() % 16) * 4096,
                ),
            };
            out.push(Request::new(*next_id, op, offset, len, now));
            *next_id += 1;
            self.left -= 1;
            self.outstanding += 1;
            self.next = now + Nanos(1 + self.dice.next() % (2 * self.gap.0));
        }

        fn completed(&mut self, at: Nanos) {
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
        fn request_done(&mut self, request: &Request, outcome: Outcome, at: Nanos) {
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

    fn drive_case<B: Backend>(
        drive: B,
        faults: FaultConfig,
        run: &Run,
        clock: &dyn Clock,
    ) -> Case<B> {
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
            dice: Dice(seed ^ 0x5eed),
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
        let summary = run_on_clock(
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
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "dropping took {:?}",
            started.elapsed()
        );
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
}
