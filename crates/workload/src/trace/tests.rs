use super::*;

/// An ascii trace in nanoseconds, replayed at its own speed.
fn ascii(text: &str, file: &str, devices: Devices) -> Result<Vec<TraceRecord>, TraceError> {
    parse(text, file, TraceFormat::Ascii, TimeUnit::Ns, 1.0, devices).map(|t| t.records)
}

/// A trace of `format` in nanoseconds at its own speed, devices merged.
fn parse_as(text: &str, file: &str, format: TraceFormat) -> Result<Trace, TraceError> {
    parse(text, file, format, TimeUnit::Ns, 1.0, Devices::Merge)
}

/// Each text fails to parse as its format with an error that starts as
/// given (the file is `t`).
fn assert_refused(cases: &[(TraceFormat, &str, &str)]) {
    for (format, text, expected) in cases {
        let err = parse_as(text, "t", *format).unwrap_err().to_string();
        assert!(err.starts_with(expected), "{format}: {err}");
    }
}

fn spc(text: &str, devices: Devices) -> Result<Vec<TraceRecord>, TraceError> {
    parse(text, "f.spc", TraceFormat::Spc, TimeUnit::S, 1.0, devices).map(|t| t.records)
}

#[test]
fn ascii_lines_become_requests_in_sectors() {
    let text = "0 0 303567 7 0\n26214000 1 240840 6 1\n";
    let r = ascii(text, "t.ascii", Devices::Merge).unwrap();
    assert_eq!(
        r[0],
        TraceRecord {
            at: Nanos(0),
            op: Op::Write,
            offset: 303567 * 512,
            len: 7 * 512,
            fua: false,
        }
    );
    assert_eq!((r[1].at, r[1].op), (Nanos(26_214_000), Op::Read));
    let fast = parse(
        text,
        "t.ascii",
        TraceFormat::Ascii,
        TimeUnit::Ms,
        2.0,
        Devices::Merge,
    )
    .unwrap()
    .records;
    assert_eq!(fast[1].at, Nanos(13_107_000_000_000));
}

#[test]
fn spc_and_msr_samples_parse() {
    let text = "0,303567,3584,w,0.000000\n1,55590,3072,R,0.026214\n";
    let r = spc(text, Devices::Merge).unwrap();
    assert_eq!((r[0].op, r[0].len, r[1].op), (Op::Write, 3584, Op::Read));
    assert_eq!(r[1].at, Nanos(26_214_000));
    let msr = "128166372003061629,hm,0,Read,3325952,4096,1000\n128166372003071629,hm,0,Write,0,8192,500\n";
    let r = parse_as(msr, "m.csv", TraceFormat::Msr).unwrap().records;
    assert_eq!(
        (r[0].offset, r[1].at, r[1].op),
        (3_325_952, Nanos(1_000_000), Op::Write)
    );
}

const HEADER_NOTE: &str =
    "1 header lines skipped (the file's first line names the columns: not a request)";

#[test]
fn a_first_line_naming_the_columns_is_skipped_and_noted_in_msr_spc_and_ascii() {
    let cases = [
        (
            TraceFormat::Msr,
            "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\r\n",
            "128166372003061629,hm,0,Read,3325952,4096,1000\n\
             128166372003071629,hm,0,Write,0,8192,500\n",
        ),
        (
            TraceFormat::Msr,
            "\"Timestamp\",\"Hostname\",\"DiskNumber\",\"Type\",\"Offset\",\"Size\"\n",
            "128166372003061629,hm,0,Read,3325952,4096\n",
        ),
        (
            TraceFormat::Spc,
            "ASU,LBA,Size,Opcode,Timestamp\n",
            "0,303567,3584,w,0.000000\n1,55590,3072,R,0.026214\n",
        ),
        (
            TraceFormat::Ascii,
            "\u{feff}\n# DiskSim\narrival_time\tdevice lba size type\n",
            "0 0 303567 7 0\n26214000 1 240840 6 1\n",
        ),
        (
            TraceFormat::Ascii,
            "Time Device Block Size Flags\n",
            "0 0 303567 7 0\n",
        ),
    ];
    for (format, header, body) in cases {
        let plain = parse_as(body, "t", format).unwrap();
        let headed = parse_as(&format!("{header}{body}"), "t", format).unwrap();
        assert_eq!(headed.records, plain.records, "{format}: {header}");
        let mut notes = plain.notes.clone();
        notes.insert(0, HEADER_NOTE.to_string());
        notes.sort();
        let mut got = headed.notes.clone();
        got.sort();
        assert_eq!(got, notes, "{format}: {header}");
    }
    // Only the first line, and only when every column that must be a number
    // holds a name: anything else is an error naming file, line and field.
    assert_refused(&[
        (
            TraceFormat::Msr,
            "128166372003061629,hm,0,Read,3325952,4096,1000\n\
             Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n",
            "t:2: field 1 (timestamp) `Timestamp`: expected a time",
        ),
        (
            TraceFormat::Msr,
            "Timestamp,Hostname,DiskNumber,Type,3325952,Size,ResponseTime\n",
            "t:1: field 1 (timestamp) `Timestamp`",
        ),
        (
            TraceFormat::Msr,
            "1281663720030616x9,hm,0,Read,3325952,4096,1000\n",
            "t:1: field 1 (timestamp) `1281663720030616x9`",
        ),
        (
            TraceFormat::Spc,
            "ASU,LBA,Size,Opcode\n0,303567,3584,w,0.000000\n",
            "t:1: expected 5 fields, found 4",
        ),
        (
            TraceFormat::Spc,
            "0,303567,3584,w,0.0\n\n1,x,3072,R,0.1\n",
            "t:3: field 2 (LBA) `x`: expected a sector number",
        ),
        (
            TraceFormat::Ascii,
            "time device lba size inf\n0 0 303567 7 0\n",
            "t:1: field 1 (arrival time) `time`",
        ),
        (
            TraceFormat::Ascii,
            "0 0 303567 7 0\ntime device lba size type\n",
            "t:2: field 1 (arrival time) `time`",
        ),
    ]);
}

#[test]
fn alibaba_and_tencent_samples_parse_with_or_without_their_header() {
    // Alibaba: bytes, microseconds since the epoch, R or W.
    let alibaba = "device_id,opcode,offset,length,timestamp\n\
                   3,W,126703644672,4096,1577808000000626\n\
                   0,R,8192,16384,1577808000001626\n";
    let t = parse_as(alibaba, "io_traces.csv", TraceFormat::Alibaba).unwrap();
    let r = &t.records;
    assert_eq!(r.len(), 2);
    assert_eq!(
        (r[0].op, r[0].offset, r[0].len),
        (Op::Write, 126_703_644_672, 4096)
    );
    assert_eq!(
        (r[1].op, r[1].at, r[1].len),
        (Op::Read, Nanos(1_000_000), 16_384)
    );
    assert_eq!(t.notes, [HEADER_NOTE]);
    // Tencent: sectors, whole seconds, 0 read and 1 write; the whole-second
    // arrivals are said.
    let tencent = "1538323200,1024,8,0,1063\n1538323200,2048,16,1,1063\n1538323201,0,8,1,7\n";
    let t = parse_as(tencent, "2018-10-01-01.csv", TraceFormat::Tencent).unwrap();
    let r = &t.records;
    assert_eq!((r[0].op, r[0].offset, r[0].len), (Op::Read, 524_288, 4096));
    assert_eq!(
        (r[1].op, r[1].at, r[2].at),
        (Op::Write, Nanos(0), Nanos(1_000_000_000))
    );
    assert_eq!(
        t.notes,
        ["3 requests arrive at the start of their second, in file order (tencent timestamps are whole seconds)"]
    );
    // A zero-length record is skipped and counted as such, not as an arrival.
    let empty = parse_as(
        &format!("{tencent}1538323201,0,0,1,7\n"),
        "t",
        TraceFormat::Tencent,
    )
    .unwrap();
    assert!(
        empty
            .notes
            .iter()
            .any(|n| n.starts_with("3 requests arrive")),
        "{:?}",
        empty.notes
    );
    let with_header =
        format!("\u{feff}\n# hour 1\nTimestamp,Offset,Size,IOType,VolumeID\r\n{tencent}");
    let headed = parse_as(&with_header, "t", TraceFormat::Tencent).unwrap();
    assert_eq!(headed.records, t.records);
    // Lines that end with a carriage return alone (classic Mac files) are
    // lines, not one line.
    let mac = with_header.replace("\r\n", "\n").replace('\n', "\r");
    let mac = parse_as(&mac, "t", TraceFormat::Tencent).unwrap();
    assert_eq!(mac.records, t.records);
    // Errors name the field and what it takes; a header past line 1 is
    // not skipped.
    assert_refused(&[
        (
            TraceFormat::Alibaba,
            "0,X,0,4096,1\n",
            "t:1: field 2 (opcode) `X`: expected R or W",
        ),
        (
            TraceFormat::Tencent,
            "1,0,8,2,0\n",
            "t:1: field 4 (IOType) `2`: expected 0 (read) or 1 (write)",
        ),
        (
            TraceFormat::Tencent,
            "1,0,8,0,0\nTimestamp,Offset,Size,IOType,VolumeID\n",
            "t:2: field 1 (timestamp)",
        ),
    ]);
}

#[test]
fn fiu_lines_parse_from_both_ends_around_the_process_name() {
    let fiu = "89968195792462 20782 gzip 283193184 8 R 6 0 56f11b711d91a065a2b6458eca924523\n\
               89968195892462 1432 kworker/u8:2 fs 100 16 W 6 1 0123456789abcdef\n";
    let t = parse_as(fiu, "homes.blkparse", TraceFormat::Fiu).unwrap();
    let r = &t.records;
    assert_eq!(
        (r[0].op, r[0].offset, r[0].len, r[1].at),
        (Op::Read, 283_193_184 * 512, 4096, Nanos(100_000))
    );
    // The process name `kworker/u8:2 fs` holds a space; devices 6,0 and
    // 6,1 stay apart when laid apart.
    assert_eq!((r[1].op, r[1].offset, r[1].len), (Op::Write, 51_200, 8192));
    let apart = parse(
        fiu,
        "f",
        TraceFormat::Fiu,
        TimeUnit::Ns,
        1.0,
        Devices::Separate,
    )
    .unwrap();
    assert_ne!(apart.records[1].offset, 51_200);
    for (text, expected) in [
        (
            "1 2 p 0 8 X 6 0 d\n",
            "f:1: field type `X`: expected R or W",
        ),
        ("1 2 p 0 8 R 6000 0 d\n", "f:1: field major,minor `6000,0`"),
        ("1 2 p 0 8 R 6 0\n", "f:1: expected 9 fields, found 8"),
        (
            "1 x p 0 8 R 6 0 d\n",
            "f:1: field 2 (pid) `x`: expected a process id",
        ),
    ] {
        let err = parse_as(text, "f", TraceFormat::Fiu)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(expected), "{err}");
    }
}

#[test]
fn separate_devices_get_ranges_of_their_own_in_device_order() {
    // Devices in numeric order 0, 2, 10: device 0 ends at 1 MiB; device
    // 2 starts there and ends 3 MiB and 4 KiB later, rounded up to 4 MiB;
    // device 10 starts at 5 MiB.
    let text = "0 10 0 8 0\n1 2 6144 8 0\n2 0 2040 8 1\n3 2 0 8 1\n";
    let merged = ascii(text, "d.ascii", Devices::Merge).unwrap();
    let offsets = |r: &[TraceRecord]| r.iter().map(|x| x.offset).collect::<Vec<_>>();
    assert_eq!(offsets(&merged), [0, 6144 * 512, 2040 * 512, 0]);
    let apart = ascii(text, "d.ascii", Devices::Separate).unwrap();
    let mib = 1 << 20;
    assert_eq!(
        offsets(&apart),
        [mib + 4 * mib, mib + 6144 * 512, 2040 * 512, mib]
    );
    let r = spc("1,0,4096,w,0.0\n0,0,4096,w,0.1\n", Devices::Separate).unwrap();
    assert_eq!(offsets(&r), [mib, 0]);
    assert_eq!(Devices::parse("separate"), Some(Devices::Separate));
    assert_eq!(Devices::parse("apart"), None);
}

#[test]
fn errors_name_the_file_line_and_field() {
    let err = ascii("0 0 1 8 0\n5 0 x 8 1\n", "a.ascii", Devices::Merge).unwrap_err();
    assert_eq!(
        err.to_string(),
        "a.ascii:2: field 3 (lba) `x`: expected a sector number"
    );
    let err = ascii("0 0 1 8 2\n", "a.ascii", Devices::Merge).unwrap_err();
    assert!(err.to_string().contains("1 (read) or 0 (write)"));
    let err = ascii("0 0 1\n", "a.ascii", Devices::Merge).unwrap_err();
    assert!(err
        .to_string()
        .contains("a.ascii:1: expected 5 fields, found 3"));
    let err = ascii("# nothing\n", "e.ascii", Devices::Merge).unwrap_err();
    assert!(err.to_string().contains("holds no request"));
}

#[test]
fn sectors_whose_bytes_pass_2_to_the_64_are_refused_not_saturated() {
    let expected = "below 2^55 (512-byte sectors: 2^64 bytes)";
    let lba = ascii("0 0 36028797018963968 8 1\n", "a", Devices::Merge).unwrap_err();
    assert_eq!(
        lba.to_string(),
        format!("a:1: field 3 (lba) `36028797018963968`: expected a sector number {expected}")
    );
    let size = ascii("0 0 0 18446744073709551615 1\n", "a", Devices::Merge).unwrap_err();
    assert!(size.to_string().contains("field 4 (size)"), "{size}");
    let spc = spc("0,36028797018963968,4096,r,0\n", Devices::Merge).unwrap_err();
    assert!(spc.to_string().contains("field 2 (LBA)"), "{spc}");
    // The last whole sector parses; a request from it ends past 2^64.
    let end = ascii("0 0 36028797018963967 8 1\n", "a", Devices::Merge).unwrap_err();
    assert_eq!(
        end.to_string(),
        "a:1: 4096 bytes at byte 18446744073709551104 end past 2^64 bytes"
    );
    let msr = "128166372003061629,hm,0,Read,18446744073709551615,1,0\n";
    let err = parse_as(msr, "m", TraceFormat::Msr).unwrap_err();
    assert!(matches!(err, TraceError::PastEnd { .. }), "{err}");
}

#[test]
fn a_trace_too_large_says_how_large_a_drive_it_needs_or_is_remapped() {
    let mut r = ascii(
        "0 0 2000000000 16 1\n1 0 10 16 0\n",
        "big.ascii",
        Devices::Merge,
    )
    .unwrap();
    let err = fit(&mut r.clone(), 1 << 30, 4096, Fit::Refuse, "big.ascii")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("953.7 GiB") && err.contains("remap the addresses"),
        "{err}"
    );
    for how in [Fit::Wrap, Fit::Scale] {
        let mut moved = r.clone();
        assert!(fit(&mut moved, 1 << 30, 4096, how, "big.ascii").unwrap());
        assert!(moved
            .iter()
            .all(|x| x.offset + x.len <= 1 << 30 && x.offset % 512 == 0));
    }
    assert!(!fit(&mut r[1..], 1 << 30, 4096, Fit::Refuse, "x").unwrap());
}

const FINANCIAL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../traces/financial1-excerpt.ascii"
);

fn options(unit: TimeUnit, speed: f64) -> Options {
    Options {
        unit,
        speed,
        ..Options::default()
    }
}

#[test]
fn arrivals_past_the_simulator_clock_are_errors_naming_file_line_and_limit() {
    // Nanoseconds read as seconds: 260 s becomes 8,000 years. Line 110
    // is the first request past 2^62 ns (4.6e9 s); the simulator used
    // to replay the 742 requests before 2^64 ns and drop the rest.
    let err = read_path(FINANCIAL, TraceFormat::Ascii, &options(TimeUnit::S, 1.0))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("financial1-excerpt.ascii:110: arrives 4.7317e9 s"),
        "{err}"
    );
    assert!(err.contains("4.6117e9 s (2^62 ns)"), "{err}");
    let slow = parse(
        "0 0 1 8 0\n1000 0 1 8 0\n",
        "s.ascii",
        TraceFormat::Ascii,
        TimeUnit::Ns,
        1e-300,
        Devices::Merge,
    )
    .unwrap_err();
    assert!(
        matches!(
            slow,
            TraceError::TooLate {
                place: Place::Line(2),
                ..
            }
        ),
        "{slow}"
    );
    let far = ascii("0 0 1 8 0\n1e23 0 1 8 0\n", "f.ascii", Devices::Merge).unwrap_err();
    assert!(
        far.to_string()
            .starts_with("f.ascii:2: arrives 1.0000e14 s"),
        "{far}"
    );
    // Up to the limit, exact.
    let edge = format!("0 0 1 8 0\n{} 0 1 8 0\n", MAX_ARRIVAL.0);
    assert_eq!(
        ascii(&edge, "e", Devices::Merge).unwrap()[1].at,
        MAX_ARRIVAL
    );
}

#[test]
fn nan_infinite_and_negative_times_and_speeds_are_refused() {
    for time in ["NaN", "inf", "-1", "-0.5", "1e400", "1e39"] {
        let err = ascii(&format!("0 0 1 8 0\n{time} 0 1 8 0\n"), "t", Devices::Merge)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("t:2: field 1 (arrival time)"),
            "{time}: {err}"
        );
    }
    for speed in [f64::NAN, f64::INFINITY, -1.0, 0.0] {
        let err = parse(
            "0 0 1 8 0\n",
            "t",
            TraceFormat::Ascii,
            TimeUnit::Ns,
            speed,
            Devices::Merge,
        )
        .unwrap_err();
        assert!(matches!(err, TraceError::Speed { .. }), "{speed}: {err}");
    }
}

#[test]
fn extra_columns_zero_lengths_and_unsorted_arrivals_are_counted_in_notes() {
    let text = "5 0 1 8 0 9 9\n3 0 1 0 1\n1 0 1 8 1\n2 0 1 8 0\n";
    let t = parse_as(text, "n.ascii", TraceFormat::Ascii).unwrap();
    assert_eq!(
        t.records.iter().map(|r| r.at.0).collect::<Vec<_>>(),
        [0, 1, 4]
    );
    assert_eq!(
        t.notes,
        [
            "1 arrivals earlier than the one before them in their file (sorted by time)",
            "1 lines with more fields than the format has (the extra fields ignored)",
            "1 requests of zero length skipped (a flush is kept)",
        ]
    );
    let msr = "128166372003061629,hm,0,Read,0,4096,1000,extra\n";
    let t = parse_as(msr, "m", TraceFormat::Msr).unwrap();
    assert_eq!(t.notes.len(), 1);
    let clean = parse_as("0 0 1 8 0\n1 0 1 8 1\n", "c", TraceFormat::Ascii);
    assert!(clean.unwrap().notes.is_empty());
}

/// DiskSim's own ascii traces count milliseconds (`13.191135`): read in
/// the default nanoseconds they ran a million times too fast, the
/// fractions rounded away without a word (found by a review).
#[test]
fn ascii_times_finer_than_a_nanosecond_are_noted() {
    let text = "13.191135 0 1 8 1\n20.5 0 9 8 0\n21.000 0 9 8 0\n";
    let t = parse_as(text, "d.trace", TraceFormat::Ascii).unwrap();
    assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
    assert!(t.notes[0].starts_with("2 arrival times with a fraction of a nanosecond"));
    let ms = parse(
        text,
        "d.trace",
        TraceFormat::Ascii,
        TimeUnit::Ms,
        1.0,
        Devices::Merge,
    );
    assert!(ms.unwrap().notes.is_empty());
}

#[test]
fn wrapping_counts_the_requests_it_moves_and_cuts() {
    let two_tib = 2u64 << 40;
    let mut r = ascii(
        &format!("0 0 0 {} 0\n1 0 8 8 1\n2 0 4194304 8 1\n", two_tib / 512),
        "w.ascii",
        Devices::Merge,
    )
    .unwrap();
    let remap = fit_counted(&mut r, 1 << 30, 4096, Fit::Wrap, "w")
        .unwrap()
        .unwrap();
    assert_eq!((remap.moved, remap.cut, remap.requests), (1, 1, 3));
    assert_eq!(r[0].len, 1 << 30);
    assert_eq!(
        remap.to_string(),
        "1 of 3 requests moved by wrap, 1 longer than the drive cut to its size"
    );
    // The request past the end went to its offset modulo the drive.
    assert_eq!(r[2].offset, (4_194_304 * 512) % (1 << 30));
}

/// Near the top of the address space a wrapped request's end is not
/// added past 2^64 (the fit checked `offset + len` after wrapping, which
/// overflowed on a drive of 2^64 - 2 bytes).
#[test]
fn wrapping_at_the_top_of_the_address_space_does_not_overflow() {
    let capacity = u64::MAX - 1;
    let mut r = vec![TraceRecord {
        at: Nanos::ZERO,
        op: Op::Write,
        offset: u64::MAX - 7679,
        len: 8192,
        fua: false,
    }];
    fit_counted(&mut r, capacity, 4096, Fit::Wrap, "t").unwrap();
    assert!(
        r[0].offset
            .checked_add(r[0].len)
            .is_some_and(|end| end <= capacity),
        "{:?}",
        r[0]
    );
}

/// Wrapping sends an address past the end to one place whatever the
/// request's length, aligned as it was, and leaves a request that fits
/// where it is (a 4 KiB and an 8 KiB write to one address landed 4 KiB
/// apart, at 3584 and 7680 on a 1 MiB drive; a 1-byte read at the last
/// byte was moved).
#[test]
fn wrapping_keeps_an_address_in_one_place_and_leaves_what_fits() {
    let mut r = ascii(
        "0 0 2048 8 0\n1 0 2048 16 0\n2 0 2047 1 1\n",
        "w.ascii",
        Devices::Merge,
    )
    .unwrap();
    let remap = fit_counted(&mut r, 1 << 20, 4096, Fit::Wrap, "w")
        .unwrap()
        .unwrap();
    assert_eq!((r[0].offset, r[1].offset), (0, 0));
    assert_eq!(r[2].offset, (1 << 20) - 512);
    assert_eq!(remap.moved, 2);
}

#[test]
fn a_line_of_another_format_names_the_format_expected_and_the_ones_it_looks_like() {
    let text = std::fs::read_to_string(FINANCIAL).unwrap();
    let err = parse_as(&text, "fin", TraceFormat::Spc)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "fin:1: expected 5 fields, found 1: a line of spc is `ASU,LBA,size,opcode,timestamp`; \
         it looks like a line of ascii"
    );
    // A first line naming a format's columns, in a trace read as another.
    let msr = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\r\n\
               128166372003061629,hm,0,Read,3325952,4096,1000\n";
    let err = parse_as(msr, "m.csv", TraceFormat::Ascii).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("m.csv:1: expected 5 fields, found 1")
            && err.to_string().ends_with("it looks like a line of msr"),
        "{err}"
    );
    let blk = "  8,0    3        1     0.000000000   697  Q  WS 223490 + 8 [kjournald]\n";
    let err = parse_as(blk, "b", TraceFormat::Msr).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("it looks like a line of blkparse"),
        "{err}"
    );
    let err = parse(
        "a,b\n",
        "x",
        TraceFormat::Ascii,
        TimeUnit::Ns,
        1.0,
        Devices::Merge,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .ends_with("it fits none of the text formats (ascii, spc, msr, alibaba, tencent, fiu, systor, blkparse, ftrace)"),
        "{err}"
    );
}

#[test]
fn endless_or_binary_input_is_refused_after_a_bounded_read() {
    let endless = BufReader::new(std::io::repeat(b'0'));
    let err = read(endless, "zeros", TraceFormat::Ascii, &Options::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "zeros:1: longer than 65536 bytes: not a trace line (is it a text trace?)"
    );
    let nul = BufReader::new(std::io::Read::take(std::io::repeat(0), 1 << 30));
    let err = read(nul, "nul", TraceFormat::Blkparse, &Options::default()).unwrap_err();
    assert!(
        matches!(err, TraceError::LineTooLong { line: 1, .. }),
        "{err}"
    );
    let err = read(
        &b"0 0 1 8 0\n\xff\xfe\n"[..],
        "bin",
        TraceFormat::Ascii,
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "bin:2: not UTF-8 text (a binary file read as a text format?)"
    );
    for format in [TraceFormat::Ascii, TraceFormat::Blktrace] {
        let err = read_path("/dev/zero", format, &Options::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/dev/zero: is a character device, not a trace file"
        );
    }
    let err = read_path(
        "/nonexistent.ascii",
        TraceFormat::Ascii,
        &Options::default(),
    )
    .unwrap_err();
    assert!(err.to_string().starts_with("/nonexistent.ascii: "), "{err}");
}

#[test]
fn sizes_in_errors_take_the_unit_they_fill() {
    assert_eq!(binary_size(512), "512 bytes");
    assert_eq!(binary_size(64 << 20), "67108864 bytes (64.0 MiB)");
    assert_eq!(binary_size(3 << 29), "1610612736 bytes (1.5 GiB)");
    assert_eq!(
        binary_size(u64::MAX),
        "18446744073709551615 bytes (16384.0 PiB)"
    );
}

/// SYSTOR '17 (SNIA IOTTA's virtual desktop traces): a header, Unix
/// seconds with nine digits of fraction, bytes, the LUN as the device, and
/// records of blank type skipped and counted.
#[test]
fn systor_lines_read_bytes_and_skip_untyped_records() {
    let systor = "Timestamp,Response,IOType,LUN,Offset,Size\n\
                  1456135200.013118000,0.001,W,0,4096,4096\n\
                  1456135200.113118000,0.000806000,R,3,899056122368,131072\n\
                  1456135202.013118000,0.001,,0,4096,4096\n\
                  1456135203.013118000,0.001,W,0,8192,8192\n";
    let t = parse_as(systor, "2016022207-LUN0.csv", TraceFormat::Systor).unwrap();
    let r = &t.records;
    assert_eq!(r.len(), 3);
    assert_eq!(
        (r[0].op, r[0].offset, r[0].len, r[0].at),
        (Op::Write, 4096, 4096, Nanos(0))
    );
    assert_eq!(
        (r[1].op, r[1].offset, r[1].len, r[1].at),
        (Op::Read, 899_056_122_368, 131_072, Nanos(100_000_000))
    );
    assert_eq!(r[2].at, Nanos(3_000_000_000));
    assert!(t.notes.iter().any(|n| n == HEADER_NOTE), "{:?}", t.notes);
    assert!(
        t.notes
            .iter()
            .any(|n| n.starts_with("1 records of blank IOType skipped")),
        "{:?}",
        t.notes
    );
    // Times a few nanoseconds apart stay apart, exactly (an f64 holds
    // Unix seconds to 256 ns: two of these merged, one reordering lost).
    let close = "1455894000.0000003,0,W,0,0,4096\n1455894000.0000002,0,R,0,0,4096\n\
                 1455894000.0000001,0,R,0,0,4096\n";
    let t = parse_as(close, "c", TraceFormat::Systor).unwrap();
    let at: Vec<u64> = t.records.iter().map(|r| r.at.0).collect();
    assert_eq!(at, [0, 100, 200]);
    assert!(
        t.notes.iter().any(|n| n.starts_with("2 arrivals earlier")),
        "{:?}",
        t.notes
    );
    assert_refused(&[(
        TraceFormat::Systor,
        "1456135200.0,0.001,X,0,0,4096\n",
        "t:1: field 3 (IOType) `X`: expected R, W or blank",
    )]);
}
