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
//! has been sent or completed for `QUIET`. The baseline is the lowest percentile of a *quiet
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
//! `calibrate` from the first write (reads completing meanwhile are
//! unloaded once the writes in the device have been gone `QUIET`); the
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
//! would miss with no write about, the share of the baseline's stretch over
//! T (zero on the simulated drives at 2x; on this machine's virtio disk,
//! whose unloaded tail is long, blaming those misses on writes held them to
//! a few MB/s).
//!
//! A stale baseline. A disk whose own latency moves (a shared or virtual
//! disk: this machine's read p99 alone ran 0.34 to 1.1 ms from second to
//! second) can turn slower than its baseline with no write about; then no
//! write rate meets the objective as measured, and charging those misses
//! to the writes held them at the floor (a 60 s real-disk run wrote 100
//! kB/s for its last 25 s while its reads were as slow as with no writer).
//! So steer also counts the reads that complete with no write or trim in
//! the device for `QUIET`, whether or not writes wait in the scheduler (a
//! writer held at its limit or deadline leaves such reads between its
//! writes), over the last of them that allow `BACKGROUND_MISSES` (however
//! old). When their share over T is above f, the baseline is stale: that
//! share is the background, in c and in the budget, which is not charged
//! for it; the writes may add f on top, as a judge comparing against the
//! disk's reads alone would allow. Below f the background stays the
//! stretch's and the budget is charged every miss: crediting a smaller
//! recent share let the writes spend the reads' own tail (long-fill on
//! consumer-sata then missed on one seed of five). It may spend the
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
//! above twice the write rate seen over the horizon, or twice the limit
//! when the bandwidth limit itself held them (a large write at a small limit
//! is repaid for long with nothing sent: a 1 MiB write at 10 kB/s for 100 s,
//! which is no sign the writer wants less). Every step is at least
//! 1 kB/s, and the limit never goes below `min_rate`.
//!
//! The write deadline. A write that has waited `write_deadline` goes ahead of
//! everything, limits or not (its bytes are still charged, so the bandwidth
//! limit pays the debt back later), while the objective can pay for it
//! (`deadline=yield`, the default): no read is about (queued, in the
//! device or completed within `HORIZON`; a read waiting for a write does not
//! count, its write goes anyway), or the budget still holds the reserve once
//! the expected misses (the cost per byte times the bytes) of the overdue
//! writes already sent in this window are taken off. Otherwise it waits for
//! the limit (at least `min_rate`) like the others. A backlog that went
//! overdue while the budget was owed trickles out as it is paid, not all at
//! once (sent all at once, 27 writes on family:5 made the read p99 of that
//! second 60-70 ms). With `deadline=hold` the deadline holds whatever the
//! objective: a throttled write waits at most the deadline plus one tick
//! when there is room to send it, and a deaf writer's 32 queued 128 KiB
//! writes go every 5 s, 0.84 MB/s whatever the limit. Either way each write
//! sent later than the deadline plus one tick is counted and the run's
//! report says how many and the longest wait (a note; property test: no
//! write waits past the deadline plus a tick uncounted).
//!
//! Why `yield` is the default: the objective is what the operator stated.
//! On 50 drives of the family (seed 1, docs/RESULTS.md) `hold` met
//! `p99<=2x` on 20 and `p99<=1.5x` on 21: on most of the others the
//! objective needs fewer writes than the deadline lets through (drives with
//! small pages or wide stripes, where a 128 KiB read spans many dies and a
//! program on any of them delays it). `yield` meets 33 and 40. Its costs:
//! writes wait past the deadline when the objective cannot pay for them
//! (76 writes of the default `iosteer sim`, up to 18.2 s, the note says so),
//! and 0.1 MB/s on the mean of consumer-sata's five-seed figures (17.2 to
//! 17.1 in the default scenario, 11.9 to 11.8 in `long-fill`, the slowest
//! seeds unchanged). Keeping the reserve, not just a budget not owed,
//! matters: with the latter, 9 of the 50 drives ended 0.1-0.4% over
//! `p99<=2x`.
//!
//! Back-pressure. `pressure()` reports, per class, the queue, the time the
//! limiters need to drain it and the oldest wait, so a producer that listens
//! slows down instead of filling the queue up to the deadline.
//!
//! Trims. While writes are about (queued, in the device, or sent within
//! `HORIZON`), a trim is held for `trim_hold` first, and every write queued
//! meanwhile takes the range it overwrites out of it ([`TrimQueue::cut`],
//! as in every policy's trim queue);
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
//! before it to complete, and the writes after it wait for the flush. A read
//! whose every byte queued writes cover is answered from their data at once
//! (for each byte the newest queued write's), without the drive, as a page cache
//! answers a read of dirty data; the run's notes count them. A read that
//! overlaps queued writes otherwise waits for them, but only that read
//! waits (aside), and only those writes go at once, ahead of the limit and of
//! the writes queued before them. (Sending every write before them too, as
//! strict write order requires, was a burst of up to 32 writes, every few
//! seconds under a fill: at a fixed 15 MB/s on consumer-sata it raised the
//! fill's read p99 from 2.0 to 4.4 ms.) Pushing the writes for a read they
//! cover cost the objective on small drives: with the fill's 32 queued
//! 128 KiB writes on a drive of a few GiB, the readers' random reads land in
//! them about once a second. On family:39 (a 300 MB/s SATA drive, 2 dies)
//! the pushed writes alone were more than `p99<=2x` allows (0.3 MB/s
//! written, read p99 2.3x the bound on the worst of seeds 1 to 3); answered
//! from the queue, 0.1 MB/s and 1.004x; family:23 went from 2 seeds of 3
//! meeting to all 3. Reads that the queued writes cover only in part still
//! push them.
//!
//! # Constants and defaults
//!
//! - `objective` p99<=2x: the "p99 of reads under 2x the unloaded p99";
//! - `calibrate` 1 s: enough for the 1,000 unloaded reads a p99 baseline
//!   needs (after `QUIET`) at 1,250 reads per second or more; a one-time
//!   delay of the first writes, well under the write deadline;
//! - `write_deadline` 5 s: mq-deadline's write expiry; a 32-deep writer of
//!   128 KiB writes is steered down to 0.84 MB/s before the deadline
//!   matters (below that, only while the objective is owed, counted and
//!   reported); let producers listen to `pressure()` to bound write
//!   latency tighter;
//! - `trim_hold` 5 s: as long as the write deadline lets a write wait, so a
//!   fill held to 13 MB/s or more overwrites a 64 MiB trim whole within it;
//!   the hint is late by that much where no write comes;
//! - `trim_deadline` 1 s: a trim is advisory to the drive, but not forever;
//! - `write_depth` 4: writes in flight at most (until a write's time is
//!   known, the cap); few writes in the drive keep GC on few dies (the
//!   paper's section VI);
//! - `deadline` yield (above);
//! - `min_rate` 10 kB/s (the floor: what a deaf writer still gets while
//!   the objective is owed; with `deadline=hold` the deadline bounds waits
//!   anyway), one 128 KiB write every 13 s. At 100 kB/s the floor alone was
//!   more than the objective allowed on the family's slow SATA drives,
//!   where one 128 KiB write costs about a second's allowance of misses
//!   (family:13, 27 and 39: the best static limits meeting `p99<=2x` are
//!   118, 83 and 99 kB/s); docs/RESULTS.md has what 10 changed,
//!   `max_rate` 10 GB/s, `start_rate` 10 MB/s (the target is reached within
//!   seconds on any drive);
//! - `WINDOW` 100 ms (Kyber's timer, wbt's window), `HORIZON` 1 s,
//!   `MAX_HORIZON` 10 s, `MIN_HORIZON_MISSES` 10 (misses the objective
//!   allows in a horizon), `MIN_BASELINE_MISSES` 10, `QUIET` 200 ms;
//! - `BACKGROUND_MISSES` 20: the background share known within about a
//!   quarter (as `COST_MISSES`), over 2,000 unloaded reads at p99;
//! - `TRIM_SPREAD` 3 s: thirty windows, so a trim's ~20 ms burst becomes a
//!   smooth cost, mostly charged before the next trim (about 4 s apart when
//!   a fill is held to 16 MB/s on consumer-sata);
//! - `COST_HORIZON` 5 s and `COST_MISSES` 20: enough misses that the cost is
//!   known within about a quarter (Poisson), and a few GC cycles of a drive
//!   that collects in bursts;
//! - `RESERVE` 5 allowances: at 3 the objective slipped on consumer-sata in
//!   every seed tried (a GC onset costs that drive ~18 allowances), and each
//!   allowance kept costs about 1% of a 90 s fill's writes;
//! - `MAX_SAVED` 10 allowances: savings are a margin, not a licence for a
//!   burst;
//! - `MAX_DEBT` 100 allowances: the objective is judged over the whole
//!   loaded period, so a debt is paid back, not forgiven; bounded so that a
//!   disaster (running a blocking-GC drive's free pool out costs family:1
//!   about 700 allowances) holds the writes for about 100 s, not for the
//!   rest of a long run. At 10, the GC bursts of family:6 and family:12
//!   (debts of 30 to 65 allowances) were forgiven and both missed `p99<=2x`
//!   on seed 1 (1.7x and 1.1x); at 100 both meet, writing 9.1 and 18.9 MB/s
//!   where they wrote 10.8 and 21.4. Whatever is forgiven all the same is
//!   counted and the run's notes say so;
//! - `PAYBACK` 10 s (an empty
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

use std::collections::VecDeque;

use crate::limiter::{Limit, LimiterKind, LimiterSet};
use crate::ordering::Barrier;
use crate::policy::common::{base_in_field, Base, Policy};
use crate::policy::{class_pressure, construct, PolicyInfo};
use crate::request::{Command, Completion, Op, Request};
use crate::scheduler::{ClassPressure, WriteLimit};
use crate::trim::TrimQueue;
use crate::units::Nanos;

mod baseline;
mod config;
mod control;
mod objective;
mod queues;
#[cfg(test)]
mod tests;

use baseline::{Background, QuietStretches};
pub use config::{SteerConfig, TUNABLES};
use control::{windows, Window};
use queues::{HeldReads, ReadsSent, Unsent, WriteQueue};

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
/// A read is unloaded when no write or trim has been in the device (sent,
/// in flight or completed) for this long.
const QUIET: Nanos = Nanos::from_millis(200);
/// The background share is counted over the unloaded reads that allow about
/// this many misses.
const BACKGROUND_MISSES: f64 = 20.0;
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
const MAX_DEBT: f64 = 100.0;
/// Budget off the reserve is paid back, or spent, over this long.
const PAYBACK: f64 = 10.0;
/// Share of the log gap to the target closed per window while in debt.
const DEBT_RESPONSE: f64 = 0.2;
/// Largest log2 gap to the target considered (a factor of 16).
const MAX_GAP: f64 = 4.0;
/// Smallest step of the limit, kB/s.
const MIN_STEP: u64 = 1;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "steer",
    summary: "adaptive: a write bandwidth limit steered every 100 ms by the share of reads \
              missing a user objective (p99<=2x unloaded), a write deadline, back-pressure",
    tunables: TUNABLES,
    build: |configure| construct(configure, Steer::new),
};

#[derive(Debug)]
pub struct Steer {
    config: SteerConfig,
    reads: VecDeque<Request>,
    /// Reads that overlap a queued write, until it is sent (the writes they
    /// wait for are urgent)...
    held_reads: HeldReads,
    /// ...and then, ahead of the other reads.
    released_reads: VecDeque<Request>,
    /// Reads the unsent writes cover, answered from them at the next
    /// dispatch without the device.
    served_reads: VecDeque<Request>,
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
    background: Background,
    lowest_median: Option<Nanos>,
    /// When the first write was queued, and whether a read has been.
    first_write: Option<Nanos>,
    read_seen: bool,
    /// Last time a write or trim was sent or completed.
    last_write_activity: Option<Nanos>,
    /// Control windows ended one by one (an idle gap skipped counts none).
    windows_computed: u64,
    /// Misses per kB written, the long estimate at the last window's end.
    cost: f64,
    /// `RESERVE` allowances, as of the last window's end.
    reserve: f64,
    /// Writes sent later than their deadline (plus a tick) because the
    /// objective could not pay for them, and the longest such wait.
    late_writes: u64,
    longest_late: Nanos,
    /// Misses owed past `MAX_DEBT` allowances, forgiven.
    forgiven: f64,
    base: Base,
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
            served_reads: VecDeque::new(),
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
            background: Background::default(),
            lowest_median: None,
            first_write: None,
            read_seen: false,
            last_write_activity: None,
            windows_computed: 0,
            cost: 0.0,
            reserve: 0.0,
            late_writes: 0,
            forgiven: 0.0,
            longest_late: Nanos::ZERO,
            base: Base::ticking(&config.common, config.quanta),
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

    /// Writes held past their deadline (the objective could not pay for
    /// them), and the longest of their waits.
    pub fn late_writes(&self) -> (u64, Nanos) {
        (self.late_writes, self.longest_late)
    }

    /// Misses the budget forgave: owed past `MAX_DEBT` allowances.
    pub fn forgiven_misses(&self) -> f64 {
        self.forgiven
    }

    /// Control windows ended one by one so far.
    pub fn windows_computed(&self) -> u64 {
        self.windows_computed
    }

    /// What one window's end reads and writes, but the history.
    fn window_state(&self) -> WindowState {
        WindowState {
            fresh: self.current == Window::default(),
            trim_owed: self.trim_owed.to_bits(),
            budget: self.budget.to_bits(),
            rate: self.rate.to_bits(),
            depth: self.write_depth(),
            lowest_median: self.lowest_median,
        }
    }

    /// Whether the window just ended left everything as it found it, its
    /// window started empty and the history holds only windows like it: in
    /// a catch-up (`now` and the statistics fixed) each further window is
    /// then the same function of the same state, a fixed point.
    fn settled(&self, before: WindowState) -> bool {
        let keep = windows(MAX_HORIZON);
        before.fresh
            && before == self.window_state()
            && self.history.len() == keep
            && self
                .history
                .iter()
                .rev()
                .all(|w| Some(w) == self.history.back())
    }

    /// Reads queued, held or in the device.
    fn reads_about(&self) -> bool {
        !self.reads.is_empty()
            || !self.held_reads.is_empty()
            || !self.released_reads.is_empty()
            || self.base.stats.class(Op::Read).in_flight > 0
    }
}

/// [`Steer::window_state`]; floats by their bits, so equal means unchanged.
#[derive(Copy, Clone, Debug, PartialEq)]
struct WindowState {
    fresh: bool,
    trim_owed: u64,
    budget: u64,
    rate: u64,
    depth: u64,
    lowest_median: Option<Nanos>,
}

impl Policy for Steer {
    const INFO: PolicyInfo = INFO;

    base_in_field!();

    fn accept(&mut self, request: Request, now: Nanos) {
        match request.op {
            Op::Read => {
                self.read_seen = true;
                // A read the unsent writes cover is answered from them
                // (the newest over each byte). Otherwise it waits for every unsent write
                // it overlaps; those go at once, alone, ahead of the limit
                // (sending every write queued before them too would be a
                // burst the reads pay for).
                let awaited: Vec<u64> = self.unsent.overlapping(&request).collect();
                if awaited.is_empty() {
                    self.reads.push_back(request);
                } else if self.unsent.cover(&request) {
                    self.served_reads.push_back(request);
                } else {
                    self.held_reads.hold(request, &awaited);
                }
            }
            Op::Write | Op::Flush => {
                self.first_write.get_or_insert(now);
                let tag = self.next_tag;
                self.next_tag += 1;
                self.unsent.insert(&request, tag);
                if let Some(write) = self.barrier.admit(request) {
                    debug_assert_eq!(write.tag, tag, "tags as the barrier gives them");
                    self.writes.push(write);
                }
            }
            Op::Trim => {
                self.trims.push(request);
            }
        }
    }

    fn trims(&mut self) -> Option<&mut TrimQueue> {
        Some(&mut self.trims)
    }

    fn pop_elided(&mut self) -> Option<Request> {
        self.served_reads
            .pop_front()
            .or_else(|| self.trims.pop_elided())
    }

    fn next_command(&mut self, now: Nanos) -> Option<Command> {
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
        Some(command)
    }

    fn completed(&mut self, completion: &Completion, now: Nanos) {
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
                if self.device_idle(now) {
                    let missed = self.target().is_some_and(|t| latency > t);
                    self.background.record(missed, &self.config.objective);
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
    }

    fn ticked(&mut self, now: Nanos, ticks: u64) {
        if ticks == 0 {
            return;
        }
        self.limiter.refill(ticks);
        while now >= self.next_window {
            let before = self.window_state();
            self.end_window(now);
            self.windows_computed += 1;
            self.next_window += WINDOW;
            if self.settled(before) && now >= self.next_window {
                // Every window left would compute this same state again:
                // an idle gap passes in one step, not one per window.
                let left = (now.0 - self.next_window.0) / WINDOW.0 + 1;
                self.next_window = Nanos(self.next_window.0 + left * WINDOW.0);
            }
        }
    }

    fn has_work(&self) -> bool {
        !self.reads.is_empty()
            || !self.served_reads.is_empty()
            || !self.held_reads.is_empty()
            || !self.released_reads.is_empty()
            || !self.writes.is_empty()
            || self.barrier.has_held()
            || self.trims.has_work()
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

    fn class_pressure(&self, op: Op, now: Nanos) -> ClassPressure {
        let limiters = (op == Op::Write).then_some(&self.limiter);
        class_pressure(&self.base.stats, op, limiters, self.oldest(op), now)
    }

    fn limit_on_writes(&self) -> Option<WriteLimit> {
        let (kind, limit) = self.limiter.steered()?;
        Some(WriteLimit {
            kind: kind.name(),
            value: limit.current as f64,
            unit: kind.short_unit(),
        })
    }

    fn latency_target(&self) -> Option<Nanos> {
        self.target()
    }

    fn report_notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.late_writes > 0 {
            notes.push(self.late_writes_note());
        }
        let reads = self.base.stats.class(Op::Read);
        if self.target().is_none() && reads.completed > 0 {
            notes.push(format!(
                "steer never had a read latency target for {}: no unloaded baseline was \
                 measured and no stats_window ({} s) of reads closed, so it did not \
                 steer the writes",
                self.config.objective,
                self.config.common.stats_window.as_secs_f64()
            ));
        }
        let served = reads.elided;
        if served > 0 {
            notes.push(format!(
                "steer answered {served} read{} from the queued writes that covered them, \
                 without the drive (the newest data, as a page cache would answer it)",
                if served == 1 { "" } else { "s" }
            ));
        }
        let forgiven = self.forgiven.round();
        if forgiven >= 1.0 {
            notes.push(format!(
                "steer forgave {forgiven} read miss{} over the target its budget could not \
                 hold (owed past {MAX_DEBT} times what the objective {} allows in a second of \
                 recent reads): the objective is likely missed",
                if forgiven == 1.0 { "" } else { "es" },
                self.config.objective
            ));
        }
        notes
    }
}

impl Steer {
    fn late_writes_note(&self) -> String {
        let why = if self.config.deadline_yields {
            format!(
                ", while the objective {} could not pay for them",
                self.config.objective
            )
        } else {
            String::new()
        };
        format!(
            "steer sent {} write{} more than a tick ({} ms) after the {:.1} s write deadline, \
             the latest {:.3} s after it arrived{why}",
            self.late_writes,
            if self.late_writes == 1 { "" } else { "s" },
            self.tick_length().0 / 1_000_000,
            self.config.write_deadline.as_secs_f64(),
            self.longest_late.as_secs_f64(),
        )
    }
}
