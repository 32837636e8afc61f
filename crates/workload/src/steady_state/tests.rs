use super::*;

fn spec(criterion: &str, seconds: u32, ramp: Nanos) -> SteadyState {
    SteadyState {
        criterion: SteadyCriterion::parse(criterion, KbBase::Binary).unwrap(),
        seconds,
        ramp,
        group: None,
    }
}

/// `per_second[i]` completions of 4 KiB spread over second `i`, from 0.
fn feed(watch: &mut SteadyWatch, member: usize, per_second: &[u64]) {
    for (second, &n) in per_second.iter().enumerate() {
        for k in 0..n {
            let at = Nanos::from_secs(second as u64) + Nanos(1 + k * 1_000_000_000 / n);
            watch.completed(member, 4096, at);
        }
    }
}

/// A job's watch of `spec(criterion, seconds, ramp)`, started at 0 and fed
/// `per_second` completions.
fn fed(criterion: &str, seconds: u32, ramp: Nanos, per_second: &[u64]) -> SteadyWatch {
    let mut watch = group(criterion, seconds, ramp, 1, &[0]);
    feed(&mut watch, 0, per_second);
    watch
}

/// A group's watch of `members`, of which `started` start at 0.
fn group(
    criterion: &str,
    seconds: u32,
    ramp: Nanos,
    members: usize,
    started: &[usize],
) -> SteadyWatch {
    let mut watch = SteadyWatch::new(spec(criterion, seconds, ramp), members);
    for &m in started {
        watch.started(m, Nanos::ZERO);
    }
    watch
}

#[test]
fn criteria_are_read_as_fio_reads_them() {
    let c = SteadyCriterion::parse("iops_slope:0.1%", KbBase::Binary).unwrap();
    assert_eq!(
        (c.metric, c.slope, c.limit, c.percent),
        (SteadyMetric::Iops, true, 0.1, true)
    );
    let c = SteadyCriterion::parse("bw:10m", KbBase::Binary).unwrap();
    assert_eq!(
        (c.metric, c.slope, c.limit, c.percent),
        (SteadyMetric::Bandwidth, false, 10_485_760.0, false)
    );
    assert_eq!(
        SteadyCriterion::parse("iops:20", KbBase::Binary)
            .unwrap()
            .limit,
        20.0
    );
    assert_eq!(
        SteadyCriterion::parse("iops:5%", KbBase::Binary)
            .unwrap()
            .to_string(),
        "iops:5%"
    );
    for bad in ["iops", "lat:1%", "iops:abc", "bw:", "iops:inf"] {
        let message = SteadyCriterion::parse(bad, KbBase::Binary).unwrap_err();
        assert!(message.contains("iops_slope"), "{bad}: {message}");
    }
}

#[test]
fn a_steady_rate_is_reached_once_the_window_is_full() {
    let mut watch = fed("iops:5%", 3, Nanos::ZERO, &[100, 100]);
    assert!(!watch.attained(Nanos::from_secs(2)), "two samples of three");
    feed(&mut watch, 0, &[0, 0, 100]);
    assert!(watch.attained(Nanos::from_secs(3)));
    let (judged, window) = watch.last().unwrap();
    assert_eq!(judged.at, Nanos::from_secs(3));
    assert_eq!(window, vec![100.0, 100.0, 100.0]);
    assert_eq!(judged.value, 0.0);
}

#[test]
fn a_deviation_over_the_limit_is_not_steady() {
    // Samples 90, 100, 110: mean 100, largest deviation 10 = 10%.
    let mut watch = fed("iops:10%", 3, Nanos::ZERO, &[90, 100, 110]);
    assert!(!watch.attained(Nanos::from_secs(3)), "10% is not under 10%");
    assert_eq!(watch.last().unwrap().0.value, 10.0);
    let mut looser = fed("iops:11", 3, Nanos::ZERO, &[90, 100, 110]);
    assert!(
        looser.attained(Nanos::from_secs(3)),
        "a deviation of 10 I/Os is under 11"
    );
}

#[test]
fn the_slope_is_a_least_squares_line_per_sample() {
    // 100, 200, 300: slope 100 a sample, 50% of the mean of 200.
    let mut watch = fed("iops_slope:60%", 3, Nanos::ZERO, &[100, 200, 300]);
    assert!(watch.attained(Nanos::from_secs(3)));
    assert!((watch.last().unwrap().0.value - 50.0).abs() < 1e-9);
    let mut strict = fed("bw_slope:1m", 3, Nanos::ZERO, &[100, 200, 300]);
    // 100 x 4 KiB a second per sample, under 1 MiB.
    assert!(strict.attained(Nanos::from_secs(3)));
    assert_eq!(strict.last().unwrap().0.value, 409_600.0);
}

#[test]
fn samples_start_a_second_after_the_ramp() {
    // Ramp 2 s: the first sample is taken at 3 s (the third second's).
    let mut watch = fed("iops:5%", 2, Nanos::from_secs(2), &[10, 20, 100, 100]);
    assert!(!watch.attained(Nanos::from_secs(3)));
    assert!(watch.attained(Nanos::from_secs(4)));
    assert_eq!(watch.last().unwrap().1, vec![100.0, 100.0]);
}

#[test]
fn a_group_is_judged_on_its_sum_and_skips_jobs_not_running() {
    let mut watch = group("iops:1%", 2, Nanos::ZERO, 3, &[1, 2]);
    // Member 0 never starts; member 1 ends after its first second.
    feed(&mut watch, 2, &[100]);
    feed(&mut watch, 1, &[50]);
    watch.attained(Nanos::from_secs(1));
    watch.ended(1);
    feed(&mut watch, 2, &[0, 100]);
    assert!(!watch.attained(Nanos::from_secs(2)), "150 then 100");
    assert_eq!(watch.last().unwrap().1, vec![150.0, 100.0]);
}

#[test]
fn a_group_is_judged_only_while_its_last_job_runs() {
    // fio 3.33, group_reporting, ss=iops:5% ss_dur=3: [a] at 100 IOPS for
    // 10 s and [b] at 50 for 2 s: b holds the window, ends, and a runs its
    // 10 s (1,100 reads); with b started 4 s late, a runs on until b has
    // run 3 s.
    let mut ended = group("iops:5%", 3, Nanos::ZERO, 2, &[0, 1]);
    feed(&mut ended, 0, &[100, 100]);
    feed(&mut ended, 1, &[50, 50]);
    ended.attained(Nanos::from_secs(2));
    ended.ended(1);
    feed(&mut ended, 0, &[0, 0, 100, 100, 100, 100, 100]);
    assert!(!ended.attained(Nanos::from_secs(7)));
    assert!(ended.last().is_none(), "never judged");

    let mut late = group("iops:5%", 3, Nanos::ZERO, 2, &[0]);
    late.started(1, Nanos::from_secs(4));
    feed(&mut late, 0, &[100, 100, 100, 100]);
    assert!(!late.attained(Nanos::from_secs(4)), "b not started");
    for second in 4..7 {
        let at = |k: u64, n: u64| Nanos::from_secs(second) + Nanos(1 + k * 1_000_000_000 / n);
        (0..100).for_each(|k| _ = late.completed(0, 4096, at(k, 100)));
        (0..50).for_each(|k| _ = late.completed(1, 4096, at(k, 50)));
    }
    assert!(late.attained(Nanos::from_secs(7)));
    assert_eq!(late.last().unwrap().0.at, Nanos::from_secs(7));
}

#[test]
fn completions_before_the_start_are_not_sampled() {
    // A job in its ramp_time: started counts from the ramp's end (2 s).
    let mut watch = SteadyWatch::new(spec("iops:5%", 2, Nanos::ZERO), 1);
    watch.started(0, Nanos::from_secs(2));
    feed(&mut watch, 0, &[500, 500, 100, 100]);
    assert!(watch.attained(Nanos::from_secs(4)));
    assert_eq!(watch.last().unwrap().1, vec![100.0, 100.0]);
}

#[test]
fn a_nan_criterion_is_met_as_in_fio() {
    // fio 3.33, ss_dur=1 (a slope of one sample): attained at the first
    // sample, criterion -nan; and a window of nothing as a percentage.
    let mut one = fed("iops_slope:0.01%", 1, Nanos::ZERO, &[100]);
    assert!(one.attained(Nanos::from_secs(1)));
    let mut idle = fed("iops:5%", 3, Nanos::ZERO, &[0, 0, 0]);
    assert!(idle.attained(Nanos::from_secs(3)));
}

#[test]
fn a_slope_percentage_is_of_the_mean_in_whole_numbers() {
    // 2, 3, 3: slope 0.5 a sample, mean 2.67 taken as 2 (fio's integer
    // division): 25%, not 18.75%.
    let mut watch = fed("iops_slope:20%", 3, Nanos::ZERO, &[2, 3, 3]);
    assert!(!watch.attained(Nanos::from_secs(3)));
    assert!((watch.last().unwrap().0.value - 25.0).abs() < 1e-9);
}

#[test]
fn no_tick_is_judged_after_steady_state() {
    let mut watch = fed("iops:5%", 1, Nanos::ZERO, &[100, 7]);
    assert!(watch.attained(Nanos::from_secs(10)));
    assert_eq!(watch.last().unwrap().0.at, Nanos::from_secs(1));
}
