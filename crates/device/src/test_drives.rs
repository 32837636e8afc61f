//! Drives cut down for tests, and the steps the property tests take with
//! them: small enough that GC runs within a few thousand writes.

use proptest::prelude::*;

use iosteer_sched::{Nanos, Op};

use crate::config::{DeviceConfig, VictimPolicy};
use crate::device::{Device, Finished};
use crate::ftl::Ftl;

/// consumer-sata (16 KiB pages) cut to `dies` one-plane dies of `blocks`
/// blocks of `pages` pages; `victim` GC between 2 and 3 free blocks a die
/// and 45% spare, so GC runs early and never runs out of victims.
pub(crate) fn tiny_sata(dies: u32, blocks: u32, pages: u32, victim: VictimPolicy) -> DeviceConfig {
    let mut c = DeviceConfig::preset("consumer-sata").unwrap();
    let g = &mut c.geometry;
    g.channels = dies;
    g.dies_per_channel = 1;
    g.planes_per_die = 1;
    g.blocks_per_plane = blocks;
    g.pages_per_block = pages;
    c.gc.victim = victim;
    c.gc.low_watermark = 2;
    c.gc.high_watermark = 3;
    c.over_provisioning = 0.45;
    c
}

/// [`tiny_sata`] with 4 KiB pages, page-mapped; GC writes to a frontier of
/// its own when `separate`.
pub(crate) fn tiny_4k_pages(
    dies: u32,
    blocks: u32,
    pages: u32,
    victim: VictimPolicy,
    separate: bool,
) -> DeviceConfig {
    let mut c = tiny_sata(dies, blocks, pages, victim);
    c.geometry.page_size = 4096;
    c.ftl.mapping_unit = 4096;
    c.gc.separate_frontier = separate;
    c
}

/// An empty FTL of `config`; the case is rejected if `config` is not a
/// valid drive (some random shapes leave too few blocks for the spare).
pub(crate) fn valid_ftl(config: &DeviceConfig) -> Result<Ftl, TestCaseError> {
    prop_assume!(config.validate().is_ok());
    Ok(Ftl::new(config))
}

/// Shapes of [`tiny_sata`]: 1-3 dies of 8 to `max_blocks` (excluded) blocks
/// of one of `pages` pages, and any victim policy.
pub(crate) fn tiny_shapes(
    max_blocks: u32,
    pages: Vec<u32>,
) -> impl Strategy<Value = (u32, u32, u32, VictimPolicy)> {
    (
        1u32..=3,
        8..max_blocks,
        prop::sample::select(pages),
        any_victim(),
    )
}

/// Any of the victim policies.
pub(crate) fn any_victim() -> impl Strategy<Value = VictimPolicy> {
    prop::sample::select(VictimPolicy::ALL.to_vec())
}

/// Advances `device` to `now`, after waiting (and moving `now` on) until it
/// accepts a command and, for a TRIM, until nothing is in flight, as a host
/// keeps a trim apart from the writes it overlaps. Returns the time then.
pub(crate) fn wait_to_submit(
    device: &mut Device,
    op: Op,
    mut now: Nanos,
    finished: &mut Vec<Finished>,
) -> Nanos {
    while !device.view().accepts() || (op == Op::Trim && device.view().in_flight > 0) {
        let t = device.next_event().expect("a busy device has an event");
        device.advance(t, finished);
        now = now.max(t);
    }
    device.advance(now, finished);
    now
}

/// Runs every event left on `device`.
pub(crate) fn run_out(device: &mut Device, finished: &mut Vec<Finished>) {
    while let Some(t) = device.next_event() {
        device.advance(t, finished);
    }
}

/// The FTL keeps its invariants and maps exactly the units marked in
/// `mapped` (indexed by logical unit).
pub(crate) fn maps_exactly(ftl: &Ftl, mapped: &[bool]) -> Result<(), TestCaseError> {
    ftl.check_invariants().map_err(TestCaseError::fail)?;
    for (unit, expected) in mapped.iter().enumerate() {
        prop_assert_eq!(
            ftl.lookup(unit as u32).is_some(),
            *expected,
            "unit {}",
            unit
        );
    }
    Ok(())
}
