//! End-to-end tests of `iosteer run` on a file in the build machine's temp
//! directory. Where io_uring is not permitted they print a SKIPPED line (so
//! the skip shows in the test output) and pass.

use assert_cmd::Command;

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("iosteer-run-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const MIX: &str = "\
[global]
ioengine=io_uring
direct=1
size=16m
runtime=1s
time_based

[readers]
rw=randread
bs=4k
iodepth=8

[writer]
rw=randwrite
bs=16k
iodepth=2
rate=8m
";

#[test]
fn a_verified_mixed_run_reports_in_the_simulators_schema_without_mismatches() {
    let dir = temp_dir("mix");
    let job = dir.join("mix.fio");
    std::fs::write(&job, MIX).unwrap();
    let target = dir.join("target.img");
    let out = Command::cargo_bin("iosteer")
        .unwrap()
        .args(["run", "--target"])
        .arg(&target)
        .args(["--size", "16m", "--job"])
        .arg(&job)
        .args([
            "--sched",
            "netflix:write.limiter=queue_depth,write.current=1",
        ])
        .args(["--verify", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("io_uring is not available") {
        eprintln!("SKIPPED (counted): {stderr}");
        return;
    }
    assert!(out.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &report["runs"][0];
    assert_eq!(run["verify"]["mismatches"], 0, "{run}");
    assert!(run["verify"]["blocks"].as_u64().unwrap() > 0);
    assert!(run["device"].is_null(), "a real target has no drive model");
    let all = run["phases"].as_array().unwrap().last().unwrap();
    assert_eq!(all["name"], "all");
    assert!(all["read"]["ops"].as_u64().unwrap() > 100);
    assert!(all["write"]["ops"].as_u64().unwrap() > 10);
    assert!(all["read"]["lat_us"]["p99"].as_f64().unwrap() > 0.0);
    assert!(stderr.contains("queued"), "a line per second: {stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_run_input_is_a_clear_error() {
    let dir = temp_dir("bad");
    let job = dir.join("bad.fio");
    std::fs::write(&job, "[j]\nrw=randread\nbogus=1\n").unwrap();
    let out = Command::cargo_bin("iosteer")
        .unwrap()
        .args(["run", "--target"])
        .arg(dir.join("t.img"))
        .args(["--size", "1m", "--job"])
        .arg(&job)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.fio:3") && stderr.contains("bogus"),
        "{stderr}"
    );
    let out = Command::cargo_bin("iosteer")
        .unwrap()
        .args(["run", "--target", "/nonexistent/x.img", "--job"])
        .arg(&job)
        .args(["--sched", "nope"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("fifo"));
    std::fs::remove_dir_all(&dir).unwrap();
}
