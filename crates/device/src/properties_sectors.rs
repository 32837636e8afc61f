//! Property tests of sector (sub-page) mapping: with units smaller than a
//! page, partial-page flushes and TRIMs of parts of pages, GC never loses,
//! duplicates or stales a unit, in the FTL alone and in the timed drive.

use proptest::prelude::*;

use iosteer_sched::{Command, Nanos, Op, Outcome, Request};

use crate::config::{DeviceConfig, VictimPolicy};
use crate::device::Device;
use crate::ftl::{FtlError, HOST_STREAM};
use crate::test_drives::{
    any_victim, maps_exactly, run_out, tiny_sata, tiny_shapes, valid_ftl, wait_to_submit,
};

/// Bytes of the mapping unit of these tests.
const UNIT: u64 = 4096;

/// A small drive of 16 KiB pages mapped in 4 KiB units (4 a page).
fn sector_config(dies: u32, blocks: u32, pages: u32, victim: VictimPolicy) -> DeviceConfig {
    let mut c = tiny_sata(dies, blocks, pages, victim);
    c.ftl.mapping_unit = UNIT as u32;
    c
}

#[derive(Clone, Debug)]
enum UnitOp {
    Write {
        lun: u64,
        die: u32,
    },
    /// A flush of the write buffer: the open page is programmed padded.
    Pad {
        die: u32,
    },
    /// `count` units from `lun`: parts of pages as often as whole ones.
    Trim {
        lun: u64,
        count: u64,
    },
    Collect {
        die: u32,
    },
}

fn unit_ops() -> impl Strategy<Value = Vec<UnitOp>> {
    let op = prop_oneof![
        10 => (0u64..4000, 0u32..3).prop_map(|(lun, die)| UnitOp::Write { lun, die }),
        2 => (0u32..3).prop_map(|die| UnitOp::Pad { die }),
        2 => (0u64..4000, 1u64..6).prop_map(|(lun, count)| UnitOp::Trim { lun, count }),
        1 => (0u32..3).prop_map(|die| UnitOp::Collect { die }),
    ];
    prop::collection::vec(op, 1..3000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// After any mix of unit writes, padded flushes, partial-page TRIMs and
    /// GC: exactly the units written and not trimmed since are mapped (none
    /// lost, none resurrected), each to its own physical unit (none
    /// duplicated), the last write's copy (none stale: no physical unit
    /// names an owner that does not name it back).
    #[test]
    fn sector_mapped_gc_never_loses_duplicates_or_stales_a_unit(
        ops in unit_ops(),
        (dies, blocks, pages, victim) in tiny_shapes(20, vec![4, 8]),
    ) {
        let mut ftl = valid_ftl(&sector_config(dies, blocks, pages, victim))?;
        let logical = u64::from(ftl.logical_units());
        let mut mapped = vec![false; logical as usize];
        for op in ops {
            match op {
                UnitOp::Write { lun, die } => {
                    let lun = lun % logical;
                    let before = ftl.lookup(lun as u32);
                    match ftl.write(lun, die % dies, HOST_STREAM) {
                        Ok(placed) => {
                            prop_assert_eq!(ftl.lookup(lun as u32), Some(placed.ppn));
                            mapped[lun as usize] = true;
                        }
                        Err(FtlError::NoSpace { .. }) => prop_assert_eq!(ftl.lookup(lun as u32), before),
                        Err(e) => return Err(TestCaseError::fail(e.to_string())),
                    }
                }
                UnitOp::Pad { die } => { ftl.pad(die % dies, HOST_STREAM); }
                UnitOp::Trim { lun, count } => {
                    for l in (lun % logical..(lun % logical + count).min(logical)).map(|l| l as usize) {
                        ftl.trim(l as u64).unwrap();
                        mapped[l] = false;
                    }
                }
                UnitOp::Collect { die } => {
                    ftl.collect(die % dies).map_err(|e| TestCaseError::fail(e.to_string()))?;
                }
            }
        }
        maps_exactly(&ftl, &mapped)?;
        let c = ftl.counters;
        // A programmed page is slots filled by host or GC units, or padding.
        prop_assert!(c.pages_programmed * u64::from(ftl.units_per_page())
            <= c.host_pages_written + c.gc_pages_moved + c.units_padded);
    }

    /// The timed drive, sector-mapped, with or without multi-plane reads and
    /// GC moves and a write-back cache: 4 KiB writes at any unit offset, partial-page TRIMs and
    /// FLUSHes. Every command completes once and well;
    /// afterwards exactly the units written and not trimmed are mapped.
    #[test]
    fn a_sector_mapped_drive_keeps_every_written_unit(
        script in prop::collection::vec((0u8..10, 0u64..600, 1u64..7, 0u64..400), 1..300),
        victim in any_victim(),
        multi_plane in any::<bool>(),
        cache_mib in 0u64..=1,
        power_protected in any::<bool>(),
    ) {
        let mut config = sector_config(2, 16, 8, victim);
        config.geometry.planes_per_die = 2;
        config.multi_plane.enabled = multi_plane;
        // No cache, or a write-back cache of 1 MiB (a quarter of the NAND).
        config.cache.size_mib = cache_mib;
        config.cache.power_protected = power_protected;
        config.interface.queue_depth = 8;
        config.interface.queued_trim = true;
        config.interface.queued_flush = true;
        let mut device = Device::new(config).unwrap();
        let units = device.capacity() / UNIT;
        let mut written = vec![false; units as usize];
        let (mut now, mut finished) = (Nanos::ZERO, Vec::new());
        let mut submitted = 0;
        for (id, (kind, unit, len, gap_us)) in script.into_iter().enumerate() {
            now += Nanos::from_micros(gap_us);
            let op = match kind { 0..=2 => Op::Read, 3..=7 => Op::Write, 8 => Op::Trim, _ => Op::Flush };
            let first = unit % units;
            let len = if op == Op::Flush { 0 } else { len.min(units - first) };
            // Trims and writes of one unit never overlap in the drive.
            now = wait_to_submit(&mut device, op, now, &mut finished);
            let request = Request::new(id as u64, op, first * UNIT, len * UNIT, now);
            device.submit(Command::single(request, now), now).unwrap();
            submitted += 1;
            if matches!(op, Op::Write | Op::Trim) {
                written[first as usize..(first + len) as usize].fill(op == Op::Write);
            }
        }
        run_out(&mut device, &mut finished);
        prop_assert_eq!(finished.len(), submitted);
        prop_assert!(finished.iter().all(|f| f.outcome == Outcome::Ok));
        maps_exactly(device.ftl(), &written)?;
    }
}
