//! The write cache's burst chart for the README: consumer-sata with a
//! power-protected 1 GiB write-back cache against the same drive without
//! one, sequential 128 KiB writes at queue depth 32, bursts from a quarter
//! of the cache to four times it (the table of the same runs is
//! `cargo run --release -p iosteer-device --example cache_burst`).
//!
//!     cargo run --release -p iosteer-study --example cache_burst_chart -- docs/cache-burst.svg

use iosteer_device::burst::{nand_sustained_mb_per_s, with_and_without_cache, BurstRates};
use iosteer_device::config::CachePolicy;
use iosteer_device::DeviceConfig;
use iosteer_workload::chart::{frame, legend_upper_left, svg_file, Canvas, DrawResult, PALETTE};
use plotters::prelude::*;

/// 128 KiB writes at SATA NCQ's full depth, as the table's runs.
const REQUEST_BYTES: u64 = 128 << 10;
const QUEUE_DEPTH: u32 = 32;
/// Bursts in sixteenths of the cache's size, up to four times it.
const STEPS: u64 = 16;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "cache-burst.svg".to_string());
    let mut cached = DeviceConfig::preset("consumer-sata")?;
    cached.cache.size_mib = 1024;
    cached.cache.policy = CachePolicy::WriteBack;
    cached.cache.power_protected = true;
    let cache = cached.cache.bytes();
    let mut rows: Vec<(f64, BurstRates, BurstRates)> = Vec::new();
    for step in 1..=STEPS {
        let burst = cache * step / 4;
        let (with, without) = with_and_without_cache(&cached, burst, REQUEST_BYTES, QUEUE_DEPTH)?;
        let gib = with.burst_bytes as f64 / (1u64 << 30) as f64;
        println!(
            "{gib:.2} GiB: cached {:.0} MB/s (past the cache {:.0}), no cache {:.0} MB/s",
            with.overall_mb_per_s, with.after_split_mb_per_s, without.overall_mb_per_s
        );
        rows.push((gib, with, without));
    }
    let link = cached.timing.host_link_mb_per_s;
    let nand = nand_sustained_mb_per_s(&cached);
    svg_file(std::path::Path::new(&out), (900, 420), |root| {
        draw(root, &rows, link, nand)
    })?;
    println!("wrote {out}");
    Ok(())
}

fn draw(root: &Canvas, rows: &[(f64, BurstRates, BurstRates)], link: f64, nand: f64) -> DrawResult {
    let x_max = rows.last().map_or(4.0, |r| r.0) * 1.02;
    let mut chart = frame(
        root,
        "consumer-sata, 128 KiB sequential writes: a 1 GiB power-protected cache",
    )
    .build_cartesian_2d(0f64..x_max, 0f64..link * 1.15)?;
    chart
        .configure_mesh()
        .x_desc("burst (GiB)")
        .y_desc("MB/s, first write to last completion")
        .draw()?;
    let series = [
        (
            "with the cache",
            PALETTE[1],
            rows.iter()
                .map(|r| (r.0, r.1.overall_mb_per_s))
                .collect::<Vec<_>>(),
        ),
        (
            "without a cache",
            PALETTE[0],
            rows.iter().map(|r| (r.0, r.2.overall_mb_per_s)).collect(),
        ),
        (
            "with the cache, writes past its first GiB",
            PALETTE[2],
            rows.iter()
                .filter(|r| r.1.after_split_mb_per_s > 0.0)
                .map(|r| (r.0, r.1.after_split_mb_per_s))
                .collect(),
        ),
    ];
    for (name, color, points) in series {
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    let guide = ShapeStyle::from(&BLACK.mix(0.5)).stroke_width(1);
    for (label, rate) in [("host link", link), ("NAND sustained", nand)] {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, rate), (x_max, rate)],
            guide,
        )))?;
        chart.draw_series(std::iter::once(Text::new(
            format!("{label} {rate:.0} MB/s"),
            (x_max * 0.74, rate + link * 0.02),
            ("sans-serif", 12),
        )))?;
    }
    legend_upper_left(&mut chart)
}
