//! blkparse's default text output, as `blkparse -i DEV` or
//! `blktrace -d DEV -o - | blkparse -i -` print it:
//!
//! ```text
//!   8,0    3        1     0.000000000   697  Q  WS 223490 + 8 [kjournald]
//! ```
//!
//! device (major,minor), CPU, sequence, seconds, pid, action, RWBS, then what
//! the action prints: `sector + count [process]` for most, `[process]` for
//! a request of no data, `[error]` after a completion, `sector + count <-
//! (maj,min) sector` for a remap (A), `sector / sector [process]` for a split
//! (X), a text for a message (m). Sectors are 512 bytes.
//!
//! One action is a request's arrival ([`Event`]: `Q` or `D`); the others,
//! and the summary blkparse prints at the end (per process with `-s`, each
//! block under the process's name, `cat (2311)`; per CPU; in total), are
//! skipped and counted. RWBS: an optional `F` (a flush before the request), one of
//! `R` read, `W` write, `D` discard (a trim), `F` flush, `N` no data, then
//! any of `F` (FUA), `A` (readahead), `S` (sync), `M` (metadata), `E`
//! (secure erase). A flush becomes a flush request; a write with a flush
//! before it, a flush then the write; `N`, nothing (counted). A passthrough
//! command (a byte count where the sector would be: `D R 512 [smartctl]`)
//! is skipped and counted; with `issue` as the arrival, a requeue (`R`) is
//! counted in a note of its own, as its request is issued again.
//! A trace of a stacked device (dm, LVM, md) and the device below it holds
//! each bio queued twice, a remap (`A`) between: noted (see `Stacked`).

use iosteer_sched::Op;

use crate::trace::{DeviceKey, Event, LineFormat, LineParser, Place, Sink, TraceError};

/// blkparse's action letters.
const ACTIONS: [&str; 17] = [
    "A", "B", "C", "D", "F", "G", "I", "M", "P", "Q", "R", "S", "T", "U", "UT", "X", "m",
];

pub(crate) struct Blkparse {
    event: Event,
    /// Inside the summary blkparse prints after the events.
    summary: bool,
    /// The error of a line that is no event, held for one line: it may be
    /// the name of a process opening `blkparse -s`'s summary of it (`cat
    /// (2311)`), which the block's first line, `Reads Queued:`, confirms.
    held: Option<TraceError>,
    stacked: Stacked,
}

impl Blkparse {
    pub(crate) fn new(event: Event) -> Blkparse {
        Blkparse {
            event,
            summary: false,
            held: None,
            stacked: Stacked::default(),
        }
    }

    fn arrival_action(&self) -> &'static str {
        match self.event {
            Event::Queue => "Q",
            Event::Issue => "D",
        }
    }
}

/// `8,0`: a major,minor device number.
fn is_device(token: &str) -> bool {
    token.split_once(',').is_some_and(|(major, minor)| {
        [major, minor]
            .iter()
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// The first line of a summary block: `CPU0 (8,0):`, `Total (8,0):`, or
/// the lines after it when blkparse was asked for totals only, or its last
/// line when the trace held driver data.
fn starts_summary(text: &str) -> bool {
    let first = text.split_whitespace().next().unwrap_or("");
    (first.starts_with("CPU") || first == "Total") && text.ends_with("):")
        || ["Throughput", "Events", "Skips"].contains(&first)
        || text.starts_with("discarded traces containing low-level device driver")
}

/// The note on the summary, which is skipped.
const SUMMARY: &str = "lines of blkparse's closing summary skipped (per process with -s, per \
     CPU, in total)";

/// The first line of a block of blkparse's summary after its name: every
/// block of `-s` (per process), per CPU and in total starts so.
const BLOCK_START: &str = "Reads Queued:";

impl LineFormat for Blkparse {
    fn line(&mut self, p: &LineParser, text: &str, sink: &mut Sink) -> Result<(), TraceError> {
        if let Some(held) = self.held.take() {
            if !text.starts_with(BLOCK_START) {
                return Err(held);
            }
            // The line held named a process: `-s`'s summary begins there.
            self.summary = true;
            sink.tally.add(SUMMARY, 2);
            return Ok(());
        }
        let tokens: Vec<&str> = text.split_whitespace().collect();
        if !is_device(tokens[0]) {
            self.summary |= starts_summary(text);
            if self.summary {
                sink.tally.add(SUMMARY, 1);
                return Ok(());
            }
            self.held = Some(p.bad("1 (device)", tokens[0], "major,minor such as 8,0"));
            return Ok(());
        }
        self.summary = false;
        if tokens.len() < 7 {
            return Err(p.too_few(text, 7, tokens.len()));
        }
        let at = header(p, &tokens)?;
        let action = tokens[5];
        if action != self.arrival_action() {
            if !ACTIONS.contains(&action) {
                return Err(p.bad("6 (action)", action, &ACTIONS.join(", ")));
            }
            if action == "A" {
                self.stacked.remapped(&tokens[7..], sink);
            }
            skip(sink, action);
            return Ok(());
        }
        let rwbs = rwbs(p, "7 (RWBS)", tokens[6])?;
        if is_passthrough(&tokens[7..]) {
            sink.tally.add(PASSTHROUGH, 1);
            return Ok(());
        }
        let bytes = span(p, &tokens[7..])?;
        self.stacked.replays(tokens[0]);
        let device = DeviceKey::Name(tokens[0].to_string());
        push_request(sink, rwbs, (at, device, bytes), Place::Line(p.line))
    }

    fn end(&mut self) -> Result<(), TraceError> {
        self.held.take().map_or(Ok(()), Err)
    }
}

/// Checks the CPU, sequence and pid fields; returns the time.
fn header(p: &LineParser, tokens: &[&str]) -> Result<u128, TraceError> {
    p.number::<u32>("2 (cpu)", tokens[1], "a CPU number")?;
    p.number::<u64>("3 (sequence)", tokens[2], "a sequence number")?;
    p.number::<u32>("5 (pid)", tokens[4], "a process id")?;
    p.seconds("4 (time)", tokens[3])
}

/// Counts a skipped event; a requeue under `--trace-event issue` also in
/// a note of its own, since the request it put back is issued (and
/// replayed) again.
pub(crate) fn skip(sink: &mut Sink, action: &str) {
    sink.tally.skip(action);
    if action == "R" && sink.event == Event::Issue {
        sink.tally.add(
            "requests requeued (R) after an issue: each issue (D) is replayed, so each of \
             these twice or more",
            1,
        );
    }
}

/// The note on passthrough commands, which are skipped.
pub(crate) const PASSTHROUGH: &str = "passthrough commands skipped (SCSI or NVMe commands \
     sent around the block layer, such as SMART queries: no block address to replay)";

/// Whether an event's request is a passthrough command: blkparse prints
/// its byte count, then its command bytes in parentheses or the process
/// (`512 [smartctl]`, `0 (12 00 00 00 24 00) [sg_inq]`), not a sector.
fn is_passthrough(rest: &[&str]) -> bool {
    match rest {
        [bytes, next, ..] => {
            bytes.bytes().all(|b| b.is_ascii_digit())
                && (next.starts_with('[') || next.starts_with('('))
        }
        _ => false,
    }
}

/// `sector + count [process]` or `[process]` (no data; `(elapsed)
/// [process]` with `blkparse -t`): offset and length in bytes.
fn span(p: &LineParser, rest: &[&str]) -> Result<(u64, u64), TraceError> {
    match rest {
        [first, ..] if first.starts_with('[') || first.starts_with('(') => Ok((0, 0)),
        [sector, "+", count, ..] => Ok((
            p.sectors("8 (sector)", sector, "a sector number")?,
            p.sectors("10 (count)", count, "a sector count")?,
        )),
        _ => Err(p.bad(
            "8 (request)",
            &rest.join(" "),
            "`sector + count [process]` or `[process]`",
        )),
    }
}

/// Devices whose requests the trace replays, to tell a stacked device's
/// remaps: the kernel queues a bio on the stacked device (dm, LVM, md),
/// remaps it (`A`, `block_bio_remap`: `sector + count <- (maj,min)
/// sector`) and queues it again on the device below, so a trace of both
/// holds the request twice. Which queue event is the copy cannot be told
/// safely from the text (remaps name partitions or whole disks by kernel
/// version, dm splits bios, request-based dm remaps requests), so both are
/// replayed and a note counts the remaps that say so.
#[derive(Default)]
pub(crate) struct Stacked {
    /// Devices with a request replayed (few: a trace's devices).
    replayed: Vec<String>,
}

/// The note on remaps from a device whose requests are replayed.
const STACKED_TWICE: &str = "remaps from a device whose own requests are replayed (a stacked \
     device: dm, LVM, md): the device below queued each such request again, and both are \
     replayed; keep one device's events (blktrace -d, or an ftrace filter on dev), or take \
     --trace-event issue";

impl Stacked {
    /// Counts a remap event (`fields` after RWBS) from a replayed device.
    pub(crate) fn remapped(&self, fields: &[&str], sink: &mut Sink) {
        if let [_, "+", _, "<-", from, ..] = fields {
            let from = from.trim_start_matches('(').trim_end_matches(')');
            if self.replayed.iter().any(|d| d == from) {
                sink.tally.add(STACKED_TWICE, 1);
            }
        }
    }

    /// Remembers that a request of `device` is replayed.
    pub(crate) fn replays(&mut self, device: &str) {
        if !self.replayed.iter().any(|d| d == device) {
            self.replayed.push(device.to_string());
        }
    }
}

/// A decoded RWBS field.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rwbs {
    /// A flush of the drive's cache before the request (REQ_PREFLUSH).
    pub(crate) preflush: bool,
    /// The operation; `None` for `N` (no data).
    pub(crate) op: Option<Op>,
    /// Force unit access: the write itself is durable.
    pub(crate) fua: bool,
}

const RWBS_EXPECTED: &str = "RWBS letters: an optional F (flush before), one of R, W, D \
     (discard), F (flush), N (none), then any of F (FUA), A, S, M, E, U (atomic), P (polled), \
     B (barrier, before 2.6.37)";

/// Decodes RWBS as the kernel's `blk_fill_rwbs` writes it.
pub(crate) fn rwbs(p: &LineParser, field: &str, value: &str) -> Result<Rwbs, TraceError> {
    let bad = || p.bad(field, value, RWBS_EXPECTED);
    let letters = value.as_bytes();
    let preflush = letters.first() == Some(&b'F');
    let rest = &letters[usize::from(preflush)..];
    let (op, flags) = match rest.first() {
        Some(b'R') => (Some(Op::Read), &rest[1..]),
        Some(b'W') => (Some(Op::Write), &rest[1..]),
        Some(b'D') => (Some(Op::Trim), &rest[1..]),
        Some(b'F') => (Some(Op::Flush), &rest[1..]),
        Some(b'N') => (None, &rest[1..]),
        // `F` or `FS`: a flush with no direction, as older kernels print it.
        _ if preflush => (Some(Op::Flush), rest),
        _ => return Err(bad()),
    };
    let mut fua = false;
    for &c in flags {
        match c {
            b'F' => fua = true,
            // Read-ahead, sync, metadata, secure erase, atomic (6.x),
            // polled, and the old barrier: none changes what the drive does.
            b'A' | b'S' | b'M' | b'E' | b'U' | b'P' | b'B' => {}
            _ => return Err(bad()),
        }
    }
    Ok(Rwbs { preflush, op, fua })
}

/// Pushes the requests one arrival stands for: a flush before the data when
/// there is one, then the data (a preflush with no data is the flush).
pub(crate) fn push_request(
    sink: &mut Sink,
    rwbs: Rwbs,
    what: (u128, DeviceKey, (u64, u64)),
    place: Place,
) -> Result<(), TraceError> {
    let (at, device, span) = what;
    let data = span.1 > 0 && matches!(rwbs.op, Some(Op::Read | Op::Write | Op::Trim));
    if rwbs.preflush || rwbs.op == Some(Op::Flush) {
        sink.push(at, Op::Flush, device.clone(), (0, 0), place)?;
        if !data {
            return Ok(());
        }
        sink.tally.add(
            "requests with a flush before them: a flush, then the request",
            1,
        );
    }
    let Some(op) = rwbs.op else {
        sink.tally
            .add("requests with no data direction (RWBS N) skipped", 1);
        return Ok(());
    };
    let fua = rwbs.fua && op == Op::Write;
    if fua {
        sink.tally.add("FUA writes, replayed FUA", 1);
    }
    sink.push_marked(at, (op, fua), device, span, place)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::trace::{read, read_path, Options, Trace, TraceFormat};
    use crate::workload::TraceRecord;

    const SAMPLE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../traces/blkparse-sample.txt"
    );

    /// `text` read as a trace of `format` with `event` as the arrival.
    pub(crate) fn read_event(
        text: &str,
        file: &str,
        format: TraceFormat,
        event: Event,
    ) -> Result<Trace, TraceError> {
        let options = Options {
            event,
            ..Options::default()
        };
        read(text.as_bytes(), file, format, &options)
    }

    /// Checks that each bad line of `cases`, read by `parse` as the second
    /// line after `good`, is refused with a message starting as its pair says
    /// (the file and line first).
    pub(crate) fn assert_second_lines_refused(
        parse: fn(&str, Event) -> Result<Trace, TraceError>,
        good: &str,
        cases: &[(&str, &str)],
    ) {
        for (bad, expected) in cases {
            let err = parse(&format!("{good}{bad}\n"), Event::Queue).unwrap_err();
            assert!(err.to_string().starts_with(expected), "{err}");
        }
    }

    fn blkparse(text: &str, event: Event) -> Result<Trace, TraceError> {
        read_event(text, "b.txt", TraceFormat::Blkparse, event)
    }

    /// Requests by op: read, write, trim, flush.
    pub(crate) fn by_op(records: &[TraceRecord]) -> [usize; 4] {
        Op::ALL.map(|op| records.iter().filter(|r| r.op == op).count())
    }

    fn note<'a>(trace: &'a Trace, start: &str) -> &'a str {
        let found = trace.notes.iter().find(|n| n.contains(start));
        found.unwrap_or_else(|| panic!("no note with `{start}` in {:?}", trace.notes))
    }

    /// LVM on a partition of sda: each bio is queued on dm-1 (253,1),
    /// remapped to sda (8,0) and queued there; a partition's remap alone
    /// (its one queue event on the disk) is no copy.
    #[test]
    fn a_stacked_devices_remaps_are_noted() {
        let text = "\
253,1 0 1 0.000001000 7 Q R 1000 + 8 [app]
  8,0 0 2 0.000001100 7 A R 3000 + 8 <- (253,1) 1000
  8,0 0 3 0.000001200 7 A R 5000 + 8 <- (8,3) 3000
  8,0 0 4 0.000001300 7 Q R 5000 + 8 [app]
  8,0 0 5 0.000003000 7 A R 7000 + 8 <- (8,1) 100
  8,0 0 6 0.000003100 7 Q R 7000 + 8 [part]
";
        let t = blkparse(text, Event::Queue).unwrap();
        assert_eq!(t.records.len(), 3, "each queue event replayed");
        let noted = |n: &String| n.starts_with("1 remaps from a device whose own requests");
        assert!(t.notes.iter().any(noted), "{:?}", t.notes);
        let partition = blkparse(
            &text
                .lines()
                .skip(4)
                .map(|l| format!("{l}\n"))
                .collect::<String>(),
            Event::Queue,
        );
        assert!(!partition
            .unwrap()
            .notes
            .iter()
            .any(|n| n.contains("remaps from")));
    }

    #[test]
    fn the_blkparse_sample_with_every_event_kind_gives_requests_by_op_and_counts_the_rest() {
        let queue = read_path(SAMPLE, TraceFormat::Blkparse, &Options::default()).unwrap();
        // Q: three writes, a preflush, a readahead, a read, a metadata read,
        // a discard, a FUA write, a preflush+FUA write (a flush, then the
        // write), a write of no sectors and an `N`.
        assert_eq!(by_op(&queue.records), [3, 5, 1, 2]);
        assert_eq!(
            note(&queue, "events other"),
            "28 events other than the queue event skipped: A 1, B 1, C 4, D 7, F 1, G 3, \
             I 2, M 1, P 1, R 1, S 1, T 1, U 1, UT 1, X 1, m 1"
        );
        for expected in [
            "21 lines of blkparse's closing summary skipped",
            "1 requests of zero length skipped",
            "1 requests with no data direction (RWBS N) skipped",
            "1 requests with a flush before them",
            "2 FUA writes, replayed FUA",
            "2 flushes",
        ] {
            assert!(note(&queue, expected).starts_with(expected));
        }
        let fua = queue.records.iter().filter(|r| r.fua);
        assert_eq!(
            fua.map(|r| r.op).collect::<Vec<_>>(),
            [Op::Write, Op::Write]
        );
        let trim = queue.records.iter().find(|r| r.op == Op::Trim).unwrap();
        assert_eq!((trim.offset, trim.len), (1_048_576 * 512, 2048 * 512));
        // Times from the first Q (0.000001100 s), exact to the nanosecond.
        assert_eq!(queue.records[0].at.0, 0);
        assert_eq!(queue.records.last().unwrap().at.0, 2_400_000 - 1_100);

        let issue = blkparse(&std::fs::read_to_string(SAMPLE).unwrap(), Event::Issue).unwrap();
        assert_eq!(by_op(&issue.records), [3, 2, 1, 1]);
        assert!(note(&issue, "events other").starts_with("33 events other than the issue event"));
    }

    #[test]
    fn a_malformed_blkparse_line_is_an_error_naming_file_and_line() {
        let good = "  8,0    3        1     0.000000000   697  Q  WS 223490 + 8 [kjournald]\n";
        assert_second_lines_refused(
            blkparse,
            good,
            &[
                (
                    "  8,0    3        2     0.00x   697  Q  WS 1 + 8 [k]",
                    "b.txt:2: field 4 (time) `0.00x`: expected seconds",
                ),
                (
                    "  8,0    3        2     0.1   697  Z  WS 1 + 8 [k]",
                    "b.txt:2: field 6 (action) `Z`: expected A, B, C",
                ),
                (
                    "  8,0    3        2     0.1   697  Q  WQ 1 + 8 [k]",
                    "b.txt:2: field 7 (RWBS) `WQ`: expected RWBS letters",
                ),
                (
                    "  8,0    3        2     0.1   697  Q  W 1 - 8 [k]",
                    "b.txt:2: field 8 (request) `1 - 8 [k]`",
                ),
                (
                    "  8,0    3        2     0.1   697  Q  W 36028797018963968 + 8 [k]",
                    "b.txt:2: field 8 (sector) `36028797018963968`: expected a sector number below 2^55",
                ),
                ("  8,0    3        2", "b.txt:2: expected 7 fields, found 3"),
                ("hello there", "b.txt:2: field 1 (device) `hello`"),
            ],
        );
    }

    #[test]
    fn passthrough_commands_are_skipped_and_requeues_under_issue_noted() {
        // smartctl's SMART read and sg_inq's INQUIRY, as blkparse prints a
        // passthrough command's issue: a byte count, no sector.
        let text = "  8,0  1  1  0.000000000  1204  D  WS 2048 + 8 [jbd2/sda1-8]\n\
                    \x20 8,0  0  2  0.100001000  4321  D   R 512 [smartctl]\n\
                    \x20 8,0  0  3  0.200001000  4322  D   N 0 (12 00 00 00 24 00) [sg_inq]\n\
                    \x20 8,0  1  4  0.300000000  1204  R  WS 2048 + 8 [0]\n\
                    \x20 8,0  1  5  0.300001000  1204  D  WS 2048 + 8 [jbd2/sda1-8]\n\
                    \x20 8,0  1  6  0.400001000  1204  D  FN (     120) [kworker]\n";
        let issue = blkparse(text, Event::Issue).unwrap();
        assert_eq!(by_op(&issue.records), [0, 2, 0, 1]);
        assert!(note(&issue, "passthrough").starts_with("2 passthrough commands skipped"));
        assert!(note(&issue, "requeued").starts_with("1 requests requeued (R)"));
        let queue = blkparse(text, Event::Queue).unwrap_err();
        assert!(queue.to_string().contains("holds no request"), "{queue}");
    }

    /// What `blkparse -s` prints after the events: a block per process
    /// (blktrace 1.3's `show_process_stats`: the name and pid, `, ...` when
    /// the name had several, then `dump_io_stats` and `dump_wait_stats`).
    const PER_PROCESS: &str = "cat (2311)
 Reads Queued:           1,      128KiB\t Writes Queued:           0,        0KiB
 Read Dispatches:        2,      128KiB\t Write Dispatches:        0,        0KiB
 Reads Requeued:         1\t\t Writes Requeued:         0
 Reads Completed:        0,        0KiB\t Writes Completed:        0,        0KiB
 Read Merges:            0,        0KiB\t Write Merges:            0,        0KiB
 IO unplugs:             0        \t Timer unplugs:           0
 Allocation wait:        0        \t Allocation wait:         0
 Dispatch wait:          0        \t Dispatch wait:           0
 Completion wait:        0        \t Completion wait:         0
Web Content (1204, ...)
 Reads Queued:           0,        0KiB\t Writes Queued:           3,       12KiB
 Read Dispatches:        0,        0KiB\t Write Dispatches:        1,       12KiB
 Reads Requeued:         0\t\t Writes Requeued:         0
 Reads Completed:        0,        0KiB\t Writes Completed:        0,        0KiB
 Read Merges:            0,        0KiB\t Write Merges:            1,        4KiB
 PC Reads Queued:        0,        0KiB\t PC Writes Queued:        1,        0KiB
 IO unplugs:             1        \t Timer unplugs:           0
 Allocation wait:        0        \t Allocation wait:         3
 Dispatch wait:          0        \t Dispatch wait:           4
 Completion wait:        0        \t Completion wait:       117

";

    #[test]
    fn blkparse_s_per_process_summaries_are_skipped_and_counted_not_read_as_requests() {
        let sample = std::fs::read_to_string(SAMPLE).unwrap();
        let (events, totals) = sample.split_at(sample.find("CPU0 (8,0):").unwrap());
        let plain = blkparse(&sample, Event::Queue).unwrap();
        // With -s, the processes' blocks stand between the events and the
        // totals; with -s -q, alone after the events; a trace with driver
        // data ends with a line saying it was left out.
        let driver = "\ndiscarded traces containing low-level device driver specific data (only \
                      available in binary output)\n";
        for (text, summary_lines) in [
            (format!("{events}{PER_PROCESS}{totals}"), 21 + 21),
            (format!("{events}{PER_PROCESS}"), 21),
            (
                format!("{events}{PER_PROCESS}{totals}{driver}"),
                21 + 21 + 1,
            ),
        ] {
            let t = blkparse(&text, Event::Queue).unwrap();
            assert_eq!(t.records, plain.records);
            let expected = format!("{summary_lines} lines of blkparse's closing summary skipped");
            assert!(note(&t, "summary").starts_with(&expected), "{:?}", t.notes);
        }
        // A line that is no event stays an error unless a summary block
        // follows it, at the end of the file too.
        for text in [
            format!("{events}cat (2311)\n{events}"),
            format!("{events}cat (2311)\n"),
            format!("{events}cat (2311)\n Read Dispatches: 2, 128KiB\n"),
        ] {
            let err = blkparse(&text, Event::Queue).unwrap_err().to_string();
            assert!(err.starts_with("b.txt:41: field 1 (device) `cat`"), "{err}");
        }
    }

    #[test]
    fn rwbs_letters_decode_as_the_kernel_writes_them() {
        let p = LineParser::for_tests();
        let decode = |s: &str| rwbs(&p, "RWBS", s).map(|r| (r.preflush, r.op, r.fua));
        assert_eq!(decode("WS"), Ok((false, Some(Op::Write), false)));
        assert_eq!(decode("FWFSM"), Ok((true, Some(Op::Write), true)));
        assert_eq!(decode("FF"), Ok((true, Some(Op::Flush), false)));
        assert_eq!(decode("F"), Ok((true, Some(Op::Flush), false)));
        assert_eq!(decode("DE"), Ok((false, Some(Op::Trim), false)));
        assert_eq!(decode("RA"), Ok((false, Some(Op::Read), false)));
        assert_eq!(decode("N"), Ok((false, None, false)));
        assert_eq!(decode("WFSU"), Ok((false, Some(Op::Write), true)));
        assert!(decode("X").is_err() && decode("").is_err() && decode("WZ").is_err());
    }
}
