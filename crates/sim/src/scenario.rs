//! Built-in scenarios.
//!
//! `fill-while-serving` is the Netflix paper's problem (seed 003, sections IV
//! and VIII), scaled to run in seconds:
//! - the drive is aged: filled with content, then part of it rewritten at
//!   random (metadata, re-encodes), so blocks are fragmented and its free
//!   pool sits at the high watermark;
//! - readers: random 128 KiB reads (video chunks) over the whole drive, open
//!   loop (Poisson; clients do not wait for each other) at 40% of what the
//!   drive reads (the paper: 120 MB/s on a 300 MB/s drive): of its host
//!   link, or of its NAND when that is slower
//!   ([`DeviceConfig::read_mb_per_s`]; 40% of a link the NAND cannot fill
//!   queued reads without bound);
//! - after a serve-only period, a fill writes new content sequentially in
//!   128 KiB writes (FreeBSD splits I/O at MAXPHYS, 128 KiB) at 15% of the
//!   read rate (the paper: 85/15), at most 32 outstanding, trimming each
//!   64 MiB of old content just before overwriting it;
//! - the fill stops and serving goes on.
//!
//! Phases: `before`, `fill`, `after` (by completion time), and `all`.
//!
//! Tenants: every job is its own tenant, numbered in job order, so the
//! readers are tenant 0 and the fill tenant 1, the separation the
//! per-tenant policies act on (`bfq`'s queues, `iolatency`'s and `iocost`'s
//! groups); policies that ignore tenants see the same requests either way.
//! In `long-fill` the jobs are `readers.1`, `readers.2`, `fill.1`, `fill.2`
//! (tenants 0 to 3).
//!
//! `fill-listening` is the same with a fill that listens to the scheduler's
//! back-pressure ([`Synthetic::backpressure`], bound [`LISTENING_BOUND`]): it
//! holds a write while one queued now would wait longer than the bound, and
//! catches up later, so a throttling scheduler's queue stays short and write
//! latency bounded, where the deaf fill keeps its 32 writes queued.

use iosteer_device::{DeviceConfig, Precondition, StartState};
use iosteer_sched::Nanos;

use crate::run::Simulation;
use iosteer_workload::report::Phase;
use iosteer_workload::workload::{Arrival, Job, JobKind, Synthetic, Workload};

pub const SCENARIOS: &[(&str, &str)] = &[
    (
        "fill-while-serving",
        "the Netflix problem: serve reads, fill with trims while serving, serve again",
    ),
    (
        "quick",
        "fill-while-serving, shorter (for tests and a first look)",
    ),
    (
        "fill-listening",
        "fill-while-serving with a fill that listens to back-pressure (holds writes that would wait over 50 ms)",
    ),
    (
        "quick-listening",
        "quick, with the listening fill",
    ),
    (
        "long-fill",
        "two 75 s fills with a 20 s idle pause between: the drive changes under the fill",
    ),
];

/// The knobs of fill-while-serving.
#[derive(Clone, Debug)]
pub struct FillWhileServing {
    pub before: Nanos,
    pub fill: Nanos,
    pub after: Nanos,
    /// Read rate as a share of what the drive reads: its host link's
    /// bandwidth, or its NAND's when slower.
    pub read_share_of_link: f64,
    /// Write rate as a share of the read rate.
    pub write_share_of_reads: f64,
    pub read_size: u64,
    pub write_size: u64,
    pub trim_segment: u64,
    /// Random overwrites when aging, in drive capacities.
    pub aging_overwrite: f64,
    /// Free blocks per die that idle GC keeps above the low watermark, when
    /// smaller than the drive's own (so a short fill reaches foreground GC).
    pub pool_blocks: Option<u32>,
    /// The fill listens to back-pressure with this bound (`None`: deaf).
    pub fill_backpressure: Option<Nanos>,
}

/// The bound of the listening fill: a write is held while one queued now
/// would wait longer than this in the scheduler. 50 ms is a few writes'
/// worth at the rates a throttle sets (128 KiB at 10 MB/s is 13 ms), so the
/// limiter never runs dry, and far below the deaf fill's 32-deep queue.
pub const LISTENING_BOUND: Nanos = Nanos::from_millis(50);

impl FillWhileServing {
    pub fn standard() -> FillWhileServing {
        FillWhileServing {
            before: Nanos::from_secs(10),
            fill: Nanos::from_secs(90),
            after: Nanos::from_secs(20),
            read_share_of_link: 0.40,
            write_share_of_reads: 0.15,
            read_size: 128 << 10,
            write_size: 128 << 10,
            trim_segment: 64 << 20,
            aging_overwrite: 2.0,
            pool_blocks: None,
            fill_backpressure: None,
        }
    }

    /// Shorter phases, and a free pool of 4 blocks per die over the low
    /// watermark, so the fill reaches foreground GC within seconds.
    pub fn quick() -> FillWhileServing {
        FillWhileServing {
            before: Nanos::from_secs(5),
            fill: Nanos::from_secs(20),
            after: Nanos::from_secs(5),
            pool_blocks: Some(4),
            ..FillWhileServing::standard()
        }
    }

    pub fn simulation(&self, mut device: DeviceConfig, seed: u64) -> Simulation {
        if let Some(pool) = self.pool_blocks {
            device.gc.high_watermark = device.gc.high_watermark.min(device.gc.low_watermark + pool);
        }
        let capacity = device.logical_bytes();
        let page = u64::from(device.geometry.page_size);
        let read_bps = device.read_mb_per_s() * 1e6 * self.read_share_of_link;
        let write_bps = read_bps * self.write_share_of_reads;
        let fill_start = self.before;
        let fill_end = self.before + self.fill;
        let end = fill_end + self.after;
        let fill_bytes = (write_bps * self.fill.as_secs_f64() * 1.2) as u64;
        let region = (fill_bytes.div_ceil(self.trim_segment) * self.trim_segment)
            .min(capacity / 2 / page * page);
        let readers = Synthetic::reads(
            self.read_size,
            0,
            capacity / self.read_size * self.read_size,
            Arrival::open(None, Some(read_bps), true, 100_000),
        );
        let fill = Synthetic {
            read_percent: 0,
            sequential: true,
            block_min: self.write_size,
            block_max: self.write_size,
            align: self.write_size,
            // On a page boundary: a quarter of the capacity is not on some
            // drives (enterprise-nvme, half the family's), and every write
            // there programmed one page more than it wrote.
            offset: capacity / 4 / page * page,
            size: region,
            arrival: Arrival::open(None, Some(write_bps), false, 32),
            trim_ahead: Some(self.trim_segment),
            backpressure: self.fill_backpressure,
            ..readers.clone()
        };
        Simulation {
            precondition: Precondition {
                state: StartState::Aged {
                    overwrites: self.aging_overwrite,
                },
                seed,
            },
            workload: Workload::in_phases(
                vec![
                    Job {
                        name: "readers".into(),
                        kind: JobKind::Synthetic(readers),
                        start: Nanos::ZERO,
                        stop: Some(end),
                        shape: Default::default(),
                    },
                    Job {
                        name: "fill".into(),
                        kind: JobKind::Synthetic(fill),
                        start: fill_start,
                        stop: Some(fill_end),
                        shape: Default::default(),
                    },
                ],
                vec![
                    Phase {
                        name: "before".into(),
                        start: Nanos::ZERO,
                        end: fill_start,
                    },
                    Phase {
                        name: "fill".into(),
                        start: fill_start,
                        end: fill_end,
                    },
                    Phase {
                        name: "after".into(),
                        start: fill_end,
                        end,
                    },
                ],
                seed,
            ),
            drain: Nanos::from_secs(5),
            notes: Vec::new(),
            phases_end_with_run: false,
            device,
        }
    }
}

/// A built-in scenario ([`SCENARIOS`]) on `device`.
pub fn scenario(
    name: &str,
    device: DeviceConfig,
    seed: u64,
) -> Result<Simulation, UnknownScenario> {
    Ok(match name {
        "fill-while-serving" => FillWhileServing::standard().simulation(device, seed),
        "quick" => FillWhileServing::quick().simulation(device, seed),
        "fill-listening" => FillWhileServing {
            fill_backpressure: Some(LISTENING_BOUND),
            ..FillWhileServing::standard()
        }
        .simulation(device, seed),
        "quick-listening" => FillWhileServing {
            fill_backpressure: Some(LISTENING_BOUND),
            ..FillWhileServing::quick()
        }
        .simulation(device, seed),
        "long-fill" => long_fill(device, seed),
        _ => return Err(UnknownScenario { name: name.into() }),
    })
}

/// A scenario name [`scenario`] does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scenario `{name}`; scenarios: {}", scenario_names())]
pub struct UnknownScenario {
    pub name: String,
}

/// The built-in scenarios' names, comma-separated.
pub fn scenario_names() -> String {
    let names: Vec<_> = SCENARIOS.iter().map(|(n, _)| *n).collect();
    names.join(", ")
}

/// `long-fill`: a drive whose behaviour changes under a scheduler, twice.
///
/// Fill-while-serving with a longer fill in two halves: reads alone for
/// 10 s; a first fill of 75 s, which runs the free pool out about halfway
/// (foreground GC from then on); 20 s with no I/O at all, during which the
/// drive's idle GC refills part of the pool; reads again for 5 s; a second
/// fill of 75 s into the next part of the region, which starts on a partly
/// refilled pool and runs it out again; 20 s of reads after. The phase
/// `fill` covers both fills, the pause and the reads between them (10 s
/// to 185 s): its write rate is over 175 s of which 150 s fill.
pub fn long_fill(device: DeviceConfig, seed: u64) -> Simulation {
    let first = Nanos::from_secs(75);
    let idle = Nanos::from_secs(20);
    let quiet_reads = Nanos::from_secs(5);
    let plan = FillWhileServing {
        fill: first + idle + quiet_reads + first,
        ..FillWhileServing::standard()
    };
    let page = u64::from(device.geometry.page_size);
    let mut sim = plan.simulation(device, seed);
    let fill_start = plan.before;
    let pause = fill_start + first;
    let resume = pause + idle;
    let second = resume + quiet_reads;
    // Readers stop for the idle pause and resume after it.
    let mut readers = sim.workload.jobs[0].clone();
    readers.name = "readers.2".into();
    readers.start = resume;
    sim.workload.jobs[0].stop = Some(pause);
    sim.workload.jobs[0].name = "readers.1".into();
    // The fill stops at the pause; the second half goes on where it stopped
    // (the same region, further on: the generator restarts at its offset, so
    // the second job starts past the bytes the first could have written).
    let mut fill2 = sim.workload.jobs[1].clone();
    fill2.name = "fill.2".into();
    fill2.start = second;
    if let JobKind::Synthetic(s) = &mut fill2.kind {
        let written = (s.arrival.bytes_per_s.unwrap_or(0.0) * first.as_secs_f64()) as u64;
        let skip =
            written.div_ceil(s.trim_ahead.unwrap_or(s.align)) * s.trim_ahead.unwrap_or(s.align);
        let skip = skip.min(s.size / 2 / page * page);
        s.offset += skip;
        s.size -= skip;
    }
    sim.workload.jobs[1].stop = Some(pause);
    sim.workload.jobs[1].name = "fill.1".into();
    sim.workload.jobs.insert(1, readers);
    sim.workload.jobs.push(fill2);
    sim
}

/// What `iosteer sim` runs on a scenario when no `--sched` is given, so the
/// first run tells the whole story: stock FreeBSD (`fifo`), the paper's two
/// fixes as it tested them (seed 003, section VII: a 100:1 read bias, which
/// left the outliers; then the write queue limited to one command, which
/// removed them), and `steer` at its defaults.
pub const DEFAULT_SPECS: &[&str] = &[
    "fifo",
    "netflix:read_bias=100",
    "netflix:write.limiter=queue_depth,write.current=1",
    "steer",
];

#[cfg(test)]
mod tests {
    use super::*;
    use iosteer_workload::workload::JobKind;

    /// Found by a review: the fill started at a quarter of the capacity,
    /// which on enterprise-nvme and half the family's drives is not on a
    /// page boundary, so every 128 KiB write programmed 9 pages, not 8 (read
    /// p99 37 ms where a drive 26 pages smaller gave 3.5 ms).
    #[test]
    fn the_fill_starts_on_a_page_boundary_of_any_drive() {
        let presets = ["consumer-sata", "enterprise-nvme", "diskSim-slc"];
        let presets = presets.map(|p| DeviceConfig::preset(p).unwrap());
        let family = (1..=10).map(iosteer_device::family::random_drive);
        for drive in presets.into_iter().chain(family) {
            let name = drive.name.clone();
            let page = u64::from(drive.geometry.page_size);
            let sim = FillWhileServing::quick().simulation(drive.clone(), 1);
            let JobKind::Synthetic(fill) = &sim.workload.jobs[1].kind else {
                panic!("the fill is synthetic");
            };
            assert_eq!(fill.offset % page, 0, "{name}: {}", fill.offset);
            // long-fill's second half goes on further into the region.
            let sim = long_fill(drive, 1);
            let JobKind::Synthetic(fill) = &sim.workload.jobs[3].kind else {
                panic!("the second fill is synthetic");
            };
            assert_eq!(fill.offset % page, 0, "{name}, fill.2: {}", fill.offset);
        }
    }
}
