//! How fast a job issues and when it stops: rates, think time, runtime, number_ios, queue depth and max_latency.

use super::*;

/// Bytes `requests` read and wrote.
fn bytes_by_direction(requests: &[iosteer_sched::Request]) -> [u64; 2] {
    use iosteer_sched::Op;
    [Op::Read, Op::Write].map(|op| {
        requests
            .iter()
            .filter(|r| r.op == op)
            .map(|r| r.len.0)
            .sum()
    })
}

#[test]
fn rate_caps_each_direction_of_a_mixed_job_on_its_own() {
    let run = |options: &str| {
        let text = format!("[j]\nrw=randrw\nsize=64m\nruntime=10\ntime_based\n{options}\n");
        let jobs = jobs_of(&text);
        let out = crate::workload::Generator::new(jobs[0].clone(), 0, 1).requests_unloaded();
        (jobs[0].clone(), bytes_by_direction(&out))
    };
    // fio: `rate=2m` caps reads and writes at 2 MiB/s each, not in sum;
    // over 10 s that is 20 MiB each, to a request.
    let (job, bytes) = run("rate=2m");
    assert_eq!(
        job.shape.direction_rates,
        Some([Some(2.0 * MIB as f64), Some(2.0 * MIB as f64)])
    );
    assert_eq!(synthetic(&job).arrival.bytes_per_s, None);
    for got in bytes {
        assert!(got.abs_diff(20 * MIB) <= 4096, "{bytes:?}");
    }
    // Each direction to its own cap, whatever the mix: a direction that is
    // ahead of its rate gives way to the other.
    let (_, bytes) = run("rate=2m,512k\nrwmixread=10");
    assert!(bytes[0].abs_diff(20 * MIB) <= 4096, "{bytes:?}");
    assert!(bytes[1].abs_diff(5 * MIB) <= 4096, "{bytes:?}");
    // `rate_iops` counts the smallest block of the direction.
    let (job, _) = run("rate_iops=100,10\nbsrange=4k-64k");
    assert_eq!(
        job.shape.direction_rates,
        Some([Some(409_600.0), Some(40_960.0)])
    );
    // `rate=,1m` caps writes only: reads take every other turn of a job
    // that issues every millisecond (10,000 requests), writes 256 a second.
    let (job, bytes) = run("rate=,1m\nthinktime=1ms");
    assert_eq!(job.shape.direction_rates, Some([None, Some(MIB as f64)]));
    assert_one_direction_capped(bytes, 1);
}

#[test]
fn rate_of_a_one_direction_job_is_its_directions() {
    let arrival = |text: &str| synthetic(&jobs_of(text)[0]).arrival.clone();
    assert_eq!(
        arrival("[j]\nrw=randread\nrate=3m\n").bytes_per_s,
        Some(3.0 * 1048576.0)
    );
    // A write rate on a reader caps nothing, as in fio.
    assert_eq!(arrival("[j]\nrw=randread\nrate=,3m\n").bytes_per_s, None);
    assert_eq!(
        arrival("[j]\nrw=write\nrate=,3m\n").bytes_per_s,
        Some(3.0 * 1048576.0)
    );
    assert_eq!(
        arrival("[j]\nrw=randtrim\nrate=1m,2m,3m\n").bytes_per_s,
        Some(3.0 * 1048576.0)
    );
    // 0 is uncapped, as in fio.
    assert_eq!(arrival("[j]\nrw=randread\nrate=0\n").bytes_per_s, None);
    let mixed = jobs_of("[j]\nrw=randrw\nrate=0,1m\n");
    assert_eq!(
        mixed[0].shape.direction_rates,
        Some([None, Some(1048576.0)])
    );
    // A rate too low to issue a second request in the clock's range: one
    // request, then none before the job's stop.
    let slow = jobs_of("[j]\nrw=randrw\nrate_iops=0.0000000001\nruntime=1\ntime_based\n");
    let out = crate::workload::Generator::new(slow[0].clone(), 0, 1).requests_unloaded();
    assert_eq!(out.len(), 2, "one read and one write at the start");
    // `rate` and `rate_iops` together are refused, as fio 3.33 refuses them
    // (rate_options_fio_refuses_together_are_refused).
    assert_eq!(
        arrival("[j]\nrw=randread\nbs=8k\nrate_iops=10\n").bytes_per_s,
        Some(81920.0)
    );
}

#[test]
fn think_time_follows_every_thinktime_blocks_completions_rate_or_not() {
    let count = |options: &str| {
        let text = format!("[j]\nsize=64m\nruntime=1\ntime_based\nthinktime=1ms\n{options}\n");
        let job = jobs_of(&text)[0].clone();
        crate::workload::Generator::new(job, 0, 1)
            .requests_unloaded()
            .len()
    };
    // Requests that complete at once: 8 per think, 1,000 thinks a second
    // (fio 3.33 on a cached file: 7,520; its reads take time).
    assert_eq!(count("rw=read\nthinktime_blocks=8"), 8000);
    assert_eq!(count("rw=read"), 1000);
    // A rate above what the think time allows: the think time rules, as in
    // fio (it ignored think time under a rate: 2,560 here).
    assert_eq!(count("rw=randread\nrate=10m"), 1000);
    // A think shorter than the rate's schedule falls behind: the job catches
    // up after it, as fio 3.33 does (rate_iops=100 with a 20 ms think after
    // every 10: 100 a second, two back to back after each think; it took
    // 10 every 110 ms here, 455 in 5 s).
    let text = "[j]\nrw=randread\nsize=64m\nruntime=5\ntime_based\nrate_iops=100\nthinktime=20ms\nthinktime_blocks=10\nnorandommap\n";
    let job = jobs_of(text)[0].clone();
    let requests = crate::workload::Generator::new(job, 0, 1).requests_unloaded();
    assert_eq!(requests.len(), 500);
}

#[test]
fn per_direction_rates_hold_under_poisson_and_after_a_stonewall() {
    // The second job starts when the first ends (released at its end), and
    // its directions keep their rates from then.
    let jobs = jobs_of(
        "[first]\nrw=read\nsize=1m\n\
         [second]\nstonewall\nrw=randrw\nrate=2m,1m\nrate_process=poisson\nruntime=10\ntime_based\n",
    );
    let mut second = crate::workload::Generator::new(jobs[1].clone(), 1, 1);
    assert!(!second.waits_for().is_empty());
    second.release(iosteer_sched::Nanos::from_secs(3));
    let out = second.requests_unloaded();
    assert!(out[0].submitted.0 >= 3_000_000_000, "starts at its release");
    let bytes = bytes_by_direction(&out);
    // Exponential gaps: the means within a few percent over 10 s.
    assert!(bytes[0].abs_diff(20 * MIB) < 20 * MIB / 20, "{bytes:?}");
    assert!(bytes[1].abs_diff(10 * MIB) < 10 * MIB / 20, "{bytes:?}");
    // Reads capped, writes not: writes take the turns reads may not.
    let jobs = jobs_of("[j]\nrw=randrw\nrate=1m,\nthinktime=1ms\nruntime=10\ntime_based\n");
    let bytes = bytes_by_direction(
        &crate::workload::Generator::new(jobs[0].clone(), 0, 1).requests_unloaded(),
    );
    assert_one_direction_capped(bytes, 0);
}

/// Found by a review: a Poisson rate over several block sizes paced bytes
/// (a quarter of fio's requests for `bssplit=4k/50:32k/50 rate=1m`); fio
/// 3.33 counts requests of the smallest block (226 reads in 1 s there),
/// and a linear rate in the bytes issued.
#[test]
fn a_poisson_rate_counts_requests_of_the_smallest_block_as_fio_does() {
    let count = |options: &str| {
        let text =
            format!("[j]\nbssplit=4k/50:32k/50\nsize=64m\nruntime=10\ntime_based\n{options}");
        let job = jobs_of(&text)[0].clone();
        crate::workload::Generator::new(job, 0, 1)
            .requests_unloaded()
            .len()
    };
    // 1 MiB/s over 4 KiB: 256 a second.
    let poisson = count("rw=randread\nrate=1m\nrate_process=poisson\n");
    assert!(poisson.abs_diff(2560) < 2560 / 10, "{poisson}");
    let mixed = count("rw=randrw\nrate=1m,1m\nrate_process=poisson\n");
    assert!(mixed.abs_diff(5120) < 5120 / 10, "{mixed}");
    // Linear: 1 MiB/s over the 18 KiB mean, 57 a second.
    let linear = count("rw=randread\nrate=1m\n");
    assert!(linear.abs_diff(569) < 569 / 10, "{linear}");
}

/// 10 s of a job issuing a 4 KiB request every millisecond, the direction
/// `capped` held to 1 MiB/s: it moves 10 MiB, the other direction the
/// turns left (10,000 requests in all).
fn assert_one_direction_capped(bytes: [u64; 2], capped: usize) {
    assert!(bytes[capped].abs_diff(10 * MIB) <= 4096, "{bytes:?}");
    let other = bytes[1 - capped];
    assert!(
        other.abs_diff(10_000 * 4096 - 10 * MIB) <= 8192,
        "{bytes:?}"
    );
}

#[test]
fn runtime_zero_is_no_limit_as_in_fio() {
    // fio reads `runtime=0` as no runtime: the job moves its size.
    let jobs = jobs_of("[j]\nrw=read\nsize=8m\nruntime=0\n");
    assert_eq!(jobs[0].stop, None);
    assert_eq!(jobs[0].shape.bytes_limit, Some(8 << 20));
    // With time_based it is time_based without a runtime, which fio ignores
    // (fio 3.33 with number_ios=10 issues 10 requests): the job ends on
    // its size or number_ios.
    let file = file_of("[j]\nrw=read\nsize=8m\nruntime=0\ntime_based\nnumber_ios=10\n");
    assert_eq!(file.jobs[0].stop, None);
    assert_eq!(file.jobs[0].shape.ios_limit, Some(10));
    assert_noted(&file, "time_based without a runtime is ignored");
}

#[test]
fn number_ios_is_per_loop_and_does_not_end_a_time_based_job() {
    // fio stops at number_ios x loops requests (fio 3.33: 30 reads here).
    let jobs = jobs_of("[j]\nrw=read\nsize=8m\nnumber_ios=10\nloops=3\n");
    assert_eq!(jobs[0].shape.ios_limit, Some(30));
    // A time_based job runs its runtime whatever number_ios says, as fio's.
    let file = file_of("[j]\nrw=read\nsize=8m\nnumber_ios=10\nruntime=1\ntime_based\n");
    assert_eq!(file.jobs[0].shape.ios_limit, None);
    assert_noted(&file, "number_ios");
}

#[test]
fn number_ios_counts_from_the_end_of_the_ramp_as_in_fio() {
    // fio 3.33 issues 251 reads for this job: the ramp's second at 100
    // IOPS, then 150 (here the read at exactly 1 s is past the ramp; fio's
    // clock, a little behind its schedule, put it in: 250 where 251).
    let job = "[j]\nrw=randread\nsize=1m\nrate_iops=100\nnumber_ios=150\nramp_time=1\n";
    let issued = |text: &str| {
        let jobs = jobs_of(text);
        crate::workload::Generator::new(jobs[0].clone(), 0, 1)
            .requests_unloaded()
            .len()
    };
    assert_eq!(issued(job), 250);
    assert_eq!(issued(&job.replace("ramp_time=1\n", "")), 150);
}

#[test]
fn a_full_queue_drains_as_fio_lets_it() {
    // The depths fio 3.33 refilled from (libaio on a disk, iodepth=32,
    // read off its "IO depths" of submissions).
    for (options, refill) in [
        ("iodepth_low=16", Some(16)),
        ("iodepth_low=1", Some(1)),
        ("iodepth_batch_complete_min=8", Some(24)),
        ("iodepth_batch_complete=8", Some(24)),
        ("iodepth_batch_complete_min=8\niodepth_low=12", Some(8)),
        ("iodepth_batch_complete_min=64", Some(0)),
        // fio's default (iodepth_low = iodepth) and 0 read as it: no drain.
        ("iodepth_low=32", None),
        ("iodepth_low=0", None),
        ("iodepth_low=64", None),
        ("iodepth_batch_complete_min=1", None),
    ] {
        let file = file_of(&format!(
            "[j]\nioengine=libaio\nrw=randread\niodepth=32\n{options}\n"
        ));
        let drain = file.jobs[0].shape.queue_drain;
        assert_eq!(drain.map(|d| d.resume_at(32)), refill, "{options}");
        assert!(file.notes.is_empty(), "{options}: {:?}", file.notes);
    }
    // A queue a latency target holds at 4 drains by the same rules: fio's
    // queue is full at the target's depth, and reaps min(8, 4) at once.
    let file = file_of("[j]\nrw=randread\niodepth=32\niodepth_batch_complete_min=8\n");
    assert_eq!(file.jobs[0].shape.queue_drain.unwrap().resume_at(4), 0);
    // Polling has no depth to model: said.
    assert_noted(
        &file_of("[j]\nrw=randread\niodepth=8\niodepth_batch_complete_min=0\n"),
        "iodepth_batch_complete_min=0: fio then polls for completions",
    );
    assert_noted(
        &file_of("[j]\nrw=randread\nioscheduler=mq-deadline\n"),
        "ioscheduler=mq-deadline is not applied",
    );
    assert_refused("[j]\niodepth_low=x\n", "t.fio:2", &["iodepth_low=x"]);
}

#[test]
fn max_latency_is_per_direction_in_microseconds_and_off_without_latencies() {
    let limits = |options: &str| {
        let file = file_of(&format!("[j]\nrw=randrw\n{options}\n"));
        (file.jobs[0].shape.max_latency, file.notes)
    };
    let us = |n| Some(Nanos::from_micros(n));
    assert_eq!(limits("max_latency=300").0, [us(300); 3]);
    assert_eq!(
        limits("max_latency=10s,1us").0,
        [us(10_000_000), us(1), us(1)]
    );
    assert_eq!(limits("max_latency=,2ms").0, [None, us(2000), us(2000)]);
    assert_eq!(limits("max_latency=0").0, [None; 3]);
    for off in ["disable_lat=1", "gtod_reduce=1"] {
        let (limits, notes) = limits(&format!("max_latency=300\n{off}"));
        assert_eq!(limits, [None; 3], "{off}");
        assert!(
            notes
                .iter()
                .any(|n| n.contains("max_latency is not checked")),
            "{notes:?}"
        );
    }
    assert_refused("[j]\nmax_latency=soon\n", "t.fio:2", &["max_latency=soon"]);
}

/// fio caps a synchronous engine's queue at one request (fio 3.33 with
/// `iodepth=32`: "queue depth will be capped at 1" for psync, sync, vsync,
/// pvsync2, mmap and splice, and every request at depth 1 with no engine
/// named, psync being its default); an asynchronous engine keeps the
/// depth. iosteer ran such a job at depth 32.
#[test]
fn a_synchronous_engine_queues_one_request_as_in_fio() {
    let depth = |engine: &str| {
        let file = file_of(&format!("[j]\nrw=randread\niodepth=32\n{engine}"));
        let noted = file.notes.iter().any(|n| n.contains("caps the queue at 1"));
        (synthetic(&file.jobs[0]).arrival.iodepth, noted)
    };
    for engine in [
        "",
        "ioengine=psync\n",
        "ioengine=sync\n",
        "ioengine=mmap\n",
        "ioengine=pvsync2:hipri\n",
    ] {
        assert_eq!(depth(engine), (1, true), "{engine}");
    }
    for engine in [
        "ioengine=libaio\n",
        "ioengine=io_uring\n",
        "ioengine=posixaio\n",
    ] {
        assert_eq!(depth(engine), (32, false), "{engine}");
    }
    let single = file_of("[j]\nrw=randread\niodepth=1\n");
    assert!(single.notes.is_empty(), "{:?}", single.notes);
}

#[test]
fn rate_options_fio_refuses_together_are_refused() {
    // fio 3.33: "rate and rate_iops are mutually exclusive", "minimum rate
    // exceeds rate"; both ran here, at `rate`, and with a wrong note.
    for (options, says) in [
        ("rate_iops=200\nrate=1m\n", "mutually exclusive"),
        ("rate_min=1m\nrate_iops_min=10\n", "mutually exclusive"),
        (
            "rate_iops=100\nrate_iops_min=200\n",
            "minimum rate exceeds rate",
        ),
        ("rate=1m\nrate_min=2m\n", "minimum rate exceeds rate"),
    ] {
        assert_refused(&format!("[j]\nrw=read\n{options}"), "t.fio:4:", &[says]);
    }
    // Different directions go together.
    jobs_of("[j]\nrw=randrw\nrate=1m,\nrate_iops=,100\n");
    jobs_of("[j]\nrw=read\nrate_iops=100\nrate_iops_min=50\n");
    assert_refused(
        "[j]\nloops=4294967296\n",
        "t.fio:2:",
        &["at most 4294967295"],
    );
}

/// Found by a review: the flush after a write went out with it, so at
/// iodepth 1 its latency was the write's and its own (0.96 ms where the
/// drive's flush takes 0.22). fio sends it when it goes on: once a
/// completion frees a slot.
#[test]
fn a_sync_at_the_iodepth_goes_when_a_write_completes() {
    use iosteer_sched::{Nanos, Op};
    let sent_after_write = |depth: u32| {
        let text =
            format!("[a]\nioengine=libaio\nrw=write\nbs=16k\nsize=1m\nfsync=1\niodepth={depth}\n");
        let mut job = crate::workload::Generator::new(jobs_of(&text)[0].clone(), 0, 1);
        let (mut next_id, mut sent) = (0, Vec::new());
        job.issue(Nanos::ZERO, &mut next_id, &mut sent);
        let first: Vec<Op> = sent.iter().map(|r| r.op).collect();
        if depth == 1 {
            assert_eq!(job.next_at(), None, "at its depth");
            job.completed(&sent[0], Nanos(1000));
            assert!(job.next_at().is_some());
            job.issue(Nanos(1000), &mut next_id, &mut sent);
            assert_eq!(sent[1].op, Op::Flush, "at the write's completion");
        }
        first
    };
    assert_eq!(sent_after_write(1), [Op::Write]);
    assert_eq!(
        sent_after_write(2),
        [Op::Write, Op::Flush],
        "a slot free: at once"
    );
}

#[test]
fn fsync_follows_the_nth_write_and_every_read_after_it_as_fio() {
    // fio 3.33 checks its write count each time it goes on: after the 4th
    // write a sync, then one after each read until the next write
    // (`rw=randrw fsync=4`: 61 syncs for 124 writes; 29 here before).
    let job = jobs_of("[a]\nrw=randrw\nbs=4k\nsize=1m\nfsync=4\n")[0].clone();
    let requests = crate::workload::Generator::new(job, 0, 1).requests_unloaded();
    let (mut writes, mut armed, mut expected, mut flushes) = (0, false, 0, 0);
    for pair in requests.windows(2) {
        use iosteer_sched::Op;
        match pair[0].op {
            Op::Write => {
                writes += 1;
                armed = writes % 4 == 0;
                expected += u32::from(armed);
            }
            Op::Read => expected += u32::from(armed),
            _ => {}
        }
        if pair[1].op == Op::Flush {
            flushes += 1;
            assert_ne!(pair[0].op, Op::Flush, "no sync right after a sync");
        }
    }
    assert_eq!(flushes, expected);
    assert!(
        flushes > writes / 4 + 10,
        "{flushes} syncs for {writes} writes"
    );
}

#[test]
fn fsync_and_fdatasync_count_apart_and_either_end_sync_holds() {
    // fio 3.33 keeps fsync=N and fdatasync=N apart (fdatasync=3 fsync=5: 68
    // datasyncs and 51 syncs on a mixed job); one took the other's place.
    let flushes = |options: &str| {
        let job = jobs_of(&format!("[a]\nrw=write\nbs=4k\nsize=1m\n{options}\n"))[0].clone();
        let requests = crate::workload::Generator::new(job, 0, 1).requests_unloaded();
        (requests.iter())
            .filter(|r| r.op == iosteer_sched::Op::Flush)
            .count()
    };
    // 256 writes, none after the last: 85 every 3 and 51 every 5, one
    // where both are due (17 times), as fio's 68 datasyncs and 51 syncs.
    assert_eq!(flushes("fdatasync=3\nfsync=5"), 85 + 51 - 17);
    assert_eq!(flushes("fdatasync=4\nfsync=4"), 63);
    assert_eq!(flushes("fsync=5"), 51);
    // `end_fsync=1` then `fsync_on_close=0`: fio still syncs at the end.
    assert_eq!(flushes("end_fsync=1\nfsync_on_close=0"), 1);
}
