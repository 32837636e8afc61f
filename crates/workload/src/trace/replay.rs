//! Replaying a trace as it is read, so a trace of a month (hundreds of
//! millions of requests) runs in the memory of a short one.
//!
//! [`open_replay`] reads the trace twice, or three times, before the run
//! reads it once more:
//! 1. a first pass keeps no request, only what the replay needs to know
//!    ahead: the earliest arrival (time zero), the latest (the clock's range),
//!    each device's highest address (their bases with `--trace-devices
//!    separate`, and whether the trace fits the drive), whether every file
//!    is in time order, and the notes of what the readers skipped;
//! 2. when devices are laid apart or addresses remapped, a second pass
//!    works out the replayed requests' extent and counts what the remap
//!    moved and cut, for the notes, with the same code the replay runs;
//! 3. the run pulls requests through a [`TraceCursor`], which merges the
//!    files (blktrace's per-CPU files) by arrival, earlier file first on a
//!    tie, as a stable sort of them would.
//!
//! A trace whose arrivals go back in time within a file cannot be replayed
//! that way, nor can a pipe (`<(blkparse ...)`), which can be read only
//! once; they are read into memory and sorted, as before, up to
//! [`MAX_REQUESTS`]. Either way the run issues the same requests in the
//! same order. The files are held open from the first pass on and read by
//! position, so a file renamed, rotated or deleted meanwhile still replays
//! as it was checked; one written to since (its length or modification
//! time changed, or what it reads no longer matches the first pass: fewer
//! requests, arrivals out of order) is an error, [`TraceError::Changed`],
//! not another trace replayed.

use std::collections::VecDeque;
use std::sync::Arc;

use super::*;

mod files;
use files::{changed, FileReader, TraceFile};

/// Every op a trace holds, and the extent of its requests.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceSummary {
    pub requests: u64,
    /// The earliest and latest arrivals.
    pub first_at: Option<Nanos>,
    pub last_at: Nanos,
    /// The lowest byte and the end of the highest request (0 when empty).
    pub min_offset: u64,
    pub max_end: u64,
    pub max_len: u64,
    /// Every offset and length or-ed together: its lowest set bit is the
    /// finest alignment the trace uses.
    pub bits: u64,
    ops: u8,
}

impl TraceSummary {
    fn add(&mut self, r: &TraceRecord) {
        self.min_offset = if self.requests == 0 {
            r.offset
        } else {
            self.min_offset.min(r.offset)
        };
        self.requests += 1;
        self.first_at = Some(self.first_at.map_or(r.at, |a| a.min(r.at)));
        self.last_at = self.last_at.max(r.at);
        self.max_end = self.max_end.max(r.offset.saturating_add(r.len));
        self.max_len = self.max_len.max(r.len);
        self.bits |= r.offset | r.len;
        self.ops |= 1 << r.op.index();
    }

    /// Whether the trace holds a request of `op`.
    pub fn has(&self, op: Op) -> bool {
        self.ops & (1 << op.index()) != 0
    }

    /// Whether it holds a request other than a read.
    pub fn has_non_read(&self) -> bool {
        self.ops & !(1 << Op::Read.index()) != 0
    }

    fn of<'a>(records: impl IntoIterator<Item = &'a TraceRecord>) -> TraceSummary {
        let mut summary = TraceSummary::default();
        for r in records {
            summary.add(r);
        }
        summary
    }
}

/// A trace job's requests: held in memory, or read from the trace's files
/// as the run goes.
#[derive(Clone, Debug)]
pub struct TraceRecords {
    summary: TraceSummary,
    source: Source,
    /// Where each device lies, when they are laid side by side.
    devices: Vec<DeviceRange>,
}

#[derive(Clone, Debug)]
enum Source {
    Memory(Arc<[TraceRecord]>),
    Stream(Arc<Plan>),
}

impl TraceRecords {
    pub fn summary(&self) -> &TraceSummary {
        &self.summary
    }

    /// The requests from the first, in arrival order.
    pub fn cursor(&self) -> TraceCursor {
        TraceCursor(match &self.source {
            Source::Memory(records) => Inner::Memory {
                records: Arc::clone(records),
                next: 0,
            },
            Source::Stream(plan) => Inner::Stream(Box::new(Stream::new(Arc::clone(plan)))),
        })
    }

    /// Whether the requests are read from the files as the run goes.
    pub fn is_streamed(&self) -> bool {
        matches!(self.source, Source::Stream(_))
    }

    /// Where each device of the trace lies, in address order, when the
    /// devices are laid side by side ([`Devices::Separate`]) and no
    /// `--trace-fit` moved them; empty otherwise.
    pub fn devices(&self) -> &[DeviceRange] {
        &self.devices
    }

    /// Moves the requests to new addresses: device `i` of
    /// [`Self::devices`] to start at `bases[i]`, or, with no devices, every
    /// request by `bases[0]` (`iosteer run` gives each file an address
    /// range of its own). Requests keep their order and their place within
    /// their device.
    ///
    /// # Panics
    /// If `bases` is not one per device (one when there are none).
    pub fn rebase(&mut self, bases: &[u64]) {
        assert_eq!(bases.len(), self.devices.len().max(1), "one base a device");
        let no_devices = self.devices.is_empty();
        let moves = Moves {
            devices: &self.devices,
            bases,
        };
        self.summary = moves.summary(&self.summary);
        match &mut self.source {
            Source::Memory(records) => {
                let moved: Vec<TraceRecord> = (records.iter())
                    .map(|r| TraceRecord {
                        offset: moves.apply(r.offset),
                        ..*r
                    })
                    .collect();
                *records = moved.into();
            }
            Source::Stream(plan) => {
                let mut moved = Plan::clone(plan);
                // No devices (merged, or fitted to the drive): one shift,
                // whatever bases the plan laid the devices at before a fit.
                match no_devices {
                    true => moved.shift += bases[0],
                    false => (moved.bases.values_mut().zip(bases)).for_each(|(b, to)| *b = *to),
                }
                *plan = Arc::new(moved);
            }
        }
        for (device, base) in self.devices.iter_mut().zip(bases) {
            device.base = *base;
        }
    }
}

/// How [`TraceRecords::rebase`] moves an address: by the shift of the
/// device it falls in.
struct Moves<'a> {
    devices: &'a [DeviceRange],
    bases: &'a [u64],
}

impl Moves<'_> {
    fn apply(&self, offset: u64) -> u64 {
        if self.devices.is_empty() {
            return offset.saturating_add(self.bases[0]);
        }
        let i = (self.devices.partition_point(|d| d.base <= offset)).saturating_sub(1);
        offset - self.devices[i].base.min(offset) + self.bases[i]
    }

    /// The summary of the moved requests: exact, but for the lowest offset
    /// when devices change order (then the lowest base, a bound).
    fn summary(&self, before: &TraceSummary) -> TraceSummary {
        let mut after = *before;
        after.bits |= self.bases.iter().fold(0, |bits, b| bits | b);
        if self.devices.is_empty() {
            after.min_offset = self.apply(before.min_offset);
            after.max_end = before.max_end.saturating_add(self.bases[0]);
            return after;
        }
        let in_order = self
            .bases
            .windows(2)
            .zip(self.devices)
            .all(|(b, d)| b[0].saturating_add(d.reach) <= b[1]);
        after.min_offset = match in_order {
            true => self.apply(before.min_offset),
            false => self.bases.iter().copied().min().unwrap_or(0),
        };
        after.max_end = (self.devices.iter().zip(self.bases))
            .map(|(d, b)| b.saturating_add(d.reach))
            .max()
            .unwrap_or(0);
        after
    }
}

impl From<Vec<TraceRecord>> for TraceRecords {
    fn from(records: Vec<TraceRecord>) -> TraceRecords {
        TraceRecords {
            summary: TraceSummary::of(&records),
            source: Source::Memory(records.into()),
            devices: Vec::new(),
        }
    }
}

impl PartialEq for TraceRecords {
    fn eq(&self, other: &TraceRecords) -> bool {
        self.summary == other.summary
            && self.devices == other.devices
            && match (&self.source, &other.source) {
                (Source::Memory(a), Source::Memory(b)) => a == b,
                (Source::Stream(a), Source::Stream(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}

/// How a streamed trace's requests are made from what its files hold.
#[derive(Clone, Debug)]
struct Plan {
    files: Vec<TraceFile>,
    /// `--trace-window`'s bounds in the trace's time, for every reader.
    window: Option<(u128, u128)>,
    /// Requests the first pass read: the replay must read as many.
    requests: u64,
    format: TraceFormat,
    options: Options,
    /// The earliest arrival, in the trace's own time.
    first: u128,
    bases: BTreeMap<DeviceKey, u64>,
    /// A `--trace-fit` remap, as [`fit_counted`] does it.
    remap: Option<Placement>,
    /// Added to every address after any remap ([`TraceRecords::rebase`]).
    shift: u64,
}

impl Plan {
    /// The request replayed for `r`, before any remap.
    fn unmapped(&self, r: &RawRecord) -> Result<TraceRecord, TraceError> {
        let file = &self.files[r.source].name;
        if r.at < self.first {
            return Err(changed(file, "an arrival earlier than the first one read"));
        }
        Ok(TraceRecord {
            at: arrival(r.at, r.place, self.first, self.options.speed, file)?,
            op: r.op,
            offset: r
                .offset
                .saturating_add(self.bases.get(&r.device).copied().unwrap_or(0)),
            len: r.len,
            fua: r.fua,
        })
    }

    fn record(&self, r: &RawRecord) -> Result<TraceRecord, TraceError> {
        let mut record = self.unmapped(r)?;
        if let Some(placement) = &self.remap {
            placement.place(&mut record);
        }
        record.offset = record.offset.saturating_add(self.shift);
        Ok(record)
    }
}

/// A trace read for replay, and what reading it adjusted or skipped.
#[derive(Debug)]
pub struct Replay {
    pub records: TraceRecords,
    pub notes: Vec<String>,
    /// What `--trace-fit` moved and cut, if the trace did not fit.
    pub remap: Option<Remap>,
}

/// Reads the trace at `path` for a replay on a drive of `capacity` bytes
/// with `page`-byte pages, remapped by `fit` if it addresses more: streamed
/// when every file is in time order, else held in memory and sorted.
pub fn open_replay(
    path: &str,
    format: TraceFormat,
    options: &Options,
    fit: Fit,
    drive: (u64, u64),
) -> Result<Replay, TraceError> {
    check_speed(options.speed)?;
    let files = match format {
        TraceFormat::Blktrace => crate::blktrace::cpu_files(path)?,
        _ => vec![path.to_string()],
    };
    // A pipe (`<(blkparse ...)`) can be read only once: it is read whole.
    let regular = files.iter().all(|f| is_regular(f));
    let files = match regular {
        true => files
            .iter()
            .map(|f| TraceFile::open(f))
            .collect::<Result<Vec<_>, _>>()?,
        false => Vec::new(),
    };
    let scan = match regular {
        true => Some(Scan::of(&files, format, options)?),
        false => None,
    };
    // Out of order, the window's origin was a guess: the memory path judges.
    if let Some(s) = scan.as_ref().filter(|s| s.latest.is_none() && s.in_order) {
        return Err(match options.window {
            Some(window) => empty_window(path, &window),
            None => TraceError::Empty {
                file: path.to_string(),
                skipped: s.tally.notes(options.event),
            },
        });
    }
    let Some(scan) = scan.filter(|s| s.in_order) else {
        let mut trace = read_path(path, format, options)?;
        let remap = fit_devices(&mut trace.records, &trace.devices, drive, fit, path)?;
        let mut records = TraceRecords::from(trace.records);
        if remap.is_none() {
            records.devices = trace.devices;
        }
        return Ok(Replay {
            records,
            notes: trace.notes,
            remap,
        });
    };
    let latest = scan.latest.expect("checked above");
    let bases = match options.devices {
        Devices::Merge => BTreeMap::new(),
        Devices::Separate => bases_after(scan.ends.clone(), path)?,
    };
    let mut plan = Plan {
        files,
        window: scan.window,
        requests: scan.requests,
        format,
        options: *options,
        first: scan.first,
        bases,
        remap: None,
        shift: 0,
    };
    let (at, place, source) = latest;
    if let Err(late) = arrival(
        at,
        place,
        scan.first,
        options.speed,
        &plan.files[source].name,
    ) {
        // Name the first request past the clock, as the replay meets it.
        let plan = Arc::new(plan);
        return Err(Stream::new(plan).find_map(Result::err).unwrap_or(late));
    }
    let needed = scan
        .ends
        .iter()
        .map(|(device, end)| end.saturating_add(plan.bases.get(device).copied().unwrap_or(0)))
        .max()
        .unwrap_or(0);
    let laid_apart = match plan.bases.is_empty() {
        true => Vec::new(),
        false => device_ranges(&scan.ends, &plan.bases),
    };
    let trace = Needs {
        needed,
        longest: scan.unshifted.max_len,
        devices: &laid_apart,
    };
    plan.remap = Placement::of(fit, drive, &trace, path)?;
    let plan = Arc::new(plan);
    let (summary, remap) = if plan.bases.is_empty() && plan.remap.is_none() {
        let mut summary = scan.unshifted;
        summary.first_at = Some(arrival(
            scan.earliest,
            place,
            scan.first,
            options.speed,
            path,
        )?);
        summary.last_at = arrival(at, place, scan.first, options.speed, path)?;
        (summary, None)
    } else {
        second_pass(&plan)?
    };
    let mut notes: Vec<String> = (options.window.iter())
        .map(|w| window_note(w, scan.before, scan.after))
        .collect();
    if options.devices == Devices::Separate {
        notes.push(layout_note(&laid_apart));
    }
    notes.extend(scan.tally.notes(options.event));
    let devices = match &plan.remap {
        None => laid_apart,
        Some(_) => Vec::new(),
    };
    Ok(Replay {
        records: TraceRecords {
            summary,
            source: Source::Stream(plan),
            devices,
        },
        notes,
        remap,
    })
}

fn is_regular(file: &str) -> bool {
    std::fs::metadata(file).is_ok_and(|m| m.is_file())
}

/// The replayed requests' summary, and what the remap moved and cut.
fn second_pass(plan: &Arc<Plan>) -> Result<(TraceSummary, Option<Remap>), TraceError> {
    let unmapped = Arc::new(Plan {
        remap: None,
        ..Plan::clone(plan)
    });
    let mut summary = TraceSummary::default();
    let mut remap = plan.remap.as_ref().map(|p| p.remap(0));
    for r in Stream::new(unmapped) {
        let before = r?;
        let mut after = before;
        if let (Some(placement), Some(counts)) = (&plan.remap, remap.as_mut()) {
            placement.place(&mut after);
            counts.requests += 1;
            counts.count(&before, &after);
        }
        summary.add(&after);
    }
    Ok((summary, remap))
}

/// What a first pass over a trace's files found, holding no request.
struct Scan {
    /// Time zero of the replay: the earliest arrival, or 0 for a trace
    /// whose times count from the run's start (an iolog's).
    first: u128,
    earliest: u128,
    /// The latest arrival, where it was read, and its file's index.
    latest: Option<(u128, Place, usize)>,
    in_order: bool,
    /// Each device's highest address; with devices merged, the trace's
    /// under one key (a device column of a million names is no map of a
    /// million entries).
    ends: DeviceEnds,
    merged: bool,
    requests: u64,
    /// The requests as read, all at time zero.
    unshifted: TraceSummary,
    tally: Tally,
    /// `--trace-window`'s bounds, and the requests before and after it.
    window: Option<(u128, u128)>,
    before: u64,
    after: u64,
}

impl Scan {
    fn of(files: &[TraceFile], format: TraceFormat, options: &Options) -> Result<Scan, TraceError> {
        let mut scan = Scan {
            first: u128::MAX,
            earliest: u128::MAX,
            latest: None,
            in_order: true,
            ends: DeviceEnds::new(),
            merged: options.devices == Devices::Merge,
            requests: 0,
            unshifted: TraceSummary::default(),
            tally: Tally::default(),
            window: None,
            before: 0,
            after: 0,
        };
        let mut sink = Sink::new(options.event);
        if let Some(window) = options.window {
            scan.window = Some(window.bounds(origin(files, format, options)?));
            sink.window = scan.window;
        }
        for (index, file) in files.iter().enumerate() {
            let mut reader = FileReader::open(file, format, options)?;
            sink.start(&file.name, index);
            // Read to the end, past the window: order and the earliest
            // arrival are known only then.
            while reader.step(&mut sink)? {
                for r in sink.raw.drain(..) {
                    scan.add(&r);
                }
            }
        }
        scan.in_order = !sink.saw_unsorted();
        scan.earliest = scan.first;
        if sink.own_origin {
            scan.first = scan.window.map_or(0, |(lo, _)| lo);
        }
        (scan.before, scan.after) = (sink.before, sink.after);
        scan.tally = sink.tally;
        Ok(scan)
    }

    fn add(&mut self, r: &RawRecord) {
        self.requests += 1;
        self.first = self.first.min(r.at);
        if self.latest.is_none_or(|(at, _, _)| r.at > at) {
            self.latest = Some((r.at, r.place, r.source));
        }
        match self.merged {
            true => note_end_as(&mut self.ends, &DeviceKey::Number(0), r),
            false => note_end(&mut self.ends, r),
        }
        self.unshifted.add(&TraceRecord {
            at: Nanos::ZERO,
            op: r.op,
            offset: r.offset,
            len: r.len,
            fua: r.fua,
        });
    }
}

/// The trace's time zero for `--trace-window`: its earliest first request
/// of a file (files in time order start with their earliest), or 0 when
/// its times count from the run's start.
fn origin(files: &[TraceFile], format: TraceFormat, options: &Options) -> Result<u128, TraceError> {
    let mut earliest = u128::MAX;
    for (index, file) in files.iter().enumerate() {
        let mut reader = FileReader::open(file, format, options)?;
        let mut sink = Sink::new(options.event);
        sink.start(&file.name, index);
        while sink.raw.is_empty() && reader.step(&mut sink)? {}
        if sink.own_origin {
            return Ok(0);
        }
        if let Some(first) = sink.raw.first() {
            earliest = earliest.min(first.at);
        }
    }
    Ok(if earliest == u128::MAX { 0 } else { earliest })
}

/// A trace's requests in arrival order, from memory or read as they are
/// asked for. An error (a file changed or gone since it was first read)
/// comes once, and then the cursor ends.
pub struct TraceCursor(Inner);

enum Inner {
    Memory {
        records: Arc<[TraceRecord]>,
        next: usize,
    },
    Stream(Box<Stream>),
}

impl Iterator for TraceCursor {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            Inner::Memory { records, next } => {
                let r = records.get(*next).copied()?;
                *next += 1;
                Some(Ok(r))
            }
            Inner::Stream(stream) => stream.next(),
        }
    }
}

impl fmt::Debug for TraceCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Inner::Memory { records, next } => {
                write!(f, "TraceCursor(memory, {next} of {})", records.len())
            }
            Inner::Stream(s) => write!(f, "TraceCursor(streamed from {:?})", s.plan.files),
        }
    }
}

/// The files of a streamed trace, merged by arrival.
struct Stream {
    plan: Arc<Plan>,
    /// Each file's reader and its next request; `None` until first asked.
    files: Option<Vec<FileCursor>>,
    /// An error met while reading ahead, given after the request before it.
    error: Option<TraceError>,
    /// Requests given so far.
    given: u64,
    done: bool,
}

struct FileCursor {
    reader: FileReader,
    sink: Sink,
    pending: VecDeque<RawRecord>,
    head: Option<TraceRecord>,
}

impl Stream {
    fn new(plan: Arc<Plan>) -> Stream {
        Stream {
            plan,
            files: None,
            error: None,
            given: 0,
            done: false,
        }
    }

    fn open(&self) -> Result<Vec<FileCursor>, TraceError> {
        let plan = &self.plan;
        let mut files = Vec::with_capacity(plan.files.len());
        for (index, file) in plan.files.iter().enumerate() {
            let mut sink = Sink::new(plan.options.event);
            sink.window = plan.window;
            sink.start(&file.name, index);
            let mut cursor = FileCursor {
                reader: FileReader::open(file, plan.format, &plan.options)?,
                sink,
                pending: VecDeque::new(),
                head: None,
            };
            cursor.head = cursor.pull(plan)?;
            files.push(cursor);
        }
        Ok(files)
    }

    fn take_next(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        if self.files.is_none() {
            self.files = Some(self.open()?);
        }
        let files = self.files.as_mut().expect("opened above");
        // The earliest head, the lowest file on a tie (`min_by_key` keeps
        // the first of equal keys).
        let Some(cursor) = files
            .iter_mut()
            .filter(|c| c.head.is_some())
            .min_by_key(|c| c.head.map(|r| r.at))
        else {
            let plan = &self.plan;
            if self.given != plan.requests {
                let what = format!("{} requests where it held {}", self.given, plan.requests);
                return Err(changed(&plan.files[0].name, &what));
            }
            return Ok(None);
        };
        self.given += 1;
        let record = cursor.head.take();
        match cursor.pull(&self.plan) {
            Ok(head) => cursor.head = head,
            Err(e) => self.error = Some(e),
        }
        Ok(record)
    }
}

impl Iterator for Stream {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if let Some(e) = self.error.take() {
            self.done = true;
            return Some(Err(e));
        }
        match self.take_next() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl FileCursor {
    /// The file's next request, reading on as far as it takes.
    fn pull(&mut self, plan: &Plan) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            if let Some(raw) = self.pending.pop_front() {
                return plan.record(&raw).map(Some);
            }
            if self.sink.past_end || !self.reader.step(&mut self.sink)? {
                return Ok(None);
            }
            if self.sink.saw_unsorted() {
                let what = "its arrivals are no longer in time order";
                return Err(changed(&self.sink.file, what));
            }
            self.pending.extend(self.sink.raw.drain(..));
        }
    }
}

/// The requests of the trace at `path`, which must be streamed, and its
/// replay (for tests of the readers).
#[cfg(test)]
pub(crate) fn streamed(
    path: &str,
    format: TraceFormat,
    options: &Options,
    capacity: u64,
) -> (Vec<TraceRecord>, Replay) {
    let replay = open_replay(path, format, options, Fit::Refuse, (capacity, 4096)).unwrap();
    assert!(replay.records.is_streamed());
    let records = replay.records.cursor().map(Result::unwrap).collect();
    (records, replay)
}

#[cfg(test)]
mod tests;
