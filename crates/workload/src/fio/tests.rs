use super::*;

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// The jobs of `text` on a 1 GiB drive, which must parse.
fn jobs_of(text: &str) -> Vec<Job> {
    parse(text, "t.fio", GIB).unwrap()
}

/// The job file `text` on a 1 GiB drive, with its notes; it must parse.
fn file_of(text: &str) -> JobFile {
    parse_file(text, "t.fio", GIB).unwrap()
}

/// The synthetic workload of `job`.
fn synthetic(job: &Job) -> &Synthetic {
    match &job.kind {
        JobKind::Synthetic(s) => s,
        JobKind::Trace(_) => panic!("{} is a trace", job.name),
    }
}

/// One of `file`'s notes says `says`.
fn assert_noted(file: &JobFile, says: &str) {
    assert!(
        file.notes.iter().any(|n| n.contains(says)),
        "{:?}",
        file.notes
    );
}

/// Parsing `text` on a 1 GiB drive fails with an error that starts with
/// `at` (the file's name, then maybe its line) and says each of `says`.
fn assert_refused(text: &str, at: &str, says: &[&str]) {
    let file = at.split(':').next().unwrap();
    let err = parse(text, file, GIB).unwrap_err().to_string();
    assert!(
        err.starts_with(at) && says.iter().all(|s| err.contains(s)),
        "{err}"
    );
}

#[test]
fn a_job_file_becomes_jobs_with_fio_meanings() {
    let text = "\
; the fill of the paper
[global]
ioengine=libaio
direct=1
size=10%

[readers]
rw=randread
bs=128k
rate=200m
rate_process=poisson
iodepth=64
runtime=2m

[fill]
rw=write
bsrange=64k-256k
rate_iops=250
startdelay=10s
runtime=90
write_hint=long
numjobs=2
";
    let jobs = parse(text, "fill.fio", 100 * GIB).unwrap();
    assert_eq!(jobs.len(), 3);
    let r = synthetic(&jobs[0]);
    assert_eq!(
        (r.read_percent, r.sequential, r.block_min),
        (100, false, 128 << 10)
    );
    assert_eq!(r.arrival.bytes_per_s, Some(200.0 * (1 << 20) as f64));
    assert!(r.arrival.poisson && r.arrival.iodepth == 64);
    assert_eq!(r.size, 10 * GIB / 4096 * 4096);
    assert_eq!(jobs[0].stop, Some(Nanos::from_secs(120)));
    let w = synthetic(&jobs[1]);
    assert_eq!(
        (w.read_percent, w.sequential, w.block_min, w.block_max),
        (0, true, 64 << 10, 256 << 10)
    );
    assert_eq!(w.hint, LifetimeHint::Long);
    assert_eq!(
        (jobs[1].start, jobs[1].stop),
        (Nanos::from_secs(10), Some(Nanos::from_secs(100)))
    );
    assert_eq!(
        (jobs[1].name.as_str(), jobs[2].name.as_str()),
        ("fill.0", "fill.1")
    );
}

#[test]
fn mixes_and_untimed_jobs() {
    let jobs = jobs_of("[a]\nrw=randrw\nrwmixwrite=30\n[b]\nrw=read\nruntime=5s\n");
    let a = synthetic(&jobs[0]);
    assert_eq!(a.read_percent, 70);
    // fio's end of a job: without time_based, once it has moved its
    // size (the whole drive here), or at its runtime if that comes first.
    assert_eq!(
        (jobs[0].stop, jobs[0].shape.bytes_limit),
        (None, Some(GIB)),
        "an untimed job ends on its size"
    );
    assert_eq!(
        (jobs[1].stop, jobs[1].shape.bytes_limit),
        (Some(Nanos::from_secs(5)), Some(GIB))
    );
    let jobs = jobs_of("[a]\nrw=randrw\ntime_based\n[b]\nrw=read\nruntime=5s\ntime_based=1\n");
    assert_eq!(
        (jobs[0].stop, jobs[0].shape.bytes_limit),
        (None, Some(GIB)),
        "time_based without runtime is ignored, as fio ignores it"
    );
    assert_eq!(jobs[1].shape.bytes_limit, None);
}

#[test]
fn unsupported_options_and_bad_values_name_file_line_and_option() {
    for (text, at, says) in [
        (
            "[a]\nrw=randread\nmerge_blktrace_file=m.bin\n",
            "v.fio:3:",
            &["`merge_blktrace_file`", "not supported"][..],
        ),
        ("[a]\nrw=sideways\n", "v.fio:2:", &["randread"]),
        ("[a]\nbs=4q\n", "v.fio", &["`bs=4q`"]),
        ("rw=read\n", "v.fio", &["before any [section]"]),
        ("[global]\nbs=4k\n", "v.fio", &["no job section"]),
        ("[a]\nsize=2g\n", "v.fio", &["must fit the drive"]),
        // Refused with why: what fio would do that iosteer does not.
        (
            "[a]\nrw=read\nopenfiles=1\n",
            "v.fio:3:",
            &["`openfiles`", "keeps at most"],
        ),
        (
            "[a]\nfile_append=1\n",
            "v.fio:2:",
            &["`file_append`", "end of the existing file"],
        ),
        (
            "[a]\nzonemode=zbd\n",
            "v.fio:2:",
            &["zonemode=zbd", "not modelled"],
        ),
        (
            "[a]\nzonemode=strided\n",
            "v.fio:2:",
            &["zonemode=strided", "needs a zonesize"],
        ),
    ] {
        assert_refused(text, at, says);
    }
}

#[test]
fn iosteer_backpressure_makes_a_job_listen() {
    let jobs = jobs_of("[global]\niosteer_backpressure=50ms\n[fill]\nrw=write\n[slow]\nrw=write\niosteer_backpressure=200\n[deaf]\nrw=write\niosteer_backpressure=0\n[r]\nrw=read\n");
    let bounds: Vec<Option<Nanos>> = jobs.iter().map(|j| synthetic(j).backpressure).collect();
    assert_eq!(
        bounds,
        [
            Some(Nanos::from_millis(50)),
            Some(Nanos::from_micros(200)),
            Some(Nanos::ZERO),
            Some(Nanos::from_millis(50)),
        ]
    );
    let none = jobs_of("[a]\nrw=write\n");
    let a = synthetic(&none[0]);
    assert_eq!(a.backpressure, None, "deaf unless asked");
    assert_refused(
        "[a]\niosteer_backpressure=soon\n",
        "b.fio:2:",
        &["microseconds unless suffixed"],
    );
    assert_refused(
        "[a]\nbackpressure=50ms\n",
        "b.fio",
        &["not supported", "iosteer_backpressure"],
    );
}

#[test]
fn suffixes_follow_fio() {
    assert_eq!(size_value("4k"), Some(4096));
    // fio's default kb_base=1024 reads the IEC prefixes backwards, as its
    // HOWTO says, for old scripts: 1MiB is 10^6 bytes, 1m and 1MB are 2^20.
    assert_eq!(size_value("1MiB"), Some(1_000_000));
    assert_eq!(size_value("1MB"), Some(1 << 20));
    assert_eq!(size_value("2g"), Some(2 << 30));
    assert_eq!(size_value("x"), None);
    assert_eq!(time_value("90", 1_000_000_000), Some(Nanos::from_secs(90)));
    assert_eq!(
        time_value("500ms", 1_000_000_000),
        Some(Nanos::from_millis(500))
    );
    assert_eq!(time_value("2m", 1_000_000_000), Some(Nanos::from_secs(120)));
    assert_eq!(time_value("100", 1_000), Some(Nanos::from_micros(100)));
}

#[test]
fn sizes_and_times_with_a_decimal_point_are_refused_as_fio_misreads_them() {
    // fio 3.33 reads `bs=1.5k size=1.5m` as one read of 1 byte,
    // `runtime=1.5s` as 1 s, `thinktime=2.5ms` as 2 us and `size=12.5%` as
    // 12 bytes; iosteer ran them as written, another job than fio's.
    for (option, line) in [
        ("size=1.5m", 2),
        ("bs=1.5k", 2),
        ("size=12.5%", 2),
        ("offset=0.5%", 2),
        ("io_size=50.5%", 2),
        ("runtime=1.5s", 2),
        ("thinktime=2.5ms", 2),
        ("rate=1.5m", 2),
        ("bsrange=1.5k-8k", 2),
    ] {
        assert_refused(
            &format!("[j]\n{option}\n"),
            &format!("t.fio:{line}:"),
            &[option, "fio reads a number with a decimal point", "1500ms"],
        );
    }
    // Floats where fio reads floats, and a point that is not in a number.
    jobs_of("[j]\nrw=randread\nrandom_distribution=zipf:1.2\nrate_iops=0.5\n");
    jobs_of("[j]\nfilename=a.b\nsize=1m\n");
    // Command lines keep their decimals (`--size 1.5g`).
    assert_eq!(size_value("1.5k"), Some(1536));
}

#[test]
fn a_space_between_a_number_and_its_unit_is_refused_as_fio_drops_the_unit() {
    // fio 3.33 runs `bs=4 k size=1m` as 262,144 reads of 4 bytes, and
    // `size=1 m` is 1 byte to it; iosteer read 4 KiB and 1 MiB.
    for option in [
        "bs=4 k",
        "size=1 m",
        "size=10 %",
        "runtime=1 m",
        "thinktime=5 ms",
    ] {
        assert_refused(
            &format!("[j]\n{option}\n"),
            "t.fio:2:",
            &[option, "no space between a number and its unit"],
        );
    }
    // A space after a direction's comma and at the end are fio's too
    // (fio 3.33 reads `bs=4k, 8k ` as 4 KiB reads and 8 KiB writes; a
    // space after `=` it keeps, see below).
    let jobs = jobs_of("[j]\nbs=4k, 8k \nsize=1m\nrw=rw\n");
    assert_eq!(synthetic(&jobs[0]).block_max, 8192);
}

#[test]
fn ranges_fio_draws_from_are_refused_by_name() {
    // fio takes `startdelay=1-2` and `filesize=64k-256k` (each job's delay,
    // each file's size, drawn in the range); they were refused as if not a
    // time or size at all ("expected a time such as 10s or 500ms").
    assert_refused(
        "[j]\nsize=1m\nstartdelay=1-2\n",
        "t.fio:3:",
        &[
            "startdelay=1-2",
            "a range of delays (1 to 2",
            "give one time",
        ],
    );
    assert_refused(
        "[j]\nnrfiles=4\nfilesize=64k:256k\n",
        "t.fio:3:",
        &[
            "filesize=64k:256k",
            "a range of file sizes",
            "give one size",
        ],
    );
    assert_eq!(
        jobs_of("[j]\nsize=1m\nstartdelay=2\n")[0].start,
        Nanos::from_secs(2)
    );
}

#[test]
fn a_malformed_section_header_says_so() {
    // It read as an option "before any [section]", on a file's first line.
    for header in ["[job]x", "[job"] {
        assert_refused(
            &format!("{header}\nrw=read\n"),
            "t.fio:1:",
            &[header, "a section header is `[name]` alone on its line"],
        );
    }
    assert_refused(
        "[a]\nsize=1m\n[b] size=2m\n",
        "t.fio:3:",
        &["`[b] size=2m`"],
    );
    assert_eq!(jobs_of("[a] ; a comment\nsize=1m\n").len(), 1);
}

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

#[test]
fn commands_and_read_ahead_are_noted_as_not_done() {
    let file =
        file_of("[a]\nrw=read\nexec_prerun=echo hi\nexec_postrun=true\npre_read=1\ndisk_util=0\n");
    assert_noted(&file, "exec_prerun=echo hi is not run");
    assert_noted(&file, "exec_postrun=true is not run");
    assert_noted(&file, "pre_read");
    assert_eq!(file.notes.len(), 3, "{:?}", file.notes);
    assert!(file_of("[a]\nrw=read\npre_read=0\n").notes.is_empty());
    // fio 3.33 deletes a.0.0 after `unlink=1`; iosteer run keeps it.
    let file = file_of("[a]\nrw=write\nunlink=1\n[b]\nrw=write\nunlink_each_loop=1\n");
    assert_noted(
        &file,
        "job a: unlink: fio deletes the job's files when the job ends",
    );
    assert_noted(
        &file,
        "job b: unlink_each_loop: fio deletes the job's files after each loop",
    );
    assert!(file_of("[a]\nrw=write\nunlink=0\n").notes.is_empty());
    assert_refused(
        "[a]\nunlink=sometimes\n",
        "b.fio:2",
        &["unlink=sometimes", "0 or 1"],
    );
    assert_refused(
        "[a]\npre_read=maybe\n",
        "b.fio:2",
        &["pre_read=maybe", "0 or 1"],
    );
}

/// fio 3.33 takes `numruns` in a job file (it is its tiobench profile's
/// option) and runs the job once: `numruns=3` on a 64 KiB read gave 16
/// reads, one set of figures in its JSON; `numruns=abc` it refuses.
#[test]
fn numruns_runs_the_job_once_as_fio_does_and_says_so() {
    let file = file_of("[a]\nrw=read\nsize=64k\nnumruns=3\n");
    assert_noted(&file, "numruns=3 runs the job once");
    assert_eq!(file.jobs.len(), 1);
    assert_eq!(file.jobs[0].shape.bytes_limit, Some(65536));
    assert_refused(
        "[a]\nnumruns=abc\n",
        "b.fio:2",
        &["numruns=abc", "an integer"],
    );
}

/// fio's `kb_base=1000` reads every size of its job the other way round,
/// wherever it stands (fio applies it before the job's other options), a
/// job's own over the `[global]` one.
#[test]
fn kb_base_1000_reads_every_size_of_its_job_in_powers_of_ten() {
    let text =
        "[global]\nkb_base=1000\n[a]\nrw=read\nbs=4k\nsize=1m\n[b]\nrw=read\nbs=4KiB\nsize=1MiB\n\
                [c]\nrw=read\nsize=1m\nkb_base=1024\n[d]\nrw=read\nbssplit=4k/50:8k/50\nsize=1m\n";
    let jobs = jobs_of(text);
    let sizes = |i: usize| match &jobs[i].kind {
        JobKind::Synthetic(s) => (s.block_min, s.size),
        JobKind::Trace(_) => unreachable!(),
    };
    assert_eq!(sizes(0), (4000, 1_000_000));
    assert_eq!(sizes(1), (4096, 1 << 20));
    assert_eq!(sizes(2).1, 1 << 20);
    let split = jobs[3].shape.blocks.as_ref().unwrap();
    assert_eq!(split[0].sizes[0].0, 4000);
    let e = parse("[a]\nrw=read\nkb_base=1001\n", "k.fio", GIB).unwrap_err();
    assert_eq!(e.line, 3);
    assert!(e.message.contains("expected 1024"), "{e}");
}

/// fio reads a `[global]` section's sizes with the `kb_base` in force
/// there: a job's own `kb_base` reads only the job's (fio 3.33, `[global]`
/// size=1m bs=4k, `[j]` kb_base=1000: 256 reads of 4096 bytes; `[global]`
/// size=1m, `[j]` bs=4k kb_base=1000: 262 of 4000; `[global]` kb_base=1000
/// size=1m, `[j]` kb_base=1024: 1,000,000 bytes).
#[test]
fn kb_base_reads_the_sizes_of_its_own_section_and_not_globals_before() {
    let sizes = |text: &str| match &jobs_of(text)[0].kind {
        JobKind::Synthetic(s) => (s.block_min, s.size),
        JobKind::Trace(_) => unreachable!(),
    };
    let text = "[global]\nsize=1m\nbs=4k\n[j]\nrw=read\nkb_base=1000\n";
    assert_eq!(sizes(text), (4096, 1 << 20));
    let text = "[global]\nsize=1m\n[j]\nrw=read\nbs=4k\nkb_base=1000\n";
    assert_eq!(sizes(text), (4000, 1 << 20));
    let text = "[global]\nkb_base=1000\nsize=1m\n[j]\nrw=read:4k\nkb_base=1024\n";
    assert_eq!(sizes(text), (4096, 1_000_000));
    assert_eq!(jobs_of(text)[0].shape.offset_add, 4096);
    // A later [global] reads with the kb_base an earlier one set.
    let text = "[global]\nkb_base=1000\n[global]\nsize=1m\n[j]\nrw=read\n";
    assert_eq!(sizes(text).1, 1_000_000);
}

#[test]
fn a_file_of_more_jobs_than_fio_allows_is_refused_at_the_section_past_the_limit() {
    // Four sections of 1,024 copies make 4,096 jobs, every one after the
    // earlier groups; a fifth section is one job too many.
    let section = "[j]\nrw=randread\nnumjobs=1024\nstonewall\n";
    let four = section.repeat(4);
    assert_eq!(jobs_of(&four).len(), MAX_JOBS);
    let e = parse(&format!("{four}[last]\nrw=read\n"), "t.fio", GIB).unwrap_err();
    assert_eq!(e.line, 17, "{e}");
    assert!(
        e.message.contains("job [last]") && e.message.contains("at most 4096"),
        "{e}"
    );
    // Many small sections: refused at section 4,097, not read to the end.
    let e = parse(&"[j]\n".repeat(20_000), "t.fio", GIB).unwrap_err();
    assert_eq!(e.line, MAX_JOBS + 1, "{e}");
}

#[test]
fn more_options_in_force_than_the_limit_are_refused_naming_the_line() {
    let global = format!("[global]\n{}", "bs=4k\n".repeat(MAX_SECTION_OPTIONS));
    let ok = format!("{global}[j]\nrw=read\n");
    let e = parse(&ok, "t.fio", GIB).unwrap_err();
    // [global]'s 256 options are in force in [j]: its own is the 257th.
    assert_eq!(e.line, MAX_SECTION_OPTIONS + 3, "{e}");
    assert!(e.message.contains("at most 256"), "{e}");
    let e = parse(&format!("{global}bs=8k\n[j]\n"), "t.fio", GIB).unwrap_err();
    assert_eq!(e.line, MAX_SECTION_OPTIONS + 2, "{e}");
    let within = format!("[global]\n{}[j]\nrw=read\n", "bs=4k\n".repeat(255));
    assert_eq!(jobs_of(&within).len(), 1);
}

#[test]
fn iosteer_trim_ahead_trims_before_a_sequential_writer() {
    let jobs = jobs_of("[fill]\nrw=write\nbs=128k\niosteer_trim_ahead=64m\n");
    let s = synthetic(&jobs[0]);
    assert_eq!(s.trim_ahead, Some(64 << 20));
    assert_refused(
        "[r]\nrw=randwrite\niosteer_trim_ahead=64m\n",
        "t.fio:3:",
        &["is not rw=write"],
    );
}

#[test]
fn an_escaped_colon_stays_inside_a_file_name() {
    let jobs = jobs_of("[a]\nrw=read\nsize=1m\nfilename=/dev/x/0\\:1\\:2:plain\n");
    assert_eq!(jobs[0].shape.files.names, ["/dev/x/0:1:2", "plain"]);
    assert_eq!(jobs[0].shape.files.nrfiles, 2);
    let jobs = jobs_of("[a]\nrw=read\nsize=1m\nfilename=one\\:dev\n");
    assert_eq!(jobs[0].shape.files.names, ["one:dev"]);
    assert_eq!(jobs[0].shape.files.nrfiles, 1);
}

#[test]
fn a_blank_zone_range_is_the_rest_of_the_region() {
    let blank = jobs_of("[a]\nrw=randread\nsize=1m\nrandom_distribution=zoned:70/10:30/\n");
    let full = jobs_of("[a]\nrw=randread\nsize=1m\nrandom_distribution=zoned:70/10:30/90\n");
    assert_eq!(blank[0].shape.distribution, full[0].shape.distribution);
}

#[test]
fn sync_writes_are_sent_fua_and_sync_off_is_fios_default() {
    for off in [
        "sync=0",
        "sync=none",
        "sync=none\nioengine=io_uring_cmd\ncmd_type=nvme",
    ] {
        let jobs = jobs_of(&format!("[a]\nrw=write\nsize=1m\n{off}\n"));
        assert_eq!(jobs[0].shape.write_sync, WriteSync::None, "{off}");
    }
    for (on, mode) in [
        ("1", WriteSync::Sync),
        ("sync", WriteSync::Sync),
        ("dsync", WriteSync::Dsync),
    ] {
        let file = file_of(&format!("[a]\nrw=write\nsize=1m\nsync={on}\n"));
        assert_eq!(file.jobs[0].shape.write_sync, mode, "sync={on}");
        assert!(
            file.notes.iter().any(|n| n.contains("sent FUA")),
            "{:?}",
            file.notes
        );
    }
    assert_refused(
        "[a]\nrw=write\nsize=1m\nsync=yes\n",
        "v.fio:4:",
        &["sync=yes", "none or 0", "dsync"],
    );
}

/// The sg engine's FUA options, which fio takes only with that engine;
/// engine tuning and options that send the drive nothing, with notes.
#[test]
fn fua_options_of_the_sg_engine_and_options_that_send_the_drive_nothing() {
    let file = file_of("[a]\nrw=write\nsize=1m\nioengine=sg\nwritefua=1\nreadfua=1\n");
    assert!(file.jobs[0].shape.fua_writes());
    assert!(
        file.notes.iter().any(|n| n.contains("readfua")),
        "{:?}",
        file.notes
    );
    assert!(
        !jobs_of("[a]\nrw=write\nsize=1m\nioengine=sg\nwritefua=0\n")[0]
            .shape
            .fua_writes()
    );
    assert_refused(
        "[a]\nrw=write\nsize=1m\nwritefua=1\n",
        "v.fio:4:",
        &[
            "writefua",
            "sg, io_uring_cmd engines",
            "psync",
            "Bad option",
        ],
    );
    for (option, says) in [
        ("write_barrier=4", "libpmem"),
        ("sync_file_range=write:8", "after every 8 writes"),
        (
            "sync_file_range=wait_before,write,wait_after",
            "after every 1 writes",
        ),
    ] {
        let file = file_of(&format!("[a]\nrw=write\nsize=1m\n{option}\n"));
        assert!(!file.jobs[0].shape.fua_writes(), "{option}");
        assert!(
            file.notes.iter().any(|n| n.contains(says)),
            "{option}: {:?}",
            file.notes
        );
    }
    for quiet in [
        "write_barrier=0",
        "sync_file_range=write:0",
        "ioengine=pvsync2\nhipri_percentage=50",
    ] {
        let file = file_of(&format!("[a]\nrw=write\nsize=1m\n{quiet}\n"));
        assert!(file.notes.is_empty(), "{quiet}: {:?}", file.notes);
    }
    assert_refused(
        "[a]\nrw=write\nsize=1m\nsync_file_range=flush:8\n",
        "v.fio:4:",
        &["sync_file_range=flush:8", "wait_before"],
    );
}

#[test]
fn an_unknown_option_is_not_said_to_change_the_io_and_a_near_miss_is_named() {
    assert_refused(
        "[a]\nrw=read\nsize=1m\nthred=1\n",
        "v.fio:4:",
        &[
            "`thred`",
            "not supported",
            "did you mean `thread`?",
            "supported: rw",
        ],
    );
    let err = parse("[a]\nrw=read\nfrobnicate=3\n", "v.fio", GIB)
        .unwrap_err()
        .to_string();
    assert!(!err.contains("did you mean"), "{err}");
    assert!(!err.contains("changes the I/O issued and"), "{err}");
}

#[test]
fn an_unknown_engine_is_said_to_be_unknown() {
    assert_refused(
        "[a]\nioengine=frob\n",
        "v.fio:2:",
        &["ioengine `frob` is not an engine iosteer knows", "libaio"],
    );
    assert_refused(
        "[a]\nioengine=pmemblk\n",
        "v.fio:2:",
        &["persistent memory", "cannot model"],
    );
    // fio's null engine writes nothing: `iosteer run` would write the
    // job's file (or overwrite one the job names) where fio touches none.
    assert_refused(
        "[a]\nrw=write\nioengine=null\n",
        "v.fio:3:",
        &["ioengine `null` does no I/O", "touching no file"],
    );
}

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
fn trimwrite_trims_each_block_just_before_writing_it() {
    let jobs = jobs_of("[tw]\nrw=trimwrite\nbs=64k\nsize=1m\n");
    let s = synthetic(&jobs[0]);
    assert!(s.sequential && s.read_percent == 0 && !s.trim);
    assert_eq!(s.trim_ahead, Some(64 << 10));
    let out = crate::workload::Generator::new(jobs[0].clone(), 0, 1).requests_unloaded();
    use iosteer_sched::Op;
    let ops: Vec<(Op, u64)> = out.iter().map(|r| (r.op, r.offset.0)).collect();
    assert_eq!(ops.len(), 32, "16 trims and 16 writes: {ops:?}");
    for (pair, block) in ops.chunks(2).zip(0u64..) {
        assert_eq!(pair, [(Op::Trim, block << 16), (Op::Write, block << 16)]);
    }
    assert_refused(
        "[tw]\nrw=trimwrite\niosteer_trim_ahead=1m\n",
        "t.fio:3",
        &["rw=trimwrite", "iosteer_trim_ahead"],
    );
}

#[test]
fn per_direction_values_follow_fios_commas() {
    // A blank is the default (4k); the last value stands for the
    // directions after it unless the list ends in a comma.
    for (bs, want) in [
        ("8k", [8192, 8192, 8192]),
        (",8k", [4096, 8192, 8192]),
        ("8k,", [8192, 4096, 4096]),
        ("8k,32k,", [8192, 32768, 4096]),
        (",8k,", [4096, 8192, 4096]),
    ] {
        let jobs = jobs_of(&format!("[j]\nrw=randrw\nbs={bs}\nsize=64m\n"));
        let sizes = jobs[0]
            .shape
            .blocks
            .as_ref()
            .map_or([synthetic(&jobs[0]).block_min; 3], |b| {
                std::array::from_fn(|d| b[d].sizes[0].0)
            });
        assert_eq!(sizes, want, "bs={bs}");
    }
    // bssplit's lists alike, a blank one fio's default 4k.
    let split = |text: &str| {
        let job = jobs_of(&format!("[j]\nrw=randrw\nbssplit={text}\nsize=64m\n"))[0].clone();
        let blocks = job.shape.blocks.clone().unwrap_or_else(|| {
            [synthetic(&job).block_min; 3].map(crate::bssplit::BlockSplit::single)
        });
        blocks.map(|b| b.largest())
    };
    assert_eq!(split("4k/50:64k/50,8k/100"), [65536, 8192, 8192]);
    assert_eq!(split(",64k/100"), [4096, 65536, 65536]);
    assert_eq!(split("64k/100,"), [65536, 4096, 4096]);
    // A blank blockalign keeps the job's alignment.
    let jobs = jobs_of("[j]\nrw=randrw\nbs=8k\nba=,64k\nsize=64m\n");
    assert_eq!(jobs[0].shape.random_align, Some([8192, 65536, 65536]));
    for bad in [
        "bs=,",
        "bs=4k,4k,4k,4k",
        "rate=1m,x",
        "bssplit=4k/50,",
        "bssplit=4k,8k,16k,32k",
    ] {
        assert_refused(&format!("[j]\nrw=randrw\n{bad}\n"), "t.fio:3", &[bad]);
    }
}

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
    // `rate` wins over `rate_iops`, as in fio.
    assert_eq!(
        arrival("[j]\nrw=randread\nrate_iops=10\nrate=1m\n").bytes_per_s,
        Some(1048576.0)
    );
    assert_eq!(
        arrival("[j]\nrw=randread\nbs=8k\nrate_iops=10\n").bytes_per_s,
        Some(81920.0)
    );
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

/// Zeros fio takes as its defaults (fio 3.33 writes the 16 blocks of a
/// 64 KiB job with each of these; they were refused here).
#[test]
fn zeros_that_fio_takes_as_its_defaults() {
    let job = |option: &str| jobs_of(&format!("[j]\nrw=write\nsize=64k\n{option}\n")).remove(0);
    let plain = job("");
    assert_eq!(job("number_ios=0").shape.ios_limit, None);
    assert_eq!(job("loops=0").shape.bytes_limit, plain.shape.bytes_limit);
    assert_eq!(job("io_size=0").shape.bytes_limit, plain.shape.bytes_limit);
    assert_eq!(job("nrfiles=0").shape.files.count(), 1);
    assert_eq!(
        job("thinktime=10\nthinktime_blocks=0")
            .shape
            .thinktime_blocks,
        0
    );
    // size=0 is no size: the whole drive here, as fio takes a device's.
    let whole = jobs_of("[j]\nrw=write\nsize=0\n").remove(0);
    assert_eq!(synthetic(&whole).size, GIB);
    assert!(!whole.shape.sized);
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
fn a_byte_order_mark_before_the_first_section_is_not_part_of_it() {
    let jobs = jobs_of("\u{feff}[j]\r\nrw=randread\r\nbs=8k\r\nsize=1m\r\n");
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].name, "j");
}

/// fio reads `include NAME` from beside the including file (checked with
/// fio 3.33's --showcmd); an error inside names the included file and line.
#[test]
fn includes_are_read_beside_the_file_and_errors_name_their_own_line() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("common.fio"), "bs=8k ; shared\n").unwrap();
    std::fs::write(sub.join("bad.fio"), "bs=8k\nrw=sideways\n").unwrap();
    std::fs::write(sub.join("loop.fio"), "include loop.fio\n").unwrap();
    let main = sub.join("main.fio").to_string_lossy().into_owned();
    let text = "[global]\ninclude common.fio\n[j]\nrw=read\nsize=1m\n";
    let jobs = parse_file(text, &main, GIB).unwrap().jobs;
    assert_eq!(synthetic(&jobs[0]).block_max, 8192);
    let err = parse_file("[j]\ninclude bad.fio\nsize=1m\n", &main, GIB).unwrap_err();
    assert!(err.file.ends_with("bad.fio") && err.line == 2, "{err}");
    let err = parse_file("[j]\ninclude loop.fio\n", &main, GIB).unwrap_err();
    assert!(err.to_string().contains("nest deeper"), "{err}");
    std::fs::write(sub.join("job.fio"), "bs=8k\n[k]\nrw=write\n").unwrap();
    let err = parse_file("[j]\ninclude job.fio\n", &main, GIB).unwrap_err();
    assert!(err.file.ends_with("job.fio") && err.line == 2, "{err}");
    assert!(err.to_string().contains("no [section]"), "{err}");
    let err = parse_file("[j]\ninclude\t\n", &main, GIB).unwrap_err();
    assert!(err.to_string().contains("needs a file name"), "{err}");
    let jobs = parse_file(
        "[global]\ninclude\tcommon.fio\n[j]\nrw=read\nsize=1m\n",
        &main,
        GIB,
    );
    assert_eq!(synthetic(&jobs.unwrap().jobs[0]).block_max, 8192);
    let err = parse_file("[j]\nrw=read\ninclude none.fio\n", &main, GIB).unwrap_err();
    assert!(err.to_string().starts_with(&format!("{main}:3:")), "{err}");
}

mod controls;
mod iolog;

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
    assert!(!noted(
        "rw=randwrite\nbs=4k,1000\nrandom_distribution=zipf:1.2"
    ));
}

/// The sizes `text`'s first job issues, by direction (read, write), each
/// with how many requests had it (give `number_ios`: a byte limit cuts the
/// last request to the bytes left).
fn sizes_by_direction(text: &str) -> [std::collections::BTreeMap<u64, usize>; 2] {
    use iosteer_sched::Op;
    let jobs = jobs_of(text);
    let out = crate::workload::Generator::new(jobs[0].clone(), 0, 1).requests_unloaded();
    [Op::Read, Op::Write].map(|op| {
        let mut sizes = std::collections::BTreeMap::new();
        for r in out.iter().filter(|r| r.op == op) {
            *sizes.entry(r.len.0).or_insert(0) += 1;
        }
        sizes
    })
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

#[test]
fn sizes_may_be_hexadecimal_as_in_fio() {
    // fio: "The optional integer prefix specifies the number's base ... 0x
    // specifies hexadecimal".
    let s = |text: &str| synthetic(&jobs_of(text)[0]).clone();
    let j = s("[j]\nrw=read\nbs=0x1000\nsize=0X100000\noffset=0x10000\n");
    assert_eq!((j.block_min, j.size, j.offset), (4096, MIB, 65536));
    assert_eq!(size_value("0x1b"), Some(27));
    // A suffix after hexadecimal digits is refused, not guessed at.
    for bad in ["0x10k", "0x", "0xg"] {
        assert_eq!(size_value(bad), None, "{bad}");
    }
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

#[test]
fn max_latency_is_per_direction_in_microseconds_and_off_without_latencies() {
    let limits = |options: &str| {
        let file = file_of(&format!("[j]\nrw=randrw\n{options}\n"));
        (file.jobs[0].shape.max_latency, file.notes)
    };
    let us = |n| Some(Nanos::from_micros(n));
    assert_eq!(limits("max_latency=300").0, [us(300); 3]);
    assert_eq!(
        limits("max_latency=10s,1ns").0,
        [us(10_000_000), Some(Nanos(1)), Some(Nanos(1))]
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

/// The offsets, in KiB, of the requests of a job of 4 KiB reads of a
/// 64 KiB file (sequential unless `zones` gives another `rw`) with strided
/// zones `zones`.
fn zone_offsets_kib(zones: &str) -> Vec<u64> {
    let text = format!("[z]\nrw=read\nbs=4k\nsize=64k\nzonemode=strided\n{zones}\n");
    let job = jobs_of(&text).remove(0);
    let requests = crate::workload::Generator::new(job, 0, 1).requests_unloaded();
    requests.iter().map(|r| r.offset.0 / 1024).collect()
}

/// fio 3.33's strided zones, request by request (`--write_iolog` of psync
/// on a 64 KiB file, offsets in KiB): a zone until `zonesize` bytes moved,
/// then on by `zonerange + zoneskip`, back to the start past the end; a
/// zone smaller than `zonesize` is gone round again; a request crosses a
/// zone's end when the zone is not a multiple of the block (it goes back
/// to the zone's start only once past it); on a new file fio makes it
/// offset + size long, and the zones wrap there; random offsets stay in
/// the zone.
#[test]
fn strided_zones_move_as_fios() {
    let cases: [(&str, &[u64]); 7] = [
        (
            "zonesize=8k\nzoneskip=8k",
            &[0, 4, 16, 20, 32, 36, 48, 52, 0, 4, 16, 20, 32, 36, 48, 52],
        ),
        (
            "zonesize=16k\nzonerange=8k\nzoneskip=8k",
            &[0, 4, 0, 4, 16, 20, 16, 20, 32, 36, 32, 36, 48, 52, 48, 52],
        ),
        (
            "zonesize=8k\nzoneskip=16k\nio_size=40k",
            &[0, 4, 24, 28, 48, 52, 0, 4, 24, 28],
        ),
        (
            "zonesize=12k\nzonerange=24k",
            &[0, 4, 8, 24, 28, 32, 48, 52, 56, 0, 4, 8, 24, 28, 32, 48],
        ),
        (
            "zonesize=8k\nzoneskip=8k\noffset=16k\nsize=32k",
            &[16, 20, 32, 36, 16, 20, 32, 36],
        ),
        (
            "zonesize=6k",
            &[0, 4, 6, 10, 12, 16, 18, 22, 24, 28, 30, 34, 36, 40, 42, 46],
        ),
        (
            "zonesize=12k\nzonerange=6k",
            &[0, 4, 0, 6, 10, 6, 12, 16, 12, 18, 22, 18, 24, 28, 24, 30],
        ),
    ];
    for (zones, fio) in cases {
        assert_eq!(zone_offsets_kib(zones), fio, "{zones}");
    }
    // fio: 0 8 28 20 36 44 52 56 12 0 28 24 44 32 52 56 (its own draws).
    let random = zone_offsets_kib("rw=randread\nzonesize=8k\nzonerange=16k");
    assert_eq!(random.len(), 16);
    for (i, kib) in random.iter().enumerate() {
        let zone = (i / 2) % 4;
        assert!(
            (zone as u64 * 16..zone as u64 * 16 + 16).contains(kib),
            "{i}: {random:?}"
        );
    }
}

#[test]
fn zone_options_are_checked_as_fio_checks_them() {
    let refused = |text: &str, says: &str| assert_refused(text, "z.fio", &[says]);
    refused("[z]\nrw=read\nzonemode=strided\n", "needs a zonesize");
    refused(
        "[z]\nrw=read\nzonemode=none\nzonesize=1m\n",
        "not compatible",
    );
    refused(
        "[z]\nrw=read\nzonemode=zbd\nzonesize=1m\n",
        "zoned drives are not modelled",
    );
    // fio 3.33 issues no read of a random job whose zone holds no block.
    refused(
        "[z]\nrw=randread\nbs=4k\nzonemode=strided\nzonesize=2k\n",
        "holds no block of 4096 bytes",
    );
    let file = file_of;
    let alone = file("[z]\nrw=read\nsize=64m\nzonesize=1m\nzoneskip=1m\n");
    assert!(alone.jobs[0].shape.zones.is_some());
    assert_noted(&alone, "later fio releases");
    let many = file("[z]\nrw=read\nsize=64m\nnrfiles=2\nzonemode=strided\nzonesize=1m\n");
    assert!(many.jobs[0].shape.zones.is_none());
    assert_noted(&many, "one file");
    // A random job's last zone, cut by the file's end, is said to differ.
    let cut = file("[z]\nrw=randread\nsize=64k\nbs=4k\nzonemode=strided\nzonesize=24k\n");
    assert_noted(&cut, "zone at 49152 runs past");
    let seq =
        file("[z]\nrw=read\nsize=64k\nbs=4k\nzonemode=strided\nzonesize=12k\nzonerange=24k\n");
    assert!(seq.notes.is_empty(), "{:?}", seq.notes);
}

/// A zone stride past the end of the address space (zonerange plus
/// zoneskip over 2^64) is past the file's end: the job stays in its first
/// zone, as fio's does, where it overflowed.
#[test]
fn a_zone_stride_past_the_address_space_goes_back_to_the_start() {
    let skip = "zonesize=8k\nzonerange=0xF000000000000000\nzoneskip=0xF000000000000000";
    assert_eq!(zone_offsets_kib(skip), [0, 4].repeat(8));
    // The check of the last zone against the file's end adds them too.
    let random = "[z]\nrw=randread\nsize=64k\nzonemode=strided\n";
    assert!(file_of(&format!("{random}{skip}\n")).jobs[0]
        .shape
        .zones
        .is_some());
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

/// fio's other names for options are read as the options (fio 3.33 takes
/// `mem=malloc` as `iomem`, `nr_files=2` as `nrfiles`).
#[test]
fn fios_aliases_are_its_options() {
    let aliased = file_of(
        "[j]\nreadwrite=randread\nblocksize=8k\nmem=malloc\nmem_align=4k\nnr_files=2\nsize=1m\n",
    );
    let plain =
        file_of("[j]\nrw=randread\nbs=8k\niomem=malloc\niomem_align=4k\nnrfiles=2\nsize=1m\n");
    assert_eq!(aliased.jobs, plain.jobs);
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
}

/// fio keeps a space after `=`: `bs = 16k` is 16 bytes to fio 3.33 (4096
/// reads of 64 KiB), `rw = randread` drops the job; a plain number reads
/// the same (`numjobs = 2`: two jobs). iosteer read the value trimmed, as
/// the writer meant and fio did not.
#[test]
fn a_space_after_the_equals_sign_is_refused_unless_the_value_is_a_plain_number() {
    assert_refused(
        "[j]\nsize=64k\nbs = 16k\n",
        ":3:",
        &["no space after `=`", "`bs=16k`"],
    );
    assert_refused("[j]\nrw = randread\n", ":2:", &["no space after `=`"]);
    let plain = file_of("[j]\nsize=64k\nbs =16k\nnumjobs = 2\niodepth = 4\n");
    assert_eq!(plain.jobs.len(), 2);
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
