//! End to end: a fio job with `iosteer_backpressure` listens to the
//! scheduler's back-pressure; the same job without it fills the queue.

mod common;

/// Writes `fill` (a fio job body) under readers into a job file and runs it
/// with a 2 MB/s write limit; returns the `job` phase and the run's notes.
fn run(name: &str, extra: &str) -> (serde_json::Value, Vec<String>) {
    let text = format!(
        "[global]\nioengine=libaio\n[readers]\nrw=randread\nbs=128k\nrate=20m\nrate_process=poisson\niodepth=256\nruntime=8s\n\
         [fill]\nrw=write\nbs=128k\noffset=25%\nsize=10%\nrate=8m\niodepth=32\nstartdelay=1s\nruntime=6s\n{extra}"
    );
    let file = common::scratch_file(&format!("{name}.fio"), &text);
    let report = common::json_of(&[
        "sim",
        "--job",
        &file,
        "--device",
        "diskSim-slc",
        "--sched",
        "netflix:write.limiter=bandwidth,write.current=2000",
        "--json",
    ]);
    let run = &report["runs"][0];
    let notes = run["notes"]
        .as_array()
        .map(|n| n.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .unwrap_or_default();
    (run["phases"][0].clone(), notes)
}

fn write_ms(phase: &serde_json::Value, stat: &str) -> f64 {
    phase["write"]["lat_us"][stat].as_f64().unwrap() / 1e3
}

#[test]
fn a_listening_fio_job_keeps_write_latency_near_its_bound() {
    let (deaf, deaf_notes) = run("deaf", "");
    let (listening, notes) = run("listening", "iosteer_backpressure=50ms\n");
    // Deaf: 32 writes of 128 KiB queued at 2 MB/s, about 2 s each.
    assert!(write_ms(&deaf, "p99") > 1000.0, "{deaf}");
    // Listening: the bound plus one write's 66 ms at the limit.
    assert!(write_ms(&listening, "max") < 200.0, "{listening}");
    let ops = |p: &serde_json::Value| p["write"]["ops"].as_u64().unwrap();
    assert!(ops(&listening) > 60, "{listening}");
    // The readers read where the fill writes, on the drive as one device.
    let shared = |n: &String| n.starts_with("jobs of different files share blocks");
    // Deaf, its queued writes keep its phase open long past its stop.
    let held = |n: &String| n.starts_with("job fill stopped at 7.000 s and its last request");
    assert!(
        deaf_notes.iter().all(|n| shared(n) || held(n)),
        "{deaf_notes:?}"
    );
    assert!(
        deaf_notes.iter().any(held) && !notes.iter().any(held),
        "{deaf_notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("job fill listens to back-pressure (bound 50 ms)")),
        "{notes:?}"
    );
}
