//! `iosteer sweep`: one scenario across a grid of scheduler settings, the
//! paper's weeks-long search for a static write limit (30 MB/s on 20
//! machines) done in minutes.
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

use iosteer_sched::{policy, Nanos};
use iosteer_sim::scenario::{scenario, SCENARIOS};
use iosteer_workload::report::{PhaseReport, RunReport};
use plotters::prelude::*;
use rayon::prelude::*;
use serde::Serialize;

use crate::device_cmd::load_device;

/// Most grid points one sweep may run.
const MAX_POINTS: usize = 10_000;
/// Most seeds one sweep may run each point on.
const MAX_SEEDS: usize = 100;

#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// Built-in scenario [default: fill-while-serving].
    pub scenario: Option<String>,
    /// A grid of settings, `name:key=a..b/step,key=x,y,z`; repeat to join grids.
    #[arg(long = "vary", value_name = "GRID")]
    pub vary: Vec<String>,
    /// A single scheduler spec to add to the grid (a baseline); repeatable.
    #[arg(long = "sched", value_name = "SPEC")]
    pub scheds: Vec<String>,
    /// Read objective: `METRIC<=Nx` (times the baseline phase's) or
    /// `METRIC<=DURATION`; METRIC is mean, p50, p99, p99.9 or max.
    #[arg(long, default_value = "p99<=2x")]
    pub objective: String,
    /// Phase whose figures are compared.
    #[arg(long, default_value = "fill")]
    pub phase: String,
    /// Phase a relative objective is measured against.
    #[arg(long, default_value = "before")]
    pub baseline: String,
    /// Drive: a preset or a TOML file.
    #[arg(long, value_name = "PRESET|FILE")]
    pub device: Option<String>,
    /// Seed, or seeds (`1..5`, `1,4,5`): with several, every setting runs
    /// on each and meets the objective only if it does on all.
    #[arg(long, value_name = "SEED|A..B|A,B,..", default_value = "1")]
    pub seed: String,
    /// Reads slower than this count as SLO violations.
    #[arg(long, default_value_t = 35.0)]
    pub slo_ms: f64,
    /// Worker threads [default: one per core]; the output does not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// SVG chart of write throughput against read latency ("-" for none).
    #[arg(long, value_name = "FILE", default_value = "sweep.svg")]
    pub chart: String,
    /// Print JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// A read latency objective.
#[derive(Clone, Debug, PartialEq)]
pub struct Objective {
    pub metric: Metric,
    pub bound: Bound,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Metric {
    Mean,
    P50,
    P99,
    P999,
    Max,
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Bound {
    /// Times the baseline phase's value of the same metric.
    Relative(f64),
    Absolute(Nanos),
}

impl Metric {
    fn name(self) -> &'static str {
        match self {
            Metric::Mean => "mean",
            Metric::P50 => "p50",
            Metric::P99 => "p99",
            Metric::P999 => "p99.9",
            Metric::Max => "max",
        }
    }

    /// The read value of this metric in a phase, microseconds.
    fn of(self, phase: &PhaseReport) -> f64 {
        let l = &phase.read.lat_us;
        match self {
            Metric::Mean => l.mean,
            Metric::P50 => l.p50,
            Metric::P99 => l.p99,
            Metric::P999 => l.p999,
            Metric::Max => l.max,
        }
    }
}

impl std::fmt::Display for Objective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.bound {
            Bound::Relative(x) => write!(f, "read {} <= {x}x baseline", self.metric.name()),
            Bound::Absolute(t) => write!(f, "read {} <= {t}", self.metric.name()),
        }
    }
}

/// Parses `p99<=2x`, `p99.9<=10ms`, `mean<=800us`.
pub fn parse_objective(text: &str) -> Result<Objective, String> {
    let bad = |why: &str| {
        format!("--objective {text}: {why} (expected METRIC<=Nx or METRIC<=DURATION, such as p99<=2x or p99<=5ms)")
    };
    let (metric, value) = text.split_once("<=").ok_or_else(|| bad("no `<=`"))?;
    let metric = match metric.trim() {
        "mean" => Metric::Mean,
        "p50" => Metric::P50,
        "p99" => Metric::P99,
        "p99.9" | "p999" => Metric::P999,
        "max" => Metric::Max,
        other => return Err(bad(&format!("unknown metric `{other}`"))),
    };
    let value = value.trim();
    let bound = if let Some(x) = value.strip_suffix('x') {
        let x: f64 = x.trim().parse().map_err(|_| bad("bad factor"))?;
        if !(x.is_finite() && x > 0.0) {
            return Err(bad("the factor must be positive"));
        }
        Bound::Relative(x)
    } else {
        let t = iosteer_sched::config::parse_duration("--objective", value)
            .map_err(|e| bad(&e.to_string()))?;
        if t == Nanos::ZERO {
            return Err(bad("the bound must be positive"));
        }
        Bound::Absolute(t)
    };
    Ok(Objective { metric, bound })
}

/// Expands a values string: `a..b/s` or one literal.
fn expand_value(key: &str, value: &str) -> Result<Vec<String>, String> {
    let Some((range, step)) = value.split_once("..") else {
        return Ok(vec![value.to_string()]);
    };
    let bad = || {
        format!(
            "`{key}={value}`: a range is start..end/step with integers, such as 10000..80000/10000"
        )
    };
    let (end, step) = step.split_once('/').ok_or_else(bad)?;
    let start: u64 = range.trim().parse().map_err(|_| bad())?;
    let end: u64 = end.trim().parse().map_err(|_| bad())?;
    let step: u64 = step.trim().parse().map_err(|_| bad())?;
    if step == 0 || end < start {
        return Err(bad());
    }
    let count = (end - start) / step + 1;
    if count as usize > MAX_POINTS {
        return Err(format!("`{key}={value}`: more than {MAX_POINTS} values"));
    }
    Ok((0..count).map(|i| (start + i * step).to_string()).collect())
}

/// Expands one `--vary` grid into scheduler specs, first key slowest.
pub fn expand_grid(grid: &str) -> Result<Vec<String>, String> {
    let (name, settings) = grid.split_once(':').unwrap_or((grid, ""));
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("--vary {grid}: no policy name"));
    }
    let mut keys: Vec<(String, Vec<String>)> = Vec::new();
    for item in settings.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.split_once('=') {
            Some((key, value)) => {
                let key = key.trim().to_string();
                let values = expand_value(&key, value.trim())?;
                keys.push((key, values));
            }
            None => {
                let (key, values) = keys
                    .last_mut()
                    .ok_or_else(|| format!("--vary {grid}: `{item}` comes before any key=value"))?;
                let more = expand_value(key, item)?;
                values.extend(more);
            }
        }
    }
    let mut specs = vec![String::new()];
    for (key, values) in &keys {
        if specs.len().saturating_mul(values.len()) > MAX_POINTS {
            return Err(format!("--vary {grid}: more than {MAX_POINTS} points"));
        }
        specs = specs
            .iter()
            .flat_map(|prefix| {
                values.iter().map(move |v| {
                    if prefix.is_empty() {
                        format!("{key}={v}")
                    } else {
                        format!("{prefix},{key}={v}")
                    }
                })
            })
            .collect();
    }
    Ok(specs
        .into_iter()
        .map(|s| {
            if s.is_empty() {
                name.to_string()
            } else {
                format!("{name}:{s}")
            }
        })
        .collect())
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
}

#[derive(Debug, Serialize)]
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
    pub wall_s: f64,
}

fn phase<'a>(run: &'a RunReport, name: &str) -> Result<&'a PhaseReport, String> {
    run.phase(name).ok_or_else(|| {
        let names: Vec<_> = run.phases.iter().map(|p| p.name.as_str()).collect();
        format!(
            "the scenario has no phase `{name}`; phases: {}",
            names.join(", ")
        )
    })
}

/// The figures of one run against `objective`.
pub fn point(
    run: &RunReport,
    objective: &Objective,
    measured: &str,
    baseline: &str,
) -> Result<Point, String> {
    let p = phase(run, measured)?;
    let ms = |us: f64| us / 1e3;
    let (baseline_ms, bound_ms) = match objective.bound {
        Bound::Relative(x) => {
            let b = ms(objective.metric.of(phase(run, baseline)?));
            (Some(b), b * x)
        }
        Bound::Absolute(t) => (None, t.0 as f64 / 1e6),
    };
    let value_ms = ms(objective.metric.of(p));
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

/// Parses `--seed`: one seed, a range `a..b` (inclusive) or a list `a,b,c`.
pub fn parse_seeds(text: &str) -> Result<Vec<u64>, String> {
    let bad = || format!("--seed {text}: expected a seed (4), a range (1..5) or a list (1,4,5)");
    let seeds: Vec<u64> = if let Some((a, b)) = text.split_once("..") {
        let a: u64 = a.trim().parse().map_err(|_| bad())?;
        let b: u64 = b.trim().parse().map_err(|_| bad())?;
        if b < a {
            return Err(bad());
        }
        (a..=b.min(a.saturating_add(MAX_SEEDS as u64))).collect()
    } else {
        let parsed: Result<Vec<u64>, _> = text.split(',').map(|s| s.trim().parse()).collect();
        parsed.map_err(|_| bad())?
    };
    if seeds.len() > MAX_SEEDS {
        return Err(format!("--seed {text}: at most {MAX_SEEDS} seeds"));
    }
    let mut unique = seeds.clone();
    unique.sort_unstable();
    unique.dedup();
    if unique.len() != seeds.len() {
        return Err(format!("--seed {text}: a seed is repeated"));
    }
    Ok(seeds)
}

/// One point per setting from the points of every seed (each seed's list
/// in the same grid order): see [`Point`] for how figures combine.
pub fn across_seeds(per_seed: &[Vec<Point>]) -> Vec<Point> {
    let Some(first) = per_seed.first() else {
        return Vec::new();
    };
    (0..first.len())
        .map(|i| {
            let runs: Vec<&Point> = per_seed.iter().map(|points| &points[i]).collect();
            let worst = runs
                .iter()
                .max_by(|a, b| (a.value_ms / a.bound_ms).total_cmp(&(b.value_ms / b.bound_ms)))
                .expect("one seed at least");
            let n = runs.len() as f64;
            let max = |f: fn(&Point) -> f64| runs.iter().map(|p| f(p)).fold(f64::MIN, f64::max);
            Point {
                spec: worst.spec.clone(),
                write_mbps: runs.iter().map(|p| p.write_mbps).sum::<f64>() / n,
                read_mbps: runs.iter().map(|p| p.read_mbps).sum::<f64>() / n,
                read_p99_ms: max(|p| p.read_p99_ms),
                read_p999_ms: max(|p| p.read_p999_ms),
                read_slo_violations: runs.iter().map(|p| p.read_slo_violations).sum(),
                write_p99_ms: max(|p| p.write_p99_ms),
                write_max_ms: max(|p| p.write_max_ms),
                baseline_ms: worst.baseline_ms,
                value_ms: worst.value_ms,
                bound_ms: worst.bound_ms,
                meets: runs.iter().all(|p| p.meets),
                meets_own: runs.iter().all(|p| p.meets_own),
                seeds: runs.len(),
                seeds_met: runs.iter().filter(|p| p.meets).count(),
                write_min_mbps: runs.iter().map(|p| p.write_mbps).fold(f64::MAX, f64::min),
            }
        })
        .collect()
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

pub fn sweep(args: SweepArgs) -> Result<(), String> {
    let objective = parse_objective(&args.objective)?;
    let mut specs = Vec::new();
    for grid in &args.vary {
        specs.extend(expand_grid(grid)?);
    }
    specs.extend(args.scheds.iter().cloned());
    if specs.is_empty() {
        return Err("nothing to sweep: give --vary GRID (and/or --sched SPEC)".into());
    }
    if specs.len() > MAX_POINTS {
        return Err(format!("{} grid points; at most {MAX_POINTS}", specs.len()));
    }
    for spec in &specs {
        policy::build(spec).map_err(|e| format!("{spec}: {e}"))?;
    }
    if !(args.slo_ms.is_finite() && args.slo_ms > 0.0) {
        return Err(format!(
            "--slo-ms {}: expected a positive number",
            args.slo_ms
        ));
    }
    let seeds = parse_seeds(&args.seed)?;
    if specs.len() * seeds.len() > MAX_POINTS {
        return Err(format!(
            "{} grid points on {} seeds; at most {MAX_POINTS} runs",
            specs.len(),
            seeds.len()
        ));
    }
    let device = load_device(args.device.as_deref().unwrap_or("consumer-sata"))?;
    let name = args.scenario.as_deref().unwrap_or("fill-while-serving");
    let mut sims = Vec::new();
    for &seed in &seeds {
        let mut sim = scenario(name, device.clone(), seed).ok_or_else(|| {
            let names: Vec<_> = SCENARIOS.iter().map(|(n, _)| *n).collect();
            format!("unknown scenario `{name}`; scenarios: {}", names.join(", "))
        })?;
        sim.slo = Nanos((args.slo_ms * 1e6) as u64);
        sim.validate().map_err(|e| e.to_string())?;
        sims.push(sim);
    }
    if !args.json {
        eprintln!(
            "iosteer: sweeping {} setting(s) of {name} on {}, {} seed(s)...",
            specs.len(),
            device.name,
            seeds.len()
        );
    }
    let started = std::time::Instant::now();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()
        .map_err(|e| format!("--threads: {e}"))?;
    let runs: Vec<Result<RunReport, String>> = pool.install(|| {
        let aged: Vec<_> = sims.par_iter().map(|sim| sim.aged_device()).collect();
        let jobs: Vec<(usize, &String)> = (0..sims.len())
            .flat_map(|i| specs.iter().map(move |spec| (i, spec)))
            .collect();
        jobs.par_iter()
            .map(|&(i, spec)| {
                let aged = aged[i].as_ref().map_err(|e| e.to_string())?;
                sims[i]
                    .run(spec, aged, &mut |_, _| true)
                    .map_err(|e| e.to_string())
            })
            .collect()
    });
    let mut per_seed = Vec::new();
    for seed_runs in runs.chunks(specs.len()) {
        let mut points = Vec::new();
        for run in seed_runs {
            let run = run.as_ref().map_err(Clone::clone)?;
            points.push(point(run, &objective, &args.phase, &args.baseline)?);
        }
        share_baseline(&mut points, &objective);
        per_seed.push(points);
    }
    let points = across_seeds(&per_seed);
    let best_index = best(&points);
    let report = SweepReport {
        scenario: name.to_string(),
        drive: device.name.clone(),
        seeds: seeds.clone(),
        objective: objective.to_string(),
        phase: args.phase.clone(),
        best: best_index.map(|i| points[i].spec.clone()),
        points,
        per_seed: (seeds.len() > 1).then_some(per_seed),
        wall_s: (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
    };
    if args.chart != "-" {
        let path = Path::new(&args.chart);
        chart(path, &report, best_index).map_err(|e| format!("--chart {}: {e}", path.display()))?;
        if !args.json {
            eprintln!("iosteer: wrote {}", path.display());
        }
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", table(&report, best_index));
    }
    Ok(())
}

/// The terminal table.
pub fn table(report: &SweepReport, best: Option<usize>) -> String {
    let width = report
        .points
        .iter()
        .map(|p| p.spec.len())
        .max()
        .unwrap_or(4)
        .max(4);
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
        out += "  (write MB/s: mean over the seeds, and the lowest; read figures, bound and write p99: \
                the worst seed's; >SLO: the sum; meets: on every seed)\n";
    }
    let min_header = if several { "   min MB/s" } else { "" };
    out += &format!(
        "  {:<width$}  {:>9}{min_header}  {:>9}  {:>10}  {:>7}  {:>9}  {:>9}  {}\n",
        "spec", "write MB/s", "read p99", "read p99.9", ">SLO", "bound ms", "write p99", "meets"
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
            "  {:<width$}  {:>10.1}{min}  {:>9.2}  {:>10.2}  {:>7}  {:>9.2}  {:>9.1}  {}\n",
            p.spec,
            p.write_mbps,
            p.read_p99_ms,
            p.read_p999_ms,
            p.read_slo_violations,
            p.bound_ms,
            p.write_p99_ms,
            mark
        );
    }
    out += &match &report.best {
        Some(spec) => format!("best setting meeting the objective: {spec}\n"),
        None => "no setting meets the objective\n".to_string(),
    };
    out
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

const RED: RGBColor = RGBColor(214, 39, 40);
const BLUE: RGBColor = RGBColor(31, 119, 180);
const GREEN: RGBColor = RGBColor(44, 160, 44);

/// Two panels over write MB/s: read p99 and p99.9 (log scale) with the
/// objective's bound, and read SLO violations; the best point is ringed.
/// Text is SVG `<text>`, so no font is needed to draw it.
type LatencyChart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<
        plotters::coord::types::RangedCoordf64,
        plotters::coord::combinators::LogCoord<f64>,
    >,
>;

/// With several seeds the points are the mean write rate at the worst
/// seed's p99; this draws what they summarise: every seed's own point, and a
/// line from the lowest to the highest seed's write rate.
fn draw_seed_spread(
    lat: &mut LatencyChart,
    points: &[Point],
    per_seed: &[Vec<Point>],
    y_min: f64,
) -> DrawResult {
    let style = ShapeStyle::from(&BLUE.mix(0.35)).stroke_width(1);
    lat.draw_series(points.iter().enumerate().map(|(i, p)| {
        let rates = per_seed.iter().map(|runs| runs[i].write_mbps);
        let low = rates.clone().fold(f64::MAX, f64::min);
        let high = rates.fold(f64::MIN, f64::max);
        let y = p.read_p99_ms.max(y_min);
        PathElement::new(vec![(low, y), (high, y)], style)
    }))?
    .label(format!(
        "write MB/s, lowest to highest of {} seeds",
        per_seed.len()
    ))
    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
    lat.draw_series(per_seed.iter().flatten().map(|p| {
        Circle::new(
            (p.write_mbps, p.read_p99_ms.max(y_min)),
            2,
            BLUE.mix(0.35).filled(),
        )
    }))?
    .label("read p99, each seed")
    .legend(|(x, y)| Circle::new((x + 9, y), 2, BLUE.mix(0.35).filled()));
    Ok(())
}

fn chart(path: &Path, report: &SweepReport, best: Option<usize>) -> DrawResult {
    let root = SVGBackend::new(path, (900, 720)).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(440);
    let points = &report.points;
    let every_run = || report.per_seed.iter().flatten().flatten().chain(points);
    let x_max = every_run().map(|p| p.write_mbps).fold(1.0, f64::max) * 1.1;
    let y_min = every_run()
        .map(|p| p.read_p99_ms.min(p.bound_ms))
        .fold(f64::MAX, f64::min)
        .max(0.01)
        * 0.7;
    let y_max = points
        .iter()
        .map(|p| p.read_p999_ms.max(p.bound_ms))
        .fold(y_min * 10.0, f64::max)
        * 1.5;
    let mut lat = ChartBuilder::on(&top)
        .caption(
            format!(
                "{} on {}: write MB/s against read latency, {} phase",
                report.scenario, report.drive, report.phase
            ),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..x_max, (y_min..y_max).log_scale())?;
    lat.configure_mesh()
        .x_desc("write MB/s during the phase")
        .y_desc("read latency (ms)")
        .draw()?;
    lat.draw_series(
        points
            .iter()
            .map(|p| Circle::new((p.write_mbps, p.read_p99_ms.max(y_min)), 4, BLUE.filled())),
    )?
    .label(if report.per_seed.is_some() {
        "read p99 of the worst seed, at the mean write MB/s"
    } else {
        "read p99"
    })
    .legend(|(x, y)| Circle::new((x + 9, y), 4, BLUE.filled()));
    lat.draw_series(points.iter().map(|p| {
        Circle::new(
            (p.write_mbps, p.read_p999_ms.max(y_min)),
            4,
            RED.stroke_width(1),
        )
    }))?
    .label("read p99.9")
    .legend(|(x, y)| Circle::new((x + 9, y), 4, RED.stroke_width(1)));
    if let Some(per_seed) = &report.per_seed {
        draw_seed_spread(&mut lat, points, per_seed, y_min)?;
    }
    let bound = points.iter().map(|p| p.bound_ms).fold(f64::MAX, f64::min);
    if bound.is_finite() && bound < f64::MAX {
        let style = ShapeStyle::from(&BLACK.mix(0.6)).stroke_width(1);
        lat.draw_series(DashedLineSeries::new(
            vec![(0.0, bound), (x_max, bound)],
            6,
            4,
            style,
        ))?
        .label(format!("objective: {}", report.objective))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
    }
    if let Some(b) = best.map(|i| &points[i]) {
        let at = (b.write_mbps, b.read_p99_ms.max(y_min));
        lat.draw_series(std::iter::once(Circle::new(at, 9, GREEN.stroke_width(2))))?
            .label(format!("best: {}", b.spec))
            .legend(|(x, y)| Circle::new((x + 9, y), 6, GREEN.stroke_width(2)));
    }
    lat.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    let v_max = points
        .iter()
        .map(|p| p.read_slo_violations as f64)
        .fold(1.0, f64::max)
        * 1.15;
    let mut slo = ChartBuilder::on(&bottom)
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..x_max, 0f64..v_max)?;
    slo.configure_mesh()
        .x_desc("write MB/s during the phase")
        .y_desc("read SLO violations")
        .draw()?;
    slo.draw_series(points.iter().map(|p| {
        Circle::new(
            (p.write_mbps, p.read_slo_violations as f64),
            4,
            if p.meets {
                GREEN.filled()
            } else {
                RED.filled()
            },
        )
    }))?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_lists_expand_first_key_slowest() {
        let specs =
            expand_grid("netflix:write.limiter=bandwidth,queue_depth,write.current=10..30/10")
                .unwrap();
        assert_eq!(
            specs,
            [
                "netflix:write.limiter=bandwidth,write.current=10",
                "netflix:write.limiter=bandwidth,write.current=20",
                "netflix:write.limiter=bandwidth,write.current=30",
                "netflix:write.limiter=queue_depth,write.current=10",
                "netflix:write.limiter=queue_depth,write.current=20",
                "netflix:write.limiter=queue_depth,write.current=30",
            ]
        );
        assert_eq!(expand_grid("fifo").unwrap(), ["fifo"]);
        assert!(expand_grid("netflix:1,2").is_err());
        assert!(expand_grid("netflix:a=5..1/1").is_err());
        assert!(expand_grid("netflix:a=1..5").is_err());
        assert!(expand_grid("netflix:a=1..5/0").is_err());
    }

    #[test]
    fn objectives_parse_relative_and_absolute() {
        assert_eq!(
            parse_objective("p99<=2x").unwrap(),
            Objective {
                metric: Metric::P99,
                bound: Bound::Relative(2.0)
            }
        );
        assert_eq!(
            parse_objective("p99.9 <= 5ms").unwrap().bound,
            Bound::Absolute(Nanos::from_millis(5))
        );
        for bad in ["p99", "p98<=2x", "p99<=-1x", "p99<=5", "p99<=0ms"] {
            assert!(parse_objective(bad).is_err(), "{bad}");
        }
    }

    fn p(spec: &str, write: f64, value: f64, meets: bool) -> Point {
        Point {
            spec: spec.into(),
            write_mbps: write,
            read_mbps: 0.0,
            read_p99_ms: value,
            read_p999_ms: value,
            read_slo_violations: 0,
            write_p99_ms: 0.0,
            write_max_ms: 0.0,
            baseline_ms: None,
            value_ms: value,
            bound_ms: 2.0,
            meets,
            meets_own: true,
            seeds: 1,
            seeds_met: usize::from(meets),
            write_min_mbps: write,
        }
    }

    #[test]
    fn seeds_parse_as_one_a_range_or_a_list_and_bad_ones_are_refused() {
        assert_eq!(parse_seeds("4").unwrap(), [4]);
        assert_eq!(parse_seeds("1..3").unwrap(), [1, 2, 3]);
        assert_eq!(parse_seeds("1, 4,5").unwrap(), [1, 4, 5]);
        for bad in ["", "x", "3..1", "1..", "1,1", "0..1000", "1;2"] {
            let e = parse_seeds(bad).unwrap_err();
            assert!(e.contains("--seed"), "{bad}: {e}");
        }
    }

    #[test]
    fn across_seeds_a_setting_meets_only_on_every_seed_with_mean_and_worst_figures() {
        let mut worst = p("a", 30.0, 2.2, false);
        worst.bound_ms = 2.0;
        let per_seed = vec![
            vec![p("a", 10.0, 1.0, true), p("b", 5.0, 1.0, true)],
            vec![worst, p("b", 7.0, 1.5, true)],
        ];
        let points = across_seeds(&per_seed);
        assert_eq!(points.len(), 2);
        let (a, b) = (&points[0], &points[1]);
        assert_eq!((a.write_mbps, a.write_min_mbps), (20.0, 10.0));
        assert_eq!((a.seeds, a.seeds_met, a.meets), (2, 1, false));
        assert_eq!((a.value_ms, a.read_p99_ms), (2.2, 2.2), "the worst seed's");
        assert_eq!((b.seeds_met, b.meets, b.write_mbps), (2, true, 6.0));
        assert_eq!(best(&points), Some(1), "a meets on one seed of two only");
    }

    #[test]
    fn the_best_point_writes_most_among_those_that_meet() {
        let points = [
            p("a", 10.0, 1.0, true),
            p("b", 30.0, 9.0, false),
            p("c", 20.0, 1.9, true),
            p("d", 20.0, 1.5, true),
        ];
        assert_eq!(best(&points), Some(3));
        assert_eq!(best(&points[1..2]), None);
    }
}
