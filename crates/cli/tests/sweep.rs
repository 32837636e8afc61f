//! End-to-end tests of `iosteer sweep` on the `quick` scenario.

mod common;
use common::{each_str, outcome, repo_file, stderr_of_failure};

fn sweep(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["sweep", "quick"];
    all.extend(args);
    common::json_of(&all)
}

/// The point `report` (of a sweep) names best: there must be one, and it
/// meets the objective.
fn best_point(report: &serde_json::Value) -> &serde_json::Value {
    let best = report["best"].as_str().expect("a best setting");
    let points = report["points"].as_array().unwrap();
    let point = points.iter().find(|p| p["spec"] == best).unwrap();
    assert_eq!(point["meets"], true, "{point}");
    point
}

#[test]
fn a_grid_runs_every_point_in_order_whatever_the_threads_and_marks_the_best() {
    let dir = common::temp_dir("sweep");
    let chart = dir.path().join("sweep.svg");
    let args = [
        "--vary",
        "netflix:write.limiter=queue_depth,write.current=1,4",
        "--vary",
        "netflix:write.limiter=bandwidth,write.current=10000..20000/10000",
        "--sched",
        "fifo",
        "--objective",
        "p99<=1000ms",
        "--json",
    ];
    let mut one = args.to_vec();
    one.extend(["--threads", "1", "--chart", chart.to_str().unwrap()]);
    let a = sweep(&one);
    let mut two = args.to_vec();
    two.extend(["--threads", "3", "--chart", "-"]);
    let b = sweep(&two);
    assert_eq!(
        each_str(&a["points"], "spec"),
        [
            "netflix:write.limiter=queue_depth,write.current=1",
            "netflix:write.limiter=queue_depth,write.current=4",
            "netflix:write.limiter=bandwidth,write.current=10000",
            "netflix:write.limiter=bandwidth,write.current=20000",
            "fifo",
        ]
    );
    assert_eq!(a["points"], b["points"], "same output on 1 and 3 threads");
    // The best point meets the objective and writes the most among those that do.
    let points = a["points"].as_array().unwrap();
    let meeting: Vec<&serde_json::Value> = points.iter().filter(|p| p["meets"] == true).collect();
    let top = meeting
        .iter()
        .map(|p| p["write_mbps"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let best = best_point(&a);
    assert_eq!(best["write_mbps"].as_f64().unwrap(), top);
    // A bandwidth limit of 10 MB/s writes about 10 MB/s.
    let w = points[2]["write_mbps"].as_f64().unwrap();
    assert!((8.0..=10.5).contains(&w), "{w}");
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(
        svg.contains("<svg") && svg.contains("best"),
        "chart marks the best"
    );
}

/// `--out DIR` takes the chart too, unless `--chart` puts it elsewhere.
#[test]
fn out_dir_gets_the_report_the_json_and_the_chart() {
    let dir = common::temp_dir("sweep-out");
    let out = dir.path().join("out");
    let args = [
        "sweep",
        "quick",
        "--sched",
        "fifo",
        "--out",
        out.to_str().unwrap(),
    ];
    common::outcome(args).succeeded();
    let mut files: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["report.html", "sweep.json", "sweep.svg"]);
}

#[test]
fn an_impossible_objective_has_no_best_and_bad_grids_are_refused() {
    let r = sweep(&[
        "--sched",
        "fifo",
        "--objective",
        "p99<=1us",
        "--json",
        "--chart",
        "-",
    ]);
    assert!(r["best"].is_null());
    for bad in [
        &["--vary", "netflix:write.current=5..1/1"][..],
        &["--objective", "p99<=fast"],
        &["--static-points", "3"],
        &["--objective", "p99<=3x", "--objective", "p99<=2x"],
    ] {
        let mut args = vec!["sweep", "quick", "--sched", "fifo", "--chart", "-"];
        args.extend(bad);
        assert!(stderr_of_failure(&args).contains(bad[0]), "{bad:?}");
    }
}

#[test]
fn several_seeds_run_every_point_on_each_and_it_meets_only_on_all() {
    let dir = common::temp_dir("sweep-seeds");
    let chart = dir.path().join("sweep.svg");
    let r = sweep(&[
        "--seed",
        "1,2",
        "--sched",
        "fifo",
        "--sched",
        "netflix:write.limiter=bandwidth,write.current=5000",
        "--objective",
        "p99<=2x",
        "--json",
        "--chart",
        chart.to_str().unwrap(),
    ]);
    assert_eq!(r["seeds"], serde_json::json!([1, 2]));
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(
        svg.contains("each seed") && svg.contains("lowest to highest of 2 seeds"),
        "the chart shows every seed's point and the spread of write rates"
    );
    let per_seed = r["per_seed"].as_array().unwrap();
    assert_eq!(per_seed.len(), 2);
    for (i, point) in r["points"].as_array().unwrap().iter().enumerate() {
        let runs: Vec<&serde_json::Value> = per_seed.iter().map(|s| &s[i]).collect();
        let met = runs.iter().filter(|p| p["meets"] == true).count();
        assert_eq!(point["seeds_met"].as_u64().unwrap() as usize, met);
        assert_eq!(point["meets"] == true, met == 2);
        let mean = runs
            .iter()
            .map(|p| p["write_mbps"].as_f64().unwrap())
            .sum::<f64>()
            / 2.0;
        assert!((point["write_mbps"].as_f64().unwrap() - mean).abs() < 1e-9);
    }
    assert_ne!(
        per_seed[0], per_seed[1],
        "each seed has its own drive and arrivals"
    );
}

#[test]
fn bad_seeds_are_refused_naming_the_option() {
    for bad in ["", "x", "3..1", "1..", "1,1", "0..1000", "1;2"] {
        let e = stderr_of_failure(&[
            "sweep", "quick", "--sched", "fifo", "--chart", "-", "--seed", bad,
        ]);
        assert!(e.contains("--seed"), "{bad}: {e}");
    }
}

/// `iosteer sweep` with `args` (no scenario), its stdout, stderr and success.
fn sweep_workload(args: &[&str]) -> (serde_json::Value, String, bool) {
    let mut all = vec!["sweep"];
    all.extend(args);
    all.extend(["--chart", "-", "--json"]);
    let out = outcome(&all);
    (out.json(), out.stderr, out.ok)
}

/// The report of `iosteer sweep` of `workload` (its options) with
/// `options`, judged by `objective` in `phase` against `baseline`: it must
/// succeed, in `phase`.
fn swept(
    workload: &[&str],
    objective: &str,
    (baseline, phase): (&str, &str),
    options: &[&str],
) -> serde_json::Value {
    let mut args = workload.to_vec();
    args.extend(["--objective", objective]);
    args.extend(["--baseline", baseline, "--phase", phase]);
    args.extend(options);
    let (report, stderr, ok) = sweep_workload(&args);
    assert!(ok, "{stderr}");
    assert_eq!(report["phase"], phase);
    report
}

#[test]
fn a_job_file_sweeps_with_its_job_phases_as_measured_and_baseline() {
    let job = repo_file("examples/fill-while-serving.fio");
    let r = swept(
        &["--job", &job],
        "p99<=2x",
        ("readers", "readers+fill"),
        &[
            "--vary",
            "netflix:write.limiter=bandwidth,write.current=10000..20000/10000",
        ],
    );
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for (p, mbps) in points.iter().zip([10.0, 20.0]) {
        let w = p["write_mbps"].as_f64().unwrap();
        assert!((w - mbps).abs() < 1.0, "{w}");
        // The bound is twice the readers-only phase's p99, judged.
        let base = p["baseline_ms"].as_f64().unwrap();
        assert!((p["bound_ms"].as_f64().unwrap() - 2.0 * base).abs() < 0.01);
        assert!(p["meets"].is_boolean());
    }
    // A job file has no `fill` phase: both phases must be named.
    let (_, stderr, ok) = sweep_workload(&["--job", &job, "--sched", "fifo"]);
    assert!(
        !ok && stderr.contains("--phase NAME and --baseline NAME"),
        "{stderr}"
    );
}

#[test]
fn a_trace_sweeps_between_time_windows_and_bad_windows_are_refused() {
    let trace = &repo_file("traces/financial1-excerpt.ascii");
    let r = swept(
        &["--trace", trace],
        "p99<=2x",
        ("0s..60s", "60s..200s"),
        &["--sched", "fifo"],
    );
    let point = &r["points"][0];
    assert!(point["baseline_ms"].as_f64().unwrap() > 0.0);
    assert!(point["value_ms"].as_f64().unwrap() > 0.0);
    // A window of the trace: its phases count from the window's start, and
    // the report says which window it was.
    let windowed = swept(
        &["--trace", trace, "--trace-window", "60s..200s"],
        "p99<=2x",
        ("0s..60s", "60s..100s"),
        &["--sched", "fifo"],
    );
    let label = format!("{trace} --trace-window 60s..200s");
    assert_eq!(windowed["scenario"], label.as_str());
    for (baseline, window, says) in [
        ("0s..60s", "60s..30s", "ends where or before it starts"),
        ("0s..60s", "300s..400s", "outside the run"),
        ("0s..60s", "0s..1000s", "outside the run"),
        ("0s..60s", "60s-200s", "no phase"),
        (
            "0s..x",
            "trace",
            "--baseline `0s..x`: expected a time window",
        ),
    ] {
        let (_, stderr, ok) = sweep_workload(&[
            "--trace",
            trace,
            "--baseline",
            baseline,
            "--phase",
            window,
            "--sched",
            "fifo",
        ]);
        assert!(!ok, "{window}");
        assert!(stderr.contains(says), "{window}: {stderr}");
    }
}

/// The ftrace sample recorded on this machine's disk (traces/) swept
/// between two time windows of its 2 s: a best setting is found, and it is
/// one that meets the objective.
#[test]
fn the_recorded_sample_sweeps_between_windows_to_a_best_setting() {
    let trace = &repo_file("traces/vda-ftrace-sample.txt");
    let r = swept(
        &[
            "--trace",
            trace,
            "--trace-format",
            "ftrace",
            "--trace-fit",
            "wrap",
        ],
        "p99<=50ms",
        ("0s..1s", "1s..2s"),
        &[
            "--sched",
            "fifo",
            "--vary",
            "netflix:write.limiter=bandwidth,write.current=1000,20000",
        ],
    );
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 3);
    for p in points {
        assert!(p["value_ms"].as_f64().unwrap() > 0.0, "{p}");
    }
    best_point(&r);
}

/// A family drive where steer once missed `p99<=2x` (1.7x, seed 1): its GC
/// bursts ran the budget 30 to 65 allowances into debt, and the budget
/// forgave all past 10. Paid back in full it meets, writing more than half
/// the best static limit that meets (10.2 MB/s on this drive).
#[test]
fn steer_pays_back_a_gc_burst_and_meets_on_family_6() {
    let r = common::json_of(&[
        "sweep",
        "fill-while-serving",
        "--device",
        "family:6",
        "--seed",
        "1",
        "--objective",
        "p99<=2x",
        "--sched",
        "steer:objective=p99<=2x",
        "--chart",
        "-",
        "--json",
    ]);
    let point = &r["points"][0];
    assert_eq!(point["meets"], true, "{point}");
    let mbps = point["write_mbps"].as_f64().unwrap();
    assert!(mbps > 5.1, "{point}");
}

/// A slow drive whose best static limit lies below the grid (6%/2 of its
/// 300 MB/s link is 9 MB/s): the family sweep halves on below the grid until
/// a limit meets, instead of reporting that none does.
#[test]
fn a_family_sweep_halves_below_its_grid_until_a_static_limit_meets() {
    let r = common::json_of(&fifo_on_family("family:27..27"));
    let drive = &r["objectives"][0]["drives"][0];
    let spec = drive["best_static"].as_str().expect("a static limit meets");
    let kb: u64 = spec.rsplit('=').next().unwrap().parse().unwrap();
    assert!((10..=1000).contains(&kb), "{drive}");
    assert!(
        drive["settings"][0]["ratio"].as_f64().unwrap() > 1.0,
        "{drive}"
    );
}

/// A two-point family sweep of `fifo` at `p99<=2x` on `drives`, seed 1.
fn fifo_on_family(drives: &str) -> [&str; 15] {
    [
        "sweep",
        "fill-while-serving",
        "--device",
        drives,
        "--seed",
        "1",
        "--static-points",
        "2",
        "--objective",
        "p99<=2x",
        "--sched",
        "fifo",
        "--chart",
        "-",
        "--json",
    ]
}

/// Ctrl-C in a family sweep stops it after the drive under way, and the
/// report covers the drives run, saying how many were asked for.
#[test]
fn ctrl_c_stops_a_family_sweep_after_its_drive_and_keeps_it() {
    // Well after the handler is installed, well before a drive's runs end
    // (later on a loaded machine, where the first drive starts later).
    let wait = std::time::Duration::from_secs(2);
    let started = |out: &common::Outcome| {
        out.json()["objectives"][0]["drives"]
            .as_array()
            .is_some_and(|d| !d.is_empty())
    };
    let out = common::interrupted_when_landed(&fifo_on_family("family:27..29"), wait, started);
    let r = out.succeeded().json();
    assert_eq!(r["drives_asked"], 3);
    // The drive under way at the Ctrl-C is the first, or on a fast machine
    // the second: either way the third never starts.
    let drives = r["objectives"][0]["drives"].as_array().unwrap();
    assert!((1..3).contains(&drives.len()), "{r}");
}

/// Ctrl-C in a sweep stops it after the runs under way; the settings run
/// on every seed are judged and the others named, not thrown away.
#[test]
fn ctrl_c_stops_a_sweep_after_its_runs_under_way_and_keeps_them() {
    let args = [
        "sweep",
        "quick",
        "--vary",
        "netflix:read_bias=1..200/1",
        "--seed",
        "1",
        "--threads",
        "1",
        "--chart",
        "-",
        "--json",
    ];
    // After the drive's aging (about a second, more on a loaded machine)
    // and a run, long before 200 runs end.
    let one_judged = |out: &common::Outcome| {
        out.json()["points"]
            .as_array()
            .is_some_and(|p| !p.is_empty())
    };
    let wait = std::time::Duration::from_secs(4);
    let out = common::interrupted_when_landed(&args, wait, one_judged);
    let r = out.succeeded().json();
    let (judged, not_run) = (
        r["points"].as_array().unwrap(),
        r["not_run"].as_array().unwrap(),
    );
    assert!(!judged.is_empty() && !not_run.is_empty(), "{r}");
    assert_eq!(judged.len() + not_run.len(), 200, "{r}");
}
