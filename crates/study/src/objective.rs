//! A read-latency objective, as `iosteer sweep` and `iosteer probe` judge
//! runs by: `p99<=2x` (times the same metric in a baseline phase) or
//! `p99<=5ms` (absolute); the metric is mean, p50, p99, p99.9 (or p999) or
//! max of the reads of a phase.

use iosteer_sched::Nanos;
use iosteer_workload::report::PhaseReport;
use thiserror::Error;

/// A read latency objective.
#[derive(Clone, Debug, PartialEq)]
pub struct Objective {
    pub metric: Metric,
    pub bound: Bound,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Metric {
    Mean,
    P50,
    P99,
    P999,
    Max,
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Bound {
    /// Times the baseline phase's value of the same metric.
    Relative(f64),
    Absolute(Nanos),
}

/// What is wrong with an objective's text; each names the text as given.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum ObjectiveError {
    #[error("{text}: no `<=` ({})", SYNTAX)]
    NoBound { text: String },
    #[error("{text}: unknown metric `{metric}` ({})", SYNTAX)]
    UnknownMetric { text: String, metric: String },
    #[error("{text}: bad factor ({})", SYNTAX)]
    BadFactor { text: String },
    #[error("{text}: the factor must be positive ({})", SYNTAX)]
    NonPositiveFactor { text: String },
    #[error("{text}: {source} ({})", SYNTAX)]
    BadDuration {
        text: String,
        source: iosteer_sched::ConfigError,
    },
    #[error("{text}: the bound must be positive ({})", SYNTAX)]
    NonPositiveBound { text: String },
}

const SYNTAX: &str = "expected METRIC<=Nx or METRIC<=DURATION, such as p99<=2x or p99<=5ms";

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Metric::Mean => "mean",
            Metric::P50 => "p50",
            Metric::P99 => "p99",
            Metric::P999 => "p99.9",
            Metric::Max => "max",
        }
    }

    /// The read value of this metric in a phase, microseconds.
    pub fn of(self, phase: &PhaseReport) -> f64 {
        let l = &phase.read.lat_us;
        match self {
            Metric::Mean => l.mean,
            Metric::P50 => l.p50,
            Metric::P99 => l.p99,
            Metric::P999 => l.p999,
            Metric::Max => l.max,
        }
    }
}

impl std::fmt::Display for Objective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.bound {
            Bound::Relative(x) => write!(f, "read {} <= {x}x baseline", self.metric.name()),
            Bound::Absolute(t) => write!(f, "read {} <= {t}", self.metric.name()),
        }
    }
}

impl std::str::FromStr for Objective {
    type Err = ObjectiveError;

    /// Parses `p99<=2x`, `p99.9<=10ms`, `mean<=800us`.
    fn from_str(text: &str) -> Result<Objective, ObjectiveError> {
        let owned = || text.to_string();
        let (metric, value) = text
            .split_once("<=")
            .ok_or_else(|| ObjectiveError::NoBound { text: owned() })?;
        let metric = match metric.trim() {
            "mean" => Metric::Mean,
            "p50" => Metric::P50,
            "p99" => Metric::P99,
            "p99.9" | "p999" => Metric::P999,
            "max" => Metric::Max,
            other => {
                return Err(ObjectiveError::UnknownMetric {
                    text: owned(),
                    metric: other.to_string(),
                })
            }
        };
        let value = value.trim();
        let bound = if let Some(x) = value.strip_suffix('x') {
            let x: f64 = x
                .trim()
                .parse()
                .map_err(|_| ObjectiveError::BadFactor { text: owned() })?;
            if !(x.is_finite() && x > 0.0) {
                return Err(ObjectiveError::NonPositiveFactor { text: owned() });
            }
            Bound::Relative(x)
        } else {
            let t = iosteer_sched::config::parse_duration("bound", value).map_err(|source| {
                ObjectiveError::BadDuration {
                    text: owned(),
                    source,
                }
            })?;
            if t == Nanos::ZERO {
                return Err(ObjectiveError::NonPositiveBound { text: owned() });
            }
            Bound::Absolute(t)
        };
        Ok(Objective { metric, bound })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objectives_parse_relative_and_absolute() {
        assert_eq!(
            "p99<=2x".parse::<Objective>().unwrap(),
            Objective {
                metric: Metric::P99,
                bound: Bound::Relative(2.0)
            }
        );
        assert_eq!(
            "p99.9 <= 5ms".parse::<Objective>().unwrap().bound,
            Bound::Absolute(Nanos::from_millis(5))
        );
        for bad in ["p99", "p98<=2x", "p99<=-1x", "p99<=5", "p99<=0ms"] {
            assert!(bad.parse::<Objective>().is_err(), "{bad}");
        }
    }
}
