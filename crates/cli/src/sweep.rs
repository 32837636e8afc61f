//! `iosteer sweep`: one scenario across a grid of scheduler settings; the
//! procedure is [`iosteer_study::sweep`]'s.

use std::path::Path;

use anyhow::{anyhow, Result};
use iosteer_study::objective;
use iosteer_study::sweep::{self, Sweep, SweepError};

#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// Built-in scenario [default: fill-while-serving].
    pub scenario: Option<String>,
    /// A grid of settings, `name:key=a..b/step,key=x,y,z`; repeat to join grids.
    #[arg(long = "vary", value_name = "GRID")]
    pub vary: Vec<String>,
    /// A single scheduler spec to add to the grid (a baseline); repeatable.
    #[arg(long = "sched", value_name = "SPEC")]
    pub scheds: Vec<String>,
    /// Read objective: `METRIC<=Nx` (times the baseline phase's) or
    /// `METRIC<=DURATION`; METRIC is mean, p50, p99, p99.9 or max.
    #[arg(long, default_value = "p99<=2x")]
    pub objective: String,
    /// Phase whose figures are compared.
    #[arg(long, default_value = "fill")]
    pub phase: String,
    /// Phase a relative objective is measured against.
    #[arg(long, default_value = "before")]
    pub baseline: String,
    /// Drive: a preset or a TOML file.
    #[arg(long, value_name = "PRESET|FILE")]
    pub device: Option<String>,
    /// Seed, or seeds (`1..5`, `1,4,5`): with several, every setting runs
    /// on each and meets the objective only if it does on all.
    #[arg(
        long,
        value_name = "SEED|A..B|A,B,..",
        default_value = "1",
        allow_negative_numbers = true
    )]
    pub seed: String,
    /// Reads slower than this count as SLO violations.
    #[arg(long, default_value_t = 35.0, allow_negative_numbers = true)]
    pub slo_ms: f64,
    /// Worker threads, 1 to 256 [default: one per core]; the output does
    /// not depend on it.
    #[arg(long, allow_negative_numbers = true, value_parser = threads_value)]
    pub threads: Option<usize>,
    /// SVG chart of write throughput against read latency ("-" for none).
    #[arg(long, value_name = "FILE", default_value = "sweep.svg")]
    pub chart: String,
    /// Print JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
}

pub fn sweep(args: SweepArgs) -> Result<()> {
    if args.chart != "-" {
        crate::check_out_file("--chart", &args.chart)?;
    }
    let objective = objective::parse(&args.objective).map_err(|e| anyhow!("--objective {e}"))?;
    let mut specs = Vec::new();
    for grid in &args.vary {
        specs.extend(sweep::expand_grid(grid).map_err(|e| anyhow!("--vary {e}"))?);
    }
    specs.extend(args.scheds.iter().cloned());
    let slo = crate::slo(args.slo_ms)?;
    let seeds = sweep::parse_seeds(&args.seed).map_err(|e| anyhow!("--seed {e}"))?;
    let device = crate::load_device(
        "--device",
        args.device.as_deref().unwrap_or("consumer-sata"),
    )?;
    let sweep = Sweep {
        scenario: args.scenario.unwrap_or_else(|| "fill-while-serving".into()),
        device,
        specs,
        seeds,
        objective,
        phase: args.phase,
        baseline: args.baseline,
        slo,
        threads: args.threads,
    };
    let scheds = args.scheds;
    let flag_error = |e| flag_error(e, &scheds);
    let sims = sweep.simulations().map_err(flag_error)?;
    if !args.json {
        eprintln!(
            "iosteer: sweeping {} setting(s) of {} on {}, {} seed(s)...",
            sweep.specs.len(),
            sweep.scenario,
            sweep.device.name,
            sweep.seeds.len()
        );
    }
    let report = sweep.run(&sims).map_err(flag_error)?;
    if args.chart != "-" {
        let path = Path::new(&args.chart);
        sweep::chart(path, &report).map_err(|e| anyhow!("--chart {}: {e}", path.display()))?;
        if !args.json {
            eprintln!("iosteer: wrote {}", path.display());
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", sweep::table(&report));
    }
    Ok(())
}

/// A `--threads` count; the range is the sweep's to check.
fn threads_value(text: &str) -> std::result::Result<usize, String> {
    text.trim().parse().map_err(|_| {
        format!(
            "expected a whole number of threads from 1 to {}",
            sweep::MAX_THREADS
        )
    })
}

/// The sweep's errors, naming the options that caused them.
fn flag_error(e: SweepError, scheds: &[String]) -> anyhow::Error {
    match e {
        SweepError::Scheduler { ref spec, .. } if scheds.contains(spec) => anyhow!("--sched {e}"),
        SweepError::Scheduler { .. } => anyhow!("--vary {e}"),
        SweepError::NoSettings => {
            anyhow!("nothing to sweep: give --vary GRID (and/or --sched SPEC)")
        }
        SweepError::Threads(e) => anyhow!("--threads: {e}"),
        SweepError::BadThreads { .. } => anyhow!("--threads {e}"),
        other => other.into(),
    }
}
