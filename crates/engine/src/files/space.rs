//! The room the jobs' files take on their file systems: checked for all
//! of them before any is made, reserved as fio's `fallocate=native` does,
//! laid out (written) before reads, and the holes a read region keeps
//! counted.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;

use iosteer_workload::output::{free_bytes, on_its_file_system};

use super::*;

/// What opening a file for its jobs makes of it.
pub(super) struct Growth {
    /// Its length now, when it is a regular file.
    pub(super) existing: Option<u64>,
    /// The size it is opened to, if the jobs (or `--size`) give one.
    pub(super) size: Option<u64>,
    /// Whether it is the target (`--target`) itself.
    pub(super) is_default: bool,
    /// Bytes it grows by (0 for a device).
    pub(super) grows: u64,
}

pub(super) fn growth(path: &Path, u: &Use, options: &FileOptions) -> Growth {
    let meta = std::fs::metadata(path).ok();
    let existing = meta.as_ref().filter(|m| m.is_file()).map(|m| m.len());
    let is_default = options
        .target
        .as_deref()
        .is_some_and(|t| same_file(t, path));
    let regular = meta.is_none_or(|m| m.is_file());
    // The target is created or grown to `--size`, else, as fio creates a
    // job's file, to what jobs that give their size need: only a regular
    // file missing or short (a read-only job's file that is long enough
    // stays unopened for writing; a device is never grown).
    let short = regular && existing.is_none_or(|e| e < u.needed);
    let size = match (is_default, u.sized) {
        (true, sized) => options.size.or((sized && short).then_some(u.needed)),
        (false, true) => Some(u.needed),
        (false, false) => None,
    };
    let grows = size.map_or(0, |s| s.saturating_sub(existing.unwrap_or(0)));
    Growth {
        existing,
        size,
        is_default,
        grows: if regular { grows } else { 0 },
    }
}

/// The files the jobs create or grow fit their file systems, all of them
/// together: checked before any is created, not when the disk fills half
/// way, so a refusal leaves nothing behind.
pub(super) fn check_room(
    paths: &[PathBuf],
    uses: &[Use],
    options: &FileOptions,
) -> Result<(), FilesError> {
    // Per file system (its device number): the first file, how many, bytes.
    let mut by_fs: Vec<(u64, &Path, usize, u64)> = Vec::new();
    for (path, u) in paths.iter().zip(uses) {
        // A sparse file that is only written fills as it is written, as
        // fio's `fallocate=none` leaves it to.
        let growth = growth(path, u, options);
        check_size_limit(path, u, &growth, file_size_limit())?;
        let grows = match u.sparse && u.reads.is_empty() {
            true => 0,
            false => growth.grows,
        };
        let Some(fs) = file_system_of(path).filter(|_| grows > 0) else {
            continue;
        };
        match by_fs.iter_mut().find(|(id, ..)| *id == fs) {
            Some((_, _, files, needed)) => {
                *files += 1;
                *needed = needed.saturating_add(grows);
            }
            None => by_fs.push((fs, path, 1, grows)),
        }
    }
    for (_, path, files, needed) in by_fs {
        match free_bytes(path) {
            Some(available) if available < needed => {
                return Err(FilesError::NoRoom {
                    path: path.to_path_buf(),
                    files,
                    needed,
                    available,
                })
            }
            _ => {}
        }
    }
    Ok(())
}

/// Refuses a regular file the jobs grow, or write, past `limit` bytes.
pub(super) fn check_size_limit(
    path: &Path,
    u: &Use,
    growth: &Growth,
    limit: Option<u64>,
) -> Result<(), FilesError> {
    // The limit binds regular files only (a device is not a file the
    // process grows), and a file opened to a size it has is not grown.
    let device = std::fs::metadata(path).is_ok_and(|m| !m.is_file());
    let written = if u.writes_data { u.needed } else { 0 };
    let grown_to = (growth.size).filter(|&size| size > growth.existing.unwrap_or(0));
    let reach = grown_to.unwrap_or(0).max(written);
    match limit {
        Some(limit) if !device && reach > limit => Err(FilesError::FileSizeLimit {
            path: path.to_path_buf(),
            reach,
            limit,
        }),
        _ => Ok(()),
    }
}

/// The process's file size limit (`ulimit -f`), if it has one.
fn file_size_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct it is given.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit) };
    // rlim_t is 32 bits on some targets.
    #[allow(clippy::unnecessary_cast)]
    let current = limit.rlim_cur as u64;
    (rc == 0 && limit.rlim_cur != libc::RLIM_INFINITY).then_some(current)
}

/// The device number of the file system that holds `path` (its
/// directory's when it does not exist yet).
pub(super) fn file_system_of(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(on_its_file_system(path))
        .ok()
        .map(|m| m.dev())
}

/// Allocates `[from, to)` of `file` without writing it; a file system
/// that cannot (`EOPNOTSUPP`) is not an error.
pub(super) fn reserve(file: &File, from: u64, to: u64) -> io::Result<()> {
    let (Ok(offset), Ok(len)) = (i64::try_from(from), i64::try_from(to - from)) else {
        return Err(io::Error::from_raw_os_error(libc::EFBIG));
    };
    // SAFETY: fallocate takes a descriptor and integers, no memory.
    if unsafe { libc::fallocate(file.as_raw_fd(), 0, offset, len) } == 0 {
        return Ok(());
    }
    match io::Error::last_os_error() {
        e if e.raw_os_error() == Some(libc::EOPNOTSUPP) => Ok(()),
        e => Err(e),
    }
}

/// Puts a file back as it was before it was created (removed) or grown
/// (cut back); best effort, the error being reported is the reservation's.
pub(super) fn undo_growth(path: &Path, existing: Option<u64>) {
    match existing {
        None => {
            let _ = std::fs::remove_file(path);
        }
        Some(len) => {
            let _ = OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(|f| f.set_len(len));
        }
    }
}

/// How far [`lay_out`] got.
pub(super) enum Laid {
    Whole,
    /// `stop` said so after `written` bytes.
    Stopped {
        written: u64,
    },
}

/// Writes `[from, to)` of the file at `path` with a pattern (not zeros,
/// which some drives and file systems store as nothing), synced and
/// dropped from the page cache so the run's reads go to the disk; asks
/// `stop` before each MiB (a layout can take minutes on a large disk).
pub(super) fn lay_out(path: &Path, (from, to): (u64, u64), stop: fn() -> bool) -> io::Result<Laid> {
    let file = OpenOptions::new().write(true).open(path)?;
    let mut chunk = vec![0u8; 1 << 20];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for word in chunk.chunks_exact_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        word.copy_from_slice(&x.to_le_bytes());
    }
    let mut at = from;
    while at < to {
        if stop() {
            return Ok(Laid::Stopped { written: at - from });
        }
        let len = (to - at).min(chunk.len() as u64) as usize;
        file.write_all_at(&chunk[..len], at)?;
        at += len as u64;
    }
    file.sync_data()?;
    drop_cache(&file);
    Ok(Laid::Whole)
}

/// Asks the kernel to drop the file's cached pages (best effort).
pub(super) fn drop_cache(file: &File) {
    // SAFETY: posix_fadvise takes a descriptor and integers, no memory.
    unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
}

/// `ranges` in order, those that overlap or touch joined.
pub(super) fn merged(ranges: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut ranges = ranges.to_vec();
    ranges.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (start, end) in ranges {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// Bytes of holes (SEEK_HOLE up to SEEK_DATA) in the ranges, counted once
/// each; 0 where the file system cannot tell.
pub(super) fn hole_bytes(file: &File, ranges: &[(u64, u64)]) -> u64 {
    let merged = merged(ranges);
    let fd = file.as_raw_fd();
    let seek = |at: u64, whence: i32| -> Option<u64> {
        // SAFETY: lseek takes a descriptor and integers, no memory.
        let r = unsafe { libc::lseek(fd, at as libc::off_t, whence) };
        (r >= 0).then_some(r as u64)
    };
    let mut holes = 0;
    for (start, end) in merged {
        let mut at = start;
        while at < end {
            let Some(hole) = seek(at, libc::SEEK_HOLE) else {
                break;
            };
            if hole >= end {
                break;
            }
            // No data after the hole: the rest of the range is hole.
            let data = seek(hole, libc::SEEK_DATA).unwrap_or(end).min(end);
            holes += data - hole;
            at = data;
        }
    }
    holes
}
