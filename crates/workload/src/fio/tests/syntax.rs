//! How a job file's values are read: units, suffixes, commas, includes, aliases and the limits fio sets.

use super::*;

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
fn time_units_fio_does_not_know_are_refused_as_it_misreads_them() {
    // fio 3.33 read `runtime=1sec` and `1min` as 1 us (0 reads), and
    // `1000000ns` as one second; iosteer ran them as written.
    for option in [
        "runtime=1sec",
        "runtime=1min",
        "runtime=1000000ns",
        "thinktime=2nsec",
    ] {
        assert_refused(
            &format!("[j]\n{option}\n"),
            "t.fio:2:",
            &[
                option,
                "reads a number with any other",
                "write s, m, ms or us",
            ],
        );
    }
    let jobs = jobs_of("[j]\nruntime=2m\nthinktime=5usec\nstartdelay=1S\n");
    assert_eq!(jobs[0].start, Nanos::from_secs(1));
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
fn an_escaped_colon_stays_inside_a_file_name() {
    let jobs = jobs_of("[a]\nrw=read\nsize=1m\nfilename=/dev/x/0\\:1\\:2:plain\n");
    assert_eq!(jobs[0].shape.files.names, ["/dev/x/0:1:2", "plain"]);
    assert_eq!(jobs[0].shape.files.nrfiles, 2);
    let jobs = jobs_of("[a]\nrw=read\nsize=1m\nfilename=one\\:dev\n");
    assert_eq!(jobs[0].shape.files.names, ["one:dev"]);
    assert_eq!(jobs[0].shape.files.nrfiles, 1);
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
    // Two letters swapped, as typed in a published job file.
    assert_refused(
        "[a]\ndirecotry=/tmp\n",
        "v.fio:2:",
        &["did you mean `directory`?"],
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
fn per_direction_values_follow_fios_commas() {
    // A blank leaves the direction as it was (fio's default, 4k, here); the
    // last value stands for the directions after it unless the list ends in
    // a comma.
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
    // bssplit's lists alike.
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
    // A blank keeps the value in force, from [global] or a line before, as
    // fio 3.33 does: `rate_iops=,20` after `rate_iops=100,50` read at 100 a
    // second there (uncapped here), `bs=,16k` after `bs=8k,64k` read 8k.
    let inherited = |global: &str, own: &str| {
        let text = format!("[global]\nrw=randrw\nsize=64m\n{global}\n[j]\n{own}\n");
        jobs_of(&text)[0].clone()
    };
    let largest = |global: &str, own: &str| {
        let blocks = inherited(global, own).shape.blocks.unwrap();
        blocks.map(|b| b.largest())
    };
    assert_eq!(largest("bs=8k,64k", "bs=,16k"), [8192, 16384, 16384]);
    assert_eq!(largest("bs=8k,64k", "bs=16k,"), [16384, 65536, 65536]);
    assert_eq!(
        largest("bssplit=16k/100,64k/100", "bssplit=,4k/100"),
        [16384, 4096, 4096]
    );
    // A blank beside a plain bsrange keeps the range (found by a review).
    assert_eq!(largest("bsrange=4k-16k", "bs=,8k"), [16384, 8192, 8192]);
    let rates = inherited("rate_iops=100,50", "rate_iops=,20")
        .shape
        .direction_rates;
    assert_eq!(rates, Some([Some(100.0 * 4096.0), Some(20.0 * 4096.0)]));
    let rates = inherited("rate=1m,2m", "rate=0,").shape.direction_rates;
    assert_eq!(rates, Some([None, Some(2.0 * 1048576.0)]));
    for bad in [
        "bs=,",
        "bs=4k,4k,4k,4k",
        "rate=1m,x",
        "bssplit=4k/50:8k/60,",
        "bssplit=4k,8k,16k,32k",
    ] {
        assert_refused(&format!("[j]\nrw=randrw\n{bad}\n"), "t.fio:3", &[bad]);
    }
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

/// fio 3.33 refuses `key=` with nothing after it, for every kind of
/// option (`direct=`, `time_based=`, `bs=`); iosteer took an empty boolean
/// as on.
#[test]
fn an_empty_value_is_refused_as_fio_refuses_it() {
    for option in ["direct=", "time_based=", "bs=", "norandommap= "] {
        let text = format!("[j]\nsize=64k\n{option}\n");
        assert_refused(&text, ":3:", &["an empty value", option.trim_end()]);
    }
    // Those fio takes empty (found by a review): `bssplit=` keeps `bs`.
    let taken =
        file_of("[j]\nsize=64k\nbs=8k\nbssplit=\nwrite_bw_log=\nignore_error=\nreplay_skip=\n");
    let s = synthetic(&taken.jobs[0]);
    assert_eq!((s.block_min, s.block_max), (8192, 8192));
}

#[test]
fn randtrimwrite_is_said_to_be_not_modelled() {
    assert_refused(
        "[j]\nrw=randtrimwrite\n",
        "t.fio:2:",
        &["randtrimwrite", "not modelled", "trimwrite"],
    );
}

#[test]
fn name_names_the_job_as_in_fio() {
    // fio 3.33 runs `[a] name=zz` as job zz, and `wait_for=zz` waits for it
    // (refused here as "no earlier job of that name").
    let jobs = jobs_of("[a]\nname=zz\nrw=read\nsize=64k\n[b]\nwait_for=zz\nrw=read\nsize=64k\n");
    assert_eq!(jobs[0].name, "zz");
    assert_eq!(jobs[1].shape.after, [0]);
    // In [global] it names no job: fio 3.33 keeps the sections' names and
    // refuses `wait_for` by the global name (a review found seven files
    // whose every job took the global name).
    let jobs = jobs_of("[global]\nname=base\nrw=read\nsize=64k\n[a]\n[b]\nwait_for=a\n");
    assert_eq!((jobs[0].name.as_str(), jobs[1].name.as_str()), ("a", "b"));
    assert_eq!(jobs[1].shape.after, [0]);
    let err = parse(
        "[global]\nname=base\nrw=read\nsize=64k\n[a]\n[b]\nwait_for=base\n",
        "t.fio",
        1 << 30,
    );
    assert!(err.is_err());
}

/// A job past the simulator's clock (2^62 ns) ran 2,074 s of a 3,600 s
/// runtime under fifo and never ended under steer (found by a review).
#[test]
fn a_job_past_the_clock_is_refused() {
    assert_refused(
        "[a]\nrw=read\nstartdelay=5124095h\nruntime=1h\ntime_based\n",
        "t.fio:5",
        &[
            "past the latest time the simulator can represent",
            "2^62 ns",
        ],
    );
    assert!(parse(
        "[a]\nrw=read\nstartdelay=100000h\nruntime=1h\n",
        "t.fio",
        1 << 30
    )
    .is_ok());
}
