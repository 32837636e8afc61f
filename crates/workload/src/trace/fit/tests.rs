use proptest::prelude::*;

use super::*;

fn write(offset: u64, len: u64) -> TraceRecord {
    TraceRecord {
        at: Nanos::ZERO,
        op: Op::Write,
        offset,
        len,
        fua: false,
    }
}

/// The offsets `requests` (offset, length) get, scaled onto `capacity`
/// bytes of `page`-byte pages.
fn scaled_offsets(requests: &[(u64, u64)], capacity: u64, page: u64) -> Vec<u64> {
    let mut records: Vec<TraceRecord> = requests.iter().map(|&(o, l)| write(o, l)).collect();
    fit_counted(&mut records, capacity, page, Fit::Scale, "s").unwrap();
    records.iter().map(|r| r.offset).collect()
}

/// The review's `scale_min.ascii`: three aligned 4 KiB writes over twice a
/// drive of 3.4 GiB. Scaled offsets were rounded to 512 bytes and landed at
/// 3650712064 (512 past a page) and 1825355776 (2048 past one), each
/// write across two pages.
#[test]
fn scaling_keeps_aligned_writes_aligned_to_the_page() {
    let capacity = 3_650_722_201 / 4096 * 4096;
    let trace = [(0, 4096), (8_388_608 * 512, 4096), (4_194_304 * 512, 4096)];
    let offsets = scaled_offsets(&trace, capacity, 4096);
    assert!(offsets.iter().all(|o| o % 4096 == 0), "{offsets:?}");
    assert!(offsets[1] > offsets[2] && offsets[1] + 4096 <= capacity);
}

/// Rounding each address down to its own alignment reorders them: at 0.9,
/// 3584 goes to 3072 and 4096 to 0.
#[test]
fn scaling_does_not_reorder_addresses_of_different_alignments() {
    // 9 pages of trace onto 8 of drive, 512-byte and 4 KiB writes.
    let trace = [(3584, 512), (4096, 512), (9 * 4096 - 512, 512)];
    let offsets = scaled_offsets(&trace, 8 * 4096, 4096);
    assert!(
        offsets[0] <= offsets[1] && offsets[1] % 4096 == 0,
        "{offsets:?}"
    );
    assert_eq!(offsets[0] % 512, 0);
}

/// The alignment an address keeps on a drive of `page`-byte pages: its
/// own, up to the page (or, within a page, up to the largest power of two
/// dividing the page).
fn kept_alignment(offset: u64, page: u64) -> u64 {
    match offset % page {
        0 => page,
        within => (1 << within.trailing_zeros()).min(1 << page.trailing_zeros()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Scaled, every request ends on the drive, keeps its alignment up to
    /// the page, lands where any other request at its address lands, and
    /// keeps its place in the order of addresses.
    #[test]
    fn scaling_keeps_alignment_order_and_one_place_an_address(
        requests in prop::collection::vec((0u64..1 << 24, 0u32..8, 1u64..64), 1..60),
        page in prop::sample::select(vec![512u64, 4096, 16384, 12288, 6144]),
        drive_pages in 4u64..512,
        odd_end in 0u64..2,
    ) {
        // Offsets of every alignment from 1 byte to 64 KiB.
        let requests: Vec<(u64, u64)> = requests
            .iter()
            .map(|&(at, shift, sectors)| (at >> shift << shift, sectors * 512))
            .collect();
        let capacity = drive_pages * page + odd_end * 512;
        let needed = requests.iter().map(|r| r.0 + r.1).max().unwrap();
        prop_assume!(needed > capacity);
        let offsets = scaled_offsets(&requests, capacity, page);
        let longest = requests.iter().map(|r| r.1).max().unwrap();
        let mut by_address: Vec<(u64, u64)> = Vec::new();
        for (&(offset, len), &to) in requests.iter().zip(&offsets) {
            prop_assert!(to + len.min(capacity) <= capacity, "{offset} to {to}");
            prop_assert_eq!(to % kept_alignment(offset, page), 0, "{} to {}", offset, to);
            by_address.push((offset, to));
        }
        // Order and one place an address hold for every request when the
        // longest fits in half the drive (longer ones may be pulled back
        // from its end).
        if longest <= capacity / 2 {
            by_address.sort_unstable();
            for w in by_address.windows(2) {
                prop_assert!(w[0].1 <= w[1].1, "{:?} then {:?}", w[0], w[1]);
                if w[0].0 == w[1].0 {
                    prop_assert_eq!(w[0].1, w[1].1);
                }
            }
        }
    }
}

/// The replay of the msr trace `lines` with devices laid apart, fitted by
/// `how` onto `drive`: streamed (the lines in time order) and sorted in
/// memory (the lines reversed), which must agree.
fn replayed_apart(
    lines: &[&str],
    how: Fit,
    drive: (u64, u64),
) -> Result<(Vec<TraceRecord>, Replay), TraceError> {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        devices: Devices::Separate,
        ..Options::default()
    };
    let mut results = Vec::new();
    for (name, in_order) in [("streamed.msr", true), ("sorted.msr", false)] {
        let mut lines = lines.to_vec();
        if !in_order {
            lines.reverse();
        }
        let path = dir.path().join(name).to_string_lossy().into_owned();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let replay =
            open_replay(&path, TraceFormat::Msr, &options, how, drive).and_then(|replay| {
                assert_eq!(replay.records.is_streamed(), in_order);
                let records = replay.records.cursor().collect::<Result<Vec<_>, _>>()?;
                Ok((records, replay))
            });
        results.push(replay);
    }
    let sorted = results.pop().unwrap();
    let streamed = results.pop().unwrap();
    match (&streamed, &sorted) {
        (Ok(a), Ok(b)) => {
            assert_eq!((&a.0, &a.1.remap), (&b.0, &b.1.remap));
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string().replace("streamed", "sorted"), b.to_string()),
        _ => panic!("streamed {streamed:?}, sorted {sorted:?}"),
    }
    streamed
}

/// The review's `sepwrap.msr`: device 0 reaches 3 GiB; device 1 reads two
/// addresses, laid at 3 GiB. Wrapping the laid-out span modulo a 2 GiB
/// drive sent device 1's first read to byte 1 GiB + 429494272, in the range
/// device 0 wraps onto (on the review's drive, to byte 0, which device 0
/// wrote); now each device wraps within a share of its own, and the shares
/// do not overlap.
#[test]
fn devices_laid_apart_wrap_each_within_a_share_of_its_own() {
    let lines = [
        "0,h,0,Write,0,4096,1",
        "10000,h,0,Write,3221221376,4096,1",
        "20000,h,1,Read,429494272,4096,1",
        "30000,h,1,Read,429498368,4096,1",
    ];
    let drive = (2 << 30, 4096);
    for how in [Fit::Wrap, Fit::Scale] {
        let (records, replay) = replayed_apart(&lines, how, drive).unwrap();
        let remap = replay.remap.unwrap();
        let shares = &remap.shares;
        assert_eq!(shares.len(), 2);
        let (zero, one) = (&shares[0], &shares[1]);
        assert_eq!(
            (zero.name.as_str(), zero.start, one.name.as_str()),
            ("h/0", 0, "h/1")
        );
        assert_eq!(zero.start + zero.bytes, one.start);
        assert_eq!(one.start + one.bytes, drive.0);
        // In proportion to the reaches: 3 GiB and 409.6 MiB.
        let reach_one = 429_498_368 + 4096u64;
        let expected = drive.0 as f64 * reach_one as f64 / (reach_one + (3u64 << 30)) as f64;
        assert!(
            (one.bytes as f64 - expected).abs() <= 8192.0,
            "{how}: {shares:?}"
        );
        for r in &records[..2] {
            assert!(r.offset + r.len <= zero.bytes, "{how}: {r:?}");
        }
        for r in &records[2..] {
            assert!(
                r.offset >= one.start && r.offset + r.len <= drive.0,
                "{how}: {r:?}"
            );
            assert_eq!(r.offset % 4096, 0);
        }
        // Device 1's two reads stay 4 KiB apart, in order.
        assert!(records[3].offset > records[2].offset, "{how}: {records:?}");
    }
    let (records, replay) = replayed_apart(&lines, Fit::Wrap, drive).unwrap();
    let one = &replay.remap.as_ref().unwrap().shares[1];
    // Device 1 reaches past its share: its reads wrap within it.
    assert_eq!(records[2].offset, one.start + 429_494_272 % one.bytes);
    assert_eq!(
        replay.remap.as_ref().unwrap().to_string(),
        format!(
            "3 of 4 requests moved by wrap, each of the 2 devices laid apart within a share of \
             the drive of its own, in whole pages in proportion to its reach (h/0 {} from 0; \
             h/1 {} from {}), 0 longer than their device's share cut to its size",
            exact_size(one.start),
            exact_size(one.bytes),
            exact_size(one.start)
        )
    );
}

/// Devices whose reaches fit the drive laid end to end, though not at
/// their 1 MiB boundaries, keep their layouts: each only moves to its
/// share, and nothing wraps.
#[test]
fn devices_that_fit_end_to_end_keep_their_layouts_in_their_shares() {
    // Two devices of 1.5 MiB, laid at 0 and 2 MiB: 3.5 MiB on a 3 MiB drive.
    let lines = [
        "0,h,0,Write,0,4096,1",
        "1,h,0,Write,1568768,4096,1",
        "2,h,1,Write,8192,4096,1",
        "3,h,1,Write,1568768,4096,1",
    ];
    for how in [Fit::Wrap, Fit::Scale] {
        let (records, replay) = replayed_apart(&lines, how, (3 << 20, 4096)).unwrap();
        let offsets: Vec<u64> = records.iter().map(|r| r.offset).collect();
        let one = 1536 << 10;
        assert_eq!(offsets, [0, 1568768, one + 8192, one + 1568768], "{how}");
        assert_eq!(replay.remap.unwrap().moved, 2);
    }
}

/// More devices than the drive has pages cannot each have a share.
#[test]
fn more_devices_than_pages_are_refused_naming_both() {
    let lines = [
        "0,h,0,Write,0,4096,1",
        "1,h,1,Write,0,4096,1",
        "2,h,2,Write,0,4096,1",
    ];
    let err = replayed_apart(&lines, Fit::Wrap, (8192, 4096)).unwrap_err();
    assert!(
        err.to_string().ends_with(
            "streamed.msr: its 3 devices laid apart need a page each of the drive, which holds \
             2 pages of 4096 bytes; merge the devices to fit them onto it"
        ),
        "{err}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Fitted by wrap or scale, every request of a device laid apart lands
    /// in its device's share, and the shares tile the drive without
    /// overlapping.
    #[test]
    fn devices_laid_apart_stay_apart_when_fitted(
        lines in prop::collection::vec((0u8..4, 0u64..1 << 16, 1u64..64), 1..50),
        how in prop::sample::select(vec![Fit::Wrap, Fit::Scale]),
        drive_pages in 4u64..2048,
    ) {
        // One line a nanosecond, so the records keep the lines' order.
        let text: String = (lines.iter().enumerate())
            .map(|(at, (device, sector, sectors))| format!("{at} {device} {sector} {sectors} 0\n"))
            .collect();
        let mut trace = parse(&text, "t", TraceFormat::Ascii, TimeUnit::Ns, 1.0, Devices::Separate)
            .unwrap();
        let drive = (drive_pages * 4096, 4096);
        let remap = fit_devices(&mut trace.records, &trace.devices, drive, how, "t");
        let Ok(Some(remap)) = remap else {
            return Ok(()); // it fits, or has more devices than pages
        };
        let mut end = 0;
        for share in &remap.shares {
            prop_assert_eq!(share.start, end);
            end += share.bytes;
        }
        prop_assert!(end <= drive.0);
        for ((device, _, _), r) in lines.iter().zip(&trace.records) {
            let i = trace.devices.iter().position(|d| d.name == device.to_string()).unwrap();
            let share = &remap.shares[i];
            prop_assert!(
                r.offset >= share.start && r.offset + r.len <= share.start + share.bytes,
                "device {} at {} + {}: {:?}", device, r.offset, r.len, share
            );
        }
    }
}
