//! The oracle's search on a model whose optimum is known, its specs, and a
//! whole search on a short scenario.

use iosteer_device::DeviceConfig;
use iosteer_sim::scenario::FillWhileServing;
use proptest::prelude::*;

use super::*;

fn space(spans: usize, low: u64, high: u64, tolerance: f64, passes: usize) -> SearchSpace {
    SearchSpace {
        starts: (0..spans as u64)
            .map(|k| Nanos::from_secs(10 * k))
            .collect(),
        low,
        high,
        tolerance,
        passes,
    }
}

/// A drive whose span `k` takes at most `caps[k]` kB/s without a read over
/// the bound: a schedule meets the objective when no span is over its cap,
/// and writes the mean of its limits.
fn capped(caps: &[u64]) -> impl FnMut(&Schedule) -> Result<Judged, OracleError> + '_ {
    move |s| {
        Ok(Judged {
            meets: s.rates.iter().zip(caps).all(|(r, c)| r <= c),
            write_mbps: s.rates.iter().sum::<u64>() as f64 / s.rates.len() as f64 / 1e3,
        })
    }
}

proptest! {
    #[test]
    fn each_span_rises_to_its_own_cap_within_the_tolerance(
        caps in prop::collection::vec(10u64..5000, 1..6),
        tolerance in 0.01f64..0.3,
    ) {
        let (low, high) = (10, 4000);
        let space = space(caps.len(), low, high, tolerance, 2);
        let mut runs = 0;
        let mut judge = capped(&caps);
        let found = space
            .search(&[], &mut |s| { runs += 1; judge(s) })
            .unwrap()
            .expect("the lowest limit is under every cap");
        let (best, judged) = &found.best;
        prop_assert!(judged.meets);
        prop_assert!(judged.write_mbps >= found.constant.1.write_mbps);
        let lowest_cap = caps.iter().copied().min().unwrap().min(high);
        prop_assert!(found.constant.0.is_constant());
        prop_assert!(found.constant.0.rates[0] as f64 >= lowest_cap as f64 / (1.0 + tolerance) - 1.0);
        for (rate, cap) in best.rates.iter().zip(&caps) {
            let reachable = (*cap).min(high) as f64;
            prop_assert!(*rate as f64 <= reachable, "{best:?} caps {caps:?}");
            prop_assert!(*rate as f64 >= reachable / (1.0 + tolerance) - 1.0, "{best:?} caps {caps:?}");
        }
        // Two passes at most, each bisection within its log2 bound.
        let per_bisection = ((high as f64 / low as f64).ln() / (1.0 + tolerance).ln()).log2().ceil() as usize + 1;
        prop_assert!(runs <= 2 + per_bisection * (1 + 2 * caps.len()), "{runs} runs");
    }
}

#[test]
fn a_replayed_shape_is_scaled_up_to_its_caps() {
    // Caps with the shape of a quarter of them: the replay finds about 4x.
    let caps = [400, 1200, 800, 2000];
    let shape = Schedule {
        starts: (0..4).map(|k| Nanos::from_secs(k + 1)).collect(),
        rates: caps.iter().map(|c| c / 4).collect(),
    };
    let mut judge = capped(&caps);
    let found = space(4, 10, 4000, 0.05, 0)
        .search(&[shape], &mut judge)
        .unwrap()
        .unwrap();
    let (i, per_mille) = found.replayed.expect("the replay beats the constant");
    assert_eq!(i, 0);
    assert!((3800..=4000).contains(&per_mille), "{per_mille}");
    assert!(found.best.1.meets);
    for (rate, cap) in found.best.0.rates.iter().zip(caps) {
        assert!(
            *rate <= cap && *rate as f64 >= cap as f64 / 1.05 - 1.0,
            "{found:?}"
        );
    }
}

#[test]
fn nothing_is_found_when_the_lowest_limit_misses() {
    let mut judge = capped(&[5, 100]);
    assert!(space(2, 10, 1000, 0.05, 2)
        .search(&[], &mut judge)
        .unwrap()
        .is_none());
}

#[test]
fn a_schedule_runs_as_the_static_spec_when_constant_and_as_steps_otherwise() {
    let starts = [
        Nanos::from_secs(10),
        Nanos::from_secs(40),
        Nanos::from_secs(70),
    ];
    let constant = Schedule::constant(&starts, 15_000);
    assert_eq!(
        constant.spec(),
        "netflix:write.limiter=bandwidth,write.current=15000"
    );
    let stepped = constant.with(1, 20_000);
    assert_eq!(
        stepped.spec(),
        "netflix:write.limiter=bandwidth,write.schedule=0ns:15000;40s:20000;70s:15000"
    );
    assert_eq!(constant.with(2, 15_000).steps(), "0ns:15000");
    let fast = constant.with(0, 400_000);
    assert!(fast.spec().contains("write.max=400000"), "{}", fast.spec());
    assert_eq!(
        constant.spec_with("read_bias=100"),
        "netflix:read_bias=100,write.limiter=bandwidth,write.current=15000"
    );
    for s in [constant, stepped, fast] {
        iosteer_sched::policy::build(&s.spec()).unwrap();
    }
}

#[test]
fn bad_search_spaces_are_refused_naming_the_setting() {
    for (space, says) in [
        (space(0, 10, 100, 0.05, 1), "0 segments"),
        (space(1, 0, 100, 0.05, 1), "low < high"),
        (space(1, 100, 100, 0.05, 1), "low < high"),
        (space(1, 10, 100, 0.0, 1), "tolerance 0"),
    ] {
        let e = space.check().unwrap_err().to_string();
        assert!(e.contains(says), "{e}");
    }
}

/// consumer-sata on a scenario of 2 s of reads, a 6 s fill and 1 s after,
/// with the quick scenario's small free pool, so GC comes within the fill.
fn short_scenario() -> Simulation {
    let device = DeviceConfig::preset("consumer-sata").unwrap();
    FillWhileServing {
        before: Nanos::from_secs(2),
        fill: Nanos::from_secs(6),
        after: Nanos::from_secs(1),
        ..FillWhileServing::quick()
    }
    .simulation(device, 1)
}

#[test]
fn on_a_short_scenario_the_oracle_meets_the_objective_and_beats_the_best_constant() {
    let sim = short_scenario();
    let high =
        (sim.device.timing.host_link_mb_per_s * 1e3 * crate::sweep::family::STATIC_TOP) as u64;
    let oracle = Oracle {
        sim: &sim,
        objective: crate::objective::parse("p99<=2x").unwrap(),
        phase: "fill".into(),
        baseline: "before".into(),
        space: SearchSpace {
            starts: phase_segments(&sim, "fill", 2).unwrap(),
            low: high / 32,
            high,
            tolerance: 0.3,
            passes: 1,
        },
        compare: vec!["fifo".into()],
        netflix: String::new(),
    };
    let mut heard = 0;
    let report = oracle.run(&mut |_| heard += 1).unwrap();
    assert_eq!(heard, report.runs);
    let names: Vec<&str> = report.outcomes.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(
        names,
        ["oracle", "best constant", "fifo"],
        "{}",
        table(&report)
    );
    let [best, constant, fifo] = &report.outcomes[..] else {
        unreachable!()
    };
    assert!(
        best.point.meets && constant.point.meets,
        "{}",
        table(&report)
    );
    assert!(
        best.point.write_mbps >= constant.point.write_mbps,
        "{}",
        table(&report)
    );
    assert!(constant.point.spec.contains("write.current="));
    assert_eq!(best.share, 1.0);
    assert!(!report.found_by.is_empty(), "{}", table(&report));
    // Stock FIFO writes whatever the fill offers and misses the objective.
    assert!(!fifo.point.meets, "{}", table(&report));
    // The figures come from the runs: the oracle's spec, run again, gives them.
    let aged = sim.aged_device().unwrap();
    let again = sim.run(&best.point.spec, &aged, &mut |_, _| true).unwrap();
    assert_eq!(
        again.phase("fill").unwrap().write.mbps,
        best.point.write_mbps
    );
}

#[test]
fn a_phase_is_cut_into_whole_milliseconds_and_a_missing_one_is_named() {
    let sim = short_scenario();
    let starts = phase_segments(&sim, "fill", 3).unwrap();
    assert_eq!(
        starts,
        [
            Nanos::from_secs(2),
            Nanos::from_secs(4),
            Nanos::from_secs(6)
        ]
    );
    let e = phase_segments(&sim, "fil", 3).unwrap_err().to_string();
    assert!(
        e.contains("`fil`") && e.contains("before, fill, after"),
        "{e}"
    );
    let e = phase_segments(&sim, "fill", 10_000)
        .unwrap_err()
        .to_string();
    assert!(e.contains("10000 segments"), "{e}");
}
