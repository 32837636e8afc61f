use super::*;

/// An msr trace laid out with devices apart, read into memory and, from a
/// file, for a streamed replay on a drive of 2^64 - 1 bytes.
fn laid_apart(text: &str) -> [Result<Vec<u64>, TraceError>; 2] {
    let options = Options {
        devices: Devices::Separate,
        ..Options::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sep.msr").to_string_lossy().into_owned();
    std::fs::write(&path, text).unwrap();
    let offsets = |records: Vec<TraceRecord>| records.iter().map(|r| r.offset).collect();
    let in_memory =
        read(text.as_bytes(), &path, TraceFormat::Msr, &options).map(|t| offsets(t.records));
    let drive = (u64::MAX, 4096);
    let streamed = open_replay(&path, TraceFormat::Msr, &options, Fit::Refuse, drive)
        .and_then(|replay| {
            assert!(replay.records.is_streamed());
            replay.records.cursor().collect::<Result<Vec<_>, _>>()
        })
        .map(offsets);
    [in_memory, streamed]
}

/// Two devices at byte 2^63 (the review's `sep.msr`): device 1 would start
/// at 2^63 + 1 MiB and end past 2^64. Its base saturated at u64::MAX (the
/// refusal said the trace addressed 16384 PiB, and a remap wrapped it to a
/// misaligned address); now the layout is refused, naming the device.
#[test]
fn devices_laid_apart_past_2_to_the_64_are_refused_naming_the_device() {
    let text = "0,h,0,Write,9223372036854775808,4096,1\n\
                1,h,1,Write,9223372036854775808,4096,1\n\
                2,h,1,Read,9223372036854775808,4096,1\n";
    for result in laid_apart(text) {
        let err = result.unwrap_err();
        let TraceError::DevicePastEnd {
            device,
            base_mib,
            reach,
            ..
        } = &err
        else {
            panic!("{err}")
        };
        assert_eq!(
            (device.as_str(), *base_mib, *reach),
            ("h/1", (1 << 43) + 1, (1 << 63) + 4096)
        );
        let message = err.to_string();
        assert!(
            message.contains("sep.msr: device h/1 ends 9223372036854779904 bytes into it")
                && message.contains("from byte 9223372036855824384, it would end past 2^64 bytes"),
            "{message}"
        );
    }
}

/// The last device may end at the top of u64: no device follows it.
#[test]
fn the_last_device_may_end_at_the_top_of_the_address_space() {
    let top = u64::MAX - (1 << 20) - 4096;
    let text = format!("0,h,0,Write,0,4096,1\n1,h,1,Write,{top},4096,1\n");
    for result in laid_apart(&text) {
        assert_eq!(result.unwrap(), [0, u64::MAX - 4096]);
    }
}

/// The replay of the ascii trace `text` with devices laid apart, as its
/// notes say: streamed and, the lines reversed, sorted in memory.
fn notes_apart(text: &str, window: Option<&str>) -> [Vec<String>; 2] {
    let options = Options {
        devices: Devices::Separate,
        window: window.map(|w| Window::parse(w).unwrap()),
        ..Options::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let reversed: String = text.lines().rev().map(|l| format!("{l}\n")).collect();
    [(text, true), (&reversed, false)].map(|(text, in_order)| {
        let path = dir.path().join("t").to_string_lossy().into_owned();
        std::fs::write(&path, text).unwrap();
        let drive = (1 << 40, 4096);
        let replay = open_replay(&path, TraceFormat::Ascii, &options, Fit::Refuse, drive).unwrap();
        assert_eq!(replay.records.is_streamed(), in_order);
        replay.notes
    })
}

/// `--trace-devices separate` left no note: the report did not say the
/// devices were laid apart, nor where.
#[test]
fn devices_laid_apart_are_noted_with_their_bases() {
    // Devices 0, 2 and 10, device 0 ending at 1 MiB and 2 at 4 MiB.
    let text = "0 10 0 8 0\n1 2 6144 8 0\n2 0 2040 8 1\n3 2 0 8 1\n";
    for notes in notes_apart(text, None) {
        assert_eq!(
            notes[0],
            "--trace-devices separate: 3 devices laid side by side, each from the first 1 MiB \
             boundary past the end of the one before: 0 at 0; 2 at 1 MiB; 10 at 5 MiB"
        );
    }
    // Past eight devices, the middle ones are counted; a window's devices
    // are those of its requests.
    let many: String = (0..22).map(|d| format!("{d} {d} 0 8 0\n")).collect();
    for notes in notes_apart(&many, Some("2ns..")) {
        assert_eq!(
            notes[1],
            "--trace-devices separate: 20 devices laid side by side, each from the first 1 MiB \
             boundary past the end of the one before: 2 at 0; 3 at 1 MiB; 4 at 2 MiB; 5 at 3 \
             MiB; 6 at 4 MiB; 7 at 5 MiB; 12 more; 20 at 18 MiB; 21 at 19 MiB"
        );
    }
}

/// Bases and shares are given exactly, and about past 10,000 of their
/// unit (a share of 3 GiB less 8 KiB read "3145720 KiB").
#[test]
fn sizes_in_notes_are_exact_and_about_when_long() {
    let kib = 1 << 10;
    for (bytes, text) in [
        (0, "0"),
        (1536, "1536 bytes"),
        (4 * kib, "4 KiB"),
        (2688 << 20, "2688 MiB"),
        (3 << 30, "3 GiB"),
        ((3 << 30) - 8 * kib, "3145720 KiB (3.0 GiB)"),
        (10_001, "10001 bytes (9.8 KiB)"),
    ] {
        assert_eq!(exact_size(bytes), text);
    }
}
