//! The answer of a run in one sentence per scheduler: the summary at the
//! top of report.html and the last lines `iosteer sim` prints, from one
//! implementation.
//!
//! A run with the phases `before` and `fill` (the built-in scenarios) is
//! judged by [`objective`]: steer's default, read p99 in the fill at most 2x
//! the unloaded p99. The unloaded p99 is the lowest `before` p99 of the runs
//! compared (the drive's own; a policy that slows reads before the fill must
//! not loosen its own bound), as `iosteer sweep` takes it. Other runs get
//! their read p99 and write rate without a verdict; a run that stopped early
//! is never said to meet anything.

use iosteer_sched::objective::{Bound, Objective};
use iosteer_sched::policy::steer::SteerConfig;

use crate::report::{PhaseReport, RunReport};

/// The phase an answer measures, and the phase that gives the unloaded
/// baseline of a relative objective.
const MEASURED: &str = "fill";
const BASELINE: &str = "before";

/// The objective answers are judged by: steer's default, so the summary
/// asks of every policy what steer is asked.
pub fn objective() -> Objective {
    SteerConfig::default().objective
}

/// A latency in the unit that reads best.
pub fn format_ms(ms: f64) -> String {
    if ms >= 10_000.0 {
        format!("{:.1} s", ms / 1e3)
    } else if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else {
        // Two decimals, as the terminal's tables: 1.96 against 2.28 is a
        // close call that one decimal would blur.
        format!("{ms:.2} ms")
    }
}

/// A ratio of latencies, as many digits as it deserves.
pub fn format_ratio(ratio: f64) -> String {
    if ratio >= 10.0 {
        format!("{ratio:.0}x")
    } else {
        format!("{ratio:.1}x")
    }
}

/// One verdict: "steer met p99<=2x (1.96 ms against 2.28 ms) and wrote
/// 17.2 MB/s", "fifo missed p99<=2x by 191x (436 ms against 2.28 ms) and
/// wrote 27.0 MB/s". `objective` is the objective's text and where it was
/// measured.
pub fn verdict(spec: &str, objective: &str, value_ms: f64, bound_ms: f64, mbps: f64) -> String {
    let (value, bound) = (format_ms(value_ms), format_ms(bound_ms));
    let mbps = crate::report::figure(mbps, 1);
    if value_ms <= bound_ms {
        format!("{spec} met {objective} ({value} against {bound}) and wrote {mbps} MB/s")
    } else {
        let by = format_ratio(value_ms / bound_ms);
        format!("{spec} missed {objective} by {by} ({value} against {bound}) and wrote {mbps} MB/s")
    }
}

/// What the answers of `runs` are judged by, when they are: "p99<=2x (read
/// p99 in the fill at most 2x the lowest before it: 2.28 ms)".
pub fn judged_by(runs: &[RunReport]) -> Option<String> {
    let objective = objective();
    let bound = format_ms(bound_ms(runs, &objective)?);
    let limit = match objective.bound {
        Bound::Relative(x) => format!("{x}x the lowest before it: {bound}"),
        Bound::Absolute(_) => bound,
    };
    Some(format!(
        "{} (read {} in the {MEASURED} at most {limit})",
        objective.text(),
        objective.metric
    ))
}

/// One sentence per run, in order.
pub fn answers(runs: &[RunReport]) -> Vec<String> {
    let objective = objective();
    let bound = bound_ms(runs, &objective);
    runs.iter()
        .map(|run| answer(run, &objective, bound))
        .collect()
}

/// The answers as the terminal ends with them: a heading saying what
/// judged them, then one indented sentence per run.
pub fn answers_text(runs: &[RunReport]) -> String {
    let judged = judged_by(runs).map_or(String::new(), |j| format!(", judged by {j}"));
    let mut out = format!("Answers{judged}:\n");
    for answer in answers(runs) {
        out += &format!("  {answer}\n");
    }
    out
}

/// The bound of `objective` over `runs`, milliseconds: `None` when a
/// relative objective has no baseline (no run has a `before` with reads).
fn bound_ms(runs: &[RunReport], objective: &Objective) -> Option<f64> {
    match objective.bound {
        Bound::Absolute(t) => Some(t.0 as f64 / 1e6),
        Bound::Relative(x) => runs
            .iter()
            .filter_map(|r| r.phase(BASELINE))
            .filter(|p| p.read.ops > 0)
            .filter_map(|p| value_ms(p, objective))
            .filter(|v| *v > 0.0)
            .min_by(f64::total_cmp)
            .map(|lowest| lowest * x),
    }
}

fn value_ms(phase: &PhaseReport, objective: &Objective) -> Option<f64> {
    phase
        .read
        .lat_us
        .metric(objective.metric)
        .map(|us| us / 1e3)
}

fn answer(run: &RunReport, objective: &Objective, bound_ms: Option<f64>) -> String {
    let judged = run.phase(MEASURED).filter(|p| p.read.ops > 0);
    match (judged, bound_ms) {
        (Some(phase), Some(bound)) if !run.interrupted => {
            let value = value_ms(phase, objective).unwrap_or(f64::NAN);
            verdict(
                &run.scheduler,
                &objective.text(),
                value,
                bound,
                phase.write.mbps,
            )
        }
        _ => described(run),
    }
}

/// A run without a verdict: its read p99 and write rate where measured.
fn described(run: &RunReport) -> String {
    let measured = run.phase(MEASURED).or_else(|| run.phase("all"));
    let Some(measured) = measured else {
        return format!("{}: nothing was measured", run.scheduler);
    };
    let mut sentence = if measured.read.ops == 0 {
        format!("{}: no reads completed in {}", run.scheduler, measured.name)
    } else if measured.name == "all" {
        let p99 = format_ms(measured.read.lat_us.p99 / 1e3);
        format!("{}: read p99 {p99} over the run", run.scheduler)
    } else {
        let p99 = format_ms(measured.read.lat_us.p99 / 1e3);
        format!("{}: {} read p99 {p99}", run.scheduler, measured.name)
    };
    let mbps = crate::report::figure(measured.write.mbps, 1);
    sentence += &format!("; wrote {mbps} MB/s");
    if run.interrupted {
        sentence += &format!(" (stopped early, at {:.1} s)", run.end_s());
    }
    sentence
}

#[cfg(test)]
mod tests;
