//! Where a run's files go: output paths checked before any work starts (a
//! typo then fails at once, not after an hour's run), and the files a run
//! leaves in `--out`: series, charts, report.json and report.html.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::chart::{write_outputs, OutputError};
use crate::html::{self, Context, HtmlError};
use crate::series::MAX_SECONDS;
use crate::RunReport;
use iosteer_sched::Nanos;

/// An output path that cannot take what a run will write; each names the
/// path as given and what to give instead.
#[derive(Debug, Error)]
pub enum PathError {
    /// An empty path (an unset shell variable, `--out "$DIR"`): files would
    /// go to the current directory, unsaid, or fail after the work.
    #[error("an empty path; give {wanted}")]
    Empty { wanted: &'static str },
    #[error("{path}: not a directory; give a directory to write into (it is created if missing)")]
    NotADirectory { path: String },
    #[error("{path}: cannot create the directory ({source}); give a writable directory")]
    CannotCreate {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: a directory; give a file name")]
    IsADirectory { path: String },
    #[error("{path}: the directory {} does not exist; give a file in an existing directory", dir.display())]
    NoDirectory { path: String, dir: PathBuf },
    #[error("{path}: {} is a file, not a directory; give a file in an existing directory", dir.display())]
    ParentIsAFile { path: String, dir: PathBuf },
    #[error("{path}: {entry} in it is a directory where the report writes a file of that name; move it, or give another directory")]
    EntryIsADirectory { path: String, entry: String },
    #[error("{path}: cannot write in {} ({source}); give a writable location", dir.display())]
    NotWritable {
        path: String,
        dir: PathBuf,
        source: std::io::Error,
    },
    /// Less than [`ROOM`] free where the files go: the run would end in
    /// files it cannot write.
    #[error("{path}: no room for a report on its file system ({source} writing {} KiB in {}); free space, or give a directory on another file system", ROOM / 1024, dir.display())]
    NoRoom {
        path: String,
        dir: PathBuf,
        source: std::io::Error,
    },
    /// Less free where the files go than the runs' files take
    /// ([`files_room`]): the run would end in files it cannot write.
    #[error("{path}: {} MiB free on its file system, and the files of {runs} run(s) over {seconds} s take about {} MiB ({} KiB a run and {BYTES_PER_RUN_SECOND} bytes a run and second); free space, give a directory on another file system, or a shorter run", free >> 20, need.div_ceil(1 << 20), BYTES_PER_RUN >> 10)]
    TooLittleRoom {
        path: String,
        free: u64,
        need: u64,
        runs: usize,
        seconds: u64,
    },
}

/// Room a report needs at least, checked before the run by writing as much
/// (the default `sim`'s files take 860 KiB).
pub const ROOM: usize = 1 << 20;

/// What a run's files take for each second it lasts: its CSV row (about
/// 100 bytes) and the points of its charts and page (about 100). Six
/// `iosteer sim` runs of an hour wrote 4.9 MB, all files counted; with
/// [`BYTES_PER_RUN`] and [`ROOM`] the estimate is 6.3.
pub const BYTES_PER_RUN_SECOND: u64 = 200;

/// What a run's files take whatever its length (its charts' axes and
/// frames, its part of the page): up to 150 KB measured, rounded up.
pub const BYTES_PER_RUN: u64 = 160 << 10;

/// The room `runs` runs of `span` each (their series capped at
/// [`MAX_SECONDS`]) need in `--out`, about.
pub fn files_room(runs: usize, span: Nanos) -> FilesRoom {
    let seconds = span.0.div_ceil(1_000_000_000).min(MAX_SECONDS as u64);
    FilesRoom { runs, seconds }
}

/// What a command's `--out` files will take, for [`check_dir`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FilesRoom {
    pub runs: usize,
    /// Seconds of each run's series.
    pub seconds: u64,
}

impl FilesRoom {
    /// Bytes, at least [`ROOM`].
    pub fn bytes(&self) -> u64 {
        let per_run =
            BYTES_PER_RUN.saturating_add(self.seconds.saturating_mul(BYTES_PER_RUN_SECOND));
        (ROOM as u64).saturating_add((self.runs as u64).saturating_mul(per_run))
    }
}

/// Checks that `dir` can take files: it is created if missing, and must be
/// a writable directory with `room` free (a [`FilesRoom::default`] checks
/// that it can take [`ROOM`]).
pub fn check_dir(dir: &str, room: FilesRoom) -> Result<(), PathError> {
    if dir.is_empty() {
        return Err(PathError::Empty {
            wanted: "a directory to write into (`.` for the current one)",
        });
    }
    let path = Path::new(dir);
    if path.exists() && !path.is_dir() {
        return Err(PathError::NotADirectory { path: dir.into() });
    }
    let existed = path.exists();
    std::fs::create_dir_all(path).map_err(|source| PathError::CannotCreate {
        path: dir.into(),
        source,
    })?;
    if let Err(e) = check_writable(dir, path).and_then(|()| check_room(dir, room)) {
        // A directory made for a report that cannot go there is not left behind.
        if !existed {
            let _ = std::fs::remove_dir(path);
        }
        return Err(e);
    }
    // A directory where a report file goes would fail the write after the run.
    if let Ok(entries) = std::fs::read_dir(path) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if written_here(&name) && entry.path().is_dir() {
                return Err(PathError::EntryIsADirectory {
                    path: dir.into(),
                    entry: name,
                });
            }
        }
    }
    Ok(())
}

/// Whether a command's report may write a file named `name` in `--out`:
/// report.json and report.html, a run's `runN-SPEC.csv` and its charts,
/// the overlay, a probe's and a sweep's files.
fn written_here(name: &str) -> bool {
    const FIXED: &[&str] = &[
        "report.json",
        "report.html",
        "overlay-read-p99.svg",
        "probe.csv",
        "probe.json",
        "probe.svg",
        "sweep.json",
        "sweep.svg",
    ];
    let run_file = name
        .strip_prefix("run")
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        && (name.ends_with(".csv") || name.ends_with(".svg"));
    FIXED.contains(&name) || run_file
}

/// The line that ends a command's `--out`: how many files it wrote, and
/// the files of an earlier report it left beside them (files a report
/// writes that this one did not), which the new report.html does not show.
pub fn written_summary(dir: impl AsRef<Path>, written: &[PathBuf]) -> String {
    let dir = dir.as_ref();
    // Only the files written into `dir` (a sweep's chart may be elsewhere).
    let canonical = |d: &Path| match d.as_os_str().is_empty() {
        true => std::fs::canonicalize("."),
        false => std::fs::canonicalize(d),
    };
    let here = canonical(dir).ok();
    let written: Vec<_> = written
        .iter()
        .filter(|p| p.parent().and_then(|d| canonical(d).ok()) == here)
        .collect();
    let names: Vec<_> = written.iter().filter_map(|p| p.file_name()).collect();
    let mut earlier: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_file() && !names.contains(&e.file_name().as_os_str()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| written_here(name))
        .collect();
    earlier.sort();
    let line = format!("wrote {} files to {}", written.len(), dir.display());
    match earlier.as_slice() {
        [] => line,
        [first, rest @ ..] => format!(
            "{line}; {} file(s) there are from an earlier report ({first}{}): not this one's",
            earlier.len(),
            if rest.is_empty() { "" } else { ", ..." }
        ),
    }
}

/// Checks that the file `file` can be written: its directory exists and is
/// writable, and it is not a directory itself.
pub fn check_file(file: &str) -> Result<(), PathError> {
    if file.is_empty() {
        return Err(PathError::Empty {
            wanted: "a file name",
        });
    }
    let path = Path::new(file);
    if path.is_dir() {
        return Err(PathError::IsADirectory { path: file.into() });
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        let (path, dir) = (file.into(), parent.to_path_buf());
        return Err(match parent.exists() {
            true => PathError::ParentIsAFile { path, dir },
            false => PathError::NoDirectory { path, dir },
        });
    }
    check_writable(file, parent)
}

/// Checks that `dir`'s file system has `room` free, where that is more
/// than [`check_writable`] wrote.
fn check_room(dir: &str, room: FilesRoom) -> Result<(), PathError> {
    let need = room.bytes();
    match free_bytes(Path::new(dir)) {
        Some(free) if need > ROOM as u64 && free < need => Err(PathError::TooLittleRoom {
            path: dir.into(),
            free,
            need,
            runs: room.runs,
            seconds: room.seconds,
        }),
        _ => Ok(()),
    }
}

/// Creates a scratch file of [`ROOM`] bytes in `dir` and removes it
/// (unsynced: it never reaches the disk, the file system only reserves it).
fn check_writable(given: &str, dir: &Path) -> Result<(), PathError> {
    use std::io::Write;
    let probe = dir.join(format!(".iosteer-write-check-{}", std::process::id()));
    let mut file = std::fs::File::create(&probe).map_err(|source| PathError::NotWritable {
        path: given.into(),
        dir: dir.to_path_buf(),
        source,
    })?;
    let written = file.write_all(&vec![0; ROOM]);
    drop(file);
    let _ = std::fs::remove_file(&probe);
    written.map_err(|source| PathError::NoRoom {
        path: given.into(),
        dir: dir.to_path_buf(),
        source,
    })
}

/// A run's files that could not be written or drawn.
#[derive(Debug, Error)]
pub enum RunOutputError {
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(transparent)]
    Html(#[from] HtmlError),
}

/// Writes into `dir` the runs' series and charts, `json` as report.json and
/// report.html (which `context` heads); the files written.
/// Writes `bytes` to `path`; a file the write could not finish (a full
/// disk) is removed rather than left cut short as if whole.
pub(crate) fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes).inspect_err(|_| {
        let _ = std::fs::remove_file(path);
    })
}

pub fn write_run_outputs(
    dir: &Path,
    runs: &[RunReport],
    json: &str,
    context: &Context,
) -> Result<Vec<PathBuf>, RunOutputError> {
    // The report first: a disk that fills part way keeps the result.
    std::fs::create_dir_all(dir).map_err(|source| OutputError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let path = dir.join("report.json");
    write_whole(&path, json.as_bytes()).map_err(|source| OutputError::Write {
        path: path.clone(),
        source,
    })?;
    let mut written = vec![path];
    written.extend(write_outputs(dir, runs)?);
    let page = html::run::run_page(context, runs)?;
    written.push(html::write(dir, &page)?);
    Ok(written)
}

/// `path` when it exists, else its directory: where to ask about the file
/// system a file to create would be on.
pub fn on_its_file_system(path: &Path) -> &Path {
    if path.exists() {
        return path;
    }
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Bytes an unprivileged writer may still write on the file system that
/// holds `path` (its directory's when it does not exist yet); `None` when
/// it cannot be told.
pub fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let probe = on_its_file_system(path);
    let name = std::ffi::CString::new(probe.as_os_str().as_bytes()).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `name` is a NUL-terminated path and `stat` points to a
    // statvfs that the call fills when it returns 0.
    let rc = unsafe { libc::statvfs(name.as_ptr(), stat.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: filled by the successful call above.
    let stat = unsafe { stat.assume_init() };
    // fsblkcnt_t and c_ulong are 32 bits on some targets.
    #[allow(clippy::unnecessary_cast)]
    let (blocks, block_bytes) = (stat.f_bavail as u64, stat.f_frsize as u64);
    Some(blocks.saturating_mul(block_bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A week-long run's files were found not to fit only after the run
    /// (the check was a fixed 1 MiB).
    #[test]
    fn room_for_the_runs_files_is_checked_before_the_run() {
        let room = files_room(2, Nanos::from_secs(3600));
        let per_run = BYTES_PER_RUN + 3600 * BYTES_PER_RUN_SECOND;
        assert_eq!(room.bytes(), ROOM as u64 + 2 * per_run);
        let capped = files_room(1, Nanos::from_secs(1 << 30));
        assert_eq!(capped.seconds, MAX_SECONDS as u64);
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("out");
        let dir = dir.to_str().unwrap();
        let endless = FilesRoom {
            runs: usize::MAX,
            seconds: u64::MAX,
        };
        let e = check_dir(dir, endless).unwrap_err();
        assert!(
            matches!(e, PathError::TooLittleRoom { need: u64::MAX, .. }),
            "{e}"
        );
        assert!(
            !Path::new(dir).exists(),
            "the directory made for it is removed"
        );
        check_dir(dir, room).unwrap();
    }

    #[test]
    fn files_an_earlier_report_left_are_named() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        for name in [
            "run1-fifo.csv",
            "run2-steer.csv",
            "notes.txt",
            "report.json",
        ] {
            std::fs::write(dir.join(name), "").unwrap();
        }
        let written = [dir.join("run1-fifo.csv"), dir.join("report.json")];
        let elsewhere = temp.path().join("..").join("chart.svg");
        let line = written_summary(dir, &[&written[..], &[elsewhere]].concat());
        assert!(line.starts_with("wrote 2 files to "), "{line}");
        assert!(
            line.ends_with(
                "; 1 file(s) there are from an earlier report (run2-steer.csv): not this one's"
            ),
            "{line}"
        );
        std::fs::remove_file(dir.join("run2-steer.csv")).unwrap();
        assert!(!written_summary(dir, &written).contains("earlier"));
    }

    #[test]
    fn a_file_where_a_directory_is_wanted_and_the_reverse_are_refused() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        let file = dir.join("f");
        std::fs::write(&file, "").unwrap();
        let (dir_s, file_s) = (dir.to_str().unwrap(), file.to_str().unwrap());
        assert!(matches!(
            check_dir(file_s, FilesRoom::default()),
            Err(PathError::NotADirectory { .. })
        ));
        assert!(matches!(
            check_file(dir_s),
            Err(PathError::IsADirectory { .. })
        ));
        let missing = dir.join("no/such/f");
        assert!(matches!(
            check_file(missing.to_str().unwrap()),
            Err(PathError::NoDirectory { .. })
        ));
        let under_a_file = Path::new(file_s).join("x.svg");
        assert!(matches!(
            check_file(under_a_file.to_str().unwrap()),
            Err(PathError::ParentIsAFile { .. })
        ));
        assert!(check_dir(dir.join("new").to_str().unwrap(), FilesRoom::default()).is_ok());
        // A directory where the report writes a file: refused before the run.
        let out = dir.join("out");
        std::fs::create_dir_all(out.join("report.html")).unwrap();
        assert!(matches!(
            check_dir(out.to_str().unwrap(), FilesRoom::default()),
            Err(PathError::EntryIsADirectory { ref entry, .. }) if entry == "report.html"
        ));
        std::fs::remove_dir(out.join("report.html")).unwrap();
        std::fs::create_dir(out.join("run1-fifo.csv")).unwrap();
        assert!(check_dir(out.to_str().unwrap(), FilesRoom::default()).is_err());
        std::fs::remove_dir(out.join("run1-fifo.csv")).unwrap();
        std::fs::create_dir(out.join("notes")).unwrap();
        assert!(check_dir(out.to_str().unwrap(), FilesRoom::default()).is_ok());
        assert!(check_file(file_s).is_ok());
    }

    /// `sweep --chart ''` ran the sweep and then failed to draw ("backend
    /// error: ... No such file or directory"); `sim --out ''` wrote into
    /// the current directory and said "wrote 6 files to ".
    #[test]
    fn an_empty_path_is_refused_before_the_work() {
        let err = check_file("").unwrap_err();
        assert_eq!(err.to_string(), "an empty path; give a file name");
        let err = check_dir("", FilesRoom::default()).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("an empty path; give a directory"),
            "{err}"
        );
    }
}
