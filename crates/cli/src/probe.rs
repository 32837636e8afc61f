//! `iosteer probe`: the write limit of a real target or an emulated drive;
//! the procedure is [`iosteer_study::probe`]'s.

use std::path::PathBuf;

use anyhow::{anyhow, Result};
use iosteer_sched::Nanos;
use iosteer_study::objective;
use iosteer_study::probe::{self, ProbeError, ProbeOptions, ReadLoad, Throttle};
use iosteer_workload::{fio::size_value, fio_text::read_text};

use crate::interrupt;

#[derive(Debug, clap::Args)]
pub struct ProbeArgs {
    /// File or block device to probe (it is written).
    #[arg(long, value_name = "PATH", required_unless_present = "emulate")]
    pub target: Option<PathBuf>,
    /// Probe the simulator's drive model in real time instead: a preset
    /// (consumer-sata, enterprise-nvme, diskSim-slc), family:N or a TOML file.
    /// It is aged once, with its idle-GC pool cut to 4 blocks per die, and
    /// kept across the steps, as a real drive is.
    #[arg(long, value_name = "PRESET|FILE", conflicts_with_all = ["target", "size", "force"])]
    pub emulate: Option<String>,
    #[arg(long, value_name = "STATE", requires = "emulate", help = crate::PRECONDITION_HELP)]
    #[arg(conflicts_with_all = ["target", "size", "force"])]
    pub precondition: Option<String>,
    /// Create the target file, or grow it, to this size (fio syntax: 1g);
    /// what it adds is written through once before the probe.
    #[arg(long, value_name = "SIZE", value_parser = crate::size)]
    pub size: Option<u64>,
    /// Allow writing to a block device (its data is destroyed).
    #[arg(long)]
    pub force: bool,
    /// fio job file with the read load (reads only) [default: random 128 KiB
    /// reads at --read-rate].
    #[arg(long, value_name = "FILE")]
    pub read_job: Option<String>,
    /// Rate of the default reads, per second (fio size: 100m) [default: 40% of
    /// the emulated drive's host link (its NAND's when slower), or of what a
    /// real target read in a calibration step].
    #[arg(long, value_name = "RATE", conflicts_with = "read_job")]
    pub read_rate: Option<String>,
    /// Size of each write (fio size, a multiple of 4k).
    #[arg(long, value_name = "SIZE", default_value = "128k")]
    pub write_bs: String,
    /// What holds the writes to each step's rate: the scheduler (netflix's
    /// bandwidth limiter, the writer keeps 32 writes queued: the limit to
    /// configure) or the writer (it issues at the rate, fio's rate=: the
    /// load the drive tolerates).
    #[arg(long, default_value = "scheduler", value_parser = crate::one_of(Throttle::parse, Throttle::NAMES))]
    pub throttle: Throttle,
    /// Scheduler spec. With --throttle scheduler, netflix settings the
    /// limiter is added to [default: netflix]; with --throttle writer, the
    /// policy the writes go through [default: fifo].
    #[arg(long = "sched", value_name = "SPEC")]
    pub sched: Option<String>,
    /// Write rates to step through, per second, lowest first (fio sizes:
    /// 5m,10m,20m).
    #[arg(long, value_name = "LIST", conflicts_with_all = ["start", "step", "max"])]
    pub rates: Option<String>,
    /// First write rate, per second.
    #[arg(long, value_name = "RATE", default_value = "5m")]
    pub start: String,
    /// Increase of the write rate per step.
    #[arg(long, value_name = "RATE", default_value = "5m")]
    pub step: String,
    /// Highest write rate.
    #[arg(long, value_name = "RATE", default_value = "100m")]
    pub max: String,
    /// How long each step runs (fio time: 10s, 1m).
    #[arg(long, value_name = "TIME", default_value = "10s")]
    pub step_time: String,
    /// How long the start of each step is left out of its measurement.
    #[arg(long, value_name = "TIME", default_value = "2s")]
    pub settle: String,
    /// Read objective: `METRIC<=Nx` (times the baseline step's) or
    /// `METRIC<=DURATION`; METRIC is mean, p50, p99, p99.9 or max.
    #[arg(long, default_value = "p99<=2x")]
    pub objective: String,
    /// Seed of the reads' random choices and the emulated drive's aging.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::seed_value)]
    pub seed: u64,
    #[command(flatten)]
    pub report: crate::ReportArgs,
}

pub fn probe(args: ProbeArgs) -> Result<()> {
    args.report.check_out(Default::default())?;
    let options = options(&args)?;
    // The drive as emulated, for the page: loaded once, before the work.
    let mut drive = None;
    let outcome = match (&args.emulate, &args.target) {
        (Some(spec), _) => {
            let config =
                crate::load_starting_device("--emulate", spec, args.precondition.as_deref())?;
            drive = Some(probe::emulated_drive(config.clone()));
            probe::probe_emulated(&options, config)
                .map_err(|e| flag_error(e, &format!("--emulate {spec}"), &args))?
        }
        (None, Some(path)) => probe::probe_real(&options, path, args.size, args.force)
            .map_err(|e| flag_error(e, &path.display().to_string(), &args))?,
        (None, None) => return Err(anyhow!("give --target PATH or --emulate PRESET")),
    };
    // The report first: an --out file that cannot be written then loses no result.
    let text = crate::json_or(args.report.json, &outcome.report, probe::table)?;
    args.report.print_and_write(&text, |dir| {
        let mut context = crate::page_context(String::new(), drive.as_ref());
        if let Some(e) = &outcome.error {
            let warning = format!("the probe ended with an error: {e}");
            context.warnings.push(warning);
        }
        probe::write_out(dir, &outcome, &options.metric, &context).map_err(|e| anyhow!("--out {e}"))
    })?;
    outcome.error.map_or(Ok(()), |e| Err(e.into()))
}

/// The probe's errors, naming the options (and `target`, what was probed)
/// that caused them.
fn flag_error(e: ProbeError, target: &str, args: &ProbeArgs) -> anyhow::Error {
    match e {
        ProbeError::Scheduler { spec, source } => anyhow!("--sched {spec}: {source}"),
        ProbeError::ThrottledScheduler { spec, source } => anyhow!(
            "--sched {spec}: {source} (--throttle scheduler adds netflix's bandwidth limiter to the spec; --throttle writer takes any policy)"
        ),
        ProbeError::ReadJob { .. } => anyhow!("--read-job {e}"),
        ProbeError::TooSmall { .. } if args.emulate.is_some() => anyhow!("{target}: {e}"),
        ProbeError::TooSmall { .. } => {
            anyhow!("{target}: {e} (give --size to create or grow a file)")
        }
        ProbeError::DriveConfig(_) | ProbeError::Aging(_) => anyhow!("{target}: {e}"),
        ProbeError::CalibrationReadNothing => anyhow!("{e}; give --read-rate"),
        ProbeError::MaxBelowStart => anyhow!("--max {}: below --start {}", args.max, args.start),
        ProbeError::TooManySteps { .. } => anyhow!(
            "--start {} --step {} --max {}: {e}",
            args.start,
            args.step,
            args.max
        ),
        ProbeError::RatesNotIncreasing => {
            anyhow!("--rates {}: {e}", args.rates.as_deref().unwrap_or(""))
        }
        ProbeError::TooManyRates { .. } => anyhow!("--rates: {e}"),
        ProbeError::WriteSize { .. } => anyhow!(
            "--write-bs {}: expected a multiple of 4k from 4k to 16m, like 128k",
            args.write_bs
        ),
        ProbeError::StepTime => anyhow!(
            "--step-time {} --settle {}: {e}",
            args.step_time,
            args.settle
        ),
        other => other.into(),
    }
}

fn rate_value(option: &str, text: &str) -> Result<u64> {
    size_value(text).filter(|r| *r > 0).ok_or_else(|| {
        anyhow!("{option} {text}: expected a positive rate per second like 5m or 500k")
    })
}

fn time_option(option: &str, text: &str) -> Result<Nanos> {
    crate::duration(text).map_err(|e| anyhow!("{option} {text}: {e}"))
}

/// The write rates of `--rates`, or of `--start`, `--step` and `--max`.
fn rates(args: &ProbeArgs) -> Result<Vec<u64>> {
    let checked = match &args.rates {
        None => probe::ramp(
            rate_value("--start", &args.start)?,
            rate_value("--step", &args.step)?,
            rate_value("--max", &args.max)?,
        ),
        Some(list) => probe::listed(
            list.split(',')
                .map(|r| rate_value("--rates", r.trim()))
                .collect::<Result<_>>()?,
        ),
    };
    checked.map_err(|e| flag_error(e, "", args))
}

/// The options, checked.
fn options(args: &ProbeArgs) -> Result<ProbeOptions> {
    let objective = objective::parse(&args.objective).map_err(|e| anyhow!("--objective {e}"))?;
    let metric = args.objective.split_once("<=").map_or("", |(m, _)| m);
    let write_bs = size_value(&args.write_bs).unwrap_or(0);
    let reads = match (&args.read_job, &args.read_rate) {
        (Some(file), _) => ReadLoad::File {
            text: read_text(file).map_err(|e| anyhow!("--read-job {file}: {e}"))?,
            name: file.clone(),
        },
        (None, Some(rate)) => ReadLoad::Rate(rate_value("--read-rate", rate)? as f64),
        (None, None) => ReadLoad::Default,
    };
    let throttle = args.throttle;
    let options = ProbeOptions {
        objective,
        metric: metric.trim().to_string(),
        rates: rates(args)?,
        throttle,
        base_spec: args
            .sched
            .clone()
            .unwrap_or_else(|| throttle.default_spec().to_string()),
        write_bs,
        reads,
        step_time: time_option("--step-time", &args.step_time)?,
        settle: time_option("--settle", &args.settle)?,
        slo: args.report.slo()?,
        seed: args.seed,
        stop: interrupt::requested,
    };
    options.check().map_err(|e| flag_error(e, "", args))?;
    Ok(options)
}
