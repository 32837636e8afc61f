//! The drive's starting state end to end: what `--precondition` changes in
//! a run's write amplification and what the report says.

use iosteer_device::{DeviceConfig, StartState};
use iosteer_sched::Nanos;
use iosteer_workload::fio::parse;
use iosteer_workload::report::RunReport;

use crate::run::Simulation;
use crate::workload_file;

/// The default drive (its presets are small enough to precondition in
/// a moment; a smaller one would not keep GC's share of blocks).
fn drive() -> DeviceConfig {
    DeviceConfig::preset("consumer-sata").unwrap()
}

fn run(sim: &mut Simulation, state: &str) -> RunReport {
    sim.set_start_state(state.parse().unwrap());
    let aged = sim.aged_device().unwrap();
    let report = sim.run("fifo", &aged, &mut |_, _| true).unwrap();
    assert!(!report.interrupted, "{:?}", report.notes);
    report
}

#[test]
fn an_empty_drive_writes_without_amplification_until_it_fills() {
    let device = drive();
    // Random 16 KiB writes of a quarter of the drive: far from filling it.
    let size = device.logical_bytes() / 4 / (1 << 20);
    let text = format!("[w]\nrw=randwrite\nbs=16k\nsize={size}m\niodepth=8\n");
    let jobs = parse(&text, "w.fio", device.logical_bytes()).unwrap();
    let mut sim = Simulation::of_job_file(device, jobs, 1, Nanos::from_secs(5));
    let report = run(&mut sim, "empty");
    let stats = report.device_stats.unwrap();
    assert_eq!(stats.waf, 1.0);
    assert_eq!(stats.gc_pages_moved, 0);
    assert_eq!(stats.foreground_gc_blocks + stats.background_gc_blocks, 0);
    assert_eq!(stats.precondition.as_deref(), Some("empty"));
}

#[test]
fn a_filled_and_an_aged_drive_amplify_the_same_trace_differently() {
    let mut sim = workload_file::financial1_excerpt(drive());
    let filled = run(&mut sim, "fill=100").device_stats.unwrap();
    let aged = run(&mut sim, "aged").device_stats.unwrap();
    assert_eq!(filled.precondition.as_deref(), Some("fill=100"));
    assert_eq!(aged.precondition.as_deref(), Some("aged=2"));
    // Sequentially filled blocks are all valid, so the trace's overwrites
    // leave whole blocks to reclaim later; the aged drive's blocks are
    // fragmented, and cleaning them moves pages.
    assert!(
        aged.waf > filled.waf + 0.1,
        "aged {} filled {}",
        aged.waf,
        filled.waf
    );
}

#[test]
fn the_option_wins_over_the_drive_file_which_wins_over_the_scenario() {
    let mut device = drive();
    let mut sim = crate::scenario::scenario("quick", device.clone(), 1).unwrap();
    assert_eq!(sim.start_state(), StartState::default());
    device.precondition = Some(iosteer_device::PreconditionTable {
        state: StartState::Empty,
    });
    sim.device = device;
    assert_eq!(sim.start_state(), StartState::Empty);
    sim.set_start_state(StartState::Steady);
    assert_eq!(sim.start_state(), StartState::Steady);
    let aging = sim.aged_device().unwrap().aging().unwrap();
    assert!(aging.steady_waf.unwrap() > 1.0);
}

#[test]
fn a_drive_file_chooses_its_start_in_a_precondition_table() {
    let mut toml = drive().to_toml();
    toml += "\n[precondition]\nstate = \"fill=50\"\n";
    let device = DeviceConfig::from_toml(&toml, "d.toml").unwrap();
    assert_eq!(
        device.precondition.unwrap().state,
        StartState::Fill { percent: 50.0 }
    );
    let bad = toml.replace("fill=50", "half");
    let e = DeviceConfig::from_toml(&bad, "d.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`half`: expected one of empty, fill[=PCT]"),
        "{e}"
    );
}

/// Aging a large drive takes minutes, where the presets' takes a second or
/// two: the line that starts a run says how much aging comes first (an
/// 8 TiB drive of 64 KiB pages aged for 7 minutes with nothing said).
#[test]
fn the_run_says_up_front_how_much_aging_a_large_drive_takes() {
    use crate::plan::Plan;
    let describe = |device: DeviceConfig, state: Option<&str>| {
        let mut sim = crate::scenario::scenario("quick", device, 1).unwrap();
        if let Some(state) = state {
            sim.set_start_state(state.parse().unwrap());
        }
        Plan::runs(sim, vec!["fifo".into()], false).describe()
    };
    assert_eq!(
        describe(drive(), None),
        "simulating 1 run(s) on consumer-sata (2 jobs)",
        "the presets' line is as it was"
    );
    let mut big = drive();
    big.geometry.channels = 16;
    big.geometry.dies_per_channel = 8;
    big.geometry.blocks_per_plane = 512;
    big.geometry.pages_per_block = 1024;
    big.geometry.page_size = 64 << 10;
    big.ftl.mapping_unit = 64 << 10;
    let units = big.logical_units() as f64;
    let text = describe(big.clone(), None);
    let wa = crate::plan::expected_write_amplification(&big);
    let total = units + 2.0 * units * wa;
    assert!(
        text.ends_with(&format!(
            "after aging the drive (aged=2): up to {:.0} million page writes of the host's, \
             {:.0} million with GC's moves at the write amplification of uniform overwrites \
             ({wa:.1}), about {:.0} s",
            units * 3.0 / 1e6,
            total / 1e6,
            // 125 million units: the map outgrows the caches, and the rate
            // falls with its square root past 8 Mi units (to 7.8 million).
            total / (3e7 / (units / (8u64 << 20) as f64).sqrt())
        )),
        "{text}"
    );
    let steady = describe(big.clone(), Some("steady"));
    assert!(
        steady.contains(&format!("{:.0} million page writes", units * 17.0 / 1e6)),
        "{steady}"
    );
    // The same words for sweep and probe --emulate, which age before they run.
    let aged = "aged=2".parse().unwrap();
    assert!(crate::plan::aging_note(&big, aged).is_some_and(|n| text.ends_with(&n)));
    assert_eq!(crate::plan::aging_note(&drive(), aged), None);
    // aged-fast ages 4 of the 128 dies: 12 million page writes, said of none.
    assert!(!describe(big.clone(), Some("aged-fast")).contains("aging"));
    assert!(!describe(big.clone(), Some("empty")).contains("aging"));
    // A fill is written in bulk, in order: 125 million units, no note (it
    // said 31 s at the write amplification of overwrites for a 2 s fill).
    assert!(!describe(big.clone(), Some("fill")).contains("aging"));
    let mut huge = big;
    huge.geometry.blocks_per_plane *= 16;
    let units = huge.logical_units() as f64;
    let fill = crate::plan::aging_note(&huge, "fill".parse().unwrap()).unwrap();
    assert_eq!(
        fill,
        format!(
            "after filling the drive (fill=100): {:.0} million page writes in order, about {:.0} s",
            units / 1e6,
            units / 1e8
        )
    );
}

/// A drive of little spare space ages slowly however small it is: GC moves
/// many pages for each of the host's, and the line says so (consumer-sata
/// with 0.6% over-provisioning aged for 7 s with nothing said; near its
/// least accepted, 94 s).
#[test]
fn aging_a_drive_of_little_spare_space_is_said_up_front() {
    let aged = "aged=2".parse().unwrap();
    let mut tight = drive();
    tight.over_provisioning = 0.006;
    let wa = crate::plan::expected_write_amplification(&tight);
    assert!((50.0..200.0).contains(&wa), "{wa}");
    let note = crate::plan::aging_note(&tight, aged).expect("said");
    assert!(note.contains(&format!("({wa:.1})")), "{note}");
    assert_eq!(crate::plan::aging_note(&drive(), aged), None);
    assert!(crate::plan::expected_write_amplification(&drive()) < 10.0);
}
