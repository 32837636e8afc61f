//! Benchmark: how fast the simulator runs end to end.
//!
//! Each case is a whole `iosteer sim` run (scheduler, drive and recorder
//! together) on a drive aged once per case; only the run is timed, aging is
//! reported apart. Three workloads:
//!
//! - `4k-mix`: three fio jobs of 4 KiB random I/O on enterprise-nvme for 10 s
//!   of simulated time: writes at queue depths 16 and 2 (MQSim's default
//!   workload's two flows) and reads at queue depth 8. Small requests: the
//!   cost per request is the loop's, the scheduler's and the recorder's.
//! - `fill-128k`: the default scenario (`fill-while-serving` on
//!   consumer-sata: 128 KiB random reads, a 128 KiB sequential fill with
//!   trims), 120 s simulated.
//! - `large-trace`: a trace of large requests on enterprise-nvme, 1 to 109
//!   pages of 16 KiB each (55 on average), 70% reads, random page-aligned
//!   offsets, arriving every millisecond for 20 s (about 0.9 GB/s offered).
//!   The traces under `traces/` hold requests of 5-15 KiB, so this one is
//!   generated (deterministic, from a fixed seed): the cost per NAND page is
//!   the drive model's.
//!
//! Figures: requests and NAND page operations (host page reads and
//! programs, GC page moves counted as a read and a program, block erases)
//! per second of wall time and per second of CPU time (user + system of the
//! process over the run: on a shared machine wall time also counts the time
//! other processes had the core), each the median of the runs; the peak
//! resident set size of the process once every case has run.

use std::time::Instant;

use iosteer_device::{DeviceConfig, SplitMix64};
use iosteer_sched::{Nanos, Op};
use iosteer_sim::workload_file::{JOB_DRAIN, TRACE_DRAIN};
use iosteer_sim::{scenario, SimError, Simulation};
use iosteer_workload::fio;
use iosteer_workload::round;
use iosteer_workload::workload::{Job, JobKind, TraceRecord};
use serde::Serialize;

use super::{median, BenchError};
use crate::device::nand_page_ops;

/// The scheduler of every case: the cheapest, so the figures are the
/// simulator's own.
pub const SCHEDULER: &str = "fifo";

/// The cases, by name, with what they run.
pub const CASES: &[(&str, &str)] = &[
    (
        "4k-mix",
        "4 KiB random writes at queue depths 16 and 2, random reads at 8, enterprise-nvme, 10 s",
    ),
    (
        "fill-128k",
        "the default scenario: 128 KiB reads, a 128 KiB fill with trims, consumer-sata, 120 s",
    ),
    (
        "large-trace",
        "a trace of 1-109 page requests (55 on average), 70% reads, enterprise-nvme, 20 s",
    ),
];

/// The fio job file of `4k-mix`: a queue (libaio; fio caps its default,
/// psync, at one request), and offsets drawn with replacement
/// (`norandommap`), the workload the bench has timed since 2026-11-24 (fio's
/// random map costs about a fifth more CPU a request here).
const MIX_4K: &str = "\
[global]
ioengine=libaio
norandommap
bs=4k
runtime=10s
time_based

[write-qd16]
rw=randwrite
iodepth=16

[write-qd2]
rw=randwrite
iodepth=2

[read-qd8]
rw=randread
iodepth=8
";

/// `large-trace`: one request a millisecond for 20 s.
const TRACE_REQUESTS: u64 = 20_000;
const TRACE_INTERVAL: Nanos = Nanos::from_millis(1);
/// Pages per request: uniform in 1..=109.
const TRACE_MAX_PAGES: u64 = 109;

#[derive(Debug, Serialize)]
pub struct SimBenchCase {
    pub name: String,
    pub workload: String,
    pub device: String,
    pub scheduler: String,
    /// Wall seconds to age the drive (once per case, not in the figures).
    pub aging_s: f64,
    pub simulated_s: f64,
    /// Requests the run issued and NAND page operations it simulated.
    pub requests: u64,
    pub nand_page_ops: u64,
    /// Medians over the runs.
    pub requests_per_s: f64,
    pub requests_per_cpu_s: f64,
    pub nand_page_ops_per_s: f64,
    pub nand_page_ops_per_cpu_s: f64,
    /// Each run's wall and CPU seconds.
    pub wall_s: Vec<f64>,
    pub cpu_s: Vec<f64>,
}

#[derive(Debug, Serialize)]
pub struct SimBench {
    pub cases: Vec<SimBenchCase>,
    /// Peak resident set size of the process after every case ran (Linux;
    /// `null` elsewhere), aging included.
    pub peak_rss_mib: Option<f64>,
}

/// Runs the cases named in `names` (every case when empty) `repeat` times.
pub fn bench_sim(names: &[String], repeat: usize) -> Result<SimBench, BenchError> {
    let names: Vec<&str> = if names.is_empty() {
        CASES.iter().map(|(name, _)| *name).collect()
    } else {
        names.iter().map(String::as_str).collect()
    };
    let sims = names
        .iter()
        .map(|name| simulation(name).map(|sim| (*name, sim)))
        .collect::<Result<Vec<_>, _>>()?;
    let cases = sims
        .into_iter()
        .map(|(name, sim)| measure(name, &sim, repeat.max(1)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SimBench {
        cases,
        peak_rss_mib: peak_rss_mib(),
    })
}

/// The simulation of case `name`.
pub fn simulation(name: &str) -> Result<Simulation, BenchError> {
    simulation_on(name, &|_| {})
}

/// The simulation of case `name` on its preset as `adjust` changes it.
fn simulation_on(name: &str, adjust: &dyn Fn(&mut DeviceConfig)) -> Result<Simulation, BenchError> {
    let preset = |name| {
        let mut device = DeviceConfig::preset(name).expect("a preset");
        adjust(&mut device);
        device
    };
    match name {
        "4k-mix" => {
            let device = preset("enterprise-nvme");
            let parsed = fio::parse_file(MIX_4K, "4k-mix", device.logical_bytes())
                .expect("the built-in job file parses");
            Ok(Simulation::of_job_file(device, parsed.jobs, 1, JOB_DRAIN))
        }
        "fill-128k" => Ok(
            scenario::scenario("fill-while-serving", preset("consumer-sata"), 1)
                .expect("a built-in scenario"),
        ),
        "large-trace" => {
            let device = preset("enterprise-nvme");
            let job = Job {
                name: "large-trace".into(),
                kind: JobKind::Trace(
                    large_trace(device.logical_bytes(), u64::from(device.geometry.page_size))
                        .into(),
                ),
                start: Nanos::ZERO,
                stop: None,
                shape: Default::default(),
            };
            Ok(Simulation::of_jobs(
                device,
                vec![job],
                "trace",
                1,
                TRACE_DRAIN,
            ))
        }
        other => Err(BenchError::UnknownCase {
            name: other.to_string(),
            cases: CASES
                .iter()
                .map(|(name, _)| *name)
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// `large-trace`'s records on a drive of `capacity` bytes and `page`-byte
/// pages.
fn large_trace(capacity: u64, page: u64) -> Vec<TraceRecord> {
    let mut rng = SplitMix64(0x1A26_E7AC);
    let pages = capacity / page;
    (0..TRACE_REQUESTS)
        .map(|i| {
            let len = 1 + rng.next_u64() % TRACE_MAX_PAGES;
            let first = rng.next_u64() % (pages - len + 1);
            TraceRecord {
                at: Nanos(i * TRACE_INTERVAL.0),
                op: if rng.next_u64() % 10 < 7 {
                    Op::Read
                } else {
                    Op::Write
                },
                offset: first * page,
                len: len * page,
                fua: false,
            }
        })
        .collect()
}

fn sim_error(e: SimError) -> BenchError {
    BenchError::Simulation(e.to_string())
}

/// Ages `sim`'s drive once, then runs it `repeat` times.
fn measure(name: &str, sim: &Simulation, repeat: usize) -> Result<SimBenchCase, BenchError> {
    sim.validate().map_err(sim_error)?;
    let started = Instant::now();
    let aged = sim.aged_device().map_err(sim_error)?;
    let aging_s = started.elapsed().as_secs_f64();
    let (mut wall_s, mut cpu_s) = (Vec::new(), Vec::new());
    let mut counts = (0, 0, 0.0);
    for _ in 0..repeat {
        let cpu_before = cpu_seconds();
        let started = Instant::now();
        let (report, stats) = sim
            .run_with_stats(SCHEDULER, &aged, &mut |_, _| true)
            .map_err(sim_error)?;
        wall_s.push(started.elapsed().as_secs_f64());
        cpu_s.push(cpu_seconds() - cpu_before);
        counts = (report.requests, nand_page_ops(&stats), simulated_s(&report));
    }
    let (requests, nand_page_ops, simulated_s) = counts;
    let rate = |count: u64, seconds: &[f64]| round(count as f64 / median(seconds).max(1e-9), 0);
    Ok(SimBenchCase {
        name: name.to_string(),
        workload: CASES
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(String::new(), |(_, what)| what.to_string()),
        device: sim.device.name.clone(),
        scheduler: SCHEDULER.to_string(),
        aging_s: round(aging_s, 3),
        simulated_s: round(simulated_s, 3),
        requests,
        nand_page_ops,
        requests_per_s: rate(requests, &wall_s),
        requests_per_cpu_s: rate(requests, &cpu_s),
        nand_page_ops_per_s: rate(nand_page_ops, &wall_s),
        nand_page_ops_per_cpu_s: rate(nand_page_ops, &cpu_s),
        wall_s: wall_s.iter().map(|s| round(*s, 4)).collect(),
        cpu_s: cpu_s.iter().map(|s| round(*s, 4)).collect(),
    })
}

/// Simulated seconds of a run: the end of its last phase.
fn simulated_s(report: &iosteer_workload::report::RunReport) -> f64 {
    report.phases.iter().map(|p| p.end_s).fold(0.0, f64::max)
}

/// The process's user + system CPU seconds so far (0 where unknown).
fn cpu_seconds() -> f64 {
    iosteer_engine::runner::cpu_times().map_or(0.0, |(user, system)| user + system)
}

/// Peak resident set size (`VmHWM` of /proc/self/status), in MiB.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(round(kib / 1024.0, 1))
}

/// The cases as a table.
pub fn table(bench: &SimBench) -> String {
    let mut out = format!(
        "{:<12} {:>9} {:>10} {:>12} {:>14} {:>14} {:>16} {:>8}\n",
        "case",
        "requests",
        "NAND ops",
        "requests/s",
        "requests/cpu-s",
        "NAND ops/s",
        "NAND ops/cpu-s",
        "aging s"
    );
    for c in &bench.cases {
        out.push_str(&format!(
            "{:<12} {:>9} {:>10} {:>12.0} {:>14.0} {:>14.0} {:>16.0} {:>8.2}\n",
            c.name,
            c.requests,
            c.nand_page_ops,
            c.requests_per_s,
            c.requests_per_cpu_s,
            c.nand_page_ops_per_s,
            c.nand_page_ops_per_cpu_s,
            c.aging_s
        ));
    }
    let runs = bench.cases.first().map_or(0, |c| c.wall_s.len());
    let peak = bench
        .peak_rss_mib
        .map_or("unknown".to_string(), |m| format!("{m} MiB"));
    out.push_str(&format!(
        "(medians of {runs} runs; scheduler {SCHEDULER}; aging not timed in the rates; peak RSS {peak})\n"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_large_trace_averages_55_pages_of_which_70_percent_reads() {
        let page = 16384;
        let records = large_trace(64 << 30, page);
        let mean_pages = records.iter().map(|r| r.len / page).sum::<u64>() as f64 / 20_000.0;
        assert!((mean_pages - 55.0).abs() < 1.0, "{mean_pages}");
        let reads = records.iter().filter(|r| r.op == Op::Read).count() as f64 / 200.0;
        assert!((reads - 70.0).abs() < 1.5, "{reads}");
        assert!(records
            .iter()
            .all(|r| r.offset % page == 0 && r.offset + r.len <= 64 << 30));
    }

    #[test]
    fn every_case_builds_and_an_unknown_one_names_the_cases() {
        for (name, _) in CASES {
            simulation(name).unwrap().validate().unwrap();
        }
        let e = simulation("4k").unwrap_err().to_string();
        assert!(e.contains("4k-mix, fill-128k, large-trace"), "{e}");
    }

    #[test]
    fn a_run_counts_its_requests_and_nand_operations() {
        // A small drive and a short run keep the test fast.
        let mut sim = simulation_on("4k-mix", &|d| d.geometry.blocks_per_plane = 48).unwrap();
        sim.workload
            .jobs
            .iter_mut()
            .for_each(|j| j.stop = Some(Nanos::from_millis(20)));
        let case = measure("4k-mix", &sim, 2).unwrap();
        assert!(case.requests > 100, "{case:?}");
        // Reads of written pages and programs: at least one page each.
        assert!(case.nand_page_ops >= case.requests / 2, "{case:?}");
        assert_eq!(case.wall_s.len(), 2);
        assert!(table(&SimBench {
            cases: vec![case],
            peak_rss_mib: None
        })
        .contains("4k-mix"));
    }
}
