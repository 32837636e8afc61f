//! Random offsets: fio's random map, block alignment, and the random jobs fio ends early.

use super::*;

#[test]
fn blockalign_puts_random_offsets_on_its_boundary_per_direction() {
    // JESD219's shape: sub-4k blocks, offsets on 4 KiB boundaries.
    let jobs = jobs_of(
        "[endurance]\nrw=randrw\nbssplit=512/50:4k/50\nblockalign=4k\nsize=64m\nnumber_ios=2000\n",
    );
    assert_eq!(jobs[0].shape.random_align, Some([4096; 3]));
    let out = crate::workload::Generator::new(jobs[0].clone(), 0, 1).requests_unloaded();
    assert_eq!(out.len(), 2000);
    assert!(out.iter().any(|r| r.len.0 == 512), "small blocks drawn");
    assert!(
        out.iter().all(|r| r.offset.0 % 4096 == 0),
        "offsets on 4 KiB"
    );
    // Without it, the 512-byte blocks set the alignment, as in fio.
    let plain = jobs_of("[j]\nrw=randread\nbssplit=512/50:4k/50\nsize=64m\n");
    assert_eq!(plain[0].shape.random_align, None);
    // Per direction, the last size standing for the directions left out.
    let split = jobs_of("[j]\nrw=randrw\nba=4k,8k\nbs=8k\nsize=64m\n");
    assert_eq!(split[0].shape.random_align, Some([4096, 8192, 8192]));
    assert_refused(
        "[j]\nrw=randread\nblockalign=0\n",
        "t.fio:3",
        &["blockalign=0", "a size such as 4k"],
    );
}

#[test]
fn a_random_job_fio_would_end_early_is_noted() {
    // fio 3.33 counts the file in 1000-byte blocks and places reads on
    // 4 KiB: `rw=randrw bs=4k,1000 size=1m` stopped at 97 reads and 100
    // writes, `rw=randread` at 155 reads (of 256).
    let noted = |text: &str| {
        file_of(&format!("[j]\nsize=1m\n{text}\n"))
            .notes
            .iter()
            .any(|n| n.contains("fio 3.33 may end this job"))
    };
    assert_noted(
        &file_of("[j]\nrw=randrw\nbs=4k,1000\nsize=1m\n"),
        "the reads' offsets fall on 4 KiB",
    );
    assert!(noted("rw=randread\nbs=4k,1000"));
    assert_noted(
        &file_of("[j]\nrw=randrw\nbs=1000,4k\nsize=1m\n"),
        "the writes' offsets fall on 4 KiB",
    );
    // The writes are the smallest blocks: fio 3.33 writes 1048 of them.
    assert!(!noted("rw=randwrite\nbs=4k,1000"));
    // fio agrees with iosteer where its map is off (norandommap, a
    // blockalign other than the blocks), where it starts a new pass
    // (time_based, io_size), and where there is nothing random.
    for agreed in [
        "rw=randrw\nbs=4k,1000\nnorandommap",
        "rw=randrw\nbs=4k,1000\nblockalign=1000",
        "rw=randrw\nbs=4k,1000\nruntime=1\ntime_based",
        "rw=randrw\nbs=4k,1000\nio_size=1m",
        "rw=randrw\nbs=4k,1000\nrandom_distribution=zoned:50/50:50/50",
        "rw=randrw\nbs=4k,1000\npercentage_random=0",
        "rw=rw\nbs=4k,1000",
        "rw=randrw\nbs=4k",
        "rw=randread\nbsrange=4k-16k",
    ] {
        assert!(!noted(agreed), "{agreed}");
    }
    // fio's zipf, pareto and normal draw over the smaller block whatever
    // the map: no I/O at all for this reader in fio 3.33.
    assert_noted(
        &file_of(
            "[j]\nrw=randread\nbs=4k,1000\nsize=1m\nrandom_distribution=zipf:1.2\nnorandommap\n",
        ),
        "fio 3.33 may end this job almost at once",
    );
    // A new pass lands past the end again (found by a review: io_size and
    // time_based dropped the note, fio 3.33 still issuing nothing).
    for again in ["io_size=512k", "runtime=200ms\ntime_based\nrate_iops=500"] {
        let text = format!(
            "[j]\nrw=randread\nbs=4k,1000\nsize=1m\nrandom_distribution=zipf:1.2\n{again}\n"
        );
        assert_noted(&file_of(&text), "fio 3.33 may end this job almost at once");
    }
    assert!(!noted(
        "rw=randwrite\nbs=4k,1000\nrandom_distribution=zipf:1.2"
    ));
}

/// A random job's last request goes whole, past `size`, as fio's does
/// (fio 3.33, `rw=randread norandommap bssplit=4k/50:64k/50 size=1m`:
/// 1,052,672 bytes in 32 requests); a sequential job's stops at the end
/// of its region.
#[test]
fn a_random_job_s_last_request_is_not_cut_to_size() {
    let moved = |rw: &str| {
        let [reads, _] = sizes_by_direction(&format!(
            "[j]\nrw={rw}\nnorandommap\nbssplit=4k/50:64k/50\nsize=1m\n"
        ));
        assert!(reads
            .keys()
            .all(|&size| size == 4096 || size == 65536 || rw == "read"));
        reads.iter().map(|(size, n)| size * *n as u64).sum::<u64>()
    };
    let random = moved("randread");
    assert!((MIB..MIB + 65536).contains(&random), "{random}");
    assert_eq!(moved("read"), MIB);
}

/// With fio's random map (its default) a random job moves exactly `size`:
/// fio takes each request out of blocks not yet done, shortening one that
/// runs into done ones (fio 3.33, `rw=randread bssplit=4k/50:64k/50
/// size=1m`: 1,048,576 bytes over four seeds, as with `rw=randrw`,
/// `loops=2` (2 MiB), `io_size=3m` (3 MiB) or `bsrange=4k-64k`; iosteer
/// had moved 1,110,016). Without the map (`norandommap`, a non-uniform
/// distribution, `percentage_random`, `rw=randread:N`, a `blockalign`
/// other than the blocks) its last request goes whole past `size`.
#[test]
fn a_random_job_with_fio_s_random_map_moves_exactly_its_size() {
    let moved = |options: &str| -> u64 {
        let text = format!("[j]\nrw=randread\nbssplit=4k/50:64k/50\nsize=1m\n{options}\n");
        let out =
            crate::workload::Generator::new(jobs_of(&text)[0].clone(), 0, 1).requests_unloaded();
        out.iter().map(|r| r.len.0).sum()
    };
    for (options, bytes) in [
        ("", MIB),
        ("rw=randrw", MIB),
        ("loops=2", 2 * MIB),
        ("io_size=3m", 3 * MIB),
    ] {
        assert_eq!(moved(options), bytes, "{options}");
    }
    let text = "[j]\nrw=randread\nbsrange=4k-64k\nsize=1m\n";
    let out = crate::workload::Generator::new(jobs_of(text)[0].clone(), 0, 1).requests_unloaded();
    assert_eq!(out.iter().map(|r| r.len.0).sum::<u64>(), MIB, "bsrange");
    for options in [
        "norandommap",
        "random_distribution=zipf:1.2",
        "percentage_random=50",
        "rw=randread:4",
        "blockalign=8k",
    ] {
        let bytes = moved(options);
        assert!((MIB..MIB + 65536).contains(&bytes), "{options}: {bytes}");
    }
}

/// fio's random map (on by default): a random job takes each block of its
/// file once a pass, its reads and writes from one map, a request cut at a
/// block already taken, and a new pass once every block is taken (fio 3.33
/// on an 8 MiB file: `rw=randwrite bs=4k` 2048 writes at 2048 offsets;
/// `io_size=16m` two passes of 2048; `bsrange=4k-16k` 963 requests that
/// cover the file once; `rw=randrw` 2048 offsets). iosteer drew offsets
/// with replacement: 1292 of 2048 blocks written.
#[test]
fn a_random_job_takes_each_block_once_a_pass_as_fio_s_random_map() {
    use iosteer_sched::Op;
    let issued = |options: &str| {
        let jobs = jobs_of(&format!("[j]\nsize=8m\nbs=4k\n{options}"));
        crate::workload::Generator::new(jobs[0].clone(), 0, 1).requests_unloaded()
    };
    let blocks = |requests: &[iosteer_sched::Request]| {
        let mut taken = vec![0u32; 2048];
        for r in requests {
            for b in r.offset.0 / 4096..(r.offset.0 + r.len.0).div_ceil(4096) {
                taken[b as usize] += 1;
            }
        }
        taken
    };
    let writes = issued("rw=randwrite\n");
    assert_eq!(writes.len(), 2048);
    assert!(blocks(&writes).iter().all(|&n| n == 1));
    let two_passes = issued("rw=randwrite\nio_size=16m\n");
    assert_eq!(two_passes.len(), 4096);
    assert!(blocks(&two_passes[..2048]).iter().all(|&n| n == 1));
    assert!(blocks(&two_passes[2048..]).iter().all(|&n| n == 1));
    let mixed = issued("rw=randwrite\nbsrange=4k-16k\n");
    assert!(blocks(&mixed).iter().all(|&n| n == 1));
    assert!((800..1100).contains(&mixed.len()), "{}", mixed.len());
    let both = issued("rw=randrw\n");
    assert!(both.iter().any(|r| r.op == Op::Read) && both.iter().any(|r| r.op == Op::Write));
    assert!(blocks(&both).iter().all(|&n| n == 1));
    // Without the map, drawn with replacement.
    let drawn = issued("rw=randwrite\nnorandommap\n");
    let covered = blocks(&drawn).iter().filter(|&&n| n > 0).count();
    assert!((1200..1400).contains(&covered), "{covered}");
}

/// The random maps of a job file's jobs hold at most
/// [`MAX_RANDOM_MAP_BITS`] blocks together; a job past that draws with
/// replacement, and the notes say so.
#[test]
fn a_random_map_too_large_to_keep_is_noted_and_left_out() {
    let file = parse_file("[j]\nrw=randread\nbs=4k\nnumjobs=3\n", "t.fio", 6 << 40).unwrap();
    let kept: Vec<bool> = file.jobs.iter().map(|j| j.shape.random_map).collect();
    assert_eq!(kept, [true, true, false]);
    assert_eq!(
        file.notes
            .iter()
            .filter(|n| n.contains("random map of its"))
            .count(),
        1,
        "{:?}",
        file.notes
    );
    // Counted in the map's own blocks: bytes, for a job of 1-byte blocks
    // (once counted in 512-byte sectors, a map 512 times its budget).
    let file = parse_file("[j]\nrw=randread\nbs=1\nsize=8g\n", "t.fio", 6 << 40).unwrap();
    assert!(!file.jobs[0].shape.random_map, "{:?}", file.notes);
}

/// The random map over several files: a file whose pass is over is done
/// and the others take its turns, whatever `file_service_type` draws, and
/// once every file is done the loop ends, short of `size` where requests
/// took blocks they did not fill (fio 3.33 on `ioengine=null`: `nrfiles=4
/// file_service_type=random size=1m` writes each block once, where
/// iosteer wrote 12 twice and 12 never; `bsrange=4k-6k size=1m` moves
/// 927,744 to 958,464 bytes by seed, where iosteer moved 1 MiB).
#[test]
fn a_random_map_over_several_files_ends_the_loop_when_every_file_is_done() {
    let run = |options: &str| {
        let file = file_of(&format!("[j]\nsize=1m\n{options}"));
        let out = crate::workload::Generator::new(file.jobs[0].clone(), 0, 1).requests_unloaded();
        let mut taken = vec![0u32; 256];
        for r in &out {
            for b in r.offset.0 / 4096..(r.offset.0 + r.len.0).div_ceil(4096) {
                taken[b as usize] += 1;
            }
        }
        (out, taken)
    };
    for options in [
        "rw=randwrite\nbs=4k\nnrfiles=4\nfile_service_type=random\n",
        "rw=randwrite\nbssplit=4k/50:16k/50\nnrfiles=4\nfile_service_type=sequential\n",
    ] {
        let (_, taken) = run(options);
        assert!(taken.iter().all(|&n| n == 1), "{options}: {taken:?}");
    }
    let (short, taken) = run("rw=randread\nbsrange=4k-6k\n");
    let bytes: u64 = short.iter().map(|r| r.len.0).sum();
    let mut sizes: Vec<u64> = short.iter().map(|r| r.len.0).collect();
    sizes.sort_unstable();
    sizes.dedup();
    assert!((900_000..1_000_000).contains(&bytes), "{bytes} {sizes:?}");
    assert!(taken.iter().all(|&n| n <= 1));
}

/// The random map's pass ends when the request that took its last block
/// is issued, not drawn: a drawn request held back (back-pressure) still
/// goes, and a loop that follows is not taken for the job's end while the
/// first drains (a held last request was never issued: 15 requests of 16,
/// the second loop lost; and the job said it was done issuing while its
/// first loop's requests were out, so the run's deadline came early).
#[test]
fn the_random_maps_pass_ends_with_the_last_request_issued() {
    use crate::workload::Generator;
    let file =
        file_of("[j]\nioengine=libaio\nrw=randwrite\nbs=4k\nsize=64k\nloops=2\niodepth=64\n");
    let mut job = Generator::new(file.jobs[0].clone(), 0, 1);
    job.release(Nanos::ZERO);
    let (mut next_id, mut out, mut now) = (0, Vec::new(), Nanos::ZERO);
    // The first loop's 16 writes, all out; the last drawn and held once.
    let mut held = false;
    while out.len() < 16 {
        let at = job.next_at().expect("the first loop issues");
        now = now.max(at);
        if out.len() == 15 && !held && job.next_classes(now).is_some() {
            held = true;
            job.hold(now, now + Nanos(1000));
            continue;
        }
        job.issue(now, &mut next_id, &mut out);
    }
    assert!(!job.done_issuing(), "a second loop follows");
    for request in out.clone() {
        now += Nanos(10);
        job.completed(&request, now);
    }
    while let Some(at) = job.next_at() {
        now = now.max(at);
        let before = out.len();
        job.issue(now, &mut next_id, &mut out);
        for request in &out[before..] {
            job.completed(request, now);
        }
    }
    assert_eq!(out.len(), 32);
}

#[test]
fn a_skewed_distribution_says_its_hot_blocks_lie_together() {
    let file = file_of("[j]\nrw=randread\nrandom_distribution=zipf:1.2\n");
    assert_noted(&file, "where fio scatters them over the region with a hash");
    // fio 3.33's normal without a deviation is its bell too (689 distinct
    // blocks of 2,048 reads of an 8 MiB file, where uniform draws hit about
    // 1,295), not uniform as this said before a review measured it.
    let file = file_of("[j]\nrw=randread\nrandom_distribution=normal\n");
    assert_noted(&file, "where fio scatters them over the region with a hash");
}

#[test]
fn random_jobs_without_the_map_fio_keeps_say_so() {
    // Found by a review: a zoned random job wrote 116 distinct blocks of 128
    // a visit where fio's map writes each once; nothing said so.
    let file =
        file_of("[j]\nrw=randwrite\nsize=1m\nzonemode=strided\nzonesize=512k\nzonerange=512k\n");
    assert_noted(
        &file,
        "a random job of strided zones draws its offsets with replacement",
    );
    let file = file_of("[j]\nrw=randrw\nbs=4k,8k\nsize=1m\n");
    assert_noted(&file, "different block alignments");
    assert!(file_of("[j]\nrw=randrw\nsize=1m\n").notes.is_empty());
}
