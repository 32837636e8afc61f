//! Tests of where and how dies work: multi-plane operations (a sequential
//! extent on a 2-plane die reads and programs in half the array operations,
//! and GC's moves pair up the same way) and striped write placement.

use iosteer_sched::{Command, Nanos, Op, Request};

use super::tests::{run_first, run_until_idle, small_sata_config};
use super::Device;
use crate::config::GcMode;
use crate::ftl::GcWork;

/// One 2-plane die of consumer-sata with a channel so fast that die time is
/// array time; multi-plane on or off.
fn one_die(multi_plane: bool) -> Device {
    let mut c = small_sata_config();
    c.geometry.channels = 1;
    c.timing.channel_mb_per_s = 1e6;
    c.multi_plane.enabled = multi_plane;
    Device::new(c).unwrap()
}

/// Die time of reading back a 128 KiB extent just written.
fn die_time_of_a_128k_read(multi_plane: bool) -> Nanos {
    let mut d = one_die(multi_plane);
    let len = 128 << 10;
    let t = run_first(&mut d, Op::Write, len)[0].at;
    let before = d.stats().dies[0].busy;
    d.submit(Command::single(Request::new(2, Op::Read, 0, len, t), t), t)
        .unwrap();
    run_until_idle(&mut d);
    d.stats().dies[0].busy - before
}

#[test]
fn a_128k_read_on_two_planes_takes_about_half_the_die_time() {
    let single = die_time_of_a_128k_read(false);
    let multi = die_time_of_a_128k_read(true);
    let ratio = multi.0 as f64 / single.0 as f64;
    eprintln!("128 KiB read, die time: {single:?} single-plane, {multi:?} two-plane ({ratio:.3})");
    // 8 reads of 60 us against 4 of 60 + 2 us.
    assert!(
        (0.45..0.6).contains(&ratio),
        "{multi:?} / {single:?} = {ratio}"
    );
}

/// Die time, and completion, of writing `len` bytes at offset 0.
fn write_on_one_die(mut d: Device, len: u64) -> (Nanos, Nanos) {
    let done = run_first(&mut d, Op::Write, len);
    assert_eq!(done.len(), 1);
    (d.stats().dies[0].busy, done[0].at)
}

#[test]
fn a_two_page_write_on_two_planes_takes_one_program_and_the_plane_overhead() {
    let page = 16 << 10;
    let (single, _) = write_on_one_die(one_die(false), 2 * page);
    let (multi, _) = write_on_one_die(one_die(true), 2 * page);
    let d = one_die(true);
    // consumer-sata: 650 us programs, 2 us per extra plane; the channel is
    // near-instant here.
    let program = d.t_program.0 as f64;
    let plane = d.t_plane_extra.0 as f64;
    eprintln!("2-page write, die time: {single:?} single-plane, {multi:?} two-plane");
    assert!(
        (single.0 as f64 - 2.0 * program).abs() < 0.01 * program,
        "{single:?}"
    );
    let expected = program + plane;
    assert!(
        (multi.0 as f64 - expected).abs() < 0.01 * program,
        "{multi:?}, expected about {expected} ns"
    );
}

#[test]
fn a_128k_write_on_two_planes_programs_pairs_at_one_offset() {
    let mut c = one_die(true).config.clone();
    c.multi_plane.same_page_offset = true;
    let (single, _) = write_on_one_die(one_die(false), 128 << 10);
    let (multi, _) = write_on_one_die(Device::new(c).unwrap(), 128 << 10);
    let ratio = multi.0 as f64 / single.0 as f64;
    // 8 programs against 4 of two pages (the frontier starts at plane 0).
    assert!((0.49..0.52).contains(&ratio), "{multi:?} / {single:?}");
}

#[test]
fn a_sector_mapped_write_programs_its_pages_two_planes_at_a_time() {
    let mut c = one_die(true).config.clone();
    c.ftl.mapping_unit = 4096;
    let mut off = c.clone();
    off.multi_plane.enabled = false;
    let (single, _) = write_on_one_die(Device::new(off).unwrap(), 128 << 10);
    let (multi, _) = write_on_one_die(Device::new(c).unwrap(), 128 << 10);
    let ratio = multi.0 as f64 / single.0 as f64;
    assert!((0.49..0.52).contains(&ratio), "{multi:?} / {single:?}");
}

#[test]
fn gc_moves_pair_up_on_two_planes() {
    let owed = |multi_plane: bool| {
        let mut d = one_die(multi_plane);
        d.config.gc.mode = GcMode::Blocking;
        let victim = GcWork {
            pages_moved: 64,
            blocks_erased: 1,
            ..GcWork::default()
        };
        d.owe_gc(0, victim, false);
        d.dies[0].owed_time
    };
    let (single, multi) = (owed(false), owed(true));
    // 64 moves of 710 us + 5 ms erase against 32 of 714 us + the erase.
    assert!(multi.0 * 10 < single.0 * 7, "{multi:?} vs {single:?}");
}

#[test]
fn striped_writes_go_to_the_die_of_their_page() {
    let mut c = small_sata_config();
    c.ftl.write_placement = crate::config::WritePlacement::Striped;
    let mut d = Device::new(c).unwrap();
    // Pages 3, 11 and 19 of an 8-die drive: all on die 3, one after another.
    for (id, page) in [3u64, 11, 19].into_iter().enumerate() {
        let request = Request::new(id as u64, Op::Write, page * 16384, 16384, Nanos::ZERO);
        d.submit(Command::single(request, Nanos::ZERO), Nanos::ZERO)
            .unwrap();
    }
    let done = run_until_idle(&mut d);
    for page in [3u32, 11, 19] {
        assert_eq!(d.ftl().die_of(d.ftl().lookup(page).unwrap()), 3);
    }
    let last = done.iter().map(|f| f.at).max().unwrap();
    assert!(
        last > Nanos::from_micros(3 * 650),
        "{last:?}: queued on one die"
    );
}
