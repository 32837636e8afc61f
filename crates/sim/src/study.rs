//! Studies: several simulations side by side, each run with its own workload,
//! drive and host policy, for questions about the drive itself.
//!
//! - `pgc-workloads`: seed 002's four workloads (Lee et al., ISPASS 2011),
//!   synthesised from the paper's table of average request size, read share
//!   and arrival rate, on the `diskSim-slc` drive, with non-preemptive GC
//!   (NPGC) against semi-preemptive GC (PGC). Runs are labelled
//!   `<workload>/npgc` and `<workload>/pgc`; [`gc_table`] prints mean and
//!   standard deviation of response time and the improvements beside the
//!   paper's.
//! - `hints`: seed 004's lifetime hints. A mixed-lifetime write workload (an
//!   LSM store's short-lived log beside long-lived table files), a
//!   single-lifetime one (the table files alone) and a skewed one (hot and
//!   cold pages at random), each with and without stream separation;
//!   [`hints_table`] prints the write amplification of the steady phase.

use std::fmt::Write as _;
use std::time::Instant;

use iosteer_device::{Device, DeviceConfig, FtlError, GcMode, Precondition};
use iosteer_sched::{LifetimeHint, Nanos};

use crate::run::{SimError, Simulation};
use iosteer_workload::report::{Phase, RunReport};
use iosteer_workload::workload::{Arrival, Job, JobKind, Synthetic};

pub const STUDIES: &[(&str, &str)] = &[
    (
        "pgc-workloads",
        "seed 002's workloads on the diskSim-slc drive, non-preemptive against semi-preemptive GC",
    ),
    (
        "pgc-sweep",
        "seed 002's synthetic sweeps (size, inter-arrival, sequential and read share), NPGC against PGC",
    ),
    (
        "hints",
        "lifetime hints: mixed- and single-lifetime writes with and without stream separation",
    ),
];

/// The studies' names, comma-separated.
pub fn study_names() -> String {
    let names: Vec<_> = STUDIES.iter().map(|(n, _)| *n).collect();
    names.join(", ")
}

/// One run of a study.
#[derive(Clone, Debug)]
pub struct Case {
    /// The run's name in the report (its `scheduler` field).
    pub label: String,
    pub sim: Simulation,
    /// Host scheduler spec.
    pub spec: String,
}

/// A built-in study, or `None` for an unknown name. `device` replaces the
/// study's own drive; `spec` is the host scheduler of every run.
pub fn study(name: &str, device: Option<DeviceConfig>, spec: &str, seed: u64) -> Option<Vec<Case>> {
    match name {
        "pgc-workloads" => Some(pgc_workloads(device, spec, seed)),
        "pgc-sweep" => Some(pgc_sweep(device, spec, seed)),
        "hints" => Some(hints(device, spec, seed)),
        _ => None,
    }
}

/// Runs every case; cases whose drives differ only in GC mode share one
/// aging. Returns the reports and the wall time of the runs (aging
/// excluded). `progress` is as for [`crate::plan::run_all`].
pub fn run_cases(
    cases: &[Case],
    progress: &mut dyn FnMut(usize, Nanos, Nanos) -> bool,
) -> Result<(Vec<RunReport>, f64), SimError> {
    let mut aged: Vec<(DeviceConfig, Precondition, Device)> = Vec::new();
    let mut wall = 0.0;
    let mut reports: Vec<RunReport> = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        case.sim.validate()?;
        let mut key = case.sim.device.clone();
        key.gc.mode = GcMode::Blocking;
        let found = aged
            .iter()
            .position(|(config, plan, _)| *config == key && *plan == case.sim.precondition);
        let index = match found {
            Some(index) => index,
            None => {
                let mut base = case.sim.clone();
                base.device = key.clone();
                let aging = base.aged_device_until(&mut || progress(i, Nanos::ZERO, Nanos::ZERO));
                let device = match (aging, reports.last_mut()) {
                    (Ok(device), _) => device,
                    // Stopped while a later case's drive aged: the cases run
                    // so far are kept, and the last says why the rest are not.
                    (Err(SimError::Aging(FtlError::Stopped)), Some(last)) => {
                        last.notes.push(format!(
                            "stopped while the drive of case {} of {} aged: the cases after this one did not run",
                            i + 1,
                            cases.len()
                        ));
                        break;
                    }
                    (Err(e), _) => return Err(e),
                };
                aged.push((key, case.sim.precondition, device));
                aged.len() - 1
            }
        };
        let mut device = aged[index].2.clone();
        device.set_gc_mode(case.sim.device.gc.mode)?;
        let started = Instant::now();
        let mut report = case
            .sim
            .run(&case.spec, &device, &mut |now, end| progress(i, now, end))?;
        wall += started.elapsed().as_secs_f64();
        report.scheduler = case.label.clone();
        let stop = report.interrupted;
        reports.push(report);
        if stop {
            break;
        }
    }
    Ok((reports, wall))
}

/// One of seed 002's workloads, from its table.
struct PgcWorkload {
    name: &'static str,
    avg_kb: f64,
    read_percent: u32,
    iops: f64,
    /// The paper's improvements of PGC over NPGC, in percent: variance and
    /// mean of response time (the slides give them for two workloads).
    paper: Option<(f64, f64)>,
}

const PGC_WORKLOADS: &[PgcWorkload] = &[
    PgcWorkload {
        name: "financial",
        avg_kb: 7.09,
        read_percent: 19,
        iops: 47.19,
        paper: Some((49.8, 6.5)),
    },
    PgcWorkload {
        name: "cello",
        avg_kb: 7.06,
        read_percent: 20,
        iops: 74.24,
        paper: Some((83.3, 66.6)),
    },
    PgcWorkload {
        name: "tpc-h",
        avg_kb: 31.62,
        read_percent: 92,
        iops: 172.73,
        paper: None,
    },
    PgcWorkload {
        name: "openmail",
        avg_kb: 9.49,
        read_percent: 63,
        iops: 846.62,
        paper: None,
    },
];

/// Simulated length of each `pgc-workloads` run.
const PGC_RUN: Nanos = Nanos::from_secs(300);

/// Block sizes from one page up, uniform in 512-byte steps, whose mean is
/// `avg_kb` KiB (the traces' sizes are in 512-byte sectors).
fn sizes_around(avg_kb: f64, page: u64) -> (u64, u64, u64) {
    let align = 512;
    let mean = avg_kb * 1024.0;
    let max = ((2.0 * mean - page as f64) / align as f64).round() as u64 * align;
    (page, max.max(page), align)
}

fn pgc_workloads(device: Option<DeviceConfig>, spec: &str, seed: u64) -> Vec<Case> {
    let device = device.unwrap_or_else(iosteer_device::config::disksim_slc);
    let capacity = device.logical_bytes();
    let page = u64::from(device.geometry.page_size);
    let mut cases = Vec::new();
    for w in PGC_WORKLOADS {
        let (block_min, block_max, align) = sizes_around(w.avg_kb, page);
        let job = Job {
            name: w.name.into(),
            kind: JobKind::Synthetic(Synthetic {
                read_percent: w.read_percent,
                block_min,
                block_max,
                align,
                ..Synthetic::reads(
                    block_max,
                    0,
                    capacity / page * page - block_max,
                    Arrival::open(Some(w.iops), None, true, 100_000),
                )
            }),
            start: Nanos::ZERO,
            stop: Some(PGC_RUN),
            shape: Default::default(),
        };
        let sim = Simulation::of_jobs(device.clone(), vec![job], "run", seed, Nanos::from_secs(5));
        cases.extend(gc_pair(w.name, &sim, spec));
    }
    cases
}

fn improvement(before: f64, after: f64) -> f64 {
    if before <= 0.0 {
        0.0
    } else {
        (1.0 - after / before) * 100.0
    }
}

/// Each spec on `sim` twice, with NPGC and with PGC, labelled
/// `<spec>/npgc` and `<spec>/pgc` (`--compare-gc` of `iosteer sim`).
pub fn gc_cases(sim: &Simulation, specs: &[String]) -> Vec<Case> {
    specs
        .iter()
        .flat_map(|spec| gc_pair(spec, sim, spec))
        .collect()
}

/// `sim` with NPGC and with PGC under `spec`, labelled `<name>/npgc` and
/// `<name>/pgc` (the labels [`gc_table`] pairs).
fn gc_pair(name: &str, sim: &Simulation, spec: &str) -> [Case; 2] {
    [(GcMode::Blocking, "npgc"), (GcMode::SemiPreemptive, "pgc")].map(|(mode, tag)| {
        let mut sim = sim.clone();
        sim.device.gc.mode = mode;
        Case {
            label: format!("{name}/{tag}"),
            sim,
            spec: spec.to_string(),
        }
    })
}

/// NPGC against PGC for every pair of runs labelled `<name>/npgc` and
/// `<name>/pgc`: mean and standard deviation of the response time of all
/// requests, the improvements, and seed 002's where it gives them.
pub fn gc_table(runs: &[RunReport]) -> String {
    let mut out = String::from(
        "PGC against NPGC, response time of all requests (ms)\n  run         NPGC mean   NPGC sd   PGC mean    PGC sd   mean better  sd better  var better  paper var / mean\n",
    );
    let all = |label: &str| {
        runs.iter()
            .find(|r| r.scheduler == label)
            .and_then(|r| r.phase("all"))
            .map(|p| p.all.lat_us.clone())
    };
    for run in runs {
        let Some(name) = run.scheduler.strip_suffix("/npgc") else {
            continue;
        };
        let (Some(npgc), Some(pgc)) = (all(&run.scheduler), all(&format!("{name}/pgc"))) else {
            continue;
        };
        let var = improvement(npgc.stddev * npgc.stddev, pgc.stddev * pgc.stddev);
        let paper = PGC_WORKLOADS
            .iter()
            .find(|w| w.name == name)
            .and_then(|w| w.paper)
            .map_or("-".to_string(), |(v, m)| format!("{v:.1}% / {m:.1}%"));
        let _ = writeln!(
            out,
            "  {:<10} {:>9.3} {:>9.3} {:>10.3} {:>9.3} {:>11.1}% {:>9.1}% {:>10.1}%  {}",
            name,
            npgc.mean / 1e3,
            npgc.stddev / 1e3,
            pgc.mean / 1e3,
            pgc.stddev / 1e3,
            improvement(npgc.mean, pgc.mean),
            improvement(npgc.stddev, pgc.stddev),
            var,
            paper
        );
    }
    out
}

/// Simulated length of each `pgc-sweep` run.
const SWEEP_RUN: Nanos = Nanos::from_secs(60);

/// One point of a sweep: its parameters.
#[derive(Copy, Clone, Debug)]
struct SweepPoint {
    size_kib: u64,
    gap_us: u64,
    sequential_percent: u32,
    read_percent: u32,
}

/// The sweeps' base point: 8 KiB, 5 ms apart (Poisson), all random, 40%
/// reads (ours: the slides do not give theirs), light enough that the
/// drive keeps up at every point but the heaviest.
const SWEEP_BASE: SweepPoint = SweepPoint {
    size_kib: 8,
    gap_us: 5000,
    sequential_percent: 0,
    read_percent: 40,
};

/// The four sweeps, each varying one parameter of the base: (name, points).
fn sweep_points() -> Vec<(&'static str, Vec<(String, SweepPoint)>)> {
    let base = SWEEP_BASE;
    vec![
        (
            "size",
            [8, 16, 32, 64]
                .map(|kib| {
                    (
                        format!("{kib}k"),
                        SweepPoint {
                            size_kib: kib,
                            ..base
                        },
                    )
                })
                .to_vec(),
        ),
        (
            "gap",
            [10_000, 5000, 2000, 1000, 500, 200]
                .map(|us| {
                    (
                        format!("{}ms", us as f64 / 1000.0),
                        SweepPoint { gap_us: us, ..base },
                    )
                })
                .to_vec(),
        ),
        (
            "seq",
            [0, 25, 50, 75, 100]
                .map(|p| {
                    (
                        format!("{p}%"),
                        SweepPoint {
                            sequential_percent: p,
                            ..base
                        },
                    )
                })
                .to_vec(),
        ),
        (
            "reads",
            [0, 20, 40, 60, 80]
                .map(|p| {
                    (
                        format!("{p}%"),
                        SweepPoint {
                            read_percent: p,
                            ..base
                        },
                    )
                })
                .to_vec(),
        ),
    ]
}

/// The jobs of one sweep point: a random job and a sequential one sharing
/// the arrival rate by the sequential share.
fn sweep_jobs(point: SweepPoint, capacity: u64) -> Vec<Job> {
    let size = point.size_kib << 10;
    let iops = 1e6 / point.gap_us as f64;
    let seq_share = f64::from(point.sequential_percent) / 100.0;
    let job = |name: &str, sequential: bool, iops: f64| Job {
        name: name.into(),
        kind: JobKind::Synthetic(Synthetic {
            read_percent: point.read_percent,
            sequential,
            ..Synthetic::reads(
                size,
                0,
                capacity / size * size,
                Arrival::open(Some(iops), None, true, 100_000),
            )
        }),
        start: Nanos::ZERO,
        stop: Some(SWEEP_RUN),
        shape: Default::default(),
    };
    let mut jobs = Vec::new();
    if seq_share < 1.0 {
        jobs.push(job("random", false, iops * (1.0 - seq_share)));
    }
    if seq_share > 0.0 {
        jobs.push(job("sequential", true, iops * seq_share));
    }
    jobs
}

fn pgc_sweep(device: Option<DeviceConfig>, spec: &str, seed: u64) -> Vec<Case> {
    let device = device.unwrap_or_else(iosteer_device::config::disksim_slc);
    let capacity = device.logical_bytes();
    let mut cases = Vec::new();
    for (sweep, points) in sweep_points() {
        for (value, point) in points {
            let sim = Simulation::of_jobs(
                device.clone(),
                sweep_jobs(point, capacity),
                "run",
                seed,
                Nanos::from_secs(5),
            );
            cases.extend(gc_pair(&format!("{sweep}={value}"), &sim, spec));
        }
    }
    cases
}

/// SVG charts of the `pgc-sweep` runs in `dir`, one per sweep: mean and
/// standard deviation of response time under NPGC and PGC at each point.
pub fn write_sweep_charts(
    dir: &std::path::Path,
    runs: &[RunReport],
) -> Result<Vec<std::path::PathBuf>, iosteer_workload::chart::OutputError> {
    let mut written = Vec::new();
    for (sweep, points) in sweep_points() {
        let mut lines: Vec<(String, Vec<f64>)> = ["NPGC sd", "PGC sd", "NPGC mean", "PGC mean"]
            .iter()
            .map(|n| (n.to_string(), Vec::new()))
            .collect();
        let mut categories = Vec::new();
        for (value, _) in &points {
            let get = |tag: &str| {
                runs.iter()
                    .find(|r| r.scheduler == format!("{sweep}={value}/{tag}"))
                    .and_then(|r| r.phase("all"))
                    .map(|p| p.all.lat_us.clone())
            };
            let (Some(npgc), Some(pgc)) = (get("npgc"), get("pgc")) else {
                continue;
            };
            categories.push(value.clone());
            for (line, v) in lines
                .iter_mut()
                .zip([npgc.stddev, pgc.stddev, npgc.mean, pgc.mean])
            {
                line.1.push(v / 1e3);
            }
        }
        if categories.is_empty() {
            continue;
        }
        let path = dir.join(format!("pgc-sweep-{sweep}.svg"));
        iosteer_workload::chart::category_chart(
            &path,
            &format!("response time by {sweep}: NPGC against PGC"),
            &categories,
            "ms",
            &lines,
        )?;
        written.push(path);
    }
    Ok(written)
}

/// Length of the `hints` runs, and when their steady phase starts.
const HINTS_RUN: Nanos = Nanos::from_secs(300);
const HINTS_WARMUP: Nanos = Nanos::from_secs(100);

/// A small SLC drive (128 MiB of NAND) so the workload rewrites even its
/// cold data within the warm-up, in seconds of wall time.
fn hints_drive() -> DeviceConfig {
    let mut drive = iosteer_device::config::disksim_slc();
    drive.name = "diskSim-slc-128m".into();
    drive.geometry.blocks_per_plane = 64;
    drive
}

/// A writer of 4 KiB pages at random offsets.
fn random_writer(name: &str, offset: u64, size: u64, iops: f64, hint: LifetimeHint) -> Job {
    writer(name, offset, size, Some(iops), None, false, 4096, hint)
}

/// A writer of `block`-byte writes going round its region in order, as a
/// log or a store of files does; with `trim_ahead`, each stretch is deleted
/// (trimmed) just before it is written again.
fn sequential_writer(
    name: &str,
    offset: u64,
    size: u64,
    bytes_per_s: f64,
    block: u64,
    trim_ahead: Option<u64>,
    hint: LifetimeHint,
) -> Job {
    let mut job = writer(
        name,
        offset,
        size,
        None,
        Some(bytes_per_s),
        true,
        block,
        hint,
    );
    if let JobKind::Synthetic(s) = &mut job.kind {
        s.trim_ahead = trim_ahead;
    }
    job
}

#[allow(clippy::too_many_arguments)]
fn writer(
    name: &str,
    offset: u64,
    size: u64,
    iops: Option<f64>,
    bytes_per_s: Option<f64>,
    sequential: bool,
    block: u64,
    hint: LifetimeHint,
) -> Job {
    Job {
        name: name.into(),
        kind: JobKind::Synthetic(Synthetic {
            read_percent: 0,
            sequential,
            hint,
            ..Synthetic::reads(
                block,
                offset,
                size / block * block,
                Arrival::open(iops, bytes_per_s, true, 64),
            )
        }),
        start: Nanos::ZERO,
        stop: Some(HINTS_RUN),
        shape: Default::default(),
    }
}

/// The `hints` workloads on a drive of `capacity` bytes.
fn hint_workloads(capacity: u64) -> Vec<(&'static str, Vec<Job>)> {
    let mib = 1 << 20;
    let log = capacity / 50 / mib * mib;
    let files = capacity * 85 / 100 / mib * mib;
    // An LSM store (seed 004's RocksDB): a write-ahead log of 16 KiB writes
    // going round 2% of the drive, rewritten within seconds (short), beside
    // 128 KiB writes of table files that live until the store comes round
    // to delete them (long): 4.8 + 7.2 MB/s.
    let wal = || sequential_writer("wal", 0, log, 4.8e6, 16 << 10, None, LifetimeHint::Short);
    let tables = |hint| {
        let rate = 7.2e6;
        sequential_writer("tables", log, files, rate, 128 << 10, Some(4 * mib), hint)
    };
    let hot = capacity / 10 / 4096 * 4096;
    vec![
        ("mixed", vec![wal(), tables(LifetimeHint::Long)]),
        // The table files alone: one lifetime, nothing to separate.
        ("single", vec![tables(LifetimeHint::Long)]),
        // Hot and cold pages at random (80% of writes to a tenth of the
        // space): lifetimes differ by degree, not by kind.
        (
            "skewed",
            vec![
                random_writer("hot", 0, hot, 2400.0, LifetimeHint::Short),
                random_writer("cold", hot, capacity - hot, 600.0, LifetimeHint::Extreme),
            ],
        ),
    ]
}

fn hints(device: Option<DeviceConfig>, spec: &str, seed: u64) -> Vec<Case> {
    let device = device.unwrap_or_else(hints_drive);
    let capacity = device.logical_bytes() / 4096 * 4096;
    let mut cases = Vec::new();
    for (workload, jobs) in hint_workloads(capacity) {
        for (streams, tag) in [(false, "one-stream"), (true, "hint-streams")] {
            let mut drive = device.clone();
            drive.gc.hint_streams = streams;
            let mut sim = Simulation::of_jobs(drive, jobs.clone(), "all-time", seed, Nanos::ZERO);
            sim.workload.phases = vec![
                Phase {
                    name: "warmup".into(),
                    start: Nanos::ZERO,
                    end: HINTS_WARMUP,
                },
                Phase {
                    name: "steady".into(),
                    start: HINTS_WARMUP,
                    end: HINTS_RUN,
                },
            ];
            cases.push(Case {
                label: format!("{workload}/{tag}"),
                sim,
                spec: spec.to_string(),
            });
        }
    }
    cases
}

/// The `hints` comparison: write amplification in the steady phase.
pub fn hints_table(runs: &[RunReport]) -> String {
    let mut out = String::from(
        "Write amplification in the steady phase\n  workload   one stream   hint streams   change\n",
    );
    for workload in ["mixed", "single", "skewed"] {
        let waf = |tag: &str| {
            runs.iter()
                .find(|r| r.scheduler == format!("{workload}/{tag}"))
                .and_then(|r| r.phase("steady"))
                .and_then(|p| p.waf)
        };
        let (Some(one), Some(split)) = (waf("one-stream"), waf("hint-streams")) else {
            continue;
        };
        let _ = writeln!(
            out,
            "  {:<9} {:>11.3} {:>14.3} {:>+8.1}%",
            workload,
            one,
            split,
            -improvement(one, split)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cases: Vec<Case>) -> Vec<RunReport> {
        run_cases(&cases, &mut |_, _, _| true).unwrap().0
    }

    fn all_latency(runs: &[RunReport], label: &str) -> iosteer_workload::report::LatencyReport {
        let run = runs.iter().find(|r| r.scheduler == label).unwrap();
        run.phase("all").unwrap().all.lat_us.clone()
    }

    #[test]
    fn pgc_lowers_the_spread_of_response_time_on_financial_and_cello() {
        let cases: Vec<Case> = pgc_workloads(None, "fifo", 1)
            .into_iter()
            .filter(|c| c.label.starts_with("financial") || c.label.starts_with("cello"))
            .collect();
        assert_eq!(cases.len(), 4);
        let runs = run(cases);
        for workload in ["financial", "cello"] {
            let npgc = all_latency(&runs, &format!("{workload}/npgc"));
            let pgc = all_latency(&runs, &format!("{workload}/pgc"));
            assert!(
                pgc.stddev <= 0.7 * npgc.stddev,
                "{workload}: sd {} -> {}",
                npgc.stddev,
                pgc.stddev
            );
            assert!(
                pgc.mean <= npgc.mean,
                "{workload}: mean {} -> {}",
                npgc.mean,
                pgc.mean
            );
        }
        let table = gc_table(&runs);
        assert!(
            table.contains("49.8%") && table.contains("83.3%"),
            "{table}"
        );
    }

    /// A stop asked while a later case's drive ages keeps the cases run
    /// before it, the last saying why the others did not run.
    #[test]
    fn a_stop_while_a_later_drive_ages_keeps_the_cases_run() {
        let cases: Vec<Case> = hints(None, "fifo", 1)
            .into_iter()
            .filter(|c| c.label.starts_with("single"))
            .collect();
        assert_eq!(cases.len(), 2);
        let (runs, _) = run_cases(&cases, &mut |case, _, end| case == 0 || end > Nanos::ZERO)
            .expect("the first case's report");
        assert_eq!(runs.len(), 1);
        let said = runs[0].notes.join("; ");
        assert!(
            said.contains("stopped while the drive of case 2 of 2 aged"),
            "{said}"
        );
    }

    #[test]
    fn stream_separation_helps_mixed_lifetimes_and_never_hurts_a_single_one() {
        let cases: Vec<Case> = hints(None, "fifo", 1)
            .into_iter()
            .filter(|c| !c.label.starts_with("skewed"))
            .collect();
        let runs = run(cases);
        let waf = |label: &str| {
            let run = runs.iter().find(|r| r.scheduler == label).unwrap();
            run.phase("steady").unwrap().waf.unwrap()
        };
        let (one, split) = (waf("mixed/one-stream"), waf("mixed/hint-streams"));
        assert!(split <= 0.8 * one, "mixed: {one} -> {split}");
        let (one, split) = (waf("single/one-stream"), waf("single/hint-streams"));
        assert!(split <= one, "single: {one} -> {split}");
    }
}
