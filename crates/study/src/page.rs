//! The report.html of a sweep and of a probe: the page frame and the run
//! pages are [`iosteer_workload::html`]'s; this fills it with a study's
//! question, answer, chart and table.

use std::path::{Path, PathBuf};

use iosteer_workload::chart::{draw_failed, write_failed, OutputError};
use iosteer_workload::html::{self, chart, Context, HtmlError, Page};
use iosteer_workload::summary::{format_ms, verdict};

use crate::probe::{self, ProbeReport};
use crate::sweep::{self, Point, SweepReport};

/// Writes a sweep's `sweep.json` and report.html into `dir` (created); the
/// paths written.
pub fn write_sweep(
    dir: &Path,
    report: &SweepReport,
    context: &Context,
) -> Result<Vec<PathBuf>, OutputError> {
    std::fs::create_dir_all(dir).map_err(|e| write_failed(dir, e))?;
    let json = dir.join("sweep.json");
    let text = serde_json::to_string_pretty(report).expect("a report serializes");
    std::fs::write(&json, text).map_err(|e| write_failed(&json, e))?;
    let page =
        sweep_page(context, report).map_err(|e| draw_failed(&dir.join(html::FILE_NAME), e))?;
    Ok(vec![json, html::write(dir, &page)?])
}

/// The page of a sweep: every setting judged, the trade-off chart, the table.
pub fn sweep_page(context: &Context, report: &SweepReport) -> Result<String, HtmlError> {
    let mut page = Page::new("iosteer sweep report");
    for warning in &context.warnings {
        page.warning(warning);
    }
    if !report.not_run.is_empty() {
        page.warning(&format!(
            "this sweep was stopped early: {} setting(s) did not run on every seed and are not judged ({})",
            report.not_run.len(),
            report.not_run.join(", ")
        ));
    }
    let seeds: Vec<String> = report.seeds.iter().map(u64::to_string).collect();
    let question = format!(
        "which of {} settings writes the most while reads keep {} in the {} phase of {} on {} (seed {})?",
        report.points.len(),
        report.objective,
        report.phase,
        report.scenario,
        report.drive,
        seeds.join(",")
    );
    let mut answers: Vec<String> = report
        .points
        .iter()
        .map(|p| sweep_answer(p, &report.objective))
        .collect();
    answers.push(match &report.best {
        Some(spec) => format!("best setting meeting the objective: {spec}"),
        None => "no setting meets the objective".into(),
    });
    page.summary(&question, &answers, &context.command);
    page.heading("Write rate against read latency");
    page.chart(&chart("sweep", sweep::CHART_SIZE, |root| {
        sweep::draw_chart(root, report)
    })?);
    page.heading("Settings");
    page.preformatted(&sweep::table(report));
    if let Some(config) = &context.drive_config {
        page.heading("Drive configuration");
        page.preformatted(config);
    }
    Ok(page.finish())
}

/// "steer met p99<=2x (1.50 ms against 2.00 ms) and wrote 17.2 MB/s".
fn sweep_answer(point: &Point, objective: &str) -> String {
    if point.meets || (point.bound_ms > 0.0 && point.value_ms > point.bound_ms) {
        verdict(
            &point.spec,
            objective,
            point.value_ms,
            point.bound_ms,
            point.write_mbps,
        )
    } else {
        format!(
            "{} did not meet {objective} on every seed ({} of {}); wrote {:.1} MB/s",
            point.spec, point.seeds_met, point.seeds, point.write_mbps
        )
    }
}

/// The page of a probe: the answer, the step curve, the table, the notes;
/// a probe that stopped early says so at the top.
pub fn probe_page(
    context: &Context,
    report: &ProbeReport,
    metric: &str,
) -> Result<String, HtmlError> {
    let mut page = Page::new("iosteer probe report");
    for warning in &context.warnings {
        page.warning(warning);
    }
    if report.baseline.interrupted || report.steps.iter().any(|s| s.interrupted) {
        page.warning(&format!(
            "the probe stopped before its end ({}): the steps show what was measured",
            report.stopped
        ));
    }
    let question = format!(
        "what is the highest write rate ({}) {} takes while reads ({}) keep {}?",
        report.writes, report.target, report.reads, report.objective
    );
    let answer = match report.best.map(|i| &report.steps[i]) {
        Some(best) => format!(
            "{}: {:.1} MB/s asked ({:.1} MB/s written) kept read {metric} at {}; stepping ended: {}",
            best.spec,
            best.asked_mbps().unwrap_or(0.0),
            best.write_mbps,
            format_ms(best.value_ms),
            report.stopped
        ),
        None => format!(
            "no rate tried met the objective; stepping ended: {}",
            report.stopped
        ),
    };
    page.summary(&question, &[answer], &context.command);
    page.heading("Write rate against read latency, step by step");
    page.chart(&chart("probe", probe::CHART_SIZE, |root| {
        probe::draw_chart(root, report, metric)
    })?);
    page.heading("Steps");
    page.preformatted(&probe::table(report));
    page.notes(&report.notes);
    if let Some(config) = &context.drive_config {
        page.heading("Drive configuration");
        page.preformatted(config);
    }
    Ok(page.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(spec: &str, value_ms: f64, meets: bool) -> Point {
        Point {
            spec: spec.into(),
            write_mbps: 17.23,
            read_mbps: 200.0,
            read_p99_ms: value_ms,
            read_p999_ms: value_ms * 2.0,
            read_slo_violations: 0,
            write_p99_ms: 5.0,
            write_max_ms: 9.0,
            baseline_ms: Some(1.0),
            value_ms,
            bound_ms: 2.0,
            meets,
            meets_own: meets,
            seeds: 1,
            seeds_met: usize::from(meets),
            write_min_mbps: 17.23,
            notes: Vec::new(),
        }
    }

    #[test]
    fn each_setting_is_judged_in_a_sentence() {
        assert_eq!(
            sweep_answer(&point("steer", 1.5, true), "p99<=2x"),
            "steer met p99<=2x (1.50 ms against 2.00 ms) and wrote 17.2 MB/s"
        );
        assert_eq!(
            sweep_answer(&point("fifo", 380.0, false), "p99<=2x"),
            "fifo missed p99<=2x by 190x (380 ms against 2.00 ms) and wrote 17.2 MB/s"
        );
    }

    #[test]
    fn a_sweep_page_holds_its_chart_table_and_answers() {
        let report = SweepReport {
            scenario: "quick".into(),
            drive: "consumer-sata".into(),
            seeds: vec![1],
            objective: "p99<=2x".into(),
            phase: "fill".into(),
            points: vec![point("steer", 1.5, true), point("<fifo>", 380.0, false)],
            per_seed: None,
            best: Some("steer".into()),
            best_index: Some(0),
            wall_s: 1.0,
            not_run: Vec::new(),
        };
        let page = sweep_page(&Context::default(), &report).unwrap();
        assert_eq!(page.matches("<svg").count(), 1);
        assert!(page.contains("<li>&lt;fifo&gt; missed p99&lt;=2x by 190x"));
        assert!(page.contains("best setting meeting the objective: steer"));
        assert!(!page.contains("http://") && !page.contains("<script"));
        assert!(!page.contains("stopped early"));
        // Found by a review: a stopped sweep's page said so only under its table.
        let stopped = SweepReport {
            not_run: vec!["fifo".into()],
            ..report
        };
        let page = sweep_page(&Context::default(), &stopped).unwrap();
        assert!(
            page.contains("this sweep was stopped early: 1 setting(s)"),
            "{page}"
        );
    }
}
