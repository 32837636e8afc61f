//! The targets a probe steps on, the emulated drive or a file or block
//! device, each with its reads.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::Path;

use iosteer_device::{Device, DeviceConfig, Precondition};
use iosteer_engine::drive::{largest_io, open_engine, writes};
use iosteer_engine::emulate::Emulated;
use iosteer_engine::runner::Backend;
use iosteer_engine::{Engine, EngineConfig, OpenOptionsSpec, Target, TargetKind};
use iosteer_sched::Nanos;
use iosteer_sim::plan::aging_note;
use iosteer_sim::scenario::FillWhileServing;
use iosteer_workload::fio;
use iosteer_workload::workload::{Arrival, Job, JobKind, Synthetic};

use super::{
    Probe, ProbeError, ProbeOptions, ReadLoad, CALIBRATION_IODEPTH, POOL_BLOCKS, QUEUE_DEPTH,
};

/// Open-loop reads are capped by their rate alone (as the scenario's are).
const OPEN_LOOP: u32 = 100_000;

/// The default reads: random, over the whole target, Poisson at `rate`
/// bytes per second, or closed loop with `iodepth` outstanding when `None`.
pub(super) fn default_reads(capacity: u64, rate: Option<f64>, iodepth: u32) -> Job {
    let size = FillWhileServing::standard().read_size;
    let readers = Synthetic::reads(
        size,
        0,
        capacity / size * size,
        Arrival::open(None, rate, true, iodepth),
    );
    Job {
        name: "reads".into(),
        kind: JobKind::Synthetic(readers),
        start: Nanos::ZERO,
        stop: None,
        shape: Default::default(),
    }
}

/// The default reads at `rate`, and what they are.
fn reads_at(capacity: u64, rate: f64, why: &str) -> (Vec<Job>, String) {
    let text = format!(
        "reads random {} KiB at {:.1} MB/s ({why})",
        FillWhileServing::standard().read_size >> 10,
        rate / 1e6
    );
    (vec![default_reads(capacity, Some(rate), OPEN_LOOP)], text)
}

/// The read jobs of a job file (its name and text) against `capacity` bytes.
fn file_reads(file: &str, text: &str, capacity: u64) -> Result<Vec<Job>, ProbeError> {
    let jobs = fio::parse(text, file, capacity)?;
    let read_job = |problem: String| ProbeError::ReadJob {
        file: file.to_string(),
        problem,
    };
    if jobs.is_empty() {
        return Err(read_job("the job file has no job".into()));
    }
    if let Some(job) = jobs.iter().find(|j| writes(std::slice::from_ref(j))) {
        return Err(read_job(format!(
            "job {} writes or trims; the probe adds the writes itself",
            job.name
        )));
    }
    if let Some(job) = jobs.iter().find(|j| j.end_offset() > capacity) {
        return Err(read_job(format!(
            "job {} reaches byte {} of a {capacity}-byte target",
            job.name,
            job.end_offset()
        )));
    }
    Ok(jobs)
}

/// Refuses a target smaller than one read or one write.
fn check_fits(capacity: u64, options: &ProbeOptions) -> Result<(), ProbeError> {
    let needed = options.write_bs.max(FillWhileServing::standard().read_size);
    if capacity < needed {
        return Err(ProbeError::TooSmall { capacity, needed });
    }
    Ok(())
}

/// The drive `config` as the probe emulates it: its GC keeps a pool of at
/// most `POOL_BLOCKS` (4) blocks above its low watermark.
pub fn emulated_drive(mut config: DeviceConfig) -> DeviceConfig {
    config.gc.high_watermark = config
        .gc
        .high_watermark
        .min(config.gc.low_watermark + POOL_BLOCKS);
    config
}

/// The emulated drive, aged, with its reads.
pub fn emulated(
    options: &ProbeOptions,
    config: DeviceConfig,
) -> Result<Probe<Emulated>, ProbeError> {
    let config = emulated_drive(config);
    let capacity = config.logical_bytes();
    check_fits(capacity, options)?;
    let (readers, reads) = match &options.reads {
        ReadLoad::File { name, text } => (
            file_reads(name, text, capacity)?,
            format!("reads of {name}"),
        ),
        ReadLoad::Rate(rate) => reads_at(capacity, *rate, "--read-rate"),
        ReadLoad::Default => {
            let share = FillWhileServing::standard().read_share_of_link;
            let (rate, of) = match config.read_mb_per_s() {
                nand if nand < config.timing.host_link_mb_per_s => (nand, "its NAND reads"),
                link => (link, "the host link"),
            };
            reads_at(
                capacity,
                rate * 1e6 * share,
                &format!("{:.0}% of {of}", share * 100.0),
            )
        }
    };
    let name = config.name.clone();
    // The drive file's (or `--precondition`'s) start, else an aged drive.
    let start_state = config.precondition.map(|table| table.state);
    let aging = Precondition {
        state: start_state.unwrap_or_default(),
        seed: options.seed,
    };
    let how_long = aging_note(&config, aging.state).map_or_else(String::new, |n| format!(" ({n})"));
    let mut device = Device::new(config)?;
    eprintln!("iosteer: aging the emulated {name} drive{how_long}...");
    device.precondition_until(aging, &mut || !(options.stop)())?;
    let drive = Emulated::new(device);
    let description = format!(
        "the emulated {name} drive (real time, {} command slots)",
        drive.view().slots
    );
    let mut probe = Probe::new(drive, format!("emulated {name}"), description, capacity);
    probe.set_reads(readers, reads, options.write_bs);
    Ok(probe)
}

/// A file or block device, opened as `iosteer run` opens it (`size`: create
/// or grow a file to it; `force`: write to a block device), with its reads.
pub fn real(
    options: &ProbeOptions,
    path: &Path,
    size: Option<u64>,
    force: bool,
) -> Result<Probe<Engine>, ProbeError> {
    let before = std::fs::metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map_or(0, |m| m.len());
    let spec = OpenOptionsSpec {
        size,
        writes: true,
        force,
        direct: true,
    };
    let target = Target::open(path, &spec)?;
    check_fits(target.size, options)?;
    if target.kind == TargetKind::File && target.size > before {
        write_through(path, before, target.size)?;
    }
    let capacity = target.size;
    let file_jobs = match &options.reads {
        ReadLoad::File { name, text } => Some(file_reads(name, text, capacity)?),
        _ => None,
    };
    let read_size = file_jobs
        .as_deref()
        .map_or(FillWhileServing::standard().read_size, largest_io);
    let config = EngineConfig {
        queue_depth: QUEUE_DEPTH,
        max_io_bytes: read_size.max(options.write_bs) as usize,
        ..EngineConfig::default()
    };
    let (engine, label, description) = open_engine(vec![(target, 0)], &config)?;
    let mut probe = Probe::new(engine, label, description, capacity);
    let (readers, reads) = match (&options.reads, file_jobs) {
        (ReadLoad::File { name, .. }, Some(jobs)) => (jobs, format!("reads of {name}")),
        (ReadLoad::Rate(rate), _) => reads_at(capacity, *rate, "--read-rate"),
        _ => {
            let measured = probe.calibrate(options)?;
            let share = FillWhileServing::standard().read_share_of_link;
            let why = format!(
                "{:.0}% of the {:.1} MB/s read with {CALIBRATION_IODEPTH} outstanding",
                share * 100.0,
                measured / 1e6
            );
            reads_at(capacity, measured * share, &why)
        }
    };
    probe.set_reads(readers, reads, options.write_bs);
    Ok(probe)
}

/// Writes bytes `from..to` of the file once (buffered, then synced), so
/// that reads of them reach the disk: reads of a sparse file's holes never
/// do. The bytes are not zeros, which a layer below might not store.
fn write_through(path: &Path, from: u64, to: u64) -> Result<(), ProbeError> {
    use std::io::{Seek, SeekFrom};
    let failed = |source| ProbeError::WriteThrough {
        path: path.to_path_buf(),
        source,
    };
    eprintln!(
        "iosteer: writing the {} MiB the probe added to {} once, so reads reach the disk...",
        (to - from) >> 20,
        path.display()
    );
    let mut file = OpenOptions::new().write(true).open(path).map_err(failed)?;
    file.seek(SeekFrom::Start(from)).map_err(failed)?;
    let chunk = vec![0xa5u8; 1 << 20];
    let mut at = from;
    while at < to {
        let n = (to - at).min(chunk.len() as u64) as usize;
        file.write_all(&chunk[..n]).map_err(failed)?;
        at += n as u64;
    }
    file.sync_all().map_err(failed)
}
