//! Tests of the timed drive: latencies a page operation should cost, the
//! draining of non-queued TRIM, idle and foreground GC, the semi-preemptive
//! states, merge and suspend, and aging. Some reach into a die's queue to set
//! up a state that a command stream would reach only by luck.

use iosteer_sched::{Command, Nanos, Op, Outcome, Request};

use super::dies::{PageTask, Running};
use super::{Device, Finished, Precondition, UnwrittenReads};
use crate::config::{DeviceConfig, GcMode};
use crate::ftl::GcWork;

/// consumer-sata scaled down to 64 blocks a plane, so aging takes little
/// time; 20% spare keeps GC from running out of victims.
pub(super) fn small_sata_config() -> DeviceConfig {
    let mut c = DeviceConfig::preset("consumer-sata").unwrap();
    c.geometry.blocks_per_plane = 64;
    c.gc.high_watermark = 8;
    c.over_provisioning = 0.2;
    c
}

fn small_sata() -> Device {
    Device::new(small_sata_config()).unwrap()
}

/// Runs one `op` of `len` bytes at offset 0 from time zero on a fresh drive;
/// what finished.
pub(super) fn run_first(d: &mut Device, op: Op, len: u64) -> Vec<Finished> {
    d.submit(cmd(1, op, 0, len, Nanos::ZERO), Nanos::ZERO)
        .unwrap();
    run_until_idle(d)
}

pub(super) fn cmd(id: u64, op: Op, offset: u64, len: u64, now: Nanos) -> Command {
    Command::single(Request::new(id, op, offset, len, now), now)
}

/// Advances `d` until it accepts a command; returns the time then.
fn wait_for_a_slot(d: &mut Device, mut now: Nanos, done: &mut Vec<Finished>) -> Nanos {
    while !d.view().accepts() {
        let t = d.next_event().unwrap();
        d.advance(t, done);
        now = now.max(t);
    }
    now
}

/// A drive of `config` whose first page was written; when it completed.
fn first_page_written(config: DeviceConfig) -> (Device, Nanos) {
    let mut d = Device::new(config).unwrap();
    let t = run_first(&mut d, Op::Write, 16384)[0].at;
    (d, t)
}

/// Runs every event until the drive is idle; what finished.
pub(super) fn run_until_idle(device: &mut Device) -> Vec<Finished> {
    let mut done = Vec::new();
    while let Some(t) = device.next_event() {
        if device.idle() {
            break;
        }
        device.advance(t, &mut done);
    }
    done
}

#[test]
fn a_read_of_unwritten_space_costs_no_nand_time() {
    let mut d = small_sata();
    let done = run_first(&mut d, Op::Read, 16384);
    assert_eq!(done.len(), 1);
    assert_eq!(d.stats().host_pages_read, 0);
    // 20 us overhead + 16 KiB over a 550 MB/s link (~30 us).
    assert!(done[0].at < Nanos::from_micros(60), "{:?}", done[0].at);
    let counted = UnwrittenReads {
        touching: 1,
        wholly: 1,
    };
    assert_eq!(d.stats().unwritten_reads, counted, "the report says so");
}

#[test]
fn a_written_page_reads_back_with_nand_time() {
    let mut d = small_sata();
    let write = run_first(&mut d, Op::Write, 16384);
    assert!(
        write[0].at > Nanos::from_micros(650),
        "a program takes tPROG"
    );
    let t = write[0].at;
    d.submit(cmd(2, Op::Read, 0, 16384, t), t).unwrap();
    let read = run_until_idle(&mut d);
    let latency = read[0].at - t;
    assert!(
        latency >= Nanos::from_micros(60 + 40) && latency < Nanos::from_micros(200),
        "{latency:?}"
    );
    assert_eq!(d.stats().host_pages_read, 1);
    assert_eq!(d.stats().unwritten_reads, UnwrittenReads::default());
}

#[test]
fn writes_of_part_of_a_mapping_unit_are_counted_with_the_host_bytes() {
    let mut d = small_sata();
    assert_eq!(d.stats().mapping_unit, 16384);
    run_first(&mut d, Op::Write, 16384);
    let t = Nanos::from_millis(10);
    d.submit(cmd(2, Op::Write, 4096, 4096, t), t).unwrap();
    run_until_idle(&mut d);
    let stats = d.stats();
    assert_eq!(
        (stats.partial_unit_writes, stats.host_bytes_written),
        (1, 20480)
    );
    // Two whole units programmed for 20 KiB from the host.
    assert_eq!(
        stats.ftl.pages_programmed * u64::from(stats.page_size),
        32768
    );
}

/// A read of part of a page moves only that part over the channel: the
/// array read fills the page register, and the die sends out the columns
/// asked for. A 4 KiB read of a 16 KiB page at 200 MB/s moved all 16 KiB
/// (82 us of channel time where 20.5 suffice).
#[test]
fn a_read_of_part_of_a_page_moves_only_that_part_over_the_channel() {
    let mut c = small_sata_config();
    c.timing.channel_mb_per_s = 200.0;
    let (mut d, t) = first_page_written(c);
    let latency = |d: &mut Device, id: u64, offset: u64, len: u64, at: Nanos| {
        d.submit(cmd(id, Op::Read, offset, len, at), at).unwrap();
        run_until_idle(d)[0].at - at
    };
    let whole = latency(&mut d, 2, 0, 16384, t);
    let quarter = latency(&mut d, 3, 4096, 4096, t + whole);
    // The channel part (16 KiB at 200 MB/s: 81.9 us) and the link's (at
    // 550 MB/s) shrink to a quarter; the array read and overhead stay.
    let saved = whole - quarter;
    let expected = Nanos(61_440 + 22_340);
    assert!(
        saved.0.abs_diff(expected.0) < 1_000,
        "saved {saved:?}, expected {expected:?}"
    );
    // 200 bytes across a sector boundary move both sectors: one sector
    // more over the channel (512 bytes at 200 MB/s), the same over the link.
    let at = t + whole + quarter;
    let straddling = latency(&mut d, 4, 4000, 200, at);
    let one_sector = latency(&mut d, 5, 4096, 200, at + straddling);
    assert_eq!(straddling - one_sector, Nanos(2_560));
}

#[test]
fn a_read_behind_a_program_on_its_die_waits_for_it() {
    let mut c = small_sata_config();
    c.geometry.channels = 1;
    let (mut d, t) = first_page_written(c);
    d.submit(cmd(2, Op::Write, 16384, 16384, t), t).unwrap();
    d.submit(cmd(3, Op::Read, 0, 16384, t), t).unwrap();
    let done = run_until_idle(&mut d);
    let read = done.iter().find(|f| f.command.op == Op::Read).unwrap();
    assert!(
        read.at - t > Nanos::from_micros(650),
        "waited behind the program"
    );
    assert!(d.stats().read_waits.behind_program > Nanos::from_micros(500));
}

#[test]
fn a_non_queued_trim_drains_the_queue_then_holds_it() {
    let mut d = small_sata();
    for i in 0..4 {
        d.submit(
            cmd(i, Op::Write, i * 16384, 16384, Nanos::ZERO),
            Nanos::ZERO,
        )
        .unwrap();
    }
    d.submit(cmd(9, Op::Trim, 0, 65536, Nanos::ZERO), Nanos::ZERO)
        .unwrap();
    assert!(d.view().draining, "the trim waits for the queue to drain");
    assert!(!d.view().accepts());
    assert!(d
        .submit(cmd(10, Op::Read, 0, 4096, Nanos::ZERO), Nanos::ZERO)
        .is_err());
    let mut done = Vec::new();
    let mut writes_done = Nanos::ZERO;
    while let Some(t) = d.next_event() {
        d.advance(t, &mut done);
        if let Some(last) = done
            .iter()
            .filter(|f| f.command.op == Op::Write)
            .map(|f| f.at)
            .max()
        {
            writes_done = last;
        }
        if done.iter().any(|f| f.command.op == Op::Trim) {
            break;
        }
        if done.len() == 4 {
            assert!(d.view().draining, "the trim runs alone and holds the queue");
        }
    }
    let trim = done.iter().find(|f| f.command.op == Op::Trim).unwrap();
    assert!(done
        .iter()
        .filter(|f| f.command.op == Op::Write)
        .all(|f| f.at <= writes_done));
    assert!(
        trim.at >= writes_done + Nanos::from_micros(2000),
        "the trim starts after the drain"
    );
    assert!(!d.view().draining && d.view().accepts());
    assert_eq!(d.ftl().lookup(0), None, "trimmed");
}

#[test]
fn a_queued_trim_does_not_drain() {
    let mut d = Device::new(DeviceConfig::preset("enterprise-nvme").unwrap()).unwrap();
    d.submit(cmd(1, Op::Write, 0, 16384, Nanos::ZERO), Nanos::ZERO)
        .unwrap();
    d.submit(cmd(2, Op::Trim, 1 << 20, 65536, Nanos::ZERO), Nanos::ZERO)
        .unwrap();
    assert!(!d.view().draining);
    assert_eq!(d.view().in_flight, 2);
}

#[test]
fn out_of_range_commands_fail_without_panicking() {
    let mut d = small_sata();
    let cap = d.capacity();
    d.submit(cmd(1, Op::Read, cap, 4096, Nanos::ZERO), Nanos::ZERO)
        .unwrap();
    d.submit(
        cmd(2, Op::Write, u64::MAX - 10, 4096, Nanos::ZERO),
        Nanos::ZERO,
    )
    .unwrap();
    let done = run_until_idle(&mut d);
    assert!(done.iter().all(|f| f.outcome == Outcome::Error));
    assert_eq!(d.stats().errors, 2);
}

#[test]
fn idle_gc_refills_the_pool_only_after_the_idle_time() {
    let mut d = small_sata();
    d.precondition(Precondition::default()).unwrap();
    let pages = 2048u64;
    let mut now = Nanos::ZERO;
    let mut done = Vec::new();
    for i in 0..pages {
        now = wait_for_a_slot(&mut d, now, &mut done);
        d.submit(
            cmd(i, Op::Write, (i * 7919 % 4000) * 16384, 16384, now),
            now,
        )
        .unwrap();
    }
    done.extend(run_until_idle(&mut d));
    let low = d.ftl().total_free_blocks();
    let idle_at = done.iter().map(|f| f.at).max().unwrap();
    assert!(low < 8 * 8, "writes used the pool ({low} free)");
    // Nothing happens before 100 ms of idleness.
    d.advance(idle_at + Nanos::from_millis(99), &mut done);
    assert_eq!(d.ftl().total_free_blocks(), low);
    assert_eq!(d.stats().background_victims, 0);
    while let Some(t) = d.next_event() {
        d.advance(t, &mut done);
    }
    assert_eq!(
        d.ftl().total_free_blocks(),
        8 * 8,
        "refilled to the high watermark"
    );
    assert!(d.stats().background_victims > 0);
    d.ftl().check_invariants().unwrap();
}

/// Worst read latency while random writes force foreground GC.
fn worst_read_under_gc(mode: GcMode) -> Nanos {
    let mut c = small_sata_config();
    c.gc.high_watermark = 5;
    c.gc.mode = mode;
    let mut d = Device::new(c).unwrap();
    d.precondition(Precondition::default()).unwrap();
    let pages = d.capacity() / 16384;
    let (mut now, mut worst, mut done) = (Nanos::ZERO, Nanos::ZERO, Vec::new());
    for i in 0..6000u64 {
        now = wait_for_a_slot(&mut d, now, &mut done);
        let op = if i % 4 == 0 { Op::Read } else { Op::Write };
        d.submit(cmd(i, op, (i * 7919 % pages) * 16384, 16384, now), now)
            .unwrap();
        for f in done.drain(..).filter(|f| f.command.op == Op::Read) {
            worst = worst.max(f.at - f.command.dispatched);
        }
    }
    assert!(d.stats().foreground_victims > 0, "GC ran");
    worst
}

#[test]
fn semi_preemptive_gc_bounds_a_reads_wait() {
    let blocking = worst_read_under_gc(GcMode::Blocking);
    let paced = worst_read_under_gc(GcMode::SemiPreemptive);
    assert!(
        paced.0 * 3 < blocking.0,
        "paced {paced:?} vs blocking {blocking:?}"
    );
}

/// Die 0 of a fresh semi-preemptive drive owing erases that leave it
/// `erased` erased blocks, with a write then a read queued behind.
fn die_owing_gc(mode: GcMode, erased: u32) -> Device {
    let mut d = small_sata();
    d.config.gc.mode = mode;
    let free = d.ftl.free_blocks(0);
    d.owe_gc(
        0,
        GcWork {
            pages_moved: 0,
            blocks_erased: free - erased,
            ..GcWork::default()
        },
        false,
    );
    for write in [true, false] {
        d.dies[0].host.push_back(PageTask {
            slot: 0,
            write,
            lpn: 0,
            placed: true,
            group: super::buffer::NO_GROUP,
            page: 0,
            stream: 0,
            bytes: 16384,
            arrived: Nanos::ZERO,
            seen: [Nanos::ZERO; 3],
        });
    }
    d
}

#[test]
fn a_write_merged_with_an_owed_move_keeps_the_new_data() {
    let mut d = small_sata();
    d.precondition(Precondition::default()).unwrap();
    let work = d.ftl.collect(0).unwrap().expect("an aged die has a victim");
    assert!(work.pages_moved > 1);
    d.owe_gc(0, work, false);
    let lpn = *d.dies[0].pending.front().unwrap();
    let gc_copy = d.ftl.lookup(lpn).unwrap();
    // The write lands on another die (die 0 owes GC) and is placed at
    // once, while die 0 has not started the move.
    d.submit(
        cmd(1, Op::Write, u64::from(lpn) * 16384, 16384, Nanos::ZERO),
        Nanos::ZERO,
    )
    .unwrap();
    assert_eq!(d.stats().merged_writes, 1);
    d.run_next(0, Nanos::ZERO);
    let mut done = run_until_idle(&mut d);
    while d.dies[0].owes_gc() || d.dies[0].running.is_some() {
        let t = d.next_event().unwrap();
        d.advance(t, &mut done);
    }
    assert_eq!(d.stats().background_victims, 0);
    let t = d.dies[0].busy_until;
    let host_copy = d.ftl.lookup(lpn).unwrap();
    assert_ne!(host_copy, gc_copy, "the host's data, not GC's copy");
    let moved = u64::from(work.pages_moved - 1) * (d.t_read.0 + d.t_program.0);
    assert_eq!(
        d.stats().dies[0].gc,
        Nanos(moved + d.t_erase.0),
        "one move fewer"
    );
    d.submit(cmd(2, Op::Read, u64::from(lpn) * 16384, 16384, t), t)
        .unwrap();
    let read = run_until_idle(&mut d);
    assert_eq!(read[0].outcome, Outcome::Ok);
    assert_eq!(d.ftl.lookup(lpn), Some(host_copy));
    d.ftl.check_invariants().unwrap();
}

/// Latency of a read reaching die 0 1 ms into a 5 ms GC erase.
fn read_during_an_erase(suspend: bool) -> Nanos {
    let mut d = small_sata();
    d.config.gc.suspend = suspend;
    d.precondition(Precondition::default()).unwrap();
    let lpn = (0..d.ftl.logical_pages())
        .find(|l| d.ftl.lookup(*l).is_some_and(|p| d.ftl.die_of(p) == 0))
        .unwrap();
    let erase = GcWork {
        pages_moved: 0,
        blocks_erased: 1,
        ..GcWork::default()
    };
    d.owe_gc(0, erase, false);
    d.run_next(0, Nanos::ZERO);
    let t = Nanos::from_millis(1);
    d.submit(cmd(1, Op::Read, u64::from(lpn) * 16384, 16384, t), t)
        .unwrap();
    let done = run_until_idle(&mut d);
    assert_eq!(d.stats().gc_suspensions, u64::from(suspend));
    done[0].at - t
}

#[test]
fn a_suspended_erase_lets_a_read_through() {
    let waited = read_during_an_erase(false);
    assert!(waited > Nanos::from_millis(4), "{waited:?}");
    let suspended = read_during_an_erase(true);
    assert!(suspended < Nanos::from_micros(300), "{suspended:?}");
}

#[test]
fn preemption_follows_the_free_block_states() {
    // consumer-sata: state 2 below 2 erased blocks, state 3 below 1.
    let state1 = die_owing_gc(GcMode::SemiPreemptive, 2);
    assert_eq!(state1.gc_state(0), 1);
    assert_eq!(state1.preempting_task(0), Some(0), "the write goes first");
    let state2 = die_owing_gc(GcMode::SemiPreemptive, 1);
    assert_eq!(state2.gc_state(0), 2);
    assert_eq!(
        state2.preempting_task(0),
        Some(1),
        "only the read goes first"
    );
    let state3 = die_owing_gc(GcMode::SemiPreemptive, 0);
    assert_eq!(state3.gc_state(0), 3);
    assert_eq!(state3.preempting_task(0), None, "GC goes first");
    let blocking = die_owing_gc(GcMode::Blocking, 2);
    assert_eq!(blocking.preempting_task(0), None, "NPGC never yields");
}

#[test]
fn a_state_3_die_pays_its_gc_before_any_host_request() {
    let mut d = die_owing_gc(GcMode::SemiPreemptive, 0);
    d.run_next(0, Nanos::ZERO);
    // Each erase raises the erased count; the first host request starts
    // only once the die is out of state 3.
    let mut erases = 0;
    while matches!(d.dies[0].running, Some(Running::Gc)) {
        let at = d.dies[0].busy_until;
        d.dies[0].running = None;
        erases += 1;
        d.run_next(0, at);
    }
    assert_eq!(erases, 1, "one erase leaves state 3");
    assert!(
        matches!(d.dies[0].running, Some(Running::Host(t)) if !t.write),
        "then the read"
    );
}

#[test]
fn idle_fifo_gc_stops_when_victims_are_full_of_valid_data() {
    let mut c = small_sata_config();
    c.gc.victim = crate::config::VictimPolicy::Fifo;
    let mut d = Device::new(c).unwrap();
    // Written once, never overwritten: every closed block is fully valid.
    let mut now = Nanos::ZERO;
    let mut done = Vec::new();
    for i in 0..2000u64 {
        now = wait_for_a_slot(&mut d, now, &mut done);
        d.submit(cmd(i, Op::Write, i * 16384 * 8, 16384 * 8, now), now)
            .unwrap();
    }
    let mut events = 0;
    while let Some(t) = d.next_event() {
        d.advance(t, &mut done);
        events += 1;
        assert!(events < 100_000, "idle GC never stops");
    }
    d.ftl().check_invariants().unwrap();
}

#[test]
fn preconditioning_ages_the_drive() {
    let mut d = small_sata();
    d.precondition(Precondition::default()).unwrap();
    d.ftl().check_invariants().unwrap();
    assert_eq!(d.stats().ftl.host_pages_written, 0, "counters start afresh");
    let wear = d.stats().wear;
    assert!(
        wear.max > 0 && wear.mean > 0.0 && wear.min <= wear.max,
        "wear is kept: {wear:?}"
    );
    assert_eq!(d.ftl().total_free_blocks(), 8 * 8);
}

#[test]
fn the_gc_mode_changes_only_on_a_drive_that_owes_no_gc() {
    let mut d = die_owing_gc(GcMode::SemiPreemptive, 1);
    let busy = d.set_gc_mode(GcMode::Blocking).unwrap_err();
    assert_eq!(busy.requested, GcMode::Blocking);
    let message = busy.to_string();
    assert!(
        message.contains("`gc.mode`") && message.contains("blocking"),
        "{message}"
    );
    assert!(!message.contains("--"), "no command-line flags: {message}");
    let mut idle = small_sata();
    idle.set_gc_mode(GcMode::Blocking).unwrap();
    assert_eq!(idle.config().gc.mode, GcMode::Blocking);
}

#[test]
fn device_error_shows_each_error_unchanged() {
    let preset = DeviceConfig::preset("no-such-drive").unwrap_err();
    let wrapped = crate::DeviceError::from(preset.clone());
    assert_eq!(wrapped.to_string(), preset.to_string());
}

/// Merge saves the moves a host write supersedes, and no more: a move it
/// cancelled leaves its page in GC's open block erased only until the
/// die's moves pass it. Counted until the die owed nothing, which under
/// sustained writes it never does, the cancelled moves piled up as erased
/// blocks that did not exist; the die stayed in state 1, host writes went
/// before its GC, and the GC it owed grew without bound (4 KiB random
/// writes at queue depth 32 on an 8 GiB drive: 1.9 times the writes of the
/// same drive without merge, on the die time of a third of its moves).
#[test]
fn merged_moves_do_not_let_the_gc_a_die_owes_grow_without_bound() {
    const WRITES: u64 = 400_000;
    let sustained_writes = |merge: bool| {
        let mut c = small_sata_config();
        c.gc.merge = merge;
        let mut d = Device::new(c).unwrap();
        d.precondition(Precondition::default()).unwrap();
        let pages = d.capacity() / 16384;
        let (mut now, mut done, mut most_owed) = (Nanos::ZERO, Vec::new(), 0);
        let mut state = 1u64;
        for id in 0..WRITES {
            now = wait_for_a_slot(&mut d, now, &mut done);
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let lpn = (state >> 33) % pages;
            d.submit(cmd(id, Op::Write, lpn * 16384, 4096, now), now)
                .unwrap();
            most_owed = most_owed.max(d.dies.iter().map(|die| die.owed_moves).max().unwrap());
        }
        (now, most_owed)
    };
    let (with_merge, owed_with) = sustained_writes(true);
    let (without, owed_without) = sustained_writes(false);
    let pages_per_block = small_sata_config().geometry.pages_per_block;
    assert!(owed_with < 8 * pages_per_block, "{owed_with} moves owed");
    // Merge may save the moves it cancels, a small share here.
    let ratio = without.0 as f64 / with_merge.0 as f64;
    assert!(
        (0.9..1.1).contains(&ratio),
        "{ratio}: {with_merge:?} {without:?}, owed {owed_with} {owed_without}"
    );
}
