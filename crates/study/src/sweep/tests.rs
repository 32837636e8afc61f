//! The sweep's grids, seeds and choice of the best point.

use super::*;

#[test]
fn ranges_and_lists_expand_first_key_slowest() {
    let specs =
        expand_grid("netflix:write.limiter=bandwidth,queue_depth,write.current=10..30/10").unwrap();
    assert_eq!(
        specs,
        [
            "netflix:write.limiter=bandwidth,write.current=10",
            "netflix:write.limiter=bandwidth,write.current=20",
            "netflix:write.limiter=bandwidth,write.current=30",
            "netflix:write.limiter=queue_depth,write.current=10",
            "netflix:write.limiter=queue_depth,write.current=20",
            "netflix:write.limiter=queue_depth,write.current=30",
        ]
    );
    assert_eq!(expand_grid("fifo").unwrap(), ["fifo"]);
    assert!(expand_grid("netflix:1,2").is_err());
    assert!(expand_grid("netflix:a=5..1/1").is_err());
    assert!(expand_grid("netflix:a=1..5").is_err());
    assert!(expand_grid("netflix:a=1..5/0").is_err());
}

/// Expanding `grid` fails with an error that says each of `says`.
fn assert_grid_refused(grid: &str, says: &[&str]) {
    let e = expand_grid(grid).unwrap_err().to_string();
    assert!(says.iter().all(|s| e.contains(s)), "{e}");
}

#[test]
fn reversed_and_zero_step_ranges_say_so() {
    assert_grid_refused(
        "netflix:write.current=20000..10000/1000",
        &["write.current", "reversed"],
    );
    assert_grid_refused(
        "netflix:write.current=10000..20000/0",
        &["write.current", "step is zero"],
    );
    let e = parse_seeds("5..1").unwrap_err().to_string();
    assert!(e.contains("5..1") && e.contains("reversed"), "{e}");
}

#[test]
fn a_grid_longer_than_the_limit_is_refused_naming_the_limit() {
    let keys: Vec<String> = (0..10_000).map(|i| format!("k{i}=1")).collect();
    let grid = format!("fifo:{}", keys.join(","));
    assert!(grid.len() > 60_000);
    let e = expand_grid(&grid).unwrap_err();
    assert!(matches!(e, SweepError::GridTooLong { .. }), "{e}");
    let message = e.to_string();
    assert!(
        message.contains(&grid.len().to_string()) && message.contains("at most 4096 bytes"),
        "{message}"
    );
}

#[test]
fn a_repeated_key_is_refused_naming_it() {
    assert_grid_refused(
        "netflix:read_bias=1,write.current=5,read_bias=2",
        &["`read_bias` is given twice", "read_bias=1,2,3"],
    );
}

#[test]
fn the_longest_grid_expands_to_every_point_with_every_key_once() {
    // 13 keys of two values (8,192 points), then single-valued keys up to
    // the length limit: each spec carries every key once, in grid order.
    let mut items: Vec<String> = (0..13).map(|i| format!("two{i}=0,1")).collect();
    let mut single = 0;
    while format!("fifo:{},one{single}=7", items.join(",")).len() <= MAX_GRID_BYTES {
        items.push(format!("one{single}=7"));
        single += 1;
    }
    let grid = format!("fifo:{}", items.join(","));
    let specs = expand_grid(&grid).unwrap();
    assert_eq!(specs.len(), 1 << 13);
    let keys = 13 + single;
    assert!(keys > 300, "{keys} keys");
    for (index, spec) in specs.iter().enumerate() {
        let settings: Vec<&str> = spec.strip_prefix("fifo:").unwrap().split(',').collect();
        assert_eq!(settings.len(), keys);
        // Point `index` in binary, the first key the highest bit.
        for (bit, setting) in settings[..13].iter().enumerate() {
            let value = (index >> (12 - bit)) & 1;
            assert_eq!(*setting, format!("two{bit}={value}"));
        }
        assert_eq!(settings[13], "one0=7");
    }
    // One more two-valued key: 16,384 points, over the limit.
    let e = expand_grid(&format!("fifo:{},two13=0,1", items[..13].join(","))).unwrap_err();
    assert!(matches!(e, SweepError::GridTooLarge { .. }), "{e}");
}

#[test]
fn a_list_of_ranges_past_the_point_limit_is_refused() {
    let e = expand_grid("fifo:a=1..9000/1,1..9000/1").unwrap_err();
    assert!(matches!(e, SweepError::TooManyValues { .. }), "{e}");
}

fn p(spec: &str, write: f64, value: f64, meets: bool) -> Point {
    Point {
        spec: spec.into(),
        write_mbps: write,
        read_mbps: 0.0,
        read_p99_ms: value,
        read_p999_ms: value,
        read_slo_violations: 0,
        write_p99_ms: 0.0,
        write_max_ms: 0.0,
        baseline_ms: None,
        value_ms: value,
        bound_ms: 2.0,
        meets,
        meets_own: true,
        seeds: 1,
        seeds_met: usize::from(meets),
        write_min_mbps: write,
        notes: Vec::new(),
    }
}

#[test]
fn seeds_parse_as_one_a_range_or_a_list_and_bad_ones_are_refused() {
    assert_eq!(parse_seeds("4").unwrap(), [4]);
    assert_eq!(parse_seeds("1..3").unwrap(), [1, 2, 3]);
    assert_eq!(parse_seeds("1, 4,5").unwrap(), [1, 4, 5]);
    for bad in ["", "x", "3..1", "1..", "1,1", "0..1000", "1;2"] {
        let e = parse_seeds(bad).unwrap_err();
        assert!(
            matches!(
                e,
                SweepError::BadSeeds { .. }
                    | SweepError::TooManySeeds { .. }
                    | SweepError::RepeatedSeed { .. }
                    | SweepError::ReversedSeeds { .. }
            ),
            "{bad}: {e}"
        );
    }
}

#[test]
fn across_seeds_a_setting_meets_only_on_every_seed_with_mean_and_worst_figures() {
    let mut worst = p("a", 30.0, 2.2, false);
    worst.bound_ms = 2.0;
    let per_seed = vec![
        vec![p("a", 10.0, 1.0, true), p("b", 5.0, 1.0, true)],
        vec![worst, p("b", 7.0, 1.5, true)],
    ];
    let points = across_seeds(&per_seed);
    assert_eq!(points.len(), 2);
    let (a, b) = (&points[0], &points[1]);
    assert_eq!((a.write_mbps, a.write_min_mbps), (20.0, 10.0));
    assert_eq!((a.seeds, a.seeds_met, a.meets), (2, 1, false));
    assert_eq!((a.value_ms, a.read_p99_ms), (2.2, 2.2), "the worst seed's");
    assert_eq!((b.seeds_met, b.meets, b.write_mbps), (2, true, 6.0));
    assert_eq!(best(&points), Some(1), "a meets on one seed of two only");
}

#[test]
fn the_best_point_writes_most_among_those_that_meet() {
    let points = [
        p("a", 10.0, 1.0, true),
        p("b", 30.0, 9.0, false),
        p("c", 20.0, 1.9, true),
        p("d", 20.0, 1.5, true),
    ];
    assert_eq!(best(&points), Some(3));
    assert_eq!(best(&points[1..2]), None);
}

#[test]
fn a_range_of_every_u64_is_too_many_values_not_none() {
    // 0..u64::MAX/1 has one value more than a u64 counts: it wrapped to
    // none (nothing to sweep) in a release build, and panicked in a debug one.
    for grid in [
        "netflix:read_bias=0..18446744073709551615/1",
        "netflix:read_bias=0..18446744073709551615/2",
        "netflix:read_bias=1..10001/1",
    ] {
        let e = expand_grid(grid).unwrap_err();
        assert!(matches!(e, SweepError::TooManyValues { .. }), "{grid}: {e}");
    }
    assert_eq!(
        expand_grid("netflix:read_bias=1..10000/1").unwrap().len(),
        MAX_POINTS
    );
}

#[test]
fn a_setting_given_twice_is_refused_before_anything_runs() {
    let sweep = quick_sweep("consumer-sata", &["fifo", "steer", "fifo"], &[1], 1);
    let e = sweep.simulations().unwrap_err();
    assert!(matches!(e, SweepError::RepeatedSpec { .. }), "{e}");
    assert!(
        e.to_string().starts_with("fifo: the same setting twice"),
        "{e}"
    );
}

#[test]
fn the_table_shows_the_judged_value_beside_its_bound() {
    // Found by a review: under `mean<=1ms` the best row showed a read p99
    // far over the bound next to "yes"; the judged mean was only in JSON.
    let mut point = p("fifo", 10.0, 0.8, true);
    point.read_p99_ms = 4.05;
    point.bound_ms = 1.0;
    let report = SweepReport {
        objective: "mean<=1ms".into(),
        points: vec![point],
        best: Some("fifo".into()),
        best_index: Some(0),
        seeds: vec![1],
        ..SweepReport::default()
    };
    let text = table(&report);
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("fifo"))
        .unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells[1..7],
        ["10.0", "4.05", "0.80", "0", "0.80", "1.00"],
        "{text}"
    );
    assert!(text.contains("judged ms"), "{text}");
}

#[test]
fn a_sweep_stopped_part_way_has_its_first_settings_run_on_every_seed() {
    // Found by a review: runs went seed by seed, so a stop before the last
    // seed left no setting run on every seed, and nothing to judge.
    let mut sweep = quick_sweep("diskSim-slc", &["fifo", "steer"], &[1, 2], 1);
    // An empty drive: aging asks the same predicate, and would count too.
    let state = iosteer_device::StartState::Empty;
    sweep.device.precondition = Some(iosteer_device::PreconditionTable { state });
    let sims = sweep.simulations().unwrap();
    let started = std::sync::atomic::AtomicUsize::new(0);
    let two_runs = || started.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < 2;
    assert!(sweep
        .run_reports(&sims)
        .unwrap()
        .iter()
        .all(|r| r.series.is_empty()));
    let report = sweep.run_until(&sims, &two_runs).unwrap();
    let judged: Vec<&str> = report.points.iter().map(|p| p.spec.as_str()).collect();
    assert_eq!(
        (judged, report.not_run),
        (vec!["fifo"], vec!["steer".to_string()])
    );
}

/// A sweep holds each seed's aged drive and a copy per thread at once: 8
/// seeds of a 4 TiB drive aborted after 9.4 s of aging, nothing kept
/// (found by a review). It is refused before the work when that would not
/// fit the memory free.
#[test]
fn a_sweep_whose_drives_do_not_fit_in_memory_is_refused_before_it_runs() {
    let sweep = quick_sweep("consumer-sata", &["fifo", "steer"], &[1, 2, 3], 2);
    let drive = sweep.device.model_bytes();
    assert!(sweep.check_memory(Some(5 * drive)).is_ok());
    assert!(sweep.check_memory(None).is_ok());
    let e = sweep.check_memory(Some(5 * drive - 1)).unwrap_err();
    assert!(matches!(e, SweepError::Memory { drives: 5, .. }), "{e}");
    assert!(e.to_string().contains("use fewer seeds or threads"), "{e}");
}

/// A sweep of the quick scenario on `preset` against `p99<=2x`.
fn quick_sweep(preset: &str, specs: &[&str], seeds: &[u64], threads: usize) -> Sweep {
    Sweep {
        workload: SweepWorkload::Scenario("quick".into()),
        device: iosteer_device::DeviceConfig::preset(preset).unwrap(),
        specs: specs.iter().map(|s| s.to_string()).collect(),
        seeds: seeds.to_vec(),
        objective: crate::objective::parse("p99<=2x").unwrap(),
        phase: "fill".into(),
        baseline: "before".into(),
        slo: Nanos::from_millis(35),
        threads: Some(threads),
    }
}

/// Found by a review: a phase that only writes was judged 0.00 against its
/// bound and reported "meets: no" for every setting.
#[test]
fn a_phase_without_reads_is_not_judged_by_a_read_objective() {
    let job = std::env::temp_dir().join(format!("iosteer-w-then-r-{}.fio", std::process::id()));
    let text = "[w]\nrw=write\nbs=128k\nsize=8m\n[r]\nstonewall\nrw=randread\nbs=4k\nsize=8m\n";
    std::fs::write(&job, text).unwrap();
    let mut sweep = quick_sweep("diskSim-slc", &["fifo"], &[1], 1);
    sweep.workload = SweepWorkload::JobFile(job.to_string_lossy().into_owned());
    let state = iosteer_device::StartState::Empty;
    sweep.device.precondition = Some(iosteer_device::PreconditionTable { state });
    let cases = [
        ("w", "r", Some(("w", "judged"))),
        ("r", "w", Some(("w", "baseline"))),
        ("r", "r", None),
    ];
    for (phase, baseline, no_reads) in cases {
        (sweep.phase, sweep.baseline) = (phase.into(), baseline.into());
        let judged = sweep.run(&sweep.simulations().unwrap());
        match (judged, no_reads) {
            (Err(SweepError::NoReads { phase, role }), Some(said)) => {
                assert_eq!((phase.as_str(), role), said)
            }
            (Ok(_), None) => {}
            (other, _) => panic!("{phase} against {baseline}: {other:?}"),
        }
    }
    std::fs::remove_file(&job).unwrap();
}

/// A workload that only writes was found without reads only after every
/// setting had run.
#[test]
fn a_workload_without_reads_is_refused_before_it_runs() {
    let job = std::env::temp_dir().join(format!("iosteer-w-only-{}.fio", std::process::id()));
    std::fs::write(
        &job,
        "[w]\nrw=randwrite\nbs=4k\nsize=8m\n[t]\nrw=trim\nsize=8m\n",
    )
    .unwrap();
    let mut sweep = quick_sweep("diskSim-slc", &["fifo"], &[1], 1);
    sweep.workload = SweepWorkload::JobFile(job.to_string_lossy().into_owned());
    let refused = sweep.simulations();
    std::fs::remove_file(&job).unwrap();
    assert!(
        matches!(refused, Err(SweepError::NoReadingJob)),
        "{refused:?}"
    );
}

/// Found by a review: an objective listed as a grid's values was read as a
/// new key (`p99<`), and the error's hint suggested the form that failed.
#[test]
fn a_grid_lists_objectives_as_any_other_values() {
    let specs = expand_grid("steer:objective=p99<=1.5x,p99<=2x,write_depth=2,4").unwrap();
    assert_eq!(
        specs,
        [
            "steer:objective=p99<=1.5x,write_depth=2",
            "steer:objective=p99<=1.5x,write_depth=4",
            "steer:objective=p99<=2x,write_depth=2",
            "steer:objective=p99<=2x,write_depth=4",
        ]
    );
    // Any other `=` starts a key, a mistyped one too (refused by its name).
    let typo = expand_grid("bfq:weight=100,slice idle=5").unwrap();
    assert_eq!(typo, ["bfq:weight=100,slice idle=5"]);
}

#[test]
fn notes_show_each_kind_once_with_the_settings_that_have_it() {
    let mut a = p("a", 1.0, 1.0, true);
    let mut b = p("b", 2.0, 1.0, true);
    let c = p("c", 3.0, 1.0, true);
    a.notes = vec!["3 of 10 reads unwritten".into(), "the drive owed GC".into()];
    b.notes = vec!["5 of 10 reads unwritten".into()];
    let table = notes_table(&[a.clone(), b.clone(), c.clone()]);
    assert_eq!(
        table,
        "  note (a, b; the first one's figures, every one's in --json): 3 of 10 reads unwritten\n  \
         note (a): the drive owed GC\n"
    );
    b.notes = a.notes.clone();
    let table = notes_table(&[a, b, c.clone()]);
    assert!(table.starts_with("  note (a, b): 3 of 10"), "{table}");
    assert_eq!(notes_table(&[c]), "");
}

#[test]
fn a_setting_keeps_every_seeds_notes_once() {
    let mut one = p("a", 1.0, 1.0, true);
    let mut two = one.clone();
    one.notes = vec!["x".into(), "y".into()];
    two.notes = vec!["y".into(), "z".into()];
    let joined = across_seeds(&[vec![one], vec![two]]);
    assert_eq!(joined[0].notes, ["x", "y", "z"]);
}
