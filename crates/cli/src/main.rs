//! `iosteer`: the command line of the iosteer toolkit.
//!
//! Subcommands live in their own modules; each parses its arguments, calls
//! a library (`iosteer-sim`, `iosteer-engine`, `iosteer-study`) and prints.
//! Errors become messages naming the options they concern here, and only
//! here.

mod interrupt;
mod probe;
mod run;
mod sim_cmd;
mod sweep;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Result};
use clap::{Parser, Subcommand};
use iosteer_device::{family, PreconditionTable, StartState};
use iosteer_sched::policy;
use iosteer_study::bench::{self, BenchError};
use iosteer_study::device::{self, DeviceError};
use iosteer_workload::{html, output};

/// Flash-aware I/O scheduling: scheduler policies, judged on a simulated SSD.
#[derive(Debug, Parser)]
#[command(
    name = "iosteer",
    version,
    about = "Flash-aware I/O scheduling: scheduler policies (stock FIFO, FreeBSD's Netflix scheduler), \
             judged on a simulated SSD.\nStart with `iosteer sim`: the Netflix paper's fill-while-serving problem.",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run schedulers on the simulated drive: a built-in scenario, a fio job file or a trace.
    Sim(sim_cmd::SimArgs),
    /// Run one scenario across a grid of scheduler settings (in parallel) and mark the
    /// best one that meets a read-latency objective.
    Sweep(sweep::SweepArgs),
    /// Run a fio job file against a real file or block device through a
    /// scheduler and io_uring, reported like a simulation.
    Run(run::RunArgs),
    /// Find the write limit: serve reads, step the write rate up on a real
    /// target or an emulated drive, and report the highest rate that keeps a
    /// read-latency objective.
    Probe(probe::ProbeArgs),
    /// Read back a target `iosteer run --verify` wrote, even one killed
    /// mid-run: every stamped block must hold its own offset and checksum.
    Verify {
        /// File or block device to read (never written to).
        #[arg(long, value_name = "PATH")]
        target: std::path::PathBuf,
    },
    /// List the scheduling policies with their tunables and defaults.
    Schedulers,
    /// The SSD model on its own: presets, configuration, the write-amplification check.
    #[command(subcommand)]
    Device(DeviceCommand),
    /// Measure the toolkit's own speed.
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(Debug, Subcommand)]
enum DeviceCommand {
    /// List the drive presets with their size and interface.
    List,
    /// Print a preset (or a TOML file, checked) as TOML, ready to copy and edit.
    Show {
        /// Preset name or TOML file.
        device: String,
    },
    /// Print the family's drive of seed N as TOML (`family:N` names it).
    Random {
        #[arg(long)]
        seed: u64,
    },
    /// Print another simulator's drive as TOML: `disksim FILE.parv` (the
    /// SSD block of DiskSim 4.0 + SSD extension), `mqsim FILE.xml` or
    /// `ssdsim page.parameters`; unmodelled parameters are comments.
    Import {
        /// disksim, mqsim or ssdsim.
        format: String,
        file: String,
    },
    /// Steady-state write amplification under uniform random single-page
    /// overwrites, against Desnoyers' closed form.
    Waf {
        /// Victim policy: greedy, fifo or cost_benefit.
        #[arg(long, default_value = "fifo")]
        victim: String,
        /// Physical pages that take part in cleaning over logical pages (> 1).
        #[arg(long, default_value_t = 1.28, allow_negative_numbers = true)]
        alpha: f64,
        /// Blocks of the single-die drive.
        #[arg(long, default_value_t = 4096, allow_negative_numbers = true)]
        blocks: u32,
        #[arg(long, default_value_t = 64, allow_negative_numbers = true)]
        pages_per_block: u32,
        /// Bytes per page.
        #[arg(long, default_value_t = 4096)]
        page_size: u32,
        /// Bytes per mapping unit (the page size: page-mapped); write
        /// amplification is then NAND bytes over host bytes.
        #[arg(long, default_value_t = 4096)]
        mapping_unit: u32,
        #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = seed_value)]
        seed: u64,
        /// Print JSON: {"victim", "alpha", "waf", "analytic", ...}.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// Cost of each policy per request (enqueue + dispatch + complete), one core.
    Sched {
        /// Policy spec to measure, `name[:key=value,...]`; repeat for several
        /// [default: fifo, netflix, netflix with bias, netflix with every limiter]
        #[arg(long = "policy", value_name = "SPEC")]
        policies: Vec<String>,
        /// Requests per run, at most 50 million (the stream is held in memory, twice, 80 bytes a request).
        #[arg(long, default_value_t = 2_000_000, value_parser = clap::value_parser!(u64).range(1..=50_000_000))]
        requests: u64,
        /// Runs per policy; the median is reported.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000))]
        repeat: u64,
        /// Print JSON: [{"policy", "ns_per_request", "requests", "runs"}, ...].
        #[arg(long)]
        json: bool,
    },
    /// Simulation speed of the drive model: aging, host requests and NAND
    /// operations per second of wall time.
    Device {
        /// Preset or TOML file; repeat for several [default: every preset].
        #[arg(long = "device", value_name = "PRESET|FILE")]
        devices: Vec<String>,
        /// Host requests per drive.
        #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..))]
        requests: u64,
        #[arg(long)]
        json: bool,
    },
    /// Simulator speed end to end: requests and NAND page ops per wall and CPU second, peak memory.
    Sim {
        /// Case to run: 4k-mix, fill-128k or large-trace; repeat for several [default: all].
        #[arg(long = "case", value_name = "NAME")]
        cases: Vec<String>,
        /// Runs per case; the median is reported.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000))]
        repeat: u64,
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("iosteer: error: {error}");
            ExitCode::from(interrupt::exit_status().unwrap_or(1))
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Schedulers => print_text(policy::describe_catalog()),
        Command::Device(command) => run_device(command),
        Command::Sim(args) => sim_cmd::sim(args),
        Command::Sweep(args) => sweep::sweep(args),
        Command::Run(args) => run::run(args),
        Command::Probe(args) => probe::probe(args),
        Command::Verify { target } => {
            let found = iosteer_engine::verify::read_back_path(&target)
                .map_err(|e| anyhow!("--target {e}"))?;
            print_text(format!("{found}\n"))?;
            found.verdict().map_err(|e| anyhow!("verify: {e}"))
        }
        Command::Bench(BenchCommand::Device {
            devices,
            requests,
            json,
        }) => {
            let mut results = Vec::new();
            for spec in &device::or_every_preset(devices) {
                let config = load_device("--device", spec)?;
                results.push(device::bench_device(config, requests)?);
            }
            print_text(json_or(json, &results[..], device::bench_table)?)
        }
        Command::Bench(BenchCommand::Sched {
            policies,
            requests,
            repeat,
            json,
        }) => {
            let results =
                bench::bench(&policies, requests, repeat as usize).map_err(|e| match e {
                    BenchError::Scheduler { spec, source } => anyhow!("--policy {spec}: {source}"),
                    other => other.into(),
                })?;
            print_text(json_or(json, &results[..], bench::table)?)
        }
        Command::Bench(BenchCommand::Sim {
            cases,
            repeat,
            json,
        }) => {
            let bench = bench::sim::bench_sim(&cases, repeat as usize)
                .map_err(|e| anyhow!("--case: {e}"))?;
            print_text(json_or(json, &bench, bench::sim::table)?)
        }
    }
}

fn run_device(command: DeviceCommand) -> Result<()> {
    match command {
        DeviceCommand::List => print_text(device::preset_list()?),
        DeviceCommand::Import { format, file } => {
            // Every parameter's fate as comments: the work is in the library.
            let read = iosteer_device::import::importer(&format).map_err(|e| anyhow!(e))?;
            let text = iosteer_device::import::read_source(&format, &file)?;
            print_text(read(&text, &file)?.to_toml())
        }
        DeviceCommand::Show { device: d } => print_text(load_device("device show", &d)?.to_toml()),
        DeviceCommand::Random { seed } => print_text(family::random_drive(seed).to_toml()),
        DeviceCommand::Waf {
            victim,
            alpha,
            blocks,
            pages_per_block,
            page_size,
            mapping_unit,
            seed,
            json,
        } => {
            let victim = device::parse_victim(&victim).map_err(|e| anyhow!("--victim {e}"))?;
            let report =
                device::waf(victim, alpha, blocks, pages_per_block, (page_size, mapping_unit), seed).map_err(|e| match e {
                    DeviceError::TooSmall { .. } => anyhow!(
                        "--blocks {blocks} --pages-per-block {pages_per_block}: need at least 16 blocks of 2 pages"
                    ),
                    DeviceError::Experiment { message, .. } if message.starts_with("`geometry") => {
                        anyhow!("--blocks {blocks} --pages-per-block {pages_per_block}: {message}")
                    }
                    DeviceError::Experiment { message, .. } => anyhow!("--alpha {alpha}: {message}"),
                    other => other.into(),
                })?;
            print_text(json_or(json, &report, |r| r.summary() + "\n")?)
        }
    }
}

/// Prints a library's text as it is.
fn print_text(text: String) -> Result<()> {
    print_then(&text, || Ok(()))
}

/// `value` as pretty JSON, or as the table `table` makes of it.
fn json_or<T: serde::Serialize + ?Sized>(
    json: bool,
    value: &T,
    table: impl Fn(&T) -> String,
) -> Result<String> {
    Ok(match json {
        true => serde_json::to_string_pretty(value)? + "\n",
        false => table(value),
    })
}

/// Prints `text` on standard output, then writes the `--out` files
/// (`write_out`) whether that worked or not: a closed pipe or a full disk
/// loses no result, and its error comes after them (`print!` panicked).
fn print_then(text: &str, write_out: impl FnOnce() -> Result<()>) -> Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let printed = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
    drop(stdout);
    write_out()?;
    printed.map_err(|e| anyhow!("standard output: {e}"))
}

/// A drive from a preset name or a TOML file; `option` names where the
/// name came from (`--device`, `--emulate`).
fn load_device(option: &str, spec: &str) -> Result<iosteer_device::DeviceConfig> {
    device::load_device(spec).map_err(|e| match e {
        // A TOML error names its file already; a field out of range does not.
        DeviceError::Config(config @ iosteer_device::ConfigError::Toml { .. }) => {
            anyhow!("{config}")
        }
        DeviceError::Config(config) => anyhow!("{option} {spec}: {config}"),
        other => anyhow!("{option} {other}"),
    })
}

/// `--precondition STATE`, parsed.
fn start_state(value: Option<&str>) -> Result<Option<StartState>> {
    value
        .map(|v| v.parse().map_err(|e| anyhow!("--precondition {e}")))
        .transpose()
}

/// A drive (`option` names where it came from) starting in `--precondition`'s
/// state when given: the option stands in for the drive file's table.
fn load_starting_device(
    option: &str,
    spec: &str,
    precondition: Option<&str>,
) -> Result<iosteer_device::DeviceConfig> {
    let mut config = load_device(option, spec)?;
    if let Some(state) = start_state(precondition)? {
        config.precondition = Some(PreconditionTable { state });
    }
    Ok(config)
}

/// Checks, before any work, that the file `file` (named by `option`) can be written.
fn check_out_file(option: &str, file: &str) -> Result<()> {
    output::check_file(file).map_err(|e| anyhow!("{option} {e}"))
}

/// A value parser for one of the names `parse` accepts: clap's error then
/// names the option, the value and every accepted name.
fn one_of<T: Clone + Send + Sync + 'static>(
    parse: fn(&str) -> Option<T>,
    names: &'static str,
) -> impl Fn(&str) -> std::result::Result<T, String> + Clone + Send + Sync + 'static {
    move |text| parse(text).ok_or_else(|| format!("expected one of {names}"))
}

/// `--precondition`'s help, one text for every command that takes it.
const PRECONDITION_HELP: &str = "The drive's starting state: empty, fill[=PCT] (in order, default 100), aged[=N] (full, then N capacities of random overwrites, default 2), aged-fast[=N] or steady (random overwrites until write amplification settles); overrides the drive file's `[precondition]` and the scenario's";

/// A size in fio's syntax (`1g`, `512m`), for clap.
fn size(text: &str) -> std::result::Result<u64, String> {
    iosteer_workload::fio::size_value(text).ok_or_else(|| "expected a size like 1g or 512m".into())
}

/// A duration in fio's syntax (`10s`, `2m`), for clap.
fn duration(text: &str) -> std::result::Result<iosteer_sched::Nanos, String> {
    iosteer_sched::units::parse_duration(text, Some(iosteer_sched::Nanos::from_secs(1)))
        .map_err(|e| format!("{e}: expected a time like 10s or 2m"))
}

/// A `--seed`: clap's own message for `-1` ("invalid digit") does not say
/// what is accepted.
fn seed_value(text: &str) -> std::result::Result<u64, String> {
    (text.trim().parse()).map_err(|_| format!("expected a whole number from 0 to {}", u64::MAX))
}

/// The options of every command that reports: `sim`, `sweep`, `run`, `probe`.
#[derive(Debug, clap::Args)]
struct ReportArgs {
    /// Requests slower than this count as SLO violations (`>SLO`, per class).
    #[arg(long, default_value_t = 35.0, allow_negative_numbers = true)]
    slo_ms: f64,
    /// Print the JSON report on stdout instead of the tables.
    #[arg(long)]
    json: bool,
    /// Write the report into DIR: report.html, the JSON, and the command's
    /// CSV series and SVG charts (a run's per second, a probe's per step, a
    /// sweep's trade-off).
    #[arg(long, value_name = "DIR")]
    out: Option<String>,
}

impl ReportArgs {
    /// The positive `--slo-ms`, as a duration.
    fn slo(&self) -> Result<iosteer_sched::Nanos> {
        let slo_ms = self.slo_ms;
        if !(slo_ms.is_finite() && slo_ms > 0.0) {
            bail!("--slo-ms {slo_ms}: expected a positive number of milliseconds");
        }
        Ok(iosteer_sched::Nanos((slo_ms * 1e6) as u64))
    }

    /// Checks, before any work, that `--out DIR` can take files (and, once
    /// the runs are known, their `room`): a typo or a full disk then fails
    /// at once instead of after a long run.
    fn check_out(&self, room: output::FilesRoom) -> Result<()> {
        let checked = self.out.as_deref().map(|dir| output::check_dir(dir, room));
        checked.unwrap_or(Ok(())).map_err(|e| anyhow!("--out {e}"))
    }

    /// Prints `text`, then writes the `--out` files with `write` (given the
    /// directory) and says what it wrote ([`print_then`]).
    fn print_and_write(
        &self,
        text: &str,
        write: impl FnOnce(&Path) -> Result<Vec<PathBuf>>,
    ) -> Result<()> {
        print_then(text, || match &self.out {
            Some(dir) => write(Path::new(dir)).map(|written| say_written(&written, dir)),
            None => Ok(()),
        })
    }
}

/// Writes the runs' files into `--out DIR`; the paths written.
fn write_run_outputs(
    dir: &Path,
    runs: &[iosteer_workload::RunReport],
    json: &str,
    context: &html::Context,
) -> Result<Vec<PathBuf>> {
    output::write_run_outputs(dir, runs, json, context).map_err(|e| anyhow!("--out {e}"))
}

/// The head of a report.html: this command, what it ran and on which drive.
fn page_context(workload: String, drive: Option<&iosteer_device::DeviceConfig>) -> html::Context {
    html::Context::new(std::env::args(), workload, drive.map(|d| d.to_toml()))
}

/// The line that ends every `--out`.
fn say_written(written: &[PathBuf], dir: &str) {
    eprintln!("iosteer: {}", output::written_summary(dir, written));
}
