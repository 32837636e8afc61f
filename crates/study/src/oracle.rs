//! Oracle: the best write schedule with hindsight. A static limit and a
//! controller such as `steer` both choose the write rate without knowing
//! what comes next; the oracle chooses it knowing the whole run, so a
//! controller's write rate can be stated as a share of what was possible at
//! all on that run, not only of the best constant.
//!
//! # Search
//!
//! The space is piecewise-constant schedules: the measured phase (the
//! scenario's `fill`) cut into `segments` equal spans, each with its own
//! write bandwidth limit (netflix's `write.schedule`, kB/s) between `low`
//! and `high`; the first span's limit also holds from time zero (nothing is
//! written before the fill) and the last one's after the phase. A schedule
//! is judged by one whole deterministic simulation run, by the sweep's own
//! judge ([`crate::sweep::point`], the objective against the lowest baseline
//! of the search as [`crate::sweep::share_baseline`] takes it): it meets the
//! objective or not, and writes so many MB/s in the phase.
//!
//! 1. The best constant: the highest limit that meets the objective with
//!    every span equal, by bisection on a log scale from `low` (which must
//!    meet it, else nothing of the space is known to) to `high` (tried
//!    first), until the two ends are within `tolerance` of each other. It
//!    is run as the sweep's static spec (`write.current`), which a one-step
//!    schedule equals.
//! 2. Coordinate ascent from it: for each span in time order, the same
//!    bisection on that span's limit alone, from its present value to
//!    `high`, the others held; every run that meets the objective and
//!    writes more than the best so far becomes the best. `passes` rounds
//!    over all spans, fewer if a round improves nothing.
//! 3. Shapes replayed: for each compared setting (`steer`), its own write
//!    rate in each second of the phase, as a per-second schedule, scaled
//!    by one factor found by the same bisection (from 1/8 to 8 times, 1
//!    tried first): the timing a controller found, lifted or lowered as a
//!    whole with hindsight. The best of the ascent and the replays is the
//!    oracle.
//!
//! The result meets the objective (it is a run that did) and writes at least
//! as much as the best constant (the ascent starts there and only accepts
//! more). It is a local optimum, so a lower bound on what hindsight allows:
//! a controller's share of it is an upper bound on its share of the true
//! optimum, and a share above 1 says the controller found a timing these
//! schedules miss. What the search cannot do: lower one span to raise
//! another, move a replayed second on its own, or act within a second.
//! (An ascent from every span at `low` was tried: on the headline's
//! consumer-sata at `p99<=2x` it reached 13.96 MB/s where the ascent from
//! the constant reached 16.50, for half the runs; it is not kept.)
//! Feasibility is assumed to fall as a limit rises (bisection); where it
//! does not, the search finds a point of the edge, not the highest.
//!
//! Cost: the constant takes 2 + log2(ln(high/low) / ln(1 + tolerance))
//! runs, each span of each pass log2(ln(high/present) / ln(1 + tolerance))
//! (about 4 at 5%), each replay 2 + log2(ln 8 / ln(1 + tolerance)), each
//! run the length of the scenario; runs depend on each
//! other, so the search is sequential. Runs are cached by spec.

use std::collections::HashMap;

use iosteer_device::Device;
use iosteer_sched::limiter::Limit;
use iosteer_sched::{Nanos, Op};
use iosteer_sim::{SimError, Simulation};
use iosteer_workload::report::{round, Phase, RunReport};
use serde::Serialize;
use thiserror::Error;

use crate::objective::{Bound, Objective};
use crate::sweep::{first_column_width, point, share_baseline, Point, SweepError};

/// Most spans a schedule may have.
pub const MAX_SEGMENTS: usize = 1000;
/// Most rounds over the spans.
pub const MAX_PASSES: usize = 100;

/// What is wrong with an oracle search.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum OracleError {
    #[error("{segments} segments: expected 1 to {}", MAX_SEGMENTS)]
    Segments { segments: usize },
    #[error("{passes} passes: expected 0 to {}", MAX_PASSES)]
    Passes { passes: usize },
    #[error("limits {low}..{high} kB/s: expected 1 <= low < high")]
    Range { low: u64, high: u64 },
    #[error("tolerance {tolerance}: expected a share above 0 and at most 1, such as 0.05")]
    Tolerance { tolerance: f64 },
    #[error("the workload has no phase `{name}`; phases: {phases}")]
    NoPhase { name: String, phases: String },
    #[error("the phase `{name}` is too short for {segments} segments of at least 1 ms")]
    PhaseTooShort { name: String, segments: usize },
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(transparent)]
    Judge(#[from] SweepError),
}

/// A piecewise-constant write limit: span `k` starts at `starts[k]` (the
/// first at time zero) and has the limit `rates[k]`, kB/s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub starts: Vec<Nanos>,
    pub rates: Vec<u64>,
}

impl Schedule {
    fn constant(starts: &[Nanos], rate: u64) -> Schedule {
        Schedule {
            starts: starts.to_vec(),
            rates: vec![rate; starts.len()],
        }
    }

    fn with(&self, span: usize, rate: u64) -> Schedule {
        let mut changed = self.clone();
        changed.rates[span] = rate;
        changed
    }

    /// Every span has the same limit.
    pub fn is_constant(&self) -> bool {
        self.rates.windows(2).all(|w| w[0] == w[1])
    }

    /// The netflix spec that runs it: the sweep's static spec when constant,
    /// else a `write.schedule` with one step per change of limit.
    pub fn spec(&self) -> String {
        self.spec_with("")
    }

    /// [`Self::spec`] with netflix `settings` first (`read_bias=100`; none
    /// when empty).
    pub fn spec_with(&self, settings: &str) -> String {
        let settings = if settings.is_empty() {
            String::new()
        } else {
            format!("{settings},")
        };
        let top = self.rates.iter().copied().max().unwrap_or(1);
        let max = if top > Limit::UNLIMITED.max {
            format!(",write.max={top}")
        } else {
            String::new()
        };
        if self.is_constant() {
            return format!("netflix:{settings}write.limiter=bandwidth{max},write.current={top}");
        }
        format!(
            "netflix:{settings}write.limiter=bandwidth{max},write.schedule={}",
            self.steps()
        )
    }

    /// (start s, limit MB/s) where the limit changes.
    pub fn table(&self) -> Vec<(f64, f64)> {
        self.changes()
            .map(|(start, rate)| (round(start.as_secs_f64(), 3), rate as f64 / 1e3))
            .collect()
    }

    /// Each span whose limit differs from the one before (the first at
    /// time zero), with its limit.
    fn changes(&self) -> impl Iterator<Item = (Nanos, u64)> + '_ {
        self.starts
            .iter()
            .zip(&self.rates)
            .enumerate()
            .filter(|(k, (_, rate))| *k == 0 || self.rates[k - 1] != **rate)
            .map(|(k, (start, rate))| (if k == 0 { Nanos::ZERO } else { *start }, *rate))
    }

    /// The steps `START:kB/s` joined by `;`, a step only where the limit
    /// changes.
    pub fn steps(&self) -> String {
        let steps: Vec<String> = self
            .changes()
            .map(|(start, rate)| format!("{start}:{rate}"))
            .collect();
        steps.join(";")
    }
}

/// What one run of a schedule gave, as the search needs it.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Judged {
    pub meets: bool,
    pub write_mbps: f64,
}

/// A schedule and what its run gave.
pub type Tried = (Schedule, Judged);

/// The space searched and how finely.
#[derive(Clone, Debug)]
pub struct SearchSpace {
    /// Start of each span (the first is where the measured phase starts; its
    /// limit holds from time zero).
    pub starts: Vec<Nanos>,
    /// Lowest and highest limit, kB/s.
    pub low: u64,
    pub high: u64,
    /// Bisection stops when its ends are within this share of each other.
    pub tolerance: f64,
    pub passes: usize,
}

/// The search's answer: the best constant and the best schedule found.
#[derive(Clone, Debug)]
pub struct Found {
    pub constant: Tried,
    pub best: Tried,
    /// Where the best came from: `None`, the ascent from the constant;
    /// `Some((i, per_mille))`, shape `i` scaled by `per_mille`/1000.
    pub replayed: Option<(usize, u64)>,
}

impl SearchSpace {
    fn check(&self) -> Result<(), OracleError> {
        let segments = self.starts.len();
        if segments == 0 || segments > MAX_SEGMENTS {
            return Err(OracleError::Segments { segments });
        }
        if self.passes > MAX_PASSES {
            return Err(OracleError::Passes {
                passes: self.passes,
            });
        }
        if self.low == 0 || self.low >= self.high {
            return Err(OracleError::Range {
                low: self.low,
                high: self.high,
            });
        }
        if !(self.tolerance > 0.0 && self.tolerance <= 1.0) {
            return Err(OracleError::Tolerance {
                tolerance: self.tolerance,
            });
        }
        Ok(())
    }

    /// The point between `lo` and `hi` (in the middle on a log scale) that
    /// bisection tries next, or `None` when they are within the tolerance.
    fn midpoint(&self, lo: u64, hi: u64) -> Option<u64> {
        if hi as f64 <= lo as f64 * (1.0 + self.tolerance) {
            return None;
        }
        let mid = ((lo as f64) * (hi as f64)).sqrt().round() as u64;
        (mid > lo && mid < hi).then_some(mid)
    }

    /// Runs the search (see the module's top) with `judge` running one
    /// schedule, replaying `shapes`; `None` when even `low` does not meet
    /// the objective.
    pub fn search<E>(
        &self,
        shapes: &[Schedule],
        judge: &mut dyn FnMut(&Schedule) -> Result<Judged, E>,
    ) -> Result<Option<Found>, E>
    where
        E: From<OracleError>,
    {
        self.check()?;
        let Some(constant) = self.best_constant(judge)? else {
            return Ok(None);
        };
        let mut best = self.ascend(constant.clone(), judge)?;
        let mut replayed = None;
        for (i, shape) in shapes.iter().enumerate() {
            if let Some((per_mille, replay)) = self.scale(shape, judge)? {
                if replay.1.write_mbps > best.1.write_mbps {
                    best = replay;
                    replayed = Some((i, per_mille));
                }
            }
        }
        Ok(Some(Found {
            constant,
            best,
            replayed,
        }))
    }

    /// `shape` with every limit times `per_mille`/1000, within 1..=`high`.
    fn scaled(&self, shape: &Schedule, per_mille: u64) -> Schedule {
        let rates = shape
            .rates
            .iter()
            .map(|r| (r * per_mille / 1000).clamp(1, self.high))
            .collect();
        Schedule {
            starts: shape.starts.clone(),
            rates,
        }
    }

    /// The scale of `shape` (from 1/8 to 8, by bisection, 1 first) that
    /// writes the most while meeting the objective; `None` if even 1/8
    /// misses it.
    fn scale<E>(
        &self,
        shape: &Schedule,
        judge: &mut dyn FnMut(&Schedule) -> Result<Judged, E>,
    ) -> Result<Option<(u64, Tried)>, E> {
        let (lowest, highest) = (125, 8000);
        let mut best: Option<(u64, Tried)> = None;
        let mut try_scale = |per_mille: u64| -> Result<bool, E> {
            let schedule = self.scaled(shape, per_mille);
            let judged = judge(&schedule)?;
            if judged.meets
                && best
                    .as_ref()
                    .is_none_or(|b| judged.write_mbps > b.1 .1.write_mbps)
            {
                best = Some((per_mille, (schedule, judged)));
            }
            Ok(judged.meets)
        };
        let (mut lo, mut hi) = if try_scale(1000)? {
            (1000, highest)
        } else if try_scale(lowest)? {
            (lowest, 1000)
        } else {
            return Ok(None);
        };
        while let Some(mid) = self.midpoint(lo, hi) {
            if try_scale(mid)? {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(best)
    }

    fn best_constant<E>(
        &self,
        judge: &mut dyn FnMut(&Schedule) -> Result<Judged, E>,
    ) -> Result<Option<Tried>, E> {
        let at = |rate| Schedule::constant(&self.starts, rate);
        let mut best = (at(self.low), judge(&at(self.low))?);
        if !best.1.meets {
            return Ok(None);
        }
        let top = judge(&at(self.high))?;
        if top.meets {
            return Ok(Some((at(self.high), top)));
        }
        let (mut lo, mut hi) = (self.low, self.high);
        while let Some(mid) = self.midpoint(lo, hi) {
            let judged = judge(&at(mid))?;
            if judged.meets {
                lo = mid;
                if judged.write_mbps >= best.1.write_mbps {
                    best = (at(mid), judged);
                }
            } else {
                hi = mid;
            }
        }
        Ok(Some(best))
    }

    /// Coordinate ascent from `start` (see the module's top).
    fn ascend<E>(
        &self,
        start: Tried,
        judge: &mut dyn FnMut(&Schedule) -> Result<Judged, E>,
    ) -> Result<Tried, E> {
        let mut best = start;
        for _ in 0..self.passes {
            let mut improved = false;
            for span in 0..self.starts.len() {
                let (mut lo, mut hi) = (best.0.rates[span], self.high);
                while let Some(mid) = self.midpoint(lo, hi) {
                    let candidate = best.0.with(span, mid);
                    let judged = judge(&candidate)?;
                    if !judged.meets {
                        hi = mid;
                        continue;
                    }
                    lo = mid;
                    if judged.write_mbps > best.1.write_mbps {
                        best = (candidate, judged);
                        improved = true;
                    }
                }
            }
            if !improved {
                break;
            }
        }
        Ok(best)
    }
}

/// The phase `name` of `sim`.
fn measured_phase<'a>(sim: &'a Simulation, name: &str) -> Result<&'a Phase, OracleError> {
    sim.workload
        .phases
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| OracleError::NoPhase {
            name: name.to_string(),
            phases: sim
                .workload
                .phases
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The spans of `segments` equal parts of the phase `name` of `sim`.
pub fn phase_segments(
    sim: &Simulation,
    name: &str,
    segments: usize,
) -> Result<Vec<Nanos>, OracleError> {
    if segments == 0 || segments > MAX_SEGMENTS {
        return Err(OracleError::Segments { segments });
    }
    let phase = measured_phase(sim, name)?;
    let length = phase.end.0.saturating_sub(phase.start.0);
    if length / (segments as u64) < 1_000_000 {
        return Err(OracleError::PhaseTooShort {
            name: name.to_string(),
            segments,
        });
    }
    // Whole milliseconds, so a step's start reads back as written.
    Ok((0..segments as u64)
        .map(|k| Nanos(phase.start.0 + length * k / segments as u64 / 1_000_000 * 1_000_000))
        .collect())
}

/// One setting's figures in the oracle's report, judged as the sweep
/// judges; `share` is its write MB/s over the oracle's.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub name: String,
    pub point: Point,
    pub share: f64,
}

/// The oracle's answer on one run of a workload.
#[derive(Clone, Debug, Serialize)]
pub struct OracleReport {
    pub drive: String,
    pub seed: u64,
    pub objective: String,
    /// The objective's metric (`p99`), whose read value the table shows.
    pub metric: String,
    pub phase: String,
    /// The oracle's schedule: (start s, limit MB/s), a step where the
    /// limit changes; empty when nothing was found.
    pub schedule: Vec<(f64, f64)>,
    /// Where it came from: the ascent from the best constant, or the
    /// replay of a compared setting's per-second writes, scaled.
    pub found_by: String,
    /// The oracle, the best constant, then the compared settings; empty
    /// when not even the lowest limit meets the objective.
    pub outcomes: Vec<Outcome>,
    /// Simulation runs made (distinct specs), and the wall time.
    pub runs: usize,
    pub wall_s: f64,
}

/// An oracle search on one run of a workload.
pub struct Oracle<'a> {
    pub sim: &'a Simulation,
    pub objective: Objective,
    /// The measured phase (split into spans) and the baseline phase of a
    /// relative objective.
    pub phase: String,
    pub baseline: String,
    pub space: SearchSpace,
    /// Settings to judge beside the oracle (`steer:objective=p99<=2x`).
    pub compare: Vec<String>,
    /// Netflix settings every schedule runs with besides its limit
    /// (`read_bias=100`: reads first, as `steer` sends them); empty: the
    /// defaults, as the sweep's static limits.
    pub netflix: String,
}

/// Runs specs on one aged drive, judges them and remembers every point.
struct Runner<'a> {
    oracle: &'a Oracle<'a>,
    aged: Device,
    points: HashMap<String, Point>,
    lowest_baseline: Option<f64>,
    heard: &'a mut dyn FnMut(&Point),
}

impl Runner<'_> {
    fn point(&mut self, spec: &str) -> Result<Point, OracleError> {
        match self.points.get(spec) {
            Some(p) => Ok(p.clone()),
            None => self.run(spec).map(|(p, _)| p),
        }
    }

    /// Runs `spec` (again, if it ran before) and records its point.
    fn run(&mut self, spec: &str) -> Result<(Point, RunReport), OracleError> {
        let o = self.oracle;
        let run = o.sim.run(spec, &self.aged, &mut |_, _| true)?;
        let p = point(&run, &o.objective, &o.phase, &o.baseline)?;
        if let Some(b) = p.baseline_ms.filter(|b| *b > 0.0) {
            self.lowest_baseline = Some(self.lowest_baseline.map_or(b, |l| l.min(b)));
        }
        (self.heard)(&p);
        self.points.insert(spec.to_string(), p.clone());
        Ok((p, run))
    }

    /// `spec`'s write rate in each second of the measured phase, as a
    /// per-second schedule (kB/s, at least 1).
    fn shape(&mut self, spec: &str) -> Result<Schedule, OracleError> {
        let (_, run) = self.run(spec)?;
        let phase = measured_phase(self.oracle.sim, &self.oracle.phase)?;
        let first = phase.start.0 / 1_000_000_000;
        let last = phase.end.0.div_ceil(1_000_000_000);
        let mut rates = vec![1; (last - first) as usize];
        for second in run
            .series
            .iter()
            .filter(|s| (first..last).contains(&s.second))
        {
            let kbps = second.classes[Op::Write.index()].mbps * 1e3;
            rates[(second.second - first) as usize] = (kbps.round() as u64).max(1);
        }
        Ok(Schedule {
            starts: (first..last).map(Nanos::from_secs).collect(),
            rates,
        })
    }

    /// Whether `p` meets the objective against the lowest baseline so far.
    fn meets(&self, p: &Point) -> bool {
        match (self.oracle.objective.bound, self.lowest_baseline) {
            (Bound::Relative(x), Some(lowest)) => p.meets_own && p.value_ms <= lowest * x,
            _ => p.meets,
        }
    }

    fn judge(&mut self, schedule: &Schedule) -> Result<Judged, OracleError> {
        let p = self.point(&schedule.spec_with(&self.oracle.netflix))?;
        Ok(Judged {
            meets: self.meets(&p),
            write_mbps: p.write_mbps,
        })
    }
}

impl Oracle<'_> {
    /// Searches (see the module's top) and judges the compared settings on
    /// the same run; `heard` hears each run's point as it is made.
    pub fn run(&self, heard: &mut dyn FnMut(&Point)) -> Result<OracleReport, OracleError> {
        self.space.check()?;
        let started = std::time::Instant::now();
        let mut runner = Runner {
            oracle: self,
            aged: self.sim.aged_device()?,
            points: HashMap::new(),
            lowest_baseline: None,
            heard,
        };
        let shapes = self
            .compare
            .iter()
            .map(|spec| runner.shape(spec))
            .collect::<Result<Vec<_>, _>>()?;
        let found = self.space.search(&shapes, &mut |s| runner.judge(s))?;
        let mut named = Vec::new();
        if let Some(found) = &found {
            let settings = &self.netflix;
            named.push(("oracle".to_string(), found.best.0.spec_with(settings)));
            let constant = found.constant.0.spec_with(settings);
            named.push(("best constant".to_string(), constant));
        }
        for spec in &self.compare {
            named.push((spec.clone(), spec.clone()));
        }
        let mut points: Vec<Point> = runner.points.values().cloned().collect();
        share_baseline(&mut points, &self.objective);
        let judged: HashMap<&str, &Point> = points.iter().map(|p| (p.spec.as_str(), p)).collect();
        let oracle_mbps = named
            .first()
            .filter(|_| found.is_some())
            .map_or(f64::NAN, |(_, spec)| judged[spec.as_str()].write_mbps);
        let outcomes = named
            .iter()
            .map(|(name, spec)| {
                let point = judged[spec.as_str()].clone();
                Outcome {
                    name: name.clone(),
                    share: round(point.write_mbps / oracle_mbps, 3),
                    point,
                }
            })
            .collect();
        Ok(OracleReport {
            drive: self.sim.device.name.clone(),
            seed: self.sim.workload.seed,
            objective: self.objective.to_string(),
            metric: self.objective.metric.to_string(),
            phase: self.phase.clone(),
            schedule: found.as_ref().map(|f| f.best.0.table()).unwrap_or_default(),
            found_by: match found.as_ref().map(|f| f.replayed) {
                None => String::new(),
                Some(None) => "ascent from the best constant".into(),
                Some(Some((i, per_mille))) => format!(
                    "{}'s per-second writes x{:.3}",
                    self.compare[i],
                    per_mille as f64 / 1e3
                ),
            },
            outcomes,
            runs: runner.points.len(),
            wall_s: round(started.elapsed().as_secs_f64(), 1),
        })
    }
}

/// The terminal table of a report.
pub fn table(report: &OracleReport) -> String {
    let mut out = format!(
        "oracle on {} (seed {}), phase {}; objective: {}; {} runs in {:.0} s\n",
        report.drive, report.seed, report.phase, report.objective, report.runs, report.wall_s
    );
    if report.schedule.is_empty() {
        out += "no schedule of the space meets the objective (not even the lowest limit)\n";
    } else {
        let steps: Vec<String> = report
            .schedule
            .iter()
            .map(|(s, mbps)| format!("{s}s:{mbps:.1}"))
            .collect();
        out += &format!(
            "  oracle ({}), limit MB/s from each start: {}\n",
            report.found_by,
            steps.join(" ")
        );
    }
    let width = first_column_width("setting", report.outcomes.iter().map(|o| o.name.as_str()));
    out += &format!(
        "  {:<width$}  {:>10}  {:>8}  {:>9}  {:>8}  {:>11}  meets\n",
        "setting",
        "write MB/s",
        "share",
        format!("read {}", report.metric),
        "bound ms",
        "over bound"
    );
    for o in &report.outcomes {
        let p = &o.point;
        out += &format!(
            "  {:<width$}  {:>10.2}  {:>8.3}  {:>9.2}  {:>8.2}  {:>11.3}  {}\n",
            o.name,
            p.write_mbps,
            o.share,
            p.value_ms,
            p.bound_ms,
            p.value_ms / p.bound_ms,
            if p.meets { "yes" } else { "no" }
        );
    }
    for o in report.outcomes.iter().filter(|o| o.name != o.point.spec) {
        out += &format!("  {}: {}\n", o.name, o.point.spec);
    }
    out
}

#[cfg(test)]
mod tests;
