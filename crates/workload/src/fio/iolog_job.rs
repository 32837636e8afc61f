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
    "random_distribution",
    "percentage_random",
    "rw_sequencer",
    "fallocate",
];

/// A section's `read_iolog` and `replay_*` options as they are read.
#[derive(Default)]
pub(super) struct IologReader {
    path: Option<(String, usize)>,
    options: IologOptions,
    /// Every option of the section, canonical, as given, and its line.
    given: Vec<(String, String, usize)>,
}

/// A job that replays an iolog.
#[derive(Clone, Debug)]
pub(super) struct IologJob {
    path: String,
    line: usize,
    options: IologOptions,
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
                self.options.align = size_value(value)
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
        let Some((path, line)) = self.path else {
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
        let mut replaced = Vec::new();
        for (key, given, at) in &self.given {
            let key = key.as_str();
            if REPLAY.contains(&key) || MODELLED.contains(&key) || IGNORED.contains(&key) {
                continue;
            }
            if REPLACED.contains(&key) {
                if !replaced.contains(given) {
                    replaced.push(given.clone());
                }
                continue;
            }
            return Err((
                *at,
                format!(
                    "job [{job}]: option `{given}` with read_iolog: not modelled for a replay (fio \
                     applies it to the replayed requests, or ends the replay by it, in ways iosteer \
                     does not reproduce); a replay takes {}, and accepts {} (the log's requests \
                     replace their I/O, as in fio)",
                    [REPLAY, MODELLED].concat().join(", "),
                    REPLACED.join(", ")
                ),
            ));
        }
        Ok(Some(IologJob {
            path,
            line,
            options: self.options,
            replaced,
        }))
    }
}

impl IologJob {
    /// The replay's requests on a drive of `capacity` bytes, paced at
    /// `iodepth`; `file` is the job file (for errors and the hint of a log
    /// beside it).
    pub(super) fn kind(
        &self,
        job: &str,
        iodepth: u32,
        (file, capacity): (&str, u64),
        notes: &mut Vec<String>,
    ) -> Result<(JobKind, IologPacing), FioError> {
        let err = |message: String| FioError {
            file: file.to_string(),
            line: self.line,
            message: format!("job [{job}]: read_iolog={}: {message}", self.path),
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
        notes.extend(
            replay
                .notes
                .iter()
                .map(|n| format!("job {job}: read_iolog {path}: {n}")),
        );
        Ok((
            JobKind::Trace(replay.records),
            IologPacing {
                iodepth,
                waits_from_previous: version == 3 && !self.options.no_stall,
            },
        ))
    }
}
