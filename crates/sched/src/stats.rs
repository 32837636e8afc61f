//! Statistics kept for every class (read, write, trim, flush), cheap enough to
//! update on every I/O.
//!
//! The per-I/O path only records: counters, an exponential moving average
//! (EMA) of device latency and its variance, a 20-bucket log2 histogram with
//! FreeBSD's layout, and HDR histograms for percentiles over the whole run and
//! over a rolling window. Time a request spends queued in the scheduler is kept
//! apart from time in the device, and so is "the device had work" from "the
//! scheduler had work": a throttled queue never makes the device look busy,
//! which was one of the lessons of the paper's appendix (devstat read 100%).

use hdrhistogram::Histogram;

use crate::request::{Command, Completion, Op, Outcome, Request};
use crate::trim::TrimCuts;
use crate::units::{Bytes, Nanos};

/// Weight of a new sample in the latency EMA is 2^-9, as upstream: about the
/// last thousand I/Os matter. That is slow on purpose (smooth), and too slow to
/// steer by, which is why [`Stats`] also keeps windowed percentiles.
pub const EMA_ALPHA_BITS: u32 = 9;

/// Buckets of the log2 latency histogram (FreeBSD's `LAT_BUCKETS`).
pub const LOG2_BUCKETS: usize = 20;

/// Upper bound of the first log2 bucket; bucket `k` ends at `20 us * 2^k` and
/// the last one holds everything from `20 us * 2^18` (about 5.2 s) up.
pub const LOG2_FIRST_BOUND: Nanos = Nanos::from_micros(20);

/// Latencies above this are recorded as this (an hour is a hung device).
const HDR_HIGHEST: u64 = 3_600_000_000_000;
/// Two significant digits: percentiles within 1% of the exact value (upstream's
/// histogram resolves a factor of two). Three digits would make each
/// histogram 132 KB instead of 16 KB, and the records miss the L1 cache.
const HDR_SIGFIG: u8 = 2;

/// The load average's EMA weight per tick is 2^-13, as upstream: a time
/// constant of 8192 ticks (41 s at 200 ticks per second).
const LOAD_ALPHA_BITS: u32 = 13;

/// Exponential moving average and variance of a series of durations.
#[derive(Clone, Debug, Default)]
pub struct Ema {
    mean: f64,
    variance: f64,
    samples: u64,
}

impl Ema {
    /// Upstream starts the average at zero, so the first thousand samples read
    /// far too low; this one starts at the first sample.
    pub fn record(&mut self, sample: Nanos) {
        let x = sample.0 as f64;
        if self.samples == 0 {
            self.mean = x;
        } else {
            let alpha = 1.0 / f64::from(1u32 << EMA_ALPHA_BITS);
            let delta = x - self.mean;
            self.mean += alpha * delta;
            self.variance = (1.0 - alpha) * (self.variance + alpha * delta * delta);
        }
        self.samples += 1;
    }

    pub fn mean(&self) -> Nanos {
        Nanos(self.mean.round() as u64)
    }

    pub fn stddev(&self) -> Nanos {
        Nanos(self.variance.sqrt().round() as u64)
    }

    pub fn samples(&self) -> u64 {
        self.samples
    }
}

/// FreeBSD's latency histogram: 20 power-of-two buckets from 20 us, plus the
/// sum of what was recorded, which a Prometheus histogram needs (`_sum`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Log2Histogram {
    counts: [u64; LOG2_BUCKETS],
    sum: Nanos,
}

impl Log2Histogram {
    pub fn record(&mut self, latency: Nanos) {
        self.counts[Self::bucket(latency)] += 1;
        // Saturating: a u64 holds 584 years of summed latency, which a
        // million IOPS at 1 ms would reach in seven months.
        self.sum = Nanos(self.sum.0.saturating_add(latency.0));
    }

    pub fn bucket(latency: Nanos) -> usize {
        let multiples = latency.0 / LOG2_FIRST_BOUND.0;
        let bucket = (u64::BITS - multiples.leading_zeros()) as usize;
        bucket.min(LOG2_BUCKETS - 1)
    }

    /// Upper bound of bucket `k`, or `None` for the last, open-ended one.
    pub fn upper_bound(k: usize) -> Option<Nanos> {
        (k + 1 < LOG2_BUCKETS).then(|| Nanos(LOG2_FIRST_BOUND.0 << k))
    }

    pub fn counts(&self) -> &[u64; LOG2_BUCKETS] {
        &self.counts
    }

    /// Every latency recorded, added up.
    pub fn sum(&self) -> Nanos {
        self.sum
    }
}

/// Percentiles of a latency distribution.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LatencySummary {
    pub count: u64,
    pub mean: Nanos,
    pub p50: Nanos,
    pub p90: Nanos,
    pub p99: Nanos,
    pub p999: Nanos,
    pub max: Nanos,
}

/// Sub-buckets per power of two in [`Buckets`]: 128, so a bucket is at most
/// 1/128 (0.8%) of its value wide, the resolution of an HDR histogram with two
/// significant digits.
const SUB_BUCKET_BITS: u32 = 7;
const SUB_BUCKETS: usize = 1 << SUB_BUCKET_BITS;
/// Enough buckets for any `u64`.
const BUCKETS: usize = (64 - SUB_BUCKET_BITS as usize) * SUB_BUCKETS + SUB_BUCKETS;

/// Counts in log-linear buckets: the per-I/O half of [`Percentiles`].
///
/// Recording is a shift and an increment (as Kyber records into bucket arrays
/// on the I/O path and aggregates on its timer); the counts are folded into an
/// HDR histogram when a window rolls, and the HDR crate computes percentiles.
#[derive(Clone, Debug)]
struct Buckets {
    counts: Box<[u32]>,
    total: u64,
}

impl Buckets {
    fn new() -> Buckets {
        Buckets {
            counts: vec![0; BUCKETS].into_boxed_slice(),
            total: 0,
        }
    }

    /// Values below 2 * SUB_BUCKETS have a bucket each; above, each power of
    /// two is split in SUB_BUCKETS equal parts.
    #[inline]
    fn index(value: u64) -> usize {
        let magnitude = (u64::BITS - 1 - (value | (2 * SUB_BUCKETS as u64 - 1)).leading_zeros())
            - SUB_BUCKET_BITS;
        let sub_bucket = (value >> magnitude) as usize;
        ((magnitude as usize) << SUB_BUCKET_BITS) + sub_bucket
    }

    /// The lowest value of bucket `index`.
    fn value(index: usize) -> u64 {
        let magnitude = (index >> SUB_BUCKET_BITS).saturating_sub(1) as u32;
        let sub_bucket = (index - ((magnitude as usize) << SUB_BUCKET_BITS)) as u64;
        sub_bucket << magnitude
    }

    #[inline]
    fn record(&mut self, value: u64) {
        let count = &mut self.counts[Self::index(value)];
        *count = count.saturating_add(1);
        self.total += 1;
    }

    /// Adds the counts to `into` (each at its bucket's lowest value).
    fn fold_into(&self, into: &mut Histogram<u32>) {
        if self.total == 0 {
            return;
        }
        for (index, count) in self.counts.iter().enumerate().filter(|(_, c)| **c > 0) {
            into.saturating_record_n(Self::value(index), *count);
        }
    }

    fn clear(&mut self) {
        if self.total > 0 {
            self.counts.fill(0);
            self.total = 0;
        }
    }
}

/// Exact-enough percentiles (within 1%) over the run and, optionally, over a
/// rolling window.
///
/// An I/O only bumps a counter in a log-linear bucket array; when the window rolls, the
/// buckets are folded into HDR histograms (the window's, then the run's) and
/// cleared. Summaries are computed when asked for, never on the I/O path.
/// (Recording straight into HDR histograms cost about 60 instructions per
/// value, more than half of a request's whole budget.)
#[derive(Clone, Debug)]
pub struct Percentiles {
    pending: Buckets,
    /// Everything before the current window.
    before: Histogram<u32>,
    /// The last complete window, when windowed.
    last: Option<Histogram<u32>>,
}

fn empty_histogram() -> Histogram<u32> {
    Histogram::new_with_bounds(1, HDR_HIGHEST, HDR_SIGFIG)
        .expect("constant histogram bounds are valid")
}

impl Percentiles {
    /// Percentiles over the run and over a rolling window.
    pub fn windowed() -> Percentiles {
        Percentiles {
            pending: Buckets::new(),
            before: empty_histogram(),
            last: Some(empty_histogram()),
        }
    }

    /// Percentiles over the run only.
    pub fn run_only() -> Percentiles {
        Percentiles {
            pending: Buckets::new(),
            before: empty_histogram(),
            last: None,
        }
    }

    #[inline]
    pub fn record(&mut self, value: Nanos) {
        self.pending.record(value.0.clamp(1, HDR_HIGHEST));
    }

    /// Over everything recorded since the scheduler was built.
    pub fn run(&self) -> LatencySummary {
        summarize(&self.everything())
    }

    /// Everything recorded since the scheduler was built, as one histogram.
    fn everything(&self) -> Histogram<u32> {
        let mut all = self.before.clone();
        self.pending.fold_into(&mut all);
        all
    }

    /// The share of everything recorded that lies above `value` (0 when
    /// nothing was).
    pub fn share_above(&self, value: Nanos) -> f64 {
        let all = self.everything();
        if all.is_empty() {
            return 0.0;
        }
        let at_or_below = all.count_between(0, value.0.min(HDR_HIGHEST));
        1.0 - at_or_below as f64 / all.len() as f64
    }

    /// Over the window that is still filling (empty when not windowed).
    pub fn current_window(&self) -> LatencySummary {
        if self.last.is_none() {
            return LatencySummary::default();
        }
        let mut window = empty_histogram();
        self.pending.fold_into(&mut window);
        summarize(&window)
    }

    /// Over the last complete window (empty when not windowed).
    pub fn last_window(&self) -> LatencySummary {
        self.last.as_ref().map(summarize).unwrap_or_default()
    }

    fn roll_window(&mut self) {
        let Some(last) = &mut self.last else {
            self.pending.fold_into(&mut self.before);
            self.pending.clear();
            return;
        };
        last.reset();
        self.pending.fold_into(last);
        self.before.add(&*last).expect("same bounds");
        self.pending.clear();
    }
}

fn summarize(h: &Histogram<u32>) -> LatencySummary {
    if h.is_empty() {
        return LatencySummary::default();
    }
    let at = |q: f64| Nanos(h.value_at_quantile(q));
    LatencySummary {
        count: h.len(),
        mean: Nanos(h.mean().round() as u64),
        p50: at(0.50),
        p90: at(0.90),
        p99: at(0.99),
        p999: at(0.999),
        max: Nanos(h.max()),
    }
}

/// Accumulates the time during which some condition held.
#[derive(Clone, Debug, Default)]
pub struct BusyClock {
    since: Option<Nanos>,
    total: Nanos,
}

impl BusyClock {
    fn set(&mut self, active: bool, now: Nanos) {
        match (self.since, active) {
            (None, true) => self.since = Some(now),
            (Some(since), false) => {
                self.total += now - since;
                self.since = None;
            }
            _ => {}
        }
    }

    /// Total active time up to `now`.
    pub fn total(&self, now: Nanos) -> Nanos {
        self.total + self.since.map_or(Nanos::ZERO, |since| now - since)
    }
}

/// Everything counted for one class.
#[derive(Clone, Debug)]
pub struct ClassStats {
    /// Requests handed to the scheduler ("in" upstream).
    pub enqueued: u64,
    /// Requests handed to the device ("out").
    pub dispatched: u64,
    /// Device commands; fewer than `dispatched` when trims are coalesced.
    pub commands: u64,
    /// Requests finished, by the device or by the scheduler itself.
    pub completed: u64,
    /// Requests the scheduler finished without sending them: advisory
    /// trims, and reads steer answered from queued writes.
    pub elided: u64,
    /// Requests whose command failed.
    pub errors: u64,
    pub bytes_enqueued: Bytes,
    pub bytes_completed: Bytes,
    /// Requests waiting in the scheduler now.
    pub queued: u32,
    pub queued_bytes: Bytes,
    /// Commands in the device now.
    pub in_flight: u32,
    /// Requests in the device now (counts each trim of a coalesced command, so
    /// the count cannot drift as upstream's trim count did).
    pub in_flight_requests: u32,
    /// A limiter held back this class's next request at the last attempt.
    pub limited: bool,
    /// Completions whose device latency exceeded `bad_latency`.
    pub too_long: u64,
    /// Device latency (dispatch to completion), over the run and a window.
    pub device_ema: Ema,
    pub device_log2: Log2Histogram,
    pub device_latency: Percentiles,
    /// Time queued in the scheduler (submit to dispatch), over the run.
    pub queue_wait: Percentiles,
    /// Gap between dispatches while the class had a backlog, for `pressure`.
    pub(crate) service_gap: Ema,
    last_dispatch: Option<Nanos>,
    backlogged_after_last_dispatch: bool,
}

impl Default for ClassStats {
    fn default() -> Self {
        ClassStats {
            enqueued: 0,
            dispatched: 0,
            commands: 0,
            completed: 0,
            elided: 0,
            errors: 0,
            bytes_enqueued: Bytes::ZERO,
            bytes_completed: Bytes::ZERO,
            queued: 0,
            queued_bytes: Bytes::ZERO,
            in_flight: 0,
            in_flight_requests: 0,
            limited: false,
            too_long: 0,
            device_ema: Ema::default(),
            device_log2: Log2Histogram::default(),
            device_latency: Percentiles::windowed(),
            queue_wait: Percentiles::run_only(),
            service_gap: Ema::default(),
            last_dispatch: None,
            backlogged_after_last_dispatch: false,
        }
    }
}

/// Statistics of one scheduler.
#[derive(Clone, Debug)]
pub struct Stats {
    classes: [ClassStats; 4],
    /// Time with at least one command in the device.
    pub device_busy: BusyClock,
    /// Time with at least one request queued in the scheduler.
    pub scheduler_backlog: BusyClock,
    /// Device slots seen at the last dispatch (for `load`).
    pub device_slots: u32,
    /// What later writes took out of waiting trims.
    pub trim_cuts: TrimCuts,
    queued_total: u32,
    in_flight_total: u32,
    load: f64,
    bad_latency: Nanos,
    window: Nanos,
    window_end: Nanos,
}

impl Stats {
    /// `window` is the length of the rolling percentile window; completions
    /// slower than `bad_latency` are counted in `too_long`.
    pub fn new(window: Nanos, bad_latency: Nanos) -> Stats {
        Stats {
            classes: Default::default(),
            device_busy: BusyClock::default(),
            scheduler_backlog: BusyClock::default(),
            device_slots: 0,
            trim_cuts: TrimCuts::default(),
            queued_total: 0,
            in_flight_total: 0,
            load: 0.0,
            bad_latency,
            window,
            window_end: window,
        }
    }

    pub fn class(&self, op: Op) -> &ClassStats {
        &self.classes[op.index()]
    }

    pub(crate) fn class_mut(&mut self, op: Op) -> &mut ClassStats {
        &mut self.classes[op.index()]
    }

    /// Requests queued in all classes.
    pub fn queued(&self) -> u32 {
        self.queued_total
    }

    /// Commands in the device, all classes.
    pub fn in_flight(&self) -> u32 {
        self.in_flight_total
    }

    /// EMA of (commands in flight + requests held back by a limiter) over the
    /// device's slots, sampled every tick; 1.0 means the device is saturated.
    pub fn load(&self) -> f64 {
        self.load
    }

    pub(crate) fn on_enqueue(&mut self, request: &Request, now: Nanos) {
        let class = self.class_mut(request.op);
        class.enqueued += 1;
        class.queued += 1;
        class.bytes_enqueued += request.len;
        class.queued_bytes += request.len;
        self.queued_total += 1;
        if self.queued_total == 1 {
            self.scheduler_backlog.set(true, now);
        }
    }

    pub(crate) fn on_dispatch(&mut self, command: &Command, now: Nanos) {
        let class = &mut self.classes[command.op.index()];
        for request in &command.requests {
            class.queue_wait.record(now - request.submitted);
            class.queued_bytes = Bytes(class.queued_bytes.0.saturating_sub(request.len.0));
        }
        let n = command.requests.len() as u32;
        class.queued -= n;
        class.dispatched += u64::from(n);
        class.commands += 1;
        class.in_flight += 1;
        class.in_flight_requests += n;
        class.limited = false;
        if let (Some(last), true) = (class.last_dispatch, class.backlogged_after_last_dispatch) {
            class.service_gap.record(now - last);
        }
        class.last_dispatch = Some(now);
        class.backlogged_after_last_dispatch = class.queued > 0;
        self.queued_total -= n;
        self.in_flight_total += 1;
        if self.in_flight_total == 1 {
            self.device_busy.set(true, now);
        }
        if self.queued_total == 0 {
            self.scheduler_backlog.set(false, now);
        }
    }

    /// Later writes took `cuts` out of trims still queued.
    pub(crate) fn on_trims_cut(&mut self, cuts: TrimCuts) {
        let class = self.class_mut(Op::Trim);
        class.queued_bytes = Bytes(class.queued_bytes.0.saturating_sub(cuts.removed().0));
        self.trim_cuts.add(cuts);
    }

    pub(crate) fn on_elide(&mut self, request: &Request, now: Nanos) {
        let class = self.class_mut(request.op);
        class.queued -= 1;
        class.queued_bytes = Bytes(class.queued_bytes.0.saturating_sub(request.len.0));
        class.elided += 1;
        class.completed += 1;
        class.bytes_completed += request.len;
        self.queued_total -= 1;
        if self.queued_total == 0 {
            self.scheduler_backlog.set(false, now);
        }
    }

    pub(crate) fn on_complete(&mut self, done: &Completion, now: Nanos) {
        self.roll_windows(now);
        let latency = now - done.dispatched;
        let bad_latency = self.bad_latency;
        let class = &mut self.classes[done.op.index()];
        class.in_flight = class.in_flight.saturating_sub(1);
        class.in_flight_requests = class.in_flight_requests.saturating_sub(done.requests);
        class.completed += u64::from(done.requests);
        class.bytes_completed += done.bytes;
        if done.outcome == Outcome::Error {
            class.errors += u64::from(done.requests);
        }
        class.device_ema.record(latency);
        class.device_log2.record(latency);
        class.device_latency.record(latency);
        if latency > bad_latency {
            class.too_long += 1;
        }
        self.in_flight_total = self.in_flight_total.saturating_sub(1);
        if self.in_flight_total == 0 {
            self.device_busy.set(false, now);
        }
    }

    /// Samples the load average for `ticks` elapsed scheduler ticks.
    pub(crate) fn on_tick(&mut self, now: Nanos, ticks: u64) {
        self.roll_windows(now);
        let slots = self.device_slots.max(1) as f64;
        let waiting: u32 = self
            .classes
            .iter()
            .map(|c| c.in_flight + if c.limited { c.queued } else { 0 })
            .sum();
        let alpha = 1.0 / f64::from(1u32 << LOAD_ALPHA_BITS);
        let weight = 1.0 - (1.0 - alpha).powf(ticks.min(1 << 20) as f64);
        self.load += weight * (f64::from(waiting) / slots - self.load);
    }

    #[inline]
    fn roll_windows(&mut self, now: Nanos) {
        if now >= self.window_end && self.window > Nanos::ZERO {
            self.roll_windows_now(now);
        }
    }

    #[cold]
    fn roll_windows_now(&mut self, now: Nanos) {
        let behind = (now.0 - self.window_end.0) / self.window.0 + 1;
        // What is pending belongs to the window that just ended; when more
        // windows passed without a sample, the last complete one is empty.
        let rolls = if behind > 1 { 2 } else { 1 };
        for _ in 0..rolls {
            for class in &mut self.classes {
                class.device_latency.roll_window();
                class.queue_wait.roll_window();
            }
        }
        self.window_end = Nanos(
            self.window_end
                .0
                .saturating_add(behind.saturating_mul(self.window.0)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_buckets_follow_the_upstream_layout() {
        assert_eq!(Log2Histogram::bucket(Nanos::from_micros(19)), 0);
        assert_eq!(Log2Histogram::bucket(Nanos::from_micros(20)), 1);
        assert_eq!(Log2Histogram::bucket(Nanos::from_micros(39)), 1);
        assert_eq!(Log2Histogram::bucket(Nanos::from_micros(40)), 2);
        assert_eq!(Log2Histogram::bucket(Nanos::from_secs(100)), 19);
        assert_eq!(Log2Histogram::upper_bound(0), Some(Nanos::from_micros(20)));
        assert_eq!(
            Log2Histogram::upper_bound(18),
            Some(Nanos::from_micros(20 << 18))
        );
        assert_eq!(Log2Histogram::upper_bound(19), None);
    }

    #[test]
    fn log2_histogram_keeps_the_sum_and_saturates() {
        let mut h = Log2Histogram::default();
        h.record(Nanos::from_micros(10));
        h.record(Nanos::from_micros(30));
        assert_eq!(h.sum(), Nanos::from_micros(40));
        assert_eq!(h.counts()[..2], [1, 1]);
        h.record(Nanos::MAX);
        assert_eq!(h.sum(), Nanos::MAX);
    }

    #[test]
    fn ema_converges_with_weight_two_to_the_minus_nine() {
        let mut ema = Ema::default();
        ema.record(Nanos(1000));
        assert_eq!(
            ema.mean(),
            Nanos(1000),
            "starts at the first sample, not at zero"
        );
        ema.record(Nanos(1000 + 512));
        assert_eq!(ema.mean(), Nanos(1001));
        for _ in 0..20_000 {
            ema.record(Nanos(5000));
        }
        assert_eq!(ema.mean(), Nanos(5000));
        assert_eq!(ema.stddev(), Nanos(0));
    }

    #[test]
    fn ema_variance_tracks_a_two_valued_series() {
        let mut ema = Ema::default();
        for i in 0..50_000u64 {
            ema.record(Nanos(if i % 2 == 0 { 1000 } else { 3000 }));
        }
        let sd = ema.stddev().0 as f64;
        assert!((sd - 1000.0).abs() < 20.0, "stddev {sd}");
    }

    #[test]
    fn percentiles_are_within_one_percent() {
        let mut p = Percentiles::run_only();
        for us in 1..=10_000u64 {
            p.record(Nanos::from_micros(us));
        }
        let s = p.run();
        assert_eq!(s.count, 10_000);
        let close =
            |got: Nanos, want_us: f64| (got.0 as f64 / 1e3 - want_us).abs() / want_us < 0.01;
        assert!(
            close(s.p50, 5000.0) && close(s.p99, 9900.0) && close(s.p999, 9990.0),
            "{s:?}"
        );
        assert!(close(s.max, 10_000.0));
    }

    /// One request of `op`, queued at zero, dispatched at `dispatched`,
    /// completed at `done`.
    fn one_request(stats: &mut Stats, op: Op, dispatched: Nanos, done: Nanos) {
        let req = Request::new(1, op, 0, 4096, Nanos::ZERO);
        stats.on_enqueue(&req, Nanos::ZERO);
        let cmd = Command::single(req, dispatched);
        stats.on_dispatch(&cmd, dispatched);
        stats.on_complete(&cmd.completion(Outcome::Ok), done);
    }

    #[test]
    fn the_window_rolls_and_keeps_its_summary() {
        let mut stats = Stats::new(Nanos::from_secs(1), Nanos::from_millis(500));
        one_request(&mut stats, Op::Read, Nanos::ZERO, Nanos::from_millis(600));
        let read = stats.class(Op::Read);
        assert_eq!(read.too_long, 1);
        assert_eq!(read.device_latency.current_window().count, 1);
        stats.on_tick(Nanos::from_millis(1500), 1);
        let read = stats.class(Op::Read);
        assert_eq!(read.device_latency.current_window().count, 0);
        assert_eq!(read.device_latency.last_window().count, 1);
        assert_eq!(read.device_latency.run().count, 1);
        // Idle windows pass: the last complete window is an empty one.
        stats.on_tick(Nanos::from_secs(10), 1);
        let read = stats.class(Op::Read);
        assert_eq!(read.device_latency.last_window().count, 0);
        assert_eq!(read.device_latency.run().count, 1);
    }

    #[test]
    fn a_sample_followed_by_idle_windows_does_not_linger_as_the_last_window() {
        let mut stats = Stats::new(Nanos::from_secs(1), Nanos::from_millis(500));
        one_request(&mut stats, Op::Read, Nanos::ZERO, Nanos::from_millis(600));
        stats.on_tick(Nanos::from_secs(10), 1);
        assert_eq!(stats.class(Op::Read).device_latency.last_window().count, 0);
    }

    #[test]
    fn extreme_sizes_and_windows_do_not_overflow() {
        let mut stats = Stats::new(Nanos(u64::MAX - 1), Nanos::MAX);
        for id in 0..2 {
            stats.on_enqueue(
                &Request::new(id, Op::Write, 0, 1 << 63, Nanos::ZERO),
                Nanos::ZERO,
            );
        }
        assert_eq!(stats.class(Op::Write).queued_bytes, Bytes(u64::MAX));
        stats.on_tick(Nanos::MAX, u64::MAX);
    }

    #[test]
    fn buckets_are_log_linear_and_invert() {
        for value in [1u64, 2, 255, 256, 257, 1000, 20_000, 1 << 40, u64::MAX] {
            let index = Buckets::index(value);
            let low = Buckets::value(index);
            assert!(low <= value, "{value}: bucket starts at {low}");
            assert!(
                value - low <= value / SUB_BUCKETS as u64,
                "{value}: bucket too wide"
            );
            assert_eq!(Buckets::index(low), index);
        }
        assert!(Buckets::index(u64::MAX) < BUCKETS);
        assert_eq!(Buckets::index(255), 255);
        assert_eq!(Buckets::index(256), 256);
        assert_eq!(Buckets::index(258), 257);
    }

    #[test]
    fn a_window_sees_only_its_own_values() {
        let mut p = Percentiles::windowed();
        p.record(Nanos::from_millis(100));
        p.roll_window();
        for _ in 0..10 {
            p.record(Nanos::from_micros(50));
        }
        let window = p.current_window();
        assert_eq!(window.count, 10);
        assert_eq!(window.max.0 / 1000, 50);
        p.roll_window();
        assert_eq!(p.last_window().count, 10);
        assert_eq!(p.current_window().count, 0);
        p.roll_window();
        assert_eq!(
            p.last_window().count,
            0,
            "an empty window summarizes as empty"
        );
        assert_eq!(p.run().count, 11);
        assert_eq!(p.run().max.0 / 1_000_000, 100);
    }

    #[test]
    fn queue_time_and_device_time_are_kept_apart() {
        let mut stats = Stats::new(Nanos::from_secs(1), Nanos::from_secs(1));
        // Held by a limiter for 90 ms, then 10 ms in the device.
        one_request(
            &mut stats,
            Op::Write,
            Nanos::from_millis(90),
            Nanos::from_millis(100),
        );
        let now = Nanos::from_millis(100);
        assert_eq!(stats.device_busy.total(now), Nanos::from_millis(10));
        assert_eq!(stats.scheduler_backlog.total(now), Nanos::from_millis(90));
        let w = stats.class(Op::Write);
        assert_eq!(w.queue_wait.run().max.0 / 1_000_000, 90);
        assert_eq!(w.device_latency.run().max.0 / 1_000_000, 10);
    }
}
