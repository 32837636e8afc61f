//! `iosteer`: the command line of the iosteer toolkit.
//!
//! Subcommands live in their own modules; this file only parses arguments and
//! turns errors into messages and exit codes.

mod bench;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use iosteer_sched::policy;

/// Flash-aware I/O scheduling: policies, a simulated SSD and a real engine.
#[derive(Debug, Parser)]
#[command(name = "iosteer", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the scheduling policies with their tunables and defaults.
    Schedulers,
    /// Measure the toolkit's own speed.
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// Cost of each policy per request (enqueue + dispatch + complete), one core.
    Sched {
        /// Policy spec to measure, `name[:key=value,...]`; repeat for several
        /// [default: fifo, netflix, netflix with bias, netflix with every limiter]
        #[arg(long = "policy", value_name = "SPEC")]
        policies: Vec<String>,
        /// Requests per run.
        #[arg(long, default_value_t = 2_000_000, value_parser = clap::value_parser!(u64).range(1..))]
        requests: u64,
        /// Runs per policy; the median is reported.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000))]
        repeat: u64,
        /// Print JSON: [{"policy", "ns_per_request", "requests", "runs"}, ...].
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("iosteer: error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Schedulers => {
            print_schedulers();
            Ok(())
        }
        Command::Bench(BenchCommand::Sched {
            policies,
            requests,
            repeat,
            json,
        }) => {
            let specs = if policies.is_empty() {
                bench::DEFAULT_POLICIES
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            } else {
                policies
            };
            let results = bench::bench(&specs, requests, repeat as usize)?;
            if json {
                let text = serde_json::to_string_pretty(&results).map_err(|e| e.to_string())?;
                println!("{text}");
            } else {
                print_bench_table(&results);
            }
            Ok(())
        }
    }
}

fn print_schedulers() {
    for info in policy::catalog() {
        println!("{:<10} {}", info.name, info.summary);
        for t in info.tunables {
            println!("    {:<62} default {}", t.key, t.default);
            println!("    {:<62} {}", "", t.help);
        }
        println!();
    }
}

fn print_bench_table(results: &[bench::BenchResult]) {
    println!("{:>14}  {:>10}  policy", "ns/request", "requests");
    for r in results {
        println!(
            "{:>14.1}  {:>10}  {}",
            r.ns_per_request, r.requests, r.policy
        );
    }
    println!(
        "(median of {} runs each; enqueue + dispatch + complete on one core)",
        results.first().map_or(0, |r| r.runs.len())
    );
}
