//! The drive model on its own: loading a drive (a preset or a TOML file),
//! the steady-state write-amplification check against Desnoyers' closed
//! form, and how fast the model simulates.

use std::collections::VecDeque;
use std::time::Instant;

use iosteer_device::waf::{WafExperiment, RESERVE_BLOCKS};
use iosteer_device::{Device, DeviceConfig, DeviceStats, Finished, Precondition, VictimPolicy};
use iosteer_sched::{Command, Nanos, Op, Request};
use iosteer_workload::round;
use serde::Serialize;
use thiserror::Error;

/// What went wrong with the drive model on its own.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum DeviceError {
    #[error("{}: {source}", file.display())]
    Read {
        file: std::path::PathBuf,
        source: std::io::Error,
    },
    /// A name that is neither a preset nor a regular file (a directory,
    /// a device node): a drive is a preset or a TOML file.
    #[error("{}: {kind}; expected a drive TOML file or a preset: {presets}", file.display())]
    NotAFile {
        file: std::path::PathBuf,
        kind: &'static str,
        presets: String,
    },
    /// An unknown preset name (the error lists the presets).
    #[error("{name}: {source}")]
    Preset {
        name: String,
        source: iosteer_device::ConfigError,
    },
    #[error(transparent)]
    Config(#[from] iosteer_device::ConfigError),
    /// A `family:` name without a seed.
    #[error("{message}")]
    Family { message: String },
    #[error("{name}: expected one of {}", victim_names())]
    UnknownVictim { name: String },
    #[error("{blocks} blocks of {pages_per_block} pages: need at least 16 blocks of 2 pages")]
    TooSmall { blocks: u32, pages_per_block: u32 },
    #[error("alpha {alpha}: {message}")]
    Experiment { alpha: f64, message: String },
    #[error(transparent)]
    Aging(#[from] iosteer_device::FtlError),
    #[error(transparent)]
    Refused(#[from] iosteer_device::Refused),
}

fn victim_names() -> String {
    let names: Vec<_> = VictimPolicy::ALL.iter().map(|v| v.name()).collect();
    names.join(", ")
}

/// Loads a drive from a preset name, a family drive (`family:N`) or a
/// TOML file.
pub fn load_device(spec: &str) -> Result<DeviceConfig, DeviceError> {
    if let Some(seed) = iosteer_device::family::family_seed(spec) {
        return seed
            .map(iosteer_device::family::random_drive)
            .map_err(|message| DeviceError::Family { message });
    }
    let path = std::path::Path::new(spec);
    let preset = iosteer_device::config::preset_names().contains(&spec);
    if let (false, Ok(meta)) = (preset, std::fs::metadata(path)) {
        if !meta.is_file() {
            return Err(DeviceError::NotAFile {
                file: path.into(),
                kind: if meta.is_dir() {
                    "a directory"
                } else {
                    "not a regular file"
                },
                presets: iosteer_device::config::preset_names().join(", "),
            });
        }
    }
    if spec.ends_with(".toml") || std::path::Path::new(spec).is_file() {
        let text = std::fs::read_to_string(spec).map_err(|source| DeviceError::Read {
            file: spec.into(),
            source,
        })?;
        return Ok(DeviceConfig::from_toml(&text, spec)?);
    }
    DeviceConfig::preset(spec).map_err(|source| DeviceError::Preset {
        name: spec.to_string(),
        source,
    })
}

/// The victim policy named `name`.
pub fn parse_victim(name: &str) -> Result<VictimPolicy, DeviceError> {
    VictimPolicy::ALL
        .into_iter()
        .find(|v| v.name() == name)
        .ok_or_else(|| DeviceError::UnknownVictim { name: name.into() })
}

#[derive(Debug, Serialize)]
pub struct WafReport {
    pub victim: String,
    pub alpha: f64,
    pub waf: f64,
    /// Desnoyers' closed form (null for cost-benefit, which has none).
    pub analytic: Option<f64>,
    pub blocks: u32,
    pub pages_per_block: u32,
    /// Bytes per page and per mapping unit: `waf` is in bytes, the closed
    /// form counted in units.
    pub page_size: u32,
    pub mapping_unit: u32,
    pub reserve_blocks: u32,
    pub logical_pages: u64,
    pub seconds: f64,
}

pub fn waf(
    victim: VictimPolicy,
    alpha: f64,
    blocks: u32,
    pages_per_block: u32,
    (page_size, mapping_unit): (u32, u32),
    seed: u64,
) -> Result<WafReport, DeviceError> {
    if blocks < 16 || pages_per_block < 2 {
        return Err(DeviceError::TooSmall {
            blocks,
            pages_per_block,
        });
    }
    let experiment = WafExperiment {
        blocks,
        pages_per_block,
        page_size,
        mapping_unit,
        seed,
        ..WafExperiment::new(victim, alpha)
    };
    let started = Instant::now();
    let measured = experiment
        .run()
        .map_err(|message| DeviceError::Experiment { alpha, message })?;
    Ok(WafReport {
        victim: victim.name().to_string(),
        alpha,
        waf: round(measured, 4),
        analytic: experiment.analytic().map(|a| round(a, 4)),
        blocks,
        pages_per_block,
        page_size,
        mapping_unit,
        reserve_blocks: RESERVE_BLOCKS,
        logical_pages: experiment.logical_pages(),
        seconds: round(started.elapsed().as_secs_f64(), 3),
    })
}

#[derive(Debug, Serialize)]
pub struct DeviceBench {
    pub device: String,
    pub logical_gib: f64,
    /// Wall time to age the drive (full, then 2x capacity of random overwrites).
    pub precondition_s: f64,
    pub precondition_pages_per_s: f64,
    /// Host requests simulated per second of wall time (4 KiB random, 70% reads,
    /// 32 in flight).
    pub host_requests_per_s: f64,
    /// NAND page reads, page programs and block erases simulated per second.
    pub nand_ops_per_s: f64,
    pub requests: u64,
    pub write_amplification: f64,
}

/// `names`, or every preset when there is none.
pub fn or_every_preset(names: Vec<String>) -> Vec<String> {
    if !names.is_empty() {
        return names;
    }
    let presets = iosteer_device::config::preset_names();
    presets.iter().map(|s| s.to_string()).collect()
}

/// NAND page operations the drive simulated: host page reads and writes,
/// GC page moves (a read and a program each) and block erases.
pub fn nand_page_ops(stats: &DeviceStats) -> u64 {
    stats.host_pages_read
        + stats.ftl.host_pages_written
        + 2 * stats.ftl.gc_pages_moved
        + stats.ftl.blocks_erased
}

/// Ages `config` and drives `requests` random 4 KiB requests through it.
pub fn bench_device(config: DeviceConfig, requests: u64) -> Result<DeviceBench, DeviceError> {
    let name = config.name.clone();
    let mut device = Device::new(config)?;
    let logical_gib = device.capacity() as f64 / (1u64 << 30) as f64;
    let started = Instant::now();
    device.precondition(Precondition::default())?;
    let precondition_s = started.elapsed().as_secs_f64();
    let aged_pages = device.ftl().logical_pages() as f64 * 3.0;

    let pages = device.capacity() / 4096;
    let mut rng = 0x5EED_u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut finished: Vec<Finished> = Vec::new();
    let mut pending: VecDeque<Command> = VecDeque::new();
    let mut now = Nanos::ZERO;
    let started = Instant::now();
    for id in 0..requests {
        let op = if next() % 10 < 7 { Op::Read } else { Op::Write };
        pending.push_back(Command::single(
            Request::new(id, op, (next() % pages) * 4096, 4096, now),
            now,
        ));
        while device.view().accepts() {
            let Some(command) = pending.pop_front() else {
                break;
            };
            device.submit(command, now)?;
        }
        // Die operations end between completions: play on until a slot frees.
        while !device.view().accepts() {
            let t = device.next_event().expect("a full device has an event");
            now = now.max(t);
            finished.clear();
            device.advance(now, &mut finished);
        }
    }
    while let Some(t) = device.next_event() {
        if device.view().in_flight == 0 {
            break;
        }
        device.advance(t, &mut finished);
    }
    let wall = started.elapsed().as_secs_f64();
    let stats = device.stats();
    let nand_ops = nand_page_ops(&stats);
    Ok(DeviceBench {
        device: name,
        logical_gib: round(logical_gib, 1),
        precondition_s: round(precondition_s, 2),
        precondition_pages_per_s: round(aged_pages / precondition_s, 0),
        host_requests_per_s: round(requests as f64 / wall, 0),
        nand_ops_per_s: round(nand_ops as f64 / wall, 0),
        requests,
        write_amplification: round(stats.write_amplification(), 3),
    })
}

/// The terminal table of [`bench_device`] results: one line a drive.
pub fn bench_table(results: &[DeviceBench]) -> String {
    let mut out = format!(
        "{:<16} {:>8} {:>14} {:>16} {:>14} {:>6}\n",
        "device", "GiB", "aging s", "host req/s", "NAND ops/s", "WAF"
    );
    for r in results {
        out += &format!(
            "{:<16} {:>8.1} {:>14.2} {:>16.0} {:>14.0} {:>6.2}\n",
            r.device,
            r.logical_gib,
            r.precondition_s,
            r.host_requests_per_s,
            r.nand_ops_per_s,
            r.write_amplification
        );
    }
    out
}

impl WafReport {
    /// One line: measured against the closed form, and the drive it ran on.
    pub fn summary(&self) -> String {
        let analytic = self
            .analytic
            .map_or("none".to_string(), |a| format!("{a:.3}"));
        format!(
            "victim {} alpha {}: write amplification {:.3} measured, {} analytic \
             ({} blocks x {} pages, {} reserve blocks, {:.1} s)",
            self.victim,
            self.alpha,
            self.waf,
            analytic,
            self.blocks,
            self.pages_per_block,
            self.reserve_blocks,
            self.seconds
        )
    }
}

/// The presets, one line each: size, dies, interface, GC and TRIM.
pub fn preset_list() -> Result<String, iosteer_device::ConfigError> {
    let mut out = String::new();
    for name in iosteer_device::config::preset_names() {
        let c = DeviceConfig::preset(name)?;
        out += &format!(
            "{:<16} {:>5.1} GiB logical, {} dies, {:?} queue depth {}, GC {} ({})\n",
            name,
            c.logical_bytes() as f64 / (1u64 << 30) as f64,
            c.geometry.dies(),
            c.interface.kind,
            c.interface.queue_depth,
            c.gc.victim,
            if c.interface.queued_trim {
                "queued TRIM"
            } else {
                "non-queued TRIM"
            },
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_or_device_node_is_not_a_drive_file() {
        let dir = std::env::temp_dir();
        let e = load_device(dir.to_str().unwrap()).unwrap_err().to_string();
        assert!(
            e.contains("a directory") && e.contains("consumer-sata"),
            "{e}"
        );
        let e = load_device("/dev/null").unwrap_err().to_string();
        assert!(
            e.contains("not a regular file") && e.contains("consumer-sata"),
            "{e}"
        );
    }

    #[test]
    fn a_small_waf_run_reports_measured_and_analytic() {
        let r = waf(VictimPolicy::Fifo, 1.5, 256, 16, (4096, 4096), 1).unwrap();
        assert_eq!(r.victim, "fifo");
        assert!(r.waf > 1.0 && r.analytic.unwrap() > 1.0);
        assert!(waf(VictimPolicy::Fifo, 0.9, 256, 16, (4096, 4096), 1).is_err());
        assert!(waf(VictimPolicy::Fifo, 1.5, 4, 16, (4096, 4096), 1).is_err());
    }

    #[test]
    fn a_bad_victim_or_device_names_what_exists() {
        assert!(parse_victim("lru")
            .unwrap_err()
            .to_string()
            .contains("greedy, fifo, cost_benefit"));
        assert!(load_device("hdd")
            .unwrap_err()
            .to_string()
            .contains("consumer-sata"));
        assert!(load_device("/nonexistent/drive.toml")
            .unwrap_err()
            .to_string()
            .contains("/nonexistent/drive.toml"));
    }

    #[test]
    fn the_device_bench_drives_every_request() {
        let mut config = DeviceConfig::preset("diskSim-slc").unwrap();
        config.geometry.blocks_per_plane = 64;
        let r = bench_device(config, 2_000).unwrap();
        assert!(r.host_requests_per_s > 0.0 && r.nand_ops_per_s > 0.0);
    }
}
