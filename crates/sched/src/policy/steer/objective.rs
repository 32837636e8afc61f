//! How steer reads its objective ([`crate::objective`]): it counts the reads
//! that miss the bound, so it takes only percentiles (a percentile says what
//! share of reads may miss), and a relative bound of at least 1x (no read
//! can beat the unloaded ones it is measured against).

use crate::config::ConfigError;
use crate::objective::{Bound, Objective, ObjectiveError};
use crate::stats::LatencySummary;
use crate::units::Nanos;

use super::INFO;

/// The least relative bound steer takes.
const LEAST_FACTOR: f64 = 1.0;

/// Parses and checks the value of `key` (`objective=p99<=2x`).
pub(super) fn parse(key: &str, value: &str) -> Result<Objective, ConfigError> {
    let objective = Objective::parse(value).and_then(|o| check(&o).map(|()| o));
    objective.map_err(|reason| ConfigError::Objective {
        key: key.to_string(),
        value: value.to_string(),
        reason: Box::new(reason),
    })
}

/// Whether steer can hold `objective`.
pub(super) fn check(objective: &Objective) -> Result<(), ObjectiveError> {
    if objective.metric.percentile().is_none() {
        return Err(ObjectiveError::NotAPercentile {
            user: INFO.name,
            metric: objective.metric,
        });
    }
    match objective.bound {
        Bound::Relative(k) if k < LEAST_FACTOR => Err(ObjectiveError::FactorTooSmall {
            user: INFO.name,
            factor: k.to_string(),
            least: LEAST_FACTOR.to_string(),
        }),
        _ => Ok(()),
    }
}

/// What steer asks of an objective that [`check`] passed.
pub(super) trait Percentile {
    /// Share of reads allowed over the bound (0.01 for p99).
    fn allowed_misses(&self) -> f64;
    /// The objective's percentile of `summary`.
    fn pick(&self, summary: &LatencySummary) -> Nanos;
}

impl Percentile for Objective {
    fn allowed_misses(&self) -> f64 {
        let percentile = self
            .metric
            .percentile()
            .expect("steer's configuration admits percentiles only");
        1.0 - percentile / 100.0
    }

    fn pick(&self, summary: &LatencySummary) -> Nanos {
        use crate::objective::Metric;
        match self.metric {
            Metric::P999 => summary.p999,
            Metric::P99 => summary.p99,
            Metric::P90 => summary.p90,
            _ => summary.p50,
        }
    }
}
