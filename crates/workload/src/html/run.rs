//! The page of `sim` and `run`: every scheduler's runs compared, then each
//! run on its own.

use super::{chart, Context, HtmlError, Page};
use crate::chart::{
    drive_state_chart, latency_chart, overlay_chart, overlay_linear_chart, throughput_chart, Pick,
    SIZE,
};
use crate::report::{ClassReport, DeviceReport, PhaseReport, RunReport};
use crate::series::Second;
use crate::summary::{answers, judged_by};

/// More seconds than this are thinned to keep the page small: a day-long
/// trace would otherwise draw tens of megabytes of points.
const MAX_POINTS: usize = 1500;

/// The page of `runs` (one per scheduler), asked by `context`.
pub fn run_page(context: &Context, runs: &[RunReport]) -> Result<String, HtmlError> {
    let runs: Vec<RunReport> = runs.iter().map(thinned).collect();
    let mut page = Page::new("iosteer report");
    for warning in &context.warnings {
        page.warning(warning);
    }
    if runs.iter().any(|r| r.interrupted) {
        page.warning(
            "a run stopped before its end (interrupted, or an error): \
             its figures cover only what was measured until then",
        );
    }
    page.summary(&question(context, &runs), &answers(&runs), &context.command);
    if runs.len() > 1 {
        compared(&mut page, &runs)?;
    }
    for run in &runs {
        one_run(&mut page, run)?;
    }
    if let Some(config) = &context.drive_config {
        page.heading("Drive configuration");
        page.preformatted(config);
    }
    Ok(page.finish())
}

fn question(context: &Context, runs: &[RunReport]) -> String {
    let schedulers: Vec<&str> = runs.iter().map(|r| r.scheduler.as_str()).collect();
    let drive = runs.first().map_or("(no run)", |r| r.device.as_str());
    let workload = if context.workload.is_empty() {
        String::new()
    } else {
        format!(" under {}", context.workload)
    };
    let judged = judged_by(runs).map_or(String::new(), |j| format!(" Judged by {j}."));
    format!(
        "how fast are reads served, and how much is written, with {} on {drive}{workload}?{judged}",
        schedulers.join(", ")
    )
}

const READ_MBPS: Pick = |s| s.classes[0].mbps;
const WRITE_MBPS: Pick = |s| s.classes[1].mbps;
const FREE_BLOCKS: Pick = |s| s.gauges.free_blocks as f64;
const GC_PAGES: Pick = |s| s.gc_pages_moved as f64;

/// Every scheduler on one chart per metric.
fn compared(page: &mut Page, runs: &[RunReport]) -> Result<(), HtmlError> {
    page.heading("All schedulers compared");
    page.chart(&chart("read p99 by scheduler", SIZE, |root| {
        overlay_chart(root, runs)
    })?);
    let mut metrics = vec![
        ("read MB/s per second, by scheduler", "read MB/s", READ_MBPS),
        (
            "write MB/s per second, by scheduler",
            "write MB/s",
            WRITE_MBPS,
        ),
    ];
    if runs.iter().any(|r| r.device_stats.is_some()) {
        metrics.push(("free blocks, by scheduler", "free blocks", FREE_BLOCKS));
        metrics.push((
            "GC pages moved per second, by scheduler",
            "GC pages moved",
            GC_PAGES,
        ));
    }
    for (title, y_desc, pick) in metrics {
        page.chart(&chart(title, SIZE, |root| {
            overlay_linear_chart(root, title, y_desc, runs, pick)
        })?);
    }
    Ok(())
}

/// One scheduler's charts, phase table, drive statistics and notes.
fn one_run(page: &mut Page, run: &RunReport) -> Result<(), HtmlError> {
    page.heading(&format!("Scheduler {}", run.scheduler));
    if run.interrupted {
        page.warning(&format!(
            "this run stopped early, at {:.1} s; the figures cover what was measured",
            run.end_s()
        ));
    }
    let name = |what: &str| format!("{what} of {}", run.scheduler);
    page.chart(&chart(&name("read latency"), SIZE, |root| {
        latency_chart(root, run)
    })?);
    page.chart(&chart(&name("throughput"), SIZE, |root| {
        throughput_chart(root, run)
    })?);
    if run.device_stats.is_some() {
        page.chart(&chart(&name("drive state"), SIZE, |root| {
            drive_state_chart(root, run)
        })?);
    }
    page.subheading("Phases");
    page.table(&PHASE_HEAD, &phase_rows(&run.phases), 2);
    if run.unfinished > 0 {
        page.paragraph(&format!(
            "{} requests unfinished at the end",
            run.unfinished
        ));
    }
    match &run.device_stats {
        Some(stats) => {
            page.subheading(&format!("Drive {}", run.device));
            page.table(&["statistic", "value"], &device_rows(stats), 1);
        }
        None => page.paragraph(&format!("target {}", run.device)),
    }
    if let Some(cpu) = &run.cpu {
        page.paragraph(&format!(
            "CPU: {:.2} s user, {:.2} s system, {:.2} cores",
            cpu.user_s, cpu.system_s, cpu.cores
        ));
    }
    if let Some(verify) = &run.verify {
        page.paragraph(&format!(
            "verify: {} blocks checked, {} mismatches",
            verify.blocks, verify.mismatches
        ));
    }
    page.notes(&run.notes);
    Ok(())
}

/// The columns of the terminal table.
pub const PHASE_HEAD: [&str; 10] = [
    "phase", "class", "MB/s", "IOPS", "mean ms", "p50 ms", "p99 ms", "p99.9 ms", "max ms", ">SLO",
];

/// The rows of the terminal table: classes that completed requests.
fn phase_rows(phases: &[PhaseReport]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for phase in phases {
        let classes: [(&str, &ClassReport); 4] = [
            ("read", &phase.read),
            ("write", &phase.write),
            ("trim", &phase.trim),
            ("flush", &phase.flush),
        ];
        for (class, r) in classes.into_iter().filter(|(_, r)| r.ops > 0) {
            let ms = |us: f64| format!("{:.2}", us / 1e3);
            rows.push(vec![
                phase.name.clone(),
                class.to_string(),
                crate::report::figure(r.mbps, 1),
                crate::report::figure(r.iops, 0),
                ms(r.lat_us.mean),
                ms(r.lat_us.p50),
                ms(r.lat_us.p99),
                ms(r.lat_us.p999),
                ms(r.lat_us.max),
                r.slo_violations.to_string(),
            ]);
        }
    }
    rows
}

fn device_rows(d: &DeviceReport) -> Vec<Vec<String>> {
    [
        ("write amplification", format!("{:.2}", d.waf)),
        ("GC pages moved", d.gc_pages_moved.to_string()),
        ("erases", d.erases.to_string()),
        ("foreground GC blocks", d.foreground_gc_blocks.to_string()),
        ("background GC blocks", d.background_gc_blocks.to_string()),
        (
            "reads waiting behind GC (s)",
            format!("{:.3}", d.read_wait_behind_gc_s),
        ),
        (
            "reads waiting behind programs (s)",
            format!("{:.3}", d.read_wait_behind_program_s),
        ),
        (
            "merged writes / reads",
            format!("{} / {}", d.merged_writes, d.merged_reads),
        ),
        (
            "erases per block (min / mean / max)",
            format!(
                "{} / {:.1} / {}",
                d.wear_erases_min, d.wear_erases_mean, d.wear_erases_max
            ),
        ),
    ]
    .into_iter()
    .map(|(k, v)| vec![k.to_string(), v])
    .collect()
}

/// `run` with at most [`MAX_POINTS`] seconds: each kept point stands for a
/// window and carries its worst latency, its mean throughput and its last
/// gauges, so spikes survive the thinning.
fn thinned(run: &RunReport) -> RunReport {
    let mut run = run.clone();
    let window = run.series.len().div_ceil(MAX_POINTS);
    if window > 1 {
        run.series = run.series.chunks(window).map(merge_window).collect();
    }
    run
}

fn merge_window(window: &[Second]) -> Second {
    let mut merged = window[window.len() - 1].clone();
    merged.second = window[0].second;
    let n = window.len() as f64;
    for (c, class) in merged.classes.iter_mut().enumerate() {
        let all = window.iter().map(|s| &s.classes[c]);
        class.mbps = all.clone().map(|x| x.mbps).sum::<f64>() / n;
        // The busiest second: a window with any reads still draws them.
        class.iops = all.clone().map(|x| x.iops).max().unwrap_or(0);
        class.mean_ms = all.clone().map(|x| x.mean_ms).fold(0.0, f64::max);
        class.p99_ms = all.clone().map(|x| x.p99_ms).fold(0.0, f64::max);
        class.max_ms = all.map(|x| x.max_ms).fold(0.0, f64::max);
    }
    merged.gc_pages_moved = window.iter().map(|s| s.gc_pages_moved).sum();
    merged
}

#[cfg(test)]
mod tests;
