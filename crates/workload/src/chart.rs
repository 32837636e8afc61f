//! SVG charts and CSV files of runs, in the spirit of the paper's Fig. 1 and
//! Fig. 7: read latency over time on a log scale with the 5 ms ("normal") and
//! 35 ms (highest acceptable) lines, and read/write throughput over time.
//!
//! [`write_outputs`] writes, for run `N` with scheduler label `L`:
//! `runN-L.csv` (the one-second series), `runN-L-latency.svg`,
//! `runN-L-throughput.svg`, and one `overlay-read-p99.svg` comparing the runs.

use std::path::{Path, PathBuf};

use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use thiserror::Error;

use crate::report::RunReport;
use crate::series::{csv, Second};

/// The size of every per-second chart.
pub const SIZE: (u32, u32) = (900, 420);
const NORMAL_MS: f64 = 5.0;
const SLO_MS: f64 = 35.0;
/// The one palette of every chart: red, blue, green, orange, purple, brown
/// (matplotlib's tab10, reordered).
pub const PALETTE: [RGBColor; 6] = [
    RGBColor(214, 39, 40),
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];
pub const RED: RGBColor = PALETTE[0];
pub const BLUE: RGBColor = PALETTE[1];
pub const GREEN: RGBColor = PALETTE[2];

/// A file of CSV or SVG that could not be written.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum OutputError {
    #[error("{}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Draw { path: PathBuf, message: String },
}

/// Names the file a chart could not be drawn into.
pub fn draw_failed(path: &Path, e: impl std::fmt::Display) -> OutputError {
    OutputError::Draw {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Names the file (or directory) that could not be written.
pub fn write_failed(path: &Path, source: std::io::Error) -> OutputError {
    OutputError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// What drawing a chart returns; plotters' errors are boxed.
pub type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// The area a chart draws on, white, whether it goes to a file or a string.
pub type Canvas<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Draws a chart of `size` into the SVG file at `path`.
pub fn svg_file(
    path: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&Canvas) -> DrawResult,
) -> DrawResult {
    let drawn = (|| -> DrawResult {
        let root = SVGBackend::new(path, size).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
        Ok(())
    })();
    // A chart the disk could not take whole is not left cut short.
    if drawn.is_err() {
        let _ = std::fs::remove_file(path);
    }
    drawn
}

/// Draws a chart of `size` into a string of SVG, to inline in a page.
pub fn svg_string(
    size: (u32, u32),
    draw: impl FnOnce(&Canvas) -> DrawResult,
) -> Result<String, Box<dyn std::error::Error>> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
    }
    Ok(svg)
}

/// A chart with a logarithmic latency axis over a linear one.
pub type LogChart<'a> = ChartContext<
    'a,
    SVGBackend<'a>,
    Cartesian2d<
        plotters::coord::types::RangedCoordf64,
        plotters::coord::combinators::LogCoord<f64>,
    >,
>;

/// The frame every chart shares: its caption (none when empty), 12 px
/// margins and room for the axis labels.
pub fn frame<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(area);
    if !caption.is_empty() {
        builder.caption(caption, ("sans-serif", 18));
    }
    builder
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60);
    builder
}

/// The series labels in the upper left corner, on a light background.
pub fn legend_upper_left<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
) -> DrawResult {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// The series labels where plotters puts them by default, on white.
fn legend_right<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
) -> DrawResult {
    chart
        .configure_series_labels()
        .background_style(WHITE)
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// An objective's bound, dashed across the chart up to `x_max`.
pub fn bound_line(chart: &mut LogChart, x_max: f64, bound: f64, objective: &str) -> DrawResult {
    let style = ShapeStyle::from(&BLACK.mix(0.6)).stroke_width(1);
    chart
        .draw_series(DashedLineSeries::new(
            vec![(0.0, bound), (x_max, bound)],
            6,
            4,
            style,
        ))?
        .label(format!("objective: {objective}"))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
    Ok(())
}

/// A green ring around the best point, labelled.
pub fn best_ring(chart: &mut LogChart, at: (f64, f64), label: String) -> DrawResult {
    chart
        .draw_series(std::iter::once(Circle::new(at, 9, GREEN.stroke_width(2))))?
        .label(label)
        .legend(|(x, y)| Circle::new((x + 9, y), 6, GREEN.stroke_width(2)));
    Ok(())
}

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

/// Writes CSV and SVG files of `runs` into `dir` (created if needed); returns
/// the files written.
pub fn write_outputs(dir: &Path, runs: &[RunReport]) -> Result<Vec<PathBuf>, OutputError> {
    std::fs::create_dir_all(dir).map_err(|e| write_failed(dir, e))?;
    let mut written = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let stem = format!("run{}-{}", i + 1, slug(&run.scheduler));
        let csv_path = dir.join(format!("{stem}.csv"));
        crate::output::write_whole(&csv_path, csv(&run.series).as_bytes())
            .map_err(|e| write_failed(&csv_path, e))?;
        written.push(csv_path);
        let latency = dir.join(format!("{stem}-latency.svg"));
        svg_file(&latency, SIZE, |root| latency_chart(root, run))
            .map_err(|e| draw_failed(&latency, e))?;
        written.push(latency);
        let throughput = dir.join(format!("{stem}-throughput.svg"));
        svg_file(&throughput, SIZE, |root| throughput_chart(root, run))
            .map_err(|e| draw_failed(&throughput, e))?;
        written.push(throughput);
    }
    let overlay = dir.join("overlay-read-p99.svg");
    svg_file(&overlay, SIZE, |root| overlay_chart(root, runs))
        .map_err(|e| draw_failed(&overlay, e))?;
    written.push(overlay);
    Ok(written)
}

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
pub fn latency_chart(root: &Canvas, run: &RunReport) -> DrawResult {
    let (label, series) = (&run.scheduler, &run.series);
    let (lo, hi) = latency_range(&[series]);
    // Room for a target below the usual floor (an NVMe drive's 2x).
    let lo = series
        .iter()
        .filter_map(|s| s.gauges.read_target_ms)
        .fold(lo, f64::min)
        .max(0.001);
    let end = seconds(&[series]);
    let mut chart = frame(root, &format!("read latency per second: {label}"))
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
            PALETTE[0],
            (|s: &Second| s.classes[0].max_ms) as fn(&Second) -> f64,
        ),
        ("p99", PALETTE[3], |s: &Second| s.classes[0].p99_ms),
        ("mean", PALETTE[1], |s: &Second| s.classes[0].mean_ms),
    ] {
        chart
            .draw_series(LineSeries::new(
                reads.iter().map(|s| (s.second as f64, pick(s).max(lo))),
                color,
            ))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
    }
    // The read latency the policy steered to (steer's target), where it had one.
    let target: Vec<(f64, f64)> = series
        .iter()
        .filter_map(|s| Some((s.second as f64, s.gauges.read_target_ms?.clamp(lo, hi))))
        .collect();
    if !target.is_empty() {
        let color = PALETTE[2];
        chart
            .draw_series(LineSeries::new(target, color.stroke_width(2)))?
            .label("target")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
    }
    legend_right(&mut chart)
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
pub fn throughput_chart(root: &Canvas, run: &RunReport) -> DrawResult {
    let (label, series) = (&run.scheduler, &run.series);
    let end = seconds(&[series]);
    let top = series
        .iter()
        .map(|s| s.classes[0].mbps.max(s.classes[1].mbps))
        .fold(1.0, f64::max)
        * 1.15;
    let mut chart = frame(root, &format!("throughput per second: {label}"))
        .build_cartesian_2d(0f64..end, 0f64..top)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("MB/s")
        .draw()?;
    for (name, class, color) in [("read", 0usize, PALETTE[1]), ("write", 1, PALETTE[0])] {
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
    legend_right(&mut chart)
}

/// Read p99 per second of every run, one line each.
pub fn overlay_chart(root: &Canvas, runs: &[RunReport]) -> DrawResult {
    let all: Vec<&[Second]> = runs.iter().map(|r| r.series.as_slice()).collect();
    let (lo, hi) = latency_range(&all);
    let end = seconds(&all);
    let mut chart = frame(root, "read p99 latency per second, by scheduler")
        .build_cartesian_2d(0f64..end, (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("read p99 (ms)")
        .draw()?;
    guide_lines(&mut chart, end)?;
    for (i, run) in runs.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
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
    legend_upper_left(&mut chart)?;
    Ok(())
}

/// A per-second quantity of a run, as one line of a chart.
pub type Pick = fn(&Second) -> f64;

/// One linear quantity per second of every run, one line each: throughput
/// and the drive's state compared across schedulers.
pub fn overlay_linear_chart(
    root: &Canvas,
    title: &str,
    y_desc: &str,
    runs: &[RunReport],
    pick: Pick,
) -> DrawResult {
    let all: Vec<&[Second]> = runs.iter().map(|r| r.series.as_slice()).collect();
    let lines: Vec<(String, &[Second])> = runs
        .iter()
        .map(|r| (r.scheduler.clone(), r.series.as_slice()))
        .collect();
    linear_panel(root, title, y_desc, seconds(&all), &lines, pick, 2)
}

/// The simulated drive's state per second of one run: free blocks above, GC
/// pages moved below (two scales, so two panels).
pub fn drive_state_chart(root: &Canvas, run: &RunReport) -> DrawResult {
    let (upper, lower) = root.split_vertically(SIZE.1 / 2);
    let end = seconds(&[&run.series]);
    let line = [(run.scheduler.clone(), run.series.as_slice())];
    let title = format!("drive state per second: {}", run.scheduler);
    linear_panel(
        &upper,
        &title,
        "free blocks",
        end,
        &line,
        |s| s.gauges.free_blocks as f64,
        1,
    )?;
    linear_panel(
        &lower,
        "",
        "GC pages moved",
        end,
        &line,
        |s| s.gc_pages_moved as f64,
        1,
    )
}

/// Lines of `pick` over time on a linear axis from zero, in palette order.
fn linear_panel(
    root: &Canvas,
    title: &str,
    y_desc: &str,
    end: f64,
    lines: &[(String, &[Second])],
    pick: Pick,
    width: u32,
) -> DrawResult {
    let top = lines
        .iter()
        .flat_map(|(_, s)| s.iter().map(pick))
        .fold(1.0, f64::max)
        * 1.15;
    let mut chart = frame(root, title).build_cartesian_2d(0f64..end, 0f64..top)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc(y_desc)
        .draw()?;
    for (i, (name, series)) in lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let style = color.stroke_width(width);
        chart
            .draw_series(LineSeries::new(
                series.iter().map(|s| (s.second as f64, pick(s))),
                style,
            ))?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
    }
    legend_upper_left(&mut chart)?;
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
) -> Result<(), OutputError> {
    draw_categories(path, title, categories, y_desc, lines).map_err(|e| draw_failed(path, e))
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
    let mut chart =
        frame(&root, title).build_cartesian_2d(-0.5f64..n as f64 - 0.5, (lo..hi).log_scale())?;
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
        let color = PALETTE[i % PALETTE.len()];
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
    legend_upper_left(&mut chart)?;
    root.present()?;
    Ok(())
}
