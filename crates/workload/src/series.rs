//! One-second time series of a run, as CSV.
//!
//! Per second and class (read, write, trim): MB/s, IOPS, latency mean, p99
//! and max (ms, of the requests completed in that second); and, sampled at the
//! first event of each second: requests queued in the scheduler per class,
//! commands in the drive, free blocks, GC pages moved during the second, and
//! what the policy steers (its write limit and read latency target), if it
//! does.
//!
//! Memory does not grow with the requests: a second is summarised as it
//! closes, so what stays is one fixed-size summary per active second, plus
//! a latency histogram per class for the few seconds still open (reset and
//! reused, never one per second). Latencies are whole microseconds.
//!
//! Precision: IOPS, MB/s, mean and max are exact. The p99 comes from an HDR
//! histogram with two significant digits (as the scheduler's statistics
//! keep): below 256 µs it is exact; above, it is the upper edge of the
//! bucket holding the exact p99, so it lies between the exact value and
//! 1/128 (0.8%) above it, and never above the second's max.
//!
//! A second stays open until requests complete `GRACE_SECONDS` seconds
//! later, because completions are not recorded in strict time order (a
//! simulated drive reports its completions after the step that reached
//! them). A completion later still counts exactly in its second's IOPS,
//! MB/s, mean and max, but not in its p99.

use std::collections::VecDeque;
use std::fmt::Write as _;

use hdrhistogram::Histogram;
use iosteer_sched::{Nanos, Op, Scheduler};

/// Most seconds with activity the series keeps (about six days of a run
/// active every second, some 200 MB): a longer run keeps the first ones
/// and counts the rest (`SeriesCollector::left_out`), so a simulation of
/// months at one request a second does not fill memory.
pub const MAX_SECONDS: usize = 1 << 19;

/// Seconds a second stays open after a later one has begun.
pub(crate) const GRACE_SECONDS: u64 = 2;

/// Latencies above an hour (in µs) count as an hour in the p99.
const HIGHEST_US: u64 = 3_600_000_000;
/// Two significant digits: buckets at most 1/128 of their value wide.
const SIGNIFICANT_DIGITS: u8 = 2;

fn empty_histogram() -> Histogram<u32> {
    Histogram::new_with_bounds(1, HIGHEST_US, SIGNIFICANT_DIGITS).expect("constant bounds")
}

/// One class in one second, as far as it is known.
#[derive(Clone, Copy, Debug, Default)]
struct ClassTotals {
    ops: u64,
    bytes: u64,
    sum_us: u64,
    max_us: u32,
    /// Set when the second closes.
    p99_us: u32,
}

impl ClassTotals {
    fn add(&mut self, bytes: u64, latency_us: u32) {
        self.ops += 1;
        self.bytes += bytes;
        self.sum_us += u64::from(latency_us);
        self.max_us = self.max_us.max(latency_us);
    }
}

/// The gauges sampled at a second's first event.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Gauges {
    /// Requests queued in the scheduler: read, write, trim.
    pub queued: [u32; 3],
    pub device_in_flight: u32,
    /// A simulated drive's free blocks and GC pages moved so far (zero for
    /// a real one).
    pub free_blocks: u64,
    pub gc_pages_total: u64,
    /// The policy's write limit, if it limits writes, in the unit `iosteer
    /// run`'s per-second line names (kB/s for steer's and netflix's
    /// bandwidth limits, commands for a queue depth; iocost's vrate in %,
    /// wbt's and iolatency's depths).
    pub write_limit: Option<f64>,
    /// The read latency the policy steers to, ms, if it has one.
    pub read_target_ms: Option<f64>,
}

/// What stays of a second: a fixed size, whatever its requests.
#[derive(Clone, Copy, Debug, Default)]
struct SecondSummary {
    second: u64,
    classes: [ClassTotals; 3],
    gauges: Option<Gauges>,
}

impl SecondSummary {
    fn new(second: u64) -> SecondSummary {
        SecondSummary {
            second,
            ..SecondSummary::default()
        }
    }
}

/// A second still open: its summary and, per class that completed
/// something, the histogram its p99 comes from.
#[derive(Clone, Debug)]
struct OpenSecond {
    summary: SecondSummary,
    latency: [Option<Histogram<u32>>; 3],
}

impl OpenSecond {
    fn new(second: u64) -> OpenSecond {
        OpenSecond {
            summary: SecondSummary::new(second),
            latency: [None, None, None],
        }
    }
}

/// Collects the series while a run goes; only seconds with activity take
/// memory.
#[derive(Clone, Debug, Default)]
pub(crate) struct SeriesCollector {
    /// Closed seconds, in order.
    closed: Vec<SecondSummary>,
    /// Open seconds, in order: at most `GRACE_SECONDS + 1`.
    open: VecDeque<OpenSecond>,
    /// Histograms of closed seconds, reset, for the next ones to reuse.
    spare: Vec<Histogram<u32>>,
    sampled_up_to: Option<u64>,
    /// Seconds with activity past [`MAX_SECONDS`], not kept, and the first.
    left_out: u64,
    first_left_out: Option<u64>,
}

/// The series' class of `op`; `None` for flushes, which the phase tables
/// count as a class of their own and the per-second series leave out (no
/// bytes; counted with writes they would add to their IOPS).
fn class_index(op: Op) -> Option<usize> {
    match op {
        Op::Read => Some(0),
        Op::Write => Some(1),
        Op::Trim => Some(2),
        Op::Flush => None,
    }
}

fn second_of(at: Nanos) -> u64 {
    at.0 / 1_000_000_000
}

fn whole_micros(latency: Nanos) -> u32 {
    (latency.0 / 1000).min(u64::from(u32::MAX)) as u32
}

impl SeriesCollector {
    pub(crate) fn record(&mut self, op: Op, bytes: u64, latency: Nanos, at: Nanos) {
        let Some(class) = class_index(op) else {
            return;
        };
        let latency_us = whole_micros(latency);
        let second = second_of(at);
        let Some(index) = self.open_second(second) else {
            self.record_late(second, class, bytes, latency_us);
            return;
        };
        let open = &mut self.open[index];
        open.summary.classes[class].add(bytes, latency_us);
        open.latency[class]
            .get_or_insert_with(|| self.spare.pop().unwrap_or_else(empty_histogram))
            .saturating_record(u64::from(latency_us));
    }

    /// A completion in a second already closed: counted, but too late for
    /// the p99.
    fn record_late(&mut self, second: u64, class: usize, bytes: u64, latency_us: u32) {
        if let Some(summary) = self.closed_second(second) {
            summary.classes[class].add(bytes, latency_us);
        }
    }

    /// The closed second `second`, added in its place if it had no
    /// activity; `None` when the series is full and it is not kept.
    fn closed_second(&mut self, second: u64) -> Option<&mut SecondSummary> {
        let index = match self.closed.binary_search_by_key(&second, |s| s.second) {
            Ok(index) => index,
            Err(_) if self.closed.len() >= MAX_SECONDS => {
                self.leave_out(second);
                return None;
            }
            Err(index) => {
                self.closed.insert(index, SecondSummary::new(second));
                index
            }
        };
        Some(&mut self.closed[index])
    }

    /// Counts a second with activity that the full series does not keep.
    fn leave_out(&mut self, second: u64) {
        self.left_out += 1;
        self.first_left_out = Some(self.first_left_out.map_or(second, |s| s.min(second)));
    }

    /// Seconds with activity the series left out past [`MAX_SECONDS`], and
    /// the first of them; `None` when it kept every one.
    pub(crate) fn left_out(&mut self) -> Option<(u64, u64)> {
        // The seconds still open are kept or left out as they close.
        self.close_before(u64::MAX);
        self.first_left_out.map(|first| (self.left_out, first))
    }

    /// Where the open second `second` is, opened (and those more than
    /// `GRACE_SECONDS` older closed) if need be; `None` when it has closed.
    fn open_second(&mut self, second: u64) -> Option<usize> {
        let newest = self.open.back().map(|s| s.summary.second);
        if newest == Some(second) {
            return Some(self.open.len() - 1);
        }
        if newest.is_none_or(|newest| newest < second) {
            self.close_before(second.saturating_sub(GRACE_SECONDS));
        }
        if self.closed.last().is_some_and(|c| c.second >= second) {
            return None;
        }
        let index = self.open.partition_point(|s| s.summary.second < second);
        if self
            .open
            .get(index)
            .is_none_or(|s| s.summary.second != second)
        {
            self.open.insert(index, OpenSecond::new(second));
        }
        Some(index)
    }

    /// Closes the open seconds before `second`: their p99 is taken and
    /// their histograms go back to the spares.
    fn close_before(&mut self, second: u64) {
        while self.open.front().is_some_and(|s| s.summary.second < second) {
            let open = self.open.pop_front().expect("checked above");
            self.close(open);
        }
    }

    fn close(&mut self, open: OpenSecond) {
        let mut summary = open.summary;
        for (class, histogram) in summary.classes.iter_mut().zip(open.latency) {
            let Some(mut histogram) = histogram else {
                continue;
            };
            let p99 = histogram.value_at_quantile(0.99);
            class.p99_us = p99.min(u64::from(class.max_us)) as u32;
            histogram.reset();
            self.spare.push(histogram);
        }
        if self.closed.len() >= MAX_SECONDS {
            self.leave_out(summary.second);
        } else {
            self.closed.push(summary);
        }
    }

    /// Whether the gauges of the second holding `now` still need a sample.
    pub(crate) fn wants_sample(&self, now: Nanos) -> bool {
        self.sampled_up_to.is_none_or(|s| s < second_of(now))
    }

    pub(crate) fn sample(&mut self, now: Nanos, gauges: Gauges) {
        let second = second_of(now);
        match self.open_second(second) {
            Some(index) => self.open[index].summary.gauges = Some(gauges),
            None => {
                if let Some(summary) = self.closed_second(second) {
                    summary.gauges = Some(gauges);
                }
            }
        }
        self.sampled_up_to = Some(second);
    }

    /// The series; `gc_pages_total` is the drive's count at the end, so the
    /// last second's GC is known too.
    pub(crate) fn finish(mut self, gc_pages_total: u64) -> Vec<Second> {
        self.close_before(u64::MAX);
        let summaries = self.closed;
        // GC of a second: from its sample to the next one (or the end).
        let mut next_total = gc_pages_total;
        let mut gc_moved = vec![0; summaries.len()];
        for (i, s) in summaries.iter().enumerate().rev() {
            if let Some(g) = &s.gauges {
                gc_moved[i] = next_total.saturating_sub(g.gc_pages_total);
                next_total = g.gc_pages_total;
            }
        }
        let mut gauges = Gauges::default();
        summaries
            .iter()
            .zip(gc_moved)
            .map(|(s, gc_pages_moved)| {
                if let Some(g) = s.gauges {
                    gauges = g;
                }
                Second {
                    second: s.second,
                    classes: s.classes.map(ClassSecond::from),
                    gauges,
                    gc_pages_moved,
                }
            })
            .collect()
    }
}

/// One class in one second.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClassSecond {
    pub mbps: f64,
    pub iops: u64,
    pub mean_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl From<ClassTotals> for ClassSecond {
    fn from(c: ClassTotals) -> ClassSecond {
        if c.ops == 0 {
            return ClassSecond::default();
        }
        ClassSecond {
            mbps: c.bytes as f64 / 1e6,
            iops: c.ops,
            mean_ms: c.sum_us as f64 / c.ops as f64 / 1e3,
            p99_ms: f64::from(c.p99_us) / 1e3,
            max_ms: f64::from(c.max_us) / 1e3,
        }
    }
}

/// One second of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Second {
    pub second: u64,
    /// Read, write, trim.
    pub classes: [ClassSecond; 3],
    /// As sampled at the second's first event (or the last sample before).
    pub gauges: Gauges,
    /// GC pages moved from this second's sample to the next.
    pub gc_pages_moved: u64,
}

/// The gauges of a run now: `sched`'s queues and what it steers, the
/// device's commands in flight and a simulated drive's free blocks and GC
/// pages moved so far (zeros for a real one).
pub fn gauges_of(sched: &dyn Scheduler, device_in_flight: u32, drive: (u64, u64)) -> Gauges {
    let stats = sched.stats();
    Gauges {
        queued: [Op::Read, Op::Write, Op::Trim].map(|op| stats.class(op).queued),
        device_in_flight,
        free_blocks: drive.0,
        gc_pages_total: drive.1,
        write_limit: sched.write_limit().map(|l| l.value),
        read_target_ms: sched.read_target().map(|t| t.0 as f64 / 1e6),
    }
}

/// The series as CSV with a header line; `write_limit` and `read_target_ms`
/// are empty where the policy has none (or before the first sample, as in
/// `iosteer run`'s second 0).
pub fn csv(series: &[Second]) -> String {
    let mut out = String::from("second");
    for class in ["read", "write", "trim"] {
        for col in ["mbps", "iops", "lat_mean_ms", "lat_p99_ms", "lat_max_ms"] {
            let _ = write!(out, ",{class}_{col}");
        }
    }
    out += ",queued_read,queued_write,queued_trim,device_in_flight,free_blocks,gc_pages_moved";
    out += ",write_limit,read_target_ms\n";
    for s in series {
        let _ = write!(out, "{}", s.second);
        for c in &s.classes {
            let _ = write!(
                out,
                ",{:.3},{},{:.3},{:.3},{:.3}",
                c.mbps, c.iops, c.mean_ms, c.p99_ms, c.max_ms
            );
        }
        let g = &s.gauges;
        let _ = write!(
            out,
            ",{},{},{},{},{},{}",
            g.queued[0],
            g.queued[1],
            g.queued[2],
            g.device_in_flight,
            g.free_blocks,
            s.gc_pages_moved
        );
        let limit = g.write_limit.map_or(String::new(), |v| v.to_string());
        let target = g
            .read_target_ms
            .map_or(String::new(), |v| format!("{v:.3}"));
        let _ = writeln!(out, ",{limit},{target}");
    }
    out
}

#[cfg(test)]
impl SeriesCollector {
    /// Bytes the collector holds on the heap.
    fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let histograms = self
            .open
            .iter()
            .flat_map(|s| s.latency.iter().flatten())
            .chain(&self.spare);
        let counts: usize = histograms
            .map(|h| h.distinct_values() * size_of::<u32>())
            .sum();
        self.closed.capacity() * size_of::<SecondSummary>()
            + self.open.capacity() * size_of::<OpenSecond>()
            + self.spare.capacity() * size_of::<Histogram<u32>>()
            + counts
    }

    /// Bytes held beyond the closed seconds' summaries.
    fn working_bytes(&self) -> usize {
        self.heap_bytes() - self.closed.capacity() * std::mem::size_of::<SecondSummary>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gauges with no policy limit or target.
    fn gauges(queued: [u32; 3], device_in_flight: u32, free: u64, gc: u64) -> Gauges {
        Gauges {
            queued,
            device_in_flight,
            free_blocks: free,
            gc_pages_total: gc,
            ..Gauges::default()
        }
    }

    /// Latencies from 1 µs to about 50 ms, spread over many buckets.
    fn latency(i: u64) -> Nanos {
        Nanos(1_000 + (i * 7_919) % 50_000_000)
    }

    #[test]
    fn a_busy_second_takes_no_more_memory_than_a_quiet_one() {
        let mut c = SeriesCollector::default();
        let at = Nanos::from_millis(500);
        let ops = [Op::Read, Op::Write, Op::Trim];
        for i in 0..1_000u64 {
            c.record(ops[i as usize % 3], 4096, latency(i), at);
        }
        let quiet = c.heap_bytes();
        for i in 1_000..1_000_000u64 {
            c.record(ops[i as usize % 3], 4096, latency(i), at);
        }
        assert_eq!(c.heap_bytes(), quiet, "a million requests in one second");
        assert!(quiet < 64 * 1024, "three histograms: {quiet} bytes");
        let s = c.finish(0);
        assert_eq!(s[0].classes.iter().map(|c| c.iops).sum::<u64>(), 1_000_000);
    }

    #[test]
    fn seconds_cost_their_summary_only() {
        assert!(std::mem::size_of::<SecondSummary>() <= 256);
        let mut c = SeriesCollector::default();
        let mut working = 0;
        for second in 0..10_000u64 {
            for i in 0..10 {
                let at = Nanos::from_secs(second) + Nanos::from_millis(i * 100);
                c.record(Op::Read, 4096, latency(second * 10 + i), at);
                c.record(Op::Write, 4096, latency(i), at);
            }
            if second == 100 {
                working = c.working_bytes();
            }
        }
        assert_eq!(c.working_bytes(), working, "histograms are reused");
        assert!(c.open.len() as u64 <= GRACE_SECONDS + 1);
        assert_eq!(c.finish(0).len(), 10_000);
    }

    #[test]
    fn percentiles_within_the_stated_precision() {
        let mut c = SeriesCollector::default();
        let mut exact: Vec<u32> = (0..100_000u64).map(|i| whole_micros(latency(i))).collect();
        for (i, &us) in exact.iter().enumerate() {
            c.record(
                Op::Read,
                4096,
                Nanos(u64::from(us) * 1000 + 999),
                Nanos(i as u64),
            );
        }
        exact.sort_unstable();
        let n = exact.len();
        let exact_p99 = f64::from(exact[(n as f64 * 0.99).ceil() as usize - 1]) / 1e3;
        let exact_mean = exact.iter().map(|&u| u64::from(u)).sum::<u64>() as f64 / n as f64 / 1e3;
        let r = c.finish(0)[0].classes[0].clone();
        assert_eq!(r.max_ms, f64::from(exact[n - 1]) / 1e3);
        assert!((r.mean_ms - exact_mean).abs() < 1e-9);
        assert!(r.p99_ms >= exact_p99 && r.p99_ms <= exact_p99 * (1.0 + 1.0 / 128.0));
        assert!(r.p99_ms <= r.max_ms);
    }

    #[test]
    fn late_completions_still_count() {
        let mut c = SeriesCollector::default();
        c.record(Op::Read, 10, Nanos::from_millis(1), Nanos::from_secs(5));
        c.sample(Nanos::from_secs(6), gauges([0; 3], 0, 7, 0));
        // Second 5 is still open: this counts in its p99 too.
        c.record(Op::Read, 10, Nanos::from_millis(3), Nanos::from_secs(5));
        c.record(Op::Read, 10, Nanos::from_millis(1), Nanos::from_secs(9));
        // Second 5 closed: counted in IOPS, MB/s, mean and max.
        c.record(Op::Read, 10, Nanos::from_millis(8), Nanos::from_secs(5));
        c.record(Op::Write, 10, Nanos::from_millis(2), Nanos::from_secs(2));
        let s = c.finish(0);
        let seconds: Vec<u64> = s.iter().map(|s| s.second).collect();
        assert_eq!(seconds, [2, 5, 6, 9]);
        let five = &s[1].classes[0];
        assert_eq!((five.iops, five.p99_ms, five.max_ms), (3, 3.0, 8.0));
        assert_eq!(s[2].gauges.free_blocks, 7);
    }

    #[test]
    fn seconds_summarize_their_completions() {
        let mut c = SeriesCollector::default();
        for i in 1..=100u64 {
            c.record(
                Op::Read,
                1_000_000,
                Nanos::from_millis(i),
                Nanos::from_millis(1500),
            );
        }
        c.record(
            Op::Write,
            2_000_000,
            Nanos::from_millis(3),
            Nanos::from_millis(200),
        );
        let steered = Gauges {
            write_limit: Some(5000.0),
            read_target_ms: Some(1.5),
            ..gauges([1, 2, 3], 4, 500, 10)
        };
        c.sample(Nanos::from_millis(10), steered);
        c.sample(Nanos::from_millis(1100), gauges([0, 0, 0], 1, 480, 70));
        c.record(Op::Read, 1, Nanos(1), Nanos::from_secs(1_000_000));
        let s = c.finish(100);
        assert_eq!(s.len(), 3, "idle seconds take no room");
        assert_eq!(s[2].second, 1_000_000);
        assert_eq!((s[0].classes[1].iops, s[0].classes[1].mbps), (1, 2.0));
        let r = &s[1].classes[0];
        assert_eq!((r.iops, r.max_ms), (100, 100.0));
        // The exact p99 is 99 ms; the histogram's is within its precision.
        assert!((99.0..=99.0 * (1.0 + 1.0 / 128.0)).contains(&r.p99_ms));
        assert!((r.mean_ms - 50.5).abs() < 1e-9);
        // GC from each sample to the next, or to the end: 60 pages in
        // second 0, 30 in second 1.
        assert_eq!(
            (
                s[0].gc_pages_moved,
                s[1].gc_pages_moved,
                s[1].gauges.free_blocks
            ),
            (60, 30, 480)
        );
        let text = csv(&s);
        assert_eq!(text.lines().count(), 4);
        assert!(text.starts_with("second,read_mbps,read_iops,read_lat_mean_ms"));
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].ends_with(",gc_pages_moved,write_limit,read_target_ms"));
        // What the policy steered to, where it has it; empty where not.
        assert!(lines[1].ends_with(",500,60,5000,1.500"), "{}", lines[1]);
        assert!(lines[2].ends_with(",480,30,,"), "{}", lines[2]);
    }
}

#[cfg(test)]
mod bound_tests {
    use super::*;

    #[test]
    fn a_run_longer_than_the_series_holds_keeps_its_first_seconds_and_counts_the_rest() {
        // One request a second for MAX_SECONDS + 100 seconds: a month-long
        // run at that pace grew memory by ~400 bytes a simulated second.
        let mut series = SeriesCollector::default();
        let extra = 100u64;
        for second in 0..MAX_SECONDS as u64 + extra {
            let at = Nanos(second * 1_000_000_000 + 1);
            series.record(Op::Read, 4096, Nanos(100_000), at);
            if series.wants_sample(at) {
                series.sample(at, Gauges::default());
            }
        }
        series.close_before(u64::MAX);
        assert_eq!(series.closed.len(), MAX_SECONDS);
        assert_eq!(series.left_out(), Some((extra, MAX_SECONDS as u64)));
        // A late completion in a second left out stays left out.
        series.record_late(MAX_SECONDS as u64 + 5, 0, 4096, 100);
        assert_eq!(series.closed.len(), MAX_SECONDS);
        let kept = series.finish(0);
        assert_eq!(kept.len(), MAX_SECONDS);
        assert_eq!(kept.last().map(|s| s.second), Some(MAX_SECONDS as u64 - 1));
    }

    #[test]
    fn a_run_within_the_bound_leaves_nothing_out() {
        let mut series = SeriesCollector::default();
        series.record(Op::Read, 4096, Nanos(100_000), Nanos(1));
        series.close_before(u64::MAX);
        assert_eq!(series.left_out(), None);
    }
}
