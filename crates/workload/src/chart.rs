//! SVG charts and CSV files of runs, in the spirit of the paper's Fig. 1 and
//! Fig. 7: read latency over time on a log scale with the 5 ms ("normal") and
//! 35 ms (highest acceptable) lines, and read/write throughput over time.
//!
//! [`write_outputs`] writes, for run `N` with scheduler label `L`:
//! `runN-L.csv` (the one-second series), `runN-L-latency.svg`,
//! `runN-L-throughput.svg`, and one `overlay-read-p99.svg` comparing the runs.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::report::RunReport;
use crate::series::{csv, Second};

const SIZE: (u32, u32) = (900, 420);
const NORMAL_MS: f64 = 5.0;
const SLO_MS: f64 = 35.0;
const COLORS: [RGBColor; 6] = [
    RGBColor(214, 39, 40),
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

fn slug(label: &str) -> String {
    let s: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    s.chars().take(60).collect()
}

fn failed(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: {e}", path.display())
}

/// Writes CSV and SVG files of `runs` into `dir` (created if needed); returns
/// the files written.
pub fn write_outputs(dir: &Path, runs: &[RunReport]) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| failed(dir, e))?;
    let mut written = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let stem = format!("run{}-{}", i + 1, slug(&run.scheduler));
        let csv_path = dir.join(format!("{stem}.csv"));
        std::fs::write(&csv_path, csv(&run.series)).map_err(|e| failed(&csv_path, e))?;
        written.push(csv_path);
        let latency = dir.join(format!("{stem}-latency.svg"));
        latency_chart(&latency, &run.scheduler, &run.series).map_err(|e| failed(&latency, e))?;
        written.push(latency);
        let throughput = dir.join(format!("{stem}-throughput.svg"));
        throughput_chart(&throughput, &run.scheduler, &run.series)
            .map_err(|e| failed(&throughput, e))?;
        written.push(throughput);
    }
    let overlay = dir.join("overlay-read-p99.svg");
    overlay_chart(&overlay, runs).map_err(|e| failed(&overlay, e))?;
    written.push(overlay);
    Ok(written)
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn latency_range(series: &[&[Second]]) -> (f64, f64) {
    let max = series
        .iter()
        .flat_map(|s| s.iter())
        .map(|s| s.classes[0].max_ms)
        .fold(SLO_MS * 2.0, f64::max);
    (0.1, max * 1.5)
}

fn seconds(series: &[&[Second]]) -> f64 {
    series.iter().map(|s| s.len()).max().unwrap_or(1).max(1) as f64
}

/// Read latency (mean, p99, max per second) of one run.
fn latency_chart(path: &Path, label: &str, series: &[Second]) -> DrawResult {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let (lo, hi) = latency_range(&[series]);
    let end = seconds(&[series]);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("read latency per second: {label}"),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..end, (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("latency (ms)")
        .draw()?;
    guide_lines(&mut chart, end)?;
    let reads: Vec<&Second> = series.iter().filter(|s| s.classes[0].iops > 0).collect();
    for (name, color, pick) in [
        (
            "max",
            COLORS[0],
            (|s: &Second| s.classes[0].max_ms) as fn(&Second) -> f64,
        ),
        ("p99", COLORS[3], |s: &Second| s.classes[0].p99_ms),
        ("mean", COLORS[1], |s: &Second| s.classes[0].mean_ms),
    ] {
        chart
            .draw_series(LineSeries::new(
                reads.iter().map(|s| (s.second as f64, pick(s).max(lo))),
                color,
            ))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE)
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn guide_lines<DB: DrawingBackend>(
    chart: &mut ChartContext<
        '_,
        DB,
        Cartesian2d<
            plotters::coord::types::RangedCoordf64,
            plotters::coord::combinators::LogCoord<f64>,
        >,
    >,
    end: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    for (ms, name) in [(NORMAL_MS, "5 ms"), (SLO_MS, "35 ms")] {
        let style = ShapeStyle::from(&BLACK.mix(0.5)).stroke_width(1);
        chart.draw_series(DashedLineSeries::new(
            vec![(0.0, ms), (end, ms)],
            6,
            4,
            style,
        ))?;
        chart.draw_series(std::iter::once(Text::new(
            name.to_string(),
            (end * 0.005, ms * 1.12),
            ("sans-serif", 12),
        )))?;
    }
    Ok(())
}

/// Read and write MB/s per second of one run.
fn throughput_chart(path: &Path, label: &str, series: &[Second]) -> DrawResult {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let end = seconds(&[series]);
    let top = series
        .iter()
        .map(|s| s.classes[0].mbps.max(s.classes[1].mbps))
        .fold(1.0, f64::max)
        * 1.15;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("throughput per second: {label}"),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..end, 0f64..top)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("MB/s")
        .draw()?;
    for (name, class, color) in [("read", 0usize, COLORS[1]), ("write", 1, COLORS[0])] {
        chart
            .draw_series(LineSeries::new(
                series
                    .iter()
                    .map(|s| (s.second as f64, s.classes[class].mbps)),
                color,
            ))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE)
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// Read p99 per second of every run, one line each.
fn overlay_chart(path: &Path, runs: &[RunReport]) -> DrawResult {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let all: Vec<&[Second]> = runs.iter().map(|r| r.series.as_slice()).collect();
    let (lo, hi) = latency_range(&all);
    let end = seconds(&all);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "read p99 latency per second, by scheduler",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..end, (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("read p99 (ms)")
        .draw()?;
    guide_lines(&mut chart, end)?;
    for (i, run) in runs.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let points = run
            .series
            .iter()
            .filter(|s| s.classes[0].iops > 0)
            .map(|s| (s.second as f64, s.classes[0].p99_ms.max(lo)));
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))?
            .label(run.scheduler.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// A chart of named lines over categories (the points of a sweep), with a
/// logarithmic y axis.
pub fn category_chart(
    path: &Path,
    title: &str,
    categories: &[String],
    y_desc: &str,
    lines: &[(String, Vec<f64>)],
) -> Result<(), String> {
    draw_categories(path, title, categories, y_desc, lines).map_err(|e| failed(path, e))
}

fn draw_categories(
    path: &Path,
    title: &str,
    categories: &[String],
    y_desc: &str,
    lines: &[(String, Vec<f64>)],
) -> DrawResult {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let values = lines.iter().flat_map(|(_, v)| v.iter().copied());
    let (lo, hi) = values.fold((f64::MAX, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = ((lo.max(1e-3)) / 2.0, hi.max(lo.max(1e-3) * 2.0) * 2.0);
    let n = categories.len().max(1);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.5f64..n as f64 - 0.5, (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .x_labels(n)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                categories.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc(y_desc)
        .draw()?;
    for (i, (name, values)) in lines.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let points: Vec<(f64, f64)> = values
            .iter()
            .enumerate()
            .map(|(x, y)| (x as f64, y.max(lo)))
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        chart.draw_series(
            points
                .into_iter()
                .map(|p| Circle::new(p, 3, color.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
