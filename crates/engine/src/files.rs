//! The files a run's jobs do their I/O on, found, opened and laid out as
//! fio does it.
//!
//! Where a job's I/O goes (fio's rules, with `--target` as fio's command
//! line `--filename` or `--directory`):
//! - a job's own `filename` list: each name relative to the job's
//!   `directory`, else to the target directory, else to the current
//!   directory (absolute names stand);
//! - a job naming no file: the target, when it is a file or a block device
//!   (its `nrfiles` are then ranges of it, as in the simulator); otherwise
//!   fio's default names, `JOB.N.F` (section, copy, file number), in the job's
//!   directory, the target directory or the current directory;
//! - a job replaying fio's iolog (`read_iolog`): the files the log names
//!   (relative names as above), or `replay_redirect`'s device, each missing
//!   one created as long as the log reaches in it, as fio creates them; a
//!   trace (`iosteer_trace`) replays on the job's one file.
//!
//! A named file holds `size / nrfiles` bytes from `offset`, as fio's does;
//! one that is missing or too short is created or grown to that when the
//! job gives its size (or `--size` does), and refused otherwise. What is
//! created or grown is laid out (written) before the run when a job reads
//! the file, as fio lays out a file before reading it, so reads reach the
//! disk rather than holes; write-only files are only sized, as fio sizes
//! them. A file is created or grown only where its file system has the room
//! free, and what it grows by is then reserved (`fallocate`, as fio's
//! default `fallocate=native` does), so a run whose files the file system
//! cannot hold is refused before it starts, not failed write by write; a
//! job's `fallocate=none` leaves a file it only writes sparse and unchecked. A read region that already holes (a sparse file) is named in the
//! notes, since reads there never reach the disk.
//!
//! Every file gets its own range of the commands' byte addresses (the
//! engine's [`Engine::of_targets`](crate::Engine::of_targets)), with a gap
//! between files so no scheduler merges requests across two of them; the
//! jobs' offsets are moved to those ranges. One scheduler so orders the I/O
//! of every file, as the block layer's one queue per device does.

use std::io;
use std::path::{Path, PathBuf};

use iosteer_sched::Op;
use iosteer_workload::fio::{self, FioError, JobFile};
use iosteer_workload::output::free_bytes;
use iosteer_workload::trace::TraceRecords;
use iosteer_workload::workload::{Job, JobKind};
use thiserror::Error;

use crate::target::{direct_io_alignment, OpenOptionsSpec, Target, TargetError, TargetKind};

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum FilesError {
    #[error(transparent)]
    Target(#[from] TargetError),
    /// A file to create, and no size for it (neither the job's `size=` nor
    /// [`FileOptions::size`]).
    #[error(
        "job {job}: {path} does not exist and has no size to be created with: give the job a size="
    )]
    Missing { job: String, path: PathBuf },
    /// A missing file a job may not create (fio's `allow_file_create=0`).
    #[error("job {job}: {path} does not exist, and allow_file_create=0 forbids creating it (fio refuses too)")]
    NotToCreate { job: String, path: PathBuf },
    /// An existing file shorter than the job's region; a size grows it.
    #[error("job {job}: {path} is {size} bytes and the job reaches {needed}: give the job a size= to grow it")]
    Short {
        job: String,
        path: PathBuf,
        size: u64,
        needed: u64,
    },
    #[error("{path}: every job names its own files (filename=), so the target is not used; leave it out, or give a directory for the jobs' relative names")]
    TargetUnused { path: PathBuf },
    #[error(
        "job {job}: iosteer_trim_ahead trims ahead in one region, and the job has {files} files"
    )]
    TrimAheadFiles { job: String, files: usize },
    #[error("laying out {path}: {source}")]
    Layout { path: PathBuf, source: io::Error },
    /// [`FileOptions::stop`] asked to stop while a file was laid out: the
    /// run did not start.
    #[error("stopped while laying out {path} ({written} of {total} bytes written): the run did not start, and the file is put back as it was (removed, or cut back to its old size)")]
    LayoutStopped {
        path: PathBuf,
        written: u64,
        total: u64,
    },
    /// Files to create or grow that their file system has no room for:
    /// refused before any is created (`path` is the first of `files`).
    #[error(
        "{path}: creating or growing the jobs' {files} file(s) on its file system to their size needs {needed} bytes ({:.1} MiB) of free space, and it has {available} bytes ({:.1} MiB)",
        *.needed as f64 / 1048576.0,
        *.available as f64 / 1048576.0
    )]
    NoRoom {
        path: PathBuf,
        files: usize,
        needed: u64,
        available: u64,
    },
    /// A file would be made or written past the process's file size limit
    /// (`ulimit -f`), where the kernel ends the process with SIGXFSZ.
    #[error("{}: the jobs make or write it up to {reach} bytes, past this process's file size limit of {limit} bytes (ulimit -f), where the system would end the run", path.display())]
    FileSizeLimit {
        path: PathBuf,
        reach: u64,
        limit: u64,
    },
    #[error("reserving space for {path}: {source}")]
    Reserve { path: PathBuf, source: io::Error },
    /// The job file, which reads well against files of any size, does not
    /// fit the size given ([`FileOptions::size`], `size` bytes).
    #[error("{source}")]
    JobsPastSize { size: u64, source: FioError },
    /// A job's size or offset is a percentage, and no file exists for it
    /// to be a percentage of.
    #[error("job {job}: its size or offset is a percentage, and of no file: no target file or device, and none of the jobs' files exists yet")]
    PercentOfNothing { job: String },
    /// The job file does not fit the files that exist (`size` bytes, the
    /// target or the largest job's files): here they are the drive.
    #[error("{source}; here the drive is the target or the jobs' files that exist")]
    JobsPastFiles { size: u64, source: FioError },
    #[error(transparent)]
    Fio(#[from] FioError),
}

/// How to find and open the jobs' files.
#[derive(Clone, Debug, Default)]
pub struct FileOptions {
    /// `--target`: a file or block device (the file of jobs naming none), or
    /// a directory (where relative names are).
    pub target: Option<PathBuf>,
    /// `--size`: the target file's size, and the size of files created for
    /// jobs that give none.
    pub size: Option<u64>,
    pub force: bool,
    pub direct: bool,
    /// Asked while a file is laid out; `true` stops (the caller's Ctrl-C).
    pub stop: Option<fn() -> bool>,
}

/// The opened files at their base addresses, and what the report should
/// say about them (laid out, holes).
#[derive(Debug)]
pub struct Placement {
    pub targets: Vec<(Target, u64)>,
    /// Per job (its tenant), the targets it does its I/O on: where its
    /// flushes go, as fio syncs only the job's own files.
    pub job_targets: Vec<Vec<usize>>,
    pub notes: Vec<String>,
}

/// Room left between two files' address ranges, and their alignment.
const GAP: u64 = 1 << 20;

/// What the jobs do with one file.
#[derive(Debug, Default)]
struct Use {
    /// Bytes the jobs reach (offset + region).
    needed: u64,
    /// A job writes or trims it (it is opened for writing).
    writes: bool,
    /// A job writes data into it (a trim grows no file).
    writes_data: bool,
    /// A job asked for it to stay sparse (fio's `fallocate=none`).
    sparse: bool,
    /// Byte ranges the jobs read.
    reads: Vec<(u64, u64)>,
    /// Created or grown to `needed` when short.
    sized: bool,
    /// A job that needs it and gives no size, for the error.
    unsized_job: Option<String>,
    /// A job that may not create it (`allow_file_create=0`).
    no_create: Option<String>,
    /// The finest boundary the jobs' requests fall on, and the job.
    granule: Option<(u64, String)>,
}

/// Where each job's I/O goes: its files, or `None` for the target's ranges.
fn job_paths(job: &Job, base_dir: &Path, default_file: Option<&Path>) -> Option<Vec<PathBuf>> {
    let files = &job.shape.files;
    if files.names.is_empty() && default_file.is_some() {
        return None;
    }
    let dir = match &files.directory {
        Some(d) => base_dir.join(d),
        None => base_dir.to_path_buf(),
    };
    if !files.names.is_empty() {
        return Some(files.names.iter().map(|n| dir.join(n)).collect());
    }
    let section = if job.shape.section.is_empty() {
        &job.name
    } else {
        &job.shape.section
    };
    let copy = job
        .name
        .strip_prefix(section.as_str())
        .and_then(|rest| rest.strip_prefix('.'))
        .unwrap_or("0");
    // fio names a renamed job's files after its header.
    let section = match files.stem.is_empty() {
        true => section,
        false => &files.stem,
    };
    Some(
        (0..files.count())
            .map(|f| dir.join(format!("{section}.{copy}.{f}")))
            .collect(),
    )
}

/// The bytes each of a job's `files` files holds: as the generator cuts
/// them, or as far as the trace reaches in each file it names.
fn file_regions(job: &Job, files: usize) -> Vec<(u64, u64)> {
    match &job.kind {
        JobKind::Synthetic(s) => {
            let size = (s.size / files as u64 / s.align * s.align).max(s.block_max);
            vec![(s.offset, s.offset.saturating_add(size)); files]
        }
        JobKind::Trace(records) if records.devices().len() == files => {
            records.devices().iter().map(|d| (0, d.reach)).collect()
        }
        JobKind::Trace(_) => vec![(job.start_offset(), job.end_offset()); files],
    }
}

fn reads(job: &Job) -> bool {
    match &job.kind {
        JobKind::Synthetic(s) => !s.trim && s.read_percent > 0,
        JobKind::Trace(records) => records.summary().has(Op::Read),
    }
}

fn writes(job: &Job) -> bool {
    crate::drive::writes(std::slice::from_ref(job))
}

fn writes_data(job: &Job) -> bool {
    match &job.kind {
        JobKind::Synthetic(s) => !s.trim && s.read_percent < 100,
        JobKind::Trace(records) => records.summary().has(Op::Write),
    }
}

/// Where relative names are, and the file of jobs that name none: a
/// directory target is the first, a file or device target the second.
fn roots(options: &FileOptions) -> (PathBuf, Option<&Path>) {
    match &options.target {
        Some(t) if t.is_dir() => (t.clone(), None),
        Some(t) => (PathBuf::new(), Some(t.as_path())),
        None => (PathBuf::new(), None),
    }
}

/// The job file `text` (named `file`) parsed for a run on the files of
/// `options`: once to learn which files its jobs name, then against their
/// size ([`capacity`]; a quarter of the address space when none exists).
/// A file that reads well the first time and not against the size given
/// is [`FilesError::JobsPastSize`]: that size, not the file, is at fault.
pub fn parse_job_file(
    text: &str,
    file: &str,
    options: &FileOptions,
) -> Result<JobFile, FilesError> {
    let provisional = fio::parse_file(text, file, 2 * fio::UNKNOWN_CAPACITY)?;
    let Some(size) = capacity(&provisional.jobs, options) else {
        refuse_percentages_of_nothing(text, file, &provisional)?;
        // Jobs that all give their sizes read the same against any size:
        // once more with the check the first reading skipped (the memory
        // their read-backs keep).
        if provisional.jobs.iter().all(|j| j.shape.sized) {
            return Ok(fio::parse_file(text, file, fio::UNKNOWN_CAPACITY - 1)?);
        }
        return Ok(provisional);
    };
    fio::parse_file(text, file, size).map_err(|source| match options.size {
        Some(size) => FilesError::JobsPastSize { size, source },
        None => FilesError::JobsPastFiles { size, source },
    })
}

/// With no target, no `--size` and none of their files there yet, a job
/// whose size or offset is a percentage has nothing to be a percentage of
/// (fio: "you need to specify size="): its region moves with the size it
/// is read against (`provisional`'s, and half of it).
fn refuse_percentages_of_nothing(
    text: &str,
    file: &str,
    provisional: &JobFile,
) -> Result<(), FilesError> {
    let halved = fio::parse_file(text, file, fio::UNKNOWN_CAPACITY)?;
    let moved = (provisional.jobs.iter().zip(&halved.jobs)).find(|(a, b)| {
        a.shape.sized && (a.start_offset(), a.end_offset()) != (b.start_offset(), b.end_offset())
    });
    match moved {
        Some((job, _)) => Err(FilesError::PercentOfNothing {
            job: job.name.clone(),
        }),
        None => Ok(()),
    }
}

/// The size the jobs' sizes and percentages are read against: `--size`,
/// else the largest of the target and, per job, its files that exist
/// taken together (fio reads a job's size against its files': a job of
/// `nrfiles=2` spans both).
pub fn capacity(jobs: &[Job], options: &FileOptions) -> Option<u64> {
    if options.size.is_some() {
        return options.size;
    }
    let (base_dir, default_file) = roots(options);
    let size_of = |p: &Path| {
        p.exists()
            .then(|| Target::open(p, &OpenOptionsSpec::default()).ok())
            .flatten()
            .map(|t| t.size)
    };
    let named = jobs
        .iter()
        .filter_map(|j| job_paths(j, &base_dir, default_file))
        .filter_map(|paths| {
            let sizes: Vec<u64> = paths.iter().filter_map(|p| size_of(p)).collect();
            (!sizes.is_empty()).then(|| sizes.iter().fold(0u64, |a, &b| a.saturating_add(b)))
        });
    default_file
        .and_then(size_of)
        .into_iter()
        .chain(named)
        .max()
}

/// Finds, opens (creating, growing and laying out as needed) the jobs'
/// files, and moves the jobs' offsets to each file's range.
pub fn place(jobs: &mut [Job], options: &FileOptions) -> Result<Placement, FilesError> {
    let (base_dir, default_file) = roots(options);
    let per_job: Vec<Option<Vec<PathBuf>>> = jobs
        .iter()
        .map(|j| job_paths(j, &base_dir, default_file))
        .collect();
    // The default file first, at base 0, so its jobs keep their offsets.
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut uses: Vec<Use> = Vec::new();
    let index_of = |path: &Path, paths: &mut Vec<PathBuf>, uses: &mut Vec<Use>| {
        paths
            .iter()
            .position(|p| same_file(p, path))
            .unwrap_or_else(|| {
                paths.push(path.to_path_buf());
                uses.push(Use::default());
                paths.len() - 1
            })
    };
    if let Some(file) = default_file {
        let named_by_a_job = per_job
            .iter()
            .flatten()
            .flatten()
            .any(|p| same_file(p, file));
        if per_job.iter().all(Option::is_some) && !named_by_a_job {
            return Err(FilesError::TargetUnused {
                path: file.to_path_buf(),
            });
        }
        index_of(file, &mut paths, &mut uses);
        uses[0].sized = options.size.is_some();
    }
    let mut job_targets = Vec::with_capacity(jobs.len());
    for (job, files) in jobs.iter().zip(&per_job) {
        let targets: Vec<(usize, (u64, u64))> = match files {
            None => vec![(0, (job.start_offset(), job.end_offset()))],
            Some(files) => (files.iter())
                .zip(file_regions(job, files.len()))
                .map(|(f, region)| (index_of(f, &mut paths, &mut uses), region))
                .collect(),
        };
        job_targets.push(targets.iter().map(|(i, _)| *i).collect());
        for (i, (start, end)) in targets {
            let u = &mut uses[i];
            u.needed = u.needed.max(end);
            u.writes |= writes(job);
            u.writes_data |= writes_data(job);
            u.sparse |= job.shape.sparse;
            if job.shape.no_create {
                u.no_create.get_or_insert_with(|| job.name.clone());
            }
            if let Some(granule) = job.granule() {
                if u.granule
                    .as_ref()
                    .is_none_or(|(finest, _)| granule < *finest)
                {
                    u.granule = Some((granule, job.name.clone()));
                }
            }
            if reads(job) {
                u.reads.push((start, end));
            }
            // The target's own size is `--size`'s (see `growth`).
            if job.shape.sized || (files.is_some() && options.size.is_some()) {
                u.sized = true;
            } else if files.is_some() {
                u.unsized_job.get_or_insert_with(|| job.name.clone());
            }
        }
    }
    // Before any file is created: a refusal leaves nothing behind.
    for (path, u) in paths.iter().zip(&uses) {
        if let (Some(job), false) = (&u.no_create, path.exists()) {
            let (job, path) = (job.clone(), path.to_path_buf());
            return Err(FilesError::NotToCreate { job, path });
        }
    }
    check_room(&paths, &uses, options)?;
    check_aligned(&paths, &uses, options)?;
    let mut notes: Vec<String> = io_mode_note(jobs, options.direct).into_iter().collect();
    let mut targets = Vec::new();
    let mut base = 0;
    let mut bases = Vec::new();
    for (path, u) in paths.iter().zip(&uses) {
        let target = open_one(path, u, options, &mut notes)?;
        bases.push(base);
        base = (base + target.size + 1).div_ceil(GAP) * GAP;
        targets.push((target, bases[bases.len() - 1]));
    }
    for (job, files) in jobs.iter_mut().zip(&per_job) {
        let Some(files) = files else { continue };
        let starts: Vec<u64> = files
            .iter()
            .map(|f| bases[paths.iter().position(|p| same_file(p, f)).expect("placed")])
            .collect();
        move_to_files(job, &starts)?;
    }
    Ok(Placement {
        targets,
        job_targets,
        notes,
    })
}

/// With direct I/O, refuses a job whose requests fall on boundaries finer
/// than its file's direct-I/O alignment ([`direct_io_alignment`]): every
/// one of them would fail. Checked for all the files before any is made;
/// where the kernel does not say, a failing request is reported when it
/// fails.
fn check_aligned(paths: &[PathBuf], uses: &[Use], options: &FileOptions) -> Result<(), FilesError> {
    if !options.direct {
        return Ok(());
    }
    for (path, u) in paths.iter().zip(uses) {
        let Some((granule, job)) = &u.granule else {
            continue;
        };
        match direct_io_alignment(path) {
            Some(needed) if granule % needed != 0 => {
                return Err(FilesError::Target(TargetError::Unaligned {
                    job: job.clone(),
                    path: path.clone(),
                    granule: *granule,
                    needed,
                }))
            }
            _ => {}
        }
    }
    Ok(())
}

/// A note naming the job-file sections whose jobs ask for another I/O
/// mode than the run's: buffered (fio's default) in an O_DIRECT run, or
/// direct in a buffered one.
fn io_mode_note(jobs: &[Job], direct: bool) -> Option<String> {
    let mut sections: Vec<&str> = jobs
        .iter()
        .filter(|job| job.shape.direct.is_some_and(|asks| asks != direct))
        .map(|job| job.shape.section.as_str())
        .collect();
    sections.dedup();
    let named = sections.join(", ");
    match (sections.is_empty(), direct) {
        (true, _) => None,
        (false, true) => Some(format!("{named}: fio would run these jobs buffered (direct=0, its default); this run bypasses the page cache (O_DIRECT), as iosteer run does unless --buffered")),
        (false, false) => Some(format!("{named}: direct=1 asks for O_DIRECT; this run goes through the page cache (--buffered)")),
    }
}

/// The same file by name, or by device and inode when both exist
/// (`./a` and `a`, a link).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    a == b
        || matches!(
            (std::fs::metadata(a), std::fs::metadata(b)),
            (Ok(x), Ok(y)) if (x.dev(), x.ino()) == (y.dev(), y.ino())
        )
}

/// Moves a job's offsets into its files' ranges (`starts`: each file's base).
fn move_to_files(job: &mut Job, starts: &[u64]) -> Result<(), FilesError> {
    let s = match &mut job.kind {
        JobKind::Synthetic(s) => s,
        JobKind::Trace(records) => {
            rebase_trace(records, starts);
            return Ok(());
        }
    };
    job.shape.files.nrfiles = starts.len() as u32;
    if let [only] = starts {
        s.offset += only;
        return Ok(());
    }
    if s.trim_ahead.is_some() {
        return Err(FilesError::TrimAheadFiles {
            job: job.name.clone(),
            files: starts.len(),
        });
    }
    job.shape.files.starts = starts.iter().map(|b| b + s.offset).collect();
    Ok(())
}

/// Moves a trace to its files: each device the trace names to its own
/// file, or the whole trace, its devices as they lie, to its one file.
fn rebase_trace(records: &mut TraceRecords, starts: &[u64]) {
    let devices = records.devices();
    let bases: Vec<u64> = match (devices.len() == starts.len(), starts) {
        (true, _) => starts.to_vec(),
        (false, [only, ..]) if !devices.is_empty() => devices
            .iter()
            .map(|d| d.base.saturating_add(*only))
            .collect(),
        (false, _) => starts[..1].to_vec(),
    };
    records.rebase(&bases);
}

/// Opens one file: created or grown when the jobs size it, laid out where
/// it grew and is read, its holes in read regions noted.
fn open_one(
    path: &Path,
    u: &Use,
    options: &FileOptions,
    notes: &mut Vec<String>,
) -> Result<Target, FilesError> {
    let Growth {
        existing,
        size,
        is_default,
        ..
    } = growth(path, u, options);
    let spec = OpenOptionsSpec {
        size,
        writes: u.writes,
        force: options.force,
        direct: options.direct,
    };
    let target = match Target::open(path, &spec) {
        Err(TargetError::Io { source, .. })
            if !u.sized && !is_default && source.kind() == io::ErrorKind::NotFound =>
        {
            return Err(FilesError::Missing {
                job: u.unsized_job.clone().unwrap_or_default(),
                path: path.to_path_buf(),
            });
        }
        other => other?,
    };
    if target.size < u.needed && !u.sized && !is_default {
        return Err(FilesError::Short {
            job: u.unsized_job.clone().unwrap_or_default(),
            path: path.to_path_buf(),
            size: target.size,
            needed: u.needed,
        });
    }
    target.check_fits(u.needed)?;
    let old = existing.unwrap_or(0);
    if target.kind == TargetKind::File && target.size > old && !u.sparse {
        if let Err(e) = reserve(&target.file, old, target.size) {
            undo_growth(path, existing);
            return Err(match e.raw_os_error() {
                Some(libc::ENOSPC) => FilesError::NoRoom {
                    path: path.to_path_buf(),
                    files: 1,
                    needed: target.size - old,
                    available: free_bytes(path).unwrap_or(0),
                },
                _ => FilesError::Reserve {
                    path: path.to_path_buf(),
                    source: e,
                },
            });
        }
    }
    if target.kind != TargetKind::File || u.reads.is_empty() {
        return Ok(target);
    }
    if target.size > old {
        let mib = (target.size - old) as f64 / (1 << 20) as f64;
        let what = if existing.is_some() {
            "grew"
        } else {
            "created"
        };
        eprintln!(
            "iosteer: laying out {}: writing {mib:.1} MiB before the jobs read it",
            path.display()
        );
        let stop = options.stop.unwrap_or(|| false);
        match lay_out(path, (old, target.size), stop) {
            Ok(Laid::Whole) => {}
            Ok(Laid::Stopped { written }) => {
                // Half laid out, the file would pass as laid out next time.
                undo_growth(path, existing);
                return Err(FilesError::LayoutStopped {
                    path: path.to_path_buf(),
                    written,
                    total: target.size - old,
                });
            }
            Err(source) => {
                return Err(FilesError::Layout {
                    path: path.to_path_buf(),
                    source,
                })
            }
        }
        notes.push(format!(
            "{}: {what} and laid out (bytes {old} to {} written) before the run, so reads reach the disk",
            path.display(),
            target.size
        ));
    }
    let read_before: Vec<(u64, u64)> = u
        .reads
        .iter()
        .map(|&(start, end)| (start, end.min(old)))
        .filter(|(start, end)| start < end)
        .collect();
    let holes = hole_bytes(&target.file, &read_before);
    if holes > 0 {
        let note = format!(
            "{}: {} of the regions the jobs read from (bytes {}) are holes (never written): reads there do not reach the disk, and the read figures include them; write the file first (fio would not lay out an existing file either)",
            path.display(),
            iosteer_workload::trace::exact_size(holes),
            regions(&read_before)
        );
        eprintln!("iosteer: {note}");
        notes.push(note);
    }
    Ok(target)
}

/// `0 to 4096, 8192 to 12288`: byte ranges as a note gives them, those
/// that overlap joined, the first four named.
fn regions(ranges: &[(u64, u64)]) -> String {
    let joined = merged(ranges);
    let mut shown: Vec<String> = (joined.iter().take(4))
        .map(|(a, b)| format!("{a} to {b}"))
        .collect();
    if joined.len() > 4 {
        shown.push(format!("{} more", joined.len() - 4));
    }
    shown.join(", ")
}

mod space;
use space::{check_room, growth, hole_bytes, lay_out, merged, reserve, undo_growth, Growth, Laid};
#[cfg(test)]
mod tests;
