//! fio compatibility end to end in the simulator: job files as people write
//! them (examples/fio), fio's job end and rates, stonewall phases, block
//! splits and distributions, accepted-and-ignored options, refusals.

use iosteer_device::{DeviceConfig, Precondition, StartState};
use iosteer_sched::{Nanos, Op};

use crate::example_job_files::example_job_files;
use crate::run::Simulation;
use crate::workload_file::JOB_DRAIN;
use iosteer_workload::fio::{parse, parse_file, parse_with_env};
use iosteer_workload::fio_options::{IGNORED, SUPPORTED};
use iosteer_workload::report::{PhaseReport, RunReport};
use iosteer_workload::workload::Generator;

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

fn env(name: &str) -> Option<String> {
    (name == "FIO_SIZE").then(|| "32m".to_string())
}

/// Runs a job file on a fresh `device` (not aged: the tests look at the
/// workload, and a fresh drive is quick to make) with fifo.
fn simulate(text: &str, file: &str, device: &str) -> RunReport {
    simulate_draining(text, file, device, Nanos::from_secs(5))
}

/// [`simulate`], the run going on at most `drain` after the jobs stop.
fn simulate_draining(text: &str, file: &str, device: &str, drain: Nanos) -> RunReport {
    simulate_on(text, file, DeviceConfig::preset(device).unwrap(), drain)
}

/// [`simulate_draining`] on a drive of the test's own.
fn simulate_on(text: &str, file: &str, device: DeviceConfig, drain: Nanos) -> RunReport {
    let parsed = parse_with_env(text, file, device.logical_bytes(), &env).unwrap();
    let mut sim = Simulation::of_job_file(device, parsed.jobs, 1, drain);
    sim.precondition = Precondition {
        state: StartState::Empty,
        seed: 1,
    };
    let aged = sim.aged_device().unwrap();
    let report = sim.run("fifo", &aged, &mut |_, _| true).unwrap();
    assert!(!report.interrupted, "{file}: {:?}", report.notes);
    report
}

/// The phase of the report named `name`.
fn phase_named<'a>(report: &'a RunReport, name: &str) -> &'a PhaseReport {
    let phase = report.phases.iter().find(|p| p.name == name);
    phase.unwrap_or_else(|| panic!("no phase {name}: {:?}", report.phases))
}

/// Every request a job file's jobs issue when nothing holds them (each
/// completes at once), in job order.
fn requests(text: &str) -> Vec<iosteer_sched::Request> {
    let jobs = parse(text, "t.fio", GIB).unwrap();
    let mut out = Vec::new();
    for (i, job) in jobs.into_iter().enumerate() {
        out.extend(Generator::new(job, i as u32, 1).requests_unloaded());
    }
    out
}

#[test]
fn prefill_writes_the_target_exactly_once_and_stops() {
    let text = include_str!("../../../examples/prefill.fio");
    let report = simulate(text, "prefill.fio", "diskSim-slc");
    let phase = report
        .phase("prefill")
        .expect("a phase named after the job");
    assert_eq!(phase.write.ops, 256, "256 MiB in 1 MiB writes, once");
    assert_eq!(report.phase("all").unwrap().write.ops, 256);
    assert_eq!(report.phase("job").unwrap().write.ops, 256);
    assert_eq!(report.unfinished, 0);
    let written = phase.write.mbps * (phase.end_s - phase.start_s) * 1e6;
    assert!(
        (written / (256.0 * MIB as f64) - 1.0).abs() < 0.01,
        "bytes written {written}"
    );
}

/// Four 64 MiB writes at once on a drive that writes about 27 MB/s: the
/// last completes after about 10 s, which fio waits for, and so does a job
/// file's run (it had stopped 5 s after the last issue, three unfinished).
#[test]
fn a_job_file_run_waits_for_its_slowest_request() {
    let text = "[w]\nioengine=libaio\nrw=write\nbs=64m\nsize=256m\niodepth=4\n";
    let report = simulate_draining(text, "big.fio", "diskSim-slc", JOB_DRAIN);
    assert_eq!(report.unfinished, 0);
    let phase = report.phase("w").unwrap();
    assert_eq!(phase.write.ops, 4);
    assert!(phase.end_s > 9.0, "ends at {} s", phase.end_s);
    assert!(report.notes.is_empty(), "{:?}", report.notes);
}

/// Requests still out when the drain runs out are counted and said.
#[test]
fn requests_left_when_the_drain_runs_out_are_noted() {
    let text = "[w]\nioengine=libaio\nrw=write\nbs=64m\nsize=256m\niodepth=4\n";
    let report = simulate_draining(text, "big.fio", "diskSim-slc", Nanos::from_secs(1));
    assert_eq!(report.unfinished, 4);
    let note = report
        .notes
        .iter()
        .find(|n| n.contains("still outstanding"))
        .expect("a note on the requests left");
    assert!(
        note.starts_with("4 of 4 requests") && note.contains("1 s after the jobs stopped"),
        "{note}"
    );
}

/// The run stops at the drain's end, not at the drive's last event before
/// it: a trace's one read of the whole drive, due after the 60 s drain,
/// was said to stop "at 26.191 s, 60 s after the jobs stopped" (its NAND
/// reads done, the host link busy until 62 s).
#[test]
fn a_run_cut_short_stops_where_its_drain_ends() {
    let text = "[r]\nrw=read\nbs=2g\nsize=2g\n";
    let report = simulate_draining(text, "r.fio", "consumer-sata", Nanos::from_secs(3));
    let note = report
        .notes
        .iter()
        .find(|n| n.contains("still outstanding"))
        .expect("a note on the request left");
    assert!(note.contains("stopped at 3.000 s, 3 s after"), "{note}");
}

/// 50 MiB/s is 52.43 MB/s: reported over the second the job issued, not
/// diluted by the drain after it.
#[test]
fn a_one_second_rated_job_reports_its_rate() {
    let text = "[r]\nrw=randread\nbs=64k\nrate=50m\nruntime=1s\ntime_based\niodepth=256\nsize=1g\n";
    let report = simulate(text, "rate.fio", "enterprise-nvme");
    let phase = report.phase("r").unwrap();
    let expected = 50.0 * MIB as f64 / 1e6;
    assert!(
        (phase.read.mbps / expected - 1.0).abs() < 0.02,
        "{} MB/s, expected {expected:.2}",
        phase.read.mbps
    );
    assert!(
        phase.end_s < 1.05,
        "the phase ends with the job: {}",
        phase.end_s
    );
    let job = report.phase("job").unwrap();
    assert!(
        (job.read.mbps / expected - 1.0).abs() < 0.02,
        "{}",
        job.read.mbps
    );
}

#[test]
fn bssplit_issues_both_sizes_in_ratio() {
    let out = requests("[a]\nrw=randread\nbssplit=4k/50:64k/50\nnumber_ios=20000\nnorandommap\n");
    assert_eq!(out.len(), 20_000);
    let small = out.iter().filter(|r| r.len.0 == 4096).count() as f64;
    let large = out.iter().filter(|r| r.len.0 == 65536).count() as f64;
    assert_eq!(small + large, 20_000.0);
    assert!(
        (small / 20_000.0 - 0.5).abs() < 0.02,
        "{small} of 20000 are 4k"
    );
    let out = requests("[a]\nrw=randrw\nbssplit=4k/50:64k/50,8k/100\nnumber_ios=4000\n");
    assert!(out
        .iter()
        .filter(|r| r.op == Op::Write)
        .all(|r| r.len.0 == 8192));
    assert!(out
        .iter()
        .filter(|r| r.op == Op::Read)
        .all(|r| r.len.0 != 8192));
}

/// The hottest 1% of the blocks take H(m, 1.2) / H(n, 1.2) of the
/// accesses (m of n blocks), within one percentage point.
#[test]
fn zipf_concentrates_accesses_as_the_law_says() {
    let out =
        requests("[a]\nrw=randread\nsize=40m\nrandom_distribution=zipf:1.2\nnumber_ios=200000\n");
    let blocks = 40 * MIB / 4096;
    let hot = blocks / 100;
    let harmonic = |m: u64| (1..=m).map(|k| (k as f64).powf(-1.2)).sum::<f64>();
    let expected = harmonic(hot) / harmonic(blocks);
    let measured = out.iter().filter(|r| r.offset.0 / 4096 < hot).count() as f64 / out.len() as f64;
    assert!(
        (measured - expected).abs() < 0.01,
        "measured {measured:.4}, closed form {expected:.4}"
    );
}

#[test]
fn offset_modifiers_make_holes_go_backwards_and_run_on() {
    let offsets = |text: &str| -> Vec<u64> { requests(text).iter().map(|r| r.offset.0).collect() };
    let holes = offsets("[a]\nrw=write:12k\nsize=1m\nnumber_ios=4\n");
    assert_eq!(holes, [0, 16384, 32768, 49152]);
    let back = offsets("[a]\nrw=read:-8k\nsize=16k\nnumber_ios=4\n");
    // fio 3.33's write_iolog of this job: past the start, on to the end
    // less 8k (12288 before this was checked against fio).
    assert_eq!(
        back,
        [0, 8192, 4096, 0],
        "from the start, wrapping to the end less the step and back"
    );
    let runs = offsets("[a]\nrw=randread:4\nsize=1g\nnumber_ios=8\n");
    assert!(
        runs[1] == runs[0] + 4096 && runs[3] == runs[0] + 3 * 4096,
        "{runs:?}"
    );
    let same = offsets("[a]\nrw=randread:4\nrw_sequencer=identical\nsize=1g\nnumber_ios=4\n");
    assert!(same.iter().all(|o| *o == same[0]), "{same:?}");
}

#[test]
fn limits_files_and_flushes() {
    let out = requests("[a]\nrw=randread\nsize=16m\nio_size=4m\nbs=64k\n");
    assert_eq!(out.len(), 64, "io_size bytes, not size");
    let jobs = parse(
        "[a]\nrw=write\noffset=75%\nfill_device=1\n[b]\nsize=10%\n",
        "f.fio",
        GIB,
    )
    .unwrap();
    assert_eq!(
        jobs[0].shape.bytes_limit,
        Some(GIB / 4),
        "from offset to the end of the drive"
    );
    assert_eq!(jobs[1].shape.bytes_limit, Some(GIB / 10 / 4096 * 4096));
    let out = requests("[a]\nrw=read\nsize=8m\nloops=2\nbs=1m\n");
    assert_eq!(out.len(), 16);
    let out = requests("[a]\nrw=write\nsize=6m\nnrfiles=3\nbs=1m\n");
    let offsets: Vec<u64> = out.iter().map(|r| r.offset.0 / MIB).collect();
    assert_eq!(
        offsets,
        [0, 2, 4, 1, 3, 5],
        "round robin over three 2 MiB files"
    );
    let out = requests("[a]\nrw=write\nsize=1m\nbs=64k\nfsync=4\nend_fsync=1\n");
    let flushes = out.iter().filter(|r| r.op == Op::Flush).count();
    assert_eq!(
        flushes,
        3 + 1,
        "one per 4 of 16 writes but the last 4 (fio syncs before the next write), and one at the end"
    );
    assert_eq!(out.last().unwrap().op, Op::Flush);
}

#[test]
fn flushes_are_reported_apart_from_writes_as_fio_reports_its_syncs() {
    // fio 3.33 on this job: 2048 writes and 511 syncs (none after the
    // last write: fio syncs before the next request), reported apart.
    let report = simulate(
        "[a]\nrw=randwrite\nsize=8m\nfsync=4\n",
        "f.fio",
        "enterprise-nvme",
    );
    let phase = report.phase("a").unwrap();
    assert_eq!((phase.write.ops, phase.flush.ops), (2048, 511));
    assert_eq!(report.phase("all").unwrap().all.ops, 2048, "all: data only");
    let json = serde_json::to_value(phase).unwrap();
    assert_eq!(json["flush"]["ops"], 511);
    let plain = simulate("[a]\nrw=randwrite\nsize=1m\n", "p.fio", "enterprise-nvme");
    let json = serde_json::to_value(plain.phase("a").unwrap()).unwrap();
    assert!(json.get("flush").is_none(), "no flush, no field: {json}");
}

#[test]
fn every_ignored_option_and_alias_parses() {
    for option in IGNORED {
        let text = format!("[a]\n{option}=1\n");
        assert!(
            parse(&text, "i.fio", GIB).is_ok(),
            "{option}: {:?}",
            parse(&text, "i.fio", GIB)
        );
    }
    let jobs = parse(
        "[a]\nreadwrite=randwrite\nblocksize=8k\ntimeout=2s\nio_limit=4m\nblocksize_range=8k-16k\n",
        "a.fio",
        GIB,
    )
    .unwrap();
    assert_eq!(
        (jobs[0].stop, jobs[0].shape.bytes_limit),
        (Some(Nanos::from_secs(2)), Some(4 * MIB))
    );
}

#[test]
fn unsupported_options_and_unmodelled_engines_name_file_line_and_what() {
    let err = parse("[a]\nrw=read\n\nopenfiles=1\n", "u.fio", GIB)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("u.fio:4:") && err.contains("`openfiles`") && err.contains("open"),
        "{err}"
    );
    for (engine, why) in [
        ("net", "network"),
        ("filecreate", "metadata"),
        ("rdma", "RDMA"),
        ("nbd", "NBD"),
    ] {
        let err = parse(&format!("[global]\nioengine={engine}\n[a]\n"), "e.fio", GIB)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("e.fio:2:") && err.contains(engine) && err.contains(why),
            "{err}"
        );
    }
    let err = parse("[a]\nzonemode=zbd\n", "z.fio", GIB)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("z.fio:2:") && err.contains("zbd"), "{err}");
    assert!(SUPPORTED.contains(&"bssplit"));
}

#[test]
fn every_example_job_file_parses_and_simulates() {
    for path in example_job_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.display().to_string();
        let report = simulate(&text, &name, "diskSim-slc");
        let all = report.phase("all").unwrap();
        assert!(all.all.ops > 0, "{name}: nothing completed");
        assert_eq!(report.unfinished, 0, "{name}");
    }
}

#[test]
fn rate_min_is_a_floor_per_direction_as_in_fio() {
    // A 10 ms think after each request: about 50 reads of 4 KiB a second
    // (0.2 MB/s) under a 2 MiB/s floor, 50 writes of 64 KiB (3.3 MB/s)
    // over a 1 MiB/s one: only the reads are named. (A floor above its
    // rate is refused, as fio refuses it.)
    let report = simulate(
        "[a]\nrw=randrw\nbs=4k,64k\nthinktime=10ms\nrate_min=2m,1m\nruntime=2\ntime_based\nsize=64m\n",
        "m.fio",
        "enterprise-nvme",
    );
    let notes = notes_with(&report.notes, "rate_min");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("of reads") && notes[0].contains("2.10 MB/s"),
        "{notes:?}"
    );
}

#[test]
fn rate_iops_min_is_a_floor_in_requests_and_rate_cycle_is_noted() {
    // A 20 ms think after each read: under 50 reads a second.
    let text = "[a]\nrw=randread\nthinktime=20ms\nrate_iops_min=100\nrate_cycle=500\nruntime=2\ntime_based\nsize=64m\n";
    let report = on_nvme(text);
    let floors = notes_with(&report.notes, "rate_iops_min");
    assert_eq!(floors.len(), 1, "{:?}", report.notes);
    assert!(
        floors[0].contains("reads a second, below its rate_iops_min of 100"),
        "{floors:?}"
    );
    let read = parse_with_env(text, "m.fio", GIB, &env).unwrap();
    assert_eq!(
        notes_with(&read.notes, "rate_cycle=500").len(),
        1,
        "{:?}",
        read.notes
    );
    // Above the floor: no note.
    let report = on_nvme(
        "[a]\nrw=randread\nrate_iops=50\nrate_iops_min=40\nruntime=2\ntime_based\nsize=64m\n",
    );
    assert!(
        notes_with(&report.notes, "rate_iops_min").is_empty(),
        "{:?}",
        report.notes
    );
}

/// A job that ends within its ramp_time is measured nowhere (fio would
/// report it whole, clearing its figures only at the ramp's end); the
/// report says so rather than showing an empty table alone. A job measured
/// after its ramp gets no such note.
#[test]
fn a_job_ending_within_its_ramp_is_named_in_the_notes() {
    let text = "[short]\nrw=randread\nsize=1m\nramp_time=100\n[long]\nrw=randread\nsize=1m\nramp_time=10ms\ntime_based\nruntime=1\n";
    let report = simulate(text, "ramp.fio", "consumer-sata");
    let ramp = notes_with(&report.notes, "ramp_time");
    assert_eq!(ramp.len(), 1, "{:?}", report.notes);
    assert!(
        ramp[0].starts_with("job short: it or the run ended within its ramp_time (100.0 s), so none of its 256 requests"),
        "{}",
        ramp[0]
    );
}

/// A job's requests that complete in its ramp count nowhere, even while
/// another job is measured: a review found a reader's 1,000 ramp reads in
/// the writer's phase `w`, and 3,000 reads in `job` and `all` where fio
/// 3.33 reports 2,000.
#[test]
fn ramp_requests_count_in_no_phase_while_another_job_is_measured() {
    let text = "[rr]\nrw=randread\nrate_iops=1000\nramp_time=1\nruntime=2\ntime_based\n[w]\nrw=randwrite\nrate_iops=100\nruntime=3\ntime_based\n";
    let report = simulate(text, "ramp2.fio", "enterprise-nvme");
    let reads = |name: &str| phase_named(&report, name).read.ops;
    assert_eq!(reads("w"), 0, "{:?}", report.phases);
    assert!((1990..=2010).contains(&reads("all")), "{}", reads("all"));
    assert_eq!(reads("job"), reads("all"));
}

/// `all` adds the phases up and takes its rates over the time they
/// measured; `job` spans the whole workload, the second group's ramp
/// included (a review found `all` at 800 IOPS where each group ran 1,000).
#[test]
fn all_rates_leave_out_the_gaps_between_phases_and_job_spans_them() {
    let text = "[global]\nrate_iops=1000\ntime_based\nruntime=4\nramp_time=2\n[first]\nrw=randread\n[second]\nstonewall\nrw=randread\n";
    let report = simulate(text, "ramps.fio", "enterprise-nvme");
    let iops = |name: &str| phase_named(&report, name).read.iops;
    assert!((990.0..1010.0).contains(&iops("all")), "{}", iops("all"));
    assert!((790.0..810.0).contains(&iops("job")), "{}", iops("job"));
}

/// A closed-loop job does not take the slot its own completion freed ahead
/// of requests already queued: a driver refills the slot from its queue
/// before the application hears of the completion. Here a trim job one
/// deep under fifo (trims first) beside a writer: the writer's writes go
/// between the trims. When the trim job's next trim was queued first, the
/// writer wrote 4 times in 3 s.
#[test]
fn a_completion_frees_its_slot_for_what_was_queued_before_the_job_issues_again() {
    let text = "[global]\nruntime=3\ntime_based\nsize=1g\n\
                [t]\nrw=randtrim\nbs=64k\niodepth=1\n\
                [w]\nrw=randwrite\nbs=16k\niodepth=4\noffset=2g\n";
    let report = simulate(text, "trims.fio", "consumer-sata");
    let job = report.phase("job").unwrap();
    assert!(job.trim.ops > 100, "{} trims", job.trim.ops);
    // About one write between two trims, as many as the trims.
    assert!(job.write.ops * 2 > job.trim.ops, "{} writes", job.write.ops);
}

/// fio's examples/latency-profile.fio, on a model drive and with a shorter
/// window: the job searches its depth, runs a final window at it and ends
/// (fio prints `latency : target=..., depth=N`); the report names the depth
/// and its figures are that final window, as fio's.
#[test]
fn a_latency_target_finds_a_depth_and_reports_it() {
    let text = "[global]\nbs=4k\nrw=randread\nioengine=libaio\niodepth=128\n\
                latency_target=2ms\nlatency_window=50ms\nlatency_percentile=99.9\n[device]\n";
    let report = simulate(text, "latency-profile.fio", "consumer-sata");
    let note = report
        .notes
        .iter()
        .find(|n| n.starts_with("job device: latency_target 2 ms for 99.9% of requests"))
        .unwrap_or_else(|| panic!("{:?}", report.notes));
    assert!(note.contains(" found (depths tried: 1, 2, "), "{note}");
    let phase = report.phase("device").expect("the job's phase");
    // One 50 ms window (and the requests out when it ended).
    let seconds = phase.end_s - phase.start_s;
    assert!((0.05..0.1).contains(&seconds), "{seconds} s: {note}");
    assert!(phase.read.ops < report.requests / 2, "{note}");
}

/// fio's examples/flow.fio, smaller: job1 (flow=8) issues eight times what
/// job2 (flow=1) does, as fio 3.33 does on a file (56,057 reads to 7,006
/// writes in 5 s; iosteer run on the same file: 48,097 to 6,013).
#[test]
fn flow_weights_keep_jobs_in_their_ratio() {
    let text = "[global]\nnorandommap\ntime_based\nruntime=1\nioengine=libaio\niodepth=256\n\
                size=256m\nbs=8k\nflow_sleep=1000\n[job2]\nrw=write\nflow=1\n[job1]\nrw=randread\nflow=8\n";
    let report = simulate(text, "flow.fio", "consumer-sata");
    let job = report.phase("job").unwrap();
    let ratio = job.read.ops as f64 / job.write.ops as f64;
    assert!(
        (7.9..8.1).contains(&ratio),
        "{} reads, {} writes",
        job.read.ops,
        job.write.ops
    );
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.starts_with("job job1: flow=8 of flow 0's weight 9 (88.9%)")),
        "{:?}",
        report.notes
    );
    // examples/butterfly.fio: flow=2 and flow=-2, whose weights fio 3.33
    // adds up to 0; it holds neither job (256 reads each of 1 MiB here).
    let text = "[global]
bs=4k
size=1m
[forward]
rw=read
flow=2
[backward]
rw=read:-8k
flow=-2
";
    let report = simulate(text, "butterfly.fio", "consumer-sata");
    assert_eq!(report.phase("job").unwrap().read.ops, 512);
    assert!(
        report.notes.iter().any(|n| n.contains("add up to 0")),
        "{:?}",
        report.notes
    );
}

/// fio 3.33 on `rw=randread latency_target=1us`: one read, over the target
/// at depth 1, and the job ends with ETIMEDOUT; that read is in its
/// figures. A search that shares its phases with another job cannot have
/// its figures cleared alone, and a note says so.
#[test]
fn a_latency_target_missed_at_depth_one_ends_the_job_as_fios() {
    let report = simulate(
        "[a]\nrw=randread\nsize=8m\nlatency_target=1us\n",
        "l.fio",
        "enterprise-nvme",
    );
    assert_eq!(report.phase("job").unwrap().read.ops, 1);
    assert!(
        report.notes.iter().any(|n| n.contains("ETIMEDOUT")),
        "{:?}",
        report.notes
    );
    let report = simulate(
        "[a]\nrw=randread\nsize=8m\nlatency_target=1s\nlatency_window=10ms\n[b]\nrw=randread\nsize=8m\n",
        "l.fio",
        "enterprise-nvme",
    );
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.starts_with("job a: fio clears its figures") && n.contains("not cleared")),
        "{:?}",
        report.notes
    );
}

/// `rw=write:N` and `rw=read:-N` go where fio 3.33 goes (its
/// `write_iolog` of these jobs on a 64 KiB file): holes not rounded away,
/// and backwards past the start on to the end less N.
#[test]
fn holes_and_backward_steps_land_where_fios_do() {
    let offsets = |text: &str| -> Vec<u64> { requests(text).iter().map(|r| r.offset.0).collect() };
    let holes = offsets("[j]\nfilename=f\nrw=write:2k\nbs=8k\nsize=64k\n");
    assert_eq!(holes, [0, 10240, 20480, 30720, 40960, 51200]);
    let backwards = offsets("[j]\nfilename=f\nrw=read:-16k\nbs=8k\nsize=64k\nio_size=96k\n");
    let fio = [
        0, 49152, 40960, 32768, 24576, 16384, 8192, 0, 49152, 40960, 32768, 24576,
    ];
    assert_eq!(backwards, fio);
}

/// Random offsets fall on each direction's own block by default, as fio's
/// (`bs=4k,1000`: fio 3.33's reads all start on 4 KiB).
#[test]
fn random_offsets_fall_on_each_directions_block() {
    let out = requests("[j]\nfilename=f\nrw=randrw\nbs=4k,1000\nsize=1m\nnumber_ios=400\n");
    let on = |op: Op, boundary: u64| {
        out.iter()
            .filter(|r| r.op == op)
            .all(|r| r.offset.0 % boundary == 0)
    };
    assert!(on(Op::Read, 4096) && on(Op::Write, 1000));
}

/// The notes that speak of `text`.
fn notes_with<'a>(notes: &'a [String], text: &str) -> Vec<&'a String> {
    notes.iter().filter(|n| n.contains(text)).collect()
}

/// A job file run on enterprise-nvme.
fn on_nvme(text: &str) -> RunReport {
    simulate(text, "ss.fio", "enterprise-nvme")
}

/// fio's steady state: a job whose last `ss_dur` seconds look steady stops
/// at that check (fio 3.33 on a file: 284 reads in 2.83 s, its checks a
/// fraction of a second off the job's start; here on whole seconds).
#[test]
fn steady_state_stops_a_job_at_the_check_that_finds_it() {
    let job = "[j]\nrw=randread\nbs=4k\nsize=64m\nrate_iops=100\nruntime=20\ntime_based\n";
    let report = on_nvme(&format!("{job}ss=iops:5%\nss_dur=3\n"));
    assert_eq!(report.phase("j").unwrap().read.ops, 300);
    let notes = notes_with(
        &report.notes,
        "steady state iops:5% over 3 s: reached at 3 s",
    );
    assert_eq!(notes.len(), 1, "{:?}", report.notes);
    // Samples start a second after ss_ramp; fio's default criterion is
    // iops_slope:0.01%, met by a constant rate.
    let report = on_nvme(&format!("{job}ss_dur=2\nss_ramp=2\n"));
    assert_eq!(report.phase("j").unwrap().read.ops, 400);
    assert_eq!(
        notes_with(&report.notes, "iops_slope:0.01% over 2 s: reached at 4 s").len(),
        1
    );
    // A limit no window meets: the job runs its runtime, and the note says so.
    let text = "[j]\nrw=randread\nbs=4k\nsize=64m\nrate_iops=100\nruntime=4\ntime_based\nss=iops:-1\nss_dur=2\n";
    let report = on_nvme(text);
    assert_eq!(report.phase("j").unwrap().read.ops, 400);
    assert_eq!(
        notes_with(&report.notes, "not reached; at the last check (3 s)").len(),
        1
    );
}

#[test]
fn steady_state_under_group_reporting_judges_and_stops_the_group_together() {
    // Two copies at 100 IOPS and one job at 50: one window of 250.
    let text = "[global]\nrw=randread\nbs=4k\nsize=64m\nruntime=6\ntime_based\ngroup_reporting\n\
                ss=iops:5%\nss_dur=2\n[a]\nrate_iops=100\nnumjobs=2\n[b]\nrate_iops=50\n";
    let report = on_nvme(text);
    assert_eq!(report.phase("all").unwrap().read.ops, 500);
    let notes = notes_with(&report.notes, "(250, 250 I/Os per second)");
    assert_eq!(notes.len(), 1, "one note for the group: {:?}", report.notes);
    // Without group_reporting each job is judged alone, and stops alone.
    let report = on_nvme(&text.replace("group_reporting\n", ""));
    assert_eq!(report.phase("all").unwrap().read.ops, 500);
    assert_eq!(notes_with(&report.notes, "steady state iops:5%").len(), 3);
    // A job of the next group (stonewall) is sampled from its own start.
    let text = "[global]\nrw=randread\nbs=4k\nsize=64m\nrate_iops=100\nruntime=10\ntime_based\n\
                ss=iops:5%\nss_dur=2\n[a]\n[b]\nstonewall\n";
    let report = on_nvme(text);
    assert_eq!(report.phase("a").unwrap().read.ops, 200);
    assert_eq!(report.phase("b").unwrap().read.ops, 200);
}

#[test]
fn steady_state_that_differs_within_a_reporting_group_is_refused_as_fio_refuses_it() {
    let text = "[global]\nrw=randread\nsize=64m\n[a]\nss=iops:5%\nss_dur=2\n[b]\n";
    let err = parse(text, "ss.fio", GIB).unwrap_err();
    assert!(err.to_string().contains("same reporting group"), "{err}");
    assert_eq!(err.line, 7);
    // In groups of their own, they may differ.
    assert!(parse(&text.replace("[b]", "[b]\nnew_group"), "ss.fio", GIB).is_ok());
    for bad in ["ss=lat:1%", "ss=iops", "ss_dur=soon"] {
        let err = parse(&format!("[a]\nrw=read\n{bad}\n"), "ss.fio", GIB).unwrap_err();
        assert!(err.to_string().contains("expected"), "{bad}: {err}");
    }
}

/// fio samples no job in its ramp_time and restarts its clock after it
/// (fio 3.33, ramp_time=2 ss=iops:5% ss_dur=3 at 100 IOPS: 301 reads
/// counted, in 3.01 s past the ramp); and it judges a reporting group only
/// on the ticks its last job runs (group_reporting, [a] at 100 IOPS for
/// 10 s, [b] at 50 for 2 s: b ends unjudged, a runs its 10 s: 1,100 reads).
#[test]
fn steady_state_waits_out_ramp_time_and_needs_the_groups_last_job() {
    let job = "[j]\nrw=randread\nbs=4k\nsize=64m\nrate_iops=100\nruntime=12\ntime_based\n";
    let report = on_nvme(&format!("{job}ramp_time=2\nss=iops:5%\nss_dur=3\n"));
    assert_eq!(report.phase("j").unwrap().read.ops, 300);
    assert_eq!(notes_with(&report.notes, "reached at 5 s").len(), 1);
    let text = "[global]\nrw=randread\nbs=4k\nsize=64m\ntime_based\ngroup_reporting\n\
                ss=iops:5%\nss_dur=3\n[a]\nrate_iops=100\nruntime=10\n[b]\nrate_iops=50\nruntime=2\n";
    let report = on_nvme(text);
    assert_eq!(report.phase("all").unwrap().read.ops, 1_100);
    assert_eq!(
        notes_with(&report.notes, "never judged, as the group's last job").len(),
        1
    );
}

/// fio's `max_latency`: the job stops at its first request slower than
/// it, after its ramp, and the report says which and when.
#[test]
fn a_job_stops_at_its_first_request_over_max_latency() {
    let job = "[j]\nrw=randread\nbs=4k\niodepth=32\nruntime=3\ntime_based\n";
    let run = |options: &str| simulate(&format!("{job}{options}\n"), "ml.fio", "consumer-sata");
    // On the fresh drive of these tests a read takes tens of µs.
    let free = run("max_latency=10s");
    let stopped = run("max_latency=1");
    let reads = |r: &RunReport| r.phase("j").unwrap().read.ops;
    assert!(reads(&stopped) <= 64, "{} reads", reads(&stopped));
    assert!(reads(&free) > 100_000, "{} reads", reads(&free));
    let stopped_at = |r: &RunReport| {
        let note = r.notes.iter().find(|n| n.contains("max_latency")).unwrap();
        note.strip_prefix("job j stopped at ").unwrap()[..5].to_string()
    };
    assert_eq!(stopped_at(&stopped), "0.000");
    // Not during the ramp: it stops just after it.
    assert_eq!(stopped_at(&run("max_latency=1\nramp_time=1")), "1.000");
}

/// fio's `sync=1`: behind a volatile write-back cache each write completes
/// once programmed, where a plain one completes once cached; without the
/// cache the two are the same.
#[test]
fn sync_writes_wait_for_the_media_only_behind_a_volatile_cache() {
    let job = "[j]\nrw=randwrite\nbs=16k\nsize=64m\niodepth=1\nnumber_ios=200\n";
    let mean_write_ms = |device: &DeviceConfig, options: &str| {
        let text = format!("{job}{options}");
        let report = simulate_on(&text, "sync.fio", device.clone(), Nanos::from_secs(5));
        let write = &report.phase("j").unwrap().write;
        assert_eq!(write.ops, 200);
        write.lat_us.mean / 1e3
    };
    let mut cached = DeviceConfig::preset("consumer-sata").unwrap();
    cached.cache.size_mib = 64;
    cached.cache.policy = iosteer_device::config::CachePolicy::WriteBack;
    let (plain, sync) = (
        mean_write_ms(&cached, ""),
        mean_write_ms(&cached, "sync=1\n"),
    );
    // 16 KiB over a 550 MB/s link: about 0.03 ms; a 650 us program more.
    assert!(
        plain < 0.1 && sync > 0.6,
        "plain {plain} ms, sync {sync} ms"
    );
    let bare = DeviceConfig::preset("consumer-sata").unwrap();
    assert_eq!(mean_write_ms(&bare, ""), mean_write_ms(&bare, "sync=1\n"));
}

/// A job named `all` (or `job`) measured in a phase of that name: the
/// report then held two phases named `all`, the job's 256 reads and the
/// run's 768, and `--phase all` took the first.
#[test]
fn a_job_named_like_the_reports_own_phases_measures_apart() {
    let text = "[all]\nrw=read\nsize=1m\n[job]\nstonewall\nrw=read\nsize=2m\n";
    let report = simulate(text, "all.fio", "diskSim-slc");
    let names: Vec<&str> = report.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["job", "all.2", "job.2", "all"]);
    assert_eq!(report.phase("all").unwrap().read.ops, 768);
    assert_eq!(report.phase("all.2").unwrap().read.ops, 256);
}

/// fio's `create_only`: the job issues nothing, and a job stonewalled
/// behind it runs (fio 3.33: prep 0 reads, r 100).
#[test]
fn a_create_only_job_issues_nothing_and_holds_nobody_back() {
    let text = "[prep]\nrw=read\nbs=4k\nsize=1m\ncreate_only=1\n\
                [r]\nstonewall\nrw=randread\nbs=4k\nsize=1m\nnumber_ios=100\n";
    assert_eq!(requests(text).len(), 100);
    let report = simulate(text, "co.fio", "consumer-sata");
    assert_eq!(report.phase("r").unwrap().read.ops, 100);
    let notes = parse_file(text, "co.fio", GIB).unwrap().notes;
    assert_eq!(notes_with(&notes, "create_only").len(), 1);
}

/// fio's think time drains the queue before it thinks: at depth 8 with a
/// 10 ms think after every completion, one request goes between thinks
/// after the first eight (fio 3.33, libaio on a file: 106 reads in 1 s;
/// each completion had thought on its own before, 792). At depth 4 and
/// `thinktime_blocks=4`, fio 3.33 399.
#[test]
fn a_think_time_waits_for_every_request_out_as_fios() {
    let job = "[t]\nioengine=libaio\nrw=randread\nbs=4k\nsize=1m\nruntime=1\ntime_based\nthinktime=10ms\n";
    let reads = |options: &str| {
        let report = on_nvme(&format!("{job}{options}"));
        report.phase("t").unwrap().read.ops
    };
    let deep = reads("iodepth=8\n");
    assert!((105..=109).contains(&deep), "{deep}");
    let blocks = reads("iodepth=4\nthinktime_blocks=4\n");
    assert!((395..=403).contains(&blocks), "{blocks}");
}

/// A job that a slow request stops during its verify read-back ends there,
/// and the stonewalled job after it runs (fio 3.33: `w64 r1`, err=110, then
/// the next job's 16 reads); it was left waiting for a read-back it would
/// never issue, and the next job never started.
#[test]
fn a_job_stopped_during_its_read_back_ends_and_the_next_runs() {
    let text = "[j]\nrw=write\nbs=4k\nsize=256k\nverify=crc32c\nmax_latency=50us,100ms\n\
                [k]\nstonewall\nrw=read\nbs=4k\nsize=64k\n";
    let report = simulate(text, "maxlat.fio", "enterprise-nvme");
    let j = report.phase("j").unwrap();
    assert_eq!((j.write.ops, j.read.ops), (64, 1));
    assert_eq!(report.phase("k").expect("k ran").read.ops, 16);
    assert_eq!(report.unfinished, 0);
}

/// What the random map changed is said: requests it cut and loops it
/// ended short (fio 3.33 does both, silently).
#[test]
fn what_the_random_map_cut_is_noted() {
    let report = on_nvme("[j]\nrw=randread\nbsrange=4k-6k\nsize=1m\n");
    let note = notes_with(&report.notes, "were cut at a block its random map");
    assert!(
        note.len() == 1 && note[0].contains("1 loop(s) ended"),
        "{:?}",
        report.notes
    );
}

mod phases;
mod rates;
