//! The sweep's trade-off chart: write rate against read latency for every
//! setting (and seed), the objective's bound and the best point marked.

use super::*;

/// Two panels over write MB/s: read p99 and p99.9 (log scale) with the
/// objective's bound, and read SLO violations; the best point is ringed.
/// Text is SVG `<text>`, so no font is needed to draw it.
/// With several seeds the points are the mean write rate at the worst
/// seed's p99; this draws what they summarise: every seed's own point, and a
/// line from the lowest to the highest seed's write rate.
pub(super) fn draw_seed_spread(
    lat: &mut LogChart,
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

/// The size of the trade-off chart.
pub const CHART_SIZE: (u32, u32) = (900, 720);

/// The trade-off chart as an SVG file.
pub fn chart(path: &Path, report: &SweepReport) -> DrawResult {
    svg_file(path, CHART_SIZE, |root| draw_chart(root, report))
}

/// The trade-off chart, drawn on `root` (a file or a page's inline SVG).
pub fn draw_chart(root: &Canvas, report: &SweepReport) -> DrawResult {
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
    let caption = format!(
        "{} on {}: write MB/s against read latency, {} phase",
        report.scenario, report.drive, report.phase
    );
    let mut lat =
        frame(&top, &caption).build_cartesian_2d(0f64..x_max, (y_min..y_max).log_scale())?;
    lat.configure_mesh()
        .x_desc("write MB/s during the phase")
        .y_desc("read latency (ms)")
        .draw()?;
    draw_latencies(&mut lat, report, x_max, y_min)?;
    let v_max = points
        .iter()
        .map(|p| p.read_slo_violations as f64)
        .fold(1.0, f64::max)
        * 1.15;
    let mut slo = frame(&bottom, "").build_cartesian_2d(0f64..x_max, 0f64..v_max)?;
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
    Ok(())
}

/// The upper panel's points: p99 and p99.9 of each setting, each seed's
/// spread, the objective's bound and the best point.
pub(super) fn draw_latencies(
    lat: &mut LogChart,
    report: &SweepReport,
    x_max: f64,
    y_min: f64,
) -> DrawResult {
    let points = &report.points;
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
        draw_seed_spread(lat, points, per_seed, y_min)?;
    }
    let bound = points.iter().map(|p| p.bound_ms).fold(f64::MAX, f64::min);
    if bound.is_finite() && bound < f64::MAX {
        bound_line(lat, x_max, bound, &report.objective)?;
    }
    if let Some(b) = report.best_index.map(|i| &points[i]) {
        let at = (b.write_mbps, b.read_p99_ms.max(y_min));
        best_ring(lat, at, format!("best: {}", b.spec))?;
    }
    legend_upper_left(lat)
}
