use super::*;

const MS: Nanos = Nanos::from_millis(1);

fn target(ms: u64, percentile: f64, keep_adjusting: bool) -> LatencyTarget {
    LatencyTarget {
        target: Nanos::from_micros(ms * 1000 + 500),
        window: Nanos::from_millis(100),
        percentile,
        keep_adjusting,
    }
}

/// Runs `search` against a drive where a request takes 1 ms for each
/// request out when it was issued (so depth d means d ms), until the search
/// ends the job or `until`; the number of requests issued.
fn run(search: &mut DepthSearch, until: Nanos) -> u64 {
    let mut now = Nanos::ZERO;
    let mut out: Vec<(Nanos, Nanos)> = Vec::new(); // (issued, done)
    let mut issued = 0;
    while !search.ends_job() && now < until {
        while (out.len() as u32) < search.limit() {
            let depth = out.len() as u64 + 1;
            out.push((now, now + Nanos(MS.0 * depth)));
            issued += 1;
        }
        let next = (0..out.len())
            .min_by_key(|&i| out[i].1)
            .expect("a request out");
        let (at, done) = out.swap_remove(next);
        now = done;
        search.completed(now, done - at, out.len() as u32, true);
    }
    issued
}

#[test]
fn the_search_doubles_then_halves_to_the_deepest_depth_under_the_target() {
    let mut search = DepthSearch::new(target(2, 100.0, false), 16, Nanos::ZERO);
    run(&mut search, Nanos::from_secs(60));
    assert_eq!(search.outcome(), &Outcome::Found);
    assert_eq!(search.depth(), 2);
    // fio's own trace on a drive like this: 1 2 4 3 2, then a final window.
    assert_eq!(search.depths_tried(), (&[1, 2, 4, 3, 2][..], 4));
}

#[test]
fn a_percentile_below_100_judges_whole_windows() {
    // Under 99%, one request over the target does not fail a window: only
    // a window's share does, so the depth above the target still fails.
    let mut search = DepthSearch::new(target(4, 99.0, false), 64, Nanos::ZERO);
    run(&mut search, Nanos::from_secs(60));
    assert_eq!((search.outcome(), search.depth()), (&Outcome::Found, 4));
}

#[test]
fn the_final_window_starts_once_the_requests_out_completed() {
    let mut search = DepthSearch::new(target(2, 100.0, false), 16, Nanos::ZERO);
    let mut now = Nanos::ZERO;
    // Completions every 1 ms, never over the target, two others still out:
    // the depth doubles each 100 ms window up to 16, where it stays.
    while search.limit() > 0 {
        now += MS;
        search.completed(now, MS, 2, true);
    }
    assert_eq!(
        (search.outcome(), search.depth()),
        (&Outcome::Searching, 16)
    );
    assert_eq!(now, Nanos::from_millis(500));
    // Quiescing: nothing issued until the two out complete.
    search.completed(now + MS, MS, 1, true);
    assert_eq!(search.limit(), 0);
    search.completed(now + MS + MS, MS, 0, true);
    let since = now + MS + MS;
    assert_eq!(search.outcome(), &Outcome::FinalWindow);
    assert_eq!(search.final_window_since(), Some(since));
    assert_eq!(search.limit(), 16);
    // A window later, the job ends.
    search.completed(since + Nanos::from_millis(100), MS, 0, true);
    assert_eq!(search.outcome(), &Outcome::Found);
}

#[test]
fn every_request_under_the_target_fails_at_depth_one_as_fio_gives_up() {
    let mut search = DepthSearch::new(target(0, 100.0, false), 8, Nanos::ZERO);
    let issued = run(&mut search, Nanos::from_secs(60));
    assert_eq!(issued, 1);
    assert_eq!(search.outcome(), &Outcome::GaveUp { latency: MS });
}

#[test]
fn latency_run_keeps_adjusting_and_never_ends_the_job() {
    let mut search = DepthSearch::new(target(2, 100.0, true), 16, Nanos::ZERO);
    run(&mut search, Nanos::from_secs(10));
    assert_eq!(search.outcome(), &Outcome::Searching);
    // It keeps probing the depth above (fio's three-windows heuristic).
    let (depths, changes) = search.depths_tried();
    assert!(changes > 10 && depths.contains(&3), "{depths:?} {changes}");
}

#[test]
fn the_ramp_neither_counts_nor_checks() {
    let mut search = DepthSearch::new(target(2, 100.0, false), 16, Nanos::ZERO);
    search.completed(Nanos::from_secs(1), Nanos::from_secs(1), 0, false);
    assert_eq!((search.outcome(), search.depth()), (&Outcome::Searching, 1));
}
