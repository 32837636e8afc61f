//! A trace inside a tar archive, read in one pass: Tencent CBS ships each
//! hour as a `.tgz` of one CSV, and a trace shared as `trace.tar.gz` is
//! common. The archive's one regular file is the trace; its name joins the
//! archive's in messages (`2018-10-01-01.tgz (2018-10-01-01.csv):5: ...`).
//!
//! An archive is read front to back with no index, so a second regular
//! file is found only after the first has been read: it is then an error
//! that names both and says how to extract the one wanted (the replay's
//! first pass meets it, before any run). Directories, links and the like
//! are passed over; POSIX (pax) and GNU headers for long names and sizes
//! past 8 GiB are read through the `tar` crate's header parsing.

use std::io::{self, BufRead, Read};

/// Bytes in a tar block: headers are one, data is padded to whole ones.
const BLOCK: u64 = 512;

/// The largest pax or GNU long-name record read (real ones are bytes).
const MAX_EXTENSION_BYTES: u64 = 1 << 20;

/// The archive's one regular file, read from `inner`.
pub(crate) struct TarMember<R> {
    inner: R,
    /// The archive's file, for the command in an error.
    archive: String,
    /// The member's name, and its bytes not read yet.
    name: String,
    left: u64,
    /// Its data's padding to the next block, skipped at its end.
    pad: u64,
    /// The rest of the archive was checked: nothing more to read.
    done: bool,
}

/// One entry's header, with the pax or GNU records before it applied.
struct Entry {
    name: String,
    size: u64,
    regular: bool,
}

impl<R: BufRead> TarMember<R> {
    /// Reads headers up to the first regular file; an error when there is
    /// none or a header is not a tar header.
    pub(crate) fn open(archive: &str, mut inner: R) -> io::Result<Self> {
        loop {
            let Some(entry) = next_entry(&mut inner)? else {
                return Err(invalid("holds no file"));
            };
            if entry.regular {
                return Ok(TarMember {
                    inner,
                    archive: archive.to_string(),
                    pad: padding(entry.size),
                    name: entry.name,
                    left: entry.size,
                    done: false,
                });
            }
            skip(&mut inner, entry.size + padding(entry.size))?;
        }
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// After the member: any other regular file is an error.
    fn check_rest(&mut self) -> io::Result<()> {
        skip(&mut self.inner, self.pad)?;
        while let Some(entry) = next_entry(&mut self.inner)? {
            if entry.regular {
                return Err(invalid(&format!(
                    "holds more than one file ({}, {}, ...): extract the one to replay \
                     first (tar -xf {} {})",
                    self.name, entry.name, self.archive, entry.name
                )));
            }
            skip(&mut self.inner, entry.size + padding(entry.size))?;
        }
        Ok(())
    }
}

impl<R: BufRead> Read for TarMember<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            if !self.done {
                self.check_rest()?;
                self.done = true;
            }
            return Ok(0);
        }
        let len = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..len])?;
        if n == 0 && len > 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.left -= n as u64;
        Ok(n)
    }
}

fn padding(size: u64) -> u64 {
    (BLOCK - size % BLOCK) % BLOCK
}

/// The next entry, its pax or GNU long-name records applied; `None` at the
/// archive's end (a zero block, or the end of input on a block boundary).
fn next_entry(inner: &mut impl BufRead) -> io::Result<Option<Entry>> {
    let mut long_name = None;
    let mut pax_size = None;
    loop {
        let Some(header) = read_header(inner)? else {
            return Ok(None);
        };
        let size = header.entry_size()?;
        let kind = header.entry_type();
        let is_extension = kind.is_pax_local_extensions() || kind.is_gnu_longname();
        if is_extension || kind.is_pax_global_extensions() || kind.is_gnu_longlink() {
            let data = read_extension(inner, size)?;
            if kind.is_gnu_longname() {
                let name = data.split(|b| *b == 0).next().unwrap_or_default();
                long_name = Some(String::from_utf8_lossy(name).into_owned());
            }
            if kind.is_pax_local_extensions() {
                for ext in tar::PaxExtensions::new(&data).flatten() {
                    match ext.key() {
                        Ok("path") => long_name = ext.value().ok().map(str::to_string),
                        Ok("size") => pax_size = ext.value().ok().and_then(|v| v.parse().ok()),
                        _ => {}
                    }
                }
            }
            continue;
        }
        let name = long_name.unwrap_or_else(|| path_of(&header));
        let regular = kind.is_file() || kind.is_contiguous();
        let size = pax_size.unwrap_or(size);
        return Ok(Some(Entry {
            name,
            size,
            regular,
        }));
    }
}

/// One header block, its checksum checked; `None` at the archive's end.
fn read_header(inner: &mut impl BufRead) -> io::Result<Option<tar::Header>> {
    let mut header = tar::Header::new_old();
    let bytes = header.as_mut_bytes();
    let mut got = 0;
    while got < bytes.len() {
        match inner.read(&mut bytes[got..])? {
            0 if got == 0 => return Ok(None),
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => got += n,
        }
    }
    if bytes.iter().all(|b| *b == 0) {
        return Ok(None);
    }
    if !checksum_matches(&header) {
        return Err(invalid(
            "a tar header's checksum does not match (a damaged archive)",
        ));
    }
    Ok(Some(header))
}

/// Whether `head` starts with a tar header: the `ustar` magic (POSIX or
/// GNU) where it stands, and a checksum that matches.
pub(crate) fn is_tar_header(head: &[u8]) -> bool {
    let Some(block) = head.get(..BLOCK as usize) else {
        return false;
    };
    let mut header = tar::Header::new_old();
    header.as_mut_bytes().copy_from_slice(block);
    block[MAGIC_AT..MAGIC_AT + 5] == *b"ustar" && checksum_matches(&header)
}

/// Where tar's `ustar` magic stands in a header.
const MAGIC_AT: usize = 257;

/// The header's bytes summed with its checksum field as spaces equal the
/// checksum it holds.
fn checksum_matches(header: &tar::Header) -> bool {
    let Ok(stored) = header.cksum() else {
        return false;
    };
    let field = 148..156;
    let sum: u32 = (header.as_bytes().iter().enumerate())
        .map(|(i, b)| u32::from(if field.contains(&i) { b' ' } else { *b }))
        .sum();
    sum == stored
}

fn read_extension(inner: &mut impl BufRead, size: u64) -> io::Result<Vec<u8>> {
    if size > MAX_EXTENSION_BYTES {
        return Err(invalid("a tar extension record over 1 MiB"));
    }
    let mut data = Vec::new();
    inner.take(size).read_to_end(&mut data)?;
    if data.len() as u64 != size {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    skip(inner, padding(size))?;
    Ok(data)
}

fn skip(inner: &mut impl BufRead, n: u64) -> io::Result<()> {
    let skipped = io::copy(&mut inner.take(n), &mut io::sink())?;
    match skipped == n {
        true => Ok(()),
        false => Err(io::ErrorKind::UnexpectedEof.into()),
    }
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

fn path_of(header: &tar::Header) -> String {
    String::from_utf8_lossy(&header.path_bytes()).into_owned()
}
