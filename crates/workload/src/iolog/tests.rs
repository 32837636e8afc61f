use iosteer_sched::Nanos;

use super::*;
use crate::trace::replay::streamed;
use crate::trace::{self, Devices, Options, Trace, TraceFormat};
use crate::workload::TraceRecord;

fn read_with(text: &str, iolog: IologOptions, devices: Devices) -> Result<Trace, TraceError> {
    let options = Options {
        devices,
        iolog,
        ..Options::default()
    };
    trace::read(text.as_bytes(), "t.log", TraceFormat::Iolog, &options)
}

fn read(text: &str) -> Trace {
    read_with(text, IologOptions::default(), Devices::Merge).unwrap()
}

fn error(text: &str) -> String {
    read_with(text, IologOptions::default(), Devices::Merge)
        .unwrap_err()
        .to_string()
}

fn at_us(records: &[TraceRecord]) -> Vec<u64> {
    records.iter().map(|r| r.at.0 / 1000).collect()
}

/// The first lines of a log fio 3.33's `write_iolog` wrote (psync, randrw
/// on an 8 MiB file).
const V3: &str = "fio version 3 iolog
28 /tmp/data.bin add
154 /tmp/data.bin open
157 /tmp/data.bin read 503808 4096
411 /tmp/data.bin read 6209536 4096
522 /tmp/data.bin read 7069696 4096
624 /tmp/data.bin write 3940352 4096
24341 /tmp/data.bin close
";

#[test]
fn a_version_3_log_waits_the_gaps_between_its_lines_from_the_runs_start() {
    let t = read(V3);
    // The first line waits nothing (fio's last timestamp is still 0), the
    // open 126 us, the first read 3 more: 129 us from the run's start,
    // not shifted to zero.
    assert_eq!(at_us(&t.records), [129, 383, 494, 596]);
    let ops: Vec<Op> = t.records.iter().map(|r| r.op).collect();
    assert_eq!(ops, [Op::Read, Op::Read, Op::Read, Op::Write]);
    assert_eq!((t.records[3].offset, t.records[3].len), (3_940_352, 4096));
    assert_eq!(
        t.notes,
        ["3 file actions (add, open, close: nothing to issue)"]
    );
}

#[test]
fn a_version_2_log_issues_at_once_and_waits_until_a_time_since_the_start() {
    let text = "fio version 2 iolog
/dev/sdb add
/dev/sdb open
/dev/sdb read 0 4096
/dev/sdb wait 500 0
/dev/sdb write 4096 8192
/dev/sdb wait 200 0
/dev/sdb trim 0 8192
/dev/sdb sync 0 0
/dev/sdb datasync 0 0
/dev/sdb close
";
    let t = read(text);
    let got: Vec<(u64, Op, u64, u64)> = t
        .records
        .iter()
        .map(|r| (r.at.0 / 1_000_000, r.op, r.offset, r.len))
        .collect();
    // `wait 200` after `wait 500`: already past, no wait (fio compares it
    // with the time since its start).
    assert_eq!(
        got,
        [
            (0, Op::Read, 0, 4096),
            (500, Op::Write, 4096, 8192),
            (500, Op::Trim, 0, 8192),
            (500, Op::Flush, 0, 0),
            (500, Op::Flush, 0, 0),
        ]
    );
    assert!(
        t.notes.iter().any(|n| n.starts_with("2 wait lines")),
        "{:?}",
        t.notes
    );
    assert!(t.notes.iter().any(|n| n.starts_with("2 flushes")));

    let no_stall = IologOptions {
        no_stall: true,
        ..IologOptions::default()
    };
    let fast = read_with(text, no_stall, Devices::Merge).unwrap();
    assert!(fast.records.iter().all(|r| r.at == Nanos::ZERO));
    assert!(
        has_note(
            &fast,
            "2 wait lines dropped (replay_no_stall), as fio drops them"
        ),
        "{:?}",
        fast.notes
    );
}

#[test]
fn replay_options_scale_time_skip_kinds_and_move_offsets_as_fio_does() {
    let half = IologOptions {
        time_scale: 200,
        ..IologOptions::default()
    };
    // Each gap halved and truncated to whole microseconds: 63, 1, 127, 55, 51.
    let t = read_with(V3, half, Devices::Merge).unwrap();
    assert_eq!(at_us(&t.records), [64, 191, 246, 297]);

    // A skipped line's gap goes with it: the write waited 102 us after
    // the third read, and the reads that follow a skipped line do not.
    let skip = IologOptions {
        skip: Skip::parse("read").unwrap(),
        ..IologOptions::default()
    };
    let t = read_with(V3, skip, Devices::Merge).unwrap();
    assert_eq!(at_us(&t.records), [228]);
    assert!(
        has_note(&t, "3 requests dropped by replay_skip, as fio drops them"),
        "{:?}",
        t.notes
    );
    assert_eq!(Skip::parse("write,trim,flush"), Err("flush".to_string()));

    let moved = IologOptions {
        scale: 2,
        align: 4096,
        ..IologOptions::default()
    };
    let t = read_with(V3, moved, Devices::Merge).unwrap();
    let offsets: Vec<u64> = t.records.iter().map(|r| r.offset).collect();
    // 503808 / 2 = 251904 = 61.5 x 4096, rounded down to 61 x 4096.
    assert_eq!(offsets, [249_856, 3_104_768, 3_534_848, 1_970_176]);
    assert!(
        has_note(&t, "4 offsets moved by replay_scale or replay_align"),
        "{:?}",
        t.notes
    );
}

#[test]
fn files_are_devices_merged_apart_or_redirected() {
    let text = "fio version 2 iolog
b add
a add
a open
b open
a write 0 4096
b write 0 4096
";
    let merged = read(text);
    assert_eq!(merged.records[0].offset, merged.records[1].offset);
    let apart = read_with(text, IologOptions::default(), Devices::Separate).unwrap();
    // Devices in name order: `a` from 0, `b` from the next MiB.
    assert_eq!(
        (apart.records[0].offset, apart.records[1].offset),
        (0, 1 << 20)
    );
    let redirect = IologOptions {
        redirect: true,
        ..IologOptions::default()
    };
    let redirected = read_with(text, redirect, Devices::Separate).unwrap();
    assert_eq!(redirected.records[1].offset, 0);
}

#[test]
fn version_3_waits_are_ignored_and_closed_files_counted() {
    let text = "fio version 3 iolog
0 f add
5 f wait 100 0
9 f read 0 512
";
    let t = read(text);
    assert_eq!(at_us(&t.records), [4]);
    assert!(t
        .notes
        .iter()
        .any(|n| n.starts_with("1 wait lines of a version 3 log ignored")));
    assert!(t
        .notes
        .iter()
        .any(|n| n.starts_with("1 requests to a file added but not open")));
}

#[test]
fn errors_name_the_line_the_field_and_what_fio_reads() {
    for (text, expected) in [
        (
            "0 0 303567 7 0\n",
            "t.log:1: `0 0 303567 7 0` is not an iolog's first line; expected `fio version 2 iolog` or `fio version 3 iolog`",
        ),
        (
            "fio version 2 iolog\nf add\nf open\nf append 0 4096\n",
            "t.log:4: field 2 (action) `append`: expected read, write, trim",
        ),
        (
            "fio version 3 iolog\n1 f add\n2 f open\n3 f read x 4096\n",
            "t.log:4: field 4 (offset) `x`",
        ),
        (
            "fio version 2 iolog\nf read 0 4096\n",
            "field 1 (file name) `f`: expected a file added by an earlier `add` line",
        ),
        (
            "fio version 2 iolog\nf add\nf open\nf read 0\n",
            "t.log:4: expected 4 fields, found 3",
        ),
        (
            "fio version 3 iolog\n1 f add\n2 f open\n3 f read 0 5000000000\n",
            "expected a byte count below 2^32",
        ),
        (
            "fio version 2 iolog\nf delete\n",
            "field 2 (action) `delete`: expected add, open or close",
        ),
    ] {
        let e = error(text);
        assert!(e.contains(expected), "{text:?}: {e}");
    }
    // Another format's reader points at this one.
    let e = trace::parse(
        V3,
        "t.log",
        TraceFormat::Ascii,
        trace::TimeUnit::Ns,
        1.0,
        Devices::Merge,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("it looks like a line of iolog"), "{e}");
}

#[test]
fn a_log_on_disk_is_replayed_as_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v3.log");
    std::fs::write(&path, V3).unwrap();
    let path = path.to_str().unwrap();
    assert_eq!(version(path).unwrap(), 3);
    let options = Options::default();
    let (records, replay) = streamed(path, TraceFormat::Iolog, &options, 8 << 20);
    assert_eq!(records, read(V3).records);
    assert_eq!(replay.records.summary().first_at, Some(Nanos(129_000)));
}

/// traces/fio-iolog-sample.log: fio 3.33's `write_iolog` of 200 requests.
const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../traces/fio-iolog-sample.log"
);

#[test]
fn fios_own_log_replays_its_requests_in_its_order() {
    let text = std::fs::read_to_string(SAMPLE).unwrap();
    let t = trace::read_path(SAMPLE, TraceFormat::Iolog, &Options::default()).unwrap();
    // Every request line, in order: offsets and lengths as written (a
    // sync's are fio's, unused: a flush has none).
    let lines: Vec<(Op, u64, u64)> = text
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == 5)
        .map(|f| match f[2] {
            "read" => (Op::Read, f[3].parse().unwrap(), f[4].parse().unwrap()),
            "write" => (Op::Write, f[3].parse().unwrap(), f[4].parse().unwrap()),
            _ => (Op::Flush, 0, 0),
        })
        .collect();
    let got: Vec<(Op, u64, u64)> = t.records.iter().map(|r| (r.op, r.offset, r.len)).collect();
    assert_eq!(got, lines);
    let count = |op| got.iter().filter(|r| r.0 == op).count();
    assert_eq!(
        (count(Op::Read), count(Op::Write), count(Op::Flush)),
        (119, 81, 17)
    );
    // The last request at its time in the log, less the first line's.
    let last = text.lines().rev().nth(1).unwrap();
    let last_us: u64 = last.split_whitespace().next().unwrap().parse().unwrap();
    let first_us: u64 = text
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        t.records.last().unwrap().at,
        Nanos::from_micros(last_us - first_us)
    );
}

/// Whether `trace` has exactly `note` among its notes.
fn has_note(trace: &Trace, note: &str) -> bool {
    trace.notes.iter().any(|n| n == note)
}
