//! Reports made up for tests of what reads them (summaries, pages).

use crate::report::{ClassReport, LatencyReport, PhaseReport, RunReport};

/// A class's report: `ops` operations at `mbps`, read p99 `p99_us`, the
/// other latencies in proportion to it.
pub(crate) fn class(ops: u64, mbps: f64, p99_us: f64) -> ClassReport {
    ClassReport {
        ops,
        mbps,
        iops: ops as f64,
        lat_us: LatencyReport {
            mean: p99_us / 2.0,
            stddev: 1.0,
            p50: p99_us / 3.0,
            p99: p99_us,
            p999: p99_us * 1.5,
            max: p99_us * 2.0,
        },
        slo_violations: 0,
    }
}

/// A phase from `start_s` to `end_s` seconds with `read`, `write` and `all`
/// classes, no TRIMs and no write amplification of its own.
pub(crate) fn phase(
    name: &str,
    (start_s, end_s): (f64, f64),
    [read, write, all]: [ClassReport; 3],
) -> PhaseReport {
    PhaseReport {
        name: name.into(),
        start_s,
        end_s,
        read,
        write,
        trim: class(0, 0.0, 0.0),
        all,
        flush: class(0, 0.0, 0.0),
        waf: None,
    }
}

/// A whole run of `scheduler` on consumer-sata with `phases`: 1000
/// requests, all finished; no drive statistics, notes or series.
pub(crate) fn run(scheduler: &str, phases: Vec<PhaseReport>) -> RunReport {
    RunReport {
        scheduler: scheduler.into(),
        device: "consumer-sata".into(),
        phases,
        device_stats: None,
        verify: None,
        cpu: None,
        unfinished: 0,
        requests: 1000,
        interrupted: false,
        notes: Vec::new(),
        series: Vec::new(),
    }
}
