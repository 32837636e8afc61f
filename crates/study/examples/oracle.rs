//! The oracle of a scenario on a drive: the best write schedule with
//! hindsight, the best constant limit, and the settings compared with them
//! (`steer` stating the same objective, by default), on one seed. The
//! search is `iosteer_study::oracle`; `scripts/oracle.sh` runs it on both
//! presets.
//!
//!     cargo run --release -p iosteer-study --example oracle -- \
//!         --device consumer-sata --objective 'p99<=2x' --seed 1
//!
//! Options (defaults in brackets): --scenario [fill-while-serving],
//! --device [consumer-sata], --objective [p99<=2x], --seed [1],
//! --segments [6], --passes [2], --tolerance [0.05], --compare SPEC
//! (repeatable) [steer:objective=OBJECTIVE], --netflix SETTINGS (netflix
//! settings every schedule runs with, such as read_bias=100) [none], --json. Each run's figures go
//! to stderr as it finishes.

use iosteer_sim::scenario::scenario;
use iosteer_study::device::load_device;
use iosteer_study::objective;
use iosteer_study::oracle::{phase_segments, table, Oracle, SearchSpace};
use iosteer_study::sweep::family::STATIC_TOP;

/// The lowest limit searched, as a share of the highest: seven halvings,
/// as the family sweep's static grid.
const LOW_SHARE: u64 = 128;

struct Options {
    scenario: String,
    device: String,
    objective: String,
    seed: u64,
    segments: usize,
    passes: usize,
    tolerance: f64,
    compare: Vec<String>,
    netflix: String,
    json: bool,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        scenario: "fill-while-serving".into(),
        device: "consumer-sata".into(),
        objective: "p99<=2x".into(),
        seed: 1,
        segments: 6,
        passes: 2,
        tolerance: 0.05,
        compare: Vec::new(),
        netflix: String::new(),
        json: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--json" {
            o.json = true;
            continue;
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = |what: &str| format!("{flag} {value}: expected {what}");
        match flag.as_str() {
            "--scenario" => o.scenario = value,
            "--device" => o.device = value,
            "--objective" => o.objective = value,
            "--seed" => o.seed = value.parse().map_err(|_| number("a whole number"))?,
            "--segments" => o.segments = value.parse().map_err(|_| number("a whole number"))?,
            "--passes" => o.passes = value.parse().map_err(|_| number("a whole number"))?,
            "--tolerance" => o.tolerance = value.parse().map_err(|_| number("a share, 0.05"))?,
            "--compare" => o.compare.push(value),
            "--netflix" => o.netflix = value,
            _ => {
                return Err(format!(
                    "unknown option {flag}; options: --scenario, --device, --objective, --seed, \
                     --segments, --passes, --tolerance, --compare, --netflix, --json"
                ))
            }
        }
    }
    if o.compare.is_empty() {
        o.compare.push(format!("steer:objective={}", o.objective));
    }
    Ok(o)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("oracle: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let o = parse_args()?;
    let device = load_device(&o.device)?;
    let high = (device.timing.host_link_mb_per_s * 1e3 * STATIC_TOP).round() as u64;
    let sim = scenario(&o.scenario, device, o.seed).map_err(|e| e.to_string())?;
    sim.validate()?;
    let oracle = Oracle {
        sim: &sim,
        objective: objective::parse(&o.objective)?,
        phase: "fill".into(),
        baseline: "before".into(),
        space: SearchSpace {
            starts: phase_segments(&sim, "fill", o.segments)?,
            low: (high / LOW_SHARE).max(1),
            high,
            tolerance: o.tolerance,
            passes: o.passes,
        },
        compare: o.compare,
        netflix: o.netflix,
    };
    let mut runs = 0;
    let report = oracle.run(&mut |p| {
        runs += 1;
        eprintln!(
            "run {runs}: {:.2} MB/s, read {} {:.2} ms (own bound {:.2}): {}",
            p.write_mbps, oracle.objective.metric, p.value_ms, p.bound_ms, p.spec
        );
    })?;
    if o.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", table(&report));
    }
    Ok(())
}
