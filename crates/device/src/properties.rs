//! Property tests of the FTL and the timed device over random operation
//! streams, geometries and victim policies.

use proptest::prelude::*;

use iosteer_sched::{Command, Nanos, Op, Request};

use crate::config::GcMode;
use crate::device::{Device, Finished};
use crate::ftl::{FtlError, HOST_STREAM};
use crate::test_drives::{
    any_victim, maps_exactly, run_out, tiny_4k_pages, tiny_shapes, valid_ftl, wait_to_submit,
};

#[derive(Clone, Debug)]
enum FtlOp {
    Write { lpn: u64, die: u32 },
    Trim { lpn: u64 },
    Collect { die: u32 },
}

fn ftl_ops() -> impl Strategy<Value = Vec<FtlOp>> {
    let op = prop_oneof![
        8 => (0u64..1000, 0u32..3).prop_map(|(lpn, die)| FtlOp::Write { lpn, die }),
        2 => (0u64..1000).prop_map(|lpn| FtlOp::Trim { lpn }),
        1 => (0u32..3).prop_map(|die| FtlOp::Collect { die }),
    ];
    prop::collection::vec(op, 1..3000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The map never points two logical pages at one physical page; valid
    /// counts equal the map; free + open + closed blocks equal the total; GC
    /// never erases a block holding valid data (asserted inside `erase`);
    /// TRIM then read finds nothing.
    #[test]
    fn the_ftl_keeps_its_invariants(
        ops in ftl_ops(),
        (dies, blocks, pages, victim) in tiny_shapes(24, vec![4, 8, 16]),
        separate in any::<bool>(),
    ) {
        let mut ftl = valid_ftl(&tiny_4k_pages(dies, blocks, pages, victim, separate))?;
        let logical = u64::from(ftl.logical_pages());
        for op in ops {
            match op {
                FtlOp::Write { lpn, die } => {
                    // The test picks dies unevenly, so a die may fill with
                    // valid data: refusing is right, corrupting is not.
                    let before = ftl.lookup((lpn % logical) as u32);
                    match ftl.write(lpn % logical, die % dies, HOST_STREAM) {
                        Ok(placed) => prop_assert_eq!(ftl.lookup((lpn % logical) as u32), Some(placed.ppn)),
                        Err(FtlError::NoSpace { .. }) => prop_assert_eq!(ftl.lookup((lpn % logical) as u32), before),
                        Err(e) => return Err(TestCaseError::fail(e.to_string())),
                    }
                }
                FtlOp::Trim { lpn } => {
                    ftl.trim(lpn % logical).unwrap();
                    prop_assert_eq!(ftl.lookup((lpn % logical) as u32), None);
                }
                FtlOp::Collect { die } => {
                    ftl.collect(die % dies).map_err(|e| TestCaseError::fail(e.to_string()))?;
                }
            }
        }
        ftl.check_invariants().map_err(TestCaseError::fail)?;
    }

    /// Every command completes exactly once, never before it was submitted;
    /// a non-queued TRIM starts only when every earlier command is done and
    /// nothing is accepted while it waits or runs.
    #[test]
    fn every_command_completes_once_and_non_queued_trims_drain(
        script in prop::collection::vec((0u8..10, 0u64..2000, 1u64..40, 0u64..300), 1..300),
        victim in any_victim(),
    ) {
        let mut config = tiny_4k_pages(2, 16, 16, victim, true);
        config.interface.queue_depth = 8;
        config.geometry.page_size = 4096;
        let mut device = Device::new(config).unwrap();
        let capacity_pages = device.capacity() / 4096;
        let mut now = Nanos::ZERO;
        let mut finished: Vec<Finished> = Vec::new();
        let mut submitted = Vec::new();
        for (id, (kind, page, pages, gap_us)) in script.into_iter().enumerate() {
            now += Nanos::from_micros(gap_us);
            while device.view().in_flight > 0 && !device.view().accepts() {
                let t = device.next_event().expect("a busy device has an event");
                device.advance(t, &mut finished);
                now = now.max(t);
            }
            device.advance(now, &mut finished);
            let op = match kind { 0..=4 => Op::Read, 5..=7 => Op::Write, 8 => Op::Trim, _ => Op::Flush };
            let (offset, len) = if op == Op::Flush { (0, 0) } else { ((page % capacity_pages) * 4096, pages * 4096) };
            let command = Command::single(Request::new(id as u64, op, offset, len, now), now);
            if device.view().accepts() {
                device.submit(command.clone(), now).unwrap();
                submitted.push((command, now));
            } else {
                prop_assert!(device.submit(command, now).is_err(), "a draining device must refuse");
            }
        }
        run_out(&mut device, &mut finished);
        prop_assert_eq!(finished.len(), submitted.len());
        let mut seen = std::collections::HashSet::new();
        for f in &finished {
            prop_assert!(seen.insert(f.command.requests[0].id), "completed twice");
            let (_, at) = submitted.iter().find(|(c, _)| c.requests[0].id == f.command.requests[0].id).unwrap();
            prop_assert!(f.at >= *at);
        }
        // Non-queued trims: every command submitted before one finished by its
        // start (its completion minus at least its fixed cost).
        for (i, (trim, _)) in submitted.iter().enumerate().filter(|(_, (c, _))| c.op == Op::Trim) {
            let trim_done = finished.iter().find(|f| f.command.requests[0].id == trim.requests[0].id).unwrap().at;
            let start_bound = trim_done - Nanos::from_micros(2000);
            for (earlier, _) in &submitted[..i] {
                let done = finished.iter().find(|f| f.command.requests[0].id == earlier.requests[0].id).unwrap().at;
                prop_assert!(done <= start_bound, "command {} ran during a non-queued trim", earlier.requests[0].id.0);
            }
        }
        device.ftl().check_invariants().map_err(TestCaseError::fail)?;
    }

    /// Whatever the GC mode and preemption thresholds, GC never loses or
    /// duplicates a page: after random writes, reads and trims (each trim
    /// after the drive went idle, as a host keeps overlapping commands
    /// apart), exactly the pages written and not trimmed since are mapped,
    /// each to its own physical page.
    #[test]
    fn gc_under_any_preemption_keeps_every_written_page(
        script in prop::collection::vec((0u8..10, 0u64..400, 1u64..8, 0u64..200), 1..400),
        victim in any_victim(),
        preemptive in any::<bool>(),
        pipeline in any::<bool>(),
        state3_below in 1u32..4,
        extra in 0u32..3,
    ) {
        let mut config = tiny_4k_pages(2, 16, 8, victim, true);
        config.gc.mode = if preemptive { GcMode::SemiPreemptive } else { GcMode::Blocking };
        config.gc.pipeline = pipeline;
        config.gc.state3_below = state3_below;
        config.gc.state2_below = state3_below + extra;
        config.interface.queue_depth = 8;
        config.interface.queued_trim = true;
        let mut device = Device::new(config).unwrap();
        let pages = device.capacity() / 4096;
        let mut written = vec![false; pages as usize];
        let (mut now, mut finished) = (Nanos::ZERO, Vec::new());
        for (id, (kind, page, len, gap_us)) in script.into_iter().enumerate() {
            now += Nanos::from_micros(gap_us);
            let op = match kind { 0..=3 => Op::Read, 4..=8 => Op::Write, _ => Op::Trim };
            let first = page % pages;
            let len = len.min(pages - first);
            now = wait_to_submit(&mut device, op, now, &mut finished);
            let request = Request::new(id as u64, op, first * 4096, len * 4096, now);
            device.submit(Command::single(request, now), now).unwrap();
            if op != Op::Read {
                written[first as usize..(first + len) as usize].fill(op == Op::Write);
            }
        }
        run_out(&mut device, &mut finished);
        prop_assert!(finished.iter().all(|f| f.outcome == iosteer_sched::Outcome::Ok));
        maps_exactly(device.ftl(), &written)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Behind a write-back cache, with FUA and plain writes, reads, flushes
    /// and (kept apart) trims, queued or not, page- or sector-mapped: every
    /// command completes once, the drive ends with nothing cached, exactly
    /// the units written and not trimmed since are mapped, and a FUA write
    /// on a cache without power protection completes no sooner than a
    /// page program after it was submitted (it was not acked from DRAM).
    #[test]
    fn fua_writes_behind_a_cache_lose_nothing_and_wait_for_the_media(
        script in prop::collection::vec((0u8..12, 0u64..300, 1u64..6, 0u64..300), 1..250),
        cache_mib in 1u64..3,
        power_protected in any::<bool>(),
        queued in any::<bool>(),
        sector_mapped in any::<bool>(),
    ) {
        // 8 MiB of NAND (32 MiB sector-mapped), so a cache of 1-2 MiB fits.
        let mut config = tiny_4k_pages(2, 64, 16, crate::config::VictimPolicy::Greedy, true);
        if sector_mapped {
            config.geometry.page_size = 16384;
        }
        config.cache.size_mib = cache_mib;
        config.cache.policy = crate::config::CachePolicy::WriteBack;
        config.cache.power_protected = power_protected;
        config.interface.queue_depth = 8;
        (config.interface.queued_trim, config.interface.queued_flush) = (queued, queued);
        let program = Nanos::from_micros(config.timing.page_program_us as u64);
        let mut device = Device::new(config).unwrap();
        let units = device.capacity() / 4096;
        let mut written = vec![false; units as usize];
        let (mut now, mut finished, mut submitted) = (Nanos::ZERO, Vec::new(), Vec::new());
        for (id, (kind, unit, len, gap_us)) in script.into_iter().enumerate() {
            now += Nanos::from_micros(gap_us);
            let (op, fua) = match kind { 0..=3 => (Op::Read, false), 4..=6 => (Op::Write, false),
                7..=9 => (Op::Write, true), 10 => (Op::Trim, false), _ => (Op::Flush, false) };
            let first = unit % units;
            let len = if op == Op::Flush { 0 } else { len.min(units - first) };
            now = wait_to_submit(&mut device, op, now, &mut finished);
            let request = Request::new(id as u64, op, first * 4096, len * 4096, now).with_fua(fua);
            device.submit(Command::single(request, now), now).unwrap();
            submitted.push((id as u64, fua, now));
            if matches!(op, Op::Write | Op::Trim) {
                written[first as usize..(first + len) as usize].fill(op == Op::Write);
            }
        }
        run_out(&mut device, &mut finished);
        prop_assert_eq!(finished.len(), submitted.len());
        let mut seen = std::collections::HashSet::new();
        for f in &finished {
            let id = f.command.requests[0].id.0;
            prop_assert!(seen.insert(id), "completed twice");
            let (_, fua, at) = submitted[id as usize];
            prop_assert!(f.at >= at);
            if fua && !power_protected {
                prop_assert!(f.at >= at + program, "FUA write {} acked after {:?}", id, f.at - at);
            }
        }
        prop_assert_eq!(device.view().in_flight, 0);
        maps_exactly(device.ftl(), &written)?;
    }
}
