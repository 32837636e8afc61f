//! fio's verify read-back (`verify=` with `do_verify=1`), each case with
//! what fio 3.33 issued for it (psync on a file, `--write_iolog`).

use iosteer_sched::{Nanos, Op, Request};

use super::*;
use crate::workload::Generator;

const GIB: u64 = 1 << 30;

/// What the one job of `text` issues on a 1 GiB drive, each request
/// completing as it is issued.
fn issued(text: &str) -> Vec<Request> {
    let jobs = parse(text, "t.fio", GIB).unwrap();
    Generator::new(jobs[0].clone(), 0, 1).requests_unloaded()
}

/// The requests of `op`, as (offset, length) in the order issued.
fn pieces(requests: &[Request], op: Op) -> Vec<(u64, u64)> {
    requests
        .iter()
        .filter(|r| r.op == op)
        .map(|r| (r.offset.0, r.len.0))
        .collect()
}

fn count(requests: &[Request], op: Op) -> usize {
    requests.iter().filter(|r| r.op == op).count()
}

/// The ops of `requests`, one letter each.
fn letters(requests: &[Request]) -> String {
    requests
        .iter()
        .map(|r| match r.op {
            Op::Write => 'w',
            Op::Read => 'r',
            Op::Flush => 'f',
            Op::Trim => 't',
        })
        .collect()
}

/// fio 3.33, `rw=write bs=4k size=256k loops=2 verify=crc32c`: 64 writes
/// from offset 0, 64 reads of the same blocks in the same order, then the
/// same again.
#[test]
fn a_writer_reads_back_after_each_loop_what_the_loop_wrote() {
    let requests = issued("[j]\nrw=write\nbs=4k\nsize=256k\nloops=2\nverify=crc32c\n");
    let ops: Vec<Op> = requests.iter().map(|r| r.op).collect();
    let loop_ops: Vec<Op> = [[Op::Write; 64], [Op::Read; 64]].concat();
    assert_eq!(ops, [loop_ops.clone(), loop_ops].concat());
    let blocks: Vec<(u64, u64)> = (0..64).map(|i| (i * 4096, 4096)).collect();
    assert_eq!(pieces(&requests[..128], Op::Write), blocks);
    assert_eq!(pieces(&requests[..128], Op::Read), blocks);
}

/// fio keeps a random job's writes in a list while its random map is on
/// (read back as written) and in a tree by offset without it (each block
/// once: 64 writes, 40 reads in fio 3.33's run).
#[test]
fn random_writes_read_back_as_written_or_by_offset_without_the_map() {
    let with_map = issued("[j]\nrw=randwrite\nbs=4k\nsize=256k\nverify=crc32c\n");
    assert_eq!(pieces(&with_map, Op::Read), pieces(&with_map, Op::Write));

    let without = issued("[j]\nrw=randwrite\nbs=4k\nsize=256k\nverify=crc32c\nnorandommap\n");
    let mut written = pieces(&without, Op::Write);
    assert_eq!(written.len(), 64);
    written.sort_unstable();
    written.dedup();
    assert!(
        written.len() < 64,
        "no block written twice in 64 draws of 64"
    );
    assert_eq!(pieces(&without, Op::Read), written);
    let first_read = without.iter().position(|r| r.op == Op::Read).unwrap();
    assert_eq!(first_read, 64, "reads only after the writes");
}

/// fio keeps no random map for a distribution other than uniform, so it
/// reads each block back once by offset there too (found by a review:
/// fio 3.33 read back 404 of 2,048 zipf:1.2 writes, iosteer all 2,048).
#[test]
fn a_skewed_random_writer_reads_each_block_back_once() {
    for distribution in ["zipf:1.2", "normal", "zoned:50/5:50/95"] {
        let text = format!(
            "[j]\nrw=randwrite\nbs=4k\nsize=256k\nverify=crc32c\nrandom_distribution={distribution}\n"
        );
        let requests = issued(&text);
        let mut written = pieces(&requests, Op::Write);
        assert_eq!(written.len(), 64, "{distribution}");
        written.sort_unstable();
        written.dedup();
        assert!(
            written.len() < 64,
            "{distribution}: hot blocks written twice"
        );
        assert_eq!(pieces(&requests, Op::Read), written, "{distribution}");
    }
}

/// With the lfsr generator fio keeps no random map either: each block is
/// written once, in its order, and read back by offset (fio 3.33: writes
/// 15 11 9 ..., reads 0 1 2 ...; found by a review).
#[test]
fn an_lfsr_writer_reads_back_by_offset() {
    let text = "[j]\nrw=randwrite\nbs=4k\nsize=64k\nverify=crc32c\nrandom_generator=lfsr\n";
    let requests = issued(text);
    let mut written = pieces(&requests, Op::Write);
    written.sort_unstable();
    assert_eq!(
        written,
        (0..16).map(|i| (i * 4096, 4096)).collect::<Vec<_>>()
    );
    assert_eq!(pieces(&requests, Op::Read), written);
    let err = parse("[j]\nrw=randwrite\nrandom_generator=mt\n", "t.fio", GIB);
    assert!(err.unwrap_err().to_string().contains("lfsr"));
}

/// With `verify`, fio 3.33 ends a loop at `size` whatever `io_size` says,
/// and goes on only while the bytes done, read-backs included, fall short
/// of `io_size`: 64/64 with io_size=512k, 128/128 with 1m; 64 writes with
/// do_verify=0; 128 writes without verify.
#[test]
fn verify_ends_a_loop_at_size_and_read_backs_count_toward_io_size() {
    let job = |extra: &str| issued(&format!("[j]\nrw=write\nbs=4k\nsize=256k\n{extra}"));
    let counts = |r: &[Request]| (count(r, Op::Write), count(r, Op::Read));
    assert_eq!(counts(&job("io_size=512k\nverify=crc32c\n")), (64, 64));
    assert_eq!(counts(&job("io_size=1m\nverify=crc32c\n")), (128, 128));
    assert_eq!(
        counts(&job("io_size=512k\nverify=crc32c\ndo_verify=0\n")),
        (64, 0)
    );
    assert_eq!(counts(&job("io_size=512k\n")), (128, 0));
    assert_eq!(counts(&job("number_ios=10\nverify=crc32c\n")), (10, 10));
}

/// fio's `end_fsync` closes each loop's writes before the read-back; no
/// flush follows it (fio 3.33, `size=64k fsync=4 end_fsync=1`: syncs
/// after writes 4, 8 and 12, one at the end of the writes, then 16 reads).
#[test]
fn end_fsync_flushes_before_the_read_back_not_after() {
    let ops = letters(&issued(
        "[j]\nrw=write\nbs=4k\nsize=64k\nfsync=4\nend_fsync=1\nverify=md5\n",
    ));
    assert_eq!(
        ops,
        format!("{}f{}", "wwwwf".repeat(3) + "wwww", "r".repeat(16))
    );
}

/// A loop cut short by the runtime reads nothing back (fio 3.33,
/// `rate=1m runtime=1` on 8 MiB: 256 writes, no reads); rate and think
/// time hold the writes, not the read-back (fio 3.33 issued the 32
/// reads of `rate_iops=100` within 0.2 ms of the last write, and with a
/// think time thought once more before them).
#[test]
fn the_read_back_is_cut_by_the_runtime_and_free_of_rate_and_think_time() {
    let cut = issued("[j]\nrw=write\nbs=4k\nsize=8m\nrate=1m\nruntime=1\nverify=crc32c\n");
    assert_eq!((count(&cut, Op::Write), count(&cut, Op::Read)), (256, 0));

    for pacing in ["rate_iops=100", "thinktime=10ms"] {
        let paced = issued(&format!(
            "[j]\nrw=write\nbs=4k\nsize=128k\n{pacing}\nverify=crc32c\n"
        ));
        let last_write = paced.iter().rfind(|r| r.op == Op::Write).unwrap();
        assert!(last_write.submitted >= Nanos::from_millis(300), "{pacing}");
        let reads: Vec<Nanos> = paced
            .iter()
            .filter(|r| r.op == Op::Read)
            .map(|r| r.submitted)
            .collect();
        assert_eq!(reads.len(), 32, "{pacing}");
        // fio thinks once after the last write, then reads back at once
        // (fio 3.33, thinktime=10ms: the last write at 151.4 ms, the 16
        // reads from 161.6 ms to 161.7 ms).
        let wait = if pacing.starts_with("think") {
            Nanos::from_millis(10)
        } else {
            Nanos::ZERO
        };
        let start = last_write.submitted + wait;
        assert!(reads.iter().all(|&at| at == start), "{pacing}: {reads:?}");
    }
}

/// A time_based job reads nothing back here: fio reads its backlog back
/// as it runs (5,120 reads beside 5,998 writes in 3 s, found by a review),
/// and the note said the job read back after each loop.
#[test]
fn a_time_based_verifier_says_what_it_reads_back() {
    let text = "[j]\nrw=randwrite\nsize=1m\nverify=md5\ntime_based\nruntime=1\n";
    let noted = |text: &str, what: &str| {
        let file = parse_file(text, "t.fio", GIB).unwrap();
        assert!(file.jobs[0].shape.rounds.is_none());
        assert!(
            file.notes.iter().any(|n| n.contains(what)),
            "{what}: {:?}",
            file.notes
        );
    };
    noted(text, "a time_based job reads nothing back, as in fio");
    noted(&format!("{text}verify_backlog=16\n"), "not modelled here");
}

#[test]
fn the_notes_say_the_data_is_not_checked() {
    let file = parse_file("[j]\nrw=write\nsize=1m\nverify=md5\n", "t.fio", GIB).unwrap();
    assert!(
        file.notes.iter().any(|n| n.contains("verify=md5")
            && n.contains("reads back")
            && n.contains("not checked")),
        "{:?}",
        file.notes
    );
    for quiet in ["do_verify=0", "rw=read"] {
        let text = format!("[j]\nrw=write\nsize=1m\nverify=md5\n{quiet}\n");
        let file = parse_file(&text, "t.fio", GIB).unwrap();
        assert!(file.notes.is_empty(), "{quiet}: {:?}", file.notes);
        assert!(file.jobs[0]
            .shape
            .rounds
            .as_ref()
            .unwrap()
            .read_back
            .is_none());
    }
}

/// A read-back that would hold more pieces than memory allows is refused
/// before the run, naming the way out; a sequential writer of one block
/// size holds a few runs whatever its size.
#[test]
fn a_read_back_too_large_to_hold_is_refused_before_the_run() {
    let drive = 64 * GIB;
    let err = parse(
        "[j]\nrw=randwrite\nbs=512\nsize=16g\nverify=crc32c\n",
        "t.fio",
        drive,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("t.fio:") && err.contains("do_verify=0") && err.contains("33554432"),
        "{err}"
    );
    assert!(parse(
        "[j]\nrw=write\nbs=512\nsize=16g\nverify=crc32c\n",
        "t.fio",
        drive
    )
    .is_ok());
}

/// fio's `verify_backlog`: a batch of read-backs each time the pieces
/// kept reach a multiple of the backlog, the rest after the loop. The
/// orders fio 3.33 issued (psync, 32 writes of 4 KiB).
#[test]
fn a_backlog_reads_back_in_batches_as_fio_does() {
    let job = |extra: &str| {
        issued(&format!(
            "[j]\nrw=write\nbs=4k\nsize=128k\nverify=crc32c\n{extra}"
        ))
    };
    let (w, r) = (|n| "w".repeat(n), |n| "r".repeat(n));
    let batch_8_of_16 = job("verify_backlog=16\nverify_backlog_batch=8\n");
    assert_eq!(
        letters(&batch_8_of_16),
        [w(16), r(8), w(8), r(8), w(8), r(16)].concat()
    );
    // A batch larger than the backlog reads back each write as it comes
    // until the batch is spent.
    let batch_12_of_8 = job("verify_backlog=8\nverify_backlog_batch=12\n");
    assert_eq!(
        letters(&batch_12_of_8),
        [
            w(8),
            r(8),
            "wr".repeat(4),
            w(8),
            r(8),
            "wr".repeat(4),
            w(8),
            r(8)
        ]
        .concat()
    );
    // Read in the order written, each block once.
    let reads = pieces(&batch_12_of_8, Op::Read);
    assert_eq!(reads, pieces(&batch_12_of_8, Op::Write));
    // No read-back without do_verify, backlog or not.
    let quiet = job("verify_backlog=10\ndo_verify=0\n");
    assert_eq!(letters(&quiet), w(32));
}

/// fio's `verify_only`: no writes, the reads of what they would have
/// written (fio 3.33, `rw=write size=256k verify_only`: 0 writes, 64
/// reads); a random job's reads follow its draws.
#[test]
fn verify_only_reads_back_what_the_writes_would_have_written() {
    let sequential = issued("[j]\nrw=write\nbs=4k\nsize=256k\nverify=crc32c\nverify_only\n");
    assert_eq!(count(&sequential, Op::Write), 0);
    let blocks: Vec<(u64, u64)> = (0..64).map(|i| (i * 4096, 4096)).collect();
    assert_eq!(pieces(&sequential, Op::Read), blocks);

    let text = "[j]\nrw=randwrite\nbs=4k\nsize=256k\nverify=crc32c\n";
    let written = pieces(&issued(text), Op::Write);
    let only = issued(&format!("{text}verify_only\n"));
    assert_eq!(pieces(&only, Op::Read), written);
    assert_eq!(count(&only, Op::Write), 0);
    let file = parse_file(&format!("{text}verify_only\n"), "t.fio", GIB).unwrap();
    assert!(
        file.notes.iter().any(|n| n.contains("verify_only")),
        "{:?}",
        file.notes
    );
}

/// A round that wrote nothing reads nothing back and the job ends: a mix
/// whose one request is a read must not wait for a read-back forever.
#[test]
fn a_round_that_wrote_nothing_ends() {
    let requests =
        issued("[j]\nrw=randrw\nrwmixread=99\nbs=4k\nsize=256k\nnumber_ios=3\nverify=md5\n");
    assert!(
        parse("[j]\nrw=randrw\nrwmixread=99\nverify=md5\n", "t.fio", GIB).unwrap()[0]
            .shape
            .rounds
            .as_ref()
            .unwrap()
            .read_back
            .is_some()
    );
    assert_eq!(
        (count(&requests, Op::Read), count(&requests, Op::Write)),
        (3, 0)
    );
}

/// fio's rounds without verify: a loop moves `size`, `end_fsync` closes
/// each loop, and past its loops a job goes on only while it falls short
/// of `io_size` (fio 3.33: writes and syncs).
#[test]
fn loops_and_io_size_move_in_rounds_each_closed_by_end_fsync() {
    let job = |extra: &str| {
        let requests = issued(&format!("[j]\nbs=4k\nsize=32k\nend_fsync=1\n{extra}"));
        (
            count(&requests, Op::Write),
            count(&requests, Op::Read),
            count(&requests, Op::Flush),
        )
    };
    assert_eq!(job("rw=write\nloops=3\n"), (24, 0, 3));
    assert_eq!(job("rw=write\nio_size=96k\n"), (24, 0, 3));
    assert_eq!(job("rw=write\nio_size=64k\nloops=2\n"), (16, 0, 2));
    assert_eq!(job("rw=randwrite\nio_size=64k\nloops=2\n"), (16, 0, 2));
    assert_eq!(
        job("rw=randwrite\nio_size=64k\nloops=2\nnorandommap\n"),
        (32, 0, 2)
    );
    assert_eq!(job("rw=write\nio_size=16k\nloops=3\n"), (12, 0, 3));
    assert_eq!(job("rw=read\nio_size=80k\n"), (0, 20, 0));
    // Each loop's flush comes after its writes complete, before the next.
    let ops = letters(&issued(
        "[j]\nrw=write\nbs=4k\nsize=16k\nloops=2\nend_fsync=1\n",
    ));
    assert_eq!(ops, "wwwwfwwwwf");
}

/// Found in review, each with what fio 3.33 issued (writes w, reads r,
/// syncs s; `w16 s1` is 16 writes then a sync).
#[test]
fn rounds_end_as_fios_loops_do() {
    let ops = |text: &str| letters(&issued(text));
    // A job out of requests flushes one empty loop more, then ends (fio's
    // `td->done`), not one flush for each loop left.
    let out_of_ios = ops("[j]\nrw=write\nbs=4k\nsize=64k\nnumber_ios=1\nloops=100\nend_fsync=1\n");
    assert_eq!(
        out_of_ios,
        format!("{}{}ff", "wwwwwwwwwwwwwwwwf".repeat(6), "wwww")
    );
    // A random writer without the map does all its loops in one round;
    // the loop left flushes, empty (fio: w32 s2).
    let one_round =
        issued("[j]\nrw=randwrite\nnorandommap\nbs=4k\nsize=64k\nloops=2\nend_fsync=1\n");
    assert_eq!(letters(&one_round), format!("{}ff", "w".repeat(32)));
    // No fsync=N after the write that ends the job.
    assert_eq!(
        ops("[j]\nrw=write\nbs=4k\nsize=64k\nnumber_ios=6\nfsync=3\n"),
        "wwwfwww"
    );
    // verify_only syncs nothing.
    let only = ops("[j]\nrw=write\nbs=4k\nsize=64k\nverify=crc32c\nverify_only=1\nend_fsync=1\n");
    assert_eq!(only, "r".repeat(16));
    // number_ios counts the read-backs: w16 r16 and the job is done.
    let counted = ops("[j]\nrw=write\nbs=4k\nsize=64k\nverify=crc32c\nnumber_ios=6\nloops=3\n");
    assert_eq!(counted, format!("{}{}", "w".repeat(16), "r".repeat(16)));
    // Bytes done in the ramp do not count toward io_size: w16 r16 w16 r16.
    let ramped = ops(
        "[j]\nrw=write\nbs=4k\nsize=64k\nio_size=128k\nrate_iops=50\nramp_time=200ms\nverify=crc32c\n",
    );
    assert_eq!(
        ramped,
        format!("{}{}", "w".repeat(16), "r".repeat(16)).repeat(2)
    );
}

/// A sequential writer with holes keeps a piece per block: it is held to
/// the limit as a random one is.
#[test]
fn a_writer_with_holes_is_held_to_the_read_back_limit() {
    let err = parse(
        "[j]\nrw=write:512\nbs=512\nsize=16g\nverify=crc32c\n",
        "t.fio",
        64 * GIB,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("do_verify=0"), "{err}");
}

/// The read-backs of all the jobs together are held to the limit: ten
/// copies of a job each under it are over it (fio's own atomic-verify
/// example: ten random writers over a whole drive).
#[test]
fn the_jobs_of_a_file_together_are_held_to_the_read_back_limit() {
    let job = |copies: u32| {
        let text = format!("[j]\nrw=randwrite\nbs=4k\nsize=32g\nverify=crc32c\nnumjobs={copies}\n");
        parse(&text, "t.fio", 64 * GIB)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert_eq!(job(2), Ok(()), "2 x 8,388,608 pieces: at the limit");
    let err = job(3).unwrap_err();
    assert!(
        err.contains("25165824") && err.contains("fewer jobs"),
        "{err}"
    );
}

/// A sequential job of mixed sizes ends each pass with a block that fits,
/// as fio draws one (fio 3.33, `bsrange=8k-24k size=64k`: each loop
/// covers 0 to 64 KiB exactly, `w0+8 w8+16 w24+24 w48+8 w56+8`); it
/// wrapped a block that did not fit back to the start (80 KiB in its
/// first loop).
#[test]
fn a_pass_of_mixed_sizes_ends_with_a_block_that_fits() {
    let text = "[j]\nrw=write\nbsrange=8k-24k\nsize=64k\nverify=crc32c\nloops=2\n";
    let requests = issued(text);
    let rounds: Vec<&[Request]> = requests
        .split(|r| r.op == Op::Read)
        .filter(|w| !w.is_empty())
        .collect();
    assert_eq!(rounds.len(), 2, "{}", letters(&requests));
    for writes in rounds {
        let mut at = 0;
        for w in writes {
            assert_eq!(w.offset.0, at, "{:?}", pieces(writes, Op::Write));
            at += w.len.0;
        }
        assert_eq!(at, 64 << 10);
    }
}

/// fio's dry run goes to the job's byte limit, and a backlog's reads in it
/// are dry too (fio 3.33: 16 reads with `io_size=128k` on 64 KiB, the
/// second pass over the same blocks; 4 with `verify_backlog=4`).
#[test]
fn verify_only_runs_dry_to_the_limit_and_its_backlog_is_dry() {
    let job = |extra: &str| {
        letters(&issued(&format!(
            "[j]\nrw=write\nbs=4k\nsize=64k\nverify=crc32c\nverify_only=1\n{extra}"
        )))
    };
    assert_eq!(job("io_size=128k\n"), "r".repeat(16));
    assert_eq!(job("verify_backlog=4\n"), "r".repeat(4));
}

/// With a backlog, an `fsync=N` sync waits for the backlog's read-backs
/// due after the write, as fio's `get_io_u` takes them first: fio 3.33's
/// order, request for request (its syncs written `f` here).
#[test]
fn a_backlog_reads_back_before_the_sync_that_is_due() {
    let ops = letters(&issued(
        "[j]\nrw=write\nbs=4k\nsize=64k\nverify=crc32c\nverify_backlog=1\nend_fsync=1\nfsync=3\n",
    ));
    assert_eq!(ops, format!("{}wfr", "wrwrwrf".repeat(5)));
}

/// What the one job of `text` issues when the drive completes the oldest
/// request out only once the job's queue is full.
fn issued_with_full_queue(text: &str) -> Vec<Request> {
    let jobs = parse(text, "t.fio", GIB).unwrap();
    let mut job = Generator::new(jobs[0].clone(), 0, 1);
    job.release(Nanos::ZERO);
    let (mut next_id, mut out, mut queue) = (0, Vec::new(), std::collections::VecDeque::new());
    let mut now = Nanos::ZERO;
    loop {
        let before = out.len();
        if let Some(at) = job.next_at() {
            now = now.max(at);
            job.issue(now, &mut next_id, &mut out);
        }
        queue.extend(out[before..].iter().cloned());
        if out.len() > before {
            continue;
        }
        let Some(oldest) = queue.pop_front() else {
            return out;
        };
        now += Nanos::from_micros(1);
        job.completed(&oldest, now);
    }
}

/// fio reads no piece back while its write is out, and starts a batch
/// only once its last request to complete was not a read (fio 3.33's
/// `IP_F_IN_FLIGHT` and `last_ddir`): at `iodepth=4` with the queue kept
/// full, four writes, then their four read-backs, and so on. iosteer read
/// each block back while its write was still out.
#[test]
fn a_backlog_reads_back_only_what_completed() {
    let requests = issued_with_full_queue(
        "[j]\nioengine=libaio\nrw=write\nbs=4k\nsize=64k\niodepth=4\nverify=crc32c\nverify_backlog=1\n",
    );
    assert_eq!(letters(&requests), "wwwwrrrr".repeat(4));
    assert_eq!(pieces(&requests, Op::Read), pieces(&requests, Op::Write));
}
