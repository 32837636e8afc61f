//! A sweep over many drives: `iosteer sweep --device family:1..50` (or a
//! comma list of presets, family drives and files). Every setting runs on
//! every drive and seed, beside a grid of static write limits chosen per
//! drive, and is judged by each objective:
//!
//! - the share of (drive, seed) pairs on which it meets the objective;
//! - its write rate (mean over the seeds) as a ratio to the best static
//!   limit meeting the objective on that drive (on every seed, as a
//!   one-drive sweep judges: one number an operator could have set);
//! - the worst cases: the pairs furthest over the bound, the drives with
//!   the lowest ratio.
//!
//! The static grid is the sweep's own, per drive, in two stages: limits
//! `STATIC_TOP` of the host link and halvings below it (`static_points` in
//! all), then, for each objective, `REFINE` limits between the best one
//! meeting it and the next above (a quarter-doubling apart, 2^(1/4) = 1.19):
//! the best static limit is known within 19% without running a fine grid
//! over a range as wide as the family's. Where no limit of the grid meets an
//! objective, its halvings down to `STATIC_FLOOR` are searched by bisection,
//! the lowest first (one run where none meets): a slow drive's best static
//! limit can lie far below 6%/64 of its link (family:27, 300 MB/s: the grid
//! ends at 281 kB/s and 80 kB/s meets `p99<=2x` on three seeds). A drive on
//! which no limit down to the floor meets has no ratio (the report says so).
//!
//! A setting that states its own objective (`steer:objective=p99<=1.5x`) is
//! judged only by that objective: judged by another it answers a question
//! nobody asked.

use iosteer_device::{family, DeviceConfig};
use iosteer_sched::limiter::Limit;
use iosteer_workload::chart::{category_chart, OutputError};

use super::*;
use crate::device::{load_device, DeviceError};

/// Most drives one family sweep may run.
pub const MAX_DRIVES: usize = 1000;
/// The highest static limit, as a share of the host link: the fill of the
/// built-in scenarios offers 6% of the link (reads at 40%, writes at 15% of
/// them), so the top of the grid does not hold the fill back at all.
pub const STATIC_TOP: f64 = 0.06;
/// Static limits per drive unless asked otherwise: down to 1/64 of the top.
pub const STATIC_POINTS: usize = 7;
/// Limits added between the best static limit and the next above it, per
/// objective: three quarter-doublings.
pub const REFINE: u32 = 3;
/// The lowest static limit tried, kB/s: steer's floor (`min_rate`), one
/// 128 KiB write every 13 s.
pub const STATIC_FLOOR: u64 = 10;

/// What is wrong with a family sweep's drives.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum FamilyError {
    #[error("{text}: {message}")]
    Drives { text: String, message: String },
    #[error("{item}: {source}")]
    Drive { item: String, source: DeviceError },
    #[error("{text}: more than {} drives", MAX_DRIVES)]
    TooManyDrives { text: String },
    #[error("{text}: {drive} is in the list twice; give each drive once")]
    RepeatedDrive { text: String, drive: String },
    #[error("{points}: expected 1 to 20 static limits per drive")]
    StaticPoints { points: usize },
    /// A setting's own objective (`steer:objective=...`) that does not parse,
    /// or that no objective of the sweep is: judged by it alone, the setting
    /// would be run and then left out of every table.
    #[error("`{spec}` states the objective `{text}`: {problem}")]
    SpecObjective {
        spec: String,
        text: String,
        problem: String,
    },
    /// The settings, seeds or threads, whatever the drive.
    #[error(transparent)]
    Settings(Box<SweepError>),
    #[error("{drive}: {source}")]
    Sweep {
        drive: String,
        source: Box<SweepError>,
    },
}

/// Whether a `--device` text names several drives (a list or a range).
pub fn is_drive_list(text: &str) -> bool {
    text.contains(',') || (text.starts_with(family::FAMILY_PREFIX) && text.contains(".."))
}

/// The drives of a list: items separated by commas, each a preset, a TOML
/// file, `family:N` or a range of family drives `family:A..B` (inclusive).
pub fn parse_drives(text: &str) -> Result<Vec<DeviceConfig>, FamilyError> {
    let mut drives = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let range = item
            .strip_prefix(family::FAMILY_PREFIX)
            .and_then(|r| r.split_once(".."));
        match range {
            Some((a, b)) => {
                let bad = |message: String| FamilyError::Drives {
                    text: item.to_string(),
                    message,
                };
                let parse = |s: &str| {
                    s.trim().parse::<u64>().map_err(|_| {
                        bad("expected family:A..B with whole numbers, such as family:1..50".into())
                    })
                };
                let (a, b) = (parse(a)?, parse(b)?);
                if b < a {
                    return Err(bad(format!("the range is reversed ({b} is below {a})")));
                }
                if b - a >= MAX_DRIVES as u64 {
                    return Err(FamilyError::TooManyDrives { text: text.into() });
                }
                drives.extend((a..=b).map(family::random_drive));
            }
            None => drives.push(load_device(item).map_err(|source| FamilyError::Drive {
                item: item.to_string(),
                source,
            })?),
        }
        if drives.len() > MAX_DRIVES {
            return Err(FamilyError::TooManyDrives { text: text.into() });
        }
    }
    // The same drive twice would run twice and count twice.
    if let Some(i) = (1..drives.len()).find(|&i| drives[..i].contains(&drives[i])) {
        let drive = drives[i].name.clone();
        return Err(FamilyError::RepeatedDrive {
            text: text.into(),
            drive,
        });
    }
    if drives.is_empty() {
        return Err(FamilyError::Drives {
            text: text.into(),
            message: "no drive; give presets, files or family:A..B separated by commas".into(),
        });
    }
    Ok(drives)
}

/// The static limit of `kb_per_s` (1 kB = 1000 bytes), as a spec; the
/// limiter's maximum is raised to it where it is above upstream's 300,000
/// (netflix refuses a current above the maximum: a 7 GB/s drive's grid
/// starts at 420,000).
fn static_spec(kb_per_s: u64) -> String {
    let spec = format!("netflix:write.limiter=bandwidth,write.current={kb_per_s}");
    if kb_per_s > Limit::UNLIMITED.max {
        format!("{spec},write.max={kb_per_s}")
    } else {
        spec
    }
}

/// The coarse static grid of a drive: `points` limits from `STATIC_TOP`
/// of its link down by halvings, in kB/s, lowest first.
pub fn static_grid(drive: &DeviceConfig, points: usize) -> Vec<u64> {
    let top = drive.timing.host_link_mb_per_s * 1e3 * STATIC_TOP;
    (0..points)
        .rev()
        .map(|i| (top / f64::from(1u32 << i.min(30))).round().max(1.0) as u64)
        .collect()
}

/// The limits between `best` and twice it, a quarter-doubling apart.
fn refinement(best: u64) -> impl Iterator<Item = u64> {
    (1..=REFINE).map(move |i| (best as f64 * 2f64.powf(f64::from(i) / 4.0)).round() as u64)
}

/// The objective a spec states (`objective=...`), if any.
fn stated_objective(spec: &str) -> Result<Option<Objective>, FamilyError> {
    let Some((_, rest)) = spec.split_once("objective=") else {
        return Ok(None);
    };
    let text = rest.split(',').next().unwrap_or_default();
    crate::objective::parse(text)
        .map(Some)
        .map_err(|e| spec_objective(spec, text, e.to_string()))
}

fn spec_objective(spec: &str, text: &str, problem: String) -> FamilyError {
    FamilyError::SpecObjective {
        spec: spec.into(),
        text: text.into(),
        problem,
    }
}

/// One setting on one drive, under one objective.
#[derive(Clone, Debug, Serialize)]
pub struct SettingOnDrive {
    pub spec: String,
    /// Mean over the seeds, and the lowest seed's.
    pub write_mbps: f64,
    pub write_min_mbps: f64,
    /// `write_mbps` over the best static limit's (none: no static limit
    /// down to `STATIC_FLOOR` meets the objective on this drive).
    pub ratio: Option<f64>,
    pub seeds: usize,
    pub seeds_met: usize,
    /// The worst seed's value over its bound (above 1: missed).
    pub worst_over_bound: f64,
    /// Each seed's value over its bound, in seed order.
    pub over_bound: Vec<f64>,
    /// The runs' notes (every seed's, each text once).
    pub notes: Vec<String>,
}

/// One drive under one objective.
#[derive(Clone, Debug, Serialize)]
pub struct DriveResult {
    pub drive: String,
    pub link_mb_per_s: f64,
    /// The best static limit meeting the objective on every seed, and its
    /// mean write rate; none when no limit down to `STATIC_FLOOR` does.
    pub best_static: Option<String>,
    pub best_static_mbps: Option<f64>,
    /// The best static limit is the grid's highest: the fill was never held
    /// back, and a ratio is against the whole offered rate.
    pub best_static_at_top: bool,
    pub settings: Vec<SettingOnDrive>,
}

/// One setting over every drive, under one objective.
#[derive(Clone, Debug, Serialize)]
pub struct Aggregate {
    pub spec: String,
    pub pairs: usize,
    pub pairs_met: usize,
    pub share_met: f64,
    /// The median of the per-drive ratios (drives with a best static limit),
    /// whether the setting met the objective there or not.
    pub median_ratio: Option<f64>,
    pub drives_with_ratio: usize,
    /// The same over the drives where the setting met on every seed: a
    /// ratio that rose by missing counts for nothing here.
    pub median_ratio_met: Option<f64>,
    pub drives_met_with_ratio: usize,
    /// (drive, seed, value over bound), the five furthest over the bound
    /// (pairs that missed only).
    pub worst_pairs: Vec<(String, u64, f64)>,
    /// (drive, ratio), the five lowest ratios.
    pub lowest_ratios: Vec<(String, f64)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ObjectiveResult {
    pub objective: String,
    pub drives: Vec<DriveResult>,
    pub settings: Vec<Aggregate>,
}

#[derive(Debug, Serialize)]
pub struct FamilyReport {
    pub scenario: String,
    pub seeds: Vec<u64>,
    pub phase: String,
    pub static_points: usize,
    pub objectives: Vec<ObjectiveResult>,
    /// Drives asked for; fewer were run when the sweep was stopped.
    pub drives_asked: usize,
    pub wall_s: f64,
}

/// A sweep of `sweep`'s settings over `drives` (the sweep's own drive and
/// objective are replaced by each of `drives` and `objectives`).
pub struct FamilySweep {
    pub sweep: Sweep,
    pub drives: Vec<DeviceConfig>,
    pub objectives: Vec<Objective>,
    pub static_points: usize,
}

impl FamilySweep {
    /// The sweep of `sweep`'s settings over the drives of the list `drives`
    /// (see [`parse_drives`]), each starting in `state` when given, with
    /// `static_points` static limits per drive ([`STATIC_POINTS`] when not
    /// given); checked before anything runs.
    pub fn new(
        sweep: Sweep,
        drives: &str,
        objectives: Vec<Objective>,
        static_points: Option<usize>,
        state: Option<iosteer_device::StartState>,
    ) -> Result<FamilySweep, FamilyError> {
        let mut drives = parse_drives(drives)?;
        if let Some(state) = state {
            for drive in &mut drives {
                drive.precondition = Some(iosteer_device::PreconditionTable { state });
            }
        }
        let family = FamilySweep {
            sweep,
            drives,
            objectives,
            static_points: static_points.unwrap_or(STATIC_POINTS),
        };
        family.check()?;
        Ok(family)
    }

    /// Checks what can be checked before anything runs: the grid size, the
    /// specs, every drive's simulation.
    pub fn check(&self) -> Result<(), FamilyError> {
        if !(1..=20).contains(&self.static_points) {
            return Err(FamilyError::StaticPoints {
                points: self.static_points,
            });
        }
        for spec in &self.sweep.specs {
            let Some(stated) = stated_objective(spec)? else {
                continue;
            };
            if !self.objectives.contains(&stated) {
                let asked: Vec<String> = self.objectives.iter().map(|o| o.text()).collect();
                let problem = format!(
                    "a setting is judged by its own objective alone, and the sweep judges by {} only; add {} to the sweep's objectives",
                    asked.join(", "),
                    stated.text()
                );
                return Err(spec_objective(spec, &stated.text(), problem));
            }
        }
        (self.sweep.check_settings(true))
            .and_then(|()| self.sweep.check_runs(self.static_points))
            .map_err(|e| FamilyError::Settings(Box::new(e)))?;
        for drive in &self.drives {
            self.on(drive, self.sweep.specs.clone())
                .simulations()
                .map_err(|source| FamilyError::Sweep {
                    drive: drive.name.clone(),
                    source: Box::new(source),
                })?;
        }
        Ok(())
    }

    fn on(&self, drive: &DeviceConfig, specs: Vec<String>) -> Sweep {
        Sweep {
            workload: self.sweep.workload.clone(),
            device: drive.clone(),
            specs,
            seeds: self.sweep.seeds.clone(),
            objective: self.sweep.objective,
            phase: self.sweep.phase.clone(),
            baseline: self.sweep.baseline.clone(),
            slo: self.sweep.slo,
            threads: self.sweep.threads,
        }
    }

    /// What the sweep will run, for a line before it starts: a sweep of
    /// days is then known as one before its first drive ends.
    pub fn describe(&self) -> String {
        let (specs, seeds) = (self.sweep.specs.len(), self.sweep.seeds.len());
        let (drives, points) = (self.drives.len(), self.static_points);
        let runs = drives * seeds * (specs + points);
        format!("sweeping {specs} setting(s) of {} beside {points} static limits on each of {drives} drive(s), {seeds} seed(s): {runs} runs and the static search's",
            self.sweep.workload.label())
    }

    /// Runs every drive in turn (each drive's runs in parallel); `progress`
    /// hears each drive's results (one per objective) as it finishes, and
    /// when it returns `false` the sweep stops there and reports the drives
    /// run so far (a Ctrl-C an hour in keeps the hour's drives).
    pub fn run(
        &self,
        progress: &mut dyn FnMut(&[DriveResult]) -> bool,
    ) -> Result<FamilyReport, FamilyError> {
        let started = std::time::Instant::now();
        let mut per_objective: Vec<Vec<DriveResult>> = vec![Vec::new(); self.objectives.len()];
        for drive in &self.drives {
            let results = self.run_drive(drive).map_err(|source| FamilyError::Sweep {
                drive: drive.name.clone(),
                source: Box::new(source),
            })?;
            let go_on = progress(&results);
            for (list, result) in per_objective.iter_mut().zip(results) {
                list.push(result);
            }
            if !go_on {
                break;
            }
        }
        let objectives = self
            .objectives
            .iter()
            .zip(per_objective)
            .map(|(objective, drives)| ObjectiveResult {
                objective: objective.to_string(),
                settings: aggregate(&drives, &self.sweep.seeds),
                drives,
            })
            .collect();
        Ok(FamilyReport {
            scenario: self.sweep.workload.name().to_string(),
            seeds: self.sweep.seeds.clone(),
            phase: self.sweep.phase.clone(),
            static_points: self.static_points,
            objectives,
            drives_asked: self.drives.len(),
            wall_s: round(started.elapsed().as_secs_f64(), 1),
        })
    }

    /// One drive: the settings and the coarse grid, the descent below it
    /// for an objective no limit meets, then the refinement around each
    /// objective's best (only the new limits run), judged by every
    /// objective.
    fn run_drive(&self, drive: &DeviceConfig) -> Result<Vec<DriveResult>, SweepError> {
        let mut limits = static_grid(drive, self.static_points);
        limits.dedup();
        let grid = limits.clone();
        let top = *limits.last().expect("one limit at least");
        let coarse = self.with_limits(drive, &limits);
        let mut runs = coarse.run_reports(&coarse.simulations_of_specs()?)?;
        // Below the grid: the same halvings for every objective, so one
        // objective's runs there cannot stand for another's search.
        let halvings: Vec<u64> = std::iter::successors(Some(grid[0] / 2), |l| Some(l / 2))
            .take_while(|l| *l >= STATIC_FLOOR)
            .collect();
        for objective in &self.objectives {
            let met = self.met(drive, objective, &limits, &runs)?;
            if !grid.iter().any(|l| met.contains(l)) {
                highest_meeting(&halvings, |limit| {
                    self.meets_at(drive, objective, limit, &mut limits, &mut runs)
                })?;
            }
        }
        let mut extra: Vec<u64> = Vec::new();
        for objective in &self.objectives {
            let report = self.with_limits(drive, &limits).judge(&runs, objective)?;
            if let Some(best) = best_static(&report, &limits).filter(|b| *b < top) {
                let new: Vec<u64> = refinement(best)
                    .filter(|l| !limits.contains(l) && !extra.contains(l))
                    .collect();
                extra.extend(new);
            }
        }
        self.run_more(drive, extra, &mut limits, &mut runs)?;
        let whole = self.with_limits(drive, &limits);
        self.objectives
            .iter()
            .map(|o| Ok(drive_result(drive, &whole.judge(&runs, o)?, &limits, o)))
            .collect()
    }

    /// Whether the static `limit` meets `objective` on `drive`, running it
    /// first if it has not run.
    fn meets_at(
        &self,
        drive: &DeviceConfig,
        objective: &Objective,
        limit: u64,
        limits: &mut Vec<u64>,
        runs: &mut Vec<RunReport>,
    ) -> Result<bool, SweepError> {
        if !limits.contains(&limit) {
            self.run_more(drive, vec![limit], limits, runs)?;
        }
        Ok(self.met(drive, objective, limits, runs)?.contains(&limit))
    }

    /// The static limits that have run on `drive` and meet `objective`.
    fn met(
        &self,
        drive: &DeviceConfig,
        objective: &Objective,
        limits: &[u64],
        runs: &[RunReport],
    ) -> Result<Vec<u64>, SweepError> {
        let report = self.with_limits(drive, limits).judge(runs, objective)?;
        let first = report.points.len() - limits.len();
        let points = &report.points[first..];
        Ok(limits
            .iter()
            .zip(points)
            .filter(|(_, p)| p.meets)
            .map(|(l, _)| *l)
            .collect())
    }

    /// Runs the static limits `new` on `drive` and adds them to `limits`
    /// and their runs to `runs` (in the order `with_limits` gives).
    fn run_more(
        &self,
        drive: &DeviceConfig,
        new: Vec<u64>,
        limits: &mut Vec<u64>,
        runs: &mut Vec<RunReport>,
    ) -> Result<(), SweepError> {
        if new.is_empty() {
            return Ok(());
        }
        let specs_before = self.sweep.specs.len() + limits.len();
        let more = self.on(drive, new.iter().map(|&l| static_spec(l)).collect());
        let more_runs = more.run_reports(&more.simulations_of_specs()?)?;
        *runs = merge_seeds(std::mem::take(runs), specs_before, more_runs, new.len());
        limits.extend(new);
        Ok(())
    }

    /// The sweep of the settings and the static `limits` on `drive`.
    fn with_limits(&self, drive: &DeviceConfig, limits: &[u64]) -> Sweep {
        let specs = self.sweep.specs.iter().cloned();
        self.on(
            drive,
            specs
                .chain(limits.iter().map(|&l| static_spec(l)))
                .collect(),
        )
    }
}

/// The highest of `halvings` (highest first) that `meets`: the lowest
/// asked first (if it misses, none is taken to meet), then a bisection.
/// This rests on a lower limit never reading worse than a higher one, which
/// holds on the family (fewer writes, fewer collections): one run where
/// nothing meets and about log2 of the halvings where one does, not one
/// run a halving.
fn highest_meeting<E>(
    halvings: &[u64],
    mut meets: impl FnMut(u64) -> Result<bool, E>,
) -> Result<Option<u64>, E> {
    let Some(&floor) = halvings.last() else {
        return Ok(None);
    };
    if !meets(floor)? {
        return Ok(None);
    }
    let (mut missed, mut met) = (0, halvings.len() - 1);
    while missed < met {
        let mid = (missed + met) / 2;
        if meets(halvings[mid])? {
            met = mid;
        } else {
            missed = mid + 1;
        }
    }
    Ok(Some(halvings[met]))
}

/// Two sweeps' runs (each seed by seed, `a` and `b` specs a seed) as one,
/// each seed's runs of the first then of the second.
fn merge_seeds(
    first: Vec<RunReport>,
    a: usize,
    second: Vec<RunReport>,
    b: usize,
) -> Vec<RunReport> {
    let mut first = first.into_iter();
    let mut second = second.into_iter();
    let mut merged = Vec::new();
    while first.len() > 0 {
        merged.extend(first.by_ref().take(a));
        merged.extend(second.by_ref().take(b));
    }
    merged
}

/// The best static limit of `report` (its points after the settings are
/// the limits, in order) meeting the objective.
fn best_static(report: &SweepReport, limits: &[u64]) -> Option<u64> {
    let first = report.points.len() - limits.len();
    best(&report.points[first..]).map(|i| limits[i])
}

fn drive_result(
    drive: &DeviceConfig,
    report: &SweepReport,
    limits: &[u64],
    objective: &Objective,
) -> DriveResult {
    let first = report.points.len() - limits.len();
    let best_index = best(&report.points[first..]);
    let best_point = best_index.map(|i| &report.points[first + i]);
    let top = limits.iter().copied().max().unwrap_or(0);
    let best_mbps = best_point.map(|p| p.write_mbps);
    let per_seed = report
        .per_seed
        .clone()
        .unwrap_or_else(|| vec![report.points.clone()]);
    let settings = report.points[..first]
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            stated_objective(&p.spec)
                .ok()
                .flatten()
                .is_none_or(|stated| stated == *objective)
        })
        .map(|(i, p)| SettingOnDrive {
            spec: p.spec.clone(),
            write_mbps: p.write_mbps,
            write_min_mbps: p.write_min_mbps,
            ratio: best_mbps.filter(|b| *b > 0.0).map(|b| p.write_mbps / b),
            seeds: p.seeds,
            seeds_met: p.seeds_met,
            worst_over_bound: p.value_ms / p.bound_ms,
            over_bound: per_seed
                .iter()
                .map(|s| s[i].value_ms / s[i].bound_ms)
                .collect(),
            notes: p.notes.clone(),
        })
        .collect();
    DriveResult {
        drive: drive.name.clone(),
        link_mb_per_s: drive.timing.host_link_mb_per_s,
        best_static: best_point.map(|p| p.spec.clone()),
        best_static_mbps: best_mbps,
        best_static_at_top: best_index.is_some_and(|i| limits[i] == top),
        settings,
    }
}

/// Each setting's figures over every drive.
fn aggregate(drives: &[DriveResult], seeds: &[u64]) -> Vec<Aggregate> {
    let Some(first) = drives.first() else {
        return Vec::new();
    };
    first
        .settings
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let on_drives: Vec<(&str, &SettingOnDrive)> = drives
                .iter()
                .map(|d| (d.drive.as_str(), &d.settings[i]))
                .collect();
            let pairs = on_drives.iter().map(|(_, s)| s.seeds).sum();
            let pairs_met = on_drives.iter().map(|(_, s)| s.seeds_met).sum();
            let mut worst_pairs: Vec<(String, u64, f64)> = on_drives
                .iter()
                .flat_map(|(d, s)| {
                    s.over_bound
                        .iter()
                        .zip(seeds)
                        .map(move |(o, seed)| (d.to_string(), *seed, *o))
                })
                .collect();
            // Only the pairs that missed: over the bound.
            worst_pairs.retain(|p| p.2 > 1.0);
            worst_pairs.sort_by(|a, b| b.2.total_cmp(&a.2));
            worst_pairs.truncate(5);
            let met_ratios: Vec<f64> = (on_drives.iter())
                .filter(|(_, s)| s.seeds_met == s.seeds)
                .filter_map(|(_, s)| s.ratio)
                .collect();
            let mut ratios: Vec<(String, f64)> = on_drives
                .iter()
                .filter_map(|(d, s)| s.ratio.map(|r| (d.to_string(), r)))
                .collect();
            ratios.sort_by(|a, b| a.1.total_cmp(&b.1));
            let median_ratio = median(&ratios.iter().map(|r| r.1).collect::<Vec<_>>());
            let drives_with_ratio = ratios.len();
            ratios.truncate(5);
            Aggregate {
                spec: s.spec.clone(),
                pairs,
                pairs_met,
                share_met: pairs_met as f64 / pairs.max(1) as f64,
                median_ratio,
                drives_with_ratio,
                median_ratio_met: median(&met_ratios),
                drives_met_with_ratio: met_ratios.len(),
                worst_pairs,
                lowest_ratios: ratios,
            }
        })
        .collect()
}

/// The median of sorted `values` (the mean of the middle two when even).
fn median(values: &[f64]) -> Option<f64> {
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

mod text;
pub use text::{chart, drive_line, table};

#[cfg(test)]
mod tests;
