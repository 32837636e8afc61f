//! steer's tests: the objective's rules, the baseline, the control law on a
//! bench with a settable read time, the write deadline, held reads and trims.

use super::objective::{self, Percentile};
use super::*;
use crate::config::{apply_pairs, ConfigError};
use crate::objective::Bound;
use crate::objective::ObjectiveError;
use crate::ordering::Queued;
use crate::policy::testkit::{configured, Bench};
use crate::request::Command;
use crate::scheduler::Scheduler;

fn steer(settings: &str) -> Steer {
    Steer::new(configured(settings))
}

#[test]
fn objectives_parse_and_bad_ones_are_refused() {
    let o = objective::parse("objective", "p99<=2x").unwrap();
    assert_eq!(o.bound, Bound::Relative(2.0));
    assert!((o.allowed_misses() - 0.01).abs() < 1e-12);
    let o = objective::parse("objective", "p99.9<=5ms").unwrap();
    assert_eq!(o.bound, Bound::Absolute(Nanos::from_millis(5)));
    for bad in [
        "p99",
        "p95<=2x",
        "p99<=0.5x",
        "p99<=5",
        "p99<=0ms",
        "mean<=2x",
    ] {
        assert!(objective::parse("objective", bad).is_err(), "{bad}");
    }
    // The grammar is the shared one; steer refuses what it cannot count.
    let err = apply_pairs(&mut SteerConfig::default(), "objective=max<=5ms").unwrap_err();
    assert!(
        matches!(
            &err,
            ConfigError::Objective { reason, .. }
                if matches!(**reason, ObjectiveError::NotAPercentile { .. })
        ),
        "{err}"
    );
    let mut c = SteerConfig::default();
    assert!(apply_pairs(&mut c, "min_rate=500,start_rate=100").is_err());
}

/// Reads every 1 ms for `ms` from `bench.now`, with a backlog of writes;
/// the device's read latency is `read_us`.
fn load(s: &mut Steer, bench: &mut Bench, ms: u64, id: &mut u64) {
    let end = bench.now + Nanos::from_millis(ms);
    while bench.now < end {
        let at = bench.now;
        bench.submit(s, Request::new(*id, Op::Read, (*id % 1000) << 20, 4096, at));
        *id += 1;
        if s.stats().class(Op::Write).queued < 64 {
            let w = Request::new(*id, Op::Write, (1 << 40) + (*id << 17), 128 << 10, at);
            bench.submit(s, w);
            *id += 1;
        }
        bench.advance(s, at + Nanos::from_millis(1));
    }
}

/// A bench whose reads take the returned cell's microseconds, writes
/// 500 us.
fn bench_with_read_time(read_us: u64) -> (Bench, std::rc::Rc<std::cell::Cell<u64>>) {
    let read_us = std::rc::Rc::new(std::cell::Cell::new(read_us));
    let latency = read_us.clone();
    let bench = Bench::new(32, move |c: &Command| match c.op {
        Op::Read => Nanos::from_micros(latency.get()),
        _ => Nanos::from_micros(500),
    });
    (bench, read_us)
}

#[test]
fn slow_reads_lower_the_write_limit_and_fast_reads_raise_it() {
    let (mut bench, read_us) = bench_with_read_time(200);
    let mut s = steer("objective=p99<=1ms,start_rate=10000,write_deadline=100s");
    let mut id = 0;
    load(&mut s, &mut bench, 3000, &mut id);
    let fast = s.rate();
    assert!(
        fast > 30_000,
        "reads meet 1 ms: the limit grows, got {fast}"
    );
    read_us.set(5000);
    load(&mut s, &mut bench, 3000, &mut id);
    let slow = s.rate();
    assert!(slow * 4 < fast, "every read misses: {fast} -> {slow}");
    // The debt of the slow period (capped at 10 s of allowance) is paid
    // back first, then the limit grows again.
    read_us.set(200);
    load(&mut s, &mut bench, 12_000, &mut id);
    assert!(s.rate() > 2 * slow, "recovers: {slow} -> {}", s.rate());
}

/// `n` reads, ids from `from`, one every 1 ms (and no write of its own).
fn reads_every_ms(s: &mut Steer, bench: &mut Bench, from: u64, n: u64) {
    for id in from..from + n {
        let at = bench.now;
        bench.submit(s, Request::new(id, Op::Read, id << 20, 4096, at));
        bench.advance(s, at + Nanos::from_millis(1));
    }
}

#[test]
fn the_baseline_is_learnt_from_unloaded_reads() {
    let mut bench = Bench::new(32, |c: &Command| match c.op {
        Op::Read => Nanos::from_micros(300),
        _ => Nanos::from_micros(500),
    });
    let mut s = steer("");
    reads_every_ms(&mut s, &mut bench, 0, 3000);
    let base = s.baseline().expect("3000 unloaded reads");
    assert!(
        (Nanos::from_micros(295)..=Nanos::from_micros(305)).contains(&base),
        "{base}"
    );
    assert_eq!(s.target(), Some(Nanos(base.0 * 2)));
}

#[test]
fn a_quiet_stretch_of_slower_reads_does_not_raise_the_baseline() {
    let (mut bench, read_us) = bench_with_read_time(300);
    let mut s = steer("");
    reads_every_ms(&mut s, &mut bench, 0, 3000);
    let first = s.baseline().expect("3000 unloaded reads");
    // A write, and the reads during it and for QUIET after: loaded.
    let at = bench.now;
    bench.submit(&mut s, Request::new(1 << 30, Op::Write, 1 << 40, 4096, at));
    reads_every_ms(&mut s, &mut bench, 3000, 300);
    // The drive reads slower with no write about (still collecting).
    read_us.set(600);
    reads_every_ms(&mut s, &mut bench, 4000, 3000);
    assert_eq!(
        s.baseline(),
        Some(first),
        "the slower stretch is not pooled"
    );
    // A later, faster stretch lowers it.
    let at = bench.now;
    bench.submit(&mut s, Request::new(1 << 31, Op::Write, 1 << 40, 4096, at));
    read_us.set(200);
    reads_every_ms(&mut s, &mut bench, 8000, 300);
    reads_every_ms(&mut s, &mut bench, 9000, 3000);
    let last = s.baseline().expect("three stretches");
    assert!(last < first, "{first} -> {last}");
}

#[test]
fn writes_with_no_read_about_are_not_held_to_the_start_rate() {
    let mut bench = Bench::new(64, |_: &Command| Nanos::from_micros(500));
    let mut s = steer("objective=p99<=1ms,start_rate=10000");
    for id in 0..10_000u64 {
        let at = bench.now;
        if s.stats().class(Op::Write).queued < 64 {
            let w = Request::new(id, Op::Write, id << 17, 128 << 10, at);
            bench.submit(&mut s, w);
        }
        bench.advance(&mut s, at + Nanos::from_millis(1));
    }
    // 10 s of writes alone: the limit grows with what they use (at most
    // twice it), far past the start.
    assert!(s.rate() > 100_000, "{}", s.rate());
}

#[test]
fn the_write_depth_is_the_fewest_writes_that_carry_the_limit() {
    // 128 KiB writes take 500 us each, side by side: 3.8 ns per byte.
    let depth_at = |start_rate: u64| {
        let mut bench = Bench::new(64, |_: &Command| Nanos::from_micros(500));
        let settings = format!("objective=p99<=10ms,write_depth=8,start_rate={start_rate}");
        let mut s = steer(&settings);
        for id in 0..200u64 {
            let at = bench.now;
            let w = Request::new(id, Op::Write, id << 17, 128 << 10, at);
            bench.submit(&mut s, w);
            bench.advance(&mut s, at + Nanos::from_millis(1));
        }
        s.write_depth()
    };
    // 10 MB/s keeps 0.04 writes busy; 1 GB/s, 3.8; 10 GB/s, 38.
    assert_eq!(depth_at(10_000), 1);
    assert_eq!(depth_at(1_000_000), 4);
    assert_eq!(depth_at(10_000_000), 8, "at most write_depth");
}

/// A device whose read p99 is 15x its median (2% of reads take 1.5 ms),
/// as on a virtio disk, where twice the median would be far off.
fn skewed_reads() -> Bench {
    Bench::new(32, |c: &Command| match c.op {
        Op::Read if (c.requests[0].offset.0 >> 20) % 50 == 0 => Nanos::from_micros(1500),
        Op::Read => Nanos::from_micros(100),
        _ => Nanos::from_micros(500),
    })
}

/// A steer with `settings` on [`skewed_reads`], loaded from the start for
/// `ms`; also the next free request id, to load it further.
fn loaded_from_the_start(settings: &str, ms: u64) -> (Steer, Bench, u64) {
    let mut bench = skewed_reads();
    let mut s = steer(settings);
    let mut id = 0;
    load(&mut s, &mut bench, ms, &mut id);
    (s, bench, id)
}

#[test]
fn a_workload_that_starts_loaded_holds_writes_to_measure_the_baseline() {
    let (mut s, mut bench, mut id) = loaded_from_the_start("calibrate=2s", 950);
    assert_eq!(
        s.stats().class(Op::Write).completed,
        0,
        "held while calibrating"
    );
    assert_eq!(s.baseline(), None, "fewer than 1,000 reads so far");
    load(&mut s, &mut bench, 350, &mut id);
    let base = s.baseline().expect("1,300 unloaded reads");
    assert!(base >= Nanos::from_micros(1500), "the skewed p99: {base}");
    assert!(s.stats().class(Op::Write).completed > 0, "released");
}

#[test]
fn with_calibration_off_a_loaded_start_uses_the_median_estimate() {
    let (s, _, _) = loaded_from_the_start("calibrate=0s", 1300);
    assert!(s.stats().class(Op::Write).completed > 0);
    assert_eq!(s.baseline(), None);
    let target = s.target().expect("an estimate");
    let estimate = Nanos::from_micros(395)..=Nanos::from_micros(405);
    assert!(estimate.contains(&target), "2 x 2 x 100 us: {target}");
}

/// Found by a review: with calibration off and a statistics window longer
/// than the run, steer had no target and let the writes go unheld, saying
/// nothing (read p99 5x over the objective). A zero window is refused.
#[test]
fn a_steer_that_never_had_a_target_says_so() {
    let (s, _, _) = loaded_from_the_start("calibrate=0s,stats_window=20s", 1300);
    assert_eq!(s.target(), None);
    let notes = s.notes();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("never had a read latency target")),
        "{notes:?}"
    );
    let (s, _, _) = loaded_from_the_start("calibrate=0s", 1300);
    assert!(!s.notes().iter().any(|n| n.contains("never had")));
    let mut config = SteerConfig::default();
    let e = crate::config::apply_pairs(&mut config, "stats_window=0s").unwrap_err();
    assert!(e.to_string().contains("above zero"), "{e}");
}

#[test]
fn misses_the_reads_have_without_writes_are_not_blamed_on_writes() {
    use std::cell::Cell;
    // One read in 200 takes 1.5 ms whatever the writes do: 0.5% of
    // reads miss 2x the p99 (100 us) with or without them.
    let reads = Cell::new(0u64);
    let mut bench = Bench::new(32, move |c: &Command| match c.op {
        Op::Read => {
            reads.set(reads.get() + 1);
            let slow = reads.get() % 200 == 0;
            Nanos::from_micros(if slow { 1500 } else { 100 })
        }
        _ => Nanos::from_micros(500),
    });
    let mut s = steer("write_deadline=100s,calibrate=2s");
    let mut id = 0;
    load(&mut s, &mut bench, 10_000, &mut id);
    assert!(s.baseline().is_some(), "calibrated");
    assert!(s.rate() > 16 * 10_000, "{} kB/s", s.rate());
}

/// A shared or virtual disk whose own read latency moves: the baseline is
/// caught while reads are fast, then one read in 25 takes 1.5 ms whatever
/// the writes do (4% over the target, where p99 allows 1%). Charged to the
/// writes, that held them at the floor for good (a real-disk run fell to
/// 100 kB/s); the unloaded reads between held writes show the misses are
/// the disk's own, and the limit comes back.
#[test]
fn a_disk_that_turns_slow_on_its_own_does_not_hold_writes_at_the_floor() {
    use std::cell::Cell;
    use std::rc::Rc;
    let noisy = Rc::new(Cell::new(false));
    let reads = Cell::new(0u64);
    let turned = noisy.clone();
    let mut bench = Bench::new(32, move |c: &Command| match c.op {
        Op::Read => {
            reads.set(reads.get() + 1);
            let slow = turned.get() && reads.get() % 25 == 0;
            Nanos::from_micros(if slow { 1500 } else { 100 })
        }
        _ => Nanos::from_micros(500),
    });
    let mut s = steer("");
    // Reads every 1 ms beside a writer of 1 MiB writes, 8 outstanding (the
    // real-disk bench's).
    let mut id = 0;
    let mut run = |s: &mut Steer, bench: &mut Bench, ms: u64| {
        let end = bench.now + Nanos::from_millis(ms);
        while bench.now < end {
            let at = bench.now;
            bench.submit(s, Request::new(id, Op::Read, (id % 1000) << 20, 4096, at));
            id += 1;
            let w = s.stats().class(Op::Write);
            if w.queued + w.in_flight < 8 {
                let write = Request::new(id, Op::Write, (1 << 40) + (id << 20), 1 << 20, at);
                bench.submit(s, write);
                id += 1;
            }
            bench.advance(s, at + Nanos::from_millis(1));
        }
    };
    run(&mut s, &mut bench, 5000);
    let before = s.rate();
    noisy.set(true);
    run(&mut s, &mut bench, 60_000);
    assert!(
        s.rate() * 2 > before,
        "the disk's own misses: {before} -> {} kB/s",
        s.rate()
    );
}

/// A steer held to 1 kB/s with `count` writes of `len` bytes, a MiB apart,
/// submitted at zero on a bench that serves anything in 100 us: the first
/// goes (in debt), the rest wait for the rate or their `write_deadline`.
fn throttled_writes(write_deadline: &str, count: u64, len: u64) -> (Steer, Bench) {
    let mut bench = Bench::new(32, |_: &Command| Nanos::from_micros(100));
    let mut s = steer(&format!(
        "min_rate=1,start_rate=1,write_deadline={write_deadline}"
    ));
    for id in 0..count {
        bench.submit(
            &mut s,
            Request::new(id, Op::Write, id << 20, len, Nanos::ZERO),
        );
    }
    (s, bench)
}

#[test]
fn a_throttled_write_goes_at_its_deadline() {
    let (mut s, mut bench) = throttled_writes("50ms", 4, 128 << 10);
    bench.advance(&mut s, Nanos::from_millis(49));
    assert_eq!(bench.sent.len(), 1, "1 kB/s lets one write go, in debt");
    bench.advance(&mut s, Nanos::from_millis(56));
    assert_eq!(bench.sent.len(), 4, "the rest went at the deadline");
    assert!(bench.sent[1..]
        .iter()
        .all(|c| c.dispatched >= Nanos::from_millis(50)));
}

#[test]
fn a_read_over_a_throttled_write_pulls_it_forward_and_only_it_waits() {
    let (mut s, mut bench) = throttled_writes("10s", 3, 4096);
    assert_eq!(bench.sent.len(), 1);
    // Half in write 2, half past its end: the drive must serve the rest.
    bench.submit(
        &mut s,
        Request::new(10, Op::Read, (2 << 20) + 2048, 4096, Nanos::ZERO),
    );
    bench.submit(
        &mut s,
        Request::new(11, Op::Read, 9 << 20, 4096, Nanos::ZERO),
    );
    // Write 2 goes alone, ahead of write 1, which the limit still holds.
    let order: Vec<u64> = bench.sent.iter().map(|c| c.requests[0].id.0).collect();
    assert_eq!(order, [0, 2, 10, 11]);
    assert_eq!(s.stats().class(Op::Write).queued, 1);
}

#[test]
fn a_read_within_a_throttled_write_is_answered_from_it_without_the_drive() {
    let (mut s, mut bench) = throttled_writes("10s", 3, 128 << 10);
    assert_eq!(bench.sent.len(), 1);
    // Within write 1, and across writes 2 and 3 (contiguous): both are
    // answered from the queue. Across write 3's end into unwritten space:
    // that read waits for write 3, which goes ahead of the limit.
    let next_to_2 = Request::new(3, Op::Write, (2 << 20) + (128 << 10), 4096, Nanos::ZERO);
    bench.submit(&mut s, next_to_2);
    let read =
        |id: u64, offset: u64, len: u64| Request::new(id, Op::Read, offset, len, Nanos::ZERO);
    bench.submit(&mut s, read(10, (1 << 20) + 4096, 8192));
    bench.submit(&mut s, read(11, (2 << 20) + (124 << 10), 8192));
    bench.submit(&mut s, read(12, (2 << 20) + (128 << 10), 8192));
    let order: Vec<u64> = bench.sent.iter().map(|c| c.requests[0].id.0).collect();
    assert_eq!(order, [0, 3, 12], "reads 10 and 11 never reach the drive");
    let reads = s.stats().class(Op::Read);
    assert_eq!((reads.elided, reads.completed), (2, 2));
    assert_eq!(
        s.stats().class(Op::Write).queued,
        2,
        "writes 1 and 2 still held"
    );
    assert!(s.notes().iter().any(|n| n.contains("answered 2 reads")));
}

#[test]
fn a_held_read_goes_when_its_last_write_is_sent_in_arrival_order() {
    let read = |id: u64| Request::new(id, Op::Read, 0, 4096, Nanos::ZERO);
    let mut held = HeldReads::default();
    held.hold(read(1), &[3, 5]);
    held.hold(read(2), &[5]);
    held.hold(read(3), &[3]);
    assert_eq!(held.first_awaited(4), Some(3));
    let ids = |reads: Vec<Request>| reads.iter().map(|r| r.id.0).collect::<Vec<_>>();
    assert_eq!(ids(held.release(5).collect()), [2]);
    assert_eq!(held.first_awaited(2), None, "write 3 is not queued yet");
    assert_eq!(ids(held.release(3).collect()), [1, 3]);
    assert!(held.is_empty() && held.first_awaited(u64::MAX).is_none());
}

#[test]
fn a_write_taken_from_the_middle_leaves_a_gap_dropped_at_the_front() {
    let mut writes = WriteQueue::default();
    for tag in [2, 3, 5] {
        let request = Request::new(tag, Op::Write, tag << 20, 4096, Nanos::ZERO);
        writes.push(Queued { request, tag });
    }
    assert_eq!(writes.take(3).map(|w| w.tag), Some(3));
    assert!(writes.take(3).is_none(), "sent already");
    let tags = |q: &WriteQueue| q.iter().map(|w| w.tag).collect::<Vec<_>>();
    assert_eq!(tags(&writes), [2, 5]);
    writes.take(2);
    assert_eq!(writes.oldest().map(|w| w.tag), Some(5), "the gap went too");
    writes.take(5);
    assert!(writes.is_empty() && writes.last_tag().is_none());
}

#[test]
fn a_trim_waits_for_writes_in_flight_and_holds_new_ones() {
    let mut bench = Bench::new(32, |_: &Command| Nanos::from_millis(2));
    let mut s = steer("trim_hold=0s");
    let w = |id: u64| Request::new(id, Op::Write, id << 20, 4096, Nanos::ZERO);
    bench.submit(&mut s, w(0));
    bench.submit(
        &mut s,
        Request::new(1, Op::Trim, 1 << 30, 1 << 20, Nanos::ZERO),
    );
    bench.submit(&mut s, w(2));
    assert_eq!(
        bench.sent.len(),
        1,
        "trim waits for write 0; write 2 for the trim"
    );
    bench.advance(&mut s, Nanos::from_millis(2));
    assert_eq!(bench.sent[1].op, Op::Trim);
    assert_eq!(bench.sent[2].requests[0].id.0, 2);
}

#[test]
fn a_held_trim_is_cut_by_the_writes_that_overwrite_it() {
    let mut bench = Bench::new(32, |_: &Command| Nanos::from_millis(2));
    let mut s = steer("trim_hold=100ms,start_rate=1000000");
    let mib = 1u64 << 20;
    let trim = |id: u64, at: u64| Request::new(id, Op::Trim, at * mib, 2 * mib, Nanos::ZERO);
    let write = |id: u64, at: u64| Request::new(id, Op::Write, at * mib, mib, Nanos::ZERO);
    bench.submit_together(&mut s, vec![trim(0, 0), trim(1, 2), write(2, 0)]);
    bench.submit(&mut s, write(3, 1));
    bench.submit(&mut s, write(4, 2));
    let ops = |b: &Bench| b.sent.iter().map(|c| c.op).collect::<Vec<_>>();
    assert_eq!(ops(&bench), [Op::Write; 3], "held trims do not stop writes");
    assert_eq!(
        s.base.stats.class(Op::Trim).elided,
        1,
        "trim 0 overwritten whole"
    );
    bench.advance(&mut s, Nanos::from_millis(100));
    let sent_trim = bench.sent.iter().find(|c| c.op == Op::Trim).expect("sent");
    let r = &sent_trim.requests[0];
    assert_eq!(
        (r.id.0, r.offset.0, r.len.0),
        (1, 3 * mib, mib),
        "what is left"
    );
}

#[test]
fn with_no_write_about_a_trim_is_not_held() {
    let mut bench = Bench::new(32, |_: &Command| Nanos::from_millis(2));
    let mut s = steer("");
    bench.submit(&mut s, Request::new(0, Op::Trim, 0, 1 << 20, Nanos::ZERO));
    assert_eq!(bench.sent.len(), 1, "no write to cut it: it goes at once");
    assert_eq!(bench.sent[0].op, Op::Trim);
}

#[test]
fn reads_held_by_a_trim_are_trim_misses_charged_spread_and_in_full() {
    use std::cell::Cell;
    use std::rc::Rc;
    let trim = Rc::new(Cell::new(false));
    let held = trim.clone();
    let mut bench = Bench::new(32, move |c: &Command| match c.op {
        Op::Read if held.get() => Nanos::from_millis(5),
        Op::Read => Nanos::from_micros(200),
        Op::Trim => Nanos::from_millis(30),
        _ => Nanos::from_micros(500),
    });
    let mut s = steer("objective=p99<=1ms,trim_hold=0s");
    let mut id = 0;
    load(&mut s, &mut bench, 1950, &mut id);
    let at = bench.now;
    bench.submit(&mut s, Request::new(id, Op::Trim, 1 << 41, 64 << 20, at));
    trim.set(true);
    load(&mut s, &mut bench, 30, &mut id);
    trim.set(false);
    load(&mut s, &mut bench, 20, &mut id);
    // The window that saw the trim counted its misses as trim misses.
    let window = *s.history.back().expect("windows ended");
    assert!(window.misses >= 20, "{window:?}");
    assert_eq!(window.trim_misses, window.misses, "{window:?}");
    // They are charged a thirtieth per window, and in full in the end.
    let charged = window.charged;
    let owed = s.trim_owed;
    assert!(charged < window.misses as f64 / 20.0, "{charged}");
    let mut paid = charged;
    for _ in 0..300 {
        paid += s.charge(&Window::default());
    }
    assert!((paid + s.trim_owed - window.misses as f64).abs() < 1e-6);
    assert!(s.trim_owed < owed / 1000.0);
}

proptest::proptest! {
    /// Whatever the controller does with the limit (reads that miss at
    /// random, trims, reads over queued writes), no write waits in the
    /// scheduler longer than the write deadline plus one tick uncounted:
    /// each that does (held because the objective could not pay for it) is
    /// in `late_writes`, and so is the longest wait.
    #[test]
    fn no_write_waits_past_its_deadline_plus_a_tick_uncounted(
        arrivals in proptest::collection::vec((0u64..20, 0u8..10, 0u64..64, proptest::bool::ANY), 1..400),
        deadline_ms in 10u64..500,
        start_rate in 1u64..50_000,
    ) {
        let mut bench = Bench::new(1024, |c: &Command| match c.op {
            // Reads at odd MiB miss a 1 ms objective: the limit moves.
            Op::Read if (c.requests[0].offset.0 >> 20) % 2 == 1 => Nanos::from_millis(3),
            Op::Read => Nanos::from_micros(200),
            Op::Trim => Nanos::from_millis(20),
            _ => Nanos::from_micros(500),
        });
        let mut s = steer(&format!(
            "objective=p99<=1ms,min_rate=1,start_rate={start_rate},write_deadline={deadline_ms}ms"
        ));
        let mut writes = Vec::new();
        for (id, (gap_ms, kind, mib, aligned)) in arrivals.into_iter().enumerate() {
            bench.advance(&mut s, bench.now + Nanos::from_millis(gap_ms));
            let (op, len) = match kind {
                0..=3 => (Op::Read, 128 << 10),
                4..=8 => (Op::Write, 128 << 10),
                _ => (Op::Trim, 4 << 20),
            };
            let offset = (mib << 20) + if aligned { 0 } else { 4096 };
            let request = Request::new(id as u64, op, offset, len, bench.now);
            if op == Op::Write {
                writes.push((request.id, bench.now));
            }
            bench.submit(&mut s, request);
        }
        // Late writes go once no read is about (after `HORIZON`).
        bench.advance(&mut s, bench.now + Nanos::from_millis(deadline_ms + 3000));
        let tick = Nanos::from_millis(5);
        let (mut late, mut longest) = (0, Nanos::ZERO);
        for (id, submitted) in writes {
            let sent = bench.sent.iter().find(|c| c.requests.iter().any(|r| r.id == id));
            let sent = sent.expect("every write was sent");
            let waited = sent.dispatched - submitted;
            if waited > Nanos::from_millis(deadline_ms) + tick {
                late += 1;
                longest = longest.max(waited);
            }
        }
        proptest::prop_assert_eq!(s.late_writes(), (late, longest));
    }
}

/// Steer after a loaded stretch, drained: nothing queued or in flight.
fn loaded_then_drained() -> (Steer, Bench) {
    let (mut bench, _) = bench_with_read_time(200);
    let mut s = steer("objective=p99<=1ms");
    let mut id = 0;
    load(&mut s, &mut bench, 2000, &mut id);
    let until = bench.now + Nanos::from_secs(20);
    bench.advance(&mut s, until);
    assert_eq!(s.stats().queued(), 0);
    assert!(Op::ALL.iter().all(|&op| s.stats().class(op).in_flight == 0));
    (s, bench)
}

#[test]
fn an_idle_gap_costs_a_bounded_number_of_windows() {
    let (mut s, bench) = loaded_then_drained();
    let before = s.windows_computed();
    let _ = s.tick(bench.now + Nanos::from_secs(1_000_000));
    // 10^7 windows passed; once the history is all idle windows the rest
    // are skipped (at most one history's worth are computed).
    let computed = s.windows_computed() - before;
    assert!(computed <= 101, "{computed} windows computed");
    assert!(s.next_window > bench.now + Nanos::from_secs(1_000_000));
}

#[test]
fn skipping_an_idle_gap_gives_the_state_stepping_through_it_gives() {
    let (mut stepped, bench) = loaded_then_drained();
    let (mut jumped, _) = loaded_then_drained();
    let end = bench.now + Nanos::from_secs(100);
    let mut t = bench.now;
    while t < end {
        t += WINDOW;
        let _ = stepped.tick(t);
    }
    let _ = jumped.tick(end);
    assert!(jumped.windows_computed() < stepped.windows_computed());
    let state = |s: &Steer| {
        format!(
            "{:?} {} {} {} {:?} {:?} {} {}",
            s.history,
            s.budget,
            s.trim_owed,
            s.rate,
            s.next_window,
            s.lowest_median,
            s.rate(),
            s.write_depth()
        )
    };
    assert_eq!(state(&stepped), state(&jumped));
}

/// Bytes of writes sent in `[from, to)`.
fn written(bench: &Bench, from: Nanos, to: Nanos) -> u64 {
    bench
        .sent
        .iter()
        .filter(|c| c.op == Op::Write && (from..to).contains(&c.dispatched))
        .map(|c| c.requests.iter().map(|r| r.len.0).sum::<u64>())
        .sum()
}

/// A bench whose reads take 200 us, or the returned cell's microseconds
/// within 100 ms of a write being sent (writes take 500 us).
fn bench_slow_after_writes() -> (Bench, std::rc::Rc<std::cell::Cell<u64>>) {
    use std::cell::Cell;
    use std::rc::Rc;
    let slow_us = Rc::new(Cell::new(200));
    let latency = slow_us.clone();
    let last_write = Cell::new(None::<Nanos>);
    let bench = Bench::new(32, move |c: &Command| match c.op {
        Op::Read => {
            let near = last_write
                .get()
                .is_some_and(|w| c.dispatched - w < Nanos::from_millis(100));
            Nanos::from_micros(if near { latency.get() } else { 200 })
        }
        _ => {
            last_write.set(Some(c.dispatched));
            Nanos::from_micros(500)
        }
    });
    (bench, slow_us)
}

/// `p99<=1ms` met for 2 s of a deaf writer beside 200 us reads (the
/// deadline holding, nothing late), then 20 s in which every read within
/// 100 ms of a write takes 5 ms: an objective that needs fewer writes than
/// the deadline lets through. Steer with `deadline` as given; the bench,
/// the slow read time, when the reads turned slow and the next request id.
fn reads_turn_slow(
    deadline: &str,
) -> (Steer, Bench, std::rc::Rc<std::cell::Cell<u64>>, Nanos, u64) {
    let (mut bench, read_us) = bench_slow_after_writes();
    let mut s = steer(&format!("objective=p99<=1ms,{deadline}"));
    let mut id = 0;
    load(&mut s, &mut bench, 2000, &mut id);
    assert_eq!(
        s.late_writes().0,
        0,
        "the objective met: the deadline holds"
    );
    read_us.set(5000);
    let from = bench.now;
    load(&mut s, &mut bench, 20_000, &mut id);
    (s, bench, read_us, from, id)
}

/// The family drives where steer wrote at the deadline's floor (family:2,
/// 5 and 11: a deaf writer's 64 queued writes went every 5 s, 1.6 MB/s here,
/// whatever the limit): by default, while the objective is owed, overdue
/// writes wait, and each is counted; once it is paid, they go again.
#[test]
fn the_write_deadline_yields_by_default_while_the_objective_is_owed_and_says_so() {
    let (mut s, mut bench, read_us, from, mut id) = reads_turn_slow("");
    let owed = written(&bench, from + Nanos::from_secs(5), bench.now);
    // The floor the deadline set: 64 writes of 128 KiB per 5 s, 15 s.
    let floor = 64 * (128 << 10) * 3;
    assert!(owed * 4 < floor, "held below the floor: {owed} of {floor}");
    let (late, longest) = s.late_writes();
    assert!(
        late > 0 && longest > Nanos::from_secs(5),
        "{late} {longest}"
    );
    assert!(
        s.report_notes()[0].contains(&format!(
            "{late} write{} more than a tick (5 ms) after the 5.0 s",
            if late == 1 { "" } else { "s" }
        )) && s.report_notes()[0].contains("could not pay for them"),
        "{:?}",
        s.report_notes()
    );
    // The debt (at most `MAX_DEBT` allowances, 100 s of reads) is paid
    // back, then the writes go again.
    read_us.set(200);
    let from = bench.now;
    load(&mut s, &mut bench, 130_000, &mut id);
    let paid = written(&bench, from + Nanos::from_secs(115), bench.now);
    assert!(paid > 4 * owed, "paid: writes go again, {owed} -> {paid}");
}

#[test]
fn with_deadline_hold_the_write_deadline_holds_whatever_the_objective() {
    let (s, bench, _, from, _) = reads_turn_slow("deadline=hold");
    let written_then = written(&bench, from + Nanos::from_secs(5), bench.now);
    // The deadline's floor: 64 writes of 128 KiB per 5 s, over 15 s.
    let floor = 64 * (128 << 10) * 3;
    assert!(
        written_then * 2 > floor,
        "the floor holds: {written_then} of {floor}"
    );
    assert_eq!(s.late_writes().0, 0, "{:?}", s.report_notes());
    // The objective owed past what the budget holds: forgiven, and said.
    let forgiven = s.forgiven_misses();
    assert!(forgiven > 0.0);
    assert_eq!(
        s.report_notes(),
        [format!(
            "steer forgave {} read misses over the target its budget could not hold (owed \
             past 100 times what the objective read p99 <= 1ms allows in a second of recent \
             reads): the objective is likely missed",
            forgiven.round()
        )]
    );
}
