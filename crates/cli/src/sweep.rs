//! `iosteer sweep`: one scenario across a grid of scheduler settings; the
//! procedure is [`iosteer_study::sweep`]'s.

use std::path::Path;

use anyhow::{anyhow, bail, Result};
use iosteer_sim::workload_file::TraceOptions;
use iosteer_study::sweep::{self, family, PhaseRole, Sweep, SweepError, SweepWorkload};
use iosteer_study::{objective, page};

#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// Built-in scenario [default: fill-while-serving].
    pub scenario: Option<String>,
    /// Sweep a fio job file instead of a scenario; its phases are named after
    /// its jobs (see `iosteer sim --job FILE`): give --phase and --baseline.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["scenario", "trace"])]
    pub job: Option<String>,
    /// Sweep a trace replay instead of a scenario; --phase and --baseline are
    /// `trace` or time windows such as 0s..60s.
    #[arg(long, value_name = "FILE", conflicts_with = "scenario")]
    pub trace: Option<String>,
    #[command(flatten)]
    pub trace_options: crate::sim_cmd::TraceArgs,
    /// A grid of settings, `name:key=a..b/step,key=x,y,z`; repeat to join grids.
    #[arg(long = "vary", value_name = "GRID")]
    pub vary: Vec<String>,
    /// A single scheduler spec to add to the grid (a baseline); repeatable.
    #[arg(long = "sched", value_name = "SPEC")]
    pub scheds: Vec<String>,
    /// Read objective: `METRIC<=Nx` (times the baseline phase's) or
    /// `METRIC<=DURATION`; METRIC is mean, p50, p99, p99.9 or max.
    /// Repeat with a drive list to judge by several.
    #[arg(long, default_value = "p99<=2x")]
    pub objective: Vec<String>,
    /// With a drive list: static write limits per drive, halvings down from
    /// the scenario's fill rate (and on down to 10 kB/s while none meets;
    /// refined around the best) [default: 7].
    #[arg(long)]
    pub static_points: Option<usize>,
    /// Phase whose figures are compared [default for scenarios: fill]; for
    /// a trace, a time window START..END is one.
    #[arg(long, value_name = "NAME|START..END")]
    pub phase: Option<String>,
    /// Phase a relative objective is measured against [default for
    /// scenarios: before]; for a trace, a time window START..END is one.
    #[arg(long, value_name = "NAME|START..END")]
    pub baseline: Option<String>,
    /// Drive: a preset, family:N or a TOML file; or a comma list of them
    /// and family:A..B ranges, each setting judged on every drive.
    #[arg(long, value_name = "PRESET|FILE|LIST")]
    pub device: Option<String>,
    #[arg(long, value_name = "STATE", help = crate::PRECONDITION_HELP)]
    pub precondition: Option<String>,
    /// Seed, or seeds (`1..5`, `1,4,5`): with several, every setting runs
    /// on each and meets the objective only if it does on all.
    #[arg(
        long,
        value_name = "SEED|A..B|A,B,..",
        default_value = "1",
        allow_negative_numbers = true
    )]
    pub seed: String,
    /// Worker threads, 1 to 256 [default: one per core]; the output does
    /// not depend on it.
    #[arg(long, allow_negative_numbers = true, value_parser = threads_value)]
    pub threads: Option<usize>,
    /// SVG chart of write throughput against read latency ("-" for none)
    /// [default: sweep.svg, in --out DIR when given].
    #[arg(long, value_name = "FILE")]
    pub chart: Option<String>,
    #[command(flatten)]
    pub report: crate::ReportArgs,
}

pub fn sweep(mut args: SweepArgs) -> Result<()> {
    let chart = match (args.chart.take(), &args.report.out) {
        (Some(chart), _) => chart,
        (None, Some(dir)) => format!("{dir}/sweep.svg"),
        (None, None) => "sweep.svg".into(),
    };
    let parse = |o: &String| objective::parse(o).map_err(|e| anyhow!("--objective {e}"));
    let objectives: Vec<_> = args.objective.iter().map(parse).collect::<Result<_>>()?;
    let objective = objectives[0];
    let mut specs = Vec::new();
    for grid in &args.vary {
        specs.extend(sweep::expand_grid(grid).map_err(|e| anyhow!("--vary {e}"))?);
    }
    specs.extend(args.scheds.iter().cloned());
    let slo = args.report.slo()?;
    let seeds = sweep::parse_seeds(&args.seed).map_err(|e| anyhow!("--seed {e}"))?;
    let drives = args.device.as_deref().unwrap_or("consumer-sata");
    let list = family::is_drive_list(drives);
    if !list && (objectives.len() > 1 || args.static_points.is_some()) {
        bail!("several --objective, and --static-points, need a drive list (a,b or family:A..B)");
    }
    if list && args.report.out.is_some() {
        bail!("--out: a drive list writes a table or --json");
    }
    args.report.check_out(Default::default())?;
    if chart != "-" {
        crate::check_out_file("--chart", &chart)?;
    }
    let device = crate::load_starting_device(
        "--device",
        if list { "consumer-sata" } else { drives },
        args.precondition.as_deref(),
    )?;
    let workload = workload(&args)?;
    let file_option = args.job.as_ref().map_or("--trace", |_| "--job");
    let (phase, baseline) = workload
        .phases(args.phase.as_deref(), args.baseline.as_deref())
        .map_err(|e| anyhow!("--phase NAME and --baseline NAME: {e}"))?;
    let sweep = Sweep {
        workload,
        device,
        specs,
        seeds,
        objective,
        phase,
        baseline,
        slo,
        threads: args.threads,
    };
    let scheds = args.scheds;
    let flag_error = |e| flag_error(e, file_option, &scheds);
    if list {
        let state = crate::start_state(args.precondition.as_deref())?;
        let family = family::FamilySweep::new(sweep, drives, objectives, args.static_points, state)
            .map_err(|e| match e {
                family::FamilyError::StaticPoints { .. } => anyhow!("--static-points {e}"),
                family::FamilyError::Settings(e) => flag_error(*e),
                e @ family::FamilyError::SpecObjective { .. } => e.into(),
                e => anyhow!("--device {e}"),
            })?;
        if !args.report.json {
            eprintln!("iosteer: {}...", family.describe());
        }
        crate::interrupt::requested(); // The first Ctrl-C stops after the drive under way.
        let report = family.run(&mut |r| {
            eprintln!("iosteer: {}", family::drive_line(r));
            !crate::interrupt::requested()
        })?;
        // The report first: a chart that cannot be written then loses no result.
        let text = crate::json_or(args.report.json, &report, family::table)?;
        return crate::print_then(&text, || match chart.as_str() {
            "-" => Ok(()),
            chart => (family::chart(Path::new(chart), &report)).map_err(|e| anyhow!("--chart {e}")),
        });
    }
    let sims = sweep.simulations().map_err(flag_error)?;
    if !args.report.json {
        eprintln!("iosteer: {}...", sweep.describe(&sims));
    }
    crate::interrupt::requested(); // The first Ctrl-C stops after the runs under way.
    let keep_going = || !crate::interrupt::requested();
    let report = sweep.run_until(&sims, &keep_going).map_err(flag_error)?;
    // The report first: a chart or --out file that cannot be written then loses no result.
    let text = crate::json_or(args.report.json, &report, sweep::table)?;
    crate::print_then(&text, || {
        if chart != "-" {
            let path = Path::new(&chart);
            sweep::chart(path, &report).map_err(|e| anyhow!("--chart {}: {e}", path.display()))?;
            if !args.report.json {
                eprintln!("iosteer: wrote {}", path.display());
            }
        }
        if let Some(dir) = &args.report.out {
            // The drive as the runs had it (a scenario may shrink its GC pool).
            let drive = sims.first().map_or(&sweep.device, |sim| &sim.device);
            let context = crate::page_context(sweep.workload.describe(), Some(drive));
            let mut written = page::write_sweep(Path::new(dir), &report, &context)
                .map_err(|e| anyhow!("--out {e}"))?;
            written.extend((chart != "-").then(|| Path::new(&chart).to_path_buf()));
            crate::say_written(&written, dir);
        }
        Ok(())
    })
}

/// A `--threads` count; the range is the sweep's to check.
fn threads_value(text: &str) -> std::result::Result<usize, String> {
    let most = sweep::MAX_THREADS;
    (text.trim().parse())
        .map_err(|_| format!("expected a whole number of threads from 1 to {most}"))
}

/// The scenario, job file or trace to sweep.
fn workload(args: &SweepArgs) -> Result<SweepWorkload> {
    // clap's `requires` does not hold beside a conflicting scenario or job.
    if args.trace.is_none() && args.trace_options.options()? != TraceOptions::default() {
        bail!("--trace-* options act on --trace FILE, and none was given");
    }
    Ok(match (&args.job, &args.trace) {
        (Some(file), _) => SweepWorkload::JobFile(file.clone()),
        (None, Some(file)) => SweepWorkload::Trace {
            file: file.clone(),
            options: args.trace_options.options()?,
        },
        (None, None) => SweepWorkload::Scenario(
            args.scenario
                .clone()
                .unwrap_or_else(|| "fill-while-serving".into()),
        ),
    })
}

/// The sweep's errors, naming the options that caused them.
/// `file_option` is the one that gave the job or trace file; `scheds` are
/// the specs given with --sched (the others came from --vary).
fn flag_error(e: SweepError, file_option: &str, scheds: &[String]) -> anyhow::Error {
    match e {
        SweepError::Scheduler { ref spec, .. } if scheds.contains(spec) => anyhow!("--sched {e}"),
        SweepError::Scheduler { .. } => anyhow!("--vary {e}"),
        SweepError::RepeatedSpec { .. } => anyhow!("--vary and --sched: {e}"),
        SweepError::TooManyRuns { .. } => anyhow!("--vary, --sched and --seed: {e}"),
        SweepError::WorkloadFile(e) => crate::sim_cmd::file_error(e, file_option),
        SweepError::Window { role, source } => anyhow!("{} {source}", role_flag(role)),
        SweepError::WindowNeedsTrace { role, window, .. } => anyhow!(
            "{} {window}: time windows cut a trace (--trace FILE); a job file's or scenario's phases have names",
            role_flag(role)
        ),
        SweepError::NoSettings => {
            anyhow!("nothing to sweep: give --vary GRID (and/or --sched SPEC)")
        }
        SweepError::Threads(e) => anyhow!("--threads: {e}"),
        SweepError::BadThreads { .. } => anyhow!("--threads {e}"),
        other => other.into(),
    }
}

fn role_flag(role: PhaseRole) -> &'static str {
    match role {
        PhaseRole::Baseline => "--baseline",
        PhaseRole::Measured => "--phase",
    }
}
