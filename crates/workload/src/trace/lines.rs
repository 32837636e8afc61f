//! Reading a trace line by line: the parser of one line's fields (with
//! errors naming file, line and field), the sink that collects records and
//! counts what was skipped or adjusted for the notes, and the column formats
//! (ascii, spc, msr, alibaba, tencent, fiu, systor). The block-layer formats plug in through
//! [`LineFormat`].

use super::*;

/// What a reader adjusted or skipped, counted for the trace's notes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    /// Note text (after the count) to count.
    pub(crate) counts: BTreeMap<&'static str, u64>,
    /// Events other than the arrival event, by kind.
    pub(crate) skipped: BTreeMap<String, u64>,
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

    pub(crate) fn is_empty(&self) -> bool {
        self.counts.is_empty() && self.skipped.is_empty()
    }

    pub(crate) fn notes(&self, event: Event) -> Vec<String> {
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

/// The note on the flushes replayed.
const FLUSHES: &str = "flushes (replayed as flushes: a row of their own in the report)";

/// The note on arrivals out of time order within a file.
const UNSORTED: &str = "arrivals earlier than the one before them in their file (sorted by time)";

/// Where readers put what they read.
pub(crate) struct Sink {
    pub(crate) raw: Vec<RawRecord>,
    pub(crate) tally: Tally,
    pub(crate) event: Event,
    /// The file being read, its index, and its previous arrival.
    pub(crate) file: String,
    pub(crate) source: usize,
    pub(crate) last: Option<u128>,
    /// The trace's times count from the run's start (an iolog's), not
    /// from its first request.
    pub(crate) own_origin: bool,
    /// `--trace-window`'s bounds `[lo, hi)` in the trace's time: requests
    /// outside are counted in `before` and `after` and dropped; one at or
    /// past `hi` sets `past_end` (a reader of a file known to be in time
    /// order may stop there).
    pub(crate) window: Option<(u128, u128)>,
    pub(crate) before: u64,
    pub(crate) after: u64,
    pub(crate) past_end: bool,
}

impl Sink {
    pub(crate) fn new(event: Event) -> Sink {
        Sink {
            raw: Vec::new(),
            tally: Tally::default(),
            event,
            file: String::new(),
            source: 0,
            last: None,
            own_origin: false,
            window: None,
            before: 0,
            after: 0,
            past_end: false,
        }
    }

    pub(crate) fn start(&mut self, file: &str, source: usize) {
        self.file = file.to_string();
        self.source = source;
        self.last = None;
        self.past_end = false;
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
        self.push_marked(at, (op, false), device, span, place)
    }

    /// [`push`](Self::push) of a request that may be a FUA write.
    pub(crate) fn push_marked(
        &mut self,
        at: u128,
        (op, fua): (Op, bool),
        device: DeviceKey,
        span: (u64, u64),
        place: Place,
    ) -> Result<(), TraceError> {
        let (offset, len) = span;
        if offset.checked_add(len).is_none() {
            return Err(TraceError::PastEnd {
                file: self.file.clone(),
                place,
                offset,
                len,
            });
        }
        if len == 0 && op != Op::Flush {
            self.tally
                .add("requests of zero length skipped (a flush is kept)", 1);
            return Ok(());
        }
        if self.last.is_some_and(|last| at < last) {
            self.tally.add(UNSORTED, 1);
        }
        self.last = Some(at);
        if op == Op::Flush {
            self.tally.add(FLUSHES, 1);
        }
        if let Some((lo, hi)) = self.window {
            if at >= hi {
                self.past_end = true;
                self.after += 1;
                return Ok(());
            }
            if at < lo {
                self.before += 1;
                return Ok(());
            }
        }
        if self.raw.len() >= MAX_REQUESTS {
            return Err(TraceError::TooMany {
                file: self.file.clone(),
                limit: MAX_REQUESTS,
            });
        }
        self.raw.push(RawRecord {
            at,
            op,
            device,
            offset,
            len,
            place,
            source: self.source,
            fua,
        });
        Ok(())
    }

    /// Whether an arrival went back in time within a file read so far.
    pub(crate) fn saw_unsorted(&self) -> bool {
        self.tally.counts.contains_key(UNSORTED)
    }

    pub(crate) fn produced(&self) -> bool {
        !self.raw.is_empty() || !self.tally.is_empty()
    }
}

/// One line of a text format.
pub(crate) trait LineFormat {
    /// Reads one non-blank, non-comment line: pushes its requests into
    /// `sink` and counts there what it skips.
    fn line(&mut self, p: &LineParser, text: &str, sink: &mut Sink) -> Result<(), TraceError>;

    /// At the end of the file: the error a last line left pending, if any.
    fn end(&mut self) -> Result<(), TraceError> {
        Ok(())
    }
}

/// The line being read, for fields and errors.
pub(crate) struct LineParser<'a> {
    pub(crate) file: &'a str,
    pub(crate) line: usize,
    pub(crate) format: TraceFormat,
    /// Whether a field-count error tries the other formats (not while
    /// trying them).
    pub(crate) hint: bool,
    /// The file's first line that is neither blank nor a comment (where a
    /// CSV names its columns).
    pub(crate) first: bool,
}

impl LineParser<'_> {
    #[cfg(test)]
    pub(crate) fn for_tests() -> LineParser<'static> {
        LineParser {
            file: "t",
            line: 1,
            format: TraceFormat::Blkparse,
            hint: false,
            first: true,
        }
    }

    /// A time in `unit_ns` nanoseconds per unit: exact for integers (MSR's
    /// 100 ns ticks since 1601 overflow an f64's precision) and for plain
    /// decimals (SYSTOR's `1455894000.0000003` is 256 ns from its
    /// neighbours in an f64, which merged and reordered arrivals), else
    /// through an f64 (an exponent).
    pub(crate) fn time(&self, field: &str, value: &str, unit_ns: u64) -> Result<u128, TraceError> {
        let value = value.trim();
        if let Ok(n) = value.parse::<u64>() {
            return Ok(u128::from(n) * u128::from(unit_ns));
        }
        if let Some(ns) = exact_decimal(value, unit_ns) {
            return Ok(ns);
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

    /// A count of 512-byte sectors (`what` says of what: "a sector number")
    /// in bytes; one whose bytes pass 2^64 is refused, not saturated (two
    /// such addresses would become one).
    pub(crate) fn sectors(&self, field: &str, value: &str, what: &str) -> Result<u64, TraceError> {
        let n: u64 = self.number(field, value, what)?;
        n.checked_mul(512).ok_or_else(|| {
            let expected = format!("{what} below 2^55 (512-byte sectors: 2^64 bytes)");
            self.bad(field, value, &expected)
        })
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

    /// The read or write a field names, `words` being a read's and a
    /// write's; anything else is an error saying what was `expected`.
    pub(crate) fn read_or_write(
        &self,
        field: &str,
        value: &str,
        words: (&[&str], &[&str]),
        expected: &str,
    ) -> Result<Op, TraceError> {
        let value = value.trim();
        match (words.0.contains(&value), words.1.contains(&value)) {
            (true, _) => Ok(Op::Read),
            (_, true) => Ok(Op::Write),
            _ => Err(self.bad(field, value, expected)),
        }
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

    /// The line's first fields, at least `at_least` of them; fields past
    /// `at_most` are counted in `sink` as ignored. Kept on the stack: a
    /// trace of a billion lines should not allocate for each.
    pub(crate) fn fields<'t>(
        &self,
        text: &'t str,
        sep: Option<char>,
        range: (usize, usize),
        sink: &mut Sink,
    ) -> Result<[&'t str; MAX_COLUMNS], TraceError> {
        let (at_least, at_most) = range;
        let (fields, found) = split(text, sep);
        if found < at_least {
            return Err(self.too_few(text, at_least, found));
        }
        if found > at_most {
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
                looks_like(text, self.format, self.first)
            } else {
                Vec::new()
            },
        }
    }
}

/// The text formats other than `except` that read `text` as a request or a
/// known event, or, on a file's `first` line, that it names the columns of
/// (`Timestamp,Hostname,...`: msr).
pub(crate) fn looks_like(text: &str, except: TraceFormat, first: bool) -> Vec<TraceFormat> {
    if except != TraceFormat::Iolog && crate::iolog::is_header(text) {
        return vec![TraceFormat::Iolog];
    }
    let names = text.replace(' ', "");
    let named: Vec<TraceFormat> = (TraceFormat::TEXT.into_iter())
        .filter(|&format| first && format != except)
        .filter(|format| names.eq_ignore_ascii_case(format.layout().trim_matches('`')))
        .collect();
    if !named.is_empty() {
        return named;
    }
    TraceFormat::TEXT
        .into_iter()
        .filter(|&format| format != except)
        .filter(|&format| {
            let p = LineParser {
                file: "",
                line: 0,
                format,
                hint: false,
                first: false,
            };
            let mut sink = Sink::new(Event::Queue);
            let mut reader = line_format(format, &Options::default());
            reader.line(&p, text, &mut sink).is_ok() && sink.produced()
        })
        .collect()
}

/// Most columns a column format reads (MSR's seven).
const MAX_COLUMNS: usize = 7;

/// The first [`MAX_COLUMNS`] fields of `text`, split at `sep` (at runs of
/// white space without one), and how many fields it has in all.
fn split(text: &str, sep: Option<char>) -> ([&str; MAX_COLUMNS], usize) {
    let mut fields = [""; MAX_COLUMNS];
    let mut found = 0;
    let mut keep = |field| {
        if let Some(slot) = fields.get_mut(found) {
            *slot = field;
        }
        found += 1;
    };
    match sep {
        Some(c) => text.split(c).for_each(&mut keep),
        None => text.split_whitespace().for_each(&mut keep),
    }
    (fields, found)
}

/// The five-, comma- and MSR-column formats.
pub(crate) struct Columns {
    pub(crate) format: TraceFormat,
    pub(crate) unit: TimeUnit,
}

impl LineFormat for Columns {
    fn line(&mut self, p: &LineParser, text: &str, sink: &mut Sink) -> Result<(), TraceError> {
        if p.first && is_header(self.format, text) {
            sink.tally.add(HEADER, 1);
            return Ok(());
        }
        let (at, op, device, span) = match self.format {
            TraceFormat::Spc => spc_line(p, text, sink)?,
            TraceFormat::Msr => msr_line(p, text, sink)?,
            TraceFormat::Alibaba => alibaba_line(p, text, sink)?,
            TraceFormat::Tencent => tencent_line(p, text, sink)?,
            TraceFormat::Fiu => fiu_line(p, text)?,
            TraceFormat::Systor => match systor_line(p, text, sink)? {
                Some(parsed) => parsed,
                None => return Ok(()),
            },
            _ => ascii_line(p, text, self.unit, sink)?,
        };
        sink.push(at, op, device, span, Place::Line(p.line))
    }
}

pub(crate) type Columns4 = (u128, Op, DeviceKey, (u64, u64));

/// A column format's line read: arrival, operation, device and span.
pub(crate) type Parsed = Result<Columns4, TraceError>;

/// The note on ascii arrivals finer than their unit, nanoseconds.
const SUB_NANOSECOND: &str = "arrival times with a fraction of a nanosecond, rounded to whole ones: is the trace in another unit? (DiskSim's own ascii traces count milliseconds)";

pub(crate) fn ascii_line(p: &LineParser, text: &str, unit: TimeUnit, sink: &mut Sink) -> Parsed {
    let f = p.fields(text, None, (5, 5), sink)?;
    let time = p.time("1 (arrival time)", f[0], unit.nanos())?;
    let finer = f[0].parse::<f64>().is_ok_and(|ns| ns.fract() != 0.0);
    if unit == TimeUnit::Ns && finer {
        sink.tally.add(SUB_NANOSECOND, 1);
    }
    let offset = p.sectors("3 (lba)", f[2], "a sector number")?;
    let len = p.sectors("4 (size)", f[3], "a sector count")?;
    let op = p.read_or_write("5 (type)", f[4], (&["1"], &["0"]), "1 (read) or 0 (write)")?;
    Ok((time, op, DeviceKey::of(f[1]), (offset, len)))
}

pub(crate) fn spc_line(p: &LineParser, text: &str, sink: &mut Sink) -> Parsed {
    let f = p.fields(text, Some(','), (5, 5), sink)?;
    let offset = p.sectors("2 (LBA)", f[1], "a sector number")?;
    let bytes: u64 = p.number("3 (size)", f[2], "a byte count")?;
    let op = p.read_or_write("4 (opcode)", f[3], (&["r", "R"], &["w", "W"]), "r or w")?;
    let at = p.time("5 (timestamp)", f[4], 1_000_000_000)?;
    Ok((at, op, DeviceKey::of(f[0]), (offset, bytes)))
}

pub(crate) fn msr_line(p: &LineParser, text: &str, sink: &mut Sink) -> Parsed {
    // The seventh field, the response time, is read by no one here.
    let f = p.fields(text, Some(','), (6, 7), sink)?;
    let at = p.time("1 (timestamp)", f[0], 100)?;
    let words = (&["Read", "read"][..], &["Write", "write"][..]);
    let op = p.read_or_write("4 (type)", f[3], words, "Read or Write")?;
    let offset: u64 = p.number("5 (offset)", f[4], "a byte offset")?;
    let bytes: u64 = p.number("6 (size)", f[5], "a byte count")?;
    let device = DeviceKey::Name(format!("{}/{}", f[1].trim(), f[2].trim()));
    Ok((at, op, device, (offset, bytes)))
}

/// The note on a header line, which is skipped.
const HEADER: &str =
    "header lines skipped (the file's first line names the columns: not a request)";

/// Whether `text`, a file's first line (blank lines and comments aside), is
/// a header naming the columns (`Timestamp,Hostname,DiskNumber,...`): it has
/// the format's fields, and each column that must hold a number holds a
/// name instead. A line with any number there is read as a request (and an
/// error names its field), so a mistyped request is never skipped.
pub(crate) fn is_header(format: TraceFormat, text: &str) -> bool {
    let (sep, at_least, numbers): (Option<char>, usize, &[usize]) = match format {
        TraceFormat::Ascii => (None, 5, &[0, 2, 3, 4]),
        TraceFormat::Spc => (Some(','), 5, &[1, 2, 4]),
        TraceFormat::Msr => (Some(','), 6, &[0, 4, 5]),
        TraceFormat::Alibaba => (Some(','), 5, &[2, 3, 4]),
        TraceFormat::Tencent => (Some(','), 5, &[0, 1, 2, 3]),
        TraceFormat::Systor => (Some(','), 6, &[0, 1, 4, 5]),
        _ => return false,
    };
    let (fields, found) = split(text, sep);
    found >= at_least && numbers.iter().all(|&i| is_name(fields[i]))
}

/// A column's name (`Timestamp`, `"Offset"`, `lba(sectors)`): it starts with
/// a letter and is no number (`inf` and `NaN` are numbers to Rust).
fn is_name(field: &str) -> bool {
    let field = field.trim().trim_matches('"');
    field.starts_with(|c: char| c.is_alphabetic() || c == '_') && field.parse::<f64>().is_err()
}

pub(crate) fn alibaba_line(p: &LineParser, text: &str, sink: &mut Sink) -> Parsed {
    let f = p.fields(text, Some(','), (5, 5), sink)?;
    let op = p.read_or_write("2 (opcode)", f[1], (&["R", "r"], &["W", "w"]), "R or W")?;
    let offset: u64 = p.number("3 (offset)", f[2], "a byte offset")?;
    let bytes: u64 = p.number("4 (length)", f[3], "a byte count")?;
    let at = p.time("5 (timestamp)", f[4], 1_000)?;
    Ok((at, op, DeviceKey::of(f[0]), (offset, bytes)))
}

/// Tencent CBS's timestamps are whole seconds (one with decimals is not
/// counted).
const WHOLE_SECONDS: &str = "requests arrive at the start of their second, in file order \
    (tencent timestamps are whole seconds)";

pub(crate) fn tencent_line(p: &LineParser, text: &str, sink: &mut Sink) -> Parsed {
    let f = p.fields(text, Some(','), (5, 5), sink)?;
    let at = p.time("1 (timestamp)", f[0], 1_000_000_000)?;
    let offset = p.sectors("2 (offset)", f[1], "a sector number")?;
    let len = p.sectors("3 (size)", f[2], "a sector count")?;
    let expected = "0 (read) or 1 (write)";
    let op = p.read_or_write("4 (IOType)", f[3], (&["0"], &["1"]), expected)?;
    // Zero-length records are skipped (and counted) later: not here.
    if len > 0 && !f[0].trim().contains('.') {
        sink.tally.add(WHOLE_SECONDS, 1);
    }
    Ok((at, op, DeviceKey::of(f[4]), (offset, len)))
}

/// SYSTOR '17 records of blank type: the trace's README gives no
/// operation for them.
const UNTYPED: &str = "records of blank IOType skipped (the trace says neither read nor write)";

/// A SYSTOR '17 line; `None` for a record of blank type, counted.
pub(crate) fn systor_line(
    p: &LineParser,
    text: &str,
    sink: &mut Sink,
) -> Result<Option<Columns4>, TraceError> {
    // The second field, the response time, is read by no one here.
    let f = p.fields(text, Some(','), (6, 6), sink)?;
    let at = p.time("1 (Timestamp)", f[0], 1_000_000_000)?;
    if f[2].trim().is_empty() {
        sink.tally.add(UNTYPED, 1);
        return Ok(None);
    }
    let op = p.read_or_write(
        "3 (IOType)",
        f[2],
        (&["R", "r"], &["W", "w"]),
        "R, W or blank",
    )?;
    let offset: u64 = p.number("5 (Offset)", f[4], "a byte offset")?;
    let bytes: u64 = p.number("6 (Size)", f[5], "a byte count")?;
    Ok(Some((at, op, DeviceKey::of(f[3]), (offset, bytes))))
}

/// Fields a FIU line may have: nine, and a few more where the process name
/// holds spaces.
const FIU_MAX_FIELDS: usize = 16;

/// A FIU line, its fields counted from both ends (a process name may hold
/// spaces): time and pid first; lba, size, type, major, minor and the
/// digest last.
pub(crate) fn fiu_line(p: &LineParser, text: &str) -> Parsed {
    let mut f = [""; FIU_MAX_FIELDS];
    let mut n = 0;
    for field in text.split_whitespace() {
        if n == FIU_MAX_FIELDS {
            return Err(p.bad_line("more fields than a process name with spaces explains"));
        }
        f[n] = field;
        n += 1;
    }
    if n < 9 {
        return Err(p.too_few(text, 9, n));
    }
    let end = |back: usize| f[n - back];
    let at = p.time("1 (ts)", f[0], 1)?;
    p.number::<u64>("2 (pid)", f[1], "a process id")?;
    let offset = p.sectors("lba", end(6), "a sector number")?;
    let len = p.sectors("size", end(5), "a sector count")?;
    let op = p.read_or_write("type", end(4), (&["R", "r"], &["W", "w"]), "R or W")?;
    // Linux's dev_t layout (MKDEV: 12 bits of major, 20 of minor): one
    // number a device, no string a line.
    let major: u32 = p.number("major", end(3), "a device number")?;
    let minor: u32 = p.number("minor", end(2), "a device number")?;
    if major >= 1 << 12 || minor >= 1 << 20 {
        let value = format!("{major},{minor}");
        return Err(p.bad(
            "major,minor",
            &value,
            "Linux device numbers (major below 4096, minor below 2^20)",
        ));
    }
    let device = DeviceKey::Number((u64::from(major) << 20) | u64::from(minor));
    Ok((at, op, device, (offset, len)))
}

pub(crate) fn line_format(format: TraceFormat, options: &Options) -> Box<dyn LineFormat> {
    match format {
        TraceFormat::Blkparse => Box::new(crate::blkparse::Blkparse::new(options.event)),
        TraceFormat::Ftrace => Box::new(crate::ftrace::Ftrace::new(options.event)),
        TraceFormat::Iolog => Box::new(crate::iolog::Iolog::new(options.iolog)),
        _ => Box::new(Columns {
            format,
            unit: options.unit,
        }),
    }
}

/// Reads `source` line by line, each at most [`MAX_LINE_BYTES`] long.
pub(crate) fn read_lines(
    source: impl BufRead,
    file: &str,
    format: TraceFormat,
    options: &Options,
    sink: &mut Sink,
) -> Result<(), TraceError> {
    let mut reader = LineReader::new(source, file, format, options);
    while reader.step(sink)? {}
    Ok(())
}

/// A text trace read one line at a time.
pub(crate) struct LineReader<R> {
    source: R,
    file: String,
    format: TraceFormat,
    reader: Box<dyn LineFormat>,
    line: usize,
    /// Lines read that were neither blank nor comments.
    content: usize,
    buf: Vec<u8>,
}

impl<R: BufRead> LineReader<R> {
    pub(crate) fn new(source: R, file: &str, format: TraceFormat, options: &Options) -> Self {
        LineReader {
            source,
            file: file.to_string(),
            format,
            reader: line_format(format, options),
            line: 0,
            content: 0,
            buf: Vec::new(),
        }
    }

    /// Reads the next line into `sink`; `false` at the end of the file.
    pub(crate) fn step(&mut self, sink: &mut Sink) -> Result<bool, TraceError> {
        self.buf.clear();
        self.line += 1;
        let (file, line) = (self.file.as_str(), self.line);
        let n = next_line(&mut self.source, &mut self.buf, MAX_LINE_BYTES)
            .map_err(|e| io_error(file, &e))?;
        if n == 0 {
            self.reader.end()?;
            return Ok(false);
        }
        if self.buf.len() > MAX_LINE_BYTES {
            return Err(TraceError::LineTooLong {
                file: file.to_string(),
                line,
                limit: MAX_LINE_BYTES,
            });
        }
        let text = std::str::from_utf8(&self.buf).map_err(|_| TraceError::NotText {
            file: file.to_string(),
            line,
        })?;
        // A byte-order mark (a CSV saved by a spreadsheet) is not a field.
        let text = match line {
            1 => text.strip_prefix('\u{feff}').unwrap_or(text),
            _ => text,
        };
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            return Ok(true);
        }
        let p = LineParser {
            file,
            line,
            format: self.format,
            hint: true,
            first: self.content == 0,
        };
        self.content += 1;
        self.reader.line(&p, trimmed, sink)?;
        Ok(true)
    }
}

/// Reads the next line of `source` into `buf`, without its end: `\n`,
/// `\r\n`, or a lone `\r` (a classic Mac or "CSV (Macintosh)" file, whose
/// lines would otherwise run together into one). Stops once `buf` holds more
/// than `limit` bytes. Returns the bytes consumed, 0 at the end.
fn next_line(source: &mut impl BufRead, buf: &mut Vec<u8>, limit: usize) -> std::io::Result<usize> {
    let mut consumed = 0;
    while buf.len() <= limit {
        let available = source.fill_buf()?;
        let Some(end) = memchr::memchr2(b'\n', b'\r', available) else {
            if available.is_empty() {
                break;
            }
            let n = available.len();
            buf.extend_from_slice(available);
            source.consume(n);
            consumed += n;
            continue;
        };
        let cr = available[end] == b'\r';
        buf.extend_from_slice(&available[..end]);
        source.consume(end + 1);
        consumed += end + 1;
        if cr && source.fill_buf()?.first() == Some(&b'\n') {
            source.consume(1);
            consumed += 1;
        }
        break;
    }
    Ok(consumed)
}

pub(crate) fn io_error(file: &str, e: &std::io::Error) -> TraceError {
    TraceError::Io {
        file: file.to_string(),
        message: e.to_string(),
    }
}

/// `whole.frac` (digits, at most 18 after the point) times `unit_ns`,
/// rounded to the nearest nanosecond, in integers.
fn exact_decimal(value: &str, unit_ns: u64) -> Option<u128> {
    let (whole, frac) = value.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(frac) || frac.len() > 18 {
        return None;
    }
    let (whole, fraction): (u128, u128) = (whole.parse().ok()?, frac.parse().ok()?);
    let scale = 10u128.pow(frac.len() as u32);
    let unit = u128::from(unit_ns);
    whole
        .checked_mul(unit)?
        .checked_add((fraction * unit + scale / 2) / scale)
}
