//! What the engine reads and writes: a regular file or a block device,
//! opened for direct I/O.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use thiserror::Error;

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TargetError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    /// The directory a file would be created in is not there (a job's
    /// `directory=`, or the directories of its `filename=`): neither
    /// `--size` nor a job's `size=` creates directories.
    #[error("{path}: its directory {dir} does not exist; create it first (a file is created, directories are not)")]
    NoDirectory { path: PathBuf, dir: PathBuf },
    #[error("{path} is a block device: writing to it destroys its data, so it opens for writing only when forced")]
    BlockDeviceNeedsForce { path: PathBuf },
    #[error("{path}: the target is {size} bytes; the job needs {needed} (a file can be created or grown to a size)")]
    TooSmall {
        path: PathBuf,
        size: u64,
        needed: u64,
    },
    /// A character device (`/dev/null`), a directory, a FIFO or a socket:
    /// nothing the engine can seek in and read by offset with direct I/O.
    #[error("{path} is {what}: a target must be a regular file or a block device (seekable, with a size, taking direct I/O)")]
    NotFileOrBlockDevice { path: PathBuf, what: &'static str },
    #[error(
        "{path}: its file system does not take direct I/O (O_DIRECT); it can be opened buffered"
    )]
    DirectIoUnsupported { path: PathBuf },
    /// A job's requests off the boundary direct I/O needs on the target:
    /// every one of them would fail.
    #[error("job {job}: its offsets and sizes fall on {granule}-byte boundaries, and direct I/O (O_DIRECT) on {path} needs multiples of {needed} bytes; give bs, bssplit, blockalign and offset multiples of {needed}, or run --buffered")]
    Unaligned {
        job: String,
        path: PathBuf,
        granule: u64,
        needed: u64,
    },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TargetKind {
    File,
    BlockDevice,
}

/// An open target.
#[derive(Debug)]
pub struct Target {
    pub(crate) file: File,
    pub path: PathBuf,
    pub kind: TargetKind,
    pub size: u64,
    /// Opened with O_DIRECT (the page cache is bypassed).
    pub direct: bool,
}

/// How to open a target.
#[derive(Clone, Debug, Default)]
pub struct OpenOptionsSpec {
    /// Create a regular file, or grow one, to this many bytes.
    pub size: Option<u64>,
    /// The job writes (or trims): a block device then needs `force`.
    pub writes: bool,
    pub force: bool,
    /// Bypass the page cache (O_DIRECT); on by default in the CLI.
    pub direct: bool,
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> TargetError + '_ {
    move |source| TargetError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl Target {
    pub fn open(path: &Path, spec: &OpenOptionsSpec) -> Result<Target, TargetError> {
        let kind = kind_of(path)?;
        if kind == TargetKind::BlockDevice && spec.writes && !spec.force {
            return Err(TargetError::BlockDeviceNeedsForce {
                path: path.to_path_buf(),
            });
        }
        let mut options = OpenOptions::new();
        options
            .read(true)
            .write(spec.writes || spec.size.is_some())
            .create(kind == TargetKind::File && spec.size.is_some());
        if spec.direct {
            options.custom_flags(libc::O_DIRECT);
        }
        let file = options.open(path).map_err(|e| match e.raw_os_error() {
            // open(2) says EINVAL with O_DIRECT where the file system has none.
            Some(libc::EINVAL) if spec.direct => TargetError::DirectIoUnsupported {
                path: path.to_path_buf(),
            },
            // `nodir/` that does not exist: a directory to create first.
            Some(libc::EISDIR) if !path.exists() => TargetError::NoDirectory {
                path: path.to_path_buf(),
                dir: path.to_path_buf(),
            },
            _ => match missing_directory(path) {
                Some(dir) if e.kind() == io::ErrorKind::NotFound => TargetError::NoDirectory {
                    path: path.to_path_buf(),
                    dir,
                },
                _ => io_error(path)(e),
            },
        })?;
        if let (TargetKind::File, Some(size)) = (kind, spec.size) {
            let current = file.metadata().map_err(io_error(path))?.len();
            if current < size {
                file.set_len(size).map_err(io_error(path))?;
            }
        }
        let size = match kind {
            TargetKind::File => file.metadata().map_err(io_error(path))?.len(),
            TargetKind::BlockDevice => block_device_size(&file).map_err(io_error(path))?,
        };
        Ok(Target {
            file,
            path: path.to_path_buf(),
            kind,
            size,
            direct: spec.direct,
        })
    }

    pub(crate) fn fd(&self) -> i32 {
        self.file.as_raw_fd()
    }

    /// Refuses a job that reaches past the end.
    pub fn check_fits(&self, needed: u64) -> Result<(), TargetError> {
        if needed > self.size {
            return Err(TargetError::TooSmall {
                path: self.path.clone(),
                size: self.size,
                needed,
            });
        }
        Ok(())
    }
}

/// The directory `path` would be created in, when it is not there.
fn missing_directory(path: &Path) -> Option<PathBuf> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty())?;
    (!dir.is_dir()).then(|| dir.to_path_buf())
}

/// What `path` is; one that does not exist yet is a file to create.
fn kind_of(path: &Path) -> Result<TargetKind, TargetError> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(TargetKind::File);
    };
    let file_type = meta.file_type();
    let what = if file_type.is_block_device() {
        return Ok(TargetKind::BlockDevice);
    } else if file_type.is_file() {
        return Ok(TargetKind::File);
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "neither a file nor a device"
    };
    Err(TargetError::NotFileOrBlockDevice {
        path: path.to_path_buf(),
        what,
    })
}

/// BLKGETSIZE64 from linux/fs.h: _IOR(0x12, 114, size_t).
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
/// BLKDISCARD from linux/fs.h: _IO(0x12, 119).
pub(crate) const BLKDISCARD: libc::c_ulong = 0x1277;

fn block_device_size(file: &File) -> io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which is valid
    // and writable for the duration of the call.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64, &mut size as *mut u64) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

/// Discards `[offset, offset + len)` of a block device (synchronous).
pub(crate) fn discard(fd: i32, offset: u64, len: u64) -> io::Result<()> {
    let range = [offset, len];
    // SAFETY: BLKDISCARD reads two u64 (start, length) through the pointer,
    // which is valid for the duration of the call.
    let rc = unsafe { libc::ioctl(fd, BLKDISCARD, range.as_ptr()) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The boundary direct I/O offsets and sizes need on `path` (`statx`'s
/// `STATX_DIOALIGN`, Linux 6.1 on), or, where it does not exist yet, on a
/// file made beside it (an unnamed `O_TMPFILE`, gone when closed), so it
/// is known before anything is created; `None` where it is not reported,
/// and for what is neither a file nor a block device (opening a FIFO would
/// wait for a writer: [`Target::open`] refuses it by what it is).
pub fn direct_io_alignment(path: &Path) -> Option<u64> {
    let file = if path.exists() {
        let file_type = std::fs::metadata(path).ok()?.file_type();
        if !(file_type.is_file() || file_type.is_block_device()) {
            return None;
        }
        File::open(path).ok()?
    } else {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_TMPFILE)
            .open(dir)
            .ok()?
    };
    let mut stat = std::mem::MaybeUninit::<libc::statx>::zeroed();
    // SAFETY: `stat` is as large as the kernel writes, the path is an
    // empty C string and the descriptor is open until `file` drops.
    let done = unsafe {
        libc::statx(
            file.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            stat.as_mut_ptr(),
        )
    };
    // SAFETY: zeroed, then filled by the kernel where it succeeded.
    let stat = unsafe { stat.assume_init() };
    let reported = done == 0 && stat.stx_mask & libc::STATX_DIOALIGN != 0;
    (reported && stat.stx_dio_offset_align > 0).then(|| u64::from(stat.stx_dio_offset_align))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_created_and_sized_and_a_small_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.img");
        let spec = OpenOptionsSpec {
            size: Some(1 << 20),
            writes: true,
            ..OpenOptionsSpec::default()
        };
        let target = Target::open(&path, &spec).unwrap();
        assert_eq!(target.size, 1 << 20);
        assert_eq!(target.kind, TargetKind::File);
        let err = target.check_fits(2 << 20).unwrap_err().to_string();
        assert!(
            err.contains("t.img") && err.contains("needs 2097152"),
            "{err}"
        );
        assert!(!err.contains("--"), "names a flag: {err}");
    }

    /// A file in a directory that is not there is refused naming the
    /// directory: a size creates the file, not its directories (the CLI
    /// said "--size creates it" of a job that had a size already).
    #[test]
    fn a_file_in_a_missing_directory_names_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no/such/f.img");
        let spec = OpenOptionsSpec {
            size: Some(1 << 20),
            writes: true,
            ..OpenOptionsSpec::default()
        };
        let err = Target::open(&path, &spec).unwrap_err();
        assert!(
            matches!(&err, TargetError::NoDirectory { dir, .. } if dir.ends_with("no/such")),
            "{err:?}"
        );
        // `gone/`, a directory to be: open(2) says EISDIR (found by a review).
        let err = Target::open(&dir.path().join("gone/"), &spec).unwrap_err();
        assert!(matches!(&err, TargetError::NoDirectory { .. }), "{err:?}");
        assert!(err.to_string().contains("directory"), "{err}");
        // A missing file in a directory that is there stays the OS's error.
        let spec = OpenOptionsSpec::default();
        let err = Target::open(&dir.path().join("f.img"), &spec).unwrap_err();
        assert!(matches!(&err, TargetError::Io { .. }), "{err:?}");
    }

    #[test]
    fn a_character_device_or_directory_is_refused_by_what_it_is() {
        let spec = OpenOptionsSpec {
            direct: true,
            ..OpenOptionsSpec::default()
        };
        let err = Target::open(Path::new("/dev/null"), &spec).unwrap_err();
        assert!(
            matches!(&err, TargetError::NotFileOrBlockDevice { what, .. } if *what == "a character device"),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(
            message.starts_with("/dev/null is a character device"),
            "{message}"
        );
        assert!(!message.contains("os error"), "{message}");
        let err = Target::open(&std::env::temp_dir(), &spec).unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
    }

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let alignment = direct_io_alignment(&path);
            let spec = OpenOptionsSpec {
                direct: true,
                ..OpenOptionsSpec::default()
            };
            let _ = tx.send((alignment, Target::open(&path, &spec).map(|_| ())));
        });
        let (alignment, opened) = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("opening a FIFO waited for a writer");
        assert_eq!(alignment, None);
        let err = opened.unwrap_err().to_string();
        assert!(err.contains("is a FIFO"), "{err}");
    }

    #[test]
    fn a_missing_file_without_a_size_names_the_path() {
        let err = Target::open(
            Path::new("/nonexistent/iosteer/x"),
            &OpenOptionsSpec::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("/nonexistent/iosteer/x"), "{err}");
    }
}
