//! steer's configuration: the tunables, their defaults (explained in the
//! top comment of [`super`]) and how `key=value` settings set them.

use super::{objective, INFO};
use crate::config::{
    parse_choice, parse_duration, parse_int, unknown_key, ConfigError, Configurable, Tunable,
};
use crate::objective::{Bound, Metric, Objective};
use crate::policy::common::{CommonConfig, BAD_LATENCY, STATS_WINDOW, TRIM_MAX_RANGES};
use crate::units::Nanos;

pub const TUNABLES: &[Tunable] = &[
    Tunable {
        key: "objective",
        default: "p99<=2x",
        help: "read latency objective: pNN<=Kx (K times the unloaded pNN) or pNN<=DURATION; \
               NN is 50, 90, 99 or 99.9 (the grammar of crate::objective, percentiles only)",
    },
    Tunable {
        key: "calibrate",
        default: "1s",
        help: "with a relative objective, writes that come before the unloaded baseline is known \
               wait up to this long (from the first write) while reads measure it; 0s: never",
    },
    Tunable {
        key: "write_deadline",
        default: "5s",
        help: "most time a write waits in the scheduler (then it goes whatever the limit)",
    },
    Tunable {
        key: "deadline",
        default: "yield",
        help: "hold: a write that waited write_deadline goes, whatever the objective; yield: it \
               waits while the objective is owed (counted and reported)",
    },
    Tunable {
        key: "trim_deadline",
        default: "1s",
        help: "most time a trim waits for the writes in the device to finish",
    },
    Tunable {
        key: "trim_hold",
        default: "5s",
        help: "how long a trim is held for the writes that overwrite it (they cut it; one \
               overwritten whole is never sent); 0s: trims go at once",
    },
    Tunable {
        key: "write_depth",
        default: "4",
        help: "most writes in the device at once (steer keeps the fewest that carry its limit)",
    },
    Tunable {
        key: "min_rate",
        default: "10",
        help: "lowest write limit, kB/s (1 kB = 1000 B)",
    },
    Tunable {
        key: "max_rate",
        default: "10000000",
        help: "highest write limit, kB/s",
    },
    Tunable {
        key: "start_rate",
        default: "10000",
        help: "write limit at start, kB/s",
    },
    Tunable {
        key: "quanta",
        default: "200",
        help: "scheduler ticks per second (rate credit)",
    },
    TRIM_MAX_RANGES,
    STATS_WINDOW,
    BAD_LATENCY,
];

#[derive(Clone, Debug, PartialEq)]
pub struct SteerConfig {
    pub objective: Objective,
    /// How long writes may be held, from the first one, to measure the
    /// unloaded baseline when the workload starts loaded.
    pub calibrate: Nanos,
    pub write_deadline: Nanos,
    /// The write deadline yields to an owed objective (`deadline=yield`).
    pub deadline_yields: bool,
    pub trim_deadline: Nanos,
    /// How long a trim is held for writes to overwrite it.
    pub trim_hold: Nanos,
    pub write_depth: u32,
    /// kB/s.
    pub min_rate: u64,
    pub max_rate: u64,
    pub start_rate: u64,
    pub quanta: u32,
    pub common: CommonConfig,
}

impl Default for SteerConfig {
    fn default() -> Self {
        SteerConfig {
            objective: Objective {
                metric: Metric::P99,
                bound: Bound::Relative(2.0),
            },
            calibrate: Nanos::from_secs(1),
            write_deadline: Nanos::from_secs(5),
            deadline_yields: true,
            trim_deadline: Nanos::from_secs(1),
            trim_hold: Nanos::from_secs(5),
            write_depth: 4,
            min_rate: 10,
            max_rate: 10_000_000,
            start_rate: 10_000,
            quanta: 200,
            common: CommonConfig::default(),
        }
    }
}

impl Configurable for SteerConfig {
    fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        const RATE_MAX: u64 = 1 << 40;
        match key {
            "objective" => self.objective = objective::parse(key, value)?,
            "calibrate" => self.calibrate = parse_duration(key, value)?,
            "write_deadline" => self.write_deadline = parse_duration(key, value)?,
            "deadline" => {
                self.deadline_yields = parse_choice(key, value, &["hold", "yield"])? == "yield"
            }
            "trim_deadline" => self.trim_deadline = parse_duration(key, value)?,
            "trim_hold" => self.trim_hold = parse_duration(key, value)?,
            "write_depth" => self.write_depth = parse_int(key, value, 1, 65_536)? as u32,
            "min_rate" => self.min_rate = parse_int(key, value, 1, RATE_MAX)?,
            "max_rate" => self.max_rate = parse_int(key, value, 1, RATE_MAX)?,
            "start_rate" => self.start_rate = parse_int(key, value, 1, RATE_MAX)?,
            "quanta" => self.quanta = parse_int(key, value, 1, 100_000)? as u32,
            _ if self.common.set(key, value)? => {}
            _ => return Err(unknown_key(INFO.name, key, TUNABLES)),
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if !(self.min_rate <= self.start_rate && self.start_rate <= self.max_rate) {
            return Err(ConfigError::Conflict(format!(
                "need min_rate <= start_rate <= max_rate, got {} <= {} <= {}",
                self.min_rate, self.start_rate, self.max_rate
            )));
        }
        if self.write_deadline == Nanos::ZERO || self.trim_deadline == Nanos::ZERO {
            return Err(ConfigError::Conflict(
                "write_deadline and trim_deadline must be above zero".into(),
            ));
        }
        objective::check(&self.objective).map_err(|reason| ConfigError::Objective {
            key: "objective".into(),
            value: self.objective.to_string(),
            reason: Box::new(reason),
        })
    }
}
