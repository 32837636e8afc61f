//! `iosteer run`: a fio job file against a real file or block device (or the
//! emulated drive), through a scheduler policy, driven by
//! [`iosteer_engine::drive`] and reported like a simulation.

use std::path::PathBuf;

use anyhow::{anyhow, bail, Result};
use iosteer_device::DeviceConfig;
use iosteer_engine::drive::{run_length, Measured, Plan, DRAIN};
use iosteer_engine::engine::{ConfigError as EngineConfigError, Reap};
use iosteer_engine::files::{self, FileOptions, FilesError};
use iosteer_engine::metrics::MetricsServer;
use iosteer_engine::on_files::{run_on_files, OnFilesError};
use iosteer_engine::{EngineConfig, TargetError};
use iosteer_sched::{policy, Nanos, Scheduler};
use iosteer_sim::scenario::scenario;
use iosteer_sim::Simulation;
use iosteer_study::emulated::run_emulated;
use iosteer_workload::fio::{parse_file, JobFile};
use iosteer_workload::fio_text::read_text;
use iosteer_workload::output::files_room;
use iosteer_workload::report::{table, Phase, SimReport};
use iosteer_workload::workload::{Job, Workload};

use crate::interrupt;

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// File or device for jobs naming no file, or the directory of their
    /// files (fio's --filename, --directory) [default: the current one].
    #[arg(long, value_name = "PATH")]
    pub target: Option<PathBuf>,
    /// Run against the simulator's drive model in real time instead of a
    /// target: a preset (consumer-sata, enterprise-nvme, diskSim-slc),
    /// family:N or a drive TOML file, aged as `iosteer sim` ages it.
    #[arg(long, value_name = "PRESET|FILE", conflicts_with_all = ["target", "size", "force", "buffered", "verify", "iopoll"])]
    pub emulate: Option<String>,
    #[arg(long, value_name = "STATE", requires = "emulate", help = crate::PRECONDITION_HELP)]
    #[arg(conflicts_with_all = ["target", "size", "force", "buffered", "verify", "iopoll"])]
    pub precondition: Option<String>,
    /// fio job file (the subset `iosteer sim --job` accepts).
    #[arg(long, value_name = "FILE", required_unless_present = "scenario")]
    pub job: Option<String>,
    /// With --emulate: one of `iosteer sim`'s built-in scenarios instead of
    /// a job file (its jobs, phases and drive settings), for example `quick`.
    #[arg(
        long,
        value_name = "NAME",
        requires = "emulate",
        conflicts_with = "job"
    )]
    pub scenario: Option<String>,
    /// Scheduler spec `name[:key=value,...]`.
    #[arg(long = "sched", value_name = "SPEC", default_value = "fifo")]
    pub sched: String,
    /// How long jobs issue (fio time syntax: 10s, 2m) [default, and 0 as
    /// fio's runtime=0: the jobs' runtime, or 10 s].
    #[arg(long, value_name = "TIME", value_parser = crate::duration)]
    pub duration: Option<Nanos>,
    /// Create the target file, or grow it, to this size (fio syntax: 1g);
    /// also the size of jobs that give none.
    #[arg(long, value_name = "SIZE", value_parser = crate::size)]
    pub size: Option<u64>,
    /// Allow writing to a block device (its data is destroyed).
    #[arg(long)]
    pub force: bool,
    /// Commands in the target at once (1 to 4096).
    #[arg(long, default_value_t = 32, allow_negative_numbers = true)]
    pub queue_depth: u32,
    /// Use the page cache (no O_DIRECT).
    #[arg(long)]
    pub buffered: bool,
    /// Stamp every written block and check every read one.
    #[arg(long)]
    pub verify: bool,
    /// How completions are reaped: interrupt (sleep until one arrives), poll
    /// (spin on the completion ring: a whole core), hybrid (sleep half the
    /// mean completion time, then spin).
    #[arg(long, value_name = "MODE", default_value = "interrupt", value_parser = clap::builder::PossibleValuesParser::new(Reap::NAMES))]
    pub reap: String,
    /// Poll the driver for completions (io_uring IOPOLL): O_DIRECT reads and
    /// writes only; falls back, saying why, where the target cannot.
    #[arg(long)]
    pub iopoll: bool,
    /// Seed of the jobs' random choices.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::seed_value)]
    pub seed: u64,
    /// Serve Prometheus metrics at http://ADDR/metrics while the run lasts
    /// (for example 127.0.0.1:9464), updated every second.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,
    #[command(flatten)]
    pub report: crate::ReportArgs,
}

/// The job file and options every run needs, checked.
struct Setup {
    sched: Box<dyn Scheduler>,
    /// The job file's name and text (none with --scenario).
    job: Option<(String, String)>,
    metrics: Option<MetricsServer>,
    slo: Nanos,
    /// The job file's notes: they go in the report.
    notes: Vec<String>,
}

fn setup(args: &RunArgs) -> Result<Setup> {
    // A depth the engine refuses fails at once, naming the flag.
    engine_config(args)
        .validate()
        .map_err(engine_config_error)?;
    let sched = policy::build(&args.sched).map_err(|e| anyhow!("--sched {}: {e}", args.sched))?;
    let slo = args.report.slo()?;
    let read = |file: &String| read_text(file).map_err(|e| anyhow!("--job {file}: {e}"));
    let job = (args.job.as_ref()).map(|f| read(f).map(|text| (f.clone(), text)));
    let job = job.transpose()?;
    // Listen before anything slow (aging a drive), so a bad address fails fast.
    let metrics = args
        .metrics
        .as_deref()
        .map(|addr| MetricsServer::start(addr).map_err(|e| anyhow!("--metrics: {e}")))
        .transpose()?;
    if let Some(addr) = metrics.as_ref().map(MetricsServer::local_addr) {
        eprintln!("iosteer: serving metrics at http://{addr}/metrics");
    }
    Ok(Setup {
        sched,
        job,
        metrics,
        slo,
        notes: Vec::new(),
    })
}

/// Parses the job file (its text and name) with `parse`, keeping its notes.
fn parse_jobs<F: FnOnce(&str, &str) -> Result<JobFile>>(
    setup: &mut Setup,
    parse: F,
) -> Result<Vec<Job>> {
    let Some((file, text)) = &setup.job else {
        bail!("give --job FILE (or, with --emulate, --scenario NAME)");
    };
    let parsed = parse(text, file)?;
    if parsed.jobs.is_empty() {
        bail!("--job {file}: the job file has no job");
    }
    setup.notes = parsed.notes;
    Ok(parsed.jobs)
}

pub fn run(args: RunArgs) -> Result<()> {
    let setup = setup(&args)?;
    interrupt::requested();
    match &args.emulate {
        Some(drive) => on_emulated(&args, setup, drive),
        None => on_target(&args, setup),
    }
}

fn on_target(args: &RunArgs, mut setup: Setup) -> Result<()> {
    let options = FileOptions {
        target: args.target.clone(),
        size: args.size,
        force: args.force,
        direct: !args.buffered,
        stop: Some(interrupt::requested),
    };
    let jobs = parse_jobs(&mut setup, |t, f| {
        files::parse_job_file(t, f, &options).map_err(|e| files_error(e, args))
    })?;
    check_room(args, &jobs)?;
    let config = EngineConfig {
        verify: args.verify,
        iopoll: args.iopoll,
        ..engine_config(args)
    };
    let measured =
        run_on_files(plan(args, setup, jobs, None), &options, config).map_err(|e| match e {
            OnFilesError::Files(e) => files_error(e, args),
            OnFilesError::IopollTrims => anyhow!("--iopoll: {e}"),
            e @ OnFilesError::VerifyBlocks { .. } => anyhow!("--verify: {e}"),
            OnFilesError::Config(e) => engine_config_error(e),
            other => other.into(),
        })?;
    write(args, measured, None)
}

fn on_emulated(args: &RunArgs, mut setup: Setup, drive_name: &str) -> Result<()> {
    let config =
        crate::load_starting_device("--emulate", drive_name, args.precondition.as_deref())?;
    let sim = match &args.scenario {
        Some(name) => {
            scenario(name, config, args.seed).map_err(|e| anyhow!("--scenario {name}: {e}"))?
        }
        None => {
            let jobs = parse_jobs(&mut setup, |t, f| {
                Ok(parse_file(t, f, config.logical_bytes())?)
            })?;
            Simulation::of_job_file(config, jobs, args.seed, DRAIN)
        }
    };
    check_room(args, &sim.workload.jobs)?;
    eprintln!("iosteer: aging the emulated {} drive...", sim.device.name);
    let device = sim.device.clone();
    let plan_for = |jobs, phases| plan(args, setup, jobs, phases);
    let measured = run_emulated(sim, interrupt::requested, plan_for)?;
    write(args, measured, Some(&device))
}

/// Checks that `--out` has room for the files of a run of `jobs`.
fn check_room(args: &RunArgs, jobs: &[Job]) -> Result<()> {
    let span = run_length(args.duration, jobs) + DRAIN;
    args.report.check_out(files_room(1, span))
}

/// The engine's configuration for `args`, checked before anything else runs
/// (with the smallest request: the jobs' largest is set when they are known).
fn engine_config(args: &RunArgs) -> EngineConfig {
    EngineConfig {
        queue_depth: args.queue_depth,
        max_io_bytes: 4096,
        verify: false,
        reap: Reap::from_name(&args.reap).expect("clap checked the name"),
        iopoll: false,
        keep_read_data: false,
    }
}

/// The engine's configuration errors, naming the flags that set it.
fn engine_config_error(e: EngineConfigError) -> anyhow::Error {
    match e {
        EngineConfigError::QueueDepth { .. } => anyhow!("--queue-depth: {e}"),
        EngineConfigError::BuffersTooLarge { .. } => {
            anyhow!("--queue-depth and the job file's largest block size (bs): {e}")
        }
        other => other.into(),
    }
}

/// The files' errors, naming --target when it is the file, with the flag
/// that gets past each.
fn files_error(e: FilesError, args: &RunArgs) -> anyhow::Error {
    use {std::io::ErrorKind::NotFound, TargetError::*};
    let hint = match &e {
        FilesError::Target(BlockDeviceNeedsForce { .. }) => ": pass --force to write to it",
        FilesError::Target(TooSmall { .. }) => ": give --size to create or grow a file",
        FilesError::Target(Io { source: s, .. }) if s.kind() == NotFound => ": --size creates it",
        FilesError::Target(DirectIoUnsupported { .. }) => " (pass --buffered)",
        FilesError::Missing { .. } | FilesError::Short { .. } => ", or --size",
        FilesError::NoRoom { .. } => ": free space, or give the jobs (size=) or --size less",
        FilesError::JobsPastSize { .. } => ": the drive here is --size; give a larger --size",
        FilesError::JobsPastFiles { .. } | FilesError::PercentOfNothing { .. } => ": give --size",
        _ => "",
    };
    let text = e.to_string();
    // The target itself, not a file inside the target directory.
    let on_target = (args.target.as_ref()).is_some_and(|p| {
        (text.strip_prefix(&*p.to_string_lossy())).is_some_and(|rest| rest.starts_with([':', ' ']))
    });
    anyhow!("{}{text}{hint}", if on_target { "--target " } else { "" })
}

/// `iosteer run`'s plan; without `phases`, phases follow the jobs (as a
/// job file's in `iosteer sim`).
fn plan(args: &RunArgs, setup: Setup, jobs: Vec<Job>, phases: Option<Vec<Phase>>) -> Plan {
    let run_for = run_length(args.duration, &jobs);
    Plan {
        sched: setup.sched,
        spec: args.sched.clone(),
        workload: Workload {
            slo: setup.slo,
            ..match phases {
                Some(phases) => Workload::in_phases(jobs, phases, args.seed),
                None => Workload::of_job_file(jobs, args.seed),
            }
        },
        run_for,
        per_second: true,
        metrics: setup.metrics,
        stop: interrupt::requested,
        notes: setup.notes,
    }
}

/// Prints and writes the reports (even after an error: what was measured
/// stands), then returns the run's error, if any. `drive` is the emulated
/// drive's configuration.
fn write(args: &RunArgs, measured: Measured, drive: Option<&DeviceConfig>) -> Result<()> {
    let mut context = crate::page_context(workload_name(args), drive);
    if let Some(e) = &measured.error {
        context
            .warnings
            .push(format!("the run ended with an error: {e}"));
    }
    let faults = measured.faults();
    let runs = [measured.report];
    let json =
        serde_json::to_string_pretty(&SimReport::new(&runs, measured.requests, measured.wall))?;
    // The report first: an --out file that cannot be written then loses no result.
    let text = match args.report.json {
        true => format!("{json}\n"),
        false => format!("{}\n", table(&runs[0])),
    };
    args.report.print_and_write(&text, |dir| {
        crate::write_run_outputs(dir, &runs, &json, &context)
    })?;
    match measured.error {
        Some(e) => Err(e.into()),
        None => Ok(faults?),
    }
}

/// What the run served, for the report's question.
fn workload_name(args: &RunArgs) -> String {
    match (&args.scenario, &args.job) {
        (Some(name), _) => format!("scenario {name}"),
        (_, Some(file)) => format!("job file {file}"),
        _ => String::new(),
    }
}
