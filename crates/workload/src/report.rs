//! What a run measured, by phase and class, and how it prints.
//!
//! Latency is end to end: from the moment a job submits a request to the
//! moment the drive (or the scheduler, for an advisory trim) completes it, so
//! it includes time queued in the scheduler. A request counts in the phase in
//! which it completes, and in `all`.
//!
//! JSON schema (stable; fields are only ever added):
//!
//! ```text
//! {"sim": {"requests": N, "wall_s": S, "requests_per_s": R},
//!  "runs": [{"scheduler": "<spec as given>", "device": "<preset>",
//!            "phases": [{"name": "before"|"fill"|"after"|"all"|..., "start_s", "end_s",
//!                        "read":  {"ops", "mbps", "iops", "lat_us": {"mean", "stddev", "p50", "p99", "p999", "max"},
//!                                  "slo_violations"},
//!                        "write": {...}, "trim": {...}, "all": {...},
//!                        "flush": {...} (only when the phase completed flushes), "waf": W|null}],
//!            "device": {"waf", "gc_pages_moved", "erases", "foreground_gc_blocks", "background_gc_blocks",
//!                       "read_wait_behind_gc_s", "read_wait_behind_program_s",
//!                       "merged_writes", "merged_reads",
//!                       "wear_erases_min", "wear_erases_mean", "wear_erases_max"},
//!            "unfinished": N, "interrupted": bool, "notes": [...]}]}
//! ```
//!
//! `mbps` is 10^6 bytes per second of the phase; latencies are microseconds
//! (`stddev` is the population standard deviation); `all` combines reads,
//! writes and trims; flushes are apart in `flush`, as fio reports syncs;
//! `slo_violations` counts requests slower than the SLO (35 ms by default).

use hdrhistogram::Histogram;
use iosteer_sched::objective::Metric;
use iosteer_sched::{Nanos, Op};
use serde::Serialize;

use crate::series::Gauges;

/// A phase of a run, by completion time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    pub name: String,
    pub start: Nanos,
    pub end: Nanos,
}

#[derive(Clone, Debug)]
pub(crate) struct ClassAccumulator {
    ops: u64,
    bytes: u64,
    sum_ns: u128,
    /// Sum of squared latencies in µs², for the standard deviation.
    sum_sq_us: f64,
    slo_violations: u64,
    /// The slowest latency, exact (the histogram keeps three digits).
    max_ns: u64,
    latency: Histogram<u64>,
}

impl Default for ClassAccumulator {
    fn default() -> Self {
        ClassAccumulator {
            ops: 0,
            bytes: 0,
            sum_ns: 0,
            sum_sq_us: 0.0,
            slo_violations: 0,
            max_ns: 0,
            latency: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("constant bounds"),
        }
    }
}

impl ClassAccumulator {
    pub(crate) fn record(&mut self, bytes: u64, latency: Nanos, slo: Nanos) {
        self.count(bytes, latency, slo);
        self.latency.saturating_record(latency.0.max(1));
    }

    /// [`record`](Self::record) but for the latency histogram.
    fn count(&mut self, bytes: u64, latency: Nanos, slo: Nanos) {
        self.ops += 1;
        self.bytes += bytes;
        self.sum_ns += u128::from(latency.0);
        let us = latency.0 as f64 / 1e3;
        self.sum_sq_us += us * us;
        self.max_ns = self.max_ns.max(latency.0);
        if latency > slo {
            self.slo_violations += 1;
        }
    }

    fn merge(&mut self, other: &ClassAccumulator) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.sum_ns += other.sum_ns;
        self.sum_sq_us += other.sum_sq_us;
        self.slo_violations += other.slo_violations;
        self.max_ns = self.max_ns.max(other.max_ns);
        self.latency.add(&other.latency).expect("same bounds");
    }

    /// Population standard deviation of latency, µs.
    fn stddev_us(&self) -> f64 {
        if self.ops == 0 {
            return 0.0;
        }
        let n = self.ops as f64;
        let mean = self.sum_ns as f64 / 1e3 / n;
        let variance = (self.sum_sq_us / n - mean * mean).max(0.0);
        (variance.sqrt() * 10.0).round() / 10.0
    }

    fn summary(&self, seconds: f64) -> ClassReport {
        let us = |ns: u64| (ns as f64 / 1e3 * 10.0).round() / 10.0;
        // A percentile is its bucket's top, never above the slowest request.
        let q = |p: f64| {
            if self.ops == 0 {
                0.0
            } else {
                us(self.latency.value_at_quantile(p).min(self.max_ns))
            }
        };
        ClassReport {
            ops: self.ops,
            mbps: round_rate(self.bytes as f64 / 1e6 / seconds.max(1e-9), 2),
            iops: round_rate(self.ops as f64 / seconds.max(1e-9), 1),
            lat_us: LatencyReport {
                mean: if self.ops == 0 {
                    0.0
                } else {
                    us((self.sum_ns / u128::from(self.ops)) as u64)
                },
                stddev: self.stddev_us(),
                p50: q(0.5),
                p99: q(0.99),
                p999: q(0.999),
                max: us(self.max_ns),
            },
            slo_violations: self.slo_violations,
        }
    }
}

/// `x` rounded to `digits` decimals: the precision figures are reported at.
pub fn round(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

/// A rate to `digits` decimals, or below 1 to three significant digits, so
/// that a sparse trace's 0.0008 MB/s is not reported as 0.
fn round_rate(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() || x.abs() >= 1.0 {
        return round(x, digits);
    }
    round(x, digits.max((-x.abs().log10()).floor() as i32 + 3))
}

/// Accumulators of one phase: read, write, trim, all three together, and
/// flushes (apart, as fio reports its syncs: a flush moves no data, and
/// counted with the writes it would add to their IOPS and mix its latency
/// into theirs).
#[derive(Clone, Debug, Default)]
pub(crate) struct PhaseAccumulator {
    pub(crate) classes: [ClassAccumulator; 5],
}

impl PhaseAccumulator {
    pub(crate) fn record(&mut self, op: Op, bytes: u64, latency: Nanos, slo: Nanos) {
        let index = match op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Trim => 2,
            Op::Flush => {
                self.classes[4].record(bytes, latency, slo);
                return;
            }
        };
        self.classes[index].record(bytes, latency, slo);
        // `all`'s histogram is its classes' added up when reported (exact:
        // the same buckets), not a second record per request.
        self.classes[3].count(bytes, latency, slo);
    }

    /// `all` with its latencies: those of reads, writes and trims.
    fn all(&self) -> ClassAccumulator {
        let mut all = self.classes[3].clone();
        for class in &self.classes[..3] {
            all.latency.add(&class.latency).expect("same bounds");
        }
        all
    }

    pub(crate) fn merge(&mut self, other: &PhaseAccumulator) {
        for (mine, theirs) in self.classes.iter_mut().zip(&other.classes) {
            mine.merge(theirs);
        }
    }

    pub(crate) fn report(&self, phase: &Phase) -> PhaseReport {
        self.report_over(phase, (phase.end - phase.start).as_secs_f64())
    }

    /// The report of `phase`, its rates over `seconds` of it.
    fn report_over(&self, phase: &Phase, seconds: f64) -> PhaseReport {
        PhaseReport {
            name: phase.name.clone(),
            start_s: round(phase.start.as_secs_f64(), 6),
            end_s: round(phase.end.as_secs_f64(), 6),
            read: self.classes[0].summary(seconds),
            write: self.classes[1].summary(seconds),
            trim: self.classes[2].summary(seconds),
            all: self.all().summary(seconds),
            flush: self.classes[4].summary(seconds),
            waf: None,
        }
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LatencyReport {
    pub mean: f64,
    pub stddev: f64,
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl LatencyReport {
    /// The metrics a report keeps: every one but p90.
    pub const KEPT: [Metric; 5] = [
        Metric::Mean,
        Metric::P50,
        Metric::P99,
        Metric::P999,
        Metric::Max,
    ];

    /// The value of `metric`, microseconds; `None` for a metric the report
    /// does not keep (p90).
    pub fn metric(&self, metric: Metric) -> Option<f64> {
        match metric {
            Metric::Mean => Some(self.mean),
            Metric::P50 => Some(self.p50),
            Metric::P99 => Some(self.p99),
            Metric::P999 => Some(self.p999),
            Metric::Max => Some(self.max),
            Metric::P90 => None,
        }
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ClassReport {
    pub ops: u64,
    pub mbps: f64,
    pub iops: f64,
    pub lat_us: LatencyReport,
    pub slo_violations: u64,
}

impl ClassReport {
    /// No request of the class completed.
    pub fn is_empty(&self) -> bool {
        self.ops == 0
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PhaseReport {
    pub name: String,
    pub start_s: f64,
    pub end_s: f64,
    pub read: ClassReport,
    pub write: ClassReport,
    pub trim: ClassReport,
    /// Reads, writes and trims together.
    pub all: ClassReport,
    /// Flushes (fio's `fsync`, `fdatasync`, `end_fsync`), not counted in
    /// `write` or `all`, as fio reports its syncs apart; in JSON only when
    /// the phase completed some.
    #[serde(skip_serializing_if = "ClassReport::is_empty")]
    pub flush: ClassReport,
    /// NAND pages written per host page written in the phase (`null` when
    /// the host wrote nothing).
    pub waf: Option<f64>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DeviceReport {
    pub waf: f64,
    pub gc_pages_moved: u64,
    pub erases: u64,
    pub foreground_gc_blocks: u64,
    pub background_gc_blocks: u64,
    pub read_wait_behind_gc_s: f64,
    pub read_wait_behind_program_s: f64,
    /// Semi-preemptive GC's merge: owed moves host writes made needless,
    /// host reads that lent an owed move their array read.
    pub merged_writes: u64,
    pub merged_reads: u64,
    /// Erases per block over the drive's life: min, mean, max.
    pub wear_erases_min: u32,
    pub wear_erases_mean: f64,
    pub wear_erases_max: u32,
    /// The state the drive started in (`empty`, `fill=PCT`, `aged=N`,
    /// `steady`, with what `steady` reached), when it was preconditioned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precondition: Option<String>,
    /// `steady`: the write amplification preconditioning settled at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precondition_waf: Option<f64>,
}

/// CPU time over a run's wall time: `cores` 1.0 is one core kept busy.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CpuReport {
    pub user_s: f64,
    pub system_s: f64,
    pub cores: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct VerifyReport {
    pub blocks: u64,
    pub mismatches: u64,
}

/// One run. In JSON the drive's name is `drive` and its statistics `device`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunReport {
    pub scheduler: String,
    #[serde(rename = "drive")]
    pub device: String,
    pub phases: Vec<PhaseReport>,
    /// The simulated drive's statistics; `null` for a real target.
    #[serde(rename = "device")]
    pub device_stats: Option<DeviceReport>,
    /// `--verify` of a real run: blocks checked and mismatches found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyReport>,
    /// A real-time run's CPU use (user and system seconds of the process).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuReport>,
    /// Requests still queued or in the drive when the run ended.
    pub unfinished: u64,
    /// Requests submitted (summed into `sim.requests`).
    #[serde(skip)]
    pub requests: u64,
    /// The run stopped before its end (interrupted, or an error); `notes` says why.
    pub interrupted: bool,
    pub notes: Vec<String>,
    /// One-second time series (CSV and charts; not in the JSON).
    #[serde(skip)]
    pub series: Vec<crate::series::Second>,
}

impl RunReport {
    pub fn phase(&self, name: &str) -> Option<&PhaseReport> {
        self.phases.iter().find(|p| p.name == name)
    }

    /// When the last phase ended, seconds (where a run that stopped early
    /// stopped).
    pub fn end_s(&self) -> f64 {
        self.phases.iter().map(|p| p.end_s).fold(0.0, f64::max)
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SimSummary {
    pub requests: u64,
    pub wall_s: f64,
    pub requests_per_s: f64,
}

/// The whole JSON document.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SimReport<'a> {
    pub sim: SimSummary,
    pub runs: &'a [RunReport],
}

impl<'a> SimReport<'a> {
    /// The document of `runs`, which served `requests` in `wall` seconds.
    pub fn new(runs: &'a [RunReport], requests: u64, wall: f64) -> SimReport<'a> {
        SimReport {
            sim: SimSummary {
                requests,
                wall_s: round(wall, 3),
                requests_per_s: (requests as f64 / wall.max(1e-9)).round(),
            },
            runs,
        }
    }
}

/// `x` with `decimals` decimals, or with two significant digits when that
/// would print a rate that is not zero as zero (a trace of a request every
/// few seconds has 0.33 IOPS, not 0); below 10^-4, in exponent form, so a
/// column keeps its width.
pub fn figure(x: f64, decimals: usize) -> String {
    let shown = format!("{x:.decimals$}");
    if x == 0.0 || !x.is_finite() || shown.parse::<f64>().is_ok_and(|v| v != 0.0) {
        return shown;
    }
    if x.abs() < 1e-4 {
        return format!("{x:.1e}");
    }
    let digits = (-x.abs().log10()).floor() as usize + 2;
    format!("{x:.digits$}")
}

/// The terminal table of one run, with its notes and, for a real run, its
/// CPU time and `--verify` counts.
pub fn table(run: &RunReport) -> String {
    let drive = match &run.device_stats {
        Some(d) => format!(
            "drive {}{}, WAF {:.2}, GC moved {} pages, {} erases",
            run.device,
            d.precondition
                .as_ref()
                .map_or(String::new(), |p| format!(" started {p}")),
            d.waf,
            d.gc_pages_moved,
            d.erases
        ),
        None => format!("target {}", run.device),
    };
    let unfinished = if run.unfinished > 0 {
        format!(", {} unfinished", run.unfinished)
    } else {
        String::new()
    };
    let mut out = format!("scheduler {}  ({drive}{unfinished})\n", run.scheduler);
    let width = (run.phases.iter().map(|p| p.name.len())).fold(7, usize::max);
    out += &format!(
        "  {:<width$} {:<5} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7}\n",
        "phase",
        "class",
        "MB/s",
        "IOPS",
        "mean ms",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
        ">SLO"
    );
    for phase in &run.phases {
        for (class, r) in [
            ("read", &phase.read),
            ("write", &phase.write),
            ("trim", &phase.trim),
            ("flush", &phase.flush),
        ] {
            if r.ops == 0 {
                continue;
            }
            let ms = |us: f64| us / 1e3;
            out += &format!(
                "  {:<width$} {:<5} {:>8} {:>8} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>7}\n",
                phase.name,
                class,
                figure(r.mbps, 1),
                figure(r.iops, 0),
                ms(r.lat_us.mean),
                ms(r.lat_us.p50),
                ms(r.lat_us.p99),
                ms(r.lat_us.p999),
                ms(r.lat_us.max),
                r.slo_violations
            );
        }
    }
    for note in &run.notes {
        out += &format!("  note: {note}\n");
    }
    if let Some(c) = &run.cpu {
        out += &format!(
            "cpu: {:.2} s user, {:.2} s system ({:.2} cores)\n",
            c.user_s, c.system_s, c.cores
        );
    }
    if let Some(v) = &run.verify {
        out += &format!(
            "verify: {} blocks checked, {} mismatches\n",
            v.blocks, v.mismatches
        );
    }
    out
}

/// Records a run's requests into phases and a one-second series: the
/// simulator's loop and the real engine both report through it.
///
/// Its memory does not grow with the requests, so an hour at 500,000 IOPS
/// costs what a minute does: each phase keeps five histograms (read, write,
/// trim, all, flush) and the series a fixed-size summary per active second
/// ([`crate::series`]); no request is kept.
#[derive(Clone, Debug)]
pub struct Recorder {
    phases: Vec<Phase>,
    /// Phases that overlap others (a job file's whole-workload `job`):
    /// left out of `all`, which would count their requests twice.
    overlapping: Vec<usize>,
    accumulators: Vec<PhaseAccumulator>,
    series: crate::series::SeriesCollector,
    slo: Nanos,
    /// Requests that completed in no phase but an overlapping one (in flight
    /// when a scenario's last phase ended), per class as in [`Op::ALL`]: the
    /// series counts them, the tables do not.
    outside: [u64; 4],
}

impl Recorder {
    pub fn new(phases: Vec<Phase>, slo: Nanos) -> Recorder {
        Recorder {
            accumulators: vec![PhaseAccumulator::default(); phases.len()],
            phases,
            overlapping: Vec::new(),
            series: crate::series::SeriesCollector::default(),
            slo,
            outside: [0; 4],
        }
    }

    /// Adds a phase, recorded from now on (phases that follow a job file's
    /// jobs appear as the jobs run); its index.
    pub fn add_phase(&mut self, phase: Phase) -> usize {
        self.phases.push(phase);
        self.accumulators.push(PhaseAccumulator::default());
        self.phases.len() - 1
    }

    /// Moves a phase's edges: it opens and closes as its jobs run.
    pub fn set_phase_edges(&mut self, index: usize, start: Nanos, end: Nanos) {
        if let Some(phase) = self.phases.get_mut(index) {
            (phase.start, phase.end) = (start, end);
        }
    }

    /// Clears phase `index`'s figures and starts it again at `from`, as fio
    /// clears a job's figures when the final window of its latency
    /// target's search starts.
    pub fn restart_phase(&mut self, index: usize, from: Nanos) {
        let accumulator = self.accumulators.get_mut(index);
        if let (Some(phase), Some(accumulator)) = (self.phases.get_mut(index), accumulator) {
            phase.start = from;
            *accumulator = PhaseAccumulator::default();
        }
    }

    /// Leaves phase `index` out of `all` (it overlaps the others).
    pub fn overlaps(&mut self, index: usize) {
        self.overlapping.push(index);
    }

    pub fn phases(&self) -> &[Phase] {
        &self.phases
    }

    /// A request of `bytes` finished at `at` after `latency`.
    pub fn request_done(&mut self, op: Op, bytes: u64, latency: Nanos, at: Nanos) {
        self.series.record(op, bytes, latency, at);
        let mut placed = false;
        for (index, (phase, acc)) in self.phases.iter().zip(&mut self.accumulators).enumerate() {
            if at >= phase.start && at < phase.end {
                acc.record(op, bytes, latency, self.slo);
                placed |= !self.overlapping.contains(&index);
            }
        }
        if !placed {
            self.outside[op.index()] += 1;
        }
    }

    /// Whether the second holding `now` still needs its gauges sampled.
    pub fn wants_sample(&self, now: Nanos) -> bool {
        self.series.wants_sample(now)
    }

    /// Samples the gauges of the second holding `now` (see [`Gauges`]).
    pub fn sample(&mut self, now: Nanos, gauges: Gauges) {
        if self.series.wants_sample(now) {
            self.series.sample(now, gauges);
        }
    }

    /// The report of every phase, then `all` over them.
    pub fn phase_reports(&self) -> Vec<PhaseReport> {
        let mut reports: Vec<PhaseReport> = self
            .phases
            .iter()
            .zip(&self.accumulators)
            .map(|(p, acc)| acc.report(p))
            .collect();
        // `all` adds the phases up: its rates are over the time they
        // measured, not over the gaps between them (a job's ramp_time or
        // startdelay), which the whole workload's `job` spans.
        let mut all = PhaseAccumulator::default();
        let mut measured = Nanos::ZERO;
        for (index, (acc, phase)) in self.accumulators.iter().zip(&self.phases).enumerate() {
            if !self.overlapping.contains(&index) {
                all.merge(acc);
                measured += phase.end - phase.start;
            }
        }
        let span = Phase {
            name: "all".into(),
            start: self.phases.first().map_or(Nanos::ZERO, |p| p.start),
            end: self.phases.last().map_or(Nanos::ZERO, |p| p.end),
        };
        reports.push(all.report_over(&span, measured.as_secs_f64()));
        reports
    }

    /// What the report should say of the requests it left out: those of
    /// seconds the one-second series could not keep
    /// ([`crate::series::MAX_SECONDS`]), and those that completed outside
    /// every phase. Call it once the run is over: it closes the seconds
    /// still open.
    pub fn notes(&mut self) -> Vec<String> {
        let series = self.series.left_out().map(|(seconds, first)| {
            format!(
                "the one-second series (CSV and charts) keeps the first {} seconds with activity, to bound memory: {seconds} later ones, from second {first}, are left out of it; the phase tables cover the whole run",
                crate::series::MAX_SECONDS
            )
        });
        let outside = self.outside.iter().sum::<u64>();
        let classes = Op::ALL
            .iter()
            .zip(self.outside)
            .filter(|(_, n)| *n > 0)
            .map(|(op, n)| match (n, op) {
                (1, _) => format!("1 {}", op.name()),
                (_, Op::Flush) => format!("{n} flushes"),
                _ => format!("{n} {}s", op.name()),
            })
            .collect::<Vec<_>>()
            .join(", ");
        let outside = (outside > 0).then(|| {
            format!(
                "{outside} request(s) ({classes}) completed outside every phase, in flight when the phase before them ended: the one-second series (CSV and charts) counts them, no phase's figures do"
            )
        });
        series.into_iter().chain(outside).collect()
    }

    /// The one-second series so far (the recorder keeps recording afresh).
    pub fn take_series(&mut self, gc_pages_total: u64) -> Vec<crate::series::Second> {
        std::mem::take(&mut self.series).finish(gc_pages_total)
    }

    /// The report of a run outside the simulator that ended at `end`:
    /// `label` is the scheduler spec, `target` what ran. Phases end no later
    /// than the run did, so rates are per second of what really ran.
    pub fn finish(
        mut self,
        label: &str,
        target: &str,
        end: Nanos,
        requests: u64,
        unfinished: u64,
        notes: Vec<String>,
    ) -> RunReport {
        for phase in &mut self.phases {
            phase.end = phase.end.min(end).max(phase.start);
        }
        let mut notes = notes;
        notes.extend(self.notes());
        RunReport {
            scheduler: label.to_string(),
            device: target.to_string(),
            phases: self.phase_reports(),
            device_stats: None,
            verify: None,
            cpu: None,
            unfinished,
            requests,
            interrupted: false,
            notes,
            series: self.take_series(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(name: &str, start: u64, end: u64) -> Phase {
        Phase {
            name: name.into(),
            start: Nanos::from_secs(start),
            end: Nanos::from_secs(end),
        }
    }

    /// One request: its max is its latency exactly, and no percentile lies
    /// above it (the histogram's bucket top did: max 29,753.3 us for a
    /// 29,744.3 us read).
    #[test]
    fn max_is_exact_and_no_percentile_exceeds_it() {
        let mut recorder = Recorder::new(vec![phase("p", 0, 10)], Nanos::from_millis(35));
        recorder.request_done(Op::Read, 1 << 20, Nanos(29_744_300), Nanos::from_secs(1));
        let read = &recorder.phase_reports()[0].read;
        assert_eq!(read.lat_us.max, 29_744.3);
        assert_eq!(read.lat_us.p99, 29_744.3);
        assert_eq!(read.lat_us.mean, 29_744.3);
    }

    /// A request that completes after the last phase ended is counted in
    /// none, and the notes say how many.
    #[test]
    fn requests_outside_every_phase_are_noted() {
        let mut recorder = Recorder::new(vec![phase("p", 0, 10)], Nanos::from_millis(35));
        let latency = Nanos::from_micros(100);
        recorder.request_done(Op::Read, 4096, latency, Nanos::from_secs(1));
        assert!(recorder.notes().is_empty());
        recorder.request_done(Op::Read, 4096, latency, Nanos::from_secs(10));
        recorder.request_done(Op::Write, 4096, latency, Nanos::from_secs(11));
        let notes = recorder.notes();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("2 request(s) (1 read, 1 write)"),
            "{notes:?}"
        );
        assert_eq!(recorder.phase_reports().last().unwrap().all.ops, 1);
    }

    #[test]
    fn a_small_rate_keeps_its_digits_and_a_large_one_its_decimals() {
        assert_eq!(round_rate(17.126, 2), 17.13);
        assert_eq!(round_rate(0.41234, 1), 0.412);
        assert_eq!(round_rate(0.00096123, 2), 0.000961);
        assert_eq!(round_rate(0.0, 1), 0.0);
        assert_eq!(figure(17.126, 1), "17.1");
        assert_eq!(figure(1234.4, 0), "1234");
        assert_eq!(figure(0.41, 0), "0.41");
        assert_eq!(figure(0.00096, 1), "0.00096");
        assert_eq!(figure(0.0, 0), "0");
        // 0.5 rounds to even: "0" is what the plain format would print.
        assert_eq!(figure(0.5, 0), "0.50");
        assert_eq!(figure(0.000000071, 1), "7.1e-8");
    }
}
