//! Tests of the FTL alone: mapping, TRIM, overwrites, GC's pool.

use super::*;
use crate::test_drives::tiny_4k_pages;

/// A tiny drive: 2 dies x 16 blocks x 8 pages of 4 KiB.
fn tiny(victim: VictimPolicy, separate: bool) -> Ftl {
    let c = tiny_4k_pages(2, 16, 8, victim, separate);
    c.validate().unwrap();
    Ftl::new(&c)
}

#[test]
fn trim_then_read_is_unmapped() {
    let mut ftl = tiny(VictimPolicy::Greedy, true);
    ftl.write(5, 0, HOST_STREAM).unwrap();
    assert!(ftl.lookup(5).is_some());
    assert!(ftl.trim(5).unwrap());
    assert_eq!(ftl.lookup(5), None);
    assert!(!ftl.trim(5).unwrap(), "a second trim finds nothing");
    ftl.check_invariants().unwrap();
}

#[test]
fn an_overwrite_invalidates_the_old_copy() {
    let mut ftl = tiny(VictimPolicy::Greedy, true);
    let first = ftl.write(3, 0, HOST_STREAM).unwrap().ppn;
    let second = ftl.write(3, 1, HOST_STREAM).unwrap().ppn;
    assert_ne!(first, second);
    assert_eq!(ftl.die_of(second), 1);
    assert_eq!(ftl.lookup(3), Some(second));
    ftl.check_invariants().unwrap();
}

#[test]
fn out_of_range_pages_are_refused() {
    let mut ftl = tiny(VictimPolicy::Greedy, true);
    let pages = u64::from(ftl.logical_pages());
    assert_eq!(
        ftl.write(pages, 0, 0),
        Err(FtlError::OutOfRange { lpn: pages, pages })
    );
}

#[test]
fn gc_keeps_the_pool_and_moves_only_valid_pages() {
    for victim in VictimPolicy::ALL {
        for separate in [true, false] {
            let mut ftl = tiny(victim, separate);
            let pages = u64::from(ftl.logical_pages());
            let mut x = 1u64;
            for i in 0..20 * pages {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ftl.write((x >> 33) % pages, (i % 2) as u32, HOST_STREAM)
                    .unwrap();
            }
            ftl.check_invariants().unwrap();
            assert!(ftl.counters.gc_victims > 0, "{victim}: GC never ran");
            assert!(ftl.free_blocks(0) >= 1 && ftl.free_blocks(1) >= 1);
            let waf = ftl.counters.write_amplification();
            assert!(waf > 1.0 && waf < 10.0, "{victim}: WAF {waf}");
        }
    }
}

#[test]
fn last_written_lists_a_streams_newest_valid_units_first() {
    let mut ftl = tiny(VictimPolicy::Greedy, true);
    // 8 pages per block: 10 writes close one block and open another.
    for lpn in 0..10 {
        ftl.write(lpn, 0, HOST_STREAM).unwrap();
    }
    ftl.write(3, 1, HOST_STREAM).unwrap();
    ftl.write(8, 1, HOST_STREAM).unwrap();
    assert_eq!(ftl.last_written(0, HOST_STREAM, 4), vec![9, 7, 6, 5]);
    assert_eq!(ftl.last_written(0, HOST_STREAM, 100).len(), 8);
    assert_eq!(ftl.last_written(1, HOST_STREAM, 100), vec![8, 3]);
    assert!(ftl.last_written(0, GC_STREAM, 100).is_empty());
}

#[test]
fn aging_records_no_gc_moves() {
    use crate::device::{Device, Precondition};
    // Semi-preemptive GC with merge: the timed drive records GC's moves,
    // 4 bytes each, for the dies that owe them; aging's are owed to none
    // (recorded, an aged 8 TiB drive took 7 GB).
    let mut config = tiny_4k_pages(2, 16, 8, VictimPolicy::Greedy, true);
    config.gc.mode = crate::config::GcMode::SemiPreemptive;
    config.gc.merge = true;
    let mut drive = Device::new(config).unwrap();
    drive.precondition(Precondition::default()).unwrap();
    assert!(drive.ftl().erase_counts().sum::<u32>() > 0, "GC ran");
    assert!(drive.ftl().record_moves, "the timed drive records again");
    assert_eq!(
        drive.ftl().moved.capacity(),
        0,
        "aging's moves were recorded"
    );
}
