//! What every policy has in common: the three tunables each one takes
//! (`trim_max_ranges`, `stats_window`, `bad_latency`), declared once with
//! their defaults, and the statistics they configure.

use crate::config::{parse_duration, parse_int, ConfigError, Tunable};
use crate::stats::Stats;
use crate::trim::DEFAULT_MAX_RANGES;
use crate::units::Nanos;

pub const TRIM_MAX_RANGES: Tunable = Tunable {
    key: "trim_max_ranges",
    default: "512",
    help: "most trims coalesced into one command",
};

pub const STATS_WINDOW: Tunable = Tunable {
    key: "stats_window",
    default: "1s",
    help: "length of the rolling percentile window",
};

pub const BAD_LATENCY: Tunable = Tunable {
    key: "bad_latency",
    default: "500ms",
    help: "completions slower than this are counted as too_long",
};

/// The settings behind [`TRIM_MAX_RANGES`], [`STATS_WINDOW`] and
/// [`BAD_LATENCY`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommonConfig {
    pub trim_max_ranges: u32,
    pub stats_window: Nanos,
    pub bad_latency: Nanos,
}

impl Default for CommonConfig {
    fn default() -> Self {
        CommonConfig {
            trim_max_ranges: DEFAULT_MAX_RANGES,
            stats_window: Nanos::from_secs(1),
            bad_latency: Nanos::from_millis(500),
        }
    }
}

impl CommonConfig {
    /// Applies `key` when it is one of the common tunables; `Ok(false)` when
    /// it is not, so the policy can go on to its own keys.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, ConfigError> {
        match key {
            "trim_max_ranges" => self.trim_max_ranges = parse_int(key, value, 1, 65_535)? as u32,
            "stats_window" => self.stats_window = parse_duration(key, value)?,
            "bad_latency" => self.bad_latency = parse_duration(key, value)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The statistics these settings describe.
    pub fn stats(&self) -> Stats {
        Stats::new(self.stats_window, self.bad_latency)
    }
}
