use super::*;
use crate::report::PhaseReport;
use crate::test_reports::{self, class};
use iosteer_sched::Nanos;

fn phase(name: &str, read_p99_us: f64, write_mbps: f64) -> PhaseReport {
    let read = class(100, 200.0, read_p99_us);
    let all = class(150, 200.0, read_p99_us);
    test_reports::phase(name, (0.0, 10.0), [read, class(50, write_mbps, 500.0), all])
}

/// A run of the built-in scenarios' shape: `before` and `fill`.
fn run(scheduler: &str, before_p99_us: f64, fill_p99_us: f64) -> RunReport {
    let phases = vec![
        phase("before", before_p99_us, 0.0),
        phase("fill", fill_p99_us, 17.23),
        phase("all", fill_p99_us, 12.0),
    ];
    test_reports::run(scheduler, phases)
}

#[test]
fn each_run_is_judged_against_the_lowest_unloaded_p99() {
    // The second run's slow `before` (1.5 ms) does not loosen its bound:
    // both are judged against 2x the lowest, 1.14 ms.
    let runs = [
        run("fifo", 1_140.0, 436_210.0),
        run("steer", 1_500.0, 1_960.0),
        run("slow", 1_500.0, 2_900.0),
    ];
    assert_eq!(
        answers(&runs),
        [
            "fifo missed p99<=2x by 191x (436 ms against 2.28 ms) and wrote 17.2 MB/s",
            "steer met p99<=2x (1.96 ms against 2.28 ms) and wrote 17.2 MB/s",
            "slow missed p99<=2x by 1.3x (2.90 ms against 2.28 ms) and wrote 17.2 MB/s",
        ]
    );
    assert_eq!(
        judged_by(&runs).unwrap(),
        "p99<=2x (read p99 in the fill at most 2x the lowest before it: 2.28 ms)"
    );
}

#[test]
fn a_stopped_run_is_never_said_to_meet() {
    let mut stopped = run("steer", 1_000.0, 1_100.0);
    stopped.interrupted = true;
    assert_eq!(
        answers(&[stopped]),
        ["steer: fill read p99 1.10 ms; wrote 17.2 MB/s (stopped early, at 10.0 s)"]
    );
}

#[test]
fn runs_without_a_baseline_are_described_not_judged() {
    let mut job = run("fifo", 1_000.0, 5_000.0);
    job.phases.drain(..2);
    assert_eq!(judged_by(std::slice::from_ref(&job)), None);
    assert_eq!(
        answers(&[job]),
        ["fifo: read p99 5.00 ms over the run; wrote 12.0 MB/s"]
    );
    let mut empty = run("fifo", 1_000.0, 5_000.0);
    empty.phases.clear();
    assert_eq!(answers(&[empty]), ["fifo: nothing was measured"]);
}

#[test]
fn an_absolute_bound_needs_no_baseline() {
    let objective = Objective {
        metric: iosteer_sched::objective::Metric::P999,
        bound: Bound::Absolute(Nanos::from_millis(5)),
    };
    let mut job = run("fifo", 1_000.0, 5_000.0);
    job.phases.remove(0);
    assert_eq!(bound_ms(&[job], &objective), Some(5.0));
}

#[test]
fn verdicts_read_alike_for_sweeps_and_runs() {
    assert_eq!(
        verdict("steer", "p99<=2x", 1.5, 2.0, 17.23),
        "steer met p99<=2x (1.50 ms against 2.00 ms) and wrote 17.2 MB/s"
    );
    assert_eq!(
        verdict("fifo", "p99<=2x", 380.0, 2.0, 27.0),
        "fifo missed p99<=2x by 190x (380 ms against 2.00 ms) and wrote 27.0 MB/s"
    );
    assert_eq!(format_ms(0.5), "0.50 ms");
    assert_eq!(format_ms(12_345.0), "12.3 s");
}
