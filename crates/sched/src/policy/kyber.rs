//! `kyber`: Linux's Kyber scheduler (block/kyber-iosched.c). Controls latency
//! by throttling how many requests of each kind may be in the device.
//!
//! # Algorithm
//!
//! Requests fall in four scheduling domains: READ, WRITE, DISCARD (our trims)
//! and OTHER (our flushes). Each domain has a number of tokens, its depth; a
//! request goes to the device only with a token of its domain, and gives it
//! back on completion. Domains take turns in batches: the current domain
//! sends up to its batch size while it has requests and tokens, then the next
//! domain in READ, WRITE, DISCARD, OTHER order gets its turn.
//!
//! The per-I/O path only records. Each completion of READ, WRITE or DISCARD
//! counts its *total* latency (arrival to completion, queueing included) and
//! its *I/O* latency (dispatch to completion) in histograms of 8 buckets,
//! each a quarter of the domain's target wide: the first four buckets are
//! "good" (at or under the target), the last four "bad", the last one open.
//! A completion arms a timer for 100 ms later, if not armed sooner. When it
//! fires:
//! 1. if any domain's I/O-latency p90 falls in a bad bucket, the device is
//!    congested;
//! 2. each domain with a total-latency p99 (its own, or the one it remembered
//!    from an earlier window when congestion is seen now) is rescaled when
//!    there is congestion or its own p99 is bad: depth x (p99 bucket + 1) / 4,
//!    clamped to [1, max depth]. A domain with good latency under congestion
//!    shrinks (to a quarter at best); a domain with bad latency grows (up to
//!    twice), since its requests now wait in the scheduler, which the total
//!    latency sees.
//!
//! A percentile needs 500 samples, or one second since the histogram's first
//! sample; computing it empties the histogram.
//!
//! # Constants (upstream's)
//!
//! - max depth (and starting depth): READ 256, WRITE 128, DISCARD 64,
//!   OTHER 16: a fraction of an NVMe queue saturates a device already;
//! - batch: READ 16, WRITE 8, DISCARD 1, OTHER 1;
//! - targets: `read_lat_nsec` 2 ms, `write_lat_nsec` 10 ms (tunable),
//!   DISCARD 5 s (fixed), OTHER none (not measured, never rescaled);
//! - 8 latency buckets of target / 4 (`KYBER_LATENCY_SHIFT` 2);
//! - p90 of I/O latency for the congestion check (not too sensitive to
//!   outliers), p99 of total latency for scaling;
//! - 500 samples or 1 s per percentile; timer 100 ms after a completion.
//!
//! # Where ours differs, and why
//!
//! - Each histogram has its own one-second timeout. Upstream shares one per
//!   domain between the I/O and the total histogram, so below 500 samples a
//!   window only ever yields the p90 and the p99 waits for 500 samples.
//! - No `async_depth` (75% of the scheduler tags for async requests): we
//!   cannot tell sync from async. No merging.
//! - Trims are coalesced: every waiting trim (up to `trim_max_ranges`) leaves
//!   in one command, which takes one DISCARD token.
//! - Flushes are OTHER requests, and leave only once every earlier write has
//!   completed; writes queued after a waiting flush wait with it, and a read
//!   that overlaps a queued write waits until that write is sent
//!   ([`crate::ordering::Barrier`]), without holding back the reads queued
//!   behind it.
//! - Our completions carry the dispatch time but not the arrival time; the
//!   scheduler remembers the arrival of each command in flight by (kind,
//!   dispatch time, bytes). Two commands alike in all three may swap their
//!   total latencies, which changes nothing in the histograms.

use std::collections::HashMap;

use smallvec::SmallVec;

use crate::config::{parse_duration_in, unknown_key, ConfigError, Configurable, Tunable};
use crate::ordering::{flush_may_go, Barrier, ReadWriteQueues};
use crate::policy::common::{
    base_in_field, Base, CommonConfig, Policy, BAD_LATENCY, STATS_WINDOW, TRIM_MAX_RANGES,
};
use crate::policy::{construct, PolicyInfo};
use crate::request::{Command, Completion, Op, Request};
use crate::scheduler::WriteLimit;
use crate::trim::TrimQueue;
use crate::units::{Bytes, Nanos};

/// The scheduling domains, in turn order.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Domain {
    Read = 0,
    Write = 1,
    Discard = 2,
    Other = 3,
}

impl Domain {
    pub const ALL: [Domain; 4] = [Domain::Read, Domain::Write, Domain::Discard, Domain::Other];

    fn of(op: Op) -> Domain {
        match op {
            Op::Read => Domain::Read,
            Op::Write => Domain::Write,
            Op::Trim => Domain::Discard,
            Op::Flush => Domain::Other,
        }
    }

    /// The class whose in-flight commands hold this domain's tokens.
    fn op(self) -> Op {
        [Op::Read, Op::Write, Op::Trim, Op::Flush][self as usize]
    }
}

/// Most tokens of each domain, also their starting count.
const MAX_DEPTH: [u32; 4] = [256, 128, 64, 16];
/// Requests a domain sends in a row when its turn comes.
const BATCH: [u32; 4] = [16, 8, 1, 1];
/// DISCARD's fixed latency target.
const DISCARD_TARGET: Nanos = Nanos::from_secs(5);
/// Bucket width is target >> LATENCY_SHIFT: quarters of the target.
const LATENCY_SHIFT: u32 = 2;
/// Buckets at or under the target.
const GOOD_BUCKETS: usize = 1 << LATENCY_SHIFT;
/// Good buckets, then as many bad ones (the last one open-ended).
const LATENCY_BUCKETS: usize = 2 << LATENCY_SHIFT;
/// Samples that make a percentile without waiting for the timeout.
const PERCENTILE_SAMPLES: u32 = 500;
/// The longest a histogram gathers before a percentile is taken anyway.
const PERCENTILE_TIMEOUT: Nanos = Nanos::from_secs(1);
/// The timer fires this long after a completion (if not armed sooner).
const TIMER_DELAY: Nanos = Nanos::from_millis(100);
pub const TUNABLES: &[Tunable] = &[
    Tunable {
        key: "read_lat_nsec",
        default: "2000000",
        help: "read latency target, ns (or with a unit: 2ms)",
    },
    Tunable {
        key: "write_lat_nsec",
        default: "10000000",
        help: "write latency target, ns (or with a unit: 10ms)",
    },
    Tunable {
        help: "most trims coalesced into one command (one DISCARD token)",
        ..TRIM_MAX_RANGES
    },
    STATS_WINDOW,
    BAD_LATENCY,
];

pub const INFO: PolicyInfo = PolicyInfo {
    name: "kyber",
    summary: "Linux Kyber: per-domain token depths (read/write/discard/other) scaled by \
              latency histograms against read/write targets",
    tunables: TUNABLES,
    build: |configure| construct(configure, Kyber::new),
};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KyberConfig {
    pub read_lat: Nanos,
    pub write_lat: Nanos,
    pub common: CommonConfig,
}

impl Default for KyberConfig {
    fn default() -> Self {
        KyberConfig {
            read_lat: Nanos::from_millis(2),
            write_lat: Nanos::from_millis(10),
            common: CommonConfig::default(),
        }
    }
}

impl Configurable for KyberConfig {
    fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        match key {
            "read_lat_nsec" => self.read_lat = parse_duration_in(key, value, Nanos(1))?,
            "write_lat_nsec" => self.write_lat = parse_duration_in(key, value, Nanos(1))?,
            _ if self.common.set(key, value)? => {}
            _ => return Err(unknown_key(INFO.name, key, TUNABLES)),
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), ConfigError> {
        for (key, target) in [
            ("read_lat_nsec", self.read_lat),
            ("write_lat_nsec", self.write_lat),
        ] {
            if target == Nanos::ZERO {
                return Err(ConfigError::Conflict(format!("{key} must be above zero")));
            }
        }
        Ok(())
    }
}

/// Which latency a histogram counts.
#[derive(Copy, Clone, Debug)]
enum Kind {
    /// Arrival to completion.
    Total = 0,
    /// Dispatch to completion.
    Io = 1,
}

/// Eight buckets relative to a target, and the timeout of a sparse window.
#[derive(Clone, Debug, Default)]
struct Histogram {
    buckets: [u32; LATENCY_BUCKETS],
    timeout: Option<Nanos>,
}

impl Histogram {
    fn record(&mut self, latency: Nanos, target: Nanos) {
        let width = (target.0 >> LATENCY_SHIFT).max(1);
        let bucket = (latency.0.saturating_sub(1) / width).min(LATENCY_BUCKETS as u64 - 1);
        self.buckets[bucket as usize] = self.buckets[bucket as usize].saturating_add(1);
    }

    /// The bucket holding the `percentile`, once there are enough samples or
    /// the window timed out; empties the histogram when it answers.
    fn percentile(&mut self, percentile: u32, now: Nanos) -> Option<usize> {
        let samples: u32 = self.buckets.iter().sum();
        if samples == 0 {
            return None;
        }
        let timeout = *self.timeout.get_or_insert(now + PERCENTILE_TIMEOUT);
        if samples < PERCENTILE_SAMPLES && now < timeout {
            return None;
        }
        self.timeout = None;
        let mut rank = (u64::from(samples) * u64::from(percentile)).div_ceil(100);
        let mut bucket = 0;
        while bucket < LATENCY_BUCKETS - 1 && u64::from(self.buckets[bucket]) < rank {
            rank -= u64::from(self.buckets[bucket]);
            bucket += 1;
        }
        self.buckets = [0; LATENCY_BUCKETS];
        Some(bucket)
    }
}

/// Arrival times of the commands in the device, by (kind, dispatch, bytes).
#[derive(Debug, Default)]
struct Arrivals(HashMap<(Op, Nanos, Bytes), SmallVec<[Nanos; 1]>>);

impl Arrivals {
    fn insert(&mut self, command: &Command) {
        let arrival = command.requests.iter().map(|r| r.submitted).min();
        let key = (command.op, command.dispatched, command.bytes());
        self.0
            .entry(key)
            .or_default()
            .push(arrival.unwrap_or(command.dispatched));
    }

    fn remove(&mut self, done: &Completion) -> Nanos {
        let key = (done.op, done.dispatched, done.bytes);
        let Some(arrivals) = self.0.get_mut(&key) else {
            return done.dispatched;
        };
        let arrival = arrivals.pop().unwrap_or(done.dispatched);
        if arrivals.is_empty() {
            self.0.remove(&key);
        }
        arrival
    }
}

#[derive(Debug)]
pub struct Kyber {
    config: KyberConfig,
    queues: ReadWriteQueues,
    trims: TrimQueue,
    barrier: Barrier,
    /// Tokens of each domain.
    depth: [u32; 4],
    cur_domain: Domain,
    batching: u32,
    /// READ, WRITE and DISCARD histograms, total and I/O.
    latency: [[Histogram; 2]; 3],
    /// The last p99 bucket of each measured domain, kept for a window that
    /// sees congestion without a p99 of its own.
    domain_p99: [Option<usize>; 3],
    timer: Option<Nanos>,
    arrivals: Arrivals,
    base: Base,
}

impl Kyber {
    pub fn new(config: KyberConfig) -> Kyber {
        Kyber {
            queues: ReadWriteQueues::default(),
            trims: TrimQueue::new(config.common.trim_max_ranges, 0),
            barrier: Barrier::default(),
            depth: MAX_DEPTH,
            cur_domain: Domain::Read,
            batching: 0,
            latency: Default::default(),
            domain_p99: [None; 3],
            timer: None,
            arrivals: Arrivals::default(),
            base: Base::new(&config.common),
            config,
        }
    }

    /// Tokens a domain has now.
    pub fn depth(&self, domain: Domain) -> u32 {
        self.depth[domain as usize]
    }

    fn target(&self, domain: Domain) -> Nanos {
        match domain {
            Domain::Read => self.config.read_lat,
            Domain::Write => self.config.write_lat,
            _ => DISCARD_TARGET,
        }
    }

    /// Whether the domain has a request that could go now, tokens aside. For
    /// reads, the first queued read that overlaps no unsent write: one that
    /// must wait for its write does not hold back the reads behind it.
    fn has_request(&mut self, domain: Domain) -> bool {
        match domain {
            Domain::Read => self
                .queues
                .find_ready_read(|read| self.barrier.read_ready(read)),
            Domain::Write => !self.queues.writes.is_empty(),
            Domain::Discard => !self.trims.is_empty(),
            Domain::Other => {
                self.barrier.flush_due() && flush_may_go(self.base.stats.class(Op::Write).in_flight)
            }
        }
    }

    fn take(&mut self, domain: Domain, now: Nanos) -> Command {
        match domain {
            Domain::Read => self.queues.send_ready_read(now),
            Domain::Write => self
                .queues
                .send_write(|write| self.barrier.sent_write(write), now),
            Domain::Discard => self.trims.take_command(now).expect("domain has a request"),
            Domain::Other => {
                let flush = self.barrier.take_flush().expect("flush is due");
                while let Some(write) = self.barrier.release() {
                    self.queues.writes.push_back(write);
                }
                Command::single(flush.request, now)
            }
        }
    }

    /// Upstream's `kyber_dispatch_cur_domain`: a request of the current
    /// domain, if it has one and a token for it.
    fn dispatch_cur_domain(&mut self, now: Nanos) -> Option<Command> {
        let domain = self.cur_domain;
        if !self.has_request(domain) {
            return None;
        }
        let op = domain.op();
        if self.base.stats.class(op).in_flight >= self.depth[domain as usize] {
            self.base.stats.class_mut(op).limited = true;
            return None;
        }
        self.batching += 1;
        Some(self.take(domain, now))
    }

    fn choose_command(&mut self, now: Nanos) -> Option<Command> {
        if self.batching < BATCH[self.cur_domain as usize] {
            if let Some(command) = self.dispatch_cur_domain(now) {
                return Some(command);
            }
        }
        self.batching = 0;
        for _ in 0..Domain::ALL.len() {
            self.cur_domain = Domain::ALL[(self.cur_domain as usize + 1) % Domain::ALL.len()];
            if let Some(command) = self.dispatch_cur_domain(now) {
                return Some(command);
            }
        }
        None
    }

    /// Upstream's `kyber_timer_fn`: the congestion check, then depth scaling.
    fn timer_fn(&mut self, now: Nanos) {
        let mut congested = false;
        for histograms in &mut self.latency {
            let p90 = histograms[Kind::Io as usize].percentile(90, now);
            congested |= p90.is_some_and(|bucket| bucket >= GOOD_BUCKETS);
        }
        for (index, domain) in [Domain::Read, Domain::Write, Domain::Discard]
            .into_iter()
            .enumerate()
        {
            let mut p99 = self.latency[index][Kind::Total as usize].percentile(99, now);
            if congested {
                p99 = p99.or(self.domain_p99[index]);
                self.domain_p99[index] = None;
            } else if p99.is_some() {
                self.domain_p99[index] = p99;
            }
            let Some(p99) = p99 else {
                continue;
            };
            if congested || p99 >= GOOD_BUCKETS {
                let depth = &mut self.depth[domain as usize];
                let scaled = (u64::from(*depth) * (p99 as u64 + 1)) >> LATENCY_SHIFT;
                *depth = scaled.clamp(1, u64::from(MAX_DEPTH[domain as usize])) as u32;
            }
        }
    }
}

impl Policy for Kyber {
    const INFO: PolicyInfo = INFO;

    base_in_field!();

    fn accept(&mut self, request: Request, _now: Nanos) {
        match request.op {
            Op::Read => self.queues.reads.push_back(self.barrier.tag_read(request)),
            Op::Write | Op::Flush => {
                if let Some(write) = self.barrier.admit(request) {
                    self.queues.writes.push_back(write);
                }
            }
            Op::Trim => self.trims.push(request),
        }
    }

    fn trims(&mut self) -> Option<&mut TrimQueue> {
        Some(&mut self.trims)
    }

    fn next_command(&mut self, now: Nanos) -> Option<Command> {
        let command = self.choose_command(now)?;
        self.arrivals.insert(&command);
        Some(command)
    }

    fn completed(&mut self, completion: &Completion, now: Nanos) {
        let arrival = self.arrivals.remove(completion);
        let domain = Domain::of(completion.op);
        if domain != Domain::Other {
            let target = self.target(domain);
            let histograms = &mut self.latency[domain as usize];
            histograms[Kind::Total as usize].record(now - arrival, target);
            histograms[Kind::Io as usize].record(now - completion.dispatched, target);
            let fire = now + TIMER_DELAY;
            self.timer = Some(self.timer.map_or(fire, |t| t.min(fire)));
        }
    }

    fn own_timer(&self) -> Option<Nanos> {
        self.timer
    }

    fn ticked(&mut self, now: Nanos, _ticks: u64) {
        if self.timer.is_some_and(|t| now >= t) {
            self.timer = None;
            self.timer_fn(now);
        }
    }

    fn oldest(&self, op: Op) -> Option<Nanos> {
        let queue = if op == Op::Read {
            &self.queues.reads
        } else {
            &self.queues.writes
        };
        queue
            .iter()
            .map(|q| &q.request)
            .chain(self.barrier.held())
            .filter(|r| r.op == op)
            .map(|r| r.submitted)
            .min()
    }

    fn limit_on_writes(&self) -> Option<WriteLimit> {
        Some(WriteLimit {
            kind: "write_depth",
            value: f64::from(self.depth(Domain::Write)),
            unit: "in flight",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::apply_pairs;
    use crate::policy::testkit::{configured, drain, ids, ms, us};
    use crate::request::Outcome;
    use crate::scheduler::Scheduler;

    fn kyber(settings: &str) -> Kyber {
        Kyber::new(configured(settings))
    }

    /// Runs `n` requests of `op` through: they arrive at `arrive`, are sent
    /// from `send` on (as tokens allow, each round `io` after the last) and
    /// each takes `io` in the device.
    fn run(s: &mut Kyber, op: Op, n: u64, arrive: Nanos, send: Nanos, io: Nanos) -> Nanos {
        for id in 0..n {
            s.enqueue(Request::new(id, op, id << 20, 4096, arrive), arrive);
        }
        let mut now = send;
        while s.stats().class(op).queued > 0 {
            let sent = drain(s, now, 4096, 0);
            now += io;
            for c in sent {
                let _ = s.complete(&c.completion(Outcome::Ok), now);
            }
        }
        now
    }

    /// A kyber with default settings after two runs of 600 requests, first
    /// `first` then `then` (each an op and its time in the device), and the
    /// timer their completions armed; returns it and when the timer fired.
    fn after_two_runs(first: (Op, Nanos), then: (Op, Nanos)) -> (Kyber, Nanos) {
        let mut s = kyber("");
        let t = run(&mut s, first.0, 600, Nanos::ZERO, Nanos::ZERO, first.1);
        run(&mut s, then.0, 600, t, t, then.1);
        let t = fire_timer(&mut s);
        (s, t)
    }

    /// Fires the timer a completion armed; returns when.
    fn fire_timer(s: &mut Kyber) -> Nanos {
        let at = s.timer.expect("a completion armed the timer");
        let _ = s.tick(at);
        at
    }

    #[test]
    fn buckets_are_quarters_of_the_target_and_percentiles_need_500_samples() {
        let mut h = Histogram::default();
        let target = ms(2);
        for _ in 0..499 {
            h.record(us(400), target);
        }
        assert_eq!(
            h.percentile(99, Nanos::ZERO),
            None,
            "499 samples, no timeout"
        );
        h.record(ms(9), target);
        assert_eq!(h.percentile(90, Nanos::ZERO), Some(0));
        assert_eq!(h.buckets, [0; 8], "a percentile empties the histogram");
        h.record(us(2001), target);
        assert_eq!(h.percentile(99, Nanos::ZERO), None);
        assert_eq!(
            h.percentile(99, Nanos::from_secs(1)),
            Some(4),
            "the 1 s timeout"
        );
    }

    #[test]
    fn slow_reads_shrink_the_write_depth_and_queued_writes_grow_it_back() {
        // Reads take 5 ms in the device (target 2 ms): congestion. Writes are
        // quick (under 2.5 ms against 10 ms): their depth shrinks to a quarter.
        let (mut s, t) = after_two_runs((Op::Read, ms(5)), (Op::Write, us(400)));
        assert_eq!(s.depth(Domain::Write), 32);
        assert_eq!(
            s.write_limit().map(|l| l.value),
            Some(32.0),
            "shown as the write limit"
        );
        assert_eq!(
            s.depth(Domain::Read),
            256,
            "bad reads throttle less, up to the max"
        );
        // Now reads are fast; writes are held back by their 32 tokens and
        // wait 30 ms in the scheduler: their total p99 is bad, the depth grows.
        let t = run(&mut s, Op::Read, 600, t, t, us(100));
        run(&mut s, Op::Write, 600, t, t + ms(30), ms(1));
        let t = fire_timer(&mut s);
        assert_eq!(s.depth(Domain::Write), 64);
        run(&mut s, Op::Write, 600, t, t + ms(30), ms(1));
        fire_timer(&mut s);
        assert_eq!(s.depth(Domain::Write), 128, "back at the max");
    }

    #[test]
    fn slow_writes_shrink_the_read_depth_when_read_latency_is_good() {
        let (mut s, t) = after_two_runs((Op::Write, ms(40)), (Op::Read, us(150)));
        assert_eq!(s.depth(Domain::Read), 64);
        // The depth now limits reads: 64 at a time.
        for id in 0..100 {
            s.enqueue(Request::new(id, Op::Read, id << 20, 4096, t), t);
        }
        assert_eq!(drain(&mut s, t, 4096, 0).len(), 64);
        assert!(s.stats().class(Op::Read).limited);
    }

    #[test]
    fn a_read_waiting_for_its_write_does_not_hold_back_the_reads_behind_it() {
        let mut s = kyber("");
        let t = Nanos::ZERO;
        // Write 2 waits behind the flush, which waits for write 0 to complete.
        s.enqueue(Request::new(0, Op::Write, 0, 4096, t), t);
        s.enqueue(Request::new(1, Op::Flush, 0, 0, t), t);
        s.enqueue(Request::new(2, Op::Write, 8 << 20, 4096, t), t);
        s.enqueue(Request::new(3, Op::Read, 8 << 20, 4096, t), t);
        s.enqueue(Request::new(4, Op::Read, 100 << 20, 4096, t), t);
        let sent = drain(&mut s, Nanos(1), 32, 0);
        assert_eq!(ids(&sent), [4, 0], "read 4 overlaps nothing and goes");
        let write = sent.iter().find(|c| c.op == Op::Write).unwrap();
        let _ = s.complete(&write.completion(Outcome::Ok), Nanos(2));
        let order = ids(&drain(&mut s, Nanos(2), 32, 0));
        let at = |id| order.iter().position(|x| *x == id).unwrap();
        assert!(at(2) < at(3), "read 3 still follows its write: {order:?}");
    }

    #[test]
    fn domains_take_turns_in_batches() {
        let mut s = kyber("");
        for id in 0..20 {
            s.enqueue(
                Request::new(id, Op::Read, id << 20, 4096, Nanos::ZERO),
                Nanos::ZERO,
            );
            s.enqueue(
                Request::new(100 + id, Op::Write, (100 + id) << 20, 4096, Nanos::ZERO),
                Nanos::ZERO,
            );
        }
        let order: String = drain(&mut s, Nanos(1), 4096, 0)
            .iter()
            .map(|c| if c.op == Op::Read { 'R' } else { 'W' })
            .collect();
        let expected = "R".repeat(16) + &"W".repeat(8) + "RRRR" + &"W".repeat(8) + "WWWW";
        assert_eq!(order, expected);
    }

    #[test]
    fn targets_are_upstream_nanoseconds() {
        let mut config = KyberConfig::default();
        apply_pairs(&mut config, "read_lat_nsec=1000000,write_lat_nsec=5ms").unwrap();
        assert_eq!((config.read_lat, config.write_lat), (ms(1), ms(5)));
        assert!(apply_pairs(&mut config, "read_lat_nsec=0").is_err());
        assert!(apply_pairs(&mut config, "depth=4").is_err());
    }
}
