//! End-to-end tests of `iosteer probe` on the emulated drive: the consumer
//! SATA preset cut to a quarter of its blocks (aging the full preset takes
//! 8 s in the test profile, this one 2 s), with 2 s steps.

use serde_json::Value;

mod common;
use common::{iosteer, temp_dir};

/// consumer-sata with 128 blocks per plane instead of 544; the probe keeps
/// 4 blocks per die above the low watermark anyway, and a smaller drive
/// needs the lower high watermark to hold its logical capacity.
fn small_sata(dir: &std::path::Path) -> std::path::PathBuf {
    let out = iosteer()
        .args(["device", "show", "consumer-sata"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let toml = String::from_utf8(out.stdout)
        .unwrap()
        .replace("blocks_per_plane = 544", "blocks_per_plane = 128")
        .replace("high_watermark = 48", "high_watermark = 8");
    let path = dir.join("small-sata.toml");
    std::fs::write(&path, toml).unwrap();
    path
}

#[test]
fn a_probe_steps_the_write_rate_up_and_marks_the_best_rate_meeting_the_objective() {
    let dir = temp_dir("ramp");
    let drive = small_sata(dir.path());
    let out_dir = dir.path().join("out");
    let out = iosteer()
        .args(["probe", "--emulate"])
        .arg(&drive)
        .args([
            "--rates",
            "5m,10m,20m",
            "--step-time",
            "2s",
            "--settle",
            "500ms",
        ])
        .args(["--objective", "p99<=4x", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("read p99 <= 4x baseline"), "{table}");
    assert!(
        table.contains("asked MB/s") && table.contains("baseline"),
        "{table}"
    );
    assert!(table.contains("<- best"), "{table}");
    assert!(
        table.contains("highest write rate meeting the objective"),
        "{table}"
    );

    let page = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(
        page.contains("kept read p99 at") && page.contains("<svg"),
        "report.html"
    );
    let text = std::fs::read_to_string(out_dir.join("probe.json")).unwrap();
    let report: Value = serde_json::from_str(&text).unwrap();
    let baseline = &report["baseline"];
    assert!(baseline["rate_bytes_per_s"].is_null(), "{baseline}");
    assert_eq!(baseline["write_mbps"], 0.0, "the baseline has no writes");
    assert!(baseline["read_ops"].as_u64().unwrap() > 1000, "{baseline}");

    let steps = report["steps"].as_array().unwrap();
    let asked: Vec<u64> = steps
        .iter()
        .map(|s| s["rate_bytes_per_s"].as_u64().unwrap())
        .collect();
    let written: Vec<f64> = steps
        .iter()
        .map(|s| s["write_mbps"].as_f64().unwrap())
        .collect();
    assert!(steps.len() >= 2, "{report}");
    assert_eq!(asked[..2], [5 << 20, 10 << 20]);
    assert!(
        written.windows(2).all(|w| w[1] > w[0] * 1.5),
        "write MB/s grows with the asked rate: {written:?}"
    );
    for (a, w) in asked.iter().zip(&written) {
        assert!(
            *w <= *a as f64 / 1e6 * 1.05,
            "the limiter holds writes to the rate: {written:?}"
        );
    }

    let bound = report["bound_ms"].as_f64().unwrap();
    let base_p99 = baseline["read_p99_ms"].as_f64().unwrap();
    assert!((bound - 4.0 * base_p99).abs() < 1e-9, "{report}");
    let best = &steps[report["best"].as_u64().expect("a rate meets 4x") as usize];
    assert_eq!(best["meets"], true, "{best}");
    assert!(best["value_ms"].as_f64().unwrap() <= bound, "{best}");
    assert!(
        best["spec"]
            .as_str()
            .unwrap()
            .contains("write.limiter=bandwidth"),
        "{best}"
    );

    let csv = std::fs::read_to_string(out_dir.join("probe.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 1 + steps.len(), "{csv}");
    let svg = std::fs::read_to_string(out_dir.join("probe.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("objective"), "chart");
}

#[test]
fn bad_probe_options_are_clear_errors() {
    let cases: [(&[&str], &str); 10] = [
        (&["--objective", "p98<=2x"], "--objective p98<=2x"),
        (&["--rates", "10m,5m"], "must increase"),
        (&["--rates", "4m,4m"], "--rates 4m,4m"),
        (&["--rates", "0"], "--rates 0"),
        (
            &["--start", "10m", "--max", "5m"],
            "--max 5m: below --start 10m",
        ),
        (&["--sched", "deadline"], "--throttle writer"),
        (&["--step", "1", "--max", "1g"], "steps; at most 1000"),
        (&["--step-time", "1s", "--settle", "2s"], "--settle"),
        (&["--write-bs", "1000"], "--write-bs 1000"),
        (&["--throttle", "bogus"], "scheduler"),
    ];
    for (args, expected) in cases {
        let out = iosteer()
            .args(["probe", "--emulate", "diskSim-slc"])
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// A target that fails the probe's writes (a full file system) stops it
/// with an error: its steps' figures would leave those writes out (found by
/// a review: it picked a "best" rate and exited 0).
#[test]
fn a_probe_whose_writes_fail_stops_with_an_error() {
    let Some(fs) = common::Tmpfs::mount("probe-enospc", "1m") else {
        eprintln!("SKIPPED (counted): cannot mount a tmpfs here");
        return;
    };
    let target = fs.sparse_file("sparse", 16 << 20);
    let mut probe = common::iosteer();
    probe.args(["probe", "--target"]).arg(&target);
    probe.args(["--rates", "1m,2m", "--step-time", "1s", "--settle", "200ms"]);
    let Some((out, stderr)) = common::output_unless_no_uring(&mut probe) else {
        return;
    };
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("requests failed in a step"), "{stderr}");
}
