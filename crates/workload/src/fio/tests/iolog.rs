//! `read_iolog`: a job that replays fio's iolog as fio 3.33 does
//! ([`crate::fio::iolog_job`]).

use iosteer_sched::{Op, Request};

use super::*;
use crate::job_shape::IologPacing;
use crate::workload::Generator;

/// Lines a fio 3.33 `write_iolog` would write: times in microseconds. The
/// first line waits nothing (fio's last time is 0), so requests go at 20,
/// 30 and 70 us.
const V3: &str = "fio version 3 iolog
1 /tmp/a add
11 /tmp/a open
21 /tmp/a read 0 4096
31 /tmp/a write 65536 8192
71 /tmp/a trim 4096 4096
80 /tmp/a close
";

const V2: &str = "fio version 2 iolog
/tmp/a add
/tmp/a open
/tmp/a read 0 4096
/tmp/a read 4096 4096
/tmp/a wait 2 0
/tmp/a read 8192 4096
/tmp/a close
";

/// `log` in a file of a temporary directory, and a job file of `options`
/// (with `read_iolog=` that file's absolute path) beside it.
fn with_log(log: &str, options: &str) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("trace.log");
    std::fs::write(&log_path, log).unwrap();
    let log_path = log_path.to_str().unwrap().to_string();
    let job = format!("[replay]\nread_iolog={log_path}\n{options}");
    let job_path = dir.path().join("replay.fio").to_str().unwrap().to_string();
    (dir, job, job_path)
}

/// The job file of [`with_log`], parsed, with the directory that holds
/// the log (a replay reads it as it runs).
fn replay(log: &str, options: &str) -> (tempfile::TempDir, JobFile) {
    let (dir, job, job_path) = with_log(log, options);
    let file = parse_file(&job, &job_path, GIB).unwrap();
    (dir, file)
}

fn refusal(log: &str, options: &str) -> String {
    let (_dir, job, job_path) = with_log(log, options);
    parse_file(&job, &job_path, GIB).unwrap_err().to_string()
}

/// When each request was issued, on a drive that serves one request at a
/// time in `service` (the next starts when the one before ends).
fn issue_times(job: Job, service: Nanos) -> Vec<(Nanos, Op)> {
    let mut generator = Generator::new(job, 0, 1);
    let (mut next_id, mut out) = (0, Vec::new());
    let mut queue: std::collections::VecDeque<(Nanos, Request)> = Default::default();
    let mut busy_until = Nanos::ZERO;
    let mut issued = Vec::new();
    let mut clock = Nanos::ZERO;
    loop {
        let completion = queue.front().map(|(at, _)| *at);
        let next = generator.next_at();
        // Time never goes back: a job held by its depth issues when freed.
        let next = next.map(|n| n.max(clock));
        let now = match (next, completion) {
            (None, None) => break,
            (Some(n), Some(c)) if c < n => c,
            (Some(n), _) => n,
            (None, Some(c)) => c,
        };
        clock = now;
        if completion == Some(now) && next.is_none_or(|n| now < n) {
            let (_, request) = queue.pop_front().unwrap();
            generator.completed(&request, now);
            continue;
        }
        out.clear();
        generator.issue(now, &mut next_id, &mut out);
        for request in out.drain(..) {
            busy_until = busy_until.max(now) + service;
            issued.push((now, request.op));
            queue.push_back((busy_until, request));
        }
    }
    issued
}

#[test]
fn a_read_iolog_job_replays_the_log_in_place_of_rw_bs_and_size() {
    let (_dir, file) = replay(
        V3,
        "ioengine=libaio\nrw=randread\nbs=64k\nsize=1m\niodepth=4\n",
    );
    let job = &file.jobs[0];
    let JobKind::Trace(records) = &job.kind else {
        panic!("not a trace job")
    };
    assert_eq!(records.summary().requests, 3);
    assert_eq!(
        job.shape.iolog_pacing,
        Some(IologPacing {
            iodepth: 4,
            waits_from_previous: true
        })
    );
    let requests = Generator::new(job.clone(), 0, 1).requests_unloaded();
    let got: Vec<(Op, u64, u64)> = requests
        .iter()
        .map(|r| (r.op, r.offset.0, r.len.0))
        .collect();
    assert_eq!(
        got,
        [
            (Op::Read, 0, 4096),
            (Op::Write, 65536, 8192),
            (Op::Trim, 4096, 4096)
        ]
    );
    assert_noted(
        &file,
        "a version 3 iolog of 3 requests, replayed as fio replays it: at most iodepth=4 out",
    );
    assert_noted(
        &file,
        "rw, bs, size accepted: the iolog's requests replace their I/O",
    );
}

#[test]
fn version_3_gaps_count_from_the_request_before_and_the_iodepth_caps() {
    // 15 us a request at iodepth 1: the write, due 10 us after the read,
    // waits for it to end (35 us, 5 late); the trim, 40 us after the
    // write, goes 40 us after the write went (75), not at its log time (70).
    let (_dir, file) = replay(V3, "iodepth=1\n");
    let times = issue_times(file.jobs[0].clone(), Nanos::from_micros(15));
    assert_eq!(
        times,
        [
            (Nanos::from_micros(20), Op::Read),
            (Nanos::from_micros(35), Op::Write),
            (Nanos::from_micros(75), Op::Trim),
        ]
    );
    // A deep queue keeps the log's times.
    let (_dir, file) = replay(V3, "ioengine=libaio\niodepth=8\n");
    let times = issue_times(file.jobs[0].clone(), Nanos::from_micros(15));
    let at: Vec<Nanos> = times.iter().map(|t| t.0).collect();
    assert_eq!(at, [20, 30, 70].map(Nanos::from_micros));
    // replay_no_stall: as fast as the depth allows.
    let (_dir, file) = replay(V3, "iodepth=1\nreplay_no_stall=1\n");
    let times = issue_times(file.jobs[0].clone(), Nanos::from_micros(15));
    let at: Vec<Nanos> = times.iter().map(|t| t.0).collect();
    assert_eq!(at, [0, 15, 30].map(Nanos::from_micros));
}

#[test]
fn version_2_goes_as_fast_as_the_iodepth_and_waits_until_a_time_since_the_start() {
    let (_dir, file) = replay(V2, "iodepth=1\n");
    assert_eq!(
        file.jobs[0]
            .shape
            .iolog_pacing
            .map(|p| p.waits_from_previous),
        Some(false)
    );
    let times = issue_times(file.jobs[0].clone(), Nanos::from_micros(300));
    let at: Vec<Nanos> = times.iter().map(|t| t.0).collect();
    assert_eq!(at, [0, 300, 2000].map(Nanos::from_micros));
    // Behind by then: `wait 2` (ms since the start) holds nothing.
    let times = issue_times(file.jobs[0].clone(), Nanos::from_millis(3));
    let at: Vec<Nanos> = times.iter().map(|t| t.0).collect();
    assert_eq!(at, [0, 3, 6].map(Nanos::from_millis));
}

#[test]
fn options_a_replay_does_not_model_are_refused_by_name_and_line() {
    let e = refusal(V3, "rate=1m\n");
    assert!(
        e.contains("replay.fio:3: job [replay]: option `rate` with read_iolog: not modelled"),
        "{e}"
    );
    for (options, says) in [
        ("numjobs=2\n", "option `numjobs` with read_iolog"),
        (
            "replay_skip=read,flush\n",
            "`flush`: expected a comma-separated list of read, write, trim, sync",
        ),
        ("replay_align=3000\n", "expected a power of two"),
        ("replay_time_scale=0\n", "1 or more"),
    ] {
        let e = refusal(V3, options);
        assert!(e.contains(says), "{options}: {e}");
    }
    for (value, says) in [
        ("-", "standard input, is not read"),
        ("a.log:b.log", "one file (fio's `:` list"),
    ] {
        let e = parse(&format!("[r]\nread_iolog={value}\n"), "r.fio", GIB)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("r.fio:2:") && e.contains(says), "{e}");
    }
    let e = parse("[r]\nread_iolog=surely-not-here.log\n", "r.fio", GIB)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no such file (fio opens a relative name from the current directory)"),
        "{e}"
    );
    let e = refusal("0 0 1 8 1\n", "");
    assert!(e.contains("is not an iolog's first line"), "{e}");
}

#[test]
fn a_log_beside_the_job_file_is_not_opened_but_named() {
    let (dir, _, job_path) = with_log(V3, "");
    let e = parse_file("[r]\nread_iolog=trace.log\n", &job_path, GIB)
        .unwrap_err()
        .to_string();
    let beside = dir.path().join("trace.log");
    assert!(
        e.contains("where fio opens it too (not beside the job file)")
            && e.contains(beside.to_str().unwrap()),
        "{e}"
    );
}

#[test]
fn files_lie_apart_unless_redirected_and_replay_options_alone_are_noted() {
    let two =
        "fio version 2 iolog\n/b add\n/a add\n/a open\n/b open\n/a write 0 4096\n/b write 0 4096\n";
    let requests = |file: &JobFile| Generator::new(file.jobs[0].clone(), 0, 1).requests_unloaded();
    let (_dir, apart) = replay(two, "");
    // Where the files start on the simulated drive is not noted: `iosteer
    // run` replays each onto its own file.
    let laid = apart.notes.iter().find(|n| n.contains("laid side by side"));
    assert_eq!(laid, None);
    let apart = requests(&apart);
    assert_eq!((apart[0].offset.0, apart[1].offset.0), (0, 1 << 20));
    let redirected = requests(&replay(two, "replay_redirect=/dev/sdb\n").1);
    assert_eq!((redirected[0].offset.0, redirected[1].offset.0), (0, 0));

    let file = file_of("[a]\nrw=read\nreplay_no_stall=1\nwrite_iolog=a.log\n");
    assert!(matches!(file.jobs[0].kind, JobKind::Synthetic(_)));
    assert_noted(
        &file,
        "`replay_no_stall` without read_iolog changes nothing, as in fio",
    );
}

/// A job file replaying the ascii trace `trace` through `iosteer_trace`
/// with `options`, parsed (or its error), and the trace's directory.
fn traced(trace: &str, options: &str) -> (tempfile::TempDir, Result<JobFile, FioError>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, trace).unwrap();
    let job = format!("[prod]\niosteer_trace={}\n{options}", path.display());
    let job_path = dir.path().join("t.fio").to_string_lossy().into_owned();
    let parsed = parse_file(&job, &job_path, GIB);
    (dir, parsed)
}

/// fio replays a blktrace binary file given to `read_iolog`; here it is
/// refused saying what it is and how to replay it (it said "stream did
/// not contain valid UTF-8").
#[test]
fn a_blktrace_file_as_read_iolog_says_how_to_replay_it() {
    let path = format!(
        "{}/../../traces/synthetic.blktrace.0",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = format!("[r]\nread_iolog={path}\n");
    let err = parse(&text, "t.fio", GIB).unwrap_err().to_string();
    assert!(
        err.contains("a blktrace binary file") && err.contains("iosteer_trace_format=blktrace"),
        "{err}"
    );
}

/// An `iosteer_trace` lies in its job's region, from its `offset` (a review
/// found it at byte 0 whatever the offset, two traced jobs overlapping),
/// and a job file may give the replay's event and speed as the command
/// line does.
#[test]
fn an_iosteer_trace_lies_from_its_job_s_offset_at_its_speed() {
    let ascii = "0 0 0 8 1\n1000000 0 8 8 1\n";
    let options = "offset=64m\nsize=1m\niosteer_trace_speed=2\niosteer_trace_event=queue\n";
    let (_dir, file) = traced(ascii, options);
    let file = file.unwrap();
    let JobKind::Trace(records) = &file.jobs[0].kind else {
        panic!("not a trace job")
    };
    let got: Vec<(u64, u64)> = records
        .cursor()
        .map(|r| r.unwrap())
        .map(|r| (r.at.0, r.offset))
        .collect();
    assert_eq!(got, [(0, 64 << 20), (500_000, (64 << 20) + 4096)]);
    assert!(
        !file.notes.iter().any(|n| n.contains("offset accepted")),
        "{:?}",
        file.notes
    );
    // An ascii trace has one event a request: an issue event is refused.
    let (_dir, refused) = traced(ascii, "iosteer_trace_event=issue\n");
    let err = refused.unwrap_err().to_string();
    assert!(err.contains("ascii traces have one event"), "{err}");
}

#[test]
fn an_iosteer_trace_job_replays_any_format_open_loop() {
    let msr = "128166372003061629,hm,0,Read,8192,4096,1\n\
               128166372003161629,hm,0,Write,0,8192,1\n\
               128166372013061629,hm,0,Read,4096,4096,1\n";
    let options = "iosteer_trace_format=msr\niosteer_trace_window=..1s\nrw=randread\niodepth=4\n";
    let (_dir, file) = traced(msr, options);
    let file = file.unwrap();
    let job = &file.jobs[0];
    let JobKind::Trace(records) = &job.kind else {
        panic!("not a trace job")
    };
    // Open loop: no pacing; the window keeps the first two.
    assert_eq!(job.shape.iolog_pacing, None);
    let got: Vec<(u64, Op)> = records
        .cursor()
        .map(|r| r.unwrap())
        .map(|r| (r.at.0, r.op))
        .collect();
    assert_eq!(got, [(0, Op::Read), (10_000_000, Op::Write)]);
    assert_noted(&file, "2 requests of the msr trace, replayed open loop");
    assert_noted(&file, "rw accepted: the trace's requests replace their I/O");
    for (options, expected) in [
        ("iosteer_trace_format=csv\n", "expected ascii, spc, msr"),
        (
            "replay_skip=read\n",
            "option `replay_skip` with iosteer_trace",
        ),
        (
            "read_iolog=x.log\n",
            "iosteer_trace and read_iolog: give one replay",
        ),
        ("iosteer_trace_window=5s..1s\n", "the window is empty"),
    ] {
        let (_dir, err) = traced(msr, options);
        let err = err.unwrap_err().to_string();
        assert!(err.contains(expected), "{options}: {err}");
    }
    let err = parse_file("[j]\nrw=read\niosteer_trace_fit=wrap\n", "j.fio", GIB).unwrap_err();
    assert!(err.to_string().contains("without iosteer_trace"), "{err}");
}

/// A trace job's `size` is the region its trace is fitted to: a trace
/// reaching 30 GiB with `size=8m iosteer_trace_fit=wrap` wrapped nothing
/// (the size was taken as replaced) and `iosteer run` laid out a 30 GiB
/// file for 267 requests.
#[test]
fn a_trace_jobs_size_is_the_region_it_is_fitted_to() {
    let msr = "128166372003061629,hm,0,Read,8192,4096,1\n\
               128166372003161629,hm,0,Write,536870912,8192,1\n";
    let (_dir, file) = traced(
        msr,
        "iosteer_trace_format=msr\nsize=8m\niosteer_trace_fit=wrap\n",
    );
    let file = file.unwrap();
    let JobKind::Trace(records) = &file.jobs[0].kind else {
        panic!("not a trace job")
    };
    let ends: Vec<u64> = records
        .cursor()
        .map(|r| r.unwrap())
        .map(|r| r.offset + r.len)
        .collect();
    assert!(ends.iter().all(|&end| end <= 8 << 20), "{ends:?}");
    assert_noted(&file, "addresses remapped to fit");
    let (_dir, refused) = traced(msr, "iosteer_trace_format=msr\nsize=8m\n");
    assert!(refused.is_err());
}

#[test]
fn a_version_3_line_earlier_than_the_one_before_waits_nothing_and_is_counted() {
    let back = V3.replace("71 /tmp/a trim", "25 /tmp/a trim");
    let (_dir, file) = replay(&back, "ioengine=libaio\niodepth=8\n");
    let times = issue_times(file.jobs[0].clone(), Nanos::from_micros(15));
    let at: Vec<Nanos> = times.iter().map(|t| t.0).collect();
    assert_eq!(at, [20, 30, 30].map(Nanos::from_micros));
    let noted = file
        .notes
        .iter()
        .any(|n| n.contains("1 lines of a version 3 log earlier"));
    assert!(noted, "{:?}", file.notes);
}
