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
