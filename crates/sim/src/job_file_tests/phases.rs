//! Phases that follow a job file's jobs ([`iosteer_workload::job_phases`]).

use super::*;

#[test]
fn stonewall_makes_two_phases_that_follow_each_other() {
    let text = "[global]\nsize=64m\n[write]\nrw=write\nbs=1m\niodepth=4\n\
                [read]\nstonewall\nrw=randread\nbs=4k\nio_size=8m\niodepth=8\n";
    let report = simulate(text, "stonewall.fio", "diskSim-slc");
    let names: Vec<&str> = report.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["job", "write", "read", "all"]);
    let (write, read) = (
        report.phase("write").unwrap(),
        report.phase("read").unwrap(),
    );
    assert_eq!((write.write.ops, write.read.ops), (64, 0));
    assert_eq!((read.read.ops, read.write.ops), (2048, 0));
    assert!(
        read.start_s >= write.end_s,
        "{} {}",
        read.start_s,
        write.end_s
    );
}

#[test]
fn startdelay_and_runtime_give_phases_named_after_their_jobs() {
    let text =
        "[global]\nsize=64m\nbs=64k\ntime_based\n[readers]\nrw=randread\nrate=4m\nruntime=3s\n\
                [fill]\nrw=write\nrate=2m\nstartdelay=1s\nruntime=1s\n";
    let report = simulate(text, "t.fio", "diskSim-slc");
    let names: Vec<&str> = report.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["job", "readers", "readers+fill", "readers.2", "all"]
    );
    let fill = report.phase("readers+fill").unwrap();
    assert!(
        (fill.start_s - 1.0).abs() < 0.01 && (fill.end_s - 2.0).abs() < 0.01,
        "{fill:?}"
    );
}

/// Half 4 KiB, half 64 KiB, by count: within 2% of 20,000 requests
/// (without fio's random map, which cuts a request at a block taken).

#[test]
fn jobs_that_only_drain_after_the_others_ended_stay_in_their_phase() {
    // Found by a review: two jobs of one runtime, the writer's last request
    // completing first, left a phase `readers` of the readers' drain (7
    // reads over 2 ms, at a made-up 89 MB/s).
    let text = "[global]\nsize=64m\nruntime=3s\ntime_based\n[readers]\nrw=randread\nbs=4k\n\
                iodepth=8\n[writer]\nrw=randwrite\nbs=64k\niodepth=4\nrate=10m\n";
    let report = simulate(text, "t.fio", "consumer-sata");
    let names: Vec<&str> = report.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["job", "readers+writer", "all"]);
    let both = report.phase("readers+writer").unwrap();
    assert_eq!(both.read.ops, report.phase("job").unwrap().read.ops);
}

#[test]
fn a_stonewalled_jobs_startdelay_counts_from_the_runs_start_as_fios() {
    // fio 3.33 holds a job until its start delay has passed since the run
    // began: released at 2 s, c starts at 3.5 s with `startdelay=3500ms`
    // (not 5.5 s), and at once with `startdelay=1500ms`.
    let job = |delay: &str| {
        format!(
            "[global]\nbs=4k\nsize=16m\nrate_iops=100\nruntime=1\ntime_based\n[a]\nrw=read\n\
             [b]\nrw=write\nstonewall\n[c]\nrw=read\nstonewall\nstartdelay={delay}\n"
        )
    };
    for (delay, start) in [("3500ms", 3.5), ("1500ms", 2.0)] {
        let report = simulate(&job(delay), "t.fio", "diskSim-slc");
        let c = report.phase("c").unwrap();
        assert!((c.start_s - start).abs() < 0.01, "{delay}: {c:?}");
        assert!((c.end_s - start - 1.0).abs() < 0.01, "{delay}: {c:?}");
    }
}

#[test]
fn jobs_of_different_files_sharing_blocks_of_the_drive_are_noted() {
    // fio gives each job (and numjobs copy) a file of its own; the drive
    // here is one device, every region from its offset.
    let shared = "jobs of different files share blocks of the drive";
    let report = simulate(
        "[global]\nsize=16m\nrw=randwrite\nnumjobs=2\nruntime=1\n[w]\n",
        "t.fio",
        "diskSim-slc",
    );
    assert_eq!(
        notes_with(&report.notes, shared).len(),
        1,
        "{:?}",
        report.notes
    );
    // One named file, or regions apart: nothing to say.
    for text in [
        "[global]\nsize=16m\nrw=randwrite\nfilename=/dev/x\nnumjobs=2\nruntime=1\n[w]\n",
        "[global]\nsize=16m\nrw=randwrite\nnumjobs=2\noffset_increment=16m\nruntime=1\n[w]\n",
    ] {
        let report = simulate(text, "t.fio", "diskSim-slc");
        assert!(
            notes_with(&report.notes, shared).is_empty(),
            "{text}: {:?}",
            report.notes
        );
    }
}

/// Found by a review: a writer held to one write a second kept its phase
/// open 31 s past its 5 s runtime, and the reader's 251 MB/s read as 34.9
/// over the phase, with nothing said. The note says it.
#[test]
fn a_job_whose_held_requests_complete_long_after_its_stop_is_said() {
    let text = "[global]\nioengine=libaio\nruntime=2\ntime_based\n[reader]\nrw=randread\nbs=4k\niodepth=8\nsize=64m\n\
                [writer]\nrw=write\nbs=128k\niodepth=8\noffset=128m\nsize=64m\n";
    let device = DeviceConfig::preset("diskSim-slc").unwrap();
    let parsed = parse(text, "held.fio", device.logical_bytes()).unwrap();
    let mut sim = Simulation::of_job_file(device, parsed, 1, Nanos::from_secs(60));
    sim.set_start_state(StartState::Empty);
    let aged = sim.aged_device().unwrap();
    let held = "netflix:write.limiter=iops,write.current=1";
    for (spec, said) in [(held, true), ("fifo", false)] {
        let report = sim.run(spec, &aged, &mut |_, _| true).unwrap();
        let note = report
            .notes
            .iter()
            .find(|n| n.starts_with("job writer stopped at 2.000 s"));
        assert_eq!(note.is_some(), said, "{spec}: {:?}", report.notes);
    }
}

/// Found by a review: a setting of a tenant no job is (`weight.7` on a file
/// of two jobs) was taken and reached nothing, silently.
#[test]
fn settings_of_tenants_no_job_is_are_said() {
    let text = "[a]\nrw=randread\nbs=4k\nsize=8m\n[b]\nrw=randread\nbs=4k\nsize=8m\n";
    let device = DeviceConfig::preset("diskSim-slc").unwrap();
    let parsed = parse(text, "two.fio", device.logical_bytes()).unwrap();
    let mut sim = Simulation::of_job_file(device, parsed, 1, Nanos::from_secs(5));
    sim.set_start_state(StartState::Empty);
    let aged = sim.aged_device().unwrap();
    for (spec, key) in [
        ("bfq:weight.7=300,weight.1=200", "`weight.7`"),
        ("iocost:tenant.9.weight=50", "`tenant.9.weight`"),
        ("iolatency:target.5=1ms,target.0=2ms", "`target.5`"),
        (
            "throttle:tenant.3.riops=100,tenant.1.riops=100",
            "`tenant.3.*`",
        ),
    ] {
        let report = sim.run(spec, &aged, &mut |_, _| true).unwrap();
        let said: Vec<&String> = report
            .notes
            .iter()
            .filter(|n| n.contains("that sent no read or write"))
            .collect();
        assert!(
            said.len() == 1 && said[0].contains(key),
            "{spec}: {:?}",
            report.notes
        );
        assert!(
            !said[0].contains(".1") && !said[0].contains(".0"),
            "{spec}: {said:?}"
        );
    }
}

/// Two stonewall groups whose sections share a name (a copy-paste slip in
/// a published job file) are two phases, not one spanning both.
#[test]
fn two_groups_of_one_section_name_are_two_phases() {
    let text = "[global]\nsize=64m\nbs=4k\n[b]\nrw=randread\nio_size=4m\n\
                [b]\nstonewall\nrw=randwrite\nio_size=4m\n";
    let report = simulate(text, "dup.fio", "diskSim-slc");
    let names: Vec<&str> = report.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["job", "b", "b.2", "all"]);
    let (first, second) = (report.phase("b").unwrap(), report.phase("b.2").unwrap());
    assert_eq!((first.read.ops, first.write.ops), (1024, 0));
    assert_eq!((second.read.ops, second.write.ops), (0, 1024));
}

/// ...while the copies of one section (`numjobs`) ending one by one stay
/// its one phase, whichever copy the tracker looked at.
#[test]
fn copies_of_a_section_ending_apart_stay_one_phase() {
    let text = "[w]\nrw=randwrite\nbs=4k\nsize=64m\nio_size=1m\nnumjobs=8\niodepth=2\n\
                [r]\nstonewall\nrw=randread\nbs=4k\nsize=64m\nio_size=1m\nnumjobs=8\n";
    let report = simulate(text, "copies.fio", "diskSim-slc");
    let names: Vec<&str> = report.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["job", "w", "r", "all"]);
}
