//! `steer`: the project's own adaptive policy. It holds a read-latency
//! objective the user states ("p99 of reads under 2x the unloaded p99", or
//! "p99 under 5 ms") by steering a write bandwidth limit from how many reads
//! miss that objective, and bounds how long a throttled write may wait.
//!
//! # Algorithm
//!
//! Queues. Reads, writes (with flushes) and trims wait apart. Reads go first;
//! writes go when the write limiters admit them (a steered bandwidth limit and
//! an in-flight cap, [`crate::limiter`]); trims go one command at a time,
//! coalesced ([`crate::trim`]).
//!
//! Writes in flight: the fewest that carry the limit, the limit times the
//! device time per byte of a write at its lowest over `MAX_HORIZON`, rounded
//! up, at most `write_depth`. A read that lands on a die behind queued
//! programs waits for all of them, so fewer writes in the drive cost fewer
//! misses per byte: on enterprise-nvme, one write in flight instead of four
//! let the same objective carry 34 MB/s instead of 31. (The lowest time, not
//! the latest: a write that waited for GC says nothing of what more writes
//! in flight would carry, and more writes in a collecting drive hurt.)
//!
//! The objective. `objective=pNN<=Kx` or `pNN<=DURATION`, with NN one of 50,
//! 90, 99, 99.9. Its percentile gives the share of reads allowed to miss,
//! f = 1 - NN/100 (1% for p99), and its bound the target latency T. A
//! relative bound is K times the same percentile of *unloaded* reads: reads
//! that complete while no write or trim is queued or in the device and none
//! has been for `QUIET`. The baseline is the lowest percentile of a *quiet
//! stretch* (the unloaded reads between two loaded ones) holding at least
//! `MIN_BASELINE_MISSES / f` reads; shorter stretches run on into the next.
//! Pooling every unloaded read instead let a drive that reads slower while
//! it still collects garbage after a fill raise the target: by 6% in
//! `long-fill` on consumer-sata, where the objective then slipped. Until a
//! stretch is long enough, the unloaded percentile is estimated as twice the lowest
//! one-second median of read device latency (p99 is about twice p50 on an
//! idle flash drive). A workload that starts loaded (writer and readers
//! together) would never show an unloaded read, and the estimate can be far
//! off on other devices (on a virtio disk p99 is about 8x p50, so the
//! estimate held writes to 3 MB/s where 300 MB/s met the objective). So while
//! no baseline is known and reads are about, writes are held for up to
//! `calibrate` from the first write, and reads completing meanwhile count as
//! unloaded once the writes in the device have been gone `QUIET`; the
//! estimate is used only if that does not yield enough reads.
//! Latency is end to end (queued in the scheduler plus in the device), as a
//! reader sees it.
//!
//! Misses, counted per `WINDOW` (100 ms). Every completed read is a hit or a
//! miss (over T). A miss is charged to the controller at once, except a
//! *trim miss*: a read that was in the system while a trim was in the device,
//! or came within one trim's duration after it (behind the reads it held
//! back). A SATA trim is not queued and holds every read for ~20 ms whatever
//! the write rate, so its misses are a cost of the bytes being written (a
//! fill trims what it is about to overwrite), not a sign the rate is wrong
//! now; they are charged spread over about `TRIM_SPREAD` (3 s: each window
//! pays a thirtieth of what is owed), so one trim does not swing the rate
//! and its cost still counts in full.
//!
//! The budget. It earns f per read completed while writes are queued or in
//! the device (reads with no write around cannot pay for a later fill's
//! misses) and spends one per charged miss, from `MAX_DEBT` allowances owed
//! to `MAX_SAVED` saved (an allowance: the misses f allows in one second of
//! reads, the reads counted over `HORIZON`, stretched back until they allow
//! `MIN_HORIZON_MISSES`, at most `MAX_HORIZON`). The objective is judged over
//! a whole loaded period, so the budget is what has to end up non-negative.
//!
//! The control law: a rate from the cost per byte, not a step per miss.
//! Misses grow with the bytes written (NAND programs, erases, GC work,
//! trims), so the controller estimates the cost c = charged misses per byte
//! written over the last `COST_HORIZON` (5 s), stretched back until it holds
//! `COST_MISSES` misses (at most `MAX_HORIZON`: after a rare burst, such as
//! the GC onset when the drive's free pool runs out, the cost stays high
//! until enough new misses outweigh it or it is 10 s old). Only the misses
//! above the background count in c: the background is what the same reads
//! would miss with no write about, the share of unloaded reads over T (zero
//! on the simulated drives at 2x; on this machine's virtio disk, whose
//! unloaded tail is long, blaming those misses on writes held them to a
//! few MB/s). It may spend the
//! allowance per second plus (budget - `RESERVE`) / `PAYBACK`: debt is paid
//! back, and savings above the reserve spent, over 10 s. The target rate is
//! spend / c (`MAX_GAP` above the rate when no miss was seen), and the limit
//! moves towards it in log2 steps, the gap clamped to `MAX_GAP`:
//! - normally by 1/50 of the gap per window, closing it over the cost
//!   horizon: steady, so a trim or a GC cycle does not swing it, and a
//!   steady rate costs fewer misses than an oscillating one at the same
//!   mean (misses rise faster than the rate);
//! - in debt, by `DEBT_RESPONSE` (20%) of the gap per window, with c the
//!   larger of the 5 s and 1 s estimates: a GC onset is cut within a second.
//!
//! Because the target comes from misses per byte, not from the rate, a miss
//! already acted on does not cut the rate again while it stays in the
//! horizon (no compounding).
//!
//! The reserve (`RESERVE`, 5 allowances) is the margin: misses the objective
//! allows but the controller keeps, so that the objective holds over a finite
//! phase despite the noise of the count and a burst at the end, and what a
//! burst eats before the fast response starts.
//!
//! Evidence rules. No step in a window where no write was queued or in
//! flight or no read completed (nothing to judge: a pause keeps its rate),
//! except that with no read completed for `HORIZON` and none about, writes
//! have nothing to be steered for, and the limit grows as fast as it may
//! (a fill with no reader was held to `start_rate`, 8 MB/s where `fifo`
//! wrote 628 MB/s on enterprise-nvme).
//! The limit grows only while writes are actually held back by it, and never
//! above twice the write rate seen over the horizon. Every step is at least
//! 1 kB/s, and the limit never goes below `min_rate`.
//!
//! The write deadline. A write that has waited `write_deadline` goes ahead of
//! everything, limits or not (its bytes are still charged, so the bandwidth
//! limit pays the debt back later). So a throttled write waits at most the
//! deadline plus one tick, whatever the controller does (property test).
//!
//! Back-pressure. `pressure()` reports, per class, the queue, the time the
//! limiters need to drain it and the oldest wait, so a producer that listens
//! slows down instead of filling the queue up to the deadline.
//!
//! Trims. While writes are about (queued, in the device, or sent within
//! `HORIZON`), a trim is held for `trim_hold` first, and every write queued
//! meanwhile takes the range it overwrites out of it ([`TrimQueue::cut`]);
//! a trim overwritten whole is completed unsent. A fill that trims old
//! content just before writing over it (as the default scenario's does)
//! then sends almost no trim, and the overwrite tells the drive the same
//! thing a moment later. This is the paper's "advisory TRIMs" wish, made
//! safe: a trim's hint only matters if GC reaches those pages before the
//! overwrite does. On consumer-sata a 64 MiB trim holds every read ~21 ms,
//! every 4 s of a 16 MB/s fill: with `trim_hold=0s` the fill's read p99.9
//! is 19.7 ms, a trim's time, and 1,468 of its 150,000 reads miss 2.28 ms
//! (p99 allows 1,502); held, 5.2 ms and 993 (seed 1, `iosteer sim --sched
//! steer --sched steer:trim_hold=0s --slo-ms 2.28`).
//! After the hold, a SATA trim is not queued: the drive drains its queue,
//! waiting for the writes in it (which may wait for GC), then trims alone
//! while reads wait. So while a trim waits, no new write is sent; the trim
//! goes once no write is in the device (or after `trim_deadline`), and the
//! drain then only waits for reads.
//!
//! Ordering ([`crate::ordering::Barrier`]): a flush waits for the writes
//! before it to complete, and the writes after it wait for the flush; a read
//! that overlaps a queued write waits for that write, but only that read
//! waits (aside), and only that write goes at once, ahead of the limit and of
//! the writes queued before it. (Sending every write before it too, as
//! strict write order requires, was a burst of up to 32 writes, every few
//! seconds under a fill: at a fixed 15 MB/s on consumer-sata it raised the
//! fill's read p99 from 2.0 to 4.4 ms.)
//!
//! # Constants and defaults
//!
//! - `objective` p99<=2x: the "p99 of reads under 2x the unloaded p99";
//! - `calibrate` 1 s: enough for the 1,000 unloaded reads a p99 baseline
//!   needs (after `QUIET`) at 1,250 reads per second or more; a one-time
//!   delay of the first writes, well under the write deadline;
//! - `write_deadline` 5 s: mq-deadline's write expiry; long enough that a
//!   32-deep writer of 128 KiB writes is steered down to 1 MB/s before the
//!   deadline overrides the objective (lower it, and let producers listen
//!   to `pressure()`, to bound write latency tighter);
//! - `trim_hold` 5 s: as long as the write deadline lets a write wait, so a
//!   fill held to 13 MB/s or more overwrites a 64 MiB trim whole within it;
//!   the hint is late by that much where no write comes;
//! - `trim_deadline` 1 s: a trim is advisory to the drive, but not forever;
//! - `write_depth` 4: writes in flight at most (until a write's time is
//!   known, the cap); few writes in the drive keep GC on few dies (the
//!   paper's section VI);
//! - `min_rate` 100 kB/s (the floor; the deadline bounds waits anyway),
//!   `max_rate` 10 GB/s, `start_rate` 10 MB/s (the target is reached within
//!   seconds on any drive);
//! - `WINDOW` 100 ms (Kyber's timer, wbt's window), `HORIZON` 1 s,
//!   `MAX_HORIZON` 10 s, `MIN_HORIZON_MISSES` 10 (misses the objective
//!   allows in a horizon), `MIN_BASELINE_MISSES` 10, `QUIET` 200 ms;
//! - `TRIM_SPREAD` 3 s: thirty windows, so a trim's ~20 ms burst becomes a
//!   smooth cost, mostly charged before the next trim (about 4 s apart when
//!   a fill is held to 16 MB/s on consumer-sata);
//! - `COST_HORIZON` 5 s and `COST_MISSES` 20: enough misses that the cost is
//!   known within about a quarter (Poisson), and a few GC cycles of a drive
//!   that collects in bursts;
//! - `RESERVE` 5 allowances: at 3 the objective slipped on consumer-sata in
//!   every seed tried (a GC onset costs that drive ~18 allowances), and each
//!   allowance kept costs about 1% of a 90 s fill's writes;
//! - `MAX_SAVED` 10 and `MAX_DEBT` 10 allowances; `PAYBACK` 10 s (an empty
//!   budget, the reserve owed, halves what is spent until it is back);
//!   `DEBT_RESPONSE` 0.2 per window (90% of the gap closed in a second);
//!   `MAX_GAP` 4 (a factor of 16, so the limit grows at most 1.7x a second);
//! - checked on four cases (two drives, each in the default scenario and in
//!   `long-fill`, whose behaviour changes midway) over seeds 1 to 5, then on
//!   seeds 6 to 10 (`scripts/compare-seeds.sh`, `SEEDS=6..10`); not fitted
//!   per drive or per scenario. The objective holds in all 40 runs. Before
//!   trims were held it held in 32: the eight misses were the default
//!   scenario on consumer-sata, where the fill runs the drive's free pool
//!   out before the phase ends and the GC onset (read p99 twice the bound
//!   for about two seconds) cost more than the trims had left of the
//!   allowance;
//! - `quanta` 200 ticks/s: rate credit every 5 ms, as netflix.

use std::collections::{BTreeMap, VecDeque};

use crate::config::{parse_duration, parse_int, unknown_key, ConfigError, Configurable, Tunable};
use crate::limiter::{Limit, LimiterKind, LimiterSet};
use crate::ordering::{flush_may_go, Barrier, Queued};
use crate::policy::common::{CommonConfig, BAD_LATENCY, STATS_WINDOW, TRIM_MAX_RANGES};
use crate::policy::{class_pressure, construct, PolicyInfo, Ticker};
use crate::request::{Command, Completion, Dispatch, Op, Request};
use crate::scheduler::{DeviceView, Pressure, Retry, Scheduler, WriteLimit};
use crate::stats::{LatencySummary, Percentiles, Stats};
use crate::trim::TrimQueue;
use crate::units::{Bytes, Nanos};

/// Control window: counts of hits and misses per window.
const WINDOW: Nanos = Nanos::from_millis(100);
/// Reads per second (the allowance) and the fast cost estimate are taken over
/// this much of the recent past...
const HORIZON: Nanos = Nanos::from_secs(1);
/// ...stretched until the objective allows this many misses in it...
const MIN_HORIZON_MISSES: f64 = 10.0;
/// ...but never further back than this.
const MAX_HORIZON: Nanos = Nanos::from_secs(10);
/// Unloaded reads needed before the measured baseline replaces the estimate:
/// enough for this many of them to lie above the percentile.
const MIN_BASELINE_MISSES: f64 = 10.0;
/// A read is unloaded when no write or trim has been queued or in the
/// device for this long.
const QUIET: Nanos = Nanos::from_millis(200);
/// A trim's misses are charged spread over this long.
const TRIM_SPREAD: Nanos = Nanos::from_secs(3);
/// The cost per byte is taken over this much of the recent past, stretched
/// until it holds this many misses (at most `MAX_HORIZON`).
const COST_HORIZON: Nanos = Nanos::from_secs(5);
const COST_MISSES: f64 = 20.0;
/// Budget levels, in allowances (misses the objective allows per second of
/// reads): kept unspent, most saved, most owed.
const RESERVE: f64 = 5.0;
const MAX_SAVED: f64 = 10.0;
const MAX_DEBT: f64 = 10.0;
/// Budget off the reserve is paid back, or spent, over this long.
const PAYBACK: f64 = 10.0;
/// Share of the log gap to the target closed per window while in debt.
const DEBT_RESPONSE: f64 = 0.2;
/// Largest log2 gap to the target considered (a factor of 16).
const MAX_GAP: f64 = 4.0;
/// Smallest step of the limit, kB/s.
const MIN_STEP: u64 = 1;

pub const TUNABLES: &[Tunable] = &[
    Tunable {
        key: "objective",
        default: "p99<=2x",
        help: "read latency objective: pNN<=Kx (K times the unloaded pNN) or pNN<=DURATION; \
               NN is 50, 90, 99 or 99.9",
    },
    Tunable {
        key: "calibrate",
        default: "1s",
        help: "with a relative objective, writes that come before the unloaded baseline is known \
               wait up to this long (from the first write) while reads measure it; 0s: never",
    },
    Tunable {
        key: "write_deadline",
        default: "5s",
        help: "most time a write waits in the scheduler (then it goes whatever the limit)",
    },
    Tunable {
        key: "trim_deadline",
        default: "1s",
        help: "most time a trim waits for the writes in the device to finish",
    },
    Tunable {
        key: "trim_hold",
        default: "5s",
        help: "how long a trim is held for the writes that overwrite it (they cut it; one \
               overwritten whole is never sent); 0s: trims go at once",
    },
    Tunable {
        key: "write_depth",
        default: "4",
        help: "most writes in the device at once (steer keeps the fewest that carry its limit)",
    },
    Tunable {
        key: "min_rate",
        default: "100",
        help: "lowest write limit, kB/s (1 kB = 1000 B)",
    },
    Tunable {
        key: "max_rate",
        default: "10000000",
        help: "highest write limit, kB/s",
    },
    Tunable {
        key: "start_rate",
        default: "10000",
        help: "write limit at start, kB/s",
    },
    Tunable {
        key: "quanta",
        default: "200",
        help: "scheduler ticks per second (rate credit)",
    },
    TRIM_MAX_RANGES,
    STATS_WINDOW,
    BAD_LATENCY,
];

pub const INFO: PolicyInfo = PolicyInfo {
    name: "steer",
    summary: "adaptive: a write bandwidth limit steered every 100 ms by the share of reads \
              missing a user objective (p99<=2x unloaded), a write deadline, back-pressure",
    tunables: TUNABLES,
    build: |configure| construct(configure, Steer::new),
};

/// How far the target latency is.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Bound {
    /// Times the same percentile of unloaded reads.
    Relative(f64),
    Absolute(Nanos),
}

/// A read latency objective: a percentile and its bound.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Objective {
    /// 50, 90, 99 or 99.9.
    pub percentile: f64,
    pub bound: Bound,
}

impl Objective {
    /// Share of reads allowed over the bound.
    pub fn allowed_misses(&self) -> f64 {
        1.0 - self.percentile / 100.0
    }

    fn pick(&self, s: &LatencySummary) -> Nanos {
        match self.percentile {
            p if p >= 99.9 => s.p999,
            p if p >= 99.0 => s.p99,
            p if p >= 90.0 => s.p90,
            _ => s.p50,
        }
    }
}

/// Parses `p99<=2x`, `p99.9<=10ms`.
pub fn parse_objective(key: &str, value: &str) -> Result<Objective, ConfigError> {
    let bad = || ConfigError::BadValue {
        key: key.to_string(),
        value: value.to_string(),
        expected: "pNN<=Kx or pNN<=DURATION with NN one of 50, 90, 99, 99.9 (p99<=2x, p99<=5ms)"
            .into(),
    };
    let (metric, bound) = value.split_once("<=").ok_or_else(bad)?;
    let percentile = match metric.trim() {
        "p50" => 50.0,
        "p90" => 90.0,
        "p99" => 99.0,
        "p99.9" | "p999" => 99.9,
        _ => return Err(bad()),
    };
    let bound = bound.trim();
    let bound = match bound.strip_suffix('x') {
        Some(k) => {
            let k: f64 = k.trim().parse().map_err(|_| bad())?;
            if !(k.is_finite() && k >= 1.0) {
                return Err(bad());
            }
            Bound::Relative(k)
        }
        None => {
            let t = parse_duration(key, bound)?;
            if t == Nanos::ZERO {
                return Err(bad());
            }
            Bound::Absolute(t)
        }
    };
    Ok(Objective { percentile, bound })
}

#[derive(Clone, Debug, PartialEq)]
pub struct SteerConfig {
    pub objective: Objective,
    /// How long writes may be held, from the first one, to measure the
    /// unloaded baseline when the workload starts loaded.
    pub calibrate: Nanos,
    pub write_deadline: Nanos,
    pub trim_deadline: Nanos,
    /// How long a trim is held for writes to overwrite it.
    pub trim_hold: Nanos,
    pub write_depth: u32,
    /// kB/s.
    pub min_rate: u64,
    pub max_rate: u64,
    pub start_rate: u64,
    pub quanta: u32,
    pub common: CommonConfig,
}

impl Default for SteerConfig {
    fn default() -> Self {
        SteerConfig {
            objective: Objective {
                percentile: 99.0,
                bound: Bound::Relative(2.0),
            },
            calibrate: Nanos::from_secs(1),
            write_deadline: Nanos::from_secs(5),
            trim_deadline: Nanos::from_secs(1),
            trim_hold: Nanos::from_secs(5),
            write_depth: 4,
            min_rate: 100,
            max_rate: 10_000_000,
            start_rate: 10_000,
            quanta: 200,
            common: CommonConfig::default(),
        }
    }
}

impl Configurable for SteerConfig {
    fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        const RATE_MAX: u64 = 1 << 40;
        match key {
            "objective" => self.objective = parse_objective(key, value)?,
            "calibrate" => self.calibrate = parse_duration(key, value)?,
            "write_deadline" => self.write_deadline = parse_duration(key, value)?,
            "trim_deadline" => self.trim_deadline = parse_duration(key, value)?,
            "trim_hold" => self.trim_hold = parse_duration(key, value)?,
            "write_depth" => self.write_depth = parse_int(key, value, 1, 65_536)? as u32,
            "min_rate" => self.min_rate = parse_int(key, value, 1, RATE_MAX)?,
            "max_rate" => self.max_rate = parse_int(key, value, 1, RATE_MAX)?,
            "start_rate" => self.start_rate = parse_int(key, value, 1, RATE_MAX)?,
            "quanta" => self.quanta = parse_int(key, value, 1, 100_000)? as u32,
            _ if self.common.set(key, value)? => {}
            _ => return Err(unknown_key(INFO.name, key, TUNABLES)),
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if !(self.min_rate <= self.start_rate && self.start_rate <= self.max_rate) {
            return Err(ConfigError::Conflict(format!(
                "need min_rate <= start_rate <= max_rate, got {} <= {} <= {}",
                self.min_rate, self.start_rate, self.max_rate
            )));
        }
        if self.write_deadline == Nanos::ZERO || self.trim_deadline == Nanos::ZERO {
            return Err(ConfigError::Conflict(
                "write_deadline and trim_deadline must be above zero".into(),
            ));
        }
        Ok(())
    }
}

/// Hits and misses of one control window.
#[derive(Copy, Clone, Debug, Default)]
struct Window {
    reads: u64,
    misses: u64,
    /// Misses of reads that waited for a trim (a subset of `misses`).
    trim_misses: u64,
    /// Misses charged: the others, plus a share of the trim misses owed.
    charged: f64,
    /// Misses expected of these reads with no write about (the unloaded
    /// reads' share over the target).
    background: f64,
    write_bytes: u64,
    /// Device time of the writes completed in the window, and their bytes.
    write_service: u64,
    write_done: u64,
    /// A write waited on the limit during the window.
    limited: bool,
    /// Writes were queued or in the device at some point of the window.
    loaded: bool,
}

/// Totals over recent windows.
#[derive(Copy, Clone, Debug, Default)]
struct Span {
    windows: usize,
    reads: u64,
    /// Charged misses.
    misses: f64,
    background: f64,
    bytes: u64,
    /// A write waited on the limit in the last `HORIZON` of it.
    limited: bool,
}

impl Span {
    /// Misses per kB written, less those the reads have with no write about.
    fn cost(&self) -> f64 {
        (self.misses - self.background).max(0.0) / (self.bytes as f64 / 1000.0).max(1.0)
    }

    fn reads_per_second(&self) -> f64 {
        self.reads as f64 / (self.windows.max(1) as f64 * WINDOW.0 as f64 / 1e9)
    }
}

/// Unloaded reads, by quiet stretch: the unloaded reads between two loaded
/// ones. The baseline is the lowest percentile of a stretch with enough
/// reads for it: a drive that is still collecting garbage after writes
/// stopped (its idle GC, or a collection the last write triggered) reads
/// slower while no write is about, and pooling those reads with the rest
/// raised the baseline, and so the target, by 6% in `long-fill` on
/// consumer-sata. A stretch too short to judge goes on into the next.
#[derive(Debug, Default)]
struct QuietStretches {
    stretch: Option<Percentiles>,
    count: u64,
    /// `count` when the stretch was last judged.
    judged: u64,
    /// A loaded read came since the last unloaded one.
    interrupted: bool,
    /// The lowest percentile of a finished stretch, and the share of its
    /// reads over the bound.
    settled: Option<(Nanos, f64)>,
    /// That of the stretch going on.
    current: Option<(Nanos, f64)>,
}

impl QuietStretches {
    fn record(&mut self, latency: Nanos) {
        if self.interrupted && self.current.is_some() {
            self.settled = self.lowest();
            self.current = None;
            self.stretch = None;
            self.count = 0;
            self.judged = 0;
        }
        self.interrupted = false;
        self.stretch
            .get_or_insert_with(Percentiles::run_only)
            .record(latency);
        self.count += 1;
    }

    fn interrupt(&mut self) {
        self.interrupted = true;
    }

    /// Takes the stretch's percentile once it holds enough reads.
    fn judge(&mut self, objective: &Objective) {
        let Some(stretch) = &self.stretch else {
            return;
        };
        let fresh = self.count > self.judged;
        if !fresh || (self.count as f64) * objective.allowed_misses() < MIN_BASELINE_MISSES {
            return;
        }
        self.judged = self.count;
        let base = objective.pick(&stretch.run());
        let bound = match objective.bound {
            Bound::Relative(k) => Nanos((base.0 as f64 * k).round() as u64),
            Bound::Absolute(t) => t,
        };
        self.current = Some((base, stretch.share_above(bound)));
    }

    /// The baseline: the lower of the settled and the current percentile.
    fn lowest(&self) -> Option<(Nanos, f64)> {
        match (self.settled, self.current) {
            (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
            (a, b) => a.or(b),
        }
    }
}

/// Unsent writes by offset, so that a read finds the writes it overlaps in
/// log time: a throttled queue can hold thousands of writes, and the
/// barrier's own lookup scans them all whenever its coarse filter hits,
/// which a long queue makes most reads do.
#[derive(Debug, Default)]
struct Unsent {
    /// (offset, tag) to end.
    by_offset: BTreeMap<(u64, u64), u64>,
    /// The longest write indexed since the index was last empty.
    longest: u64,
}

impl Unsent {
    fn insert(&mut self, write: &Request, tag: u64) {
        if write.op == Op::Write && write.len.0 > 0 {
            self.by_offset.insert((write.offset.0, tag), write.end());
            self.longest = self.longest.max(write.len.0);
        }
    }

    fn remove(&mut self, write: &Queued) {
        self.by_offset.remove(&(write.request.offset.0, write.tag));
        if self.by_offset.is_empty() {
            self.longest = 0;
        }
    }

    /// Tags of the unsent writes `read` overlaps.
    fn overlapping<'a>(&'a self, read: &'a Request) -> impl Iterator<Item = u64> + 'a {
        let from = read.offset.0.saturating_sub(self.longest);
        self.by_offset
            .range((from, 0)..(read.end(), 0))
            .filter(move |(_, end)| **end > read.offset.0)
            .map(|((_, tag), _)| *tag)
    }
}

/// Reads that overlap unsent writes, each held until every one of those is
/// sent, indexed by the writes they wait for: sending a write touches only
/// the reads waiting for it. (Thousands of reads can wait at once for writes
/// held behind a flush; a scan of them all per write sent made steer seven
/// times as costly on `iosteer bench sched`.)
#[derive(Debug, Default)]
struct HeldReads {
    /// By arrival: the read, and how many unsent writes it still waits for.
    reads: BTreeMap<u64, (Request, usize)>,
    /// Tags of unsent writes held reads wait for, to those reads' arrivals
    /// (oldest first).
    by_write: BTreeMap<u64, Vec<u64>>,
    arrivals: u64,
}

impl HeldReads {
    /// Holds `read` until the writes tagged `awaited` (not empty) are sent.
    fn hold(&mut self, read: Request, awaited: &[u64]) {
        let arrival = self.arrivals;
        self.arrivals += 1;
        for tag in awaited {
            self.by_write.entry(*tag).or_default().push(arrival);
        }
        self.reads.insert(arrival, (read, awaited.len()));
    }

    /// The write tagged `tag` was sent: the reads it was the last wait of, in
    /// arrival order.
    fn release(&mut self, tag: u64) -> impl Iterator<Item = Request> + '_ {
        let waiting = self.by_write.remove(&tag).unwrap_or_default();
        waiting.into_iter().filter_map(|arrival| {
            let (_, awaited) = self.reads.get_mut(&arrival).expect("a held read");
            *awaited -= 1;
            if *awaited > 0 {
                return None;
            }
            self.reads.remove(&arrival).map(|(read, _)| read)
        })
    }

    /// The oldest write a held read waits for, if its tag is `last` or less.
    fn first_awaited(&self, last: u64) -> Option<u64> {
        let (tag, _) = self.by_write.first_key_value()?;
        (*tag <= last).then_some(*tag)
    }

    fn is_empty(&self) -> bool {
        self.reads.is_empty()
    }

    fn requests(&self) -> impl Iterator<Item = &Request> {
        self.reads.values().map(|(read, _)| read)
    }
}

/// Writes in arrival order (so by tag). An urgent write leaves from the
/// middle: its slot is emptied, not removed (which would move every write
/// behind it, in a throttled queue of thousands), and empty slots are dropped
/// once they reach the front, so the front is always a queued write.
#[derive(Debug, Default)]
struct WriteQueue {
    /// Tag, and the write unless it has been sent.
    slots: VecDeque<(u64, Option<Queued>)>,
}

impl WriteQueue {
    fn push(&mut self, write: Queued) {
        self.slots.push_back((write.tag, Some(write)));
    }

    fn oldest(&self) -> Option<&Queued> {
        self.slots.front().and_then(|(_, write)| write.as_ref())
    }

    /// The newest tag in the queue (its write may have been sent): no queued
    /// write has a higher one.
    fn last_tag(&self) -> Option<u64> {
        self.slots.back().map(|(tag, _)| *tag)
    }

    /// Takes the write tagged `tag` out, if queued.
    fn take(&mut self, tag: u64) -> Option<Queued> {
        let at = self.slots.binary_search_by_key(&tag, |(t, _)| *t).ok()?;
        let write = self.slots[at].1.take();
        while self.slots.front().is_some_and(|(_, w)| w.is_none()) {
            self.slots.pop_front();
        }
        write
    }

    fn iter(&self) -> impl Iterator<Item = &Queued> {
        self.slots.iter().filter_map(|(_, write)| write.as_ref())
    }

    fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

/// Control windows in `d`.
fn windows(d: Nanos) -> usize {
    (d.0 / WINDOW.0) as usize
}

/// Reads in the device dispatched at one instant, and the longest time one
/// of them had waited in the scheduler (completions carry the dispatch time,
/// not the arrival; the longest wait is the cautious guess).
#[derive(Copy, Clone, Debug)]
struct ReadsSent {
    at: Nanos,
    count: u32,
    wait: Nanos,
}

#[derive(Debug)]
pub struct Steer {
    config: SteerConfig,
    reads: VecDeque<Request>,
    /// Reads that overlap a queued write, until it is sent (the writes they
    /// wait for are urgent)...
    held_reads: HeldReads,
    /// ...and then, ahead of the other reads.
    released_reads: VecDeque<Request>,
    /// Writes all queued before any waiting flush (that flush, and what
    /// queued behind it, wait in `barrier`).
    writes: WriteQueue,
    unsent: Unsent,
    /// The tag the barrier gives the next write or flush.
    next_tag: u64,
    trims: TrimQueue,
    barrier: Barrier,
    /// Bandwidth (steered) and queue depth.
    limiter: LimiterSet,
    reads_sent: VecDeque<ReadsSent>,
    /// The limit as a real number (kB/s), so small steps accumulate.
    rate: f64,
    /// Misses the objective still allows (negative: owed).
    budget: f64,
    /// Trim misses not yet charged.
    trim_owed: f64,
    /// The trim in the device since, and when the last one completed.
    trim_sent: Option<Nanos>,
    last_trim: Option<(Nanos, Nanos)>,
    current: Window,
    history: VecDeque<Window>,
    next_window: Nanos,
    /// Unloaded read latencies, and the lowest one-second read median seen.
    unloaded: QuietStretches,
    lowest_median: Option<Nanos>,
    /// When the first write was queued, and whether a read has been.
    first_write: Option<Nanos>,
    read_seen: bool,
    /// Last time a write or trim was queued, sent or completed.
    last_write_activity: Option<Nanos>,
    stats: Stats,
    ticker: Ticker,
}

impl Steer {
    pub fn new(config: SteerConfig) -> Steer {
        let bandwidth = Limit {
            min: config.min_rate,
            max: config.max_rate,
            current: config.start_rate,
        };
        let depth = Limit {
            min: 1,
            max: u64::from(config.write_depth),
            current: u64::from(config.write_depth),
        };
        let mut limits = [Limit::UNLIMITED; 3];
        limits[LimiterKind::Bandwidth.index()] = bandwidth;
        limits[LimiterKind::QueueDepth.index()] = depth;
        Steer {
            reads: VecDeque::new(),
            held_reads: HeldReads::default(),
            released_reads: VecDeque::new(),
            writes: WriteQueue::default(),
            unsent: Unsent::default(),
            next_tag: 1,
            trims: TrimQueue::new(config.common.trim_max_ranges, 0),
            barrier: Barrier::default(),
            limiter: LimiterSet::new(
                &[LimiterKind::Bandwidth, LimiterKind::QueueDepth],
                limits,
                config.quanta,
            ),
            reads_sent: VecDeque::new(),
            rate: config.start_rate as f64,
            budget: 0.0,
            trim_owed: 0.0,
            trim_sent: None,
            last_trim: None,
            current: Window::default(),
            history: VecDeque::new(),
            next_window: WINDOW,
            unloaded: QuietStretches::default(),
            lowest_median: None,
            first_write: None,
            read_seen: false,
            last_write_activity: None,
            stats: config.common.stats(),
            ticker: Ticker::per_second(config.quanta),
            config,
        }
    }

    /// The write limit now, kB/s.
    pub fn rate(&self) -> u64 {
        self.limiter.steered().map_or(0, |(_, l)| l.current)
    }

    /// The most writes in flight now.
    pub fn write_depth(&self) -> u64 {
        self.limiter
            .get(LimiterKind::QueueDepth)
            .map_or(0, |l| l.limit().current)
    }

    /// The read latency target now, if known.
    pub fn target(&self) -> Option<Nanos> {
        match self.config.objective.bound {
            Bound::Absolute(t) => Some(t),
            Bound::Relative(k) => {
                let base = self
                    .baseline()
                    .or_else(|| self.lowest_median.map(|m| Nanos(m.0 * 2)))?;
                Some(Nanos((base.0 as f64 * k).round() as u64))
            }
        }
    }

    /// The measured unloaded percentile, once enough unloaded reads were seen.
    pub fn baseline(&self) -> Option<Nanos> {
        self.unloaded.lowest().map(|(base, _)| base)
    }

    fn has_work(&self) -> bool {
        !self.reads.is_empty()
            || !self.held_reads.is_empty()
            || !self.released_reads.is_empty()
            || !self.writes.is_empty()
            || self.barrier.has_held()
            || self.trims.has_work()
    }

    /// Reads queued, held or in the device.
    fn reads_about(&self) -> bool {
        !self.reads.is_empty()
            || !self.held_reads.is_empty()
            || !self.released_reads.is_empty()
            || self.stats.class(Op::Read).in_flight > 0
    }

    /// The tag of the oldest queued write.
    fn oldest_write(&self) -> Option<u64> {
        self.writes.oldest().map(|w| w.tag)
    }

    fn write_overdue(&self, now: Nanos) -> bool {
        self.writes
            .oldest()
            .is_some_and(|w| now - w.request.submitted >= self.config.write_deadline)
    }

    /// The tag of the oldest urgent write. Urgent writes behind a waiting
    /// flush (tags above every queued one) wait for it; a sent write is
    /// awaited no more, so the first tag in range is queued.
    fn urgent_write(&self) -> Option<u64> {
        let last = self.writes.last_tag()?;
        self.held_reads.first_awaited(last)
    }

    /// The tag of the write that goes ahead of the limit now, if any: the
    /// oldest once overdue, else one a read waits for.
    fn pushed_write(&self, now: Nanos) -> Option<u64> {
        if self.write_overdue(now) {
            return self.oldest_write();
        }
        self.urgent_write()
    }

    /// Whether writes are held while reads measure the unloaded baseline: a
    /// relative objective, no baseline yet, reads about, and less than
    /// `calibrate` since the first write (a workload that starts loaded
    /// would otherwise never show an unloaded read).
    fn calibrating(&self, now: Nanos) -> bool {
        matches!(self.config.objective.bound, Bound::Relative(_))
            && self.baseline().is_none()
            && self.read_seen
            && self
                .first_write
                .is_some_and(|first| now - first < self.config.calibrate)
    }

    /// The tag of the oldest write, if the limiters admit it.
    fn admitted_write(&mut self, now: Nanos) -> Option<u64> {
        let oldest = self.oldest_write()?;
        if self.trims_waiting(now) || self.calibrating(now) {
            return None;
        }
        let ok = self.limiter.admits(self.stats.class(Op::Write).in_flight);
        if !ok {
            self.stats.class_mut(Op::Write).limited = true;
            self.current.limited = true;
        }
        ok.then_some(oldest)
    }

    /// A waiting flush goes once every write before it has been sent and
    /// completed; the writes behind it then join the queue.
    fn take_flush(&mut self, now: Nanos) -> Option<Command> {
        let in_flight = self.stats.class(Op::Write).in_flight;
        if !self.barrier.flush_due() || !flush_may_go(in_flight) {
            return None;
        }
        let flush = self.barrier.take_flush()?;
        while let Some(write) = self.barrier.release() {
            self.writes.push(write);
        }
        self.last_write_activity = Some(now);
        Some(Command::single(flush.request, now))
    }

    /// Whether a trim is done being held and waits to be sent (then writes
    /// wait for it). A trim is held only while writes are about: with none,
    /// no write will cut it soon, and a job that only trims would wait for
    /// nothing.
    fn trims_waiting(&self, now: Nanos) -> bool {
        if self.trims.is_empty() || self.stats.class(Op::Trim).in_flight > 0 {
            return false;
        }
        let hold = if self.writes_about() {
            self.config.trim_hold
        } else {
            Nanos::ZERO
        };
        self.trims.due_at(hold).is_some_and(|t| t <= now)
    }

    /// Writes queued or in the device, or sent within the last `HORIZON`.
    fn writes_about(&self) -> bool {
        let w = self.stats.class(Op::Write);
        w.queued + w.in_flight > 0
            || self.current.write_bytes > 0
            || self
                .history
                .iter()
                .rev()
                .take(windows(HORIZON))
                .any(|w| w.write_bytes > 0)
    }

    fn trim_ready(&self, now: Nanos) -> bool {
        if !self.trims_waiting(now) {
            return false;
        }
        let overdue = self
            .trims
            .due_at(self.config.trim_hold + self.config.trim_deadline)
            .is_some_and(|t| t <= now);
        let writes_pushed = self.pushed_write(now).is_some();
        self.stats.class(Op::Write).in_flight == 0 || overdue || writes_pushed
    }

    fn send_write(&mut self, tag: u64, now: Nanos) -> Command {
        let entry = self.writes.take(tag).expect("a write is ready");
        self.unsent.remove(&entry);
        self.barrier.sent_write(&entry);
        self.released_reads.extend(self.held_reads.release(tag));
        self.limiter.charge(entry.request.len);
        self.current.write_bytes += entry.request.len.0;
        self.last_write_activity = Some(now);
        Command::single(entry.request, now)
    }

    fn send_read(&mut self, read: Request, now: Nanos) -> Command {
        let wait = now - read.submitted;
        match self.reads_sent.back_mut() {
            Some(last) if last.at == now => {
                last.count += 1;
                last.wait = last.wait.max(wait);
            }
            _ => self.reads_sent.push_back(ReadsSent {
                at: now,
                count: 1,
                wait,
            }),
        }
        Command::single(read, now)
    }

    /// The scheduler wait of a read sent at `dispatched`, now completed.
    fn read_wait(&mut self, dispatched: Nanos) -> Nanos {
        let i = self.reads_sent.partition_point(|r| r.at < dispatched);
        let Some(entry) = self.reads_sent.get_mut(i).filter(|r| r.at == dispatched) else {
            return Nanos::ZERO;
        };
        let wait = entry.wait;
        entry.count -= 1;
        while self.reads_sent.front().is_some_and(|r| r.count == 0) {
            self.reads_sent.pop_front();
        }
        wait
    }

    /// Whether a read that lived from `submitted` to `done` waited for a
    /// trim: it was in the system while one was in the device, or came in
    /// within one trim's time after it (behind the reads it held back).
    fn waited_for_trim(&self, submitted: Nanos, done: Nanos) -> bool {
        if self.trim_sent.is_some_and(|sent| sent < done) {
            return true;
        }
        self.last_trim
            .is_some_and(|(sent, end)| submitted < end + (end - sent) && done > sent)
    }

    /// Whether a read completing now is unloaded (writes held while
    /// calibrating do not load the device).
    fn quiet(&self, now: Nanos) -> bool {
        let w = self.stats.class(Op::Write);
        let t = self.stats.class(Op::Trim);
        let held = if self.calibrating(now) { w.queued } else { 0 };
        w.queued + w.in_flight + t.queued + t.in_flight == held
            && self.last_write_activity.is_none_or(|at| now - at >= QUIET)
    }

    /// One control window ended: update the baseline and steer the limit.
    fn end_window(&mut self, now: Nanos) {
        let mut window = std::mem::take(&mut self.current);
        let w = self.stats.class(Op::Write);
        window.loaded |= window.write_bytes > 0 || w.queued + w.in_flight > 0;
        window.charged = self.charge(&window);
        let background_share = self.unloaded.lowest().map_or(0.0, |(_, share)| share);
        window.background = window.reads as f64 * background_share;
        self.history.push_back(window);
        let keep = (MAX_HORIZON.0 / WINDOW.0) as usize;
        while self.history.len() > keep {
            self.history.pop_front();
        }
        let median = self.stats.class(Op::Read).device_latency.last_window().p50;
        if median > Nanos::ZERO {
            self.lowest_median = Some(self.lowest_median.map_or(median, |m| m.min(median)));
        }
        let f = self.config.objective.allowed_misses();
        self.unloaded.judge(&self.config.objective);
        // Misses against an estimate about to be replaced judge nothing.
        if !self.calibrating(now) {
            self.steer(f, window);
        }
        self.set_depth();
    }

    /// Misses charged for a window: the others at once, trim misses spread
    /// over `TRIM_SPREAD` (each window pays its share of what is owed).
    fn charge(&mut self, window: &Window) -> f64 {
        self.trim_owed += window.trim_misses as f64;
        let paid = self.trim_owed * (WINDOW.0 as f64 / TRIM_SPREAD.0 as f64);
        self.trim_owed -= paid;
        (window.misses - window.trim_misses) as f64 + paid
    }

    /// Totals over the last `windows` windows, stretched back while `short`
    /// of evidence, but over at most `max` windows.
    fn span(&self, windows: usize, max: usize, short: impl Fn(&Span) -> bool) -> Span {
        let mut t = Span::default();
        for (n, w) in self.history.iter().rev().enumerate() {
            if n >= max || (n >= windows && !short(&t)) {
                break;
            }
            t.windows += 1;
            t.reads += w.reads;
            t.misses += w.charged;
            t.background += w.background;
            t.bytes += w.write_bytes;
            t.limited |= w.limited && n < windows;
        }
        t
    }

    fn steer(&mut self, f: f64, last: Window) {
        let recent = self.span(windows(HORIZON), windows(MAX_HORIZON), |t| {
            (t.reads as f64) * f < MIN_HORIZON_MISSES
        });
        let allowance = (f * recent.reads_per_second()).max(1.0);
        let earned = if last.loaded {
            f * last.reads as f64
        } else {
            0.0
        };
        self.budget = (self.budget + earned - last.charged)
            .clamp(-MAX_DEBT * allowance, MAX_SAVED * allowance);
        // Nothing to judge: no write to limit, or no read to tell...
        if !last.loaded || last.reads == 0 {
            // ...but with no read about for a while, nothing to protect:
            // writes alone go as fast as they are sent.
            let second = self.span(windows(HORIZON), windows(HORIZON), |_| false);
            if last.loaded && second.reads == 0 && !self.reads_about() {
                self.apply(MAX_GAP / windows(COST_HORIZON) as f64, &second);
            }
            return;
        }
        let log_step = self.step_to_target(allowance, &recent);
        self.apply(log_step, &recent);
    }

    /// The fewest writes in flight that carry the limit: the limit times
    /// the device time per byte of a write, at its lowest over the history
    /// (a write that waited for GC says nothing of what more writes in
    /// flight would carry), rounded up; at most `write_depth`.
    fn set_depth(&mut self) {
        let fastest = self
            .history
            .iter()
            .filter(|w| w.write_done > 0)
            .map(|w| w.write_service as f64 / w.write_done as f64)
            .min_by(f64::total_cmp);
        let Some(ns_per_byte) = fastest else {
            return;
        };
        let busy = self.rate * 1000.0 * ns_per_byte / 1e9;
        let depth = busy.ceil().clamp(1.0, f64::from(self.config.write_depth));
        if let Some(limiter) = self.limiter.get_mut(LimiterKind::QueueDepth) {
            limiter.limit_mut().current = depth as u64;
        }
    }

    /// The log2 step towards the rate that spends, at the current cost per
    /// byte, what the budget allows per second.
    fn step_to_target(&self, allowance: f64, recent: &Span) -> f64 {
        // The allowance, less the debt or plus the savings off the reserve,
        // paid back or spent over PAYBACK; a sixteenth at least, so that the
        // deepest debt still gives a target (MAX_GAP below the rate at most).
        let spend =
            (allowance + (self.budget - RESERVE * allowance) / PAYBACK).max(allowance / 16.0);
        let long = self.span(windows(COST_HORIZON), windows(MAX_HORIZON), |t| {
            t.misses < COST_MISSES
        });
        let in_debt = self.budget < 0.0;
        let cost = if in_debt {
            long.cost().max(recent.cost())
        } else {
            long.cost()
        };
        let gap = if cost > 0.0 {
            (spend / cost / self.rate).log2().clamp(-MAX_GAP, MAX_GAP)
        } else {
            MAX_GAP
        };
        if in_debt && gap < 0.0 {
            gap * DEBT_RESPONSE
        } else {
            gap / windows(COST_HORIZON) as f64
        }
    }

    /// Moves the limit by 2^`log_step`: up only while writes were held back
    /// by it, and not above twice what they used; at least `MIN_STEP`.
    fn apply(&mut self, log_step: f64, recent: &Span) {
        let mut rate = self.rate * log_step.exp2();
        if log_step > 0.0 {
            if !recent.limited {
                return;
            }
            let seconds = (recent.windows.max(1) as u64 * WINDOW.0) as f64 / 1e9;
            let used = recent.bytes as f64 / 1000.0 / seconds;
            rate = rate
                .max(self.rate + MIN_STEP as f64)
                .min((2.0 * used).max(self.rate));
        } else if log_step < 0.0 {
            rate = rate.min(self.rate - MIN_STEP as f64);
        }
        let (min, max) = (self.config.min_rate as f64, self.config.max_rate as f64);
        self.rate = rate.clamp(min, max);
        if let Some(limit) = self.limiter.steered_mut() {
            limit.current = self.rate.round() as u64;
            limit.clamp();
        }
    }

    fn oldest(&self, op: Op) -> Option<Nanos> {
        match op {
            Op::Read => self
                .reads
                .front()
                .into_iter()
                .chain(self.held_reads.requests())
                .chain(&self.released_reads)
                .map(|r| r.submitted)
                .min(),
            Op::Write | Op::Flush => self
                .writes
                .iter()
                .map(|q| &q.request)
                .chain(self.barrier.held())
                .filter(|r| r.op == op)
                .map(|r| r.submitted)
                .min(),
            Op::Trim => None,
        }
    }
}

impl Scheduler for Steer {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn enqueue(&mut self, request: Request, now: Nanos) {
        self.stats.on_enqueue(&request, now);
        match request.op {
            Op::Read => {
                self.read_seen = true;
                // The read waits for every unsent write it overlaps; those go
                // at once, alone, ahead of the limit (sending every write
                // queued before them too would be a burst the reads pay for).
                let awaited: Vec<u64> = self.unsent.overlapping(&request).collect();
                if awaited.is_empty() {
                    self.reads.push_back(request);
                } else {
                    self.held_reads.hold(request, &awaited);
                }
            }
            Op::Write | Op::Flush => {
                self.first_write.get_or_insert(now);
                if !self.calibrating(now) {
                    self.last_write_activity = Some(now);
                }
                if request.op == Op::Write {
                    self.trims.cut(request.offset, request.len);
                }
                let tag = self.next_tag;
                self.next_tag += 1;
                self.unsent.insert(&request, tag);
                if let Some(write) = self.barrier.admit(request) {
                    debug_assert_eq!(write.tag, tag, "tags as the barrier gives them");
                    self.writes.push(write);
                }
            }
            Op::Trim => {
                self.last_write_activity = Some(now);
                self.trims.push(request);
            }
        }
    }

    fn dispatch(&mut self, now: Nanos, device: DeviceView) -> Option<Dispatch> {
        if let Some(trim) = self.trims.pop_elided() {
            self.stats.on_elide(&trim, now);
            return Some(Dispatch::CompletedWithoutDevice(trim));
        }
        self.stats.device_slots = device.slots;
        if self.stats.queued() == 0 || !device.accepts() {
            return None;
        }
        let command = if let Some(read) = self.released_reads.pop_front() {
            self.send_read(read, now)
        } else if self.trim_ready(now) {
            self.last_write_activity = Some(now);
            self.trim_sent = Some(now);
            self.trims.take_command(now).expect("trims wait")
        } else if let Some(flush) = self.take_flush(now) {
            flush
        } else if let Some(tag) = self.pushed_write(now).filter(|_| !self.trims_waiting(now)) {
            self.send_write(tag, now)
        } else if let Some(read) = self.reads.pop_front() {
            self.send_read(read, now)
        } else if let Some(tag) = self.admitted_write(now) {
            self.send_write(tag, now)
        } else {
            return None;
        };
        self.stats.on_dispatch(&command, now);
        Some(Dispatch::ToDevice(command))
    }

    fn complete(&mut self, completion: &Completion, now: Nanos) -> Retry {
        self.stats.on_complete(completion, now);
        match completion.op {
            Op::Read => {
                let latency = now - completion.dispatched + self.read_wait(completion.dispatched);
                self.current.reads += 1;
                if self.target().is_some_and(|t| latency > t) {
                    self.current.misses += 1;
                    if self.waited_for_trim(now - latency, now) {
                        self.current.trim_misses += 1;
                    }
                }
                if self.quiet(now) {
                    self.unloaded.record(latency);
                } else {
                    self.unloaded.interrupt();
                }
            }
            Op::Trim => {
                if let Some(sent) = self.trim_sent.take() {
                    self.last_trim = Some((sent, now));
                }
                self.last_write_activity = Some(now);
            }
            Op::Write => {
                self.current.write_service += (now - completion.dispatched).0;
                self.current.write_done += completion.bytes.0;
                self.last_write_activity = Some(now);
            }
            _ => self.last_write_activity = Some(now),
        }
        Retry::when(self.has_work())
    }

    fn next_timer(&self) -> Option<Nanos> {
        Some(self.ticker.next())
    }

    fn tick(&mut self, now: Nanos) -> Retry {
        let ticks = self.ticker.advance(now);
        if ticks > 0 {
            self.limiter.refill(ticks);
            self.stats.on_tick(now, ticks);
            while now >= self.next_window {
                self.end_window(now);
                self.next_window += WINDOW;
            }
        }
        Retry::when(self.has_work())
    }

    fn stats(&self) -> &Stats {
        &self.stats
    }

    fn pressure(&self, now: Nanos) -> Pressure {
        Pressure::from_classes(|op| {
            let limiters = (op == Op::Write).then_some(&self.limiter);
            class_pressure(&self.stats, op, limiters, self.oldest(op), now)
        })
    }

    fn write_limit(&self) -> Option<WriteLimit> {
        let (kind, limit) = self.limiter.steered()?;
        Some(WriteLimit {
            kind: kind.name(),
            value: limit.current as f64,
            unit: kind.short_unit(),
        })
    }

    fn speed_up_trims(&mut self, bytes: Bytes) {
        self.trims.speed_up(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::apply_pairs;
    use crate::policy::testkit::{configured, Bench};

    fn steer(settings: &str) -> Steer {
        Steer::new(configured(settings))
    }

    #[test]
    fn objectives_parse_and_bad_ones_are_refused() {
        let o = parse_objective("objective", "p99<=2x").unwrap();
        assert_eq!(o.bound, Bound::Relative(2.0));
        assert!((o.allowed_misses() - 0.01).abs() < 1e-12);
        let o = parse_objective("objective", "p99.9<=5ms").unwrap();
        assert_eq!(o.bound, Bound::Absolute(Nanos::from_millis(5)));
        for bad in ["p99", "p95<=2x", "p99<=0.5x", "p99<=5", "p99<=0ms"] {
            assert!(parse_objective("objective", bad).is_err(), "{bad}");
        }
        let mut c = SteerConfig::default();
        assert!(apply_pairs(&mut c, "min_rate=500,start_rate=100").is_err());
    }

    /// Reads every 1 ms for `ms` from `bench.now`, with a backlog of writes;
    /// the device's read latency is `read_us`.
    fn load(s: &mut Steer, bench: &mut Bench, ms: u64, id: &mut u64) {
        let end = bench.now + Nanos::from_millis(ms);
        while bench.now < end {
            let at = bench.now;
            bench.submit(s, Request::new(*id, Op::Read, (*id % 1000) << 20, 4096, at));
            *id += 1;
            if s.stats().class(Op::Write).queued < 64 {
                let w = Request::new(*id, Op::Write, (1 << 40) + (*id << 17), 128 << 10, at);
                bench.submit(s, w);
                *id += 1;
            }
            bench.advance(s, at + Nanos::from_millis(1));
        }
    }

    /// A bench whose reads take the returned cell's microseconds, writes
    /// 500 us.
    fn bench_with_read_time(read_us: u64) -> (Bench, std::rc::Rc<std::cell::Cell<u64>>) {
        let read_us = std::rc::Rc::new(std::cell::Cell::new(read_us));
        let latency = read_us.clone();
        let bench = Bench::new(32, move |c: &Command| match c.op {
            Op::Read => Nanos::from_micros(latency.get()),
            _ => Nanos::from_micros(500),
        });
        (bench, read_us)
    }

    #[test]
    fn slow_reads_lower_the_write_limit_and_fast_reads_raise_it() {
        let (mut bench, read_us) = bench_with_read_time(200);
        let mut s = steer("objective=p99<=1ms,start_rate=10000,write_deadline=100s");
        let mut id = 0;
        load(&mut s, &mut bench, 3000, &mut id);
        let fast = s.rate();
        assert!(
            fast > 30_000,
            "reads meet 1 ms: the limit grows, got {fast}"
        );
        read_us.set(5000);
        load(&mut s, &mut bench, 3000, &mut id);
        let slow = s.rate();
        assert!(slow * 4 < fast, "every read misses: {fast} -> {slow}");
        // The debt of the slow period (capped at 10 s of allowance) is paid
        // back first, then the limit grows again.
        read_us.set(200);
        load(&mut s, &mut bench, 12_000, &mut id);
        assert!(s.rate() > 2 * slow, "recovers: {slow} -> {}", s.rate());
    }

    /// `n` reads, ids from `from`, one every 1 ms (and no write of its own).
    fn reads_every_ms(s: &mut Steer, bench: &mut Bench, from: u64, n: u64) {
        for id in from..from + n {
            let at = bench.now;
            bench.submit(s, Request::new(id, Op::Read, id << 20, 4096, at));
            bench.advance(s, at + Nanos::from_millis(1));
        }
    }

    #[test]
    fn the_baseline_is_learnt_from_unloaded_reads() {
        let mut bench = Bench::new(32, |c: &Command| match c.op {
            Op::Read => Nanos::from_micros(300),
            _ => Nanos::from_micros(500),
        });
        let mut s = steer("");
        reads_every_ms(&mut s, &mut bench, 0, 3000);
        let base = s.baseline().expect("3000 unloaded reads");
        assert!(
            (Nanos::from_micros(295)..=Nanos::from_micros(305)).contains(&base),
            "{base}"
        );
        assert_eq!(s.target(), Some(Nanos(base.0 * 2)));
    }

    #[test]
    fn a_quiet_stretch_of_slower_reads_does_not_raise_the_baseline() {
        let (mut bench, read_us) = bench_with_read_time(300);
        let mut s = steer("");
        reads_every_ms(&mut s, &mut bench, 0, 3000);
        let first = s.baseline().expect("3000 unloaded reads");
        // A write, and the reads during it and for QUIET after: loaded.
        let at = bench.now;
        bench.submit(&mut s, Request::new(1 << 30, Op::Write, 1 << 40, 4096, at));
        reads_every_ms(&mut s, &mut bench, 3000, 300);
        // The drive reads slower with no write about (still collecting).
        read_us.set(600);
        reads_every_ms(&mut s, &mut bench, 4000, 3000);
        assert_eq!(
            s.baseline(),
            Some(first),
            "the slower stretch is not pooled"
        );
        // A later, faster stretch lowers it.
        let at = bench.now;
        bench.submit(&mut s, Request::new(1 << 31, Op::Write, 1 << 40, 4096, at));
        read_us.set(200);
        reads_every_ms(&mut s, &mut bench, 8000, 300);
        reads_every_ms(&mut s, &mut bench, 9000, 3000);
        let last = s.baseline().expect("three stretches");
        assert!(last < first, "{first} -> {last}");
    }

    #[test]
    fn writes_with_no_read_about_are_not_held_to_the_start_rate() {
        let mut bench = Bench::new(64, |_: &Command| Nanos::from_micros(500));
        let mut s = steer("objective=p99<=1ms,start_rate=10000");
        for id in 0..10_000u64 {
            let at = bench.now;
            if s.stats().class(Op::Write).queued < 64 {
                let w = Request::new(id, Op::Write, id << 17, 128 << 10, at);
                bench.submit(&mut s, w);
            }
            bench.advance(&mut s, at + Nanos::from_millis(1));
        }
        // 10 s of writes alone: the limit grows with what they use (at most
        // twice it), far past the start.
        assert!(s.rate() > 100_000, "{}", s.rate());
    }

    #[test]
    fn the_write_depth_is_the_fewest_writes_that_carry_the_limit() {
        // 128 KiB writes take 500 us each, side by side: 3.8 ns per byte.
        let depth_at = |start_rate: u64| {
            let mut bench = Bench::new(64, |_: &Command| Nanos::from_micros(500));
            let settings = format!("objective=p99<=10ms,write_depth=8,start_rate={start_rate}");
            let mut s = steer(&settings);
            for id in 0..200u64 {
                let at = bench.now;
                let w = Request::new(id, Op::Write, id << 17, 128 << 10, at);
                bench.submit(&mut s, w);
                bench.advance(&mut s, at + Nanos::from_millis(1));
            }
            s.write_depth()
        };
        // 10 MB/s keeps 0.04 writes busy; 1 GB/s, 3.8; 10 GB/s, 38.
        assert_eq!(depth_at(10_000), 1);
        assert_eq!(depth_at(1_000_000), 4);
        assert_eq!(depth_at(10_000_000), 8, "at most write_depth");
    }

    /// A device whose read p99 is 15x its median (2% of reads take 1.5 ms),
    /// as on a virtio disk, where twice the median would be far off.
    fn skewed_reads() -> Bench {
        Bench::new(32, |c: &Command| match c.op {
            Op::Read if (c.requests[0].offset.0 >> 20) % 50 == 0 => Nanos::from_micros(1500),
            Op::Read => Nanos::from_micros(100),
            _ => Nanos::from_micros(500),
        })
    }

    #[test]
    fn a_workload_that_starts_loaded_holds_writes_to_measure_the_baseline() {
        let mut bench = skewed_reads();
        let mut s = steer("calibrate=2s");
        let mut id = 0;
        load(&mut s, &mut bench, 950, &mut id);
        assert_eq!(
            s.stats().class(Op::Write).completed,
            0,
            "held while calibrating"
        );
        assert_eq!(s.baseline(), None, "fewer than 1,000 reads so far");
        load(&mut s, &mut bench, 350, &mut id);
        let base = s.baseline().expect("1,300 unloaded reads");
        assert!(base >= Nanos::from_micros(1500), "the skewed p99: {base}");
        assert!(s.stats().class(Op::Write).completed > 0, "released");
    }

    #[test]
    fn with_calibration_off_a_loaded_start_uses_the_median_estimate() {
        let mut bench = skewed_reads();
        let mut s = steer("calibrate=0s");
        let mut id = 0;
        load(&mut s, &mut bench, 1300, &mut id);
        assert!(s.stats().class(Op::Write).completed > 0);
        assert_eq!(s.baseline(), None);
        let target = s.target().expect("an estimate");
        let estimate = Nanos::from_micros(395)..=Nanos::from_micros(405);
        assert!(estimate.contains(&target), "2 x 2 x 100 us: {target}");
    }

    #[test]
    fn misses_the_reads_have_without_writes_are_not_blamed_on_writes() {
        use std::cell::Cell;
        // One read in 200 takes 1.5 ms whatever the writes do: 0.5% of
        // reads miss 2x the p99 (100 us) with or without them.
        let reads = Cell::new(0u64);
        let mut bench = Bench::new(32, move |c: &Command| match c.op {
            Op::Read => {
                reads.set(reads.get() + 1);
                let slow = reads.get() % 200 == 0;
                Nanos::from_micros(if slow { 1500 } else { 100 })
            }
            _ => Nanos::from_micros(500),
        });
        let mut s = steer("write_deadline=100s,calibrate=2s");
        let mut id = 0;
        load(&mut s, &mut bench, 10_000, &mut id);
        assert!(s.baseline().is_some(), "calibrated");
        assert!(s.rate() > 16 * 10_000, "{} kB/s", s.rate());
    }

    #[test]
    fn a_throttled_write_goes_at_its_deadline() {
        let mut bench = Bench::new(32, |_: &Command| Nanos::from_micros(100));
        let mut s = steer("min_rate=1,start_rate=1,write_deadline=50ms");
        for id in 0..4u64 {
            bench.submit(
                &mut s,
                Request::new(id, Op::Write, id << 20, 128 << 10, Nanos::ZERO),
            );
        }
        bench.advance(&mut s, Nanos::from_millis(49));
        assert_eq!(bench.sent.len(), 1, "1 kB/s lets one write go, in debt");
        bench.advance(&mut s, Nanos::from_millis(56));
        assert_eq!(bench.sent.len(), 4, "the rest went at the deadline");
        assert!(bench.sent[1..]
            .iter()
            .all(|c| c.dispatched >= Nanos::from_millis(50)));
    }

    #[test]
    fn a_read_over_a_throttled_write_pulls_it_forward_and_only_it_waits() {
        let mut bench = Bench::new(32, |_: &Command| Nanos::from_micros(100));
        let mut s = steer("min_rate=1,start_rate=1,write_deadline=10s");
        for id in 0..3u64 {
            bench.submit(
                &mut s,
                Request::new(id, Op::Write, id << 20, 4096, Nanos::ZERO),
            );
        }
        assert_eq!(bench.sent.len(), 1);
        bench.submit(
            &mut s,
            Request::new(10, Op::Read, 2 << 20, 4096, Nanos::ZERO),
        );
        bench.submit(
            &mut s,
            Request::new(11, Op::Read, 9 << 20, 4096, Nanos::ZERO),
        );
        // Write 2 goes alone, ahead of write 1, which the limit still holds.
        let order: Vec<u64> = bench.sent.iter().map(|c| c.requests[0].id.0).collect();
        assert_eq!(order, [0, 2, 10, 11]);
        assert_eq!(s.stats().class(Op::Write).queued, 1);
    }

    #[test]
    fn a_held_read_goes_when_its_last_write_is_sent_in_arrival_order() {
        let read = |id: u64| Request::new(id, Op::Read, 0, 4096, Nanos::ZERO);
        let mut held = HeldReads::default();
        held.hold(read(1), &[3, 5]);
        held.hold(read(2), &[5]);
        held.hold(read(3), &[3]);
        assert_eq!(held.first_awaited(4), Some(3));
        let ids = |reads: Vec<Request>| reads.iter().map(|r| r.id.0).collect::<Vec<_>>();
        assert_eq!(ids(held.release(5).collect()), [2]);
        assert_eq!(held.first_awaited(2), None, "write 3 is not queued yet");
        assert_eq!(ids(held.release(3).collect()), [1, 3]);
        assert!(held.is_empty() && held.first_awaited(u64::MAX).is_none());
    }

    #[test]
    fn a_write_taken_from_the_middle_leaves_a_gap_dropped_at_the_front() {
        let mut writes = WriteQueue::default();
        for tag in [2, 3, 5] {
            let request = Request::new(tag, Op::Write, tag << 20, 4096, Nanos::ZERO);
            writes.push(Queued { request, tag });
        }
        assert_eq!(writes.take(3).map(|w| w.tag), Some(3));
        assert!(writes.take(3).is_none(), "sent already");
        let tags = |q: &WriteQueue| q.iter().map(|w| w.tag).collect::<Vec<_>>();
        assert_eq!(tags(&writes), [2, 5]);
        writes.take(2);
        assert_eq!(writes.oldest().map(|w| w.tag), Some(5), "the gap went too");
        writes.take(5);
        assert!(writes.is_empty() && writes.last_tag().is_none());
    }

    #[test]
    fn a_trim_waits_for_writes_in_flight_and_holds_new_ones() {
        let mut bench = Bench::new(32, |_: &Command| Nanos::from_millis(2));
        let mut s = steer("trim_hold=0s");
        let w = |id: u64| Request::new(id, Op::Write, id << 20, 4096, Nanos::ZERO);
        bench.submit(&mut s, w(0));
        bench.submit(
            &mut s,
            Request::new(1, Op::Trim, 1 << 30, 1 << 20, Nanos::ZERO),
        );
        bench.submit(&mut s, w(2));
        assert_eq!(
            bench.sent.len(),
            1,
            "trim waits for write 0; write 2 for the trim"
        );
        bench.advance(&mut s, Nanos::from_millis(2));
        assert_eq!(bench.sent[1].op, Op::Trim);
        assert_eq!(bench.sent[2].requests[0].id.0, 2);
    }

    #[test]
    fn a_held_trim_is_cut_by_the_writes_that_overwrite_it() {
        let mut bench = Bench::new(32, |_: &Command| Nanos::from_millis(2));
        let mut s = steer("trim_hold=100ms,start_rate=1000000");
        let mib = 1u64 << 20;
        let trim = |id: u64, at: u64| Request::new(id, Op::Trim, at * mib, 2 * mib, Nanos::ZERO);
        let write = |id: u64, at: u64| Request::new(id, Op::Write, at * mib, mib, Nanos::ZERO);
        bench.submit_together(&mut s, vec![trim(0, 0), trim(1, 2), write(2, 0)]);
        bench.submit(&mut s, write(3, 1));
        bench.submit(&mut s, write(4, 2));
        let ops = |b: &Bench| b.sent.iter().map(|c| c.op).collect::<Vec<_>>();
        assert_eq!(ops(&bench), [Op::Write; 3], "held trims do not stop writes");
        assert_eq!(
            s.stats.class(Op::Trim).elided,
            1,
            "trim 0 overwritten whole"
        );
        bench.advance(&mut s, Nanos::from_millis(100));
        let sent_trim = bench.sent.iter().find(|c| c.op == Op::Trim).expect("sent");
        let r = &sent_trim.requests[0];
        assert_eq!(
            (r.id.0, r.offset.0, r.len.0),
            (1, 3 * mib, mib),
            "what is left"
        );
    }

    #[test]
    fn with_no_write_about_a_trim_is_not_held() {
        let mut bench = Bench::new(32, |_: &Command| Nanos::from_millis(2));
        let mut s = steer("");
        bench.submit(&mut s, Request::new(0, Op::Trim, 0, 1 << 20, Nanos::ZERO));
        assert_eq!(bench.sent.len(), 1, "no write to cut it: it goes at once");
        assert_eq!(bench.sent[0].op, Op::Trim);
    }

    #[test]
    fn reads_held_by_a_trim_are_trim_misses_charged_spread_and_in_full() {
        use std::cell::Cell;
        use std::rc::Rc;
        let trim = Rc::new(Cell::new(false));
        let held = trim.clone();
        let mut bench = Bench::new(32, move |c: &Command| match c.op {
            Op::Read if held.get() => Nanos::from_millis(5),
            Op::Read => Nanos::from_micros(200),
            Op::Trim => Nanos::from_millis(30),
            _ => Nanos::from_micros(500),
        });
        let mut s = steer("objective=p99<=1ms,trim_hold=0s");
        let mut id = 0;
        load(&mut s, &mut bench, 1950, &mut id);
        let at = bench.now;
        bench.submit(&mut s, Request::new(id, Op::Trim, 1 << 41, 64 << 20, at));
        trim.set(true);
        load(&mut s, &mut bench, 30, &mut id);
        trim.set(false);
        load(&mut s, &mut bench, 20, &mut id);
        // The window that saw the trim counted its misses as trim misses.
        let window = *s.history.back().expect("windows ended");
        assert!(window.misses >= 20, "{window:?}");
        assert_eq!(window.trim_misses, window.misses, "{window:?}");
        // They are charged a thirtieth per window, and in full in the end.
        let charged = window.charged;
        let owed = s.trim_owed;
        assert!(charged < window.misses as f64 / 20.0, "{charged}");
        let mut paid = charged;
        for _ in 0..300 {
            paid += s.charge(&Window::default());
        }
        assert!((paid + s.trim_owed - window.misses as f64).abs() < 1e-6);
        assert!(s.trim_owed < owed / 1000.0);
    }

    proptest::proptest! {
        /// Whatever the controller does with the limit (reads that miss at
        /// random, trims, reads over queued writes), no write waits in the
        /// scheduler longer than the write deadline plus one tick.
        #[test]
        fn no_write_waits_past_its_deadline_plus_a_tick(
            arrivals in proptest::collection::vec((0u64..20, 0u8..10, 0u64..64, proptest::bool::ANY), 1..400),
            deadline_ms in 10u64..500,
            start_rate in 1u64..50_000,
        ) {
            let mut bench = Bench::new(1024, |c: &Command| match c.op {
                // Reads at odd MiB miss a 1 ms objective: the limit moves.
                Op::Read if (c.requests[0].offset.0 >> 20) % 2 == 1 => Nanos::from_millis(3),
                Op::Read => Nanos::from_micros(200),
                Op::Trim => Nanos::from_millis(20),
                _ => Nanos::from_micros(500),
            });
            let mut s = steer(&format!(
                "objective=p99<=1ms,min_rate=1,start_rate={start_rate},write_deadline={deadline_ms}ms"
            ));
            let mut writes = Vec::new();
            for (id, (gap_ms, kind, mib, aligned)) in arrivals.into_iter().enumerate() {
                bench.advance(&mut s, bench.now + Nanos::from_millis(gap_ms));
                let (op, len) = match kind {
                    0..=3 => (Op::Read, 128 << 10),
                    4..=8 => (Op::Write, 128 << 10),
                    _ => (Op::Trim, 4 << 20),
                };
                let offset = (mib << 20) + if aligned { 0 } else { 4096 };
                let request = Request::new(id as u64, op, offset, len, bench.now);
                if op == Op::Write {
                    writes.push((request.id, bench.now));
                }
                bench.submit(&mut s, request);
            }
            bench.advance(&mut s, bench.now + Nanos::from_millis(deadline_ms + 1000));
            let tick = Nanos::from_millis(5);
            for (id, submitted) in writes {
                let sent = bench.sent.iter().find(|c| c.requests.iter().any(|r| r.id == id));
                let sent = sent.expect("every write was sent");
                let waited = sent.dispatched - submitted;
                proptest::prop_assert!(
                    waited <= Nanos::from_millis(deadline_ms) + tick,
                    "write {id:?} waited {waited}"
                );
            }
        }
    }
}
