//! The files of a replay: held open from the first pass on and read by
//! position, so what the run reads is what was checked, and read a line
//! or a record at a time.

use std::fs::File;
use std::io::{BufReader, Read};
use std::sync::Arc;
use std::time::SystemTime;

use super::super::compressed::{decompressed, Content, Opened, BUFFER};
use super::super::*;
use crate::blktrace::RecordReader;

/// A trace file held open from the first pass on, with what it was then.
#[derive(Clone, Debug)]
pub(super) struct TraceFile {
    pub(super) name: String,
    file: Arc<File>,
    len: u64,
    modified: Option<SystemTime>,
}

impl TraceFile {
    pub(super) fn open(name: &str) -> Result<TraceFile, TraceError> {
        let file = open_file(name)?;
        let meta = file.metadata().map_err(|e| io_error(name, &e))?;
        Ok(TraceFile {
            name: name.to_string(),
            file: Arc::new(file),
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }

    /// A reader of the file from its start, as long as it was; an error if
    /// it was written to since it was opened.
    fn reader(&self) -> Result<Opened, TraceError> {
        let meta = self.file.metadata().map_err(|e| io_error(&self.name, &e))?;
        if meta.len() != self.len || meta.modified().ok() != self.modified {
            let what = format!("{} bytes, {} when first read", meta.len(), self.len);
            return Err(changed(&self.name, &what));
        }
        let at = At {
            file: Arc::clone(&self.file),
            pos: 0,
            end: self.len,
        };
        decompressed(&self.name, BufReader::with_capacity(BUFFER, at))
    }
}

/// Reads a shared file by position (several runs replay it at once).
struct At {
    file: Arc<File>,
    pos: u64,
    end: u64,
}

impl Read for At {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = usize::try_from(self.end - self.pos).unwrap_or(usize::MAX);
        let len = buf.len().min(left);
        if len == 0 {
            return Ok(0);
        }
        let n = read_at(&self.file, &mut buf[..len], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], pos: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, pos)
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], pos: u64) -> std::io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, pos)
}

pub(super) fn changed(file: &str, what: &str) -> TraceError {
    TraceError::Changed {
        file: file.to_string(),
        what: what.to_string(),
    }
}

/// One trace file being read, a line or a record at a time.
pub(super) enum FileReader {
    Lines(LineReader<Content>),
    Records(RecordReader<Content>),
}

impl FileReader {
    pub(super) fn open(
        file: &TraceFile,
        format: TraceFormat,
        options: &Options,
    ) -> Result<Self, TraceError> {
        let opened = file.reader()?;
        let name = &opened.name(&file.name);
        let source = opened.content;
        Ok(match format {
            TraceFormat::Blktrace => FileReader::Records(RecordReader::new(source, name)),
            _ => FileReader::Lines(LineReader::new(source, name, format, options)),
        })
    }

    /// Reads one line or record into `sink`; `false` at the end.
    pub(super) fn step(&mut self, sink: &mut Sink) -> Result<bool, TraceError> {
        match self {
            FileReader::Lines(r) => r.step(sink),
            FileReader::Records(r) => r.step(sink),
        }
    }
}
