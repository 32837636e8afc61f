//! A catalogue of bad (and adjusted) input, one row per case: every input
//! surface (flags, specs, objectives, grids, job files, traces, drive
//! files, paths, addresses) fails cleanly, naming the input and what is
//! accepted, or is accepted with the note that says what was adjusted.
//!
//! Each case runs in a directory of its own holding its files; `{d}` in an
//! argument is that directory. Errors trigger before anything slow runs,
//! and accepted cases use a tiny drive, so the whole catalogue is quick.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// One case: arguments, files to write first, substrings expected in the
/// output, and whether the command succeeds (with a note).
struct Case {
    args: &'static [&'static str],
    files: &'static [(&'static str, &'static str)],
    expect: &'static [&'static str],
    ok: bool,
}

/// A case the binary must refuse, saying each of `expect` on stderr.
const fn bad(
    args: &'static [&'static str],
    files: &'static [(&'static str, &'static str)],
    expect: &'static [&'static str],
) -> Case {
    Case {
        args,
        files,
        expect,
        ok: false,
    }
}

/// A drive small enough to age in milliseconds (diskSim-slc, 16 blocks a plane).
const TINY_DRIVE: &str = r#"name = "tiny"
over_provisioning = 0.25
flush_us = 50.0

[geometry]
channels = 1
dies_per_channel = 2
planes_per_die = 4
blocks_per_plane = 16
pages_per_block = 64
page_size = 4096

[timing]
page_read_us = 25.0
page_program_us = 200.0
block_erase_us = 1500.0
channel_mb_per_s = 40.0
host_link_mb_per_s = 300.0
command_overhead_us = 10.0

[interface]
kind = "nvme"
queue_depth = 32
queued_trim = true
queued_flush = true

[gc]
victim = "greedy"
mode = "blocking"
low_watermark = 4
state2_below = 2
state3_below = 1
pipeline = false
merge = true
suspend = false
suspend_us = 50.0
high_watermark = 8
background_idle_ms = 100.0
separate_frontier = true
hint_streams = false

[trim_cost]
fixed_us = 100.0
per_range_us = 10.0
per_mib_us = 50.0
size_exponent = 1.0
"#;

const JOB: (&str, &str) = ("j.fio", "[r]\nrw=randread\nbs=4k\nsize=1m\nruntime=100ms\n");
/// A job naming a file that is not there, with no size to create it.
const UNSIZED_JOB: (&str, &str) = (
    "n.fio",
    "[r]\nrw=randread\nbs=4k\nfilename=nosuch.img\nruntime=100ms\n",
);
const TRACE: (&str, &str) = ("t.txt", "0 0 0 4096 1\n");
const DRIVE: (&str, &str) = ("tiny.toml", TINY_DRIVE);

fn iosteer() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iosteer"))
}

/// Runs `iosteer ARGS`, which must fail with a message holding each of
/// `needles`.
fn assert_refused<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(args: &[S], needles: &[&str]) {
    let out = iosteer().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?}: {err}");
    for needle in needles {
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("bad_input")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A drive TOML: the tiny drive with `from` replaced by `to`.
fn drive_with(from: &str, to: &str) -> String {
    assert!(TINY_DRIVE.contains(from), "{from}");
    TINY_DRIVE.replacen(from, to, 1)
}

/// Runs `case` in a directory of its own; the output (stderr, and stdout
/// for accepted cases) checked against it.
fn check(group: &str, index: usize, case: &Case, extra_files: &[(String, String)]) {
    let dir = scratch(&format!("{group}-{index}"));
    for (name, text) in case.files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    for (name, text) in extra_files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let d = dir.display().to_string();
    let args: Vec<String> = case.args.iter().map(|a| a.replace("{d}", &d)).collect();
    let out = iosteer().args(&args).current_dir(&dir).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let all = format!("{err}{}", String::from_utf8_lossy(&out.stdout));
    assert!(!all.contains("panicked"), "{args:?} panicked: {all}");
    assert_eq!(
        out.status.success(),
        case.ok,
        "{args:?}: exit {:?}: {all}",
        out.status
    );
    let text = if case.ok { &all } else { &err.to_string() };
    for want in case.expect {
        let want = want.replace("{d}", &d);
        assert!(
            text.contains(&want),
            "{args:?}: `{want}` missing from:\n{text}"
        );
    }
}

fn run_table(group: &str, cases: &[Case]) {
    for (i, case) in cases.iter().enumerate() {
        check(group, i, case, &[]);
    }
}

/// Flags of `iosteer sim`, with its job, trace and drive inputs.
#[rustfmt::skip]
const SIM: &[Case] = &[
    bad(&["sim", "--seed", "-1"], &[], &["--seed", "from 0 to"]),
    bad(&["sim", "--seed", "x"], &[], &["--seed", "whole number"]),
    bad(&["sim", "--slo-ms", "-5"], &[], &["--slo-ms -5", "positive number"]),
    bad(&["sim", "--slo-ms", "0", "--job", "j.fio"], &[JOB], &["--slo-ms 0", "positive"]),
    bad(&["sim", "--slo-ms", "nan", "--job", "j.fio"], &[JOB], &["--slo-ms NaN", "positive"]),
    bad(&["sim", "--trace", "t.txt", "--trace-speed", "-1"], &[TRACE], &["--trace-speed -1", "positive"]),
    bad(&["sim", "--trace", "t.txt", "--trace-speed", "0"], &[TRACE], &["--trace-speed 0", "positive"]),
    bad(&["sim", "--trace", "t.txt", "--trace-format", "nope"], &[TRACE], &["'nope' for '--trace-format", "ascii"]),
    bad(&["sim", "--trace", "t.txt", "--trace-unit", "parsec"], &[TRACE], &["'parsec' for '--trace-unit", "ns"]),
    bad(&["sim", "--trace", "t.txt", "--trace-fit", "squash"], &[TRACE], &["'squash' for '--trace-fit", "wrap"]),
    bad(&["sim", "--trace", "t.txt", "--trace-devices", "both"], &[TRACE], &["'both' for '--trace-devices", "merge"]),
    bad(&["sim", "--trace", "t.txt", "--trace-event", "x"], &[TRACE], &["'x' for '--trace-event", "queue"]),
    bad(&["sim", "--trace", "t.txt", "--trace-format", "spc", "--trace-unit", "ms"], &[TRACE], &["--trace-unit ms", "ascii only"]),
    // Found by a review: trace flags without a trace, and an event a format
    // does not have, changed nothing and said nothing.
    bad(&["sim", "quick", "--trace-speed", "2"], &[], &["--trace <FILE>"]),
    bad(&["sim", "--job", "j.fio", "--trace-event", "issue"], &[JOB], &["--trace <FILE>"]),
    bad(&["sim", "--trace", "t.txt", "--trace-format", "msr", "--trace-event", "issue"], &[TRACE], &["--trace-event issue", "blkparse"]),
    bad(&["sim", "nosuch"], &[], &["unknown scenario `nosuch`", "fill-while-serving"]),
    bad(&["sim", "j.fio"], &[JOB], &["unknown scenario `j.fio`", "--job j.fio"]),
    bad(&["sim", "quick", "--job", "j.fio"], &[JOB], &["give one workload"]),
    bad(&["sim", "--device", "nosuch"], &[], &["nosuch", "consumer-sata"]),
    bad(&["sim", "--device", "{d}"], &[], &["--device {d}", "a directory", "consumer-sata"]),
    bad(&["sim", "--device", "/dev/null"], &[], &["--device /dev/null", "not a regular file", "consumer-sata"]),
    bad(&["sim", "--job", "missing.fio"], &[], &["--job missing.fio"]),
    // An endless file given as a job file was read until memory ran out.
    bad(&["sim", "--job", "/dev/zero"], &[], &["--job /dev/zero", "longer than 16777216 bytes: not a job file"]),
    bad(&["sim", "--trace", "missing.txt"], &[], &["--trace", "missing.txt"]),
    bad(&["sim", "--job", "j.fio", "--out", "j.fio"], &[JOB], &["--out j.fio", "not a directory"]),
    bad(&["sim", "--job", "j.fio", "--out", "/dev/null/x"], &[JOB], &["--out /dev/null/x"]),
    bad(&["sim", "--job", "j.fio", "--device", "tiny.toml", "--sched", "bogus"], &[JOB, DRIVE], &["--sched bogus", "known schedulers", "fifo"]),
    bad(&["sim", "--job", "j.fio", "--device", "tiny.toml", "--sched", "netflix:nokey=1"], &[JOB, DRIVE], &["--sched", "`nokey`", "read_bias"]),
    bad(&["sim", "--job", "j.fio", "--device", "tiny.toml", "--sched", "netflix:read_bias"], &[JOB, DRIVE], &["--sched", "key=value"]),
    bad(&["sim", "--job", "j.fio", "--device", "tiny.toml", "--sched", "netflix:read_bias=1,read_bias=100"], &[JOB, DRIVE], &["--sched", "`read_bias` is given twice"]),
    bad(&["sim", "pgc-sweep", "--sched", "fifo", "--sched", "fifo"], &[], &["at most one --sched"]),
    // Job files: file:line and what the option accepts.
    bad(&["sim", "--job", "b.fio"], &[("b.fio", "[r]\nrw=sideways\n")], &["b.fio:2", "rw=sideways", "randread"]),
    bad(&["sim", "--job", "b.fio"], &[("b.fio", "[r]\nrw=read\nbs=0\n")], &["b.fio:3", "bs=0", "4k"]),
    bad(&["sim", "--job", "b.fio"], &[("b.fio", "[r]\nrw=read\niodepth=-1\n")], &["b.fio:3", "iodepth=-1", "1 to 65536"]),
    bad(&["sim", "--job", "b.fio"], &[("b.fio", "[r]\nrw=read\nfrobnicate=3\n")], &["b.fio:3", "frobnicate", "supported:"]),
    bad(&["sim", "--job", "b.fio"], &[("b.fio", "[r]\nrw=read\nthred=1\n")], &["b.fio:3", "`thred`", "did you mean `thread`?"]),
    bad(&["sim", "--job", "b.fio"], &[("b.fio", "[r]\nrw=read\nsync=yes\n")], &["b.fio:3", "sync=yes", "none or 0", "dsync"]),
    // Traces: file:line and what the field accepts.
    bad(&["sim", "--trace", "b.txt"], &[("b.txt", "0 0 0 4096 1\nbogus line\n")], &["--trace b.txt:2", "5 fields"]),
    bad(&["sim", "--trace", "b.txt"], &[("b.txt", "-5 0 0 4096 1\n")], &["b.txt:1", "arrival time", "zero or more"]),
    bad(&["sim", "--trace", "b.txt"], &[("b.txt", "0 0 0 4096 R\n")], &["b.txt:1", "type", "1 (read) or 0 (write)"]),
    bad(&["sim", "--trace", "b.txt", "--device", "tiny.toml"], &[("b.txt", "0 0 99999999999 4096 1\n"), DRIVE], &["b.txt", "--trace-fit wrap|scale"]),
    // Accepted, with the note that says what was adjusted.
    Case { args: &["sim", "--job", "n.fio", "--device", "tiny.toml"], files: &[("n.fio", "[r]\nrw=randread\nbs=4k\nsize=1m\nruntime=100ms\nrandseed=7\n"), DRIVE], expect: &["note: job r: randseed=7 is not used"], ok: true },
    bad(&["sim", "--trace", "b.txt", "--trace-fit", "wrap"], &[("b.txt", "0 0 36028797018963968 8 1\n")], &["--trace b.txt:1", "field 3 (lba)", "below 2^55"]),
    Case { args: &["sim", "--trace", "b.txt", "--device", "tiny.toml", "--trace-fit", "wrap"], files: &[("b.txt", "0 0 99999999999 4096 1\n"), DRIVE], expect: &["note: trace addresses remapped", "--trace-fit wrap"], ok: true },
    // A first line naming the columns was refused as a bad request; one
    // further down still is.
    Case { args: &["sim", "--trace", "m.csv", "--trace-format", "msr", "--device", "tiny.toml", "--trace-fit", "wrap"], files: &[("m.csv", "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\r\n128166372003061629,hm,0,Read,3154112512,4096,1331\r\n"), DRIVE], expect: &["note: 1 header lines skipped"], ok: true },
    Case { args: &["sim", "--trace", "s.csv", "--trace-format", "spc", "--device", "tiny.toml"], files: &[("s.csv", "ASU,LBA,Size,Opcode,Timestamp\n0,303,3584,w,0.000000\n"), DRIVE], expect: &["note: 1 header lines skipped"], ok: true },
    Case { args: &["sim", "--trace", "a.txt", "--device", "tiny.toml"], files: &[("a.txt", "time device lba size type\n0 0 303 8 1\n"), DRIVE], expect: &["note: 1 header lines skipped"], ok: true },
    bad(&["sim", "--trace", "a.txt"], &[("a.txt", "0 0 303 8 1\ntime device lba size type\n")], &["--trace a.txt:2", "field 1 (arrival time) `time`"]),
    // blkparse -s: a process's summary after the events was read as an event.
    Case { args: &["sim", "--trace", "b.txt", "--trace-format", "blkparse", "--device", "tiny.toml"], files: &[("b.txt", "  8,0  1  1  0.000001100  1204  Q  WS 2048 + 8 [jbd2/sda1-8]\njbd2/sda1-8 (1204)\n Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB\n Completion wait:        0        \t Completion wait:         0\n"), DRIVE], expect: &["note: 3 lines of blkparse's closing summary skipped"], ok: true },
];

/// Flags, grids, seeds and objectives of `iosteer sweep` (all fail before running).
#[rustfmt::skip]
const SWEEP: &[Case] = &[
    bad(&["sweep", "quick", "--vary", "fifo", "--chart", "/nonexistent/x.svg"], &[], &["--chart /nonexistent/x.svg", "does not exist"]),
    bad(&["sweep", "quick", "--vary", "fifo", "--chart", "{d}"], &[], &["--chart {d}", "a directory"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--seed", "-1"], &[], &["--seed -1", "a range (1..5)"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--seed", "5..1"], &[], &["--seed 5..1", "reversed", "A <= B"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--seed", "1,1"], &[], &["--seed 1,1", "repeated"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--seed", "0..1000"], &[], &["--seed 0..1000", "at most 100"]),
    bad(&["sweep", "--vary", "netflix:write.current=20000..10000/1000", "--chart", "-"], &[], &["--vary", "write.current", "reversed", "start <= end"]),
    bad(&["sweep", "--vary", "netflix:write.current=10000..20000/0", "--chart", "-"], &[], &["--vary", "write.current", "step is zero", "1 or more"]),
    bad(&["sweep", "--vary", "netflix:a=1..5", "--chart", "-"], &[], &["--vary", "start..end/step"]),
    bad(&["sweep", "--vary", "netflix:1,2", "--chart", "-"], &[], &["--vary netflix:1,2", "before any key=value"]),
    bad(&["sweep", "--vary", "netflix:read_bias=1,read_bias=2", "--chart", "-"], &[], &["--vary", "`read_bias` is given twice", "read_bias=1,2,3"]),
    bad(&["sweep", "--vary", ":a=1", "--chart", "-"], &[], &["--vary :a=1", "no policy name"]),
    bad(&["sweep", "--vary", "netflix:write.current=1..100000/1", "--chart", "-"], &[], &["--vary", "more than 10000 values"]),
    bad(&["sweep", "--vary", "nosuch:a=1", "--chart", "-"], &[], &["--vary nosuch:a=1", "known schedulers"]),
    bad(&["sweep", "--vary", "netflix:read_bias=1,read_bias=100", "--chart", "-"], &[], &["--vary", "`read_bias` is given twice"]),
    bad(&["sweep", "--sched", "netflix:read_bias=1,read_bias=2", "--chart", "-"], &[], &["--sched", "`read_bias` is given twice"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--threads", "10000"], &[], &["--threads 10000", "1 to 256"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--threads", "0"], &[], &["--threads 0", "1 to 256"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--threads", "-3"], &[], &["--threads", "1 to 256"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--objective", "p42<=2x"], &[], &["--objective p42<=2x", "p99.9"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--objective", "p99<=abc"], &[], &["--objective p99<=abc", "p99<=5ms"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--slo-ms", "-1"], &[], &["--slo-ms -1", "positive"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--objective", "p99<=2x", "--objective", "p99<=1.5x"], &[], &["--objective", "need a drive list"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--device", "family:5..2"], &[], &["--device family:5..2", "reversed"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--device", "family:1,nosuch"], &[], &["--device nosuch", "consumer-sata"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--device", "family:1..2", "--static-points", "0"], &[], &["--static-points 0", "1 to 20 static limits"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--device", "family:1..2", "--out", "{d}"], &[], &["--out", "drive list"]),
    bad(&["device", "show", "family:x"], &[], &["family:x", "family:SEED"]),
    bad(&["sweep", "--chart", "-"], &[], &["--vary GRID"]),
    bad(&["sweep", "nosuch", "--vary", "fifo", "--chart", "-"], &[], &["unknown scenario `nosuch`"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--device", "/dev/null"], &[], &["--device /dev/null", "consumer-sata"]),
    // A range of 2^64 values wrapped to none ("nothing to sweep"; a panic in a debug build).
    bad(&["sweep", "--vary", "netflix:read_bias=0..18446744073709551615/1", "--chart", "-"], &[], &["--vary", "read_bias=0..18446744073709551615/1", "more than 10000 values"]),
    // A setting or a drive given twice ran twice and counted twice.
    bad(&["sweep", "--vary", "fifo", "--sched", "fifo", "--chart", "-"], &[], &["--vary and --sched", "fifo: the same setting twice"]),
    bad(&["sweep", "--vary", "netflix:write.limiter=bandwidth,write.current=1000,1000", "--chart", "-"], &[], &["the same setting twice", "write.current=1000"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--device", "consumer-sata,consumer-sata"], &[], &["--device consumer-sata,consumer-sata", "consumer-sata is in the list twice"]),
    bad(&["sweep", "--vary", "fifo", "--chart", "-", "--device", "family:1..3,family:2"], &[], &["--device family:1..3,family:2", "family:2 (", "twice"]),
    bad(&["sweep", "--vary", "fifo", "--sched", "fifo", "--chart", "-", "--device", "family:1..2"], &[], &["--vary and --sched", "fifo: the same setting twice"]),
    // Too many runs on a drive list named the first drive, as if the drive were wrong.
    bad(&["sweep", "--vary", "netflix:read_bias=1..200/1", "--chart", "-", "--device", "family:1..2", "--seed", "1..100"], &[], &["--vary, --sched and --seed", "200 grid points on 100 seeds"]),
];

/// `iosteer run`: flags, paths and addresses, all refused before any I/O.
#[rustfmt::skip]
const RUN: &[Case] = &[
    // A real disk is not preconditioned: the flag was taken and did nothing
    // (clap's `requires` yields to --emulate's conflict with --target).
    bad(&["run", "--job", "j.fio", "--target", "{d}/t.img", "--precondition", "steady"], &[JOB], &["--target", "--precondition"]),
    bad(&["probe", "--target", "{d}/t.img", "--precondition", "steady"], &[], &["--target", "--precondition"]),
    bad(&["run", "--job", "j.fio", "--size", "1m", "--precondition", "steady"], &[JOB], &["--size", "--precondition"]),
    bad(&["run", "--emulate", "consumer-sata", "--scenario", "quick", "--queue-depth", "0"], &[], &["--queue-depth", "1 to 4096"]),
    bad(&["run", "--emulate", "consumer-sata", "--scenario", "quick", "--queue-depth", "1000000"], &[], &["--queue-depth", "1 to 4096"]),
    bad(&["run", "--emulate", "consumer-sata", "--scenario", "quick", "--queue-depth", "-1"], &[], &["--queue-depth", "-1"]),
    bad(&["run", "--emulate", "consumer-sata", "--scenario", "quick", "--seed", "-1"], &[], &["--seed", "from 0 to"]),
    bad(&["run", "--emulate", "consumer-sata", "--scenario", "quick", "--slo-ms", "-5"], &[], &["--slo-ms -5", "positive"]),
    bad(&["run", "--emulate", "consumer-sata", "--scenario", "nosuch"], &[], &["--scenario nosuch", "quick"]),
    bad(&["run", "--emulate", "/dev/null", "--scenario", "quick"], &[], &["--emulate /dev/null", "not a regular file"]),
    bad(&["run", "--emulate", "consumer-sata", "--scenario", "quick", "--out", "/dev/null/x"], &[], &["--out /dev/null/x"]),
    bad(&["run", "--emulate", "consumer-sata", "--scenario", "quick", "--metrics", "nope"], &[], &["--metrics", "nope"]),
    bad(&["run", "--target", "f.img", "--job", "j.fio", "--size", "1zz"], &[JOB], &["'1zz' for '--size", "1g"]),
    bad(&["run", "--target", "f.img", "--job", "j.fio", "--duration", "forever"], &[JOB], &["'forever' for '--duration", "10s"]),
    bad(&["run", "--target", "f.img", "--job", "j.fio", "--duration", "99999999999d"], &[JOB], &["--duration", "out of range", "10s"]),
    bad(&["run", "--target", "f.img", "--job", "missing.fio"], &[], &["--job missing.fio"]),
    bad(&["run", "--target", "f.img", "--job", "/dev/zero"], &[], &["--job /dev/zero", "not a job file"]),
    bad(&["run", "--target", "f.img", "--job", "j.fio", "--sched", "bogus"], &[JOB], &["--sched bogus", "known schedulers"]),
    bad(&["run", "--target", "/dev/null", "--job", "j.fio"], &[JOB], &["--target", "is a character device", "regular file or a block device"]),
    bad(&["run", "--target", "f.img", "--job", "j.fio", "--reap", "sometimes"], &[JOB], &["--reap", "interrupt"]),
    bad(&["run", "--job", "n.fio"], &[UNSIZED_JOB], &["nosuch.img does not exist", "give the job a size=, or --size"]),
    // A --target not there, with no --size to make it: only the OS's words.
    bad(&["run", "--target", "new.img", "--job", "j.fio"], &[("j.fio", "[r]\nrw=read\nruntime=100ms\n")], &["--target new.img: No such file", "--size creates it"]),
    // A job larger than --size blamed only the job file's line.
    bad(&["run", "--target", "f.img", "--size", "512k", "--job", "j.fio"], &[JOB], &["j.fio:4", "size 1048576", "(524288 bytes)", "the drive here is --size; give a larger --size"]),
    bad(&["run", "--target", "{d}", "--size", "512k", "--job", "n.fio"], &[("n.fio", "[r]\nrw=read\nbs=4k\nsize=1m\nfilename=x.img\n")], &["n.fio:4", "the drive here is --size"]),
    // A percentage of nothing: fio 3.33 says "you need to specify size=".
    bad(&["run", "--target", "{d}", "--job", "p.fio"], &[("p.fio", "[r]\nrw=write\nsize=50%\n")], &["job r: its size or offset is a percentage", "give --size"]),
];

/// `iosteer probe`: options are checked before the drive is aged.
#[rustfmt::skip]
const PROBE: &[Case] = &[
    bad(&["probe", "--emulate", "consumer-sata", "--out", "/dev/null/x"], &[], &["--out /dev/null/x"]),
    bad(&["probe", "--emulate", "consumer-sata", "--write-bs", "3k"], &[], &["--write-bs 3k", "multiple of 4k"]),
    bad(&["probe", "--emulate", "consumer-sata", "--rates", "10m,5m"], &[], &["--rates 10m,5m"]),
    bad(&["probe", "--emulate", "consumer-sata", "--start", "0"], &[], &["--start 0", "positive rate"]),
    bad(&["probe", "--emulate", "consumer-sata", "--start", "5m", "--max", "1m"], &[], &["--max 1m", "below --start 5m"]),
    bad(&["probe", "--emulate", "consumer-sata", "--step-time", "1s", "--settle", "2s"], &[], &["--step-time 1s --settle 2s"]),
    bad(&["probe", "--emulate", "consumer-sata", "--objective", "p99<="], &[], &["--objective"]),
    bad(&["probe", "--emulate", "consumer-sata", "--seed", "-1"], &[], &["--seed", "from 0 to"]),
    bad(&["probe", "--emulate", "consumer-sata", "--slo-ms", "-1"], &[], &["--slo-ms -1", "positive"]),
    bad(&["probe", "--emulate", "consumer-sata", "--read-job", "missing.fio"], &[], &["--read-job missing.fio"]),
    bad(&["probe", "--emulate", "consumer-sata", "--read-job", "/dev/zero"], &[], &["--read-job /dev/zero", "not a job file"]),
];

/// `iosteer device` and `iosteer bench`: drive files and their flags.
#[rustfmt::skip]
const DEVICE: &[Case] = &[
    bad(&["device", "show", "nosuch"], &[], &["nosuch", "consumer-sata, enterprise-nvme, diskSim-slc"]),
    bad(&["device", "show", "{d}"], &[], &["a directory", "consumer-sata"]),
    bad(&["device", "show", "b.toml"], &[("b.toml", "name = \"x\"\nname = \"y\"\n")], &["b.toml", "duplicate"]),
    bad(&["device", "show", "b.toml"], &[("b.toml", "name = \n")], &["b.toml", "line 1"]),
    bad(&["device", "show", "b.toml"], &[("b.toml", "frob = 1\n")], &["b.toml", "unknown field"]),
    bad(&["device", "import", "ssd", "x"], &[], &["device import ssd", "disksim, mqsim, ssdsim"]),
    bad(&["device", "import", "ssdsim", "p.parameters"], &[("p.parameters", "channel number 2\n")], &["p.parameters: line 1", "name = value"]),
    bad(&["device", "import", "ssdsim", "p.parameters"], &[("p.parameters", "#x\n t_R = 1;\n")], &["line 2", "`t_R` is indented"]),
    bad(&["device", "import", "ssdsim", "p.parameters"], &[("p.parameters", "t_R = 1;\n")], &["`channel number` is missing"]),
    bad(&["device", "waf", "--victim", "bogus"], &[], &["--victim bogus", "greedy"]),
    bad(&["device", "waf", "--blocks", "1"], &[], &["--blocks 1", "at least 16 blocks"]),
    bad(&["device", "waf", "--alpha", "0.5"], &[], &["--alpha 0.5"]),
    bad(&["device", "waf", "--blocks", "4000000000"], &[], &["--blocks 4000000000", "blocks per die"]),
    bad(&["device", "waf", "--blocks", "-1"], &[], &["--blocks", "-1"]),
    bad(&["bench", "sched", "--policy", "bogus", "--requests", "10"], &[], &["--policy bogus", "known schedulers"]),
    bad(&["bench", "sched", "--repeat", "0"], &[], &["--repeat", "1..=1000"]),
    bad(&["bench", "sim", "--case", "4k"], &[], &["--case", "unknown case `4k`", "4k-mix, fill-128k, large-trace"]),
];

/// Drive files out of range: (what to replace in the tiny drive, by what,
/// expected substrings). Each names the field and the accepted range.
#[rustfmt::skip]
const DRIVE_FIELDS: &[(&str, &str, &[&str])] = &[
    ("blocks_per_plane = 16", "blocks_per_plane = 1048576", &["`geometry`", "2^22"]),
    ("blocks_per_plane = 16\npages_per_block = 64", "blocks_per_plane = 65536\npages_per_block = 1024", &["`geometry`", "2^28", "2 GiB"]),
    ("page_size = 4096", "page_size = 100", &["`geometry.page_size`", "multiple of 512"]),
    ("pages_per_block = 64", "pages_per_block = 0", &["`geometry.pages_per_block`", "at least 1"]),
    ("size_exponent = 1.0", "size_exponent = 1e308", &["`trim_cost.size_exponent`", "from 0 to 2"]),
    ("per_mib_us = 50.0\nsize_exponent = 1.0", "per_mib_us = 9000000.0\nsize_exponent = 2.0", &["`trim_cost`", "at most 600 s"]),
    ("block_erase_us = 1500.0", "block_erase_us = 1e12", &["`timing.block_erase_us`", "10 s"]),
    ("page_read_us = 25.0", "page_read_us = -1.0", &["`timing.page_read_us`", "from 0 to"]),
    ("flush_us = 50.0", "flush_us = nan", &["`flush_us`", "from 0 to"]),
    ("host_link_mb_per_s = 300.0", "host_link_mb_per_s = 0.000001", &["`timing.host_link_mb_per_s`", "from 1 to"]),
    ("background_idle_ms = 100.0", "background_idle_ms = 1e300", &["`gc.background_idle_ms`", "an hour"]),
    ("over_provisioning = 0.25", "over_provisioning = 1.5", &["`over_provisioning`", "below 1"]),
];

#[test]
fn sim_catalogue() {
    run_table("sim", SIM);
}

#[test]
fn sweep_catalogue() {
    run_table("sweep", SWEEP);
}

#[test]
fn run_catalogue() {
    run_table("run", RUN);
}

#[test]
fn probe_catalogue() {
    run_table("probe", PROBE);
}

#[test]
fn device_catalogue() {
    run_table("device", DEVICE);
}

#[test]
fn drive_files_out_of_range_name_the_field_and_range() {
    for (i, (from, to, expect)) in DRIVE_FIELDS.iter().enumerate() {
        let case = bad(&["device", "show", "d.toml"], &[], expect);
        check(
            "drive",
            i,
            &case,
            &[("d.toml".into(), drive_with(from, to))],
        );
        // The same file as --device names the flag and the file.
        let case = bad(&["sim", "--device", "d.toml"], &[], &["--device d.toml"]);
        check(
            "drive-sim",
            i,
            &case,
            &[("d.toml".into(), drive_with(from, to))],
        );
    }
}

#[test]
fn device_show_names_itself_not_the_device_flag() {
    let expect = &["device show d.toml: `over_provisioning` = 2"];
    let case = bad(&["device", "show", "d.toml"], &[], expect);
    let drive = drive_with("over_provisioning = 0.25", "over_provisioning = 2");
    check("show", 0, &case, &[("d.toml".into(), drive)]);
}

#[test]
fn the_catalogue_is_large() {
    let cases =
        SIM.len() + SWEEP.len() + RUN.len() + PROBE.len() + DEVICE.len() + DRIVE_FIELDS.len();
    assert!(cases >= 60, "{cases} cases");
}

// Regression tests, one per defect.

#[test]
fn chart_path_is_checked_before_the_sweep_runs() {
    let started = Instant::now();
    let case = bad(
        &[
            "sweep",
            "quick",
            "--vary",
            "fifo",
            "--chart",
            "/nonexistent/x.svg",
        ],
        &[],
        &["--chart /nonexistent/x.svg"],
    );
    check("regress-chart", 0, &case, &[]);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[test]
fn out_dir_is_checked_before_the_run() {
    for (i, cmd) in [
        &["sim", "quick", "--out", "/dev/null/x"][..],
        &[
            "probe",
            "--emulate",
            "consumer-sata",
            "--out",
            "/dev/null/x",
        ],
        &[
            "run",
            "--emulate",
            "consumer-sata",
            "--scenario",
            "quick",
            "--out",
            "/dev/null/x",
        ],
    ]
    .into_iter()
    .enumerate()
    {
        let started = Instant::now();
        let case = Case {
            args: cmd,
            files: &[],
            expect: &["--out /dev/null/x"],
            ok: false,
        };
        check("regress-out", i, &case, &[]);
        assert!(started.elapsed() < Duration::from_secs(10), "{cmd:?}");
    }
}

#[test]
fn duplicated_spec_key_is_refused() {
    let case = bad(
        &[
            "sweep",
            "--sched",
            "netflix:read_bias=1,read_bias=100",
            "--chart",
            "-",
        ],
        &[],
        &["`read_bias` is given twice"],
    );
    check("regress-dup", 0, &case, &[]);
}

#[test]
fn negative_numbers_reach_validation() {
    let cases: [(&'static [&'static str], &'static [&'static str]); 3] = [
        (&["sim", "--seed", "-1"], &["--seed", "from 0 to"]),
        (&["sim", "--slo-ms", "-5"], &["--slo-ms -5", "positive"]),
        (
            &["sim", "--trace", "t.txt", "--trace-speed", "-1"],
            &["--trace-speed -1", "positive"],
        ),
    ];
    for (i, (args, expect)) in cases.into_iter().enumerate() {
        check("regress-neg", i, &bad(args, &[TRACE], expect), &[]);
        let dir = scratch(&format!("regress-neg-{i}"));
        std::fs::write(dir.join("t.txt"), TRACE.1).unwrap();
        let out = iosteer().args(args).current_dir(&dir).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
    }
}

#[test]
fn reversed_and_zero_step_ranges_say_why() {
    for (grid, why) in [
        ("netflix:write.current=20000..10000/1000", "reversed"),
        ("netflix:write.current=10000..20000/0", "step is zero"),
    ] {
        assert_refused(&["sweep", "--vary", grid, "--chart", "-"], &[why]);
    }
    let out = iosteer()
        .args(["sweep", "--vary", "fifo", "--seed", "5..1", "--chart", "-"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("reversed"));
}

#[test]
fn device_that_is_a_directory_or_dev_null_says_so() {
    let dir = scratch("regress-devdir");
    for (device, what) in [
        (dir.to_str().unwrap(), "a directory"),
        ("/dev/null", "not a regular file"),
    ] {
        assert_refused(&["device", "show", device], &[what, "consumer-sata"]);
    }
}

#[test]
fn device_show_refuses_huge_geometry_and_stalling_trim_cost() {
    for (i, (from, to, field)) in [
        (
            "blocks_per_plane = 16\npages_per_block = 64",
            "blocks_per_plane = 65536\npages_per_block = 1024",
            "geometry",
        ),
        (
            "size_exponent = 1.0",
            "size_exponent = 1e308",
            "trim_cost.size_exponent",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let field = format!("`{field}`");
        let case = Case {
            args: &["device", "show", "d.toml"],
            files: &[],
            expect: &[],
            ok: false,
        };
        check(
            "regress-geom",
            i,
            &case,
            &[("d.toml".into(), drive_with(from, to))],
        );
        let dir =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("bad_input/regress-geom-{i}"));
        let out = iosteer()
            .args(["device", "show", "d.toml"])
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&out.stderr).contains(&field));
    }
}

#[test]
fn sweep_threads_are_capped() {
    for threads in ["10000", "0"] {
        assert_refused(
            &[
                "sweep",
                "--vary",
                "fifo",
                "--chart",
                "-",
                "--threads",
                threads,
            ],
            &["--threads", "256"],
        );
    }
}

#[test]
fn run_queue_depth_errors_name_the_flag() {
    for depth in ["0", "1000000"] {
        let args = [
            "run",
            "--emulate",
            "consumer-sata",
            "--scenario",
            "quick",
            "--queue-depth",
            depth,
        ];
        assert_refused(&args, &["--queue-depth", "4096"]);
    }
}

#[test]
fn an_ssdsim_file_with_gbk_comments_imports_and_loads_back() {
    let dir = scratch("ssdsim_gbk");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../device/tests/data/ssdsim-page.parameters"
    );
    let text = std::fs::read_to_string(fixture).unwrap();
    // As SSDsim ships it: full-width commas in GBK (A3 AC), not UTF-8.
    let gbk: Vec<u8> = text
        .split('，')
        .collect::<Vec<_>>()
        .join("\u{0}")
        .bytes()
        .flat_map(|b| if b == 0 { vec![0xa3, 0xac] } else { vec![b] })
        .collect();
    assert!(std::str::from_utf8(&gbk).is_err(), "the copy is not UTF-8");
    let source = dir.join("page.parameters");
    std::fs::write(&source, gbk).unwrap();
    let out = iosteer()
        .args(["device", "import", "ssdsim"])
        .arg(&source)
        .output()
        .unwrap();
    let toml = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        toml.contains("channels = 2") && toml.contains("page_read_us = 20.0"),
        "{toml}"
    );
    let drive = dir.join("ssdsim.toml");
    std::fs::write(&drive, &toml).unwrap();
    let shown = iosteer()
        .args(["device", "show"])
        .arg(&drive)
        .output()
        .unwrap();
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
}

#[test]
fn a_disksim_file_not_in_utf8_is_refused_not_read_around() {
    let dir = scratch("disksim_not_utf8");
    let source = dir.join("d.parv");
    // `Reserve pages percentage` with its `a` corrupted: a name read around
    // the bad byte would be unknown and left at the preset's value.
    std::fs::write(&source, b"Reserve p\xe4ges percentage = 30\n").unwrap();
    let out = iosteer()
        .args(["device", "import", "disksim"])
        .arg(&source)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("not UTF-8 text"),
        "{err}"
    );
}
