//! fio's `read_iolog=FILE`: the job replays an iolog ([`crate::iolog`])
//! as fio 3.33 does, in place of the I/O its other options describe.
//!
//! - The log is opened as fio opens it: a relative name from the current
//!   directory, not beside the job file (fio 3.33 run from elsewhere:
//!   "fopen read iolog: No such file or directory").
//! - Its requests replace what `rw`, `bs`, `size`, `offset` and `filename`
//!   would draw (fio 3.33 with `rw=write bs=64k size=1m offset=2m
//!   filename=other` and a log of 4 KiB random reads and writes replays the
//!   log's 300 requests in order, and never creates `other`); those
//!   options are accepted with a note.
//! - At most `iodepth` requests are out; a version 3 log's waits count
//!   from the request before, a version 2 log's `wait` from the run's
//!   start ([`IologPacing`]); `replay_no_stall=1` waits for nothing.
//! - Each file the log names is a range of the drive of its own, as fio
//!   replays each to its own file; with `replay_redirect` they overlap on
//!   the one device, as fio sends them all to the one it names.
//! - `replay_time_scale`, `replay_scale`, `replay_align` change what is
//!   read, as in fio 3.33; `read_iolog_chunked` only how fio reads
//!   (accepted).
//! - Two things fio 3.33 does that later fio does not, and where this
//!   follows later fio, with a note: 3.33 drops an iolog's `trim` lines
//!   (it prints "bad ddir: 2"), and ignores `replay_skip` for an iolog;
//!   here trims are replayed and `replay_skip` drops its kinds, as in fio's
//!   iolog reader since.
//!
//! Options that would change a replay in ways not reproduced here (rates,
//! think time, flushes, loops, `numjobs` copies, time-based runs, a
//! latency target, flows...) are refused by name.

use super::*;
use crate::iolog::{IologOptions, Skip};
use crate::job_shape::IologPacing;
use crate::trace::{self, Devices, Fit, TraceFormat};
use crate::workload::JobKind;

/// Options a replay takes with the meaning they have for one, besides
/// its own ([`REPLAY`]).
const MODELLED: &[&str] = &[
    "iodepth",
    "startdelay",
    "runtime",
    "ramp_time",
    "stonewall",
    "wait_for",
    "name",
    "ioengine",
    "direct",
    "buffered",
    "exitall",
    "randrepeat",
    "randseed",
    "kb_base",
    "sync",
    "zonemode",
    "do_verify",
    "cmdprio_percentage",
    "cmdprio_class",
    "cmdprio",
    "cmdprio_bssplit",
];

/// Options whose I/O the log's requests replace, as in fio.
const REPLACED: &[&str] = &[
    "rw",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "bsrange",
    "bssplit",
    "size",
    "filesize",
    "offset",
    "filename",
    "nrfiles",
    "directory",
    "file_service_type",
    "blockalign",
    "norandommap",
    "random_generator",
    "filename_format",
    "random_distribution",
    "percentage_random",
    "rw_sequencer",
    "fallocate",
];

/// `value` parsed by `parse`, or the `names` it accepts (for the error).
fn one_of<T>(
    value: &str,
    parse: fn(&str) -> Option<T>,
    names: &'static str,
) -> Result<T, &'static str> {
    parse(value).ok_or(names)
}

/// A section's `read_iolog` and `replay_*` options as they are read.
#[derive(Default)]
pub(super) struct IologReader {
    path: Option<(String, usize)>,
    options: IologOptions,
    /// `replay_redirect`'s device.
    redirect: Option<String>,
    /// `iosteer_trace` and its options: the file replays open loop.
    trace: Option<(String, usize)>,
    source: TraceSource,
    /// Every option of the section, canonical, as given, and its line.
    given: Vec<(String, String, usize)>,
}

/// How an `iosteer_trace` is read: the trace options of `iosteer sim`.
#[derive(Clone, Copy, Debug)]
struct TraceSource {
    format: TraceFormat,
    unit: trace::TimeUnit,
    window: Option<trace::Window>,
    fit: Fit,
    devices: Devices,
    event: trace::Event,
    speed: f64,
}

impl Default for TraceSource {
    fn default() -> Self {
        TraceSource {
            format: TraceFormat::Ascii,
            unit: trace::TimeUnit::Ns,
            window: None,
            fit: Fit::Refuse,
            devices: Devices::Merge,
            event: trace::Event::Queue,
            speed: 1.0,
        }
    }
}

/// A job that replays an iolog (`read_iolog`, paced as fio paces it) or a
/// trace (`iosteer_trace`, open loop).
#[derive(Clone, Debug)]
pub(super) struct IologJob {
    path: String,
    line: usize,
    /// `Some`: an `iosteer_trace`.
    trace: Option<TraceSource>,
    options: IologOptions,
    /// `replay_redirect`'s device.
    redirect: Option<String>,
    /// Options accepted whose I/O the log replaces.
    replaced: Vec<String>,
}

impl IologReader {
    /// Reads `key` if it is one of `read_iolog` and the `replay_*` options
    /// (`Ok(false)` if not); remembers every option for [`Self::finish`].
    pub(super) fn option(&mut self, setting: &Setting) -> Result<bool, String> {
        let Setting { key, value, .. } = *setting;
        let given = (key.to_string(), setting.given.to_string(), setting.line);
        self.given.push(given);
        let bad = |expected: &str| setting.bad(expected);
        match key {
            "read_iolog" => {
                if value.is_empty() {
                    return Err(bad("an iolog file"));
                }
                if value == "-" {
                    return Err(bad(
                        "a file (`-`, standard input, is not read: a replay reads its log more than once)",
                    ));
                }
                if value.replace("\\:", "").contains(':') {
                    return Err(bad(
                        "one file (fio's `:` list, a log for each numjobs copy, is not supported)",
                    ));
                }
                self.path = Some((value.replace("\\:", ":"), setting.line));
            }
            "read_iolog_chunked" => {
                boolean(value).ok_or_else(|| bad("0 or 1"))?;
            }
            "replay_no_stall" => {
                self.options.no_stall = boolean(value).ok_or_else(|| bad("0 or 1"))?
            }
            "replay_time_scale" => {
                self.options.time_scale =
                    value.parse().ok().filter(|p| *p >= 1).ok_or_else(|| {
                        bad("a percentage of the recorded rate, 1 or more (100: as recorded)")
                    })?
            }
            "replay_skip" => {
                self.options.skip = Skip::parse(value).map_err(|word| {
                    format!(
                        "option `{}={value}`: `{word}`: expected a comma-separated list of {}",
                        setting.given,
                        Skip::NAMES
                    )
                })?
            }
            "replay_align" => {
                self.options.align = size_in(value, setting.kb_base)
                    .filter(|a| *a == 0 || a.is_power_of_two())
                    .ok_or_else(|| bad("a power of two (fio masks offsets with it), or 0"))?
            }
            "replay_scale" => {
                self.options.scale = value
                    .parse()
                    .map_err(|_| bad("a whole number offsets are divided by (1: as they are)"))?
            }
            "replay_redirect" => {
                if value.is_empty() {
                    return Err(bad("a device"));
                }
                self.options.redirect = true;
                self.redirect = Some(value.to_string());
            }
            "iosteer_trace" if value.is_empty() => return Err(bad("a trace file")),
            "iosteer_trace" => self.trace = Some((value.to_string(), setting.line)),
            "iosteer_trace_format" => {
                self.source.format =
                    one_of(value, TraceFormat::parse, TraceFormat::NAMES).map_err(bad)?
            }
            "iosteer_trace_unit" => {
                self.source.unit =
                    one_of(value, trace::TimeUnit::parse, trace::TimeUnit::NAMES).map_err(bad)?
            }
            "iosteer_trace_window" => {
                let window = trace::Window::parse(value).map_err(|e| bad(&e.to_string()))?;
                self.source.window = Some(window);
            }
            "iosteer_trace_fit" => {
                self.source.fit = one_of(value, Fit::parse, Fit::NAMES).map_err(bad)?
            }
            "iosteer_trace_devices" => {
                self.source.devices = one_of(value, Devices::parse, Devices::NAMES).map_err(bad)?
            }
            "iosteer_trace_event" => {
                self.source.event =
                    one_of(value, trace::Event::parse, trace::Event::NAMES).map_err(bad)?
            }
            "iosteer_trace_speed" => {
                self.source.speed = (value.parse::<f64>().ok())
                    .filter(|s| s.is_finite() && *s > 0.0)
                    .ok_or_else(|| bad("a positive replay speed (2: twice as fast)"))?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The job's replay, if it has `read_iolog`; an option it does not go
    /// with is an error at its line. A `replay_*` option without
    /// `read_iolog` is noted (fio ignores it).
    pub(super) fn finish(
        self,
        job: &str,
        notes: &mut Vec<String>,
    ) -> Result<Option<IologJob>, (usize, String)> {
        if let (Some((_, line)), Some(_)) = (&self.trace, &self.path) {
            let both = format!("job [{job}]: iosteer_trace and read_iolog: give one replay");
            return Err((*line, both));
        }
        if let Some((path, line)) = self.trace.clone() {
            return self.finish_trace(job, path, line);
        }
        if let Some((_, given, at)) =
            (self.given.iter()).find(|(k, _, _)| k.starts_with("iosteer_trace_"))
        {
            let alone = format!("job [{job}]: `{given}` without iosteer_trace: name the trace");
            return Err((*at, alone));
        }
        let Some((path, line)) = self.path.clone() else {
            if let Some((_, given, _)) = self
                .given
                .iter()
                .find(|(k, _, _)| k.starts_with("replay_") || k == "read_iolog_chunked")
            {
                notes.push(format!(
                    "job {job}: `{given}` without read_iolog changes nothing, as in fio"
                ));
            }
            return Ok(None);
        };
        let replaced = self.replaced(job, "read_iolog", REPLAY)?;
        Ok(Some(IologJob {
            path,
            line,
            trace: None,
            options: self.options,
            redirect: self.redirect,
            replaced,
        }))
    }

    /// The options given that the requests of a replay (by `option`, which
    /// takes `own` besides [`MODELLED`] and the ignored ones) replace:
    /// `rw`, `bs`... as written; any other is an error at its line.
    fn replaced(
        &self,
        job: &str,
        option: &str,
        own: &[&str],
    ) -> Result<Vec<String>, (usize, String)> {
        let mut replaced: Vec<String> = Vec::new();
        for (key, given, at) in &self.given {
            let key = key.as_str();
            if own.contains(&key) || MODELLED.contains(&key) || IGNORED.contains(&key) {
                continue;
            }
            if !REPLACED.contains(&key) {
                let refused = format!(
                    "job [{job}]: option `{given}` with {option}: not modelled for a replay (fio \
                     applies it to replayed requests, or ends a replay by it, in ways iosteer does \
                     not reproduce); a replay by {option} takes {}, and accepts {} (its requests \
                     replace their I/O, as in fio)",
                    [own, MODELLED].concat().join(", "),
                    REPLACED.join(", ")
                );
                return Err((*at, refused));
            }
            if !replaced.contains(given) {
                replaced.push(given.clone());
            }
        }
        Ok(replaced)
    }

    /// An `iosteer_trace` job: the options of a read_iolog replay, less
    /// fio's `replay_*` (they belong to iologs).
    fn finish_trace(
        self,
        job: &str,
        path: String,
        line: usize,
    ) -> Result<Option<IologJob>, (usize, String)> {
        // `offset` and `size` are the region the trace is fitted to;
        // `filename` and `directory` name the file `iosteer run` replays
        // it on.
        let own = [TRACE, &["offset", "size", "filename", "directory"]].concat();
        let replaced = self.replaced(job, "iosteer_trace", &own)?;
        let format = self.source.format;
        if self.source.event != trace::Event::Queue && !format.has_events() {
            let one = format!("job [{job}]: iosteer_trace_event: {format} traces have one event a request; blkparse, blktrace and ftrace have two");
            return Err((line, one));
        }
        Ok(Some(IologJob {
            path,
            line,
            trace: Some(self.source),
            options: self.options,
            redirect: None,
            replaced,
        }))
    }
}

impl IologJob {
    /// An `iosteer_trace` job (its `size`, if given, is its region), not
    /// fio's `read_iolog`.
    pub(super) fn is_trace(&self) -> bool {
        self.trace.is_some()
    }

    /// The files a replay's I/O goes to, as fio opens them: those the log
    /// names (in the order of [`TraceRecords::devices`]), or
    /// `replay_redirect`'s one device; none for an `iosteer_trace`, whose
    /// I/O goes to the job's own file (the first it names, else the
    /// target's).
    ///
    /// [`TraceRecords::devices`]: crate::trace::TraceRecords::devices
    pub(super) fn files(&self, kind: &JobKind) -> Vec<String> {
        match (&self.trace, &self.redirect, kind) {
            (Some(_), _, _) => Vec::new(),
            (None, Some(device), _) => vec![device.clone()],
            (None, None, JobKind::Trace(records)) => {
                records.devices().iter().map(|d| d.name.clone()).collect()
            }
            (None, None, JobKind::Synthetic(_)) => Vec::new(),
        }
    }

    /// The replay's requests on a drive of `capacity` bytes, paced at
    /// `iodepth`; `file` is the job file (for errors and the hint of a log
    /// beside it).
    pub(super) fn kind(
        &self,
        job: &str,
        iodepth: u32,
        (file, capacity): (&str, u64),
        notes: &mut Vec<String>,
    ) -> Result<(JobKind, Option<IologPacing>), FioError> {
        let option = match self.trace {
            Some(_) => "iosteer_trace",
            None => "read_iolog",
        };
        let err = |message: String| FioError {
            file: file.to_string(),
            line: self.line,
            message: format!("job [{job}]: {option}={}: {message}", self.path),
        };
        let path = self.path.as_str();
        if !std::path::Path::new(path).exists() {
            let beside = std::path::Path::new(file)
                .parent()
                .map(|dir| dir.join(path))
                .filter(|p| p.exists() && !std::path::Path::new(path).is_absolute());
            return Err(err(match beside {
                Some(b) => format!(
                    "no such file from the current directory, where fio opens it too (not beside \
                     the job file); {} is there: run from that directory, or give its path",
                    b.display()
                ),
                None => "no such file (fio opens a relative name from the current directory)"
                    .to_string(),
            }));
        }
        if let Some(source) = self.trace {
            let kind = self.trace_kind(job, source, capacity, notes).map_err(err)?;
            return Ok((kind, None));
        }
        if crate::blktrace::is_blktrace(path) {
            return Err(err(format!(
                "a blktrace binary file: fio 3.33 replays it as read_iolog; here it replays as \
                 iosteer_trace={path} with iosteer_trace_format=blktrace (open loop, by its \
                 queue or issue events)"
            )));
        }
        let version = crate::iolog::version(path).map_err(|e| err(e.to_string()))?;
        let options = trace::Options {
            devices: if self.options.redirect {
                Devices::Merge
            } else {
                Devices::Separate
            },
            iolog: self.options,
            ..trace::Options::default()
        };
        let replay = trace::open_replay(
            path,
            TraceFormat::Iolog,
            &options,
            Fit::Refuse,
            (capacity, 4096),
        )
        .map_err(|e| err(e.to_string()))?;
        let summary = replay.records.summary();
        let pacing = if self.options.no_stall {
            "replay_no_stall=1: no waits"
        } else if version == 3 {
            "each request waits its gap in the log after the one before it is issued"
        } else {
            "requests go at once, a wait line holding the next ones until its time since the run's start"
        };
        notes.push(format!(
            "job {job}: read_iolog={path}: a version {version} iolog of {} requests, replayed as fio \
             replays it: at most iodepth={iodepth} out, {pacing}{}",
            summary.requests,
            if self.options.redirect {
                "; replay_redirect: the log's files overlap on one device"
            } else {
                "; each file the log names in a range of the drive of its own"
            }
        ));
        if summary.has(iosteer_sched::Op::Trim) {
            notes.push(format!(
                "job {job}: read_iolog={path}: its trims are replayed, as fio's later iolog reader does; fio \
                 3.33 drops an iolog's trim lines (\"bad ddir: 2\") and replays the rest"
            ));
        }
        if self.options.skip != Skip::default() {
            notes.push(format!(
                "job {job}: replay_skip drops those lines, as fio's later iolog reader does; fio 3.33 \
                 ignores replay_skip for an iolog (it skips only in blktrace replays)"
            ));
        }
        if !self.replaced.is_empty() {
            notes.push(format!(
                "job {job}: {} accepted: the iolog's requests replace their I/O, as in fio",
                self.replaced.join(", ")
            ));
        }
        // The note above says the log's files lie apart; the replay's note
        // on where each starts on the drive is left out, since `iosteer
        // run` replays each onto its own file.
        let layout = trace::layout_note(replay.records.devices());
        notes.extend(
            (replay.notes.iter())
                .filter(|n| **n != layout)
                .map(|n| format!("job {job}: read_iolog {path}: {n}")),
        );
        Ok((
            JobKind::Trace(replay.records),
            Some(IologPacing {
                iodepth,
                waits_from_previous: version == 3 && !self.options.no_stall,
            }),
        ))
    }

    /// An `iosteer_trace`'s requests on a drive of `capacity` bytes,
    /// replayed open loop as `iosteer sim --trace` replays a trace.
    fn trace_kind(
        &self,
        job: &str,
        source: TraceSource,
        capacity: u64,
        notes: &mut Vec<String>,
    ) -> Result<JobKind, String> {
        let path = self.path.as_str();
        let options = trace::Options {
            unit: source.unit,
            speed: source.speed,
            devices: source.devices,
            event: source.event,
            window: source.window,
            ..trace::Options::default()
        };
        let drive = (capacity, 4096);
        let replay =
            trace::open_replay(path, source.format, &options, source.fit, drive).map_err(|e| {
                match e {
                    trace::TraceError::TooLarge { needed, .. } => format!(
                        "{path} addresses {}, more than the job's region holds ({}: from its \
                     offset, its size long or to the drive's end); iosteer_trace_fit=wrap or \
                     scale remaps it",
                        trace::exact_size(needed),
                        trace::exact_size(capacity)
                    ),
                    other => other.to_string(),
                }
            })?;
        notes.push(format!(
            "job {job}: iosteer_trace={path}: {} requests of the {} trace, replayed open loop (each \
             request at its arrival, as `iosteer sim --trace` replays one; iodepth does not bound it)",
            replay.records.summary().requests,
            source.format,
        ));
        if let Some(remap) = replay.remap {
            notes.push(format!(
                "job {job}: iosteer_trace={path}: addresses remapped to fit (iosteer_trace_fit={}): {remap}",
                source.fit
            ));
        }
        if !self.replaced.is_empty() {
            notes.push(format!(
                "job {job}: {} accepted: the trace's requests replace their I/O",
                self.replaced.join(", ")
            ));
        }
        notes
            .extend((replay.notes.iter()).map(|n| format!("job {job}: iosteer_trace {path}: {n}")));
        Ok(JobKind::Trace(replay.records))
    }
}
