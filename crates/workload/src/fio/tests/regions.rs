//! Where a job's requests land and how large they are: sizes, offsets, files and blocks.

use super::*;

#[test]
fn a_percentage_size_past_the_end_is_cut_to_what_is_left_as_fio_cuts_it() {
    // fio 3.33, `offset=60% size=60%` on a 2 MiB file: 204 reads, the last
    // 835,584 bytes; iosteer refused it ("must fit the drive").
    let file = file_of("[j]\nrw=read\nbs=8k\noffset=60%\nsize=60%\n");
    let s = synthetic(&file.jobs[0]);
    let offset = (GIB * 6 / 10).div_ceil(8192) * 8192;
    assert_eq!((s.offset, s.size), (offset, (GIB - offset) / 8192 * 8192));
    assert_noted(&file, "size=60% from offset");
    // A size in bytes past the end is still refused.
    assert_refused(
        "[j]\noffset=60%\nsize=600m\n",
        "t.fio:3:",
        &["must fit the drive"],
    );
}

#[test]
fn size_zero_is_no_size_as_fio_reads_it() {
    // fio 3.33: `size=0` (and `size=0%`) on a 2 MiB file reads the whole
    // file, as if no size were given; it was refused ("offset 0 + size 0
    // must fit the drive").
    for zero in ["0", "0%", "0k"] {
        let jobs = jobs_of(&format!("[j]\nrw=read\noffset=1m\nsize={zero}\n"));
        let s = synthetic(&jobs[0]);
        assert_eq!((s.offset, s.size), (MIB, GIB - MIB), "size={zero}");
        assert!(!jobs[0].shape.sized, "size={zero}");
    }
    // A global size undone by a job's `size=0`.
    let jobs = jobs_of("[global]\nsize=1m\n[j]\nsize=0\n");
    assert_eq!(synthetic(&jobs[0]).size, GIB);
    assert!(jobs_of("[j]\nsize=0\nsize=64k\n")[0].shape.sized);
}

/// The (file, block in the file) of each request of a one-job file, on
/// two files of 16 KiB (4 blocks) each.
fn file_blocks(service: &str) -> Vec<(u64, u64)> {
    let text = format!("[j]\nrw=read\nbs=4k\nsize=32k\nnrfiles=2\nfile_service_type={service}\n");
    let job = jobs_of(&text).remove(0);
    crate::workload::Generator::new(job, 0, 1)
        .requests_unloaded()
        .iter()
        .map(|r| (r.offset.0 / 16384, r.offset.0 % 16384 / 4096))
        .collect()
}

/// fio 3.33's order (its write_iolog) for each service on these files.
#[test]
fn file_service_types_pick_files_as_fio_does() {
    // fio takes `gauss` for `normal` in file_service_type (refused since
    // random_distribution stopped taking it, as fio does there).
    let service = |v: &str| jobs_of(&format!("[j]\nnrfiles=4\nsize=4m\nfile_service_type={v}\n"));
    assert_eq!(
        service("gauss:20")[0].shape.files.service,
        service("normal:20")[0].shape.files.service
    );
    let pairs = |v: &[(u64, u64)]| v.to_vec();
    assert_eq!(
        file_blocks("roundrobin"),
        pairs(&[
            (0, 0),
            (1, 0),
            (0, 1),
            (1, 1),
            (0, 2),
            (1, 2),
            (0, 3),
            (1, 3)
        ])
    );
    assert_eq!(
        file_blocks("roundrobin:2"),
        pairs(&[
            (0, 0),
            (0, 1),
            (1, 0),
            (1, 1),
            (0, 2),
            (0, 3),
            (1, 2),
            (1, 3)
        ])
    );
    assert_eq!(
        file_blocks("sequential"),
        pairs(&[
            (0, 0),
            (0, 1),
            (0, 2),
            (0, 3),
            (1, 0),
            (1, 1),
            (1, 2),
            (1, 3)
        ])
    );
    // Drawn files, two requests each; each file keeps its own position.
    let drawn = file_blocks("random:2");
    assert_eq!(drawn.len(), 8);
    for pair in drawn.chunks(2) {
        assert_eq!(pair[0].0, pair[1].0, "{drawn:?}");
        assert_eq!(pair[0].1 + 1, pair[1].1, "{drawn:?}");
    }
    assert_eq!(file_blocks("zipf:1.2").len(), 8);
    // fio reads N with atoi: 0, or no number, keeps each file until it is
    // done (its write_iolog: roundrobin:0 and roundrobin:x go 0,0,0,0,1,...).
    for until_done in ["roundrobin:0", "roundrobin:x", "random:0", "sequential:x"] {
        assert_eq!(file_blocks(until_done), file_blocks("sequential"));
    }
    // A random job without a random map never finishes a file, and fio's
    // sequential service keeps to the first (8 reads of file 0).
    let text =
        "[j]\nrw=randread\nnorandommap\nbs=4k\nsize=32k\nnrfiles=2\nfile_service_type=sequential\n";
    let out = crate::workload::Generator::new(jobs_of(text).remove(0), 0, 1).requests_unloaded();
    assert_eq!(out.len(), 8);
    assert!(out.iter().all(|r| r.offset.0 < 16384), "{out:?}");
    for bad in ["bogus", "zipf:1", "wanderer:2"] {
        assert_refused(
            &format!("[a]\nfile_service_type={bad}\n"),
            "f.fio:2",
            &["roundrobin, random or sequential"],
        );
    }
}

/// Each pass (fio's loop) of `options` on three files of 1 MiB: how many
/// requests each file took, and whether each of its 4 KiB blocks was
/// moved once.
fn passes_over_three_files(options: &str) -> Vec<([usize; 3], bool)> {
    let text = format!("[j]\nbs=4k\nsize=3m\nnrfiles=3\n{options}\n");
    let out = crate::workload::Generator::new(jobs_of(&text).remove(0), 0, 1).requests_unloaded();
    out.chunks(768)
        .map(|pass| {
            let mut per_file = [0; 3];
            let mut blocks: Vec<u64> = pass.iter().map(|r| r.offset.0 / 4096).collect();
            for block in &blocks {
                per_file[(*block / 256) as usize] += 1;
            }
            blocks.sort_unstable();
            blocks.dedup();
            (per_file, pass.len() == 768 && blocks.len() == 768)
        })
        .collect()
}

/// fio takes a file out of a uniform draw once it has moved its share of
/// the pass. fio 3.33 (`ioengine=null`, its write_iolog), `rw=write bs=4k
/// size=3m nrfiles=3 file_service_type=random`: 256 writes to each file,
/// each block once, with `random:2` too, and with `loops=2` (or `io_size=6m`)
/// each pass so, 512 in all; iosteer drew among all the files, done or
/// not (265, 259 and 244 writes, 756 blocks; `random:2` 290, 242 and 236,
/// 734 blocks). A random job's random map does the same (256 each, and
/// 512 with `loops=2`).
#[test]
fn a_uniform_file_draw_passes_by_the_files_that_are_done_as_fios_does() {
    let once = vec![([256; 3], true)];
    let twice = vec![([256; 3], true); 2];
    for (options, passes) in [
        ("rw=write\nfile_service_type=random", &once),
        ("rw=write\nfile_service_type=random:2", &once),
        ("rw=write\nfile_service_type=random\nloops=2", &twice),
        ("rw=write\nfile_service_type=random\nio_size=6m", &twice),
        ("rw=read\nfile_service_type=random:2\nloops=2", &twice),
        ("rw=randwrite\nfile_service_type=random", &once),
        ("rw=randwrite\nfile_service_type=random\nloops=2", &twice),
    ] {
        assert_eq!(&passes_over_three_files(options), passes, "{options}");
    }
}

/// How many of the 1024 writes of `rw=write bs=4k size=4m nrfiles=8` with
/// `file_service_type=service` each file takes, the job seeded `seed`.
fn writes_per_file(service: &str, seed: u64) -> Vec<usize> {
    let text = format!("[j]\nrw=write\nbs=4k\nsize=4m\nnrfiles=8\nfile_service_type={service}\n");
    let out =
        crate::workload::Generator::new(jobs_of(&text).remove(0), 0, seed).requests_unloaded();
    let mut per_file = vec![0; 8];
    for r in &out {
        per_file[(r.offset.0 / (512 << 10)) as usize] += 1;
    }
    per_file
}

/// fio draws a file by zipf or pareto as one of 1024 ranges a file, its
/// ranks laid from a range drawn once a job (or from the center given),
/// so the hottest ranks fill the file they start in before the next file
/// in turn gets any. fio 3.33 (`ioengine=null`, write_iolog), `zipf:1.2`
/// on 8 files, randseed 1 to 8: 821, 780, 783, 923, 925, 864, 867 and 912
/// writes to the file of the hottest rank, and 122, 162, 165, 56, 41, 105,
/// 89 and 42 to the next, at least 943 of 1024 together; `zipf:1.2:0.5`:
/// 942 to file 4; `pareto:0.3:0.25`: 574 to file 2 (without the center,
/// by seed 302 to 503 to the file holding the hottest rank). iosteer drew
/// a zipf over the 8 files themselves: 419, 180, 126, 93, 68, 55, 51, 32
/// from file 0, the first two 599.
#[test]
fn a_file_drawn_by_zipf_or_pareto_is_drawn_over_fios_ranges() {
    for seed in 1..=6 {
        let per_file = writes_per_file("zipf:1.2", seed);
        let hottest_two = (0..8)
            .map(|f| per_file[f] + per_file[(f + 1) % 8])
            .max()
            .unwrap();
        assert!(hottest_two >= 900, "seed {seed}: {per_file:?}");
    }
    let at_center = |service: &str, file: usize| writes_per_file(service, 1)[file];
    assert!((880..=980).contains(&at_center("zipf:1.2:0.5", 4)));
    assert!((500..=620).contains(&at_center("pareto:0.3:0.25", 2)));
}

#[test]
fn files_that_do_not_end_on_a_block_move_only_whole_blocks_as_fios_do() {
    // (job, fio 3.33's requests and bytes, psync, from its write_iolog):
    // the tail short of a block is never touched, neither by a sequential
    // job (its file ends) nor by a random one (its random map holds whole
    // blocks). iosteer issued one request more (263, 256, 525, 1,052,000
    // bytes: the last one wrapped or went past the tail).
    let cases = [
        ("rw=read\nbs=4000\nsize=1m", 262, 1_048_000),
        ("rw=randread\nbs=4000\nsize=1m", 262, 1_048_000),
        ("rw=randrw\nbs=4000\nsize=1m", 262, 1_048_000),
        ("rw=write\nbs=4k\nsize=1m\nnrfiles=3", 255, 1_044_480),
        ("rw=randread\nbs=4k\nsize=1m\nnrfiles=3", 255, 1_044_480),
        ("rw=read\nbs=4000\nsize=1m\nloops=2", 524, 2_096_000),
        ("rw=read\nbs=4000\noffset=64k\nsize=1m", 262, 1_048_000),
    ];
    for (options, requests, bytes) in cases {
        let job = jobs_of(&format!("[j]\n{options}\n")).remove(0);
        assert_eq!(job.shape.bytes_limit, Some(bytes), "{options}");
        let out = crate::workload::Generator::new(job, 0, 1).requests_unloaded();
        let moved: u64 = out.iter().map(|r| r.len.0).sum();
        assert_eq!((out.len(), moved), (requests, bytes), "{options}");
    }
    // A mix of sequential reads and writes goes past, as fio's (263
    // requests of `rw=rw bs=4000 size=1m`); without the map, the last
    // request goes whole; a region of whole blocks is all moved.
    for options in [
        "rw=rw\nbs=4000\nsize=1m",
        "rw=randread\nbs=4000\nsize=1m\nnorandommap",
        "rw=randread\nbs=4k\nsize=1m",
    ] {
        let job = jobs_of(&format!("[j]\n{options}\n")).remove(0);
        assert_eq!(job.shape.bytes_limit, Some(MIB), "{options}");
    }
}

#[test]
fn a_sequential_job_with_holes_on_a_device_ends_after_one_pass_as_fios_does() {
    let limit = |options: &str| {
        jobs_of(&format!("[j]\nfilename=/dev/nvme0n1\nsize=8m\n{options}\n"))[0]
            .shape
            .bytes_limit
    };
    // Real fio 3.33, 8 MiB of a 64 MiB target: 1024, 683 and 512 reads of
    // 4 KiB, then the job ends at the end of its region.
    assert_eq!(limit("rw=read:4k"), Some(4 * MIB));
    assert_eq!(limit("rw=read:8k"), Some(683 * 4096));
    assert_eq!(limit("rw=write:12k"), Some(512 * 4096));
    // Passes with `loops`; `io_size` wraps over the region until it is moved.
    assert_eq!(limit("rw=read:4k\nloops=2"), Some(8 * MIB));
    assert_eq!(limit("rw=write:4k\nio_size=16m"), Some(16 * MIB));
    // Without holes, backwards, or mixed: `size`, as before.
    for options in ["rw=read", "rw=read:-8k", "rw=rw:4k", "rw=randread:4"] {
        assert_eq!(limit(options), Some(8 * MIB), "{options}");
    }
    // A file fio creates at `size`, or a region to the drive's end, wraps
    // until `size` bytes are moved (fio 3.33: 2048 reads on a new 8 MiB file).
    let wraps = |text: &str| jobs_of(text)[0].shape.bytes_limit;
    assert_eq!(wraps("[j]\nsize=8m\nrw=read:4k\n"), Some(8 * MIB));
    // Unless the pass's last request ends with the file: fio's position is
    // then past it and the job ends (fio 3.33 on new files: 86 reads of
    // `rw=read:8k size=1m`, 3 writes of `rw=write:16k bs=16k size=80k`, 9
    // of `rw=write:8k size=100k`; 6 of `rw=write:16k bs=16k size=96k`,
    // whose last write ends 16 KiB short, wrapping).
    assert_eq!(wraps("[j]\nsize=1m\nrw=read:8k\n"), Some(86 * 4096));
    assert_eq!(
        wraps("[j]\nsize=80k\nbs=16k\nrw=write:16k\n"),
        Some(3 * 16384)
    );
    assert_eq!(wraps("[j]\nsize=100k\nrw=write:8k\n"), Some(9 * 4096));
    assert_eq!(
        wraps("[j]\nsize=96k\nbs=16k\nrw=write:16k\n"),
        Some(96 * 1024)
    );
    assert_eq!(wraps("[j]\nfilename=/dev/sdb\nrw=read:4k\n"), Some(GIB));
    // Whether it wraps is judged against the file's length as it is, not
    // rounded to the blocks (fio 3.33, new 64 KiB file, `rw=write:4k
    // bs=12k`: the fourth write ends at 60 KiB, the hole reaches the end,
    // it wraps: 6 writes, the fifth at 0).
    let job = jobs_of("[j]\nsize=64k\nbs=12k\nrw=write:4k\n")[0].clone();
    assert_eq!(job.shape.bytes_limit, Some(64 * 1024));
    let out = crate::workload::Generator::new(job, 0, 1).requests_unloaded();
    let offsets: Vec<u64> = out.iter().map(|r| r.offset.0).collect();
    assert_eq!(offsets, [0, 16384, 32768, 49152, 0, 16384]);
    // Each file of the job on its own (fio 3.33, `nrfiles=2`: 8 writes of
    // `size=80k rw=write:8k`, the last of each 40 KiB file ending with it;
    // 16 of `size=64k`, each file's third write ending 4 KiB short).
    let limit = |text: &str| jobs_of(text)[0].shape.bytes_limit;
    assert_eq!(
        limit("[j]\nsize=80k\nnrfiles=2\nrw=write:8k\n"),
        Some(8 * 4096)
    );
    assert_eq!(
        limit("[j]\nsize=64k\nnrfiles=2\nrw=write:8k\n"),
        Some(64 * 1024)
    );
    // A region that starts further in makes one pass wherever it ends (fio
    // 3.33: 512 reads of `rw=read:4k offset=4m size=4m`, and 512 by each of
    // two copies four MiB apart in one file).
    assert_eq!(
        wraps("[j]\nsize=4m\noffset=4m\nrw=read:4k\n"),
        Some(2 * MIB)
    );
    let copies = jobs_of("[j]\nfilename=f\nsize=4m\noffset_increment=4m\nnumjobs=2\nrw=read:4k\n");
    for copy in &copies {
        assert_eq!(copy.shape.bytes_limit, Some(2 * MIB), "{}", copy.name);
    }
    let job = jobs_of("[j]\nfilename=/dev/sdb\nsize=8m\nrw=read:8k\n")[0].clone();
    let out = crate::workload::Generator::new(job, 0, 1).requests_unloaded();
    assert_eq!(out.len(), 683);
    assert_eq!(
        out.last().unwrap().offset.0,
        682 * 12 * 1024,
        "one pass, no wrap"
    );
}

#[test]
fn offset_increment_takes_a_percentage_of_the_drive() {
    let jobs = jobs_of("[j]\nrw=randread\nsize=10%\noffset_increment=25%\nnumjobs=4\n");
    let offsets: Vec<u64> = jobs.iter().map(|j| synthetic(j).offset).collect();
    let quarter = GIB / 4;
    assert_eq!(offsets, [0, quarter, 2 * quarter, 3 * quarter]);
    assert_refused(
        "[j]\noffset_increment=x\n",
        "t.fio:2",
        &["offset_increment=x", "a size or a percentage"],
    );
}

#[test]
fn filesize_is_each_files_size_as_in_fio() {
    // fio 3.33 reads 4 files of 1 MiB here: 1024 reads of 4 KiB.
    let jobs = jobs_of("[j]\nrw=read\nnrfiles=4\nfilesize=1m\n");
    assert_eq!(synthetic(&jobs[0]).size, 4 << 20);
    assert_eq!(jobs[0].shape.bytes_limit, Some(4 << 20));
    let jobs = jobs_of("[j]\nrw=read\nfilesize=1m\nnrfiles=2\nsize=2m\n");
    assert_eq!(synthetic(&jobs[0]).size, 2 << 20);
    assert_eq!(jobs[0].shape.bytes_limit, Some(2 << 20));
    // fio: size=100m filesize=1g moves 100 MiB of a 1 GiB file; a size
    // over filesize x nrfiles is cut to it (size=4g filesize=256m
    // nrfiles=2: 512 MiB), and the notes say so.
    let jobs = jobs_of("[j]\nrw=read\nsize=100m\nfilesize=512m\n");
    assert_eq!(synthetic(&jobs[0]).size, 512 << 20);
    assert_eq!(jobs[0].shape.bytes_limit, Some(100 << 20));
    let file = file_of("[j]\nrw=read\nnrfiles=4\nfilesize=1m\nsize=8m\n");
    assert_eq!(synthetic(&file.jobs[0]).size, 4 << 20);
    assert_eq!(file.jobs[0].shape.bytes_limit, Some(4 << 20));
    assert_noted(
        &file,
        "size=8388608 is more than filesize x nrfiles = 4194304",
    );
}

#[test]
fn bsrange_sizes_are_multiples_of_its_low_end_as_in_fio() {
    let keys = |m: &std::collections::BTreeMap<u64, usize>| m.keys().copied().collect::<Vec<_>>();
    // fio: "The issued I/O unit will always be a multiple of the minimum
    // value given": 8k, 16k, 24k and 32k, never 12k.
    let [reads, _] =
        sizes_by_direction("[j]\nrw=randread\nsize=64m\nnumber_ios=2000\nbsrange=8k-32k\n");
    assert_eq!(keys(&reads), [8192, 16384, 24576, 32768]);
    // A blank direction keeps the range it inherited (fio 3.33: reads of
    // 8k to 32k, writes of 4k and 8k).
    let [reads, writes] = sizes_by_direction(
        "[global]\nrw=randrw\nsize=64m\nnumber_ios=2000\nbsrange=8k-32k\n[j]\nbsrange=,4k-8k\n",
    );
    assert_eq!(keys(&reads), [8192, 16384, 24576, 32768]);
    assert_eq!(keys(&writes), [4096, 8192]);
    // Below a sector, too: 256 and every multiple of it up to 4k.
    let [reads, _] =
        sizes_by_direction("[j]\nrw=randread\nsize=64m\nnumber_ios=4000\nbsrange=256-4k\n");
    assert_eq!(
        keys(&reads),
        (1..=16).map(|k| k * 256).collect::<Vec<u64>>()
    );
    // A high end that is not a multiple: fio caps the draw at it, so it
    // comes up as often as the part of a step it leaves (20k: 2k of 20k).
    // Without the random map, which cuts a request at a block taken.
    let [reads, _] = sizes_by_direction(
        "[j]\nrw=randread\nsize=64m\nnumber_ios=2000\nbsrange=6k-20k\nnorandommap\n",
    );
    assert_eq!(keys(&reads), [6144, 12288, 18432, 20480]);
    let all: usize = reads.values().sum();
    let top = reads[&20480] as f64 / all as f64;
    assert!((top - 0.1).abs() < 0.02, "{reads:?}");
    // Written high to low, fio swaps it.
    let [reads, _] =
        sizes_by_direction("[j]\nrw=randread\nsize=1m\nnumber_ios=50\nbsrange=16k-4k\n");
    assert_eq!(keys(&reads), [4096, 8192, 12288, 16384]);
    // One range per direction, as bs takes one size per direction.
    let [reads, writes] =
        sizes_by_direction("[j]\nrw=randrw\nsize=64m\nnumber_ios=2000\nbsrange=4k-8k,32k-64k\n");
    assert_eq!(keys(&reads), [4096, 8192]);
    assert_eq!(keys(&writes), [32768, 65536]);
    // A blank direction keeps its bs.
    let [reads, writes] =
        sizes_by_direction("[j]\nrw=randrw\nsize=64m\nnumber_ios=2000\nbs=16k\nbsrange=,4k-8k\n");
    assert_eq!(keys(&reads), [16384]);
    assert_eq!(keys(&writes), [4096, 8192]);
    assert_refused(
        "[j]\nrw=randread\nbsrange=4k-8k-12k\n",
        "t.fio:3",
        &["bsrange=4k-8k-12k", "read,write,trim ranges"],
    );
}

#[test]
fn io_size_takes_a_percentage_of_size_as_in_fio() {
    let limit = |text: &str| jobs_of(text)[0].shape.bytes_limit;
    // fio: "io_size=N%: io_size multiplies size= value".
    assert_eq!(
        limit("[j]\nrw=read\nsize=1m\nio_size=50%\n"),
        Some(512 * 1024)
    );
    // fio 3.33 moves 85 blocks of 4k for 33% of 1 MiB: the last one whole.
    assert_eq!(
        limit("[j]\nrw=read\nsize=1m\nio_size=33%\n"),
        Some(1_048_576 * 33 / 100)
    );
    // Without size, of the region; 0% leaves it unset, as in fio.
    assert_eq!(
        limit("[j]\nrw=read\noffset=1020m\nio_size=25%\n"),
        Some(MIB)
    );
    assert_eq!(limit("[j]\nrw=read\nsize=1m\nio_size=0%\n"), Some(MIB));
    assert_refused(
        "[j]\nrw=read\nsize=1m\nio_size=200%\n",
        "t.fio:4",
        &["io_size=200%", "percentage of size from 0 to 100"],
    );
}

/// No request reaches past its file, so none past the region or the drive,
/// whatever its blocks: fio draws only sizes that fit (fio 3.33,
/// `rw=randwrite bssplit=4k/50:64k/50 size=128k nrfiles=4 norandommap`: 32
/// writes of 4 KiB in files of 32 KiB; iosteer sent 64 KiB writes across
/// the files, one ending 64 KiB past the region and, with the region at
/// the drive's end, past the drive, where the simulated drive failed it).
#[test]
fn no_request_reaches_past_its_file_whatever_its_blocks() {
    let capacity = 1u64 << 30;
    for blocks in [
        "bssplit=4k/50:64k/50",
        "bsrange=4k-64k",
        "bssplit=4k/50:64k/50,4k",
    ] {
        for rw in ["randwrite", "write", "randrw"] {
            let text = format!(
                "[j]\nrw={rw}\n{blocks}\nsize=128k\nnrfiles=4\nnorandommap\noffset={}\nloops=8\n",
                capacity - (128 << 10)
            );
            let jobs = parse(&text, "t.fio", capacity).unwrap();
            let out = crate::workload::Generator::new(jobs[0].clone(), 0, 1).requests_unloaded();
            assert!(out.len() > 32, "{text}");
            for r in out.iter().filter(|r| r.len.0 > 0) {
                let at = r.offset.0 - (capacity - (128 << 10));
                let (start, end) = (at / (32 << 10), (at + r.len.0 - 1) / (32 << 10));
                assert!(start == end && end < 4, "{text}: {r:?}");
            }
        }
    }
}

/// fio 3.33 runs a job whose region is smaller than its largest block but
/// not its smallest, drawing only sizes that fit (32 KiB: `bssplit=4k/50:
/// 64k/50` 8 reads of 4 KiB, `bsrange=4k-64k` 5 reads, `bs=4k,64k` with
/// `rw=read` 8); iosteer refused them ("must fit the drive (1073741824
/// bytes) and hold a block of 65536").
#[test]
fn a_region_smaller_than_the_largest_block_draws_the_sizes_that_fit() {
    for (options, largest) in [
        ("rw=randread\nbssplit=4k/50:64k/50", 4096),
        ("rw=randread\nbsrange=4k-64k", 32768),
        ("rw=read\nbsrange=4k-64k", 32768),
        ("rw=read\nbs=4k,64k", 4096),
    ] {
        let job = jobs_of(&format!("[j]\nsize=32k\n{options}\n")).remove(0);
        let out = crate::workload::Generator::new(job, 0, 1).requests_unloaded();
        let moved: u64 = out.iter().map(|r| r.len.0).sum();
        assert_eq!(moved, 32768, "{options}");
        assert!(
            out.iter()
                .all(|r| r.offset.0 + r.len.0 <= 32768 && r.len.0 <= largest),
            "{options}: {out:?}"
        );
    }
    // Where a direction the job issues has no block that fits, as fio's
    // `bs=64k size=32k` ("size too small").
    for options in ["bs=64k\nrw=read", "bs=4k,64k\nrw=rw"] {
        assert_refused(
            &format!("[j]\nsize=32k\n{options}\n"),
            "t.fio:4",
            &[
                "its size, 32768 bytes, is less than its smallest block of 65536",
                "size too small",
            ],
        );
    }
}

/// fio 3.33 issues nothing for a job whose files are each smaller than its
/// smallest block (`bs=8k size=16k nrfiles=4`: four 4 KiB files, no
/// write in its log); iosteer had written 8 KiB across two files.
#[test]
fn files_smaller_than_the_smallest_block_are_refused() {
    assert_refused(
        "[j]\nrw=randwrite\nbs=8k\nsize=16k\nnrfiles=4\n",
        "t.fio:5",
        &[
            "4 files holds 4096 bytes",
            "smallest block of 8192",
            "no I/O",
        ],
    );
    assert!(parse(
        "[j]\nrw=randwrite\nbs=4k\nsize=16k\nnrfiles=4\n",
        "t.fio",
        GIB
    )
    .is_ok());
}

/// A job that names its files has those files, whatever `nrfiles` says,
/// before or after (fio 3.33: `filename=fa nrfiles=3` writes 16 blocks to
/// `fa`, `filename=fa:fb` 8 to each); iosteer cut one named file in three.
#[test]
fn named_files_are_the_jobs_files_whatever_nrfiles_says() {
    for (body, files) in [
        ("filename=fa\nnrfiles=3\n", 1),
        ("nrfiles=3\nfilename=fa\n", 1),
        ("filename=fa:fb\nnrfiles=3\n", 2),
        ("nrfiles=3\n", 3),
    ] {
        let file = file_of(&format!("[j]\nrw=write\nbs=4k\nsize=64k\n{body}"));
        assert_eq!(file.jobs[0].shape.files.count(), files, "{body}");
    }
}

/// The usual split of a drive among `numjobs` copies: each copy that
/// reaches past the end is cut to what is left, as fio cuts it (fio 3.33,
/// `size=25% offset_increment=25% numjobs=4 bs=64k`: all four run, the
/// last cut), a percentage size with a note; without a size each copy
/// runs from its offset to the end. Both were refused: the percentage
/// offset rounds up to the block, so the last copy overran by 32 KiB.
#[test]
fn copies_moved_past_the_end_are_cut_as_fio_cuts_them() {
    const DRIVE: u64 = 33_951_711_232;
    let split = parse_file(
        "[w]\nrw=write\nbs=64k\nnumjobs=4\nsize=25%\noffset_increment=25%\n",
        "t.fio",
        DRIVE,
    )
    .unwrap();
    let last = synthetic(&split.jobs[3]);
    assert_eq!(last.offset + last.size, DRIVE / 65536 * 65536);
    assert!(last.size < synthetic(&split.jobs[0]).size);
    assert_eq!(
        split
            .notes
            .iter()
            .filter(|n| n.contains("reaches past the end"))
            .count(),
        1
    );
    let to_the_end = parse_file(
        "[r]\nrw=randread\nnumjobs=4\noffset_increment=8g\n",
        "t.fio",
        DRIVE,
    )
    .unwrap();
    for (n, job) in to_the_end.jobs.iter().enumerate() {
        let s = synthetic(job);
        assert_eq!(s.offset, n as u64 * (8 << 30));
        assert_eq!(s.offset + s.size, DRIVE / 4096 * 4096, "copy {n}");
    }
    // An absolute size must fit, and the error says which copy.
    let err = parse_file(
        "[w]\nrw=write\nnumjobs=2\nsize=20g\noffset_increment=20g\n",
        "t.fio",
        DRIVE,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("copy 1 of numjobs"), "{err}");
}

/// A job that issues one direction moves whole blocks of that direction's
/// size (fio 3.33, `rw=write bs=4k,8000 size=8m`: 1048 writes, 8,384,000
/// bytes); iosteer counted in the reads' 4 KiB and cut a 1049th write.
#[test]
fn whole_blocks_are_those_of_the_direction_issued() {
    let writes = crate::workload::Generator::new(
        jobs_of("[j]\nrw=write\nsize=8m\nbs=4k,8000\n")[0].clone(),
        0,
        1,
    )
    .requests_unloaded();
    assert_eq!(writes.len(), 1048);
    assert!(writes.iter().all(|r| r.len.0 == 8000));
}

#[test]
fn a_region_past_the_end_is_blamed_on_the_line_that_placed_it() {
    let small = 2 << 20;
    let at_line = |text: &str| parse(text, "t.fio", small).unwrap_err().line;
    assert_eq!(at_line("[r]\nsize=4m\nrw=read\n\nbs=4k\n; a comment\n"), 2);
    assert_eq!(at_line("[global]\nsize=4m\n[r]\nrw=read\nbs=4k\n"), 2);
    assert_eq!(at_line("[r]\nsize=1m\nrw=read\noffset=1536k\nbs=4k\n"), 4);
}

#[test]
fn a_sequential_mix_walks_reads_and_writes_each_on_its_own_as_fio() {
    // fio 3.33 `rw=readwrite bs=4k size=64k`: read 0, read 1, read 2,
    // write 0, read 3, read 4, write 1... (blocks): each direction from the
    // start, so writes land on blocks just read. Here they shared one
    // position, and never touched the same block.
    for text in [
        "[j]\nrw=readwrite\nbs=4k\nsize=64k\n",
        "[j]\nrw=readwrite\nbssplit=4k/100\nsize=64k\nnrfiles=1\n",
    ] {
        let job = jobs_of(text)[0].clone();
        let requests = crate::workload::Generator::new(job, 0, 1).requests_unloaded();
        for op in [iosteer_sched::Op::Read, iosteer_sched::Op::Write] {
            let blocks: Vec<u64> = (requests.iter())
                .filter(|r| r.op == op)
                .map(|r| r.offset.0 / 4096)
                .collect();
            let walked: Vec<u64> = (0..blocks.len() as u64).map(|b| b % 16).collect();
            assert_eq!(blocks, walked, "{op:?}: {text}");
        }
    }
}

#[test]
fn a_sequential_mix_with_holes_ends_when_one_direction_passes_the_end() {
    // fio 3.33 `rw=readwrite:8k bs=4k size=16m`: 1,304 reads and 1,366
    // writes, the writes' pass (16 MiB in strides of 12 KiB: 1,366) over;
    // here it moved its whole size (4,096 requests).
    let job = jobs_of("[j]\nrw=readwrite:8k\nbs=4k\nsize=16m\n")[0].clone();
    let requests = crate::workload::Generator::new(job, 0, 1).requests_unloaded();
    let count = |op| requests.iter().filter(|r| r.op == op).count();
    let (reads, writes) = (
        count(iosteer_sched::Op::Read),
        count(iosteer_sched::Op::Write),
    );
    assert_eq!(reads.max(writes), 1366, "{reads} reads, {writes} writes");
    assert!(
        (2_600..2_750).contains(&(reads + writes)),
        "{reads} reads, {writes} writes"
    );
    // One direction alone, or a mix without holes, moves as before.
    let job = jobs_of("[j]\nrw=readwrite\nbs=4k\nsize=16m\n")[0].clone();
    assert_eq!(
        crate::workload::Generator::new(job, 0, 1)
            .requests_unloaded()
            .len(),
        4096
    );
}
