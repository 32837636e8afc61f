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
//! - `blkparse`: blkparse's default text output ([`crate::blkparse`]).
//! - `blktrace`: blktrace's binary per-CPU files ([`crate::blktrace`]).
//! - `ftrace`: the kernel's block tracepoints as text ([`crate::ftrace`]).
//!
//! The last three record several events per request; [`Event`] says which
//! one is its arrival, and the others are skipped and counted in the notes.
//!
//! Times are shifted so the first request arrives at zero, then divided by the
//! replay speed. The device column (ASU, disk number) is ignored by default,
//! as SSDsim and DiskSim's single-disk setups do: every device's addresses
//! land on the one drive and overlap. [`Devices::Separate`] lays the devices
//! side by side instead (each after the one numbered below it, at a 1 MiB
//! boundary), so requests to different devices never touch the same data.
//! Traces address more space than a small simulated drive holds: [`fit`]
//! checks, and on request wraps or scales addresses.
//!
//! Nothing is adjusted silently: a reader counts what it skips, ignores or
//! reorders, and [`Trace::notes`] says so. Readers stream their input and
//! bound it ([`MAX_LINE_BYTES`], [`MAX_REQUESTS`]); an arrival the
//! simulator's clock cannot hold ([`MAX_ARRIVAL`]) is an error.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufRead, BufReader, Read};

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
}

impl TraceFormat {
    pub const NAMES: &'static str = "ascii, spc, msr, blkparse, blktrace, ftrace";

    /// The text formats, in the order a line is tried against them when it
    /// does not fit the one asked for.
    const TEXT: [TraceFormat; 5] = [
        TraceFormat::Ascii,
        TraceFormat::Spc,
        TraceFormat::Msr,
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
        }
    }

    /// What one line (or record) of the format holds, for error messages.
    pub fn layout(self) -> &'static str {
        match self {
            TraceFormat::Ascii => "`arrival_time device lba size type`, separated by spaces",
            TraceFormat::Spc => "`ASU,LBA,size,opcode,timestamp`",
            TraceFormat::Msr => "`Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`",
            TraceFormat::Blkparse => {
                "`maj,min cpu sequence seconds pid action RWBS sector + count [process]`"
            }
            TraceFormat::Blktrace => "binary struct blk_io_trace records",
            TraceFormat::Ftrace => {
                "`task-pid [cpu] flags seconds: block_event: maj,min RWBS ... sector + count ...`"
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

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Event::Queue => "queue",
            Event::Issue => "issue",
        })
    }
}

/// How the trace's devices map onto the one simulated drive.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Devices {
    /// Every device's addresses as they are: devices overlap.
    Merge,
    /// Each device in a range of its own, in device order.
    Separate,
}

impl Devices {
    pub const NAMES: &'static str = "merge, separate";

    pub fn parse(name: &str) -> Option<Devices> {
        match name {
            "merge" => Some(Devices::Merge),
            "separate" => Some(Devices::Separate),
            _ => None,
        }
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
}

impl Default for Options {
    fn default() -> Options {
        Options {
            unit: TimeUnit::Ns,
            speed: 1.0,
            devices: Devices::Merge,
            event: Event::Queue,
        }
    }
}

/// A trace's requests by arrival, and what reading it adjusted or skipped.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    pub records: Vec<TraceRecord>,
    pub notes: Vec<String>,
}

/// Longest line a text reader accepts: a trace line is short, and a file
/// without line breaks (a binary file, `/dev/zero`) must not fill memory.
pub const MAX_LINE_BYTES: usize = 64 << 10;

/// Most requests a trace may hold (about 1.5 GB while read): a longer one
/// is refused rather than cut, so that a replay never covers less than the
/// trace without saying so.
pub const MAX_REQUESTS: usize = 16 << 20;

/// Latest arrival, after the shift to zero and the replay speed: the
/// simulator's clock is u64 nanoseconds and adds drain times and timers to
/// arrivals, so half its range (146 years) is kept free.
pub const MAX_ARRIVAL: Nanos = Nanos(1 << 62);

/// Devices are laid out at this boundary with [`Devices::Separate`].
const DEVICE_ALIGN: u64 = 1 << 20;

/// A device's name in a trace, ordered as numbers when it is one.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum DeviceKey {
    Number(u64),
    Name(String),
}

impl DeviceKey {
    pub(crate) fn of(field: &str) -> DeviceKey {
        let field = field.trim();
        field
            .parse()
            .map_or_else(|_| DeviceKey::Name(field.to_string()), DeviceKey::Number)
    }
}

/// Start of each device's range when devices are laid side by side: each
/// after the end of the highest address of the one before, aligned.
fn device_bases(raw: &[RawRecord]) -> BTreeMap<DeviceKey, u64> {
    let mut ends: BTreeMap<DeviceKey, u64> = BTreeMap::new();
    for r in raw {
        let end = ends.entry(r.device.clone()).or_default();
        *end = (*end).max(r.offset.saturating_add(r.len));
    }
    let mut next = 0u64;
    ends.into_iter()
        .map(|(key, end)| {
            let base = next;
            // Saturating: an address near the top of u64 would wrap the next base to a
            // low one, laying two devices over each other.
            next = next.saturating_add(end.div_ceil(DEVICE_ALIGN).saturating_mul(DEVICE_ALIGN));
            (key, base)
        })
        .collect()
}

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

/// A request as read: time in the trace's own origin, in nanoseconds.
pub(crate) struct RawRecord {
    pub(crate) at: u128,
    pub(crate) op: Op,
    pub(crate) device: DeviceKey,
    pub(crate) offset: u64,
    pub(crate) len: u64,
    pub(crate) place: Place,
    /// Index of the file it came from (per-CPU blktrace files).
    pub(crate) source: usize,
}

/// How to make a trace fit a smaller drive.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Fit {
    /// Refuse, saying how large a drive the trace needs.
    Refuse,
    /// Offsets modulo the capacity.
    Wrap,
    /// Offsets scaled by capacity / span (keeps the layout, coarser).
    Scale,
}

impl Fit {
    pub const NAMES: &'static str = "wrap, scale";
}

impl fmt::Display for Fit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fit::Refuse => "none",
            Fit::Wrap => "wrap",
            Fit::Scale => "scale",
        })
    }
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
    #[error("{file}: is {kind}, not a trace file")]
    NotAFile { file: String, kind: String },
    #[error("{file}: holds more than {limit} requests; cut it to a shorter window")]
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
    #[error("{file}: holds no request")]
    Empty { file: String },
    #[error(
        "{file} addresses {needed} bytes ({needed_gib:.1} GiB) but the drive holds {capacity} bytes \
         ({capacity_gib:.1} GiB); use a drive that large, or remap the addresses"
    )]
    TooLarge {
        file: String,
        needed: u64,
        needed_gib: f64,
        capacity: u64,
        capacity_gib: f64,
    },
}

/// What a reader adjusted or skipped, counted for the trace's notes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    /// Note text (after the count) to count.
    counts: BTreeMap<&'static str, u64>,
    /// Events other than the arrival event, by kind.
    skipped: BTreeMap<String, u64>,
}

impl Tally {
    pub(crate) fn add(&mut self, what: &'static str, n: u64) {
        *self.counts.entry(what).or_default() += n;
    }

    pub(crate) fn skip(&mut self, kind: &str) {
        match self.skipped.get_mut(kind) {
            Some(n) => *n += 1,
            None => {
                self.skipped.insert(kind.to_string(), 1);
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.counts.is_empty() && self.skipped.is_empty()
    }

    fn notes(&self, event: Event) -> Vec<String> {
        let mut notes: Vec<String> = self
            .counts
            .iter()
            .map(|(what, n)| format!("{n} {what}"))
            .collect();
        if !self.skipped.is_empty() {
            let total: u64 = self.skipped.values().sum();
            let kinds: Vec<String> = self
                .skipped
                .iter()
                .map(|(kind, n)| format!("{kind} {n}"))
                .collect();
            notes.push(format!(
                "{total} events other than the {event} event skipped: {}",
                kinds.join(", ")
            ));
        }
        notes
    }
}

/// Where readers put what they read.
pub(crate) struct Sink {
    raw: Vec<RawRecord>,
    pub(crate) tally: Tally,
    pub(crate) event: Event,
    /// The file being read, its index, and its previous arrival.
    file: String,
    source: usize,
    last: Option<u128>,
}

impl Sink {
    fn new(event: Event) -> Sink {
        Sink {
            raw: Vec::new(),
            tally: Tally::default(),
            event,
            file: String::new(),
            source: 0,
            last: None,
        }
    }

    fn start(&mut self, file: &str, source: usize) {
        self.file = file.to_string();
        self.source = source;
        self.last = None;
    }

    /// Keeps a request; a read, write or trim of no bytes is skipped (the
    /// drive has nothing to do) and counted, as are arrivals earlier than
    /// the one before them in the same file (they are sorted).
    pub(crate) fn push(
        &mut self,
        at: u128,
        op: Op,
        device: DeviceKey,
        span: (u64, u64),
        place: Place,
    ) -> Result<(), TraceError> {
        let (offset, len) = span;
        if len == 0 && op != Op::Flush {
            self.tally
                .add("requests of zero length skipped (a flush is kept)", 1);
            return Ok(());
        }
        if op == Op::Flush {
            self.tally
                .add("flushes (the report counts them with the writes)", 1);
        }
        if self.raw.len() >= MAX_REQUESTS {
            return Err(TraceError::TooMany {
                file: self.file.clone(),
                limit: MAX_REQUESTS,
            });
        }
        if self.last.is_some_and(|last| at < last) {
            self.tally.add(
                "arrivals earlier than the one before them in their file (sorted by time)",
                1,
            );
        }
        self.last = Some(at);
        self.raw.push(RawRecord {
            at,
            op,
            device,
            offset,
            len,
            place,
            source: self.source,
        });
        Ok(())
    }

    fn produced(&self) -> bool {
        !self.raw.is_empty() || !self.tally.is_empty()
    }
}

/// One line of a text format.
pub(crate) trait LineFormat {
    /// Reads one non-blank, non-comment line: pushes its requests into
    /// `sink` and counts there what it skips.
    fn line(&mut self, p: &LineParser, text: &str, sink: &mut Sink) -> Result<(), TraceError>;
}

/// The line being read, for fields and errors.
pub(crate) struct LineParser<'a> {
    pub(crate) file: &'a str,
    pub(crate) line: usize,
    pub(crate) format: TraceFormat,
    /// Whether a field-count error tries the other formats (not while
    /// trying them).
    hint: bool,
}

impl LineParser<'_> {
    #[cfg(test)]
    pub(crate) fn for_tests() -> LineParser<'static> {
        LineParser {
            file: "t",
            line: 1,
            format: TraceFormat::Blkparse,
            hint: false,
        }
    }

    /// A time in `unit_ns` nanoseconds per unit: exact for integers (MSR's
    /// 100 ns ticks since 1601 overflow an f64's precision), else decimal.
    fn time(&self, field: &str, value: &str, unit_ns: u64) -> Result<u128, TraceError> {
        let value = value.trim();
        if let Ok(n) = value.parse::<u64>() {
            return Ok(u128::from(n) * u128::from(unit_ns));
        }
        let x: f64 = self.number(field, value, "a time")?;
        if !(x.is_finite() && x >= 0.0) {
            return Err(self.bad(field, value, "a time of zero or more"));
        }
        let ns = x * unit_ns as f64;
        // Past u128 the conversion would saturate and distinct times become
        // equal; far below that, the arrival limit applies after the shift.
        if ns >= u128::MAX as f64 {
            return Err(self.bad(field, value, "a time below 3.4e38 ns"));
        }
        Ok(ns.round() as u128)
    }

    /// Decimal seconds (`2477.517899`, `0.000000000`) in nanoseconds,
    /// exactly: digits, a point, up to nine decimals.
    pub(crate) fn seconds(&self, field: &str, value: &str) -> Result<u128, TraceError> {
        let expected = "seconds as digits, a point and up to nine decimals";
        let (whole, frac) = value.split_once('.').unwrap_or((value, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() || !digits(whole) || !digits(frac) || frac.len() > 9 {
            return Err(self.bad(field, value, expected));
        }
        let whole: u128 = whole
            .parse()
            .map_err(|_| self.bad(field, value, expected))?;
        let frac_ns: u128 = format!("{frac:0<9}").parse().unwrap_or(0);
        whole
            .checked_mul(1_000_000_000)
            .map(|ns| ns + frac_ns)
            .ok_or_else(|| self.bad(field, value, expected))
    }

    pub(crate) fn number<T: std::str::FromStr>(
        &self,
        field: &str,
        value: &str,
        expected: &str,
    ) -> Result<T, TraceError> {
        value
            .trim()
            .parse()
            .map_err(|_| self.bad(field, value, expected))
    }

    pub(crate) fn bad(&self, field: &str, value: &str, expected: &str) -> TraceError {
        TraceError::Field {
            file: self.file.to_string(),
            line: self.line,
            field: field.to_string(),
            value: value.to_string(),
            expected: expected.to_string(),
        }
    }

    pub(crate) fn bad_line(&self, problem: &str) -> TraceError {
        TraceError::Line {
            file: self.file.to_string(),
            line: self.line,
            problem: problem.to_string(),
            expected: format!("a line of {}: {}", self.format, self.format.layout()),
        }
    }

    /// The line's fields, at least `at_least` of them; fields past
    /// `at_most` are counted in `sink` as ignored.
    pub(crate) fn fields<'t>(
        &self,
        text: &'t str,
        sep: Option<char>,
        range: (usize, usize),
        sink: &mut Sink,
    ) -> Result<Vec<&'t str>, TraceError> {
        let fields: Vec<&str> = match sep {
            Some(c) => text.split(c).collect(),
            None => text.split_whitespace().collect(),
        };
        let (at_least, at_most) = range;
        if fields.len() < at_least {
            return Err(self.too_few(text, at_least, fields.len()));
        }
        if fields.len() > at_most {
            sink.tally.add(
                "lines with more fields than the format has (the extra fields ignored)",
                1,
            );
        }
        Ok(fields)
    }

    pub(crate) fn too_few(&self, text: &str, expected: usize, found: usize) -> TraceError {
        TraceError::Fields {
            file: self.file.to_string(),
            line: self.line,
            expected,
            found,
            format: self.format,
            looks_like: if self.hint {
                looks_like(text, self.format)
            } else {
                Vec::new()
            },
        }
    }
}

/// The text formats other than `except` that read `text` as a request or a
/// known event.
fn looks_like(text: &str, except: TraceFormat) -> Vec<TraceFormat> {
    TraceFormat::TEXT
        .into_iter()
        .filter(|&format| format != except)
        .filter(|&format| {
            let p = LineParser {
                file: "",
                line: 0,
                format,
                hint: false,
            };
            let mut sink = Sink::new(Event::Queue);
            let mut reader = line_format(format, &Options::default());
            reader.line(&p, text, &mut sink).is_ok() && sink.produced()
        })
        .collect()
}

/// The five-, comma- and MSR-column formats.
struct Columns {
    format: TraceFormat,
    unit: TimeUnit,
}

impl LineFormat for Columns {
    fn line(&mut self, p: &LineParser, text: &str, sink: &mut Sink) -> Result<(), TraceError> {
        let (at, op, device, span) = match self.format {
            TraceFormat::Spc => spc_line(p, text, sink)?,
            TraceFormat::Msr => msr_line(p, text, sink)?,
            _ => ascii_line(p, text, self.unit, sink)?,
        };
        sink.push(at, op, device, span, Place::Line(p.line))
    }
}

type Columns4 = (u128, Op, DeviceKey, (u64, u64));

fn ascii_line(
    p: &LineParser,
    text: &str,
    unit: TimeUnit,
    sink: &mut Sink,
) -> Result<Columns4, TraceError> {
    let f = p.fields(text, None, (5, 5), sink)?;
    let time = p.time("1 (arrival time)", f[0], unit.nanos())?;
    let lba: u64 = p.number("3 (lba)", f[2], "a sector number")?;
    let sectors: u64 = p.number("4 (size)", f[3], "a sector count")?;
    let op = match f[4] {
        "1" => Op::Read,
        "0" => Op::Write,
        other => return Err(p.bad("5 (type)", other, "1 (read) or 0 (write)")),
    };
    let span = (lba.saturating_mul(512), sectors.saturating_mul(512));
    Ok((time, op, DeviceKey::of(f[1]), span))
}

fn spc_line(p: &LineParser, text: &str, sink: &mut Sink) -> Result<Columns4, TraceError> {
    let f = p.fields(text, Some(','), (5, 5), sink)?;
    let lba: u64 = p.number("2 (LBA)", f[1], "a sector number")?;
    let bytes: u64 = p.number("3 (size)", f[2], "a byte count")?;
    let op = match f[3].trim() {
        "r" | "R" => Op::Read,
        "w" | "W" => Op::Write,
        other => return Err(p.bad("4 (opcode)", other, "r or w")),
    };
    let at = p.time("5 (timestamp)", f[4], 1_000_000_000)?;
    Ok((
        at,
        op,
        DeviceKey::of(f[0]),
        (lba.saturating_mul(512), bytes),
    ))
}

fn msr_line(p: &LineParser, text: &str, sink: &mut Sink) -> Result<Columns4, TraceError> {
    // The seventh field, the response time, is read by no one here.
    let f = p.fields(text, Some(','), (6, 7), sink)?;
    let at = p.time("1 (timestamp)", f[0], 100)?;
    let op = match f[3].trim() {
        "Read" | "read" => Op::Read,
        "Write" | "write" => Op::Write,
        other => return Err(p.bad("4 (type)", other, "Read or Write")),
    };
    let offset: u64 = p.number("5 (offset)", f[4], "a byte offset")?;
    let bytes: u64 = p.number("6 (size)", f[5], "a byte count")?;
    let device = DeviceKey::Name(format!("{}/{}", f[1].trim(), f[2].trim()));
    Ok((at, op, device, (offset, bytes)))
}

fn line_format(format: TraceFormat, options: &Options) -> Box<dyn LineFormat> {
    match format {
        TraceFormat::Blkparse => Box::new(crate::blkparse::Blkparse::new(options.event)),
        TraceFormat::Ftrace => Box::new(crate::ftrace::Ftrace::new(options.event)),
        _ => Box::new(Columns {
            format,
            unit: options.unit,
        }),
    }
}

/// Reads `source` line by line, each at most [`MAX_LINE_BYTES`] long.
fn read_lines(
    mut source: impl BufRead,
    file: &str,
    format: TraceFormat,
    options: &Options,
    sink: &mut Sink,
) -> Result<(), TraceError> {
    let mut reader = line_format(format, options);
    let mut buf = Vec::new();
    for line in 1.. {
        buf.clear();
        let limit = MAX_LINE_BYTES as u64 + 1;
        let n = source
            .by_ref()
            .take(limit)
            .read_until(b'\n', &mut buf)
            .map_err(|e| io_error(file, &e))?;
        if n == 0 {
            break;
        }
        if buf.last() != Some(&b'\n') && n as u64 == limit {
            return Err(TraceError::LineTooLong {
                file: file.to_string(),
                line,
                limit: MAX_LINE_BYTES,
            });
        }
        let text = std::str::from_utf8(&buf).map_err(|_| TraceError::NotText {
            file: file.to_string(),
            line,
        })?;
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let p = LineParser {
            file,
            line,
            format,
            hint: true,
        };
        reader.line(&p, trimmed, sink)?;
    }
    Ok(())
}

pub(crate) fn io_error(file: &str, e: &std::io::Error) -> TraceError {
    TraceError::Io {
        file: file.to_string(),
        message: e.to_string(),
    }
}

fn check_speed(speed: f64) -> Result<(), TraceError> {
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
        let source = open(file)?;
        read_source(source, file, index, format, options, &mut sink)?;
    }
    finish(sink, path, &files, options)
}

/// Opens a trace file; a device or directory is refused (a FIFO is read,
/// bounded like any file, so `<(blkparse ...)` works).
fn open(file: &str) -> Result<BufReader<std::fs::File>, TraceError> {
    let f = std::fs::File::open(file).map_err(|e| io_error(file, &e))?;
    let meta = f.metadata().map_err(|e| io_error(file, &e))?;
    if let Some(kind) = not_a_file(&meta) {
        return Err(TraceError::NotAFile {
            file: file.to_string(),
            kind: kind.to_string(),
        });
    }
    Ok(BufReader::with_capacity(1 << 16, f))
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
    sink: Sink,
    name: &str,
    files: &[String],
    options: &Options,
) -> Result<Trace, TraceError> {
    let Some(first) = sink.raw.iter().map(|r| r.at).min() else {
        return Err(TraceError::Empty {
            file: name.to_string(),
        });
    };
    let bases = match options.devices {
        Devices::Merge => BTreeMap::new(),
        Devices::Separate => device_bases(&sink.raw),
    };
    let mut records = Vec::with_capacity(sink.raw.len());
    for r in &sink.raw {
        records.push(TraceRecord {
            at: arrival(r, first, options.speed, &files[r.source])?,
            op: r.op,
            offset: r
                .offset
                .saturating_add(bases.get(&r.device).copied().unwrap_or(0)),
            len: r.len,
        });
    }
    records.sort_by_key(|r| r.at);
    Ok(Trace {
        records,
        notes: sink.tally.notes(options.event),
    })
}

/// `r`'s arrival after the first request at `first`, at `speed`.
fn arrival(r: &RawRecord, first: u128, speed: f64, file: &str) -> Result<Nanos, TraceError> {
    let since = r.at - first;
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
        place: r.place,
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

/// What [`fit_counted`] did to a trace.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Remap {
    pub how: Fit,
    /// Requests whose offset changed.
    pub moved: u64,
    /// Requests longer than the drive, cut to its size.
    pub cut: u64,
    pub requests: u64,
}

impl fmt::Display for Remap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} requests moved by {}, {} longer than the drive cut to its size",
            self.moved, self.requests, self.how, self.cut
        )
    }
}

/// Makes `records` fit a drive of `capacity` bytes with `page` bytes
/// pages; says whether it remapped them.
pub fn fit(
    records: &mut [TraceRecord],
    capacity: u64,
    page: u64,
    how: Fit,
    file: &str,
) -> Result<bool, TraceError> {
    fit_counted(records, capacity, page, how, file).map(|remap| remap.is_some())
}

/// As [`fit`], counting what it moved and cut.
pub fn fit_counted(
    records: &mut [TraceRecord],
    capacity: u64,
    page: u64,
    how: Fit,
    file: &str,
) -> Result<Option<Remap>, TraceError> {
    let needed = records
        .iter()
        .map(|r| r.offset.saturating_add(r.len))
        .max()
        .unwrap_or(0);
    if needed <= capacity {
        return Ok(None);
    }
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    if how == Fit::Refuse {
        return Err(TraceError::TooLarge {
            file: file.to_string(),
            needed,
            needed_gib: gib(needed),
            capacity,
            capacity_gib: gib(capacity),
        });
    }
    let page = page.max(512);
    let mut remap = Remap {
        how,
        moved: 0,
        cut: 0,
        requests: records.len() as u64,
    };
    for r in records.iter_mut() {
        let before = *r;
        remap_one(r, capacity, page, needed, how);
        remap.cut += u64::from(r.len < before.len);
        remap.moved += u64::from(r.offset != before.offset);
    }
    Ok(Some(remap))
}

fn remap_one(r: &mut TraceRecord, capacity: u64, page: u64, needed: u64, how: Fit) {
    r.len = r.len.min(capacity);
    let room = capacity - r.len;
    let moved = match how {
        Fit::Wrap => r.offset % (room + 1),
        _ => ((r.offset as u128 * room as u128) / needed as u128) as u64,
    };
    r.offset = moved / 512 * 512;
    if r.offset + r.len > capacity {
        r.offset = room / page * page;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ascii trace in nanoseconds, replayed at its own speed.
    fn ascii(text: &str, file: &str, devices: Devices) -> Result<Vec<TraceRecord>, TraceError> {
        parse(text, file, TraceFormat::Ascii, TimeUnit::Ns, 1.0, devices).map(|t| t.records)
    }

    fn spc(text: &str, devices: Devices) -> Result<Vec<TraceRecord>, TraceError> {
        parse(text, "f.spc", TraceFormat::Spc, TimeUnit::S, 1.0, devices).map(|t| t.records)
    }

    #[test]
    fn ascii_lines_become_requests_in_sectors() {
        let text = "0 0 303567 7 0\n26214000 1 240840 6 1\n";
        let r = ascii(text, "t.ascii", Devices::Merge).unwrap();
        assert_eq!(
            r[0],
            TraceRecord {
                at: Nanos(0),
                op: Op::Write,
                offset: 303567 * 512,
                len: 7 * 512
            }
        );
        assert_eq!((r[1].at, r[1].op), (Nanos(26_214_000), Op::Read));
        let fast = parse(
            text,
            "t.ascii",
            TraceFormat::Ascii,
            TimeUnit::Ms,
            2.0,
            Devices::Merge,
        )
        .unwrap()
        .records;
        assert_eq!(fast[1].at, Nanos(13_107_000_000_000));
    }

    #[test]
    fn spc_and_msr_samples_parse() {
        let text = "0,303567,3584,w,0.000000\n1,55590,3072,R,0.026214\n";
        let r = spc(text, Devices::Merge).unwrap();
        assert_eq!((r[0].op, r[0].len, r[1].op), (Op::Write, 3584, Op::Read));
        assert_eq!(r[1].at, Nanos(26_214_000));
        let msr = "128166372003061629,hm,0,Read,3325952,4096,1000\n128166372003071629,hm,0,Write,0,8192,500\n";
        let r = parse(
            msr,
            "m.csv",
            TraceFormat::Msr,
            TimeUnit::Ns,
            1.0,
            Devices::Merge,
        )
        .unwrap()
        .records;
        assert_eq!(
            (r[0].offset, r[1].at, r[1].op),
            (3_325_952, Nanos(1_000_000), Op::Write)
        );
    }

    #[test]
    fn separate_devices_get_ranges_of_their_own_in_device_order() {
        // Devices in numeric order 0, 2, 10: device 0 ends at 1 MiB; device
        // 2 starts there and ends 3 MiB and 4 KiB later, rounded up to 4 MiB;
        // device 10 starts at 5 MiB.
        let text = "0 10 0 8 0\n1 2 6144 8 0\n2 0 2040 8 1\n3 2 0 8 1\n";
        let merged = ascii(text, "d.ascii", Devices::Merge).unwrap();
        let offsets = |r: &[TraceRecord]| r.iter().map(|x| x.offset).collect::<Vec<_>>();
        assert_eq!(offsets(&merged), [0, 6144 * 512, 2040 * 512, 0]);
        let apart = ascii(text, "d.ascii", Devices::Separate).unwrap();
        let mib = 1 << 20;
        assert_eq!(
            offsets(&apart),
            [mib + 4 * mib, mib + 6144 * 512, 2040 * 512, mib]
        );
        let r = spc("1,0,4096,w,0.0\n0,0,4096,w,0.1\n", Devices::Separate).unwrap();
        assert_eq!(offsets(&r), [mib, 0]);
        assert_eq!(Devices::parse("separate"), Some(Devices::Separate));
        assert_eq!(Devices::parse("apart"), None);
    }

    #[test]
    fn errors_name_the_file_line_and_field() {
        let err = ascii("0 0 1 8 0\n5 0 x 8 1\n", "a.ascii", Devices::Merge).unwrap_err();
        assert_eq!(
            err.to_string(),
            "a.ascii:2: field 3 (lba) `x`: expected a sector number"
        );
        let err = ascii("0 0 1 8 2\n", "a.ascii", Devices::Merge).unwrap_err();
        assert!(err.to_string().contains("1 (read) or 0 (write)"));
        let err = ascii("0 0 1\n", "a.ascii", Devices::Merge).unwrap_err();
        assert!(err
            .to_string()
            .contains("a.ascii:1: expected 5 fields, found 3"));
        let err = ascii("# nothing\n", "e.ascii", Devices::Merge).unwrap_err();
        assert!(err.to_string().contains("holds no request"));
    }

    #[test]
    fn a_trace_too_large_says_how_large_a_drive_it_needs_or_is_remapped() {
        let mut r = ascii(
            "0 0 2000000000 16 1\n1 0 10 16 0\n",
            "big.ascii",
            Devices::Merge,
        )
        .unwrap();
        let err = fit(&mut r.clone(), 1 << 30, 4096, Fit::Refuse, "big.ascii")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("953.7 GiB") && err.contains("remap the addresses"),
            "{err}"
        );
        for how in [Fit::Wrap, Fit::Scale] {
            let mut moved = r.clone();
            assert!(fit(&mut moved, 1 << 30, 4096, how, "big.ascii").unwrap());
            assert!(moved
                .iter()
                .all(|x| x.offset + x.len <= 1 << 30 && x.offset % 512 == 0));
        }
        assert!(!fit(&mut r[1..], 1 << 30, 4096, Fit::Refuse, "x").unwrap());
    }

    const FINANCIAL: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../traces/financial1-excerpt.ascii"
    );

    fn options(unit: TimeUnit, speed: f64) -> Options {
        Options {
            unit,
            speed,
            ..Options::default()
        }
    }

    #[test]
    fn arrivals_past_the_simulator_clock_are_errors_naming_file_line_and_limit() {
        // Nanoseconds read as seconds: 260 s becomes 8,000 years. Line 110
        // is the first request past 2^62 ns (4.6e9 s); the simulator used
        // to replay the 742 requests before 2^64 ns and drop the rest.
        let err = read_path(FINANCIAL, TraceFormat::Ascii, &options(TimeUnit::S, 1.0))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("financial1-excerpt.ascii:110: arrives 4.7317e9 s"),
            "{err}"
        );
        assert!(err.contains("4.6117e9 s (2^62 ns)"), "{err}");
        let slow = parse(
            "0 0 1 8 0\n1000 0 1 8 0\n",
            "s.ascii",
            TraceFormat::Ascii,
            TimeUnit::Ns,
            1e-300,
            Devices::Merge,
        )
        .unwrap_err();
        assert!(
            matches!(
                slow,
                TraceError::TooLate {
                    place: Place::Line(2),
                    ..
                }
            ),
            "{slow}"
        );
        let far = ascii("0 0 1 8 0\n1e23 0 1 8 0\n", "f.ascii", Devices::Merge).unwrap_err();
        assert!(
            far.to_string()
                .starts_with("f.ascii:2: arrives 1.0000e14 s"),
            "{far}"
        );
        // Up to the limit, exact.
        let edge = format!("0 0 1 8 0\n{} 0 1 8 0\n", MAX_ARRIVAL.0);
        assert_eq!(
            ascii(&edge, "e", Devices::Merge).unwrap()[1].at,
            MAX_ARRIVAL
        );
    }

    #[test]
    fn nan_infinite_and_negative_times_and_speeds_are_refused() {
        for time in ["NaN", "inf", "-1", "-0.5", "1e400", "1e39"] {
            let err = ascii(&format!("0 0 1 8 0\n{time} 0 1 8 0\n"), "t", Devices::Merge)
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with("t:2: field 1 (arrival time)"),
                "{time}: {err}"
            );
        }
        for speed in [f64::NAN, f64::INFINITY, -1.0, 0.0] {
            let err = parse(
                "0 0 1 8 0\n",
                "t",
                TraceFormat::Ascii,
                TimeUnit::Ns,
                speed,
                Devices::Merge,
            )
            .unwrap_err();
            assert!(matches!(err, TraceError::Speed { .. }), "{speed}: {err}");
        }
    }

    #[test]
    fn extra_columns_zero_lengths_and_unsorted_arrivals_are_counted_in_notes() {
        let text = "5 0 1 8 0 9 9\n3 0 1 0 1\n1 0 1 8 1\n2 0 1 8 0\n";
        let t = parse(
            text,
            "n.ascii",
            TraceFormat::Ascii,
            TimeUnit::Ns,
            1.0,
            Devices::Merge,
        )
        .unwrap();
        assert_eq!(
            t.records.iter().map(|r| r.at.0).collect::<Vec<_>>(),
            [0, 1, 4]
        );
        assert_eq!(
            t.notes,
            [
                "1 arrivals earlier than the one before them in their file (sorted by time)",
                "1 lines with more fields than the format has (the extra fields ignored)",
                "1 requests of zero length skipped (a flush is kept)",
            ]
        );
        let msr = "128166372003061629,hm,0,Read,0,4096,1000,extra\n";
        let t = parse(
            msr,
            "m",
            TraceFormat::Msr,
            TimeUnit::Ns,
            1.0,
            Devices::Merge,
        )
        .unwrap();
        assert_eq!(t.notes.len(), 1);
        let clean = parse(
            "0 0 1 8 0\n1 0 1 8 1\n",
            "c",
            TraceFormat::Ascii,
            TimeUnit::Ns,
            1.0,
            Devices::Merge,
        );
        assert!(clean.unwrap().notes.is_empty());
    }

    #[test]
    fn wrapping_counts_the_requests_it_moves_and_cuts() {
        let two_tib = 2u64 << 40;
        let mut r = ascii(
            &format!("0 0 0 {} 0\n1 0 8 8 1\n2 0 4194304 8 1\n", two_tib / 512),
            "w.ascii",
            Devices::Merge,
        )
        .unwrap();
        let remap = fit_counted(&mut r, 1 << 30, 4096, Fit::Wrap, "w")
            .unwrap()
            .unwrap();
        assert_eq!((remap.moved, remap.cut, remap.requests), (1, 1, 3));
        assert_eq!(r[0].len, 1 << 30);
        assert_eq!(
            remap.to_string(),
            "1 of 3 requests moved by wrap, 1 longer than the drive cut to its size"
        );
    }

    #[test]
    fn a_line_of_another_format_names_the_format_expected_and_the_ones_it_looks_like() {
        let text = std::fs::read_to_string(FINANCIAL).unwrap();
        let err = parse(
            &text,
            "fin",
            TraceFormat::Spc,
            TimeUnit::Ns,
            1.0,
            Devices::Merge,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "fin:1: expected 5 fields, found 1: a line of spc is `ASU,LBA,size,opcode,timestamp`; \
             it looks like a line of ascii"
        );
        let blk = "  8,0    3        1     0.000000000   697  Q  WS 223490 + 8 [kjournald]\n";
        let err = parse(
            blk,
            "b",
            TraceFormat::Msr,
            TimeUnit::Ns,
            1.0,
            Devices::Merge,
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .ends_with("it looks like a line of blkparse"),
            "{err}"
        );
        let err = parse(
            "a,b\n",
            "x",
            TraceFormat::Ascii,
            TimeUnit::Ns,
            1.0,
            Devices::Merge,
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .ends_with("it fits none of the text formats (ascii, spc, msr, blkparse, ftrace)"),
            "{err}"
        );
    }

    #[test]
    fn endless_or_binary_input_is_refused_after_a_bounded_read() {
        let endless = BufReader::new(std::io::repeat(b'0'));
        let err = read(endless, "zeros", TraceFormat::Ascii, &Options::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "zeros:1: longer than 65536 bytes: not a trace line (is it a text trace?)"
        );
        let nul = BufReader::new(std::io::repeat(0).take(1 << 30));
        let err = read(nul, "nul", TraceFormat::Blkparse, &Options::default()).unwrap_err();
        assert!(
            matches!(err, TraceError::LineTooLong { line: 1, .. }),
            "{err}"
        );
        let err = read(
            &b"0 0 1 8 0\n\xff\xfe\n"[..],
            "bin",
            TraceFormat::Ascii,
            &Options::default(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "bin:2: not UTF-8 text (a binary file read as a text format?)"
        );
        for format in [TraceFormat::Ascii, TraceFormat::Blktrace] {
            let err = read_path("/dev/zero", format, &Options::default()).unwrap_err();
            assert_eq!(
                err.to_string(),
                "/dev/zero: is a character device, not a trace file"
            );
        }
        let err = read_path(
            "/nonexistent.ascii",
            TraceFormat::Ascii,
            &Options::default(),
        )
        .unwrap_err();
        assert!(err.to_string().starts_with("/nonexistent.ascii: "), "{err}");
    }
}
