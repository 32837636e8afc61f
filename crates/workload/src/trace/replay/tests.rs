use proptest::prelude::*;

use super::*;
use crate::workload::{Generator, Job, JobKind};

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name).to_string_lossy().into_owned();
    std::fs::write(&path, text).unwrap();
    path
}

/// An ascii trace at `path` opened for replay on a drive of `capacity`
/// bytes, refused if it does not fit.
fn open_ascii(path: &str, capacity: u64) -> Result<Replay, TraceError> {
    let options = Options::default();
    open_replay(
        path,
        TraceFormat::Ascii,
        &options,
        Fit::Refuse,
        (capacity, 4096),
    )
}

fn ascii_options(devices: Devices, speed: f64) -> Options {
    Options {
        devices,
        speed,
        ..Options::default()
    }
}

/// What the replay of `path` issues, or its error.
fn replayed(
    path: &str,
    options: &Options,
    fit: Fit,
    drive: (u64, u64),
) -> Result<(Vec<TraceRecord>, Replay), TraceError> {
    let replay = open_replay(path, TraceFormat::Ascii, options, fit, drive)?;
    let records = replay.records.cursor().collect::<Result<Vec<_>, _>>()?;
    Ok((records, replay))
}

/// The same trace read whole into memory, sorted and fitted.
fn sorted(
    path: &str,
    options: &Options,
    fit: Fit,
    drive: (u64, u64),
) -> Result<(Trace, Option<Remap>), TraceError> {
    let mut trace = read_path(path, TraceFormat::Ascii, options)?;
    let remap = fit_devices(&mut trace.records, &trace.devices, drive, fit, path)?;
    Ok((trace, remap))
}

#[test]
fn a_trace_in_time_order_is_streamed_and_one_out_of_order_is_sorted_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let in_order = write(&dir, "a", "0 0 8 8 1\n10 0 16 8 0\n10 0 0 8 1\n");
    let unsorted = write(&dir, "b", "10 0 8 8 1\n0 0 16 8 0\n");
    let options = Options::default();
    let drive = (1 << 30, 4096);
    let (records, replay) = replayed(&in_order, &options, Fit::Refuse, drive).unwrap();
    assert!(replay.records.is_streamed());
    // Equal arrivals keep the file's order.
    let offsets: Vec<u64> = records.iter().map(|r| r.offset).collect();
    assert_eq!(offsets, [4096, 8192, 0]);
    let summary = replay.records.summary();
    assert_eq!(
        (summary.requests, summary.min_offset, summary.max_end),
        (3, 0, 12288)
    );
    assert_eq!(
        (summary.first_at, summary.last_at),
        (Some(Nanos(0)), Nanos(10))
    );
    let (records, replay) = replayed(&unsorted, &options, Fit::Refuse, drive).unwrap();
    assert!(!replay.records.is_streamed());
    assert_eq!(records[0].offset, 8192);
    assert!(replay.notes.iter().any(|n| n.contains("sorted by time")));
}

/// The requests a replay of `records` issues by `until`, and its notes.
fn issued_by(records: TraceRecords, until: Nanos) -> (usize, Vec<String>) {
    let job = Job {
        name: "t".into(),
        kind: JobKind::Trace(records),
        start: Nanos::ZERO,
        stop: None,
        shape: Default::default(),
    };
    let mut generator = Generator::new(job, 0, 1);
    let mut out = Vec::new();
    generator.issue(until, &mut 0, &mut out);
    (out.len(), generator.control_notes())
}

#[test]
fn a_trace_written_to_after_it_was_checked_is_not_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let text = "0 0 8 8 1\n10 0 16 8 1\n20 0 24 8 1\n";
    let path = write(&dir, "t", text);
    let replay = open_ascii(&path, 1 << 30).unwrap();
    std::fs::write(&path, format!("{text}30 0 1000000000 8 0\n")).unwrap();
    let (issued, notes) = issued_by(replay.records, Nanos(1_000));
    assert_eq!(issued, 0);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("replay stopped after 0 requests")
            && notes[0].contains(
                "changed since it was checked before the run (54 bytes, 34 when first read)"
            ),
        "{}",
        notes[0]
    );
}

#[test]
fn a_trace_renamed_or_deleted_after_it_was_checked_replays_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "t", "0 0 8 8 1\n10 0 16 8 1\n20 0 24 8 1\n");
    let replay = open_ascii(&path, 1 << 30).unwrap();
    std::fs::remove_file(&path).unwrap();
    write(&dir, "t", "0 0 8 8 0\n");
    let (issued, notes) = issued_by(replay.records, Nanos(1_000));
    assert_eq!((issued, notes), (3, Vec::new()));
}

#[test]
fn a_trace_larger_than_the_drive_is_refused_before_it_is_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "t", "0 0 0 8 1\n10 0 2048 8 0\n");
    let err = open_ascii(&path, 1 << 20).unwrap_err();
    assert!(
        matches!(
            err,
            TraceError::TooLarge {
                needed: 1052672,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_trace_with_no_request_says_what_reading_it_skipped() {
    let dir = tempfile::tempdir().unwrap();
    // Only queue events, replayed by their issue; and only zero lengths.
    let queued = write(
        &dir,
        "q",
        "  8,0  1  1  0.000001100  1204  Q  WS 2048 + 8 [jbd2]\n",
    );
    let options = Options {
        event: Event::Issue,
        ..Options::default()
    };
    let drive = (1 << 30, 4096);
    let err = open_replay(&queued, TraceFormat::Blkparse, &options, Fit::Refuse, drive);
    assert_eq!(
        err.unwrap_err().to_string(),
        format!(
            "{queued}: holds no request; read: 1 events other than the issue event skipped: Q 1"
        )
    );
    let zero = write(&dir, "z", "0 0 8 0 1\n10 0 16 0 0\n");
    let err = open_ascii(&zero, 1 << 30).unwrap_err().to_string();
    assert!(
        err.ends_with(
            "holds no request; read: 2 requests of zero length skipped (a flush is kept)"
        ),
        "{err}"
    );
    let err = read_path(&zero, TraceFormat::Ascii, &Options::default()).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("2 requests of zero length skipped (a flush is kept)"),
        "{err}"
    );
}

#[test]
fn the_first_pass_keeps_one_end_a_device_only_when_devices_are_laid_apart() {
    let dir = tempfile::tempdir().unwrap();
    // A device column that names every request anew (a request id).
    let text: String = (0..1000).map(|i| format!("{i} req{i} {i} 8 1\n")).collect();
    let path = write(&dir, "t", &text);
    let files = [TraceFile::open(&path).unwrap()];
    let ends = |devices| {
        let options = ascii_options(devices, 1.0);
        Scan::of(&files, TraceFormat::Ascii, &options).unwrap().ends
    };
    let merged = ends(Devices::Merge);
    assert_eq!(merged.into_values().collect::<Vec<_>>(), [(999 + 8) * 512]);
    assert_eq!(ends(Devices::Separate).len(), 1000);
}

/// One ascii line: arrival (ns), device, sector, sectors, read or write.
fn line() -> impl Strategy<Value = (u64, u8, u64, u64, bool)> {
    (0u64..50, 0u8..3, 0u64..4096, 0u64..64, any::<bool>())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Streamed or not, a replay issues the requests, notes and remap counts
    /// of the trace read whole, sorted and fitted, and its summary is theirs.
    #[test]
    fn a_replay_issues_what_the_sorted_trace_holds(
        lines in prop::collection::vec(line(), 1..40),
        in_order in any::<bool>(),
        separate in any::<bool>(),
        speed in prop::sample::select(vec![1.0, 2.5, 0.5, 1e-17]),
        fit in prop::sample::select(vec![Fit::Refuse, Fit::Wrap, Fit::Scale]),
        capacity_sectors in 8u64..8192,
    ) {
        let mut lines = lines;
        if in_order {
            lines.sort_by_key(|l| l.0);
        }
        let text: String = lines
            .iter()
            .map(|(at, dev, sector, n, read)| format!("{at} {dev} {sector} {n} {}\n", u8::from(*read)))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "t.ascii", &text);
        let devices = if separate { Devices::Separate } else { Devices::Merge };
        let options = ascii_options(devices, speed);
        let drive = (capacity_sectors * 512, 4096);
        let expected = sorted(&path, &options, fit, drive);
        match replayed(&path, &options, fit, drive) {
            Ok((records, replay)) => {
                let (trace, remap) = expected.unwrap();
                prop_assert_eq!(&records, &trace.records);
                prop_assert_eq!(&replay.notes, &trace.notes);
                prop_assert_eq!(replay.remap, remap);
                prop_assert_eq!(*replay.records.summary(), TraceSummary::of(&trace.records));
                // Lines of no bytes are skipped before the order is judged.
                let kept: Vec<u64> = lines.iter().filter(|l| l.3 > 0).map(|l| l.0).collect();
                let sorted_already = kept.windows(2).all(|w| w[0] <= w[1]);
                prop_assert_eq!(replay.records.is_streamed(), sorted_already);
            }
            Err(e) => prop_assert_eq!(Err(e), expected.map(|_| ())),
        }
    }
}

#[cfg(unix)]
#[test]
fn a_pipe_is_read_once_into_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pipe").to_string_lossy().into_owned();
    let made = std::process::Command::new("mkfifo").arg(&path).status();
    if !made.is_ok_and(|s| s.success()) {
        return; // no mkfifo here: nothing to check
    }
    let writer = {
        let path = path.clone();
        std::thread::spawn(move || std::fs::write(path, "0 0 8 8 1\n10 0 16 8 0\n").unwrap())
    };
    let replay = open_ascii(&path, 1 << 30).unwrap();
    writer.join().unwrap();
    assert!(!replay.records.is_streamed());
    let records: Vec<_> = replay.records.cursor().map(Result::unwrap).collect();
    assert_eq!(records.len(), 2);
}

#[test]
fn a_compressed_trace_replays_as_the_plain_one_streamed_or_sorted() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let gzip = |name: &str, text: &str| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(text.as_bytes()).unwrap();
        let path = dir.path().join(name).to_string_lossy().into_owned();
        std::fs::write(&path, e.finish().unwrap()).unwrap();
        path
    };
    let options = Options::default();
    let drive = (1 << 30, 4096);
    for text in [
        "0 0 8 8 1\n10 0 16 8 0\n10 0 0 8 1\n",
        "10 0 8 8 1\n0 0 16 8 0\n",
    ] {
        let plain = write(&dir, "plain", text);
        let packed = gzip("packed.gz", text);
        let (want, plain) = replayed(&plain, &options, Fit::Refuse, drive).unwrap();
        let (got, packed) = replayed(&packed, &options, Fit::Refuse, drive).unwrap();
        assert_eq!(got, want);
        assert_eq!(packed.notes, plain.notes);
        assert_eq!(packed.records.is_streamed(), plain.records.is_streamed());
    }
}

#[test]
fn a_window_replays_the_requests_arriving_in_it_streamed_or_sorted() {
    let dir = tempfile::tempdir().unwrap();
    let text = "0 0 0 8 1\n1000000000 0 8 8 0\n2000000000 0 16 8 1\n3000000000 0 24 8 0\n";
    let in_order = write(&dir, "a", text);
    let window = |w: &str| Options {
        window: Some(Window::parse(w).unwrap()),
        ..Options::default()
    };
    let drive = (1 << 30, 4096);
    let (records, replay) = replayed(&in_order, &window("1s..3s"), Fit::Refuse, drive).unwrap();
    assert!(replay.records.is_streamed());
    let kept: Vec<(u64, u64)> = records.iter().map(|r| (r.at.0, r.offset)).collect();
    assert_eq!(kept, [(0, 4096), (1_000_000_000, 8192)]);
    assert_eq!(
        replay.notes,
        [
            "--trace-window 1s..3s: 1 requests arrived before it and 1 after it, not replayed \
          (the notes on reading the trace count all of it; the other notes, only the requests \
          replayed)"
        ]
    );
    // Out of order, it is sorted in memory first: the same requests.
    let shuffled = "1000000000 0 8 8 0\n0 0 0 8 1\n3000000000 0 24 8 0\n2000000000 0 16 8 1\n";
    let unsorted = write(&dir, "b", shuffled);
    let (sorted, memory) = replayed(&unsorted, &window("1s..3s"), Fit::Refuse, drive).unwrap();
    assert!(!memory.records.is_streamed());
    assert_eq!(sorted, records);
    assert_eq!(memory.notes[0], replay.notes[0]);
    assert!(memory.notes[1].contains("sorted by time"));
    // An arrival back in time past the window's end is found, and sorted
    // into it: the first pass reads the whole file.
    let late = write(&dir, "c", &format!("{text}1500000000 0 32 8 1\n"));
    let (late, memory) = replayed(&late, &window("1s..3s"), Fit::Refuse, drive).unwrap();
    assert!(!memory.records.is_streamed());
    assert_eq!(late.len(), 3);
    let err = replayed(&in_order, &window("10s.."), Fit::Refuse, drive).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{in_order}: no request arrives in --trace-window 10s..")
    );
    for (bad, problem) in [
        ("1s", "expected START..END"),
        ("1s...2s", "expected START..END"),
        ("3s..1s", "the window is empty"),
        ("5s..5s", "the window is empty"),
    ] {
        let err = Window::parse(bad).unwrap_err().to_string();
        assert!(err.contains(problem), "{err}");
    }
}

#[test]
fn rebasing_moves_each_device_to_its_new_base_streamed_or_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    // Device 0 reaches 8 KiB, device 1 12 KiB: laid at 0 and 1 MiB.
    let in_order = write(&dir, "a", "0 0 8 8 1\n1 1 16 8 0\n2 0 0 8 1\n");
    let unsorted = write(&dir, "b", "2 0 8 8 1\n1 1 16 8 0\n0 0 0 8 1\n");
    let options = ascii_options(Devices::Separate, 1.0);
    for path in [in_order, unsorted] {
        let mut replay = open_replay(
            &path,
            TraceFormat::Ascii,
            &options,
            Fit::Refuse,
            (1 << 30, 4096),
        )
        .unwrap();
        let layout: Vec<(String, u64, u64)> = (replay.records.devices().iter())
            .map(|d| (d.name.clone(), d.base, d.reach))
            .collect();
        assert_eq!(
            layout,
            [("0".into(), 0, 8192), ("1".into(), 1 << 20, 12288)]
        );
        replay.records.rebase(&[5 << 20, 9 << 20]);
        let mut offsets: Vec<u64> = (replay.records.cursor())
            .map(|r| r.unwrap().offset)
            .collect();
        offsets.sort_unstable();
        assert_eq!(
            offsets,
            [5 << 20, (5 << 20) + 4096, (9 << 20) + 8192],
            "{path}"
        );
        let summary = replay.records.summary();
        assert_eq!(
            (summary.min_offset, summary.max_end),
            (5 << 20, (9 << 20) + 12288)
        );
        assert_eq!(replay.records.devices()[1].base, 9 << 20);
    }
}

#[test]
fn rebasing_a_trace_of_merged_devices_shifts_every_request() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "a", "0 0 8 8 1\n1 1 16 8 0\n");
    let mut replay = open_ascii(&path, 1 << 30).unwrap();
    assert!(replay.records.devices().is_empty());
    replay.records.rebase(&[1 << 20]);
    let offsets: Vec<u64> = (replay.records.cursor())
        .map(|r| r.unwrap().offset)
        .collect();
    assert_eq!(offsets, [(1 << 20) + 4096, (1 << 20) + 8192]);
    let summary = replay.records.summary();
    assert_eq!(
        (summary.min_offset, summary.max_end),
        ((1 << 20) + 4096, (1 << 20) + 12288)
    );
}

#[test]
fn rebasing_a_fitted_trace_of_separate_devices_shifts_every_request() {
    // Found by a review: the streamed replay set device 0's base from
    // before the fit instead of shifting, so a job's writes stayed in
    // another file's range under `iosteer run`.
    let dir = tempfile::tempdir().unwrap();
    let in_order = write(&dir, "a", "0 0 8 8 1\n1 1 16 8 0\n2 0 0 8 1\n");
    let unsorted = write(&dir, "b", "2 0 8 8 1\n1 1 16 8 0\n0 0 0 8 1\n");
    let options = ascii_options(Devices::Separate, 1.0);
    for path in [in_order, unsorted] {
        let open = || {
            open_replay(
                &path,
                TraceFormat::Ascii,
                &options,
                Fit::Wrap,
                (64 << 10, 4096),
            )
            .unwrap()
        };
        let before: Vec<u64> = open().records.cursor().map(|r| r.unwrap().offset).collect();
        let mut replay = open();
        assert!(
            replay.records.devices().is_empty(),
            "fitted: no device layout"
        );
        replay.records.rebase(&[1 << 20]);
        let after: Vec<u64> = replay.records.cursor().map(|r| r.unwrap().offset).collect();
        let shifted: Vec<u64> = before.iter().map(|o| o + (1 << 20)).collect();
        assert_eq!(after, shifted, "{path}");
    }
}
