//! What a probe measured: each step's figures, the report, and how it
//! prints (table), exports (CSV, JSON) and draws (SVG).

use std::path::{Path, PathBuf};

use iosteer_workload::chart::{
    best_ring, bound_line, draw_failed, frame, legend_upper_left, svg_file, write_outputs, Canvas,
    DrawResult, OutputError, BLUE, RED,
};
use iosteer_workload::html::{self, Context};
use plotters::prelude::*;
use serde::Serialize;

use super::{Outcome, ProbeOptions, Throttle};

/// One step's figures (latencies in ms, rates in MB/s of 10^6 bytes), of
/// what completed in its measured part.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// The write rate asked, bytes per second (`null`: the baseline).
    pub rate_bytes_per_s: Option<u64>,
    /// The scheduler spec it ran.
    pub spec: String,
    pub write_mbps: f64,
    pub read_mbps: f64,
    pub read_ops: u64,
    pub read_p50_ms: f64,
    pub read_p99_ms: f64,
    pub read_p999_ms: f64,
    pub read_slo_violations: u64,
    pub write_p99_ms: f64,
    /// The objective's metric of the measured reads.
    pub value_ms: f64,
    /// Whether it meets the objective (`null`: the baseline, or a step cut short).
    pub meets: Option<bool>,
    /// Cut short (Ctrl-C or an error).
    pub interrupted: bool,
    /// What the run said of itself (a busy machine waking the loop late).
    pub notes: Vec<String>,
}

impl Step {
    pub fn asked_mbps(&self) -> Option<f64> {
        self.rate_bytes_per_s.map(|r| r as f64 / 1e6)
    }
}

#[derive(Debug, Serialize)]
pub struct ProbeReport {
    /// What was probed.
    pub target: String,
    pub reads: String,
    pub writes: String,
    pub throttle: Throttle,
    pub step_s: f64,
    pub settle_s: f64,
    pub objective: String,
    /// The bound the objective's metric must stay within, ms (`null` when
    /// the baseline measured no reads or was cut short).
    pub bound_ms: Option<f64>,
    pub baseline: Step,
    pub steps: Vec<Step>,
    /// Index in `steps` of the highest rate that meets the objective.
    pub best: Option<usize>,
    /// Why the stepping ended.
    pub stopped: String,
    pub notes: Vec<String>,
    pub wall_s: f64,
}

/// What the table alone would not say.
pub(super) fn notes(report: &ProbeReport, options: &ProbeOptions) -> Vec<String> {
    let mut notes = Vec::new();
    // Reads asked faster than the drive serves them: the baseline, and the
    // bound from it, are of a saturated drive.
    if let super::ReadLoad::Rate(asked) = options.reads {
        let (read, asked) = (report.baseline.read_mbps, asked / 1e6);
        if !report.baseline.interrupted && read < 0.9 * asked {
            notes.push(format!(
                "the baseline read {read:.1} MB/s of the {asked:.1} MB/s asked (--read-rate): the drive could not serve the reads alone, so the bound comes from a saturated drive; ask less"
            ));
        }
    }
    let Some(best) = report.best else {
        return notes;
    };
    if let Some(miss) = report.steps[..best]
        .iter()
        .find(|s| s.meets == Some(false) && !s.interrupted)
    {
        notes.push(format!(
            "{:.1} MB/s missed the objective below the best: the boundary is noisy there; a longer --step-time measures it better",
            miss.asked_mbps().unwrap_or(0.0)
        ));
    }
    let last = options.rates.len() - 1;
    if best == last {
        notes.push(format!(
            "the highest rate tried, {:.1} MB/s, met the objective: the limit may be higher (raise --max)",
            report.steps[best].asked_mbps().unwrap_or(0.0)
        ));
    }
    if options.throttle == Throttle::Scheduler {
        let step = &report.steps[best];
        let asked = step.asked_mbps().unwrap_or(0.0);
        if step.write_mbps < 0.9 * asked {
            notes.push(format!(
                "at the best step the drive wrote {:.1} of the {asked:.1} MB/s allowed: the drive, not the limit, held the writes",
                step.write_mbps
            ));
        }
    }
    notes
}

/// Row `i` of the table: the baseline, then the steps from 1.
fn step_name(i: usize) -> String {
    if i == 0 {
        "base".into()
    } else {
        i.to_string()
    }
}

/// The terminal table.
pub fn table(report: &ProbeReport) -> String {
    let mut out = format!(
        "probe of {}: {}; {}\n",
        report.target, report.reads, report.writes
    );
    out += &format!(
        "steps of {} s measured after {} s; objective: {}",
        report.step_s, report.settle_s, report.objective
    );
    out += &match report.bound_ms {
        Some(b) => format!(" (bound {b:.2} ms)\n"),
        None => "\n".into(),
    };
    out += &format!(
        "  {:>4}  {:>10}  {:>10}  {:>9}  {:>8}  {:>8}  {:>10}  {:>6}  {}\n",
        "step",
        "asked MB/s",
        "write MB/s",
        "read MB/s",
        "read p50",
        "read p99",
        "read p99.9",
        ">SLO",
        "meets"
    );
    let rows = std::iter::once(&report.baseline).chain(&report.steps);
    for (i, s) in rows.enumerate() {
        let asked = s
            .asked_mbps()
            .map_or("-".to_string(), |a| format!("{a:.1}"));
        let mark = match (s.meets, s.interrupted) {
            (_, true) => "interrupted",
            (None, _) => "baseline",
            (Some(true), _) if report.best == Some(i - 1) => "yes  <- best",
            (Some(true), _) => "yes",
            (Some(false), _) => "no",
        };
        out += &format!(
            "  {:>4}  {asked:>10}  {:>10.1}  {:>9.1}  {:>8.2}  {:>8.2}  {:>10.2}  {:>6}  {mark}\n",
            step_name(i),
            s.write_mbps,
            s.read_mbps,
            s.read_p50_ms,
            s.read_p99_ms,
            s.read_p999_ms,
            s.read_slo_violations
        );
    }
    out += &format!("stopped: {}\n", report.stopped);
    out += &match report.best.map(|i| &report.steps[i]) {
        Some(s) => {
            let how = match report.throttle {
                Throttle::Scheduler => "; the setting",
                Throttle::Writer => ", issued by the writer through",
            };
            format!(
                "highest write rate meeting the objective: {:.1} MB/s asked ({:.1} written){how} {}\n",
                s.asked_mbps().unwrap_or(0.0),
                s.write_mbps,
                s.spec
            )
        }
        None => "no write rate met the objective\n".into(),
    };
    for note in &report.notes {
        out += &format!("note: {note}\n");
    }
    for (i, s) in std::iter::once(&report.baseline)
        .chain(&report.steps)
        .enumerate()
    {
        for note in &s.notes {
            out += &format!("note: step {}: {note}\n", step_name(i));
        }
    }
    out
}

/// The steps as CSV, one line each, the baseline first.
pub fn csv(report: &ProbeReport) -> String {
    let mut out = String::from(
        "step,asked_mbps,spec,write_mbps,read_mbps,read_p50_ms,read_p99_ms,read_p999_ms,read_slo_violations,write_p99_ms,value_ms,meets\n",
    );
    for (i, s) in std::iter::once(&report.baseline)
        .chain(&report.steps)
        .enumerate()
    {
        let asked = s.asked_mbps().map_or(String::new(), |a| format!("{a:.3}"));
        let meets = s.meets.map_or(String::new(), |m| m.to_string());
        out += &format!(
            "{i},{asked},\"{}\",{:.3},{:.3},{:.3},{:.3},{:.3},{},{:.3},{:.3},{meets}\n",
            s.spec,
            s.write_mbps,
            s.read_mbps,
            s.read_p50_ms,
            s.read_p99_ms,
            s.read_p999_ms,
            s.read_slo_violations,
            s.write_p99_ms,
            s.value_ms
        );
    }
    out
}

/// probe.csv, probe.svg, probe.json, report.html (headed by `context`) and
/// each run's one-second series in `dir`; returns the files written.
pub fn write_out(
    dir: &Path,
    outcome: &Outcome,
    metric: &str,
    context: &Context,
) -> Result<Vec<PathBuf>, OutputError> {
    let mut written = write_outputs(dir, &outcome.runs)?;
    let write = |path: PathBuf, text: String| {
        std::fs::write(&path, text).map_err(|source| OutputError::Write {
            path: path.clone(),
            source,
        })?;
        Ok::<_, OutputError>(path)
    };
    written.push(write(dir.join("probe.csv"), csv(&outcome.report))?);
    let json = serde_json::to_string_pretty(&outcome.report).expect("a report serializes");
    written.push(write(dir.join("probe.json"), json)?);
    let path = dir.join("probe.svg");
    chart(&path, &outcome.report, metric).map_err(|e| draw_failed(&path, e))?;
    written.push(path);
    let page = crate::page::probe_page(context, &outcome.report, metric)
        .map_err(|e| draw_failed(&dir.join(html::FILE_NAME), e))?;
    written.push(html::write(dir, &page)?);
    Ok(written)
}

/// Write MB/s against the objective's read metric, step by step (each point
/// labelled with the rate asked), with the bound dashed and the best ringed.
/// Text is SVG `<text>`, so no font is needed to draw it.
pub fn chart(path: &Path, report: &ProbeReport, metric: &str) -> DrawResult {
    svg_file(path, CHART_SIZE, |root| draw_chart(root, report, metric))
}

/// The size of the step curve.
pub const CHART_SIZE: (u32, u32) = (900, 480);

/// The step curve, drawn on `root` (a file or a page's inline SVG).
pub fn draw_chart(root: &Canvas, report: &ProbeReport, metric: &str) -> DrawResult {
    let steps: Vec<&Step> = std::iter::once(&report.baseline)
        .chain(&report.steps)
        .collect();
    let bound = report.bound_ms.unwrap_or(f64::NAN);
    let x_max = steps.iter().map(|s| s.write_mbps).fold(1.0, f64::max) * 1.15;
    let values = steps.iter().map(|s| s.value_ms).chain([bound]);
    let finite = values.filter(|v| v.is_finite() && *v > 0.0);
    let (lo, hi) = finite.fold((f64::MAX, 0.01f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = (lo.min(hi) * 0.6, hi * 2.0);
    let caption = format!(
        "probe of {}: write MB/s against read {metric}",
        report.target
    );
    let mut c = frame(root, &caption).build_cartesian_2d(0f64..x_max, (lo..hi).log_scale())?;
    c.configure_mesh()
        .x_desc("write MB/s written in the measured part of each step")
        .y_desc(format!("read {metric} (ms)"))
        .draw()?;
    let points: Vec<(f64, f64)> = steps
        .iter()
        .map(|s| (s.write_mbps, s.value_ms.max(lo)))
        .collect();
    c.draw_series(LineSeries::new(points.clone(), BLUE.stroke_width(1)))?;
    c.draw_series(steps.iter().zip(&points).map(|(s, p)| {
        let color = if s.meets == Some(false) { RED } else { BLUE };
        Circle::new(*p, 4, color.filled())
    }))?
    .label(format!("read {metric} (red: misses the objective)"))
    .legend(|(x, y)| Circle::new((x + 9, y), 4, BLUE.filled()));
    c.draw_series(steps.iter().zip(&points).map(|(s, p)| {
        let text = s
            .asked_mbps()
            .map_or("baseline".to_string(), |a| format!("{a:.1}"));
        Text::new(text, (p.0, p.1 * 1.12), ("sans-serif", 11))
    }))?;
    if bound.is_finite() {
        bound_line(&mut c, x_max, bound, &report.objective)?;
    }
    if let Some(i) = report.best {
        let s = &report.steps[i];
        let at = (s.write_mbps, s.value_ms.max(lo));
        let label = format!("best: {:.1} MB/s asked", s.asked_mbps().unwrap_or(0.0));
        best_ring(&mut c, at, label)?;
    }
    legend_upper_left(&mut c)
}
