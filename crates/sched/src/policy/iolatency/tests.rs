use super::*;
use crate::config::apply_pairs;
use crate::policy::testkit::Bench;
use crate::scheduler::Scheduler;
use std::cell::Cell;
use std::rc::Rc;

fn iolatency(settings: &str) -> Iolatency {
    let mut config = IolatencyConfig::default();
    apply_pairs(&mut config, settings).unwrap();
    Iolatency::new(config)
}

#[test]
fn the_window_is_16_targets_within_100ms_and_1s() {
    assert_eq!(window_of(Nanos::from_millis(2)), Nanos::from_millis(100));
    assert_eq!(window_of(Nanos::from_millis(10)), Nanos::from_millis(160));
    assert_eq!(window_of(Nanos::from_millis(75)), Nanos::from_secs(1));
    let s = iolatency("target.1=2ms,target.2=10000");
    assert_eq!(*s.config.target.get(TenantId(2)), Nanos::from_millis(10));
    assert_eq!(*s.config.target.get(TenantId(0)), Nanos::ZERO);
}

#[test]
fn a_window_is_bad_from_a_tenth_missed() {
    let stat = |total, missed| LatencyStat { total, missed };
    assert!(stat(100, 9).ok() && !stat(100, 10).ok());
    assert!(stat(19, 0).ok() && !stat(19, 1).ok(), "under 20, any miss");
}

/// Tenant 1 (target 2 ms) sends a read each millisecond, taking `read`
/// in the device; tenant 2 (no target) keeps 64 reads of 4 ms waiting
/// or in flight.
/// Runs `ms` milliseconds; returns tenant 2's depth every 100 ms.
fn run(s: &mut Iolatency, bench: &mut Bench, ms: u64, id: &mut u64) -> Vec<u32> {
    let mut depths = Vec::new();
    let start = bench.now;
    for t in 0..ms {
        bench.advance(s, start + Nanos::from_millis(t));
        *id += 1;
        let r = Request::new(*id, Op::Read, *id << 20, 4096, bench.now);
        bench.submit(s, r.with_tenant(TenantId(1)));
        let outstanding = |s: &Iolatency| {
            let g = s.groups.get(&TenantId(2));
            g.map_or(0, |g| g.waiting.len() + g.in_flight as usize)
        };
        while outstanding(s) < 64 {
            *id += 1;
            let r = Request::new(*id, Op::Read, *id << 20, 4096, bench.now);
            bench.submit(s, r.with_tenant(TenantId(2)));
        }
        if t % 100 == 99 {
            depths.push(s.max_depth(TenantId(2)));
        }
    }
    depths
}

#[test]
fn a_missed_window_halves_the_peer_and_good_windows_restore_it_by_a_sixteenth() {
    let mut s = iolatency("target.1=2ms");
    let read = Rc::new(Cell::new(Nanos::from_millis(3)));
    let device_read = read.clone();
    let mut bench = Bench::new(32, move |c| match c.requests[0].tenant {
        TenantId(2) => Nanos::from_millis(4),
        _ => device_read.get(),
    });
    let mut id = 0;
    // Every read of tenant 1 misses its target; decisions come at most
    // every 500 ms, the first 500 ms after time zero.
    let mut depths = run(&mut s, &mut bench, 1_250, &mut id);
    assert_eq!(depths[..5], [u32::MAX; 5], "nothing before 500 ms");
    assert_eq!(depths[5], 16, "32 slots halved at the first decision");
    assert_eq!(s.parent.scale_grp, Some(TenantId(1)));
    // Then tenant 1's reads are fast.
    read.set(Nanos::from_micros(500));
    depths.extend(run(&mut s, &mut bench, 4_000, &mut id));
    let lowest = *depths.iter().min().unwrap();
    let at = depths.iter().position(|d| *d == lowest).unwrap();
    for pair in depths[5..=at].windows(2) {
        assert!(pair[1] == pair[0] || pair[1] == pair[0] / 2, "{depths:?}");
    }
    for pair in depths[at..].windows(2) {
        assert!(pair[1] == pair[0] || pair[1] == pair[0] + 2, "{depths:?}");
    }
    let last = *depths.last().unwrap();
    assert!(
        last >= lowest + 3 * 2,
        "climbs 32/16 per good decision: {depths:?}"
    );
    // Tenant 1 has the tightest target: never throttled for its misses.
    assert_eq!(s.max_depth(TenantId(1)), u32::MAX);
}

#[test]
fn a_peer_at_depth_one_is_delayed_then_climbs_back() {
    let mut g = Group::new(Nanos::ZERO);
    let mut parent = Parent::new();
    parent.scale_lat = Nanos::from_millis(2);
    for _ in 0..6 {
        parent.change_cookie(32, false);
        g.follow(&parent, 32);
    }
    assert_eq!(
        (g.max_depth, g.use_delay),
        (1, 1),
        "32 > 16 > 8 > 4 > 2 > 1, delayed"
    );
    assert_eq!(g.delay(parent.scale_lat), Nanos::from_millis(2));
    parent.change_cookie(32, true);
    g.follow(&parent, 32);
    assert_eq!((g.max_depth, g.use_delay), (1, 0), "the delay goes first");
    parent.change_cookie(32, true);
    g.follow(&parent, 32);
    assert_eq!(g.max_depth, 3);
    parent.scale_cookie = DEFAULT_SCALE_COOKIE;
    g.follow(&parent, 32);
    assert_eq!(g.max_depth, u32::MAX, "back at the start, no limit");
}

#[test]
fn a_peer_with_a_tighter_target_or_little_io_is_spared() {
    let mut parent = Parent::new();
    parent.scale_lat = Nanos::from_millis(5);
    parent.nr_samples = 1000;
    parent.change_cookie(32, false);
    let mut tighter = Group::new(Nanos::from_millis(1));
    tighter.nr_samples = 500;
    tighter.follow(&parent, 32);
    let mut small = Group::new(Nanos::from_millis(50));
    small.nr_samples = 50;
    small.follow(&parent, 32);
    let mut busy = Group::new(Nanos::from_millis(50));
    busy.nr_samples = 51;
    busy.follow(&parent, 32);
    assert_eq!(
        (tighter.max_depth, small.max_depth, busy.max_depth),
        (u32::MAX, u32::MAX, 16)
    );
}

#[test]
fn the_timer_climbs_back_when_no_group_asks() {
    let mut s = iolatency("target.1=2ms,nr_requests=64");
    s.parent.change_cookie(64, false);
    s.parent.last_scale_event = Nanos::from_millis(500);
    let _ = s.tick(Nanos::from_secs(1));
    assert_eq!(s.parent.scale_cookie, DEFAULT_SCALE_COOKIE - 16 + 4);
    s.parent.change_cookie(64, false);
    s.parent.scale_grp = Some(TenantId(1));
    let _ = s.tick(Nanos::from_secs(6));
    assert_eq!(s.parent.scale_grp, None, "forgotten 5 s after");
}
