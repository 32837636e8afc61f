//! Sweep: one workload across a grid of scheduler settings, the
//! paper's weeks-long search for a static write limit (30 MB/s on 20
//! machines) done in minutes.
//!
//! The workload ([`SweepWorkload`]) is a built-in scenario (phases `before`,
//! `fill`, `after`), a fio job file (phases named after the jobs running
//! together: `readers`, `readers+fill`, `readers.2`) or a trace (phase
//! `trace`, and any time window `START..END` given as the measured or
//! baseline phase, cut from the replay by completion time).
//!
//! Every grid point runs on its own copy of the same aged drive, in parallel
//! over the machine's cores (rayon); results are collected in grid order, so
//! the output is the same whatever the number of threads. For each point the
//! table gives the write throughput during the measured phase (the fill)
//! against the read latency of that phase (p99, p99.9) and its SLO
//! violations, and says whether it meets the read objective; the best point
//! is the one with the most write throughput among those that meet it.
//!
//! Grid syntax, `--vary "name:key=values,key=values,..."`:
//! - `key=a..b/s`: integers from a to b inclusive in steps of s;
//! - `key=x,y,z`: a list (an item without `=` continues the previous key);
//! - `key=x`: one value.
//!
//! The grid is every combination, the first key varying slowest. Objectives:
//! `p99<=2x` (relative to the baseline phase, `before` by default: the
//! lowest value of that phase over the sweep, the drive's own unloaded
//! latency, so that a policy that slows reads before the fill does not
//! loosen its own bound) or `p99<=5ms` (absolute); the metric is one of
//! mean, p50, p99, p99.9 (or p999) and max.
//!
//! Seeds: `--seed 1..5` (or `1,4,5`) runs every setting on every seed (its
//! own aged drive and arrivals each). A setting then meets the objective only
//! if it does on every seed, and the best one is the one with the most mean
//! write throughput among those: one number an operator can set on a fleet,
//! not one that happened to fit a single run. One seed's optimum can sit on
//! an edge (a fill that just fits the drive's free pool in the phase meets
//! the objective, a little more runs the pool out and does not), and where
//! that edge lies differs from seed to seed.

use std::path::Path;

use iosteer_device::DeviceConfig;
use iosteer_sched::{policy, Nanos};
use iosteer_sim::plan::aging_note;
use iosteer_sim::scenario::{scenario, UnknownScenario};
use iosteer_sim::workload_file::{self, TraceOptions, WorkloadFileError};
use iosteer_sim::{SimError, Simulation};
use iosteer_workload::chart::{
    best_ring, bound_line, frame, legend_upper_left, svg_file, Canvas, DrawResult, LogChart, BLUE,
    GREEN, RED,
};
use iosteer_workload::report::{round, PhaseReport, RunReport};
use iosteer_workload::workload::Job;
use plotters::prelude::*;
use rayon::prelude::*;
use serde::Serialize;
use thiserror::Error;

use crate::objective::{read_value, Bound, Objective};

/// Most grid points one sweep may run.
pub const MAX_POINTS: usize = 10_000;
/// Longest grid text accepted: a grid is typed by hand, and every point's
/// spec repeats its keys, so the specs of a grid are at most
/// [`MAX_POINTS`] times this long.
pub const MAX_GRID_BYTES: usize = 4096;
/// Most seeds one sweep may run each point on.
pub const MAX_SEEDS: usize = 100;

/// Most worker threads a sweep starts: more only adds stacks and
/// contention on a machine that has far fewer cores.
pub const MAX_THREADS: usize = 256;

/// What is wrong with a sweep: its grid, its seeds or its runs.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SweepError {
    #[error("{grid}: no policy name")]
    NoPolicy { grid: String },
    #[error("{grid}: `{item}` comes before any key=value")]
    ValueBeforeKey { grid: String, item: String },
    #[error(
        "`{key}={value}`: a range is start..end/step with integers, such as 10000..80000/10000"
    )]
    BadRange { key: String, value: String },
    #[error("`{key}={value}`: the range is reversed ({end} is below {start}); a range is start..end/step with start <= end, such as 10000..80000/10000")]
    ReversedRange {
        key: String,
        value: String,
        start: u64,
        end: u64,
    },
    #[error("`{key}={value}`: the step is zero; a range is start..end/step with a step of 1 or more, such as 10000..80000/10000")]
    ZeroStep { key: String, value: String },
    #[error("{text}: the range is reversed ({end} is below {start}); give A..B with A <= B, such as 1..5")]
    ReversedSeeds { text: String, start: u64, end: u64 },
    #[error("{threads}: expected 1 to {} threads", MAX_THREADS)]
    BadThreads { threads: usize },
    #[error("`{key}={value}`: more than {} values", MAX_POINTS)]
    TooManyValues { key: String, value: String },
    #[error("{grid}: more than {} points", MAX_POINTS)]
    GridTooLarge { grid: String },
    #[error("the grid is {bytes} bytes long; at most {} bytes", MAX_GRID_BYTES)]
    GridTooLong { bytes: usize },
    #[error("{grid}: the key `{key}` is given twice; list its values after one `{key}=`, such as {key}=1,2,3")]
    RepeatedKey { grid: String, key: String },
    #[error("{text}: expected a seed (4), a range (1..5) or a list (1,4,5)")]
    BadSeeds { text: String },
    #[error("{text}: at most {} seeds", MAX_SEEDS)]
    TooManySeeds { text: String },
    #[error("{text}: a seed is repeated")]
    RepeatedSeed { text: String },
    /// Two settings of the sweep with one spec: it would run twice and
    /// count twice.
    #[error("{spec}: the same setting twice; give each setting once")]
    RepeatedSpec { spec: String },
    #[error("no setting to sweep")]
    NoSettings,
    /// The phase judged (or a relative objective's baseline) served no read
    /// in any run: every setting would read as missing, with value 0.
    #[error("the {role} phase `{phase}` served no read in any run, so a read objective cannot use it; choose a phase with reads")]
    NoReads { phase: String, role: &'static str },
    /// No job of the workload can read: every setting's read figures would
    /// be missing. Found before anything runs ([`SweepError::NoReads`] is
    /// the same found after the runs, in the phase judged).
    #[error("no job of the workload reads (each writes or trims only), so a read objective has nothing to judge; give a workload with reads")]
    NoReadingJob,
    /// The drives a sweep holds at once (each seed's aged drive, and one
    /// per thread running on it) would not fit the memory free now.
    #[error(
        "{drives} copies of the drive at once (its aged drive for each of {seeds} seed(s), and one for each of {threads} thread(s)) need about {:.1} GiB, and {:.1} GiB of memory is free; use fewer seeds or threads (--threads), or a smaller drive",
        *.needed as f64 / f64::from(1 << 30),
        *.available as f64 / f64::from(1 << 30)
    )]
    Memory {
        drives: u64,
        seeds: usize,
        threads: usize,
        needed: u64,
        available: u64,
    },
    /// Stopped (Ctrl-C) before any setting had run on every seed.
    #[error("stopped before any setting had run on every seed: nothing to judge")]
    StoppedBeforeAnySetting,
    #[error("{points} grid points; at most {}", MAX_POINTS)]
    TooManyPoints { points: usize },
    #[error("{points} grid points{} on {seeds} seeds; at most {} runs", beside_static(*.static_limits), MAX_POINTS)]
    TooManyRuns {
        points: usize,
        /// A family sweep's static limits, run beside the grid on each drive.
        static_limits: usize,
        seeds: usize,
    },
    #[error("{spec}: {source}")]
    Scheduler {
        spec: String,
        source: iosteer_sched::ConfigError,
    },
    #[error(transparent)]
    UnknownScenario(#[from] UnknownScenario),
    #[error("the workload has no phase `{name}`; phases: {phases}")]
    NoPhase { name: String, phases: String },
    /// The user's job or trace file does not build.
    #[error(transparent)]
    WorkloadFile(#[from] WorkloadFileError),
    /// A baseline or measured phase written as a time window that is not one
    /// (`role` says which of the two).
    #[error("{role} {source}")]
    Window {
        role: PhaseRole,
        source: WorkloadFileError,
    },
    #[error("{role} `{window}`: time windows cut a trace; a {workload} names its phases")]
    WindowNeedsTrace {
        role: PhaseRole,
        window: String,
        workload: &'static str,
    },
    #[error("sweeping {workload} needs the measured and the baseline phase named: {how}")]
    PhasesNeeded { workload: String, how: &'static str },
    #[error("thread pool: {0}")]
    Threads(#[from] rayon::ThreadPoolBuildError),
    #[error(transparent)]
    Sim(#[from] SimError),
}

/// " and 7 static limits", or nothing.
fn beside_static(limits: usize) -> String {
    match limits {
        0 => String::new(),
        n => format!(" and {n} static limits"),
    }
}

/// Which of a sweep's two phases an error is about.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PhaseRole {
    Baseline,
    Measured,
}

impl std::fmt::Display for PhaseRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PhaseRole::Baseline => "baseline phase",
            PhaseRole::Measured => "measured phase",
        })
    }
}

/// One grid point's figures.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub spec: String,
    pub write_mbps: f64,
    pub read_mbps: f64,
    pub read_p99_ms: f64,
    pub read_p999_ms: f64,
    pub read_slo_violations: u64,
    pub write_p99_ms: f64,
    pub write_max_ms: f64,
    /// The objective's metric in the baseline phase (relative objectives).
    pub baseline_ms: Option<f64>,
    /// The objective's metric in the measured phase, and its bound.
    pub value_ms: f64,
    pub bound_ms: f64,
    pub meets: bool,
    /// The run finished and measured reads in the phase.
    #[serde(skip)]
    pub meets_own: bool,
    /// Seeds run, and those on which the objective was met; with several,
    /// `write_mbps` is the mean over them, `write_min_mbps` the lowest, the
    /// read and write latencies the worst, the SLO violations the sum, and
    /// `value_ms` / `bound_ms` those of the seed furthest over (or least
    /// under) its bound.
    pub seeds: usize,
    pub seeds_met: usize,
    pub write_min_mbps: f64,
    /// The run's notes (with several seeds, every seed's, each text once):
    /// what the run adjusted or could not do, as `sim` prints them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Default, Serialize)]
pub struct SweepReport {
    pub scenario: String,
    pub drive: String,
    pub seeds: Vec<u64>,
    pub objective: String,
    pub phase: String,
    pub points: Vec<Point>,
    /// With several seeds, every seed's points (in `seeds` order).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_seed: Option<Vec<Vec<Point>>>,
    /// The spec of the best point meeting the objective, if any.
    pub best: Option<String>,
    /// Its index in `points`.
    #[serde(skip)]
    pub best_index: Option<usize>,
    pub wall_s: f64,
    /// Settings a stop (Ctrl-C) left without a run on every seed: not judged.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_run: Vec<String>,
}

fn phase<'a>(run: &'a RunReport, name: &str) -> Result<&'a PhaseReport, SweepError> {
    run.phase(name).ok_or_else(|| {
        let names: Vec<_> = run.phases.iter().map(|p| p.name.as_str()).collect();
        SweepError::NoPhase {
            name: name.to_string(),
            phases: names.join(", "),
        }
    })
}

/// The figures of one run against `objective`.
pub fn point(
    run: &RunReport,
    objective: &Objective,
    measured: &str,
    baseline: &str,
) -> Result<Point, SweepError> {
    let p = phase(run, measured)?;
    let ms = |us: f64| us / 1e3;
    let (baseline_ms, bound_ms) = match objective.bound {
        Bound::Relative(x) => {
            let b = ms(read_value(objective.metric, phase(run, baseline)?));
            (Some(b), b * x)
        }
        Bound::Absolute(t) => (None, t.0 as f64 / 1e6),
    };
    let value_ms = ms(read_value(objective.metric, p));
    let meets = p.read.ops > 0 && value_ms <= bound_ms && !run.interrupted;
    Ok(Point {
        spec: run.scheduler.clone(),
        write_mbps: p.write.mbps,
        read_mbps: p.read.mbps,
        read_p99_ms: ms(p.read.lat_us.p99),
        read_p999_ms: ms(p.read.lat_us.p999),
        read_slo_violations: p.read.slo_violations,
        write_p99_ms: ms(p.write.lat_us.p99),
        write_max_ms: ms(p.write.lat_us.max),
        baseline_ms,
        value_ms,
        bound_ms,
        meets,
        meets_own: p.read.ops > 0 && !run.interrupted,
        seeds: 1,
        seeds_met: usize::from(meets),
        write_min_mbps: p.write.mbps,
        notes: run.notes.clone(),
    })
}

/// A relative bound is taken from the lowest baseline of the sweep: the
/// drive's own unloaded latency. A policy that slows reads before the fill
/// (the baseline phase has no writes) must not loosen its own bound.
pub fn share_baseline(points: &mut [Point], objective: &Objective) {
    let Bound::Relative(x) = objective.bound else {
        return;
    };
    let Some(lowest) = points
        .iter()
        .filter_map(|p| p.baseline_ms)
        .filter(|b| *b > 0.0)
        .min_by(f64::total_cmp)
    else {
        return;
    };
    for p in points {
        p.bound_ms = lowest * x;
        p.meets = p.meets_own && p.value_ms <= p.bound_ms;
        p.seeds_met = usize::from(p.meets);
    }
}

/// The point with the most write throughput among those that meet the
/// objective; ties go to the lower read value, then to the earlier point.
pub fn best(points: &[Point]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, p) in points.iter().enumerate().filter(|(_, p)| p.meets) {
        let better = best.is_none_or(|b| {
            let q = &points[b];
            p.write_mbps > q.write_mbps || (p.write_mbps == q.write_mbps && p.value_ms < q.value_ms)
        });
        if better {
            best = Some(i);
        }
    }
    best
}

/// A sweep to run: a workload on a drive, the settings, the seeds and the
/// objective the points are judged by.
pub struct Sweep {
    pub workload: SweepWorkload,
    pub device: DeviceConfig,
    /// Scheduler specs, in the order they are reported.
    pub specs: Vec<String>,
    pub seeds: Vec<u64>,
    pub objective: Objective,
    /// The phase whose figures are compared, and the one a relative
    /// objective is measured against.
    pub phase: String,
    pub baseline: String,
    pub slo: Nanos,
    /// Worker threads (`None`: one per core); the report does not depend on it.
    pub threads: Option<usize>,
}

impl Sweep {
    /// The line a sweep of `sims` starts with: its settings, workload,
    /// drive and seeds, and the aging each seed's drive takes first when
    /// that is long ([`aging_note`]).
    pub fn describe(&self, sims: &[Simulation]) -> String {
        let (specs, seeds) = (self.specs.len(), self.seeds.len());
        let (workload, drive) = (self.workload.label(), &self.device.name);
        let aging = sims
            .first()
            .and_then(|s| aging_note(&s.device, s.start_state()));
        let aging = aging.map_or_else(String::new, |note| format!(", each seed {note}"));
        format!("sweeping {specs} setting(s) of {workload} on {drive}, {seeds} seed(s){aging}")
    }

    /// The scenario's simulation on each seed, checked, after every spec
    /// was checked (and found once only): what is wrong fails before
    /// anything runs.
    pub fn simulations(&self) -> Result<Vec<Simulation>, SweepError> {
        self.check_settings(true)?;
        self.seed_simulations()
    }

    /// [`Sweep::simulations`] where a spec may repeat: a family sweep's
    /// static limit may equal a setting of the user's.
    pub(crate) fn simulations_of_specs(&self) -> Result<Vec<Simulation>, SweepError> {
        self.check_settings(false)?;
        self.seed_simulations()
    }

    /// Checks what does not depend on the drive: the specs (each `once`,
    /// when asked), their number on the seeds, the threads.
    pub(crate) fn check_settings(&self, once: bool) -> Result<(), SweepError> {
        let mut seen = std::collections::HashSet::new();
        let repeated = self.specs.iter().find(|s| !seen.insert(s.as_str()));
        if let (true, Some(spec)) = (once, repeated) {
            return Err(SweepError::RepeatedSpec { spec: spec.clone() });
        }
        let points = self.specs.len();
        if points == 0 {
            return Err(SweepError::NoSettings);
        }
        if let Some(threads) = self.threads {
            if threads == 0 || threads > MAX_THREADS {
                return Err(SweepError::BadThreads { threads });
            }
        }
        if points > MAX_POINTS {
            return Err(SweepError::TooManyPoints { points });
        }
        for spec in &self.specs {
            policy::build(spec).map_err(|source| SweepError::Scheduler {
                spec: spec.clone(),
                source,
            })?;
        }
        self.check_runs(0)
    }

    /// The grid and `static_limits` more settings on every seed: at most
    /// [`MAX_POINTS`] runs.
    pub(crate) fn check_runs(&self, static_limits: usize) -> Result<(), SweepError> {
        let (points, seeds) = (self.specs.len(), self.seeds.len());
        if (points + static_limits) * seeds > MAX_POINTS {
            return Err(SweepError::TooManyRuns {
                points,
                static_limits,
                seeds,
            });
        }
        Ok(())
    }

    /// The workload's simulation on each seed, on the drive, checked.
    fn seed_simulations(&self) -> Result<Vec<Simulation>, SweepError> {
        self.check_memory(iosteer_workload::fio_text::meminfo_bytes("MemAvailable"))?;
        let mut sims = Vec::new();
        for &seed in &self.seeds {
            let mut sim = self.workload.simulation(&self.device, seed)?;
            self.workload
                .add_window(&mut sim, &self.baseline, PhaseRole::Baseline)?;
            self.workload
                .add_window(&mut sim, &self.phase, PhaseRole::Measured)?;
            sim.workload.slo = self.slo;
            sim.validate()?;
            sims.push(sim);
        }
        let jobs = || sims.iter().flat_map(|sim| &sim.workload.jobs);
        if !jobs().any(Job::may_read) {
            return Err(SweepError::NoReadingJob);
        }
        Ok(sims)
    }

    /// Refuses a sweep whose drives would not fit `free` bytes of memory
    /// (`None`: not known): each seed's aged drive and a copy for each
    /// thread are held at once.
    fn check_memory(&self, free: Option<u64>) -> Result<(), SweepError> {
        let (seeds, runs) = (self.seeds.len(), self.specs.len() * self.seeds.len());
        let threads = (self.threads)
            .unwrap_or_else(rayon::current_num_threads)
            .min(runs.max(1));
        let drives = (seeds + threads) as u64;
        let needed = drives.saturating_mul(self.device.model_bytes());
        match free {
            Some(available) if needed > available => Err(SweepError::Memory {
                drives,
                seeds,
                threads,
                needed,
                available,
            }),
            _ => Ok(()),
        }
    }

    /// Runs every spec on every seed's simulation (from [`Sweep::simulations`]),
    /// in parallel, and judges the points.
    pub fn run(&self, sims: &[Simulation]) -> Result<SweepReport, SweepError> {
        self.run_until(sims, &|| true)
    }

    /// Every spec's run on every seed's simulation, seed by seed, each
    /// seed's runs in spec order.
    pub fn run_reports(&self, sims: &[Simulation]) -> Result<Vec<RunReport>, SweepError> {
        let runs = self.run_reports_until(sims, &|| true)?;
        Ok(runs.into_iter().flatten().collect())
    }

    /// [`Sweep::run_reports`], a run not started once `keep_going` says no
    /// (`None` in its place; the runs under way finish).
    fn run_reports_until(
        &self,
        sims: &[Simulation],
        keep_going: &(dyn Fn() -> bool + Sync),
    ) -> Result<Vec<Option<RunReport>>, SweepError> {
        let pool = rayon::ThreadPoolBuilder::new()
            // No more threads than runs: the rest would only idle.
            .num_threads(
                self.threads
                    .map_or(0, |t| t.min((self.specs.len() * sims.len()).max(1))),
            )
            .build()?;
        let specs = &self.specs;
        let runs: Vec<Option<RunReport>> = pool.install(|| -> Result<_, SimError> {
            let aged: Vec<_> = sims
                .par_iter()
                .map(|sim| sim.aged_device_until(&mut || keep_going()))
                .collect::<Result<_, _>>()?;
            // A setting's seeds one after another: a sweep stopped part way
            // then has settings run on every seed, to judge (in seed order,
            // every seed's settings after the seed before, it had none).
            let jobs: Vec<(usize, &String)> = (specs.iter())
                .flat_map(|spec| (0..sims.len()).map(move |i| (i, spec)))
                .collect();
            jobs.par_iter()
                .map(|&(i, spec)| match keep_going() {
                    // Nothing a sweep reports or writes shows a run's
                    // one-second series: kept, a 10-hour job's held 7 MB a
                    // point until the sweep ended.
                    true => (sims[i].run(spec, &aged[i], &mut |_, _| true)).map(|run| {
                        Some(RunReport {
                            series: Vec::new(),
                            ..run
                        })
                    }),
                    false => Ok(None),
                })
                .collect()
        })?;
        // Back in seed order: every seed's settings, then the next seed's.
        let (seeds, settings) = (sims.len(), specs.len());
        let mut by_seed: Vec<Option<RunReport>> = vec![None; runs.len()];
        for (k, run) in runs.into_iter().enumerate() {
            by_seed[(k % seeds) * settings + k / seeds] = run;
        }
        Ok(by_seed)
    }

    /// The report of `runs` (from [`Sweep::run_reports`]) judged by
    /// `objective`; `wall_s` is left at zero.
    pub fn judge(
        &self,
        runs: &[RunReport],
        objective: &Objective,
    ) -> Result<SweepReport, SweepError> {
        let relative = matches!(objective.bound, Bound::Relative(_));
        let baseline = relative.then_some((&self.baseline, "baseline"));
        for (name, role) in std::iter::once((&self.phase, "judged")).chain(baseline) {
            let no_reads = |run: &RunReport| phase(run, name).is_ok_and(|p| p.read.ops == 0);
            if !runs.is_empty() && runs.iter().all(no_reads) {
                let phase = name.clone();
                return Err(SweepError::NoReads { phase, role });
            }
        }
        let mut per_seed = Vec::new();
        // A stopped sweep judges fewer specs than it has (see `stop.rs`).
        let judged = runs.len() / self.seeds.len().max(1);
        let several = self.seeds.len() > 1;
        for (seed, seed_runs) in self.seeds.iter().zip(runs.chunks(judged.max(1))) {
            let mut points = Vec::new();
            for run in seed_runs {
                let mut point = point(run, objective, &self.phase, &self.baseline)?;
                if several {
                    // Each seed's own figures: say whose.
                    point
                        .notes
                        .iter_mut()
                        .for_each(|n| *n = format!("seed {seed}: {n}"));
                }
                points.push(point);
            }
            share_baseline(&mut points, objective);
            per_seed.push(points);
        }
        let points = across_seeds(&per_seed);
        let best_index = best(&points);
        Ok(SweepReport {
            scenario: self.workload.label(),
            drive: self.device.name.clone(),
            seeds: self.seeds.clone(),
            objective: objective.to_string(),
            phase: self.phase.clone(),
            best: best_index.map(|i| points[i].spec.clone()),
            best_index,
            points,
            per_seed: (self.seeds.len() > 1).then_some(per_seed),
            wall_s: 0.0,
            not_run: Vec::new(),
        })
    }
}

/// The width of a terminal table's first column: its `header`'s, or the
/// longest of its `cells` where one is longer.
pub(crate) fn first_column_width<'a>(
    header: &str,
    cells: impl IntoIterator<Item = &'a str>,
) -> usize {
    cells
        .into_iter()
        .map(str::len)
        .fold(header.len(), usize::max)
}

/// The terminal table.
pub fn table(report: &SweepReport) -> String {
    let best = report.best_index;
    let width = first_column_width("spec", report.points.iter().map(|p| p.spec.as_str()));
    let seeds: Vec<String> = report.seeds.iter().map(u64::to_string).collect();
    let several = seeds.len() > 1;
    let mut out = format!(
        "sweep of {} on {} ({} {}), phase {}; objective: {}\n",
        report.scenario,
        report.drive,
        if several { "seeds" } else { "seed" },
        seeds.join(","),
        report.phase,
        report.objective
    );
    if several {
        out += "  (write MB/s: mean over the seeds, and the lowest; read figures and write p99: the \
                worst over the seeds; judged and bound: the objective's metric and bound of the seed \
                furthest over, or least under, its bound; >SLO: the sum; meets: on every seed)\n";
    }
    let min_header = if several { "   min MB/s" } else { "" };
    out += &format!(
        "  {:<width$}  {:>9}{min_header}  {:>9}  {:>10}  {:>7}  {:>9}  {:>9}  {:>9}  {}\n",
        "spec",
        "write MB/s",
        "read p99",
        "read p99.9",
        ">SLO",
        "judged ms",
        "bound ms",
        "write p99",
        "meets"
    );
    for (i, p) in report.points.iter().enumerate() {
        let met = if several {
            format!(" ({}/{})", p.seeds_met, p.seeds)
        } else {
            String::new()
        };
        let mark = if Some(i) == best {
            format!("yes{met}  <- best")
        } else if p.meets {
            format!("yes{met}")
        } else {
            format!("no{met}")
        };
        let min = if several {
            format!("  {:>9.1}", p.write_min_mbps)
        } else {
            String::new()
        };
        out += &format!(
            "  {:<width$}  {:>10.1}{min}  {:>9.2}  {:>10.2}  {:>7}  {:>9.2}  {:>9.2}  {:>9.1}  {}\n",
            p.spec,
            p.write_mbps,
            p.read_p99_ms,
            p.read_p999_ms,
            p.read_slo_violations,
            p.value_ms,
            p.bound_ms,
            p.write_p99_ms,
            mark
        );
    }
    out += &match &report.best {
        Some(spec) => format!("best setting meeting the objective: {spec}\n"),
        None => "no setting meets the objective\n".to_string(),
    };
    out += &notes_table(&report.points);
    if !report.not_run.is_empty() {
        let (count, specs) = (report.not_run.len(), report.not_run.join(", "));
        out += &format!(
            "stopped early: {count} setting(s) not run on every seed, not judged: {specs}\n"
        );
    }
    out
}

/// The points' notes, a kind of note once ([`notes_by_kind`]).
fn notes_table(points: &[Point]) -> String {
    let owners = points.iter().map(|p| (p.spec.as_str(), p.notes.as_slice()));
    notes_by_kind(owners, points.len(), "setting")
}

/// The notes of `count` owners (settings, or settings on drives), a kind
/// of note once (notes that differ only in their figures are one kind),
/// with the owners that have it ("every `noun`" when all do), in the order
/// they first appear: a 32-point sweep would otherwise repeat each run's
/// counts 32 times.
pub(crate) fn notes_by_kind<'a>(
    owners: impl IntoIterator<Item = (&'a str, &'a [String])>,
    count: usize,
    noun: &str,
) -> String {
    struct Kind<'a> {
        key: String,
        text: &'a str,
        owners: Vec<&'a str>,
        alike: bool,
    }
    let mut kinds: Vec<Kind> = Vec::new();
    for (owner, notes) in owners {
        for note in notes {
            let key = without_figures(note);
            match kinds.iter_mut().find(|k| k.key == key) {
                Some(kind) => {
                    kind.alike &= kind.text == note;
                    if kind.owners.last() != Some(&owner) {
                        kind.owners.push(owner);
                    }
                }
                None => kinds.push(Kind {
                    key,
                    text: note,
                    owners: vec![owner],
                    alike: true,
                }),
            }
        }
    }
    let mut out = String::new();
    for kind in kinds {
        let whose = match kind.owners.len() {
            n if n == count && n > 1 => format!("every {noun}"),
            n if n <= 3 => kind.owners.join(", "),
            n => format!("{n} of {count} {noun}s"),
        };
        let figures = match kind.alike {
            true => "",
            false => "; the first one's figures, every one's in --json",
        };
        out += &format!("  note ({whose}{figures}): {}\n", kind.text);
    }
    out
}

/// A note's text with every run of digits as `#`: notes of one kind.
fn without_figures(note: &str) -> String {
    let mut key = String::with_capacity(note.len());
    for c in note.chars() {
        match c.is_ascii_digit() {
            true if key.ends_with('#') => {}
            true => key.push('#'),
            false => key.push(c),
        }
    }
    key
}

mod chart;
pub use chart::{chart, draw_chart, CHART_SIZE};
mod grid;
pub use grid::expand_grid;
mod seeds;
pub use seeds::{across_seeds, parse_seeds};
mod stop;
mod workload;
pub use workload::SweepWorkload;
pub mod family;

#[cfg(test)]
mod tests;
