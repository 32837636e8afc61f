//! A random job's requests that draw no offset (`percentage_random`,
//! `rw=randread:N`): where fio sends them.

use super::*;
use iosteer_sched::{Op, Request};

/// The requests of the job file `text`'s first job, each completed at once.
fn requests(text: &str) -> Vec<Request> {
    crate::workload::Generator::new(jobs_of(text)[0].clone(), 0, 1).requests_unloaded()
}

/// The offsets of `requests` in direction `op`, in KiB, in order.
fn offsets_k(requests: &[Request], op: Op) -> Vec<u64> {
    requests
        .iter()
        .filter(|r| r.op == op)
        .map(|r| r.offset.0 / 1024)
        .collect()
}

/// `count` offsets in KiB from 0, `step` apart.
fn steps_k(step: u64, count: usize) -> Vec<u64> {
    (0..count as u64).map(|i| i * step).collect()
}

/// A mix's reads follow on from its last read and its writes from its last
/// write, as fio keeps one position per direction (fio 3.33, `rw=randrw
/// bs=16k,8k percentage_random=0 size=256k`: `r0 r16k r32k w0 r48k r64k w8k
/// w16k w24k r80k w32k...`, 12 reads 16 KiB apart from 0 and 8 writes 8 KiB
/// apart from 0, as `rw=rw`; `bs=4k size=64k`: 10 reads and 6 writes, each
/// from 0). iosteer walked one stream for both: `w0 w8k r16k w32k r40k...`,
/// its reads on 8 KiB boundaries.
#[test]
fn a_mix_s_reads_and_writes_follow_on_each_from_their_own_last() {
    let out = requests("[j]\nrw=randrw\nbs=16k,8k\npercentage_random=0\nsize=256k\n");
    let (reads, writes) = (offsets_k(&out, Op::Read), offsets_k(&out, Op::Write));
    assert!(!reads.is_empty() && !writes.is_empty());
    assert_eq!(reads, steps_k(16, reads.len()));
    assert_eq!(writes, steps_k(8, writes.len()));
}

/// fio's `rw=randrw:4` draws a random offset for every fourth request; the
/// three after it follow on from the last request of their own direction,
/// and of their own file (fio 3.33, `rw=randrw:4 bs=4k size=1m`: `r60k r64k
/// r68k w0`, the write's position being where its direction started;
/// `nrfiles=2 filesize=64k percentage_random=20`: `r0:0 r1:0 r0:4k w1:44k
/// r0:52k r1:4k w0:0`, per file).
#[test]
fn a_run_s_requests_follow_the_last_of_their_file_and_direction() {
    for (files, file_size) in [("size=1m", MIB), ("nrfiles=2\nfilesize=512k", MIB / 2)] {
        let out = requests(&format!(
            "[j]\nrw=randrw:4\nbs=4k\n{files}\nnumber_ios=400\n"
        ));
        let mut ends = std::collections::HashMap::new();
        for (i, r) in out.iter().enumerate() {
            let file = r.offset.0 / file_size;
            let end = ends.entry((file, r.op)).or_insert(file * file_size);
            if i % 4 != 0 && *end < file_size * (file + 1) {
                assert_eq!(r.offset.0, *end, "{files}: request {i}");
            }
            *end = r.offset.0 + r.len.0;
        }
    }
}

/// `rw_sequencer=identical` repeats the last offset of the direction; its
/// next pick, when not random, goes on after it, as fio's `last_pos` does
/// (fio 3.33, `rw=randread:4 rw_sequencer=identical percentage_random=0
/// bs=4k size=64k`: 0 four times, then 4k four times, 8k, 12k; `rw=randrw:4`
/// so: `r0 r0 r0 w0 r4k r4k w0 w0 w4k r4k w4k r4k w8k...`). iosteer read 0
/// sixteen times.
#[test]
fn identical_requests_repeat_and_the_next_pick_goes_on() {
    let out =
        requests("[j]\nrw=randread:4\nrw_sequencer=identical\npercentage_random=0\nsize=64k\n");
    let expected: Vec<u64> = (0..16).map(|i| i / 4 * 4).collect();
    assert_eq!(offsets_k(&out, Op::Read), expected);
}

/// `percentage_random` takes a value per direction (reads, writes, trims),
/// as fio's other per-direction options: a blank one keeps the value in
/// force, those left out at the end take the last one given (fio 3.33, the
/// share of each direction's requests that follow on, `rw=randrw`: `0,100`
/// reads 100% and writes 0%; `30,` reads 69% and writes 0% (all random);
/// `,50` reads 0% and writes 49%; `[global] percentage_random=0,0` then
/// `,100` reads 100% and writes 0%; `rw=randtrim percentage_random=0,50,100`
/// trims 0%). iosteer refused every list. fio drops the job for `,,` and
/// `101`; it takes `50,101` and `30,abc` as `50,` and `30,` after an error
/// message, and `20:80` as `20,80`: iosteer refuses them all.
#[test]
fn percentage_random_takes_a_value_per_direction() {
    let given = |text: &str| jobs_of(text)[0].shape.percentage_random;
    let mix = |value: &str| given(&format!("[j]\nrw=randrw\npercentage_random={value}\n"));
    assert_eq!(mix("0,100"), Some([0, 100, 100]));
    assert_eq!(mix("30,"), Some([30, 100, 100]));
    assert_eq!(mix(",50"), Some([100, 50, 50]));
    assert_eq!(mix("30,,"), Some([30, 100, 100]));
    assert_eq!(mix("50"), Some([50; 3]));
    assert_eq!(
        given("[global]\npercentage_random=0,0\n[j]\nrw=randrw\npercentage_random=,100\n"),
        Some([0, 100, 100])
    );
    let trims = given("[j]\nrw=randtrim\npercentage_random=0,50,100\n");
    assert_eq!(trims, None, "trims are all random");
    // Only the directions issued count: a reader's writes at 0% change nothing.
    assert_eq!(given("[j]\nrw=randread\npercentage_random=100,0\n"), None);
    // `0,100`: the reads follow on from 0, the writes go at random.
    let out = requests("[j]\nrw=randrw\nbs=4k\npercentage_random=0,100\nsize=1m\n");
    let (reads, writes) = (offsets_k(&out, Op::Read), offsets_k(&out, Op::Write));
    assert_eq!(reads, steps_k(4, reads.len()));
    assert_ne!(writes, steps_k(4, writes.len()));
    for value in [",,", "101", "50,101", "30,abc", "1,2,3,4", "20:80"] {
        assert_refused(
            &format!("[j]\nrw=randrw\npercentage_random={value}\n"),
            "t.fio:3",
            &[
                &format!("percentage_random={value}"),
                "a percentage 0-100, or up to three for reads, writes and trims",
            ],
        );
    }
}

/// A job whose every direction is 0% random draws no random offset: fio
/// runs it as its sequential twin, which stops at the last whole block
/// (fio 3.33, `bs=12k size=512k percentage_random=0`: `rw=randread` 42
/// reads, 516,096 bytes, as `rw=read`; `rw=randwrite` 42 writes,
/// `rw=randtrim` 42 trims; `rw=randrw` the requests of `rw=rw`, one for one,
/// under two seeds). iosteer read a 43rd block, past 512 KiB, from the
/// start again, and walked a mix as one stream.
#[test]
fn a_job_that_is_never_random_runs_as_its_sequential_twin() {
    let walk = |text: &str| -> Vec<(Op, u64, u64)> {
        let out = requests(&format!("[j]\nbs=12k\nsize=512k\n{text}\n"));
        out.iter().map(|r| (r.op, r.offset.0, r.len.0)).collect()
    };
    for (random, twin) in [
        ("rw=randread\npercentage_random=0", "rw=read"),
        ("rw=randwrite\npercentage_random=0", "rw=write"),
        ("rw=randtrim\npercentage_random=0", "rw=trim"),
        ("rw=randread:4\npercentage_random=0", "rw=read"),
        ("rw=randread\npercentage_random=0,100", "rw=read"),
    ] {
        let out = walk(random);
        assert_eq!(out.len(), 42, "{random}");
        assert_eq!(out.iter().map(|r| r.2).sum::<u64>(), 516_096, "{random}");
        assert_eq!(out, walk(twin), "{random}");
    }
    for bs in ["bs=12k", "bs=16k,8k"] {
        assert_eq!(
            walk(&format!("rw=randrw\n{bs}\npercentage_random=0")),
            walk(&format!("rw=rw\n{bs}"))
        );
    }
}

/// The distinct offsets of `requests` in direction `op`.
fn distinct(requests: &[Request], op: Op) -> usize {
    let offsets: std::collections::HashSet<u64> = requests
        .iter()
        .filter(|r| r.op == op)
        .map(|r| r.offset.0)
        .collect();
    offsets.len()
}

/// A job of `percentage_random` keeps fio's random map: its random
/// requests take blocks not yet taken, and only those that follow on
/// (which fio does not mark) may land on one again (fio 3.33, `rw=randwrite
/// bs=4k size=1m percentage_random=99`: 256 writes on 254, 253, 255, 255
/// distinct blocks with randseed 1-4; `rw=randrw percentage_random=0,100`:
/// 130 writes, none repeated). iosteer drew them with replacement: 164
/// distinct of 256, and 23 of 118 writes repeated.
#[test]
fn a_job_of_percentage_random_keeps_the_random_map() {
    let out = requests("[j]\nrw=randwrite\nbs=4k\nsize=1m\npercentage_random=99\n");
    assert_eq!(out.len(), 256);
    assert!(
        distinct(&out, Op::Write) >= 250,
        "{}",
        distinct(&out, Op::Write)
    );
    let out = requests("[j]\nrw=randrw\nbs=4k\nsize=1m\npercentage_random=0,100\n");
    let writes = out.iter().filter(|r| r.op == Op::Write).count();
    assert_eq!(distinct(&out, Op::Write), writes);
}

/// Its requests that follow on neither take blocks of the map nor are cut
/// by it, so the job ends at its bytes with the last request whole, past
/// `size`, or once its random requests have taken every block (fio 3.33,
/// `rw=randwrite bs=12k size=512k`: `percentage_random=90` 43 writes,
/// 528,384 bytes, with randseed 1-3; `percentage_random=99` 42 writes,
/// 516,096 bytes, with randseed 2 and 3).
#[test]
fn its_follow_ons_take_no_block_and_its_last_request_goes_whole() {
    let bytes = |percent: u32| {
        let out = requests(&format!(
            "[j]\nrw=randwrite\nbs=12k\nsize=512k\npercentage_random={percent}\n"
        ));
        (out.len(), out.iter().map(|r| r.len.0).sum::<u64>())
    };
    assert_eq!(bytes(90), (43, 528_384));
    assert_eq!(bytes(99), (42, 516_096));
}

/// fio carries such a job's map into its next loop (fio 3.33, `rw=randwrite
/// bs=4k size=1m percentage_random=50 loops=2`: 512 writes on all 256
/// blocks, with randseed 1-3); iosteer starts it anew each loop, and says so.
#[test]
fn its_map_starting_anew_each_loop_is_noted() {
    let text = "[j]\nrw=randwrite\nbs=4k\nsize=1m\npercentage_random=50\nloops=2\n";
    let file = parse_file(text, "t.fio", 1 << 30).unwrap();
    assert!(
        file.notes
            .iter()
            .any(|n| n.contains("from one loop to the next")),
        "{:?}",
        file.notes
    );
    assert_eq!(requests(text).len(), 512);
}
