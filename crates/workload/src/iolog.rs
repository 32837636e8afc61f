//! fio's iolog, the text that fio's `write_iolog` writes and its
//! `read_iolog` replays, read as fio 3.33 reads it (`iolog.c`,
//! `read_iolog`):
//!
//! ```text
//! fio version 2 iolog              fio version 3 iolog
//! /dev/sdb add                     28 /dev/sdb add
//! /dev/sdb open                    154 /dev/sdb open
//! /dev/sdb write 8192 4096         157 /dev/sdb write 8192 4096
//! /dev/sdb wait 500 0              411 /dev/sdb read 0 4096
//! /dev/sdb read 0 4096             24341 /dev/sdb close
//! /dev/sdb close
//! ```
//!
//! The first line names the version. A line is `FILE ACTION` (file actions
//! `add`, `open`, `close`: nothing is issued) or `FILE ACTION OFFSET
//! LENGTH` (`read`, `write`, `trim`; `sync` and `datasync`, a flush;
//! version 2's `wait`), offsets and lengths in bytes; version 3 puts a
//! timestamp in microseconds first on every line. Each file is a device
//! ([`crate::trace::Devices`]).
//!
//! Times, as fio replays them:
//! - version 3: each line that fio queues waits for its timestamp minus the
//!   one of the line before it (any line, even one fio then drops),
//!   `replay_time_scale` percent faster, truncated to whole microseconds;
//!   nothing when the line before was at 0 or later than this one. A
//!   request arrives at the sum of the waits of the lines up to it, so a
//!   line fio drops (a `wait`, a kind `replay_skip` names) takes its wait
//!   with it, as in fio.
//! - version 2: requests carry no time and go as fast as the I/O depth
//!   allows; `wait N` holds the next ones until N milliseconds after the
//!   start of the run (fio sleeps until `N` ms since its start, whatever
//!   its documentation says of microseconds since the last wait).
//! - `replay_no_stall`: no waits at all.
//!
//! The log's times count from the start of the run, as fio's do (they are
//! not shifted to the first request). What a `read_iolog` job does with
//! them, its I/O depth and the gaps, is the job's ([`crate::fio`]).
//!
//! Where fio 3.33 and its later iolog reader differ, this follows the
//! later one: 3.33 drops `trim` lines (it prints "bad ddir: 2") and
//! ignores `replay_skip`; later fio replays trims and drops what
//! `replay_skip` names, as here (a `read_iolog` job's notes say so).
//!
//! Lines fio skips with a complaint (too few fields, an unknown action) are
//! errors here, naming the line and the field; what fio drops on purpose is
//! counted in the notes: `wait` in version 3, the kinds `replay_skip` names.

use std::collections::BTreeMap;

use iosteer_sched::Op;

use crate::trace::{DeviceKey, LineFormat, LineParser, Place, Sink, TraceError};

/// fio's options that change what a replay reads (`replay_*`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IologOptions {
    /// `replay_no_stall`: no waits, as fast as the I/O depth allows.
    pub no_stall: bool,
    /// `replay_time_scale`: percent of the recorded rate (200: twice as
    /// fast), version 3 only; at least 1.
    pub time_scale: u32,
    /// `replay_skip`: the kinds dropped ([`Skip`]).
    pub skip: Skip,
    /// `replay_scale`: offsets divided by this (0 and 1: as they are).
    pub scale: u64,
    /// `replay_align`: offsets rounded down to this power of two (0: as
    /// they are).
    pub align: u64,
    /// `replay_redirect`: every file is one device.
    pub redirect: bool,
}

impl Default for IologOptions {
    fn default() -> IologOptions {
        IologOptions {
            no_stall: false,
            time_scale: 100,
            skip: Skip::default(),
            scale: 1,
            align: 0,
            redirect: false,
        }
    }
}

/// fio's `replay_skip` kinds: `read`, `write`, `trim`, `sync` (a `datasync`
/// line is never skipped, as in fio).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Skip {
    pub read: bool,
    pub write: bool,
    pub trim: bool,
    pub sync: bool,
}

impl Skip {
    pub const NAMES: &'static str = "read, write, trim, sync";

    /// fio's comma-separated list (`write,trim`; empty, nothing); the
    /// unknown word if one is.
    pub fn parse(list: &str) -> Result<Skip, String> {
        let mut skip = Skip::default();
        let list = list.trim();
        if list.is_empty() {
            return Ok(skip);
        }
        for word in list.split(',') {
            match word {
                "read" => skip.read = true,
                "write" => skip.write = true,
                "trim" => skip.trim = true,
                "sync" => skip.sync = true,
                other => return Err(other.to_string()),
            }
        }
        Ok(skip)
    }
}

const HEADER_V2: &str = "fio version 2 iolog";
const HEADER_V3: &str = "fio version 3 iolog";

/// The actions fio reads, for errors.
const ACTIONS: &str = "read, write, trim, sync, datasync, wait (version 2), add, open or close";

/// Whether `text` is an iolog's first line.
pub(crate) fn is_header(text: &str) -> bool {
    text.starts_with(HEADER_V2) || text.starts_with(HEADER_V3)
}

/// The version (2 or 3) of the iolog at `path`, from its first line.
pub fn version(path: &str) -> Result<u8, TraceError> {
    use std::io::{BufRead, Read};
    let mut first = String::new();
    crate::trace::open(path)?
        .content
        .take(crate::trace::MAX_LINE_BYTES as u64)
        .read_line(&mut first)
        .map_err(|e| crate::trace::io_error(path, &e))?;
    match first.trim_start_matches('\u{feff}').trim_end() {
        t if t.starts_with(HEADER_V2) => Ok(2),
        t if t.starts_with(HEADER_V3) => Ok(3),
        t => Err(not_an_iolog(path, 1, t)),
    }
}

fn not_an_iolog(file: &str, line: usize, text: &str) -> TraceError {
    let shown: String = text.chars().take(60).collect();
    TraceError::Line {
        file: file.to_string(),
        line,
        problem: format!("`{shown}` is not an iolog's first line"),
        expected: format!(
            "`{HEADER_V2}` or `{HEADER_V3}` (fio reads no other: its version 1 logs are no \
             longer read by fio either)"
        ),
    }
}

/// A file named in the log: added, and open or not.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum FileState {
    Closed,
    Open,
}

pub(crate) struct Iolog {
    options: IologOptions,
    version: Option<u8>,
    files: BTreeMap<String, FileState>,
    /// Version 3: the previous line's timestamp, microseconds (fio's
    /// `io_log_last_ttime`).
    last_ttime: u64,
    /// When the next request goes, microseconds since the run's start: the
    /// sum of the queued lines' waits (version 3), or the latest `wait`
    /// (version 2, milliseconds turned to microseconds).
    clock_us: u128,
}

impl Iolog {
    pub(crate) fn new(options: IologOptions) -> Iolog {
        Iolog {
            options,
            version: None,
            files: BTreeMap::new(),
            last_ttime: 0,
            clock_us: 0,
        }
    }

    /// fio's `delay_since_ttime`: the wait before a line at `ttime`.
    fn delay(&self, ttime: u64) -> u64 {
        let last = self.last_ttime;
        if last == 0 || self.options.no_stall || ttime < last {
            0
        } else if self.options.time_scale == 100 {
            ttime - last
        } else {
            let scale = 100.0 / f64::from(self.options.time_scale.max(1));
            ((ttime - last) as f64 * scale) as u64
        }
    }

    /// The device a line's file stands for (the one device of a redirect).
    fn device_name<'t>(&self, file: &'t str) -> &'t str {
        if self.options.redirect {
            "replay_redirect"
        } else {
            file
        }
    }

    fn file_action(
        &mut self,
        p: &LineParser,
        field: &str,
        file: &str,
        action: &str,
        sink: &mut Sink,
    ) -> Result<(), TraceError> {
        let name = self.device_name(file).to_string();
        match action {
            "add" => {
                self.files.entry(name).or_insert(FileState::Closed);
            }
            "open" | "close" => {
                let state = self
                    .files
                    .get_mut(&name)
                    .ok_or_else(|| p.bad(field, file, "a file added by an earlier `add` line"))?;
                *state = if action == "open" {
                    FileState::Open
                } else {
                    FileState::Closed
                };
            }
            other => {
                let field = field_after(field);
                return Err(p.bad(&field, other, "add, open or close (a line of two fields)"));
            }
        }
        sink.tally
            .add("file actions (add, open, close: nothing to issue)", 1);
        Ok(())
    }

    fn io_action(
        &mut self,
        p: &LineParser,
        names: [&str; 4],
        fields: [&str; 4],
        delay: u64,
        sink: &mut Sink,
    ) -> Result<(), TraceError> {
        let [file, action, offset, length] = fields;
        let skip = self.options.skip;
        let skipped = match action {
            "read" => skip.read,
            "write" => skip.write,
            "trim" => skip.trim,
            "sync" => skip.sync,
            _ => false,
        };
        if skipped {
            sink.tally
                .add("requests dropped by replay_skip, as fio drops them", 1);
            return Ok(());
        }
        let op = match action {
            "read" => Op::Read,
            "write" => Op::Write,
            "trim" => Op::Trim,
            "sync" | "datasync" => Op::Flush,
            "wait" if self.version == Some(2) => {
                let ms: u64 = p.number(names[2], offset, "milliseconds since the run's start")?;
                p.number::<u32>(names[3], length, "a length (unused by wait)")?;
                if self.options.no_stall {
                    sink.tally
                        .add("wait lines dropped (replay_no_stall), as fio drops them", 1);
                } else {
                    self.clock_us = self.clock_us.max(u128::from(ms) * 1000);
                    sink.tally.add(
                        "wait lines (the requests after one go no sooner than its milliseconds after the run's start)",
                        1,
                    );
                }
                return Ok(());
            }
            other => return Err(p.bad(names[1], other, ACTIONS)),
        };
        let raw_offset: u64 = p.number(names[2], offset, "a byte offset")?;
        // fio reads the length as a 32-bit count (sscanf's %u).
        let len: u32 = p.number(names[3], length, "a byte count below 2^32")?;
        let name = self.device_name(file);
        let Some(state) = self.files.get(name) else {
            return Err(p.bad(names[0], file, "a file added by an earlier `add` line"));
        };
        if *state != FileState::Open {
            sink.tally.add(
                "requests to a file added but not open at their line (replayed all the same)",
                1,
            );
        }
        let mut offset = raw_offset;
        if self.options.scale > 1 {
            offset /= self.options.scale;
        }
        if self.options.align > 0 {
            offset &= !(self.options.align - 1);
        }
        if op != Op::Flush && offset != raw_offset {
            sink.tally
                .add("offsets moved by replay_scale or replay_align", 1);
        }
        self.clock_us += u128::from(delay);
        let span = if op == Op::Flush {
            (0, 0)
        } else {
            (offset, u64::from(len))
        };
        sink.push(
            self.clock_us * 1000,
            op,
            DeviceKey::of(name),
            span,
            Place::Line(p.line),
        )
    }
}

/// "2 (action)" for the field after "1 (file name)" (the action of a file
/// line is the field after its file name in both versions).
fn field_after(file_field: &str) -> String {
    let n: usize = file_field
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    format!("{} (action)", n + 1)
}

impl LineFormat for Iolog {
    fn line(&mut self, p: &LineParser, text: &str, sink: &mut Sink) -> Result<(), TraceError> {
        let Some(version) = self.version else {
            if !is_header(text) {
                return Err(not_an_iolog(p.file, p.line, text));
            }
            self.version = Some(if text.starts_with(HEADER_V2) { 2 } else { 3 });
            sink.own_origin = true;
            return Ok(());
        };
        if version == 2 {
            let f = p.fields(text, None, (2, 4), sink)?;
            let found = f.iter().filter(|s| !s.is_empty()).count();
            if found == 2 {
                return self.file_action(p, "1 (file name)", f[0], f[1], sink);
            }
            if found == 3 {
                return Err(p.too_few(text, 4, 3));
            }
            let names = ["1 (file name)", "2 (action)", "3 (offset)", "4 (length)"];
            return self.io_action(p, names, [f[0], f[1], f[2], f[3]], 0, sink);
        }
        let f = p.fields(text, None, (3, 5), sink)?;
        let found = f.iter().filter(|s| !s.is_empty()).count();
        let ttime: u64 = p.number("1 (timestamp)", f[0], "microseconds since the log began")?;
        let delay = self.delay(ttime);
        if ttime < self.last_ttime {
            sink.tally.add(
                "lines of a version 3 log earlier than the line before, taken as no wait, as fio takes them",
                1,
            );
        }
        // fio takes the timestamp before it looks at the rest of the line.
        self.last_ttime = ttime;
        if f[2] == "wait" {
            sink.tally.add(
                "wait lines of a version 3 log ignored, as fio ignores them",
                1,
            );
            return Ok(());
        }
        match found {
            3 => {
                self.clock_us += u128::from(delay);
                self.file_action(p, "2 (file name)", f[1], f[2], sink)
            }
            4 => Err(p.too_few(text, 5, 4)),
            _ => {
                let names = ["2 (file name)", "3 (action)", "4 (offset)", "5 (length)"];
                self.io_action(p, names, [f[1], f[2], f[3], f[4]], delay, sink)
            }
        }
    }
}

#[cfg(test)]
mod tests;
