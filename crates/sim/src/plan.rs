//! What one `iosteer sim` runs: one simulation under several scheduler
//! specs, or a study's cases; how it runs them, and the study's own table.

use std::path::{Path, PathBuf};
use std::time::Instant;

use iosteer_device::config::VictimPolicy;
use iosteer_device::device::{FAST_AGING_SAMPLES, STEADY_MAX_CAPACITY_WRITES};
use iosteer_device::waf::{self, RESERVE_BLOCKS};
use iosteer_device::{DeviceConfig, StartState};
use iosteer_sched::{policy, Nanos};
use iosteer_workload::chart::OutputError;
use iosteer_workload::output::{files_room, FilesRoom};
use iosteer_workload::report::table;
use iosteer_workload::{summary, RunReport};

use crate::study::{
    gc_cases, gc_table, hints_table, run_cases, study, write_sweep_charts, Case, STUDIES,
};
use crate::{SimError, Simulation};

/// One simulation under several schedulers, or a study's cases.
pub enum Plan {
    Runs(Box<Simulation>, Vec<String>),
    Study(String, Vec<Case>),
}

impl Plan {
    /// The study `name` with `spec` as its host policy, each case reading
    /// slower than `slo` as a violation and starting in `start` when given;
    /// `None` when no study has that name.
    pub fn study(
        name: &str,
        device: Option<DeviceConfig>,
        spec: &str,
        seed: u64,
        slo: Nanos,
        start: Option<StartState>,
    ) -> Option<Plan> {
        let mut cases = study(name, device, spec, seed)?;
        for case in &mut cases {
            case.sim.workload.slo = slo;
            if let Some(state) = start {
                case.sim.set_start_state(state);
            }
        }
        Some(Plan::Study(name.to_string(), cases))
    }

    /// Every spec of `sim`, each run with non-preemptive and semi-preemptive
    /// GC (labelled `SPEC/npgc` and `SPEC/pgc`) when `compare_gc`.
    pub fn runs(sim: Simulation, specs: Vec<String>, compare_gc: bool) -> Plan {
        if compare_gc {
            Plan::Study("compare-gc".into(), gc_cases(&sim, &specs))
        } else {
            Plan::Runs(Box::new(sim), specs)
        }
    }

    /// Whether `name` is a study rather than a scenario.
    pub fn is_study(name: &str) -> bool {
        STUDIES.iter().any(|(n, _)| *n == name)
    }

    /// The runs' labels, in the order they run.
    pub fn labels(&self) -> Vec<String> {
        match self {
            Plan::Runs(_, specs) => specs.clone(),
            Plan::Study(_, cases) => cases.iter().map(|c| c.label.clone()).collect(),
        }
    }

    /// What is about to run, in a few words.
    pub fn describe(&self) -> String {
        let runs = self.labels().len();
        match self {
            Plan::Runs(sim, _) => {
                let mut text = format!(
                    "simulating {runs} run(s) on {} ({} jobs)",
                    sim.device.name,
                    sim.workload.jobs.len()
                );
                if let Some(note) = self.aging_note() {
                    text += &format!(", {note}");
                }
                text
            }
            Plan::Study(name, _) => format!("simulating study {name}, {runs} run(s)"),
        }
    }

    /// How long aging the drive takes, when that is long ([`aging_note`]).
    pub fn aging_note(&self) -> Option<String> {
        match self {
            Plan::Runs(sim, _) => aging_note(&sim.device, sim.start_state()),
            Plan::Study(..) => None,
        }
    }

    /// The drive every run shares (a study's cases may differ).
    pub fn drive(&self) -> Option<&DeviceConfig> {
        match self {
            Plan::Runs(sim, _) => Some(&sim.device),
            Plan::Study(..) => None,
        }
    }

    /// What the runs' `--out` files take: every run as long as the longest
    /// workload (the drain after it is a bound, seldom used: not counted).
    pub fn files_room(&self) -> FilesRoom {
        let longest = match self {
            Plan::Runs(sim, _) => Some(sim.workload_end()),
            Plan::Study(_, cases) => cases.iter().map(|c| c.sim.workload_end()).max(),
        };
        files_room(self.labels().len(), longest.unwrap_or(Nanos::ZERO))
    }

    /// Runs everything; `progress(run, now, end)` returns false to stop.
    pub fn run(
        &self,
        progress: &mut dyn FnMut(usize, Nanos, Nanos) -> bool,
    ) -> Result<(Vec<RunReport>, f64), SimError> {
        match self {
            Plan::Runs(sim, specs) => run_all(sim, specs, progress),
            Plan::Study(_, cases) => run_cases(cases, progress),
        }
    }

    /// What `iosteer sim` prints of `runs`, which took `wall` seconds: each
    /// run's table, the study's comparison table when it has one, the
    /// speed, and one sentence per run answering the workload's question.
    pub fn text(&self, runs: &[RunReport], wall: f64) -> String {
        let mut text = String::new();
        for run in runs {
            text += &format!("{}\n", table(run));
        }
        if let Some(study_table) = self.study_table(runs) {
            text += &format!("{study_table}\n");
        }
        let requests: u64 = runs.iter().map(|r| r.requests).sum();
        text += &format!(
            "{requests} requests simulated in {wall:.2} s of wall time ({:.0} requests/s)\n\n",
            requests as f64 / wall.max(1e-9)
        );
        text + &summary::answers_text(runs)
    }

    /// The study's comparison table, for the studies that have one.
    fn study_table(&self, runs: &[RunReport]) -> Option<String> {
        match self {
            Plan::Study(name, _) if name.starts_with("pgc-") || name == "compare-gc" => {
                Some(gc_table(runs))
            }
            Plan::Study(name, _) if name == "hints" => Some(hints_table(runs)),
            _ => None,
        }
    }

    /// The study's own charts into `dir` (pgc-sweep's curves); the files written.
    pub fn write_charts(
        &self,
        dir: &Path,
        runs: &[RunReport],
    ) -> Result<Vec<PathBuf>, OutputError> {
        match self {
            Plan::Study(name, _) if name == "pgc-sweep" => write_sweep_charts(dir, runs),
            _ => Ok(Vec::new()),
        }
    }
}

/// Seconds of aging above which [`Plan::describe`] says how long it takes.
pub const AGING_NOTED_SECONDS: f64 = 10.0;

/// Page writes a second aging makes on one core, the host's and GC's moves
/// together (a move costs the model less than a host write), rounded down
/// from what it made here: about 39 million on consumer-sata (`aged=2`,
/// 31 million in 0.8 s) and 50 million on the same drive with 0.6%
/// over-provisioning (365 million, write amplification 82, in 7.3 s).
pub const AGING_PAGE_WRITES_PER_SECOND: f64 = 3e7;

/// Mapping units whose map (8 bytes a unit, forward and reverse) still fits
/// the CPU's caches well enough for [`AGING_PAGE_WRITES_PER_SECOND`]:
/// 64 MiB of map. Past it the rate falls with the square root of the map,
/// down to [`AGING_SLOWEST_PAGE_WRITES_PER_SECOND`]: a 4 TiB drive (2^28
/// pages, a 2 GiB map) aged at 6.8 million a second here, 4.4 times slower
/// than the small drives.
const AGING_CACHED_UNITS: f64 = (8u64 << 20) as f64;
const AGING_SLOWEST_PAGE_WRITES_PER_SECOND: f64 = 6e6;

/// Page writes a second of an in-order fill, written in bulk: the 193
/// million of a 4 TiB drive (`sim quick --precondition fill`) took about
/// 1.3 s here; the estimate errs long. (It was taken at the aging rate,
/// with the overwrites' write amplification named: "about 31 s".)
const FILL_PAGE_WRITES_PER_SECOND: f64 = 1e8;

/// The page writes a second aging `device` makes, by the size of its map.
fn aging_rate(device: &DeviceConfig) -> f64 {
    let units = device.logical_units() as f64;
    let slowdown = (units / AGING_CACHED_UNITS).max(1.0).sqrt();
    (AGING_PAGE_WRITES_PER_SECOND / slowdown).max(AGING_SLOWEST_PAGE_WRITES_PER_SECOND)
}

/// The host page writes aging `device` into `state` takes, at most
/// (`steady` stops when write amplification settles).
pub fn aging_writes(device: &DeviceConfig, state: StartState) -> f64 {
    let dies = f64::from(device.geometry.dies());
    let capacities = match state {
        StartState::Empty => 0.0,
        StartState::Fill { percent } => percent / 100.0,
        StartState::Aged { overwrites } => 1.0 + overwrites,
        StartState::AgedFast { overwrites } => {
            (1.0 + overwrites) * f64::from(FAST_AGING_SAMPLES).min(dies) / dies
        }
        StartState::Steady => 1.0 + f64::from(STEADY_MAX_CAPACITY_WRITES),
    };
    device.logical_units() as f64 * capacities
}

/// The write amplification uniform random overwrites reach on `device`
/// (Desnoyers' closed form for its victim policy; greedy's for
/// cost-benefit, which has none and comes close to it): a drive of little
/// spare space writes many pages for each of the host's.
pub fn expected_write_amplification(device: &DeviceConfig) -> f64 {
    let upb = device.geometry.pages_per_block * device.units_per_page();
    // Foreground GC keeps the low watermark's blocks free: spare space that
    // holds no data (an imported MQSim drive keeps 205 of its 287 spare
    // blocks a die so, and ages at 3 times the amplification of 2).
    let reserve = RESERVE_BLOCKS.max(device.gc.low_watermark);
    let spare_units = f64::from(reserve) * f64::from(upb) * f64::from(device.geometry.dies());
    let physical = device.geometry.physical_pages() as f64 * f64::from(device.units_per_page());
    let alpha = (physical - spare_units) / device.logical_units().max(1) as f64;
    let victim = match device.gc.victim {
        VictimPolicy::CostBenefit => VictimPolicy::Greedy,
        victim => victim,
    };
    match alpha > 1.0 {
        true => waf::analytic(victim, alpha, upb).unwrap_or(1.0).max(1.0),
        false => f64::INFINITY,
    }
}

/// What aging `device` into `state` takes, when it is more than
/// [`AGING_NOTED_SECONDS`]: said before the work, which would otherwise
/// seem to hang (`sim`, `sweep`, `probe --emulate`). The first capacity
/// is written in order (no GC); the overwrites cost the expected write
/// amplification each.
pub fn aging_note(device: &DeviceConfig, state: StartState) -> Option<String> {
    let writes = aging_writes(device, state);
    let first = writes.min(device.logical_units() as f64);
    if let StartState::Fill { .. } = state {
        // Written in bulk, in order: no GC, no overwrites.
        let seconds = writes / FILL_PAGE_WRITES_PER_SECOND;
        return (seconds > AGING_NOTED_SECONDS).then(|| {
            format!(
                "after filling the drive ({state}): {:.0} million page writes in order, about {seconds:.0} s",
                writes / 1e6
            )
        });
    }
    let wa = expected_write_amplification(device);
    let total = first + (writes - first) * wa;
    let seconds = total / aging_rate(device);
    (seconds > AGING_NOTED_SECONDS).then(|| {
        format!(
            "after aging the drive ({state}): up to {:.0} million page writes of the host's, \
             {:.0} million with GC's moves at the write amplification of uniform overwrites \
             ({wa:.1}), about {seconds:.0} s",
            writes / 1e6,
            total / 1e6,
        )
    })
}

/// Runs every spec on the same aged drive; returns the reports and the wall
/// time. `progress` hears (run index, simulated now, simulated end), and
/// (0, 0, 0) now and then while the drive ages; when it returns `false` the
/// current run stops, reports what it measured, and the remaining runs are
/// skipped (during aging: [`FtlError::Stopped`](iosteer_device::FtlError),
/// nothing measured).
pub fn run_all(
    sim: &Simulation,
    specs: &[String],
    progress: &mut dyn FnMut(usize, Nanos, Nanos) -> bool,
) -> Result<(Vec<RunReport>, f64), SimError> {
    sim.validate()?;
    for spec in specs {
        policy::build(spec).map_err(|source| SimError::Scheduler {
            spec: spec.clone(),
            source: Box::new(source),
        })?;
    }
    let mut aged = Some(sim.aged_device_until(&mut || progress(0, Nanos::ZERO, Nanos::ZERO))?);
    let started = Instant::now();
    let mut reports = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        // The last run takes the aged drive itself.
        let device = if i + 1 == specs.len() {
            aged.take()
        } else {
            aged.clone()
        }
        .expect("the aged drive lasts until the last run");
        let (mut report, _) = sim.run_on(spec, device, &mut |now, end| progress(i, now, end))?;
        let stop = report.interrupted;
        if let (true, [_, skipped @ ..]) = (stop, &specs[i..]) {
            if !skipped.is_empty() {
                let skipped = skipped.join(", ");
                report.notes.push(format!(
                    "stopped before the runs of {skipped}: they did not run"
                ));
            }
        }
        reports.push(report);
        if stop {
            break;
        }
    }
    Ok((reports, started.elapsed().as_secs_f64()))
}
