//! The loop end to end: jobs that listen to back-pressure against ones
//! that do not.

use iosteer_device::{DeviceConfig, Precondition, StartState};
use iosteer_sched::{LifetimeHint, Nanos};
use iosteer_workload::report::{Phase, RunReport};
use iosteer_workload::workload::{Arrival, Job, JobKind, Synthetic};

use crate::run::Simulation;

/// A sequential writer offering 8 MB/s, 64 writes deep at most, for 5 s,
/// on a fresh drive.
fn writer(backpressure: Option<Nanos>) -> Simulation {
    let fill = Synthetic {
        read_percent: 0,
        trim: false,
        sequential: true,
        block_min: 128 << 10,
        block_max: 128 << 10,
        align: 128 << 10,
        offset: 0,
        size: 1 << 30,
        arrival: Arrival {
            iops: None,
            bytes_per_s: Some(8e6),
            poisson: false,
            iodepth: 64,
            thinktime: Nanos::ZERO,
        },
        trim_ahead: Some(16 << 20),
        hint: LifetimeHint::None,
        backpressure,
    };
    let job = Job {
        name: "fill".into(),
        kind: JobKind::Synthetic(fill),
        start: Nanos::ZERO,
        stop: Some(Nanos::from_secs(5)),
        shape: Default::default(),
    };
    let device = DeviceConfig::preset("consumer-sata").unwrap();
    let mut sim = Simulation::of_jobs(device, vec![job], "run", 1, Nanos::from_secs(10));
    // While the writer runs, and after (the deaf one's queue drains).
    sim.workload.phases = vec![
        Phase {
            name: "run".into(),
            start: Nanos::ZERO,
            end: Nanos::from_secs(5),
        },
        Phase {
            name: "drain".into(),
            start: Nanos::from_secs(5),
            end: Nanos::from_secs(15),
        },
    ];
    sim.precondition = Precondition {
        state: StartState::Empty,
        seed: 1,
    };
    sim
}

fn run(sim: &Simulation, spec: &str) -> RunReport {
    let aged = sim.aged_device().unwrap();
    let report = sim.run(spec, &aged, &mut |_, _| true).unwrap();
    assert!(!report.interrupted && report.unfinished == 0);
    report
}

fn queued_writes(report: &RunReport) -> Vec<u32> {
    report.series.iter().map(|s| s.gauges.queued[1]).collect()
}

fn max_queued_writes(report: &RunReport) -> u32 {
    queued_writes(report).into_iter().max().unwrap()
}

/// A 2 MB/s write limit against a writer offering 8 MB/s: the deaf writer
/// fills the scheduler's queue up to its iodepth and its writes wait
/// seconds; the listening one keeps a write or two queued, its writes
/// wait about its bound (plus one write's 66 ms at the limit), and it
/// writes as much.
#[test]
fn a_listening_writer_keeps_the_queue_short_where_a_deaf_one_fills_it() {
    const SPEC: &str = "netflix:write.limiter=bandwidth,write.current=2000";
    let deaf = run(&writer(None), SPEC);
    let listening = run(&writer(Some(Nanos::from_millis(50))), SPEC);
    let (d, l) = (
        &deaf.phase("all").unwrap().write,
        &listening.phase("all").unwrap().write,
    );
    assert!(max_queued_writes(&deaf) >= 32, "{:?}", queued_writes(&deaf));
    assert!(d.lat_us.max > 2e6, "deaf write max {} us", d.lat_us.max);
    assert!(
        max_queued_writes(&listening) <= 2,
        "{:?}",
        queued_writes(&listening)
    );
    assert!(
        l.lat_us.max < 150e3,
        "listening write max {} us",
        l.lat_us.max
    );
    assert!(
        l.lat_us.p99 < 0.1 * d.lat_us.p99,
        "{} {}",
        l.lat_us.p99,
        d.lat_us.p99
    );
    let written = |r: &RunReport| r.phase("run").unwrap().write.ops as f64;
    assert!(
        written(&listening) >= 0.9 * written(&deaf),
        "while it ran, the listening writer wrote {} writes, the deaf one {}",
        written(&listening),
        written(&deaf)
    );
    assert!(
        listening.notes.iter().any(|n| n
            .contains("job fill listens to back-pressure (bound 50 ms)")
            && n.contains("behind when it stopped")),
        "{:?}",
        listening.notes
    );
    // The deaf writer says nothing of back-pressure (its notes name the
    // trims its writes cut).
    let listening_notes = deaf.notes.iter().filter(|n| n.contains("back-pressure"));
    assert_eq!(listening_notes.count(), 0, "{:?}", deaf.notes);
}

/// A bound the scheduler never reaches changes nothing: the listening
/// job draws and issues exactly what the deaf one does.
#[test]
fn a_bound_never_reached_changes_nothing() {
    let deaf = run(&writer(None), "fifo");
    let listening = run(&writer(Some(Nanos::from_secs(3600))), "fifo");
    assert_eq!(deaf.phases, listening.phases);
    assert_eq!(deaf.series, listening.series);
    assert!(
        listening.notes[0].contains("held 0 times"),
        "{:?}",
        listening.notes
    );
}

#[test]
fn a_trace_is_measured_until_its_last_request_completes_not_over_the_drain() {
    let device = DeviceConfig::preset("consumer-sata").unwrap();
    let mut sim = crate::workload_file::financial1_excerpt(device);
    sim.set_start_state(StartState::Empty);
    let report = run(&sim, "fifo");
    let trace = &report.phases[0];
    // The last request arrives at 259.601 s; the drain allowed 60 s more.
    assert_eq!(trace.name, "trace");
    assert!(
        (259.601..260.0).contains(&trace.end_s),
        "ends at {}",
        trace.end_s
    );
    let iops = trace.read.ops as f64 / (trace.end_s - trace.start_s);
    assert!(
        (trace.read.iops - iops).abs() < 0.1,
        "{} {iops}",
        trace.read.iops
    );
}

#[test]
fn a_trace_changed_after_it_was_checked_stops_the_run_saying_so() {
    let dir = std::env::temp_dir().join(format!("iosteer-changed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("t.ascii");
    std::fs::write(&file, "0 0 8 8 1\n1000000 0 16 8 1\n").unwrap();
    let options = crate::workload_file::TraceOptions::default();
    let device = DeviceConfig::preset("consumer-sata").unwrap();
    let path = file.to_string_lossy();
    let mut sim = crate::workload_file::trace_simulation(&path, &options, device, 1).unwrap();
    sim.set_start_state(StartState::Empty);
    let aged = sim.aged_device().unwrap();
    std::fs::write(&file, "0 0 8 8 0\n1000000 0 16 8 0\n2000000 0 24 8 0\n").unwrap();
    let report = sim.run("fifo", &aged, &mut |_, _| true).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(report.interrupted);
    let stop = report.notes.iter().find(|n| n.contains("by an error: job"));
    let why = stop.map_or("", |n| n.as_str());
    assert!(
        why.contains("changed since it was checked"),
        "{:?}",
        report.notes
    );
}

/// The scenarios' readers ask 40% of what the drive reads: of the host link,
/// or of the NAND when slower (diskSim-slc's one 40 MB/s channel under a
/// 300 MB/s link; a 16 GB/s link on consumer-sata's 8 dies). At 40% of the
/// link they asked 120 MB/s of diskSim-slc, 3 times what it reads: reads
/// queued for seconds before the fill began, and thousands never finished.
#[test]
fn the_scenarios_read_a_share_of_what_the_nand_reads_when_the_link_is_faster() {
    let read_rate = |device: DeviceConfig| {
        let sim = crate::scenario::scenario("quick", device, 1).unwrap();
        let JobKind::Synthetic(readers) = &sim.workload.jobs[0].kind else {
            panic!("synthetic readers");
        };
        readers.arrival.bytes_per_s.unwrap() / 1e6
    };
    let slc = DeviceConfig::preset("diskSim-slc").unwrap();
    assert_eq!(slc.read_mb_per_s(), 40.0);
    assert_eq!(read_rate(slc), 16.0);
    let mut fast_link = DeviceConfig::preset("consumer-sata").unwrap();
    fast_link.timing.host_link_mb_per_s = 16_000.0;
    // 8 dies x 16 KiB / 60 us.
    let nand = 8.0 * 16384.0 / 60.0;
    assert_eq!(fast_link.nand_read_mb_per_s(), nand);
    assert!((read_rate(fast_link) - 0.4 * nand).abs() < 1e-6);
    // A link slower than the NAND sets the rate, as the scenario always had it.
    assert_eq!(
        read_rate(DeviceConfig::preset("consumer-sata").unwrap()),
        220.0
    );
}

/// A drive smaller than the scenario's 128 KiB reads: its readers' range
/// rounds down to nothing, and every read, issued at offset 0, went past
/// the drive. Each failed in the drive after its 20 us of command overhead
/// and was counted as a read all the same (8 KiB drive: 13.7 MB/s of reads
/// at 20 us, "3448 requests failed in the drive" in the notes).
#[test]
fn a_scenario_refuses_a_drive_smaller_than_its_requests() {
    let mut drive = DeviceConfig::preset("consumer-sata").unwrap();
    let g = &mut drive.geometry;
    (g.channels, g.planes_per_die, g.blocks_per_plane) = (1, 1, 8);
    (g.pages_per_block, g.page_size) = (2, 2048);
    drive.ftl.mapping_unit = 2048;
    (drive.gc.low_watermark, drive.gc.high_watermark) = (2, 2);
    drive.over_provisioning = 0.7;
    drive.validate().unwrap();
    let sim = crate::scenario::scenario("quick", drive, 1).unwrap();
    let e = sim.validate().unwrap_err().to_string();
    assert_eq!(
        e,
        "job readers reaches byte 131072 but drive consumer-sata holds 8192 bytes"
    );
    // The presets' scenarios pass as they did.
    let sim = crate::scenario::scenario("quick", DeviceConfig::preset("consumer-sata").unwrap(), 1);
    sim.unwrap().validate().unwrap();
}

/// A run that stops while the drive owes GC says how much: the FTL did it
/// in its map (it is in the write amplification) and no request waited
/// for it. A drive that owes nothing says nothing.
#[test]
fn gc_the_drive_still_owes_at_the_end_is_noted() {
    let mut small = DeviceConfig::preset("consumer-sata").unwrap();
    small.geometry.blocks_per_plane = 64;
    small.gc.high_watermark = 8;
    small.over_provisioning = 0.2;
    let owed_notes = |text: &str| {
        let jobs = iosteer_workload::fio::parse(text, "t.fio", small.logical_bytes()).unwrap();
        let mut sim = Simulation::of_job_file(small.clone(), jobs, 1, Nanos::from_secs(5));
        sim.precondition = Precondition {
            state: StartState::Empty,
            seed: 1,
        };
        let notes = run(&sim, "fifo").notes;
        notes
            .into_iter()
            .filter(|n| n.contains("still owed GC"))
            .count()
    };
    let writes =
        "[w]\nioengine=libaio\nrw=randwrite\nbs=16k\niodepth=32\ntime_based\nruntime=60s\n";
    assert_eq!(owed_notes(writes), 1);
    assert_eq!(owed_notes("[r]\nrw=randread\nbs=16k\nsize=64m\n"), 0);
}

/// Stopped part way (Ctrl-C), the runs not started are named in the
/// stopped run's notes: they were just missing from every table.
#[test]
fn a_stop_names_the_runs_it_skipped() {
    let drive = DeviceConfig::preset("diskSim-slc").unwrap();
    let mut sim = crate::scenario::scenario("fill-while-serving", drive, 1).unwrap();
    sim.precondition = Precondition {
        state: StartState::Empty,
        seed: 1,
    };
    let specs = ["fifo".to_string(), "steer".into(), "netflix".into()];
    // Go on while the drive ages (time 0), stop at the first look in a run.
    let (reports, _) =
        crate::plan::run_all(&sim, &specs, &mut |_, now, _| now == Nanos::ZERO).unwrap();
    assert_eq!(reports.len(), 1);
    let said = reports[0]
        .notes
        .iter()
        .any(|n| n.contains("the runs of steer, netflix"));
    assert!(said, "{:?}", reports[0].notes);
}

/// Found by a review: a scenario stopped part way divided each phase's
/// requests by its planned length (a fill stopped 13 s into its 175 s read
/// 16.3 MB/s where it ran at 217.5), and listed the phases not reached as if
/// they had run. Phases are cut at the stop, as `iosteer run` cuts them.
#[test]
fn a_run_stopped_part_way_reports_rates_over_the_time_its_phases_ran() {
    let device = DeviceConfig::preset("consumer-sata").unwrap();
    let mut sim = crate::scenario::scenario("quick", device, 1).unwrap();
    sim.set_start_state(StartState::Empty);
    let aged = sim.aged_device().unwrap();
    // Asked every 65,536 steps: the first ask 6 s in stops the run there.
    let mut stopped_at = None;
    let mut progress = |now: Nanos, _| {
        stopped_at = stopped_at.or((now >= Nanos::from_secs(6)).then_some(now));
        stopped_at.is_none()
    };
    let report = sim.run("fifo", &aged, &mut progress).unwrap();
    let stop = stopped_at.unwrap().as_secs_f64();
    assert!(report.interrupted && (6.0..20.0).contains(&stop), "{stop}");
    let phase = |name: &str| report.phases.iter().find(|p| p.name == name).unwrap();
    let (before, fill, after) = (phase("before"), phase("fill"), phase("after"));
    assert!(
        (fill.end_s - stop).abs() < 1e-3 && after.end_s == after.start_s,
        "{fill:?}"
    );
    // The readers offer the same rate all along: the fill read at it too.
    let ratio = fill.read.mbps / before.read.mbps;
    assert!(
        (0.8..1.2).contains(&ratio),
        "{} against {}",
        fill.read.mbps,
        before.read.mbps
    );
}
