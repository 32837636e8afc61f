//! One-second time series of a run, as CSV.
//!
//! Per second and class (read, write, trim): MB/s, IOPS, latency mean, p99
//! and max (ms, of the requests completed in that second); and, sampled at the
//! first event of each second: requests queued in the scheduler per class,
//! commands in the drive, free blocks, and GC pages moved during the second.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use iosteer_sched::{Nanos, Op};

#[derive(Clone, Debug, Default)]
pub(crate) struct BucketClass {
    ops: u64,
    bytes: u64,
    latencies_us: Vec<u32>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Bucket {
    classes: [BucketClass; 3],
    sampled: bool,
    queued: [u32; 3],
    device_in_flight: u32,
    free_blocks: u64,
    gc_pages_total: u64,
}

/// Collects the series while a run goes; only seconds with activity take
/// memory.
#[derive(Clone, Debug, Default)]
pub(crate) struct SeriesCollector {
    buckets: BTreeMap<u64, Bucket>,
    sampled_up_to: Option<u64>,
}

fn class_index(op: Op) -> usize {
    match op {
        Op::Read => 0,
        Op::Write | Op::Flush => 1,
        Op::Trim => 2,
    }
}

fn second_of(at: Nanos) -> u64 {
    at.0 / 1_000_000_000
}

impl SeriesCollector {
    pub(crate) fn record(&mut self, op: Op, bytes: u64, latency: Nanos, at: Nanos) {
        let class = &mut self.buckets.entry(second_of(at)).or_default().classes[class_index(op)];
        class.ops += 1;
        class.bytes += bytes;
        class
            .latencies_us
            .push((latency.0 / 1000).min(u64::from(u32::MAX)) as u32);
    }

    /// Whether the gauges of the second holding `now` still need a sample.
    pub(crate) fn wants_sample(&self, now: Nanos) -> bool {
        self.sampled_up_to.is_none_or(|s| s < second_of(now))
    }

    pub(crate) fn sample(
        &mut self,
        now: Nanos,
        queued: [u32; 3],
        device_in_flight: u32,
        free_blocks: u64,
        gc_pages_total: u64,
    ) {
        let b = self.buckets.entry(second_of(now)).or_default();
        b.sampled = true;
        b.queued = queued;
        b.device_in_flight = device_in_flight;
        b.free_blocks = free_blocks;
        b.gc_pages_total = gc_pages_total;
        self.sampled_up_to = Some(second_of(now));
    }

    /// The series; `gc_pages_total` is the drive's count at the end, so the
    /// last second's GC is known too.
    pub(crate) fn finish(self, gc_pages_total: u64) -> Vec<Second> {
        let mut entries: Vec<(u64, Bucket)> = self.buckets.into_iter().collect();
        // GC of a second: from its sample to the next one (or the end).
        let mut next_total = gc_pages_total;
        let mut gc_moved = vec![0; entries.len()];
        for (i, (_, b)) in entries.iter().enumerate().rev() {
            if b.sampled {
                gc_moved[i] = next_total.saturating_sub(b.gc_pages_total);
                next_total = b.gc_pages_total;
            }
        }
        let mut gauges = ([0u32; 3], 0u32, 0u64);
        entries
            .iter_mut()
            .zip(gc_moved)
            .map(|((second, b), gc_pages_moved)| {
                if b.sampled {
                    gauges = (b.queued, b.device_in_flight, b.free_blocks);
                }
                Second {
                    second: *second,
                    classes: std::array::from_fn(|c| ClassSecond::from(&mut b.classes[c])),
                    queued: gauges.0,
                    device_in_flight: gauges.1,
                    free_blocks: gauges.2,
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

impl From<&mut BucketClass> for ClassSecond {
    fn from(c: &mut BucketClass) -> ClassSecond {
        if c.ops == 0 {
            return ClassSecond::default();
        }
        c.latencies_us.sort_unstable();
        let n = c.latencies_us.len();
        let p99 = c.latencies_us[((n as f64 * 0.99).ceil() as usize).clamp(1, n) - 1];
        let sum: u64 = c.latencies_us.iter().map(|l| u64::from(*l)).sum();
        ClassSecond {
            mbps: c.bytes as f64 / 1e6,
            iops: c.ops,
            mean_ms: sum as f64 / n as f64 / 1e3,
            p99_ms: f64::from(p99) / 1e3,
            max_ms: f64::from(c.latencies_us[n - 1]) / 1e3,
        }
    }
}

/// One second of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Second {
    pub second: u64,
    /// Read, write, trim.
    pub classes: [ClassSecond; 3],
    /// Requests queued in the scheduler: read, write, trim.
    pub queued: [u32; 3],
    pub device_in_flight: u32,
    pub free_blocks: u64,
    pub gc_pages_moved: u64,
}

/// The series as CSV with a header line.
pub fn csv(series: &[Second]) -> String {
    let mut out = String::from("second");
    for class in ["read", "write", "trim"] {
        for col in ["mbps", "iops", "lat_mean_ms", "lat_p99_ms", "lat_max_ms"] {
            let _ = write!(out, ",{class}_{col}");
        }
    }
    out += ",queued_read,queued_write,queued_trim,device_in_flight,free_blocks,gc_pages_moved\n";
    for s in series {
        let _ = write!(out, "{}", s.second);
        for c in &s.classes {
            let _ = write!(
                out,
                ",{:.3},{},{:.3},{:.3},{:.3}",
                c.mbps, c.iops, c.mean_ms, c.p99_ms, c.max_ms
            );
        }
        let _ = writeln!(
            out,
            ",{},{},{},{},{},{}",
            s.queued[0],
            s.queued[1],
            s.queued[2],
            s.device_in_flight,
            s.free_blocks,
            s.gc_pages_moved
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
        c.sample(Nanos::from_millis(10), [1, 2, 3], 4, 500, 10);
        c.sample(Nanos::from_millis(1100), [0, 0, 0], 1, 480, 70);
        c.record(Op::Read, 1, Nanos(1), Nanos::from_secs(1_000_000));
        let s = c.finish(100);
        assert_eq!(s.len(), 3, "idle seconds take no room");
        assert_eq!(s[2].second, 1_000_000);
        assert_eq!((s[0].classes[1].iops, s[0].classes[1].mbps), (1, 2.0));
        let r = &s[1].classes[0];
        assert_eq!((r.iops, r.p99_ms, r.max_ms), (100, 99.0, 100.0));
        assert!((r.mean_ms - 50.5).abs() < 1e-9);
        // GC from each sample to the next, or to the end: 60 pages in
        // second 0, 30 in second 1.
        assert_eq!(
            (s[0].gc_pages_moved, s[1].gc_pages_moved, s[1].free_blocks),
            (60, 30, 480)
        );
        let text = csv(&s);
        assert_eq!(text.lines().count(), 4);
        assert!(text.starts_with("second,read_mbps,read_iops,read_lat_mean_ms"));
    }
}
