//! fio's `rw=trimwrite` ([`crate::workload::Generator`]'s trims ahead).
//! fio 3.33's requests come from `fio --ioengine=null --iodepth=1
//! --write_iolog=j.log` on the job.

use iosteer_sched::Op;

use super::*;

/// The blocks `text`'s job writes, in order, in KiB (offset, length),
/// checking that each comes just after a trim of the same blocks.
fn trimmed_writes_kib(text: &str) -> Vec<(u64, u64)> {
    let job = jobs_of(text).remove(0);
    let out = crate::workload::Generator::new(job, 0, 1).requests_unloaded();
    let kib = |r: &iosteer_sched::Request| (r.offset.0 >> 10, r.len.0 >> 10);
    assert_eq!(out.len() % 2, 0, "a trim for each write");
    out.chunks(2)
        .map(|pair| {
            assert_eq!((pair[0].op, pair[1].op), (Op::Trim, Op::Write), "{pair:?}");
            assert_eq!(kib(&pair[0]), kib(&pair[1]), "the trim is the write's");
            kib(&pair[1])
        })
        .collect()
}

#[test]
fn trimwrite_trims_each_block_just_before_writing_it() {
    let jobs = jobs_of("[tw]\nrw=trimwrite\nbs=64k\nsize=1m\n");
    let s = synthetic(&jobs[0]);
    assert!(s.sequential && s.read_percent == 0 && !s.trim);
    let writes = trimmed_writes_kib("[tw]\nrw=trimwrite\nbs=64k\nsize=1m\n");
    assert_eq!(writes, (0..16).map(|b| (b * 64, 64)).collect::<Vec<_>>());
    // The write goes once its trim has completed, as fio's: sent together,
    // a policy that queues trims apart sent the write first and its trim
    // then punched it away (found by a review, `iosteer run` on a file).
    let mut job = crate::workload::Generator::new(jobs[0].clone(), 0, 1);
    let (mut next_id, mut sent) = (0, Vec::new());
    let at = iosteer_sched::Nanos::ZERO;
    assert_eq!(job.next_classes(at), Some((Op::Write, true)));
    job.issue(at, &mut next_id, &mut sent);
    assert_eq!(sent.iter().map(|r| r.op).collect::<Vec<_>>(), [Op::Trim]);
    assert_eq!(job.next_at(), None, "the write waits for the trim");
    assert_eq!(job.next_classes(at), Some((Op::Write, false)));
    job.completed(&sent[0], at);
    job.issue(job.next_at().unwrap(), &mut next_id, &mut sent);
    assert_eq!(sent[1].op, Op::Write);
    assert_refused(
        "[tw]\nrw=trimwrite\niosteer_trim_ahead=1m\n",
        "t.fio:3",
        &["rw=trimwrite", "iosteer_trim_ahead"],
    );
}

/// fio 3.33 trims the blocks it writes, in the write's size: `bs=16k,4k
/// size=256k` (reads of 16 KiB) trims 0 4096, writes 0 4096, trims 4096
/// 4096... 64 of each (a trim of 16 KiB before every fourth write, the
/// read size, before); `bs=4k,16k size=64k` 4 of 16 KiB each.
#[test]
fn trimwrite_trims_in_the_write_size() {
    let writes = trimmed_writes_kib("[j]\nrw=trimwrite\nbs=16k,4k\nsize=256k\n");
    assert_eq!(writes, (0..64).map(|b| (b * 4, 4)).collect::<Vec<_>>());
    let writes = trimmed_writes_kib("[j]\nrw=trimwrite\nbs=4k,16k\nsize=64k\n");
    assert_eq!(writes, [(0, 16), (16, 16), (32, 16), (48, 16)]);
}

/// fio 3.33 `rw=trimwrite bssplit=16k/25:4k/75 size=256k`: 31 trims and
/// 31 writes, each trim the next write's blocks (0 16k, 16k 16k, 32k 4k...:
/// trims and writes draw their sizes from equal seeds); the same with
/// `bsrange=4k-16k size=128k` (0 4k, 4k 4k, 8k 8k, 16k 12k...).
#[test]
fn trimwrite_trims_drawn_sizes_as_written() {
    for blocks in [
        "bssplit=16k/25:4k/75\nsize=256k",
        "bsrange=4k-16k\nsize=128k",
    ] {
        let writes = trimmed_writes_kib(&format!("[j]\nrw=trimwrite\n{blocks}\n"));
        let sizes: std::collections::BTreeSet<u64> = writes.iter().map(|w| w.1).collect();
        assert!(sizes.len() > 1, "{blocks}: {sizes:?}");
        let next = writes.windows(2).all(|w| w[1].0 == w[0].0 + w[0].1);
        assert!(next && writes[0].0 == 0, "{blocks}: {writes:?}");
    }
}

/// fio 3.33 with holes, `rw=trimwrite:4k bs=4k size=64k`: trims 0 and
/// writes 0, then 8k, 16k... 56k, and the same again (16 of each; the holes
/// are neither trimmed nor written); backwards, `rw=trimwrite:-8k`: 0, then
/// 56k, 52k... 0 (16 of each), each trim just before its write.
#[test]
fn trimwrite_trims_where_it_writes_with_holes_and_backwards() {
    let writes = trimmed_writes_kib("[j]\nrw=trimwrite:4k\nbs=4k\nsize=64k\n");
    let pass: Vec<(u64, u64)> = (0..8).map(|b| (b * 8, 4)).collect();
    assert_eq!(writes, [pass.clone(), pass].concat());
    let writes = trimmed_writes_kib("[j]\nrw=trimwrite:-8k\nbs=4k\nsize=64k\n");
    let back = (0..15).rev().map(|b| (b * 4, 4));
    assert_eq!(
        writes,
        std::iter::once((0, 4)).chain(back).collect::<Vec<_>>()
    );
}

/// fio 3.33 `rw=trimwrite bs=4k,8k,16k size=64k` trims in the trim size,
/// when its last trim and last write began at the same offset: trims 0
/// 16k, writes 0 8k, trims 16k 16k, writes 8k and 16k, trims 32k...: 4
/// trims, 7 writes, and it stops (the next trim would start at the end).
/// iosteer trims each write's blocks, and notes it.
#[test]
fn trimwrite_with_trim_sizes_of_its_own_is_noted() {
    let text = "[j]\nrw=trimwrite\nbs=4k,8k,16k\nsize=64k\n";
    assert_noted(
        &file_of(text),
        "trim sizes (16384 bytes) other than its write sizes (8192 bytes)",
    );
    let writes = trimmed_writes_kib(text);
    assert_eq!(writes, (0..8).map(|b| (b * 8, 8)).collect::<Vec<_>>());
    for same in [
        "bs=4k,8k",
        "bs=8k,8k,8k",
        "bssplit=4k/50:16k/50",
        "bsrange=4k-16k",
    ] {
        let file = file_of(&format!("[j]\nrw=trimwrite\n{same}\nsize=64k\n"));
        let noted = file.notes.iter().any(|n| n.contains("trim sizes"));
        assert!(!noted, "{same}: {:?}", file.notes);
    }
}
