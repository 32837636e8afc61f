//! `iosteer sim`: schedulers on the simulated drive.

use anyhow::{anyhow, bail, Result};
use iosteer_sched::Nanos;
use iosteer_sim::plan::Plan;
use iosteer_sim::scenario::{scenario, DEFAULT_SPECS};
use iosteer_sim::study::study_names;
use iosteer_sim::workload_file::{self, TraceOptions, WorkloadFileError};
use iosteer_sim::SimError;
use iosteer_workload::report::SimReport;
use iosteer_workload::trace::{Devices, Event, Fit, TimeUnit, TraceError, TraceFormat, Window};

use crate::{interrupt, load_device, load_starting_device};

/// What `iosteer sim` was asked to run.
#[derive(Debug, clap::Args)]
pub struct SimArgs {
    /// Built-in scenario: fill-while-serving (the default), quick, fill-listening,
    /// quick-listening, long-fill; or a study: pgc-workloads, pgc-sweep (NPGC
    /// against PGC) or hints (stream separation).
    pub scenario: Option<String>,
    /// Run a fio job file instead of a scenario (rw, bs, bsrange, size, offset, iodepth,
    /// rate, rate_iops, rate_process, startdelay, runtime, thinktime, numjobs, write_hint, ...).
    #[arg(long, value_name = "FILE")]
    pub job: Option<String>,
    /// Replay a trace file instead of a scenario.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<String>,
    #[command(flatten)]
    pub trace_options: TraceArgs,
    /// Drive: a preset (consumer-sata, enterprise-nvme, diskSim-slc), family:N or a TOML file.
    #[arg(long, value_name = "PRESET|FILE")]
    pub device: Option<String>,
    /// Scheduler spec `name[:key=value,...]`; repeat to compare
    /// [default for scenarios: fifo, the paper's two fixes, steer]
    #[arg(long = "sched", value_name = "SPEC")]
    pub scheds: Vec<String>,
    #[arg(long, value_name = "STATE", help = crate::PRECONDITION_HELP)]
    pub precondition: Option<String>,
    /// Seed of every random choice (aging, arrivals, offsets): same seed, same report.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::seed_value)]
    pub seed: u64,
    /// Run each scheduler twice, with non-preemptive and semi-preemptive GC
    /// (runs labelled SPEC/npgc and SPEC/pgc), and compare them.
    #[arg(long)]
    pub compare_gc: bool,
    #[command(flatten)]
    pub report: crate::ReportArgs,
}

/// A study, when `args` names one; `--sched` gives its host policy (one).
fn study_plan(args: &SimArgs) -> Result<Option<Plan>> {
    let Some(name) = args.scenario.as_deref().filter(|n| Plan::is_study(n)) else {
        return Ok(None);
    };
    if args.scheds.len() > 1 {
        bail!("study {name} runs one host policy; give at most one --sched");
    }
    let spec = args.scheds.first().map_or("fifo", String::as_str);
    iosteer_sched::policy::build(spec).map_err(|e| anyhow!("--sched {spec}: {e}"))?;
    let device = args
        .device
        .as_deref()
        .map(|d| load_device("--device", d))
        .transpose()?;
    let slo = args.report.slo()?;
    let start = crate::start_state(args.precondition.as_deref())?;
    Ok(Plan::study(name, device, spec, args.seed, slo, start))
}

fn build(args: &SimArgs) -> Result<Plan> {
    if let Some(plan) = study_plan(args)? {
        return Ok(plan);
    }
    let device = load_starting_device(
        "--device",
        args.device.as_deref().unwrap_or("consumer-sata"),
        args.precondition.as_deref(),
    )?;
    let sources = [
        args.scenario.is_some(),
        args.job.is_some(),
        args.trace.is_some(),
    ];
    if sources.iter().filter(|s| **s).count() > 1 {
        bail!("give one workload: a scenario, --job FILE or --trace FILE");
    }
    let fifo_only = || vec!["fifo".to_string()];
    let (mut sim, default_specs) = if let Some(file) = &args.job {
        let sim = workload_file::job_simulation(file, device, args.seed);
        (sim.map_err(|e| file_error(e, "--job"))?, fifo_only())
    } else if let Some(file) = &args.trace {
        let options = args.trace_options.options()?;
        let sim = workload_file::trace_simulation(file, &options, device, args.seed);
        (sim.map_err(|e| file_error(e, "--trace"))?, fifo_only())
    } else {
        let name = args.scenario.as_deref().unwrap_or("fill-while-serving");
        let file = std::path::Path::new(name).is_file();
        let sim = scenario(name, device, args.seed).map_err(|e| match file {
            true => anyhow!("{e}; a file goes with --job {name} (fio) or --trace {name}"),
            false => anyhow!("{e}; studies: {}", study_names()),
        })?;
        (sim, DEFAULT_SPECS.iter().map(|s| s.to_string()).collect())
    };
    sim.workload.slo = args.report.slo()?;
    let specs = if args.scheds.is_empty() {
        default_specs
    } else {
        args.scheds.clone()
    };
    Ok(Plan::runs(sim, specs, args.compare_gc))
}

/// A job or trace file's error, naming the option that caused it (`option`
/// gave the file).
pub(crate) fn file_error(e: WorkloadFileError, option: &str) -> anyhow::Error {
    match e {
        WorkloadFileError::Read { file, source } => anyhow!("{option} {file}: {source}"),
        WorkloadFileError::Speed { speed } => {
            anyhow!("--trace-speed {speed}: expected a positive finite number")
        }
        e @ WorkloadFileError::UnitOfItsOwn { unit, .. } => anyhow!("--trace-unit {unit}: {e}"),
        e @ WorkloadFileError::OneEvent { event, .. } => anyhow!("--trace-event {event}: {e}"),
        WorkloadFileError::Trace(e @ TraceError::TooLarge { .. }) => {
            anyhow!("{e} (--trace-fit wrap|scale)")
        }
        WorkloadFileError::Trace(e) => anyhow!("{option} {e}"),
        WorkloadFileError::Fio(e) if e.message.contains("must fit the drive") => {
            let (name, bytes) = iosteer_device::config::largest_preset();
            let gib = bytes as f64 / f64::from(1 << 30);
            anyhow!("{e}; --device takes a larger drive file (`iosteer device show {name}` prints the largest preset, {gib:.1} GiB, to edit its geometry)")
        }
        other => other.into(),
    }
}

/// The trace options `iosteer sim` and `iosteer sweep` share.
#[derive(Debug, clap::Args)]
pub struct TraceArgs {
    /// Trace format: ascii (five columns), spc, msr, alibaba, tencent, fiu, systor, blkparse,
    /// blktrace (DEV.blktrace.N files, or their prefix DEV), ftrace or iolog
    /// (fio's); plain, gzip, bzip2 or zstd, or a tar archive of the one file.
    #[arg(long, default_value = "ascii", requires = "trace", value_parser = crate::one_of(TraceFormat::parse, TraceFormat::NAMES))]
    pub trace_format: TraceFormat,
    /// The event of blkparse, blktrace and ftrace traces that is a request's
    /// arrival: queue (Q, block_bio_queue) or issue (D, block_rq_issue).
    #[arg(long, default_value = "queue", value_name = "EVENT", requires = "trace", value_parser = crate::one_of(Event::parse, Event::NAMES))]
    pub trace_event: Event,
    /// Time unit of ascii traces: ns, us, ms or s.
    #[arg(long, default_value = "ns", requires = "trace", value_parser = crate::one_of(TimeUnit::parse, TimeUnit::NAMES))]
    pub trace_unit: TimeUnit,
    /// Replay speed (2 = twice as fast).
    #[arg(
        long,
        default_value_t = 1.0,
        allow_negative_numbers = true,
        requires = "trace"
    )]
    pub trace_speed: f64,
    /// Remap trace addresses that do not fit the drive: wrap (those past its end, modulo
    /// the drive) or scale (all of them, in proportion, aligned up to a page and in order);
    /// with --trace-devices separate, each device within a share of the drive of its own,
    /// in proportion to its reach.
    #[arg(long, value_name = "HOW", requires = "trace", value_parser = crate::one_of(Fit::parse, Fit::NAMES))]
    pub trace_fit: Option<Fit>,
    /// The trace's device column (ASU, disk): merge (every device's addresses
    /// on the drive as they are, overlapping, as SSDsim does) or separate
    /// (each device in a range of its own, which --trace-fit keeps apart).
    #[arg(long, default_value = "merge", value_name = "HOW", requires = "trace", value_parser = crate::one_of(Devices::parse, Devices::NAMES))]
    pub trace_devices: Devices,
    /// Replay only the requests arriving in START..END after the trace's first (1h..2h).
    #[arg(long, value_name = "START..END", value_parser = |t: &str| Window::parse(t), requires = "trace")]
    pub trace_window: Option<Window>,
}

impl TraceArgs {
    /// The options, checked together.
    pub fn options(&self) -> Result<TraceOptions> {
        let options = TraceOptions {
            format: self.trace_format,
            unit: self.trace_unit,
            speed: self.trace_speed,
            fit: self.trace_fit.unwrap_or(Fit::Refuse),
            devices: self.trace_devices,
            event: self.trace_event,
            window: self.trace_window,
        };
        options.check().map_err(|e| file_error(e, "--trace"))?;
        Ok(options)
    }
}

/// What the runs served, for the report's question.
fn workload_name(args: &SimArgs, plan: &Plan) -> String {
    match (plan, &args.job, &args.trace) {
        (Plan::Study(name, _), _, _) => format!("study {name}"),
        (_, Some(file), _) => format!("job file {file}"),
        (_, _, Some(file)) => format!("trace {file}"),
        _ => format!(
            "scenario {}",
            args.scenario.as_deref().unwrap_or("fill-while-serving")
        ),
    }
}

pub fn sim(args: SimArgs) -> Result<()> {
    args.report.check_out(Default::default())?;
    let plan = build(&args)?;
    args.report.check_out(plan.files_room())?;
    let specs = plan.labels();
    // With --json stdout holds the report; a long aging is still said.
    if !args.report.json || plan.aging_note().is_some() {
        eprintln!("iosteer: {}...", plan.describe());
    }
    let started = std::time::Instant::now();
    let show = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut shown = false;
    interrupt::requested();
    let mut progress = |run: usize, now: Nanos, end: Nanos| {
        if show && started.elapsed().as_secs_f64() > 1.0 {
            if end == Nanos::ZERO {
                eprint!("\r  aging the drive (Ctrl-C stops)   ");
            } else {
                let (now, end) = (now.as_secs_f64(), end.as_secs_f64());
                let run = format!("run {}/{} {}", run + 1, specs.len(), specs[run]);
                eprint!("\r  {run}: {now:.0} of {end:.0} s simulated   ");
            }
            shown = true;
        }
        !interrupt::requested()
    };
    let result = plan.run(&mut progress);
    if shown {
        eprintln!();
    }
    let (runs, wall) = result.map_err(|e| match e {
        SimError::Scheduler { spec, source } => anyhow!("--sched {spec}: {source}"),
        other => other.into(),
    })?;
    let requests: u64 = runs.iter().map(|r| r.requests).sum();
    let report = SimReport::new(&runs, requests, wall);
    let json = serde_json::to_string_pretty(&report)?;
    // The report first: an --out file that cannot be written then loses no result.
    let text = match args.report.json {
        true => format!("{json}\n"),
        false => plan.text(&runs, wall),
    };
    args.report.print_and_write(&text, |dir| {
        let context = crate::page_context(workload_name(&args, &plan), plan.drive());
        let mut written = crate::write_run_outputs(dir, &runs, &json, &context)?;
        written.extend(
            plan.write_charts(dir, &runs)
                .map_err(|e| anyhow!("--out {e}"))?,
        );
        Ok(written)
    })
}
