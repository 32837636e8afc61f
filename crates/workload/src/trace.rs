//! Block I/O traces.
//!
//! Formats:
//! - `ascii`: five columns separated by spaces, `arrival_time device lba size
//!   type`, with `lba` and `size` in 512-byte sectors and `type` 1 for a read,
//!   0 for a write (DiskSim, SSDsim, MQSim). The time unit is chosen by the
//!   caller (nanoseconds in the traces shipped here; DiskSim uses ms).
//! - `spc`: `ASU,LBA,Size(bytes),Opcode(r|w),Timestamp(s)` (UMass Financial,
//!   WebSearch); the LBA is in 512-byte sectors.
//! - `msr`: `Timestamp,Hostname,DiskNumber,Type(Read|Write),Offset(bytes),
//!   Size(bytes),ResponseTime` (MSR Cambridge), timestamps in 100 ns ticks.
//! - `alibaba`: `device_id,opcode(R|W),offset(bytes),length(bytes),
//!   timestamp(us)` (Alibaba Cloud's block traces of 2020).
//! - `tencent`: `Timestamp(s),Offset(sectors),Size(sectors),IOType(0 read|
//!   1 write),VolumeID` (Tencent CBS, SNIA IOTTA); whole-second
//!   timestamps, so a second's requests arrive together, as a note says.
//! - `fiu`: `ts(ns) pid process lba(sectors) size(sectors) W|R major minor
//!   md5` (FIU's SRCMap and deduplication traces, SNIA IOTTA); the device is
//!   `major,minor` and the content digests are not read.
//! - `systor`: `Timestamp(s),Response(s),IOType(R|W|blank),LUN,Offset(bytes),
//!   Size(bytes)` (the SYSTOR '17 virtual desktop traces, SNIA IOTTA), Unix
//!   seconds with a fraction; a record of blank type is skipped and counted.
//! - `blkparse`: blkparse's default text output ([`crate::blkparse`]).
//! - `blktrace`: blktrace's binary per-CPU files ([`crate::blktrace`]).
//! - `ftrace`: the kernel's block tracepoints as text ([`crate::ftrace`]).
//! - `iolog`: fio's iolog, versions 2 and 3 ([`crate::iolog`]); each file
//!   it names is a device, and its times count from the run's start, as
//!   fio's do, not from its first request.
//!
//! The last three record several events per request; [`Event`] says which
//! one is its arrival, and the others are skipped and counted in the notes.
//! Any of them may be compressed with gzip, bzip2 or zstd (`compressed`).
//!
//! Times are shifted so the first request arrives at zero, then divided by the
//! replay speed. The device column (ASU, disk number) is ignored by default,
//! as SSDsim and DiskSim's single-disk setups do: every device's addresses
//! land on the one drive and overlap. [`Devices::Separate`] lays the devices
//! side by side instead (each after the one numbered below it, at a 1 MiB
//! boundary), so requests to different devices never touch the same data.
//! Traces address more space than a small simulated drive holds: [`fit`]
//! checks, and on request wraps or scales addresses (devices laid apart each
//! within a share of the drive of its own, in proportion to its reach, so
//! they stay apart).
//!
//! Nothing is adjusted silently: a reader counts what it skips, ignores or
//! reorders, and [`Trace::notes`] says so. Readers stream their input and
//! bound it ([`MAX_LINE_BYTES`], [`MAX_REQUESTS`]); an arrival the
//! simulator's clock cannot hold ([`MAX_ARRIVAL`]) is an error.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufRead, BufReader};

use iosteer_sched::{Nanos, Op};
use thiserror::Error;

use crate::workload::TraceRecord;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    Ascii,
    Spc,
    Msr,
    Blkparse,
    Blktrace,
    Ftrace,
    Iolog,
    Alibaba,
    Tencent,
    Fiu,
    Systor,
}

impl TraceFormat {
    pub const NAMES: &'static str =
        "ascii, spc, msr, alibaba, tencent, fiu, systor, blkparse, blktrace, ftrace, iolog";

    /// Whether a request has two events to choose its arrival from
    /// ([`Event`]): queued and issued.
    pub fn has_events(self) -> bool {
        matches!(
            self,
            TraceFormat::Blkparse | TraceFormat::Blktrace | TraceFormat::Ftrace
        )
    }

    /// The text formats, in the order a line is tried against them when it
    /// does not fit the one asked for.
    const TEXT: [TraceFormat; 9] = [
        TraceFormat::Ascii,
        TraceFormat::Spc,
        TraceFormat::Msr,
        TraceFormat::Alibaba,
        TraceFormat::Tencent,
        TraceFormat::Fiu,
        TraceFormat::Systor,
        TraceFormat::Blkparse,
        TraceFormat::Ftrace,
    ];

    pub fn parse(name: &str) -> Option<TraceFormat> {
        match name {
            "ascii" => Some(TraceFormat::Ascii),
            "spc" => Some(TraceFormat::Spc),
            "msr" => Some(TraceFormat::Msr),
            "blkparse" => Some(TraceFormat::Blkparse),
            "blktrace" => Some(TraceFormat::Blktrace),
            "ftrace" => Some(TraceFormat::Ftrace),
            "iolog" => Some(TraceFormat::Iolog),
            "alibaba" => Some(TraceFormat::Alibaba),
            "tencent" => Some(TraceFormat::Tencent),
            "fiu" => Some(TraceFormat::Fiu),
            "systor" => Some(TraceFormat::Systor),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Ascii => "ascii",
            TraceFormat::Spc => "spc",
            TraceFormat::Msr => "msr",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Blktrace => "blktrace",
            TraceFormat::Ftrace => "ftrace",
            TraceFormat::Iolog => "iolog",
            TraceFormat::Alibaba => "alibaba",
            TraceFormat::Tencent => "tencent",
            TraceFormat::Fiu => "fiu",
            TraceFormat::Systor => "systor",
        }
    }

    /// What one line (or record) of the format holds, for error messages.
    pub fn layout(self) -> &'static str {
        match self {
            TraceFormat::Ascii => "`arrival_time device lba size type`, separated by spaces",
            TraceFormat::Spc => "`ASU,LBA,size,opcode,timestamp`",
            TraceFormat::Msr => "`Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`",
            TraceFormat::Alibaba => "`device_id,opcode,offset,length,timestamp`",
            TraceFormat::Tencent => "`Timestamp,Offset,Size,IOType,VolumeID`",
            TraceFormat::Systor => "`Timestamp,Response,IOType,LUN,Offset,Size`",
            TraceFormat::Fiu => {
                "`ts_ns pid process lba size R|W major minor md5`, separated by spaces"
            }
            TraceFormat::Blkparse => {
                "`maj,min cpu sequence seconds pid action RWBS sector + count [process]`"
            }
            TraceFormat::Blktrace => "binary struct blk_io_trace records",
            TraceFormat::Ftrace => {
                "`task-pid [cpu] flags seconds: block_event: maj,min RWBS ... sector + count ...`"
            }
            TraceFormat::Iolog => {
                "`FILE ACTION [OFFSET LENGTH]` (version 2) or `MICROSECONDS FILE ACTION [OFFSET \
                 LENGTH]` (version 3), after a first line `fio version 2 iolog` or `fio version 3 \
                 iolog`"
            }
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    Ns,
    Us,
    Ms,
    S,
}

impl TimeUnit {
    pub const NAMES: &'static str = "ns, us, ms, s";

    pub fn parse(name: &str) -> Option<TimeUnit> {
        match name {
            "ns" => Some(TimeUnit::Ns),
            "us" => Some(TimeUnit::Us),
            "ms" => Some(TimeUnit::Ms),
            "s" => Some(TimeUnit::S),
            _ => None,
        }
    }

    fn nanos(self) -> u64 {
        match self {
            TimeUnit::Ns => 1,
            TimeUnit::Us => 1_000,
            TimeUnit::Ms => 1_000_000,
            TimeUnit::S => 1_000_000_000,
        }
    }
}

/// Which block-layer event of a blktrace or ftrace trace is a request's
/// arrival.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The bio is queued (blktrace `Q`, ftrace `block_bio_queue`): what the
    /// applications asked for, before merging and the kernel's scheduler.
    Queue,
    /// The request is issued to the driver (blktrace `D`, ftrace
    /// `block_rq_issue`): what the drive saw, after merging.
    Issue,
}

impl Event {
    pub const NAMES: &'static str = "queue, issue";

    pub fn parse(name: &str) -> Option<Event> {
        match name {
            "queue" => Some(Event::Queue),
            "issue" => Some(Event::Issue),
            _ => None,
        }
    }
}

impl fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimeUnit::Ns => "ns",
            TimeUnit::Us => "us",
            TimeUnit::Ms => "ms",
            TimeUnit::S => "s",
        })
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Event::Queue => "queue",
            Event::Issue => "issue",
        })
    }
}

/// How a trace is read.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Options {
    /// Time unit of ascii traces (the other formats say theirs).
    pub unit: TimeUnit,
    /// Replay speed: 2 replays twice as fast.
    pub speed: f64,
    pub devices: Devices,
    /// The arrival event of blktrace and ftrace traces.
    pub event: Event,
    /// fio's `replay_*` options, for iologs.
    pub iolog: crate::iolog::IologOptions,
    /// Only the requests arriving in this span are replayed.
    pub window: Option<Window>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            unit: TimeUnit::Ns,
            speed: 1.0,
            devices: Devices::Merge,
            event: Event::Queue,
            iolog: crate::iolog::IologOptions::default(),
            window: None,
        }
    }
}

/// A trace's requests by arrival, and what reading it adjusted or skipped.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    pub records: Vec<TraceRecord>,
    pub notes: Vec<String>,
    /// Where each device lies, with [`Devices::Separate`] (else empty).
    pub devices: Vec<DeviceRange>,
}

/// Longest line a text reader accepts: a trace line is short, and a file
/// without line breaks (a binary file, `/dev/zero`) must not fill memory.
pub const MAX_LINE_BYTES: usize = 64 << 10;

/// Most requests a trace read into memory may hold (about 1.5 GB while
/// read): a longer one is refused rather than cut, so that a replay never
/// covers less than the trace without saying so. Only a trace out of time
/// order is read into memory for a replay ([`open_replay`]).
pub const MAX_REQUESTS: usize = 16 << 20;

/// Latest arrival, after the shift to zero and the replay speed: the
/// simulator's clock is u64 nanoseconds and adds drain times and timers to
/// arrivals, so half its range (146 years) is kept free.
pub const MAX_ARRIVAL: Nanos = Nanos(1 << 62);

/// Where in its file a request was read: a text line or a binary record.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Place {
    Line(usize),
    Record(u64),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Line(n) => write!(f, "{n}"),
            Place::Record(n) => write!(f, "record {n}"),
        }
    }
}

/// A request as read.
pub(crate) struct RawRecord {
    /// Arrival, nanoseconds in the trace's own origin (wide: a trace's
    /// clock may start anywhere, and scaled times must not overflow).
    pub(crate) at: u128,
    pub(crate) op: Op,
    /// The device (or volume, disk number, ASU) the trace names.
    pub(crate) device: DeviceKey,
    /// Bytes from the start of that device, and bytes long.
    pub(crate) offset: u64,
    pub(crate) len: u64,
    /// Where in its file it was read, for messages.
    pub(crate) place: Place,
    /// Index of the file it came from (per-CPU blktrace files).
    pub(crate) source: usize,
    /// A FUA write (see [`TraceRecord::fua`]).
    pub(crate) fua: bool,
}

/// A number as written when plain (2, 0.5), in exponent form when not
/// (1e-300).
fn short(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e6).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// `bytes`, and in the largest binary unit it fills at least once:
/// "1610612736 bytes (1.5 GiB)", "512 bytes".
fn binary_size(bytes: u64) -> String {
    match approximate_size(bytes) {
        Some(about) => format!("{bytes} bytes ({about})"),
        None => format!("{bytes} bytes"),
    }
}

/// `bytes` to a tenth of the largest binary unit it fills at least once
/// ("1.5 GiB"); `None` below 1 KiB.
fn approximate_size(bytes: u64) -> Option<String> {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut unit = None;
    for name in UNITS {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = Some(name);
    }
    unit.map(|u| format!("{value:.1} {u}"))
}

/// "; read: 3 requests of zero length skipped", or nothing.
fn skipped_hint(notes: &[String]) -> String {
    match notes.is_empty() {
        true => String::new(),
        false => format!("; read: {}", notes.join("; ")),
    }
}

/// "; it looks like ascii or spc", or that it looks like none of them.
fn looks_like_hint(formats: &[TraceFormat]) -> String {
    if formats.is_empty() {
        return format!(
            "; it fits none of the text formats ({})",
            TraceFormat::TEXT.map(TraceFormat::name).join(", ")
        );
    }
    let names: Vec<&str> = formats.iter().map(|f| f.name()).collect();
    format!("; it looks like a line of {}", names.join(" or "))
}

#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum TraceError {
    #[error("{file}:{line}: field {field} `{value}`: expected {expected}")]
    Field {
        file: String,
        line: usize,
        field: String,
        value: String,
        expected: String,
    },
    #[error(
        "{file}:{line}: expected {expected} fields, found {found}: a line of {format} is {}{}",
        .format.layout(),
        looks_like_hint(.looks_like)
    )]
    Fields {
        file: String,
        line: usize,
        expected: usize,
        found: usize,
        format: TraceFormat,
        /// The other formats the line parses as.
        looks_like: Vec<TraceFormat>,
    },
    #[error("{file}:{line}: {problem}; expected {expected}")]
    Line {
        file: String,
        line: usize,
        problem: String,
        expected: String,
    },
    #[error("{file}:{line}: longer than {limit} bytes: not a trace line (is it a text trace?)")]
    LineTooLong {
        file: String,
        line: usize,
        limit: usize,
    },
    #[error("{file}:{line}: not UTF-8 text (a binary file read as a text format?)")]
    NotText { file: String, line: usize },
    #[error("{file}: record {record} at byte {byte}: {problem}")]
    Record {
        file: String,
        record: u64,
        byte: u64,
        problem: String,
    },
    #[error("{file}: {message}")]
    Io { file: String, message: String },
    #[error("{file}: is {what}, which is not read as a trace; unpack it first ({unpack})")]
    Packed {
        file: String,
        what: String,
        unpack: String,
    },
    #[error("{file}: is {kind}, not a trace file")]
    NotAFile { file: String, kind: String },
    #[error(
        "{file}: holds more than {limit} requests to read into memory (a pipe is read once, and \
         a file whose arrivals go back in time is sorted; a file in time order is replayed as \
         it is read, at any length): give it a file of its own, sort it by time, or cut it"
    )]
    TooMany { file: String, limit: usize },
    #[error(
        "{file}:{place}: arrives {after_s:.4e} s after the first request (at replay speed \
         {}), past the latest arrival the simulator can represent, {limit_s:.4e} s (2^62 ns)",
        short(*.speed)
    )]
    TooLate {
        file: String,
        place: Place,
        after_s: f64,
        speed: f64,
        limit_s: f64,
    },
    #[error("replay speed {}: expected a positive finite number", short(*.speed))]
    Speed { speed: f64 },
    #[error("{file}:{place}: {len} bytes at byte {offset} end past 2^64 bytes")]
    PastEnd {
        file: String,
        place: Place,
        offset: u64,
        len: u64,
    },
    #[error(
        "{file}: device {device} ends {reach} bytes into it, and laid after the devices before \
         it (each in a range of its own) from byte {}, it would end past 2^64 bytes; merge the \
         devices to replay it",
        u128::from(*.base_mib) << 20
    )]
    DevicePastEnd {
        file: String,
        device: String,
        /// Where it would start, in MiB (devices start at a 1 MiB
        /// boundary): 2^44, 2^64 bytes, when the devices before it reach
        /// that far.
        base_mib: u64,
        reach: u64,
    },
    #[error(
        "{file}: its {devices} devices laid apart need a page each of the drive, which holds \
         {pages} pages of {page} bytes; merge the devices to fit them onto it"
    )]
    DevicesPastPages {
        file: String,
        devices: u64,
        pages: u64,
        page: u64,
    },
    #[error("{file}: holds no request{}", skipped_hint(.skipped))]
    Empty {
        file: String,
        /// The notes of what reading it skipped (events of another kind,
        /// zero lengths...), which say why.
        skipped: Vec<String>,
    },
    #[error("{file}: no request arrives in --trace-window {window}")]
    EmptyWindow { file: String, window: String },
    /// A streamed trace read otherwise than when it was checked.
    #[error(
        "{file}: changed since it was checked before the run ({what}); the replay stops \
         rather than replay another trace"
    )]
    Changed { file: String, what: String },
    #[error(
        "{file} addresses {} but the drive holds {}; use a drive that large, or remap the \
         addresses",
        binary_size(*.needed),
        binary_size(*.capacity)
    )]
    TooLarge {
        file: String,
        needed: u64,
        capacity: u64,
    },
}

pub(crate) fn check_speed(speed: f64) -> Result<(), TraceError> {
    if speed.is_finite() && speed > 0.0 {
        Ok(())
    } else {
        Err(TraceError::Speed { speed })
    }
}

/// Reads a trace from `source`; `file` names it in errors.
pub fn read(
    source: impl BufRead,
    file: &str,
    format: TraceFormat,
    options: &Options,
) -> Result<Trace, TraceError> {
    check_speed(options.speed)?;
    let mut sink = Sink::new(options.event);
    read_source(source, file, 0, format, options, &mut sink)?;
    finish(sink, file, &[file.to_string()], options)
}

fn read_source(
    source: impl BufRead,
    file: &str,
    index: usize,
    format: TraceFormat,
    options: &Options,
    sink: &mut Sink,
) -> Result<(), TraceError> {
    sink.start(file, index);
    match format {
        TraceFormat::Blktrace => crate::blktrace::read(source, file, sink),
        _ => read_lines(source, file, format, options, sink),
    }
}

/// Reads the trace in file `path`; for blktrace, `path` may name one of
/// the per-CPU files (`DEV.blktrace.0`) or their prefix (`DEV`), and every
/// CPU's file is read.
pub fn read_path(path: &str, format: TraceFormat, options: &Options) -> Result<Trace, TraceError> {
    check_speed(options.speed)?;
    let files = match format {
        TraceFormat::Blktrace => crate::blktrace::cpu_files(path)?,
        _ => vec![path.to_string()],
    };
    let mut sink = Sink::new(options.event);
    for (index, file) in files.iter().enumerate() {
        let opened = open(file)?;
        let name = opened.name(file);
        read_source(opened.content, &name, index, format, options, &mut sink)?;
    }
    finish(sink, path, &files, options)
}

/// Opens a trace file to read its content, decompressed if it is
/// compressed ([`compressed`]).
pub(crate) fn open(file: &str) -> Result<compressed::Opened, TraceError> {
    let source = BufReader::with_capacity(compressed::BUFFER, open_file(file)?);
    compressed::decompressed(file, source)
}

/// Opens a trace file; a device or directory is refused (a FIFO is read,
/// bounded like any file, so `<(blkparse ...)` works).
pub(crate) fn open_file(file: &str) -> Result<std::fs::File, TraceError> {
    let f = std::fs::File::open(file).map_err(|e| io_error(file, &e))?;
    let meta = f.metadata().map_err(|e| io_error(file, &e))?;
    if let Some(kind) = not_a_file(&meta) {
        return Err(TraceError::NotAFile {
            file: file.to_string(),
            kind: kind.to_string(),
        });
    }
    Ok(f)
}

fn not_a_file(meta: &std::fs::Metadata) -> Option<&'static str> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = meta.file_type();
        if kind.is_char_device() {
            return Some("a character device");
        }
        if kind.is_block_device() {
            return Some("a block device");
        }
    }
    meta.is_dir().then_some("a directory")
}

/// Shifts arrivals so the first is at zero, applies the speed and the
/// device layout, checks the clock's range, sorts, and writes the notes.
fn finish(
    mut sink: Sink,
    name: &str,
    files: &[String],
    options: &Options,
) -> Result<Trace, TraceError> {
    let Some(earliest) = sink.raw.iter().map(|r| r.at).min() else {
        return Err(TraceError::Empty {
            file: name.to_string(),
            skipped: sink.tally.notes(options.event),
        });
    };
    let mut notes = Vec::new();
    let mut origin = if sink.own_origin { 0 } else { earliest };
    if let Some(window) = options.window {
        let (lo, hi) = window.bounds(origin);
        let before = sink.raw.iter().filter(|r| r.at < lo).count() as u64;
        let after = sink.raw.iter().filter(|r| r.at >= hi).count() as u64;
        sink.raw.retain(|r| (lo..hi).contains(&r.at));
        notes.push(window_note(&window, before, after));
        let kept = sink.raw.iter().map(|r| r.at).min();
        let kept = kept.ok_or_else(|| empty_window(name, &window))?;
        origin = if sink.own_origin { lo } else { kept };
    }
    let first = origin;
    let (bases, devices) = match options.devices {
        Devices::Merge => (BTreeMap::new(), Vec::new()),
        Devices::Separate => device_layout(&sink.raw, name)?,
    };
    if options.devices == Devices::Separate {
        notes.push(layout_note(&devices));
    }
    let mut records = Vec::with_capacity(sink.raw.len());
    for r in &sink.raw {
        records.push(TraceRecord {
            at: arrival(r.at, r.place, first, options.speed, &files[r.source])?,
            op: r.op,
            offset: r
                .offset
                .saturating_add(bases.get(&r.device).copied().unwrap_or(0)),
            len: r.len,
            fua: r.fua,
        });
    }
    records.sort_by_key(|r| r.at);
    notes.extend(sink.tally.notes(options.event));
    Ok(Trace {
        records,
        notes,
        devices,
    })
}

/// The arrival of a request read at `at` (at `place` of `file`), after the
/// first request at `first`, at `speed`.
pub(crate) fn arrival(
    at: u128,
    place: Place,
    first: u128,
    speed: f64,
    file: &str,
) -> Result<Nanos, TraceError> {
    let since = at - first;
    let limit = u128::from(MAX_ARRIVAL.0);
    // At speed 1 integers stay exact; otherwise f64, whose infinities and
    // huge values fail the same comparison.
    let at = if speed == 1.0 {
        (since <= limit).then_some(since as u64)
    } else {
        let x = (since as f64 / speed).round();
        (x <= limit as f64).then_some(x as u64)
    };
    at.map(Nanos).ok_or_else(|| TraceError::TooLate {
        file: file.to_string(),
        place,
        after_s: since as f64 / speed / 1e9,
        speed,
        limit_s: limit as f64 / 1e9,
    })
}

/// Parses a trace in `text`; `file` names it in errors; `speed` > 1
/// replays faster; `devices` says where each device's addresses go.
pub fn parse(
    text: &str,
    file: &str,
    format: TraceFormat,
    unit: TimeUnit,
    speed: f64,
    devices: Devices,
) -> Result<Trace, TraceError> {
    let options = Options {
        unit,
        speed,
        devices,
        ..Options::default()
    };
    read(text.as_bytes(), file, format, &options)
}

mod archive;
mod compressed;
mod devices;
pub(crate) use compressed::packed;
pub(crate) use devices::*;
pub use devices::{exact_size, DeviceRange, Devices};
mod fit;
mod window;
pub use fit::{fit, fit_counted, fit_devices, DeviceShare, Fit, Remap};
pub(crate) use fit::{Needs, Placement};
pub(crate) use window::{empty_window, window_note};
pub use window::{Window, WindowError};
mod lines;
pub(crate) use lines::*;
pub(crate) mod replay;
pub use replay::{open_replay, Replay, TraceCursor, TraceRecords, TraceSummary};
#[cfg(test)]
mod tests;
