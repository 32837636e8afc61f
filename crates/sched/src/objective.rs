//! A read-latency objective, one type and one grammar for every place that
//! takes one: steer's `objective=`, and the sweep's and the probe's
//! objective option.
//!
//! Grammar: `METRIC<=BOUND`, with spaces allowed around each part.
//! - METRIC: `mean`, `p50`, `p90`, `p99`, `p99.9` (or `p999`) or `max`, of
//!   read latency.
//! - BOUND: `Nx`, N times the same metric of a baseline (unloaded reads),
//!   N > 0, decimals allowed (`2x`, `1.5x`); or a duration with its unit in
//!   [`crate::units`]' grammar, over zero (`5ms`, `800us`). A bare number is
//!   refused: it could be either.
//!
//! What uses an objective may accept less: steer counts misses, so it takes
//! only percentiles ([`Metric::percentile`]).

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use crate::units::{self, Nanos, UnitError};

/// What is measured of read latency.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Metric {
    Mean,
    P50,
    P90,
    P99,
    P999,
    Max,
}

impl Metric {
    /// Every metric, in the order the grammar lists them.
    pub const ALL: [Metric; 6] = [
        Metric::Mean,
        Metric::P50,
        Metric::P90,
        Metric::P99,
        Metric::P999,
        Metric::Max,
    ];

    /// The name the grammar gives it.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Mean => "mean",
            Metric::P50 => "p50",
            Metric::P90 => "p90",
            Metric::P99 => "p99",
            Metric::P999 => "p99.9",
            Metric::Max => "max",
        }
    }

    /// The percentile, for the metrics that are one (99.9 for `p99.9`).
    pub fn percentile(self) -> Option<f64> {
        match self {
            Metric::P50 => Some(50.0),
            Metric::P90 => Some(90.0),
            Metric::P99 => Some(99.0),
            Metric::P999 => Some(99.9),
            Metric::Mean | Metric::Max => None,
        }
    }
}

impl FromStr for Metric {
    type Err = ObjectiveError;

    fn from_str(text: &str) -> Result<Metric, ObjectiveError> {
        let text = text.trim();
        if text == "p999" {
            return Ok(Metric::P999);
        }
        Metric::ALL
            .into_iter()
            .find(|m| m.name() == text)
            .ok_or_else(|| ObjectiveError::UnknownMetric {
                metric: text.to_string(),
            })
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How far the target latency is.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Bound {
    /// Times the same metric of a baseline (unloaded reads).
    Relative(f64),
    Absolute(Nanos),
}

/// A read latency objective: a metric and its bound.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Objective {
    pub metric: Metric,
    pub bound: Bound,
}

/// What the grammar expects, for messages.
pub const GRAMMAR: &str =
    "METRIC<=Nx or METRIC<=DURATION, with METRIC one of mean, p50, p90, p99, p99.9, max, \
     such as p99<=2x or p99<=5ms";

/// An objective that could not be read, or that its user does not take.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ObjectiveError {
    #[error("no `<=` (expected {GRAMMAR})")]
    NoBound,
    #[error("unknown metric `{metric}` (expected {GRAMMAR})")]
    UnknownMetric { metric: String },
    #[error("bad factor `{factor}`: expected a positive number before the x, such as 2x")]
    BadFactor { factor: String },
    #[error("bad bound: {0} (expected {GRAMMAR})")]
    BadDuration(UnitError),
    #[error("the bound must be over zero")]
    ZeroBound,
    #[error("{user} takes a percentile (p50, p90, p99 or p99.9), not `{metric}`")]
    NotAPercentile { user: &'static str, metric: Metric },
    #[error("{user} takes a relative bound of at least {least}x, not {factor}x")]
    FactorTooSmall {
        user: &'static str,
        factor: String,
        least: String,
    },
}

impl Objective {
    /// Reads `METRIC<=BOUND` (the module's grammar).
    pub fn parse(text: &str) -> Result<Objective, ObjectiveError> {
        let (metric, bound) = text.split_once("<=").ok_or(ObjectiveError::NoBound)?;
        let metric: Metric = metric.parse()?;
        let bound = bound.trim();
        // `2X` as `2x`: a duration's unit takes any case too (`5MS`).
        let bound = match bound.strip_suffix(['x', 'X']) {
            Some(factor) => {
                let bad = || ObjectiveError::BadFactor {
                    factor: factor.to_string(),
                };
                let k: f64 = factor.trim().parse().map_err(|_| bad())?;
                if !(k.is_finite() && k > 0.0) {
                    return Err(bad());
                }
                Bound::Relative(k)
            }
            None => {
                let t = units::parse_duration(bound, None).map_err(ObjectiveError::BadDuration)?;
                if t == Nanos::ZERO {
                    return Err(ObjectiveError::ZeroBound);
                }
                Bound::Absolute(t)
            }
        };
        Ok(Objective { metric, bound })
    }
}

impl Objective {
    /// The objective as the grammar writes it: `p99<=2x`, `p99.9<=5ms`.
    pub fn text(&self) -> String {
        match self.bound {
            Bound::Relative(x) => format!("{}<={x}x", self.metric),
            Bound::Absolute(t) => format!("{}<={t}", self.metric),
        }
    }
}

impl FromStr for Objective {
    type Err = ObjectiveError;

    fn from_str(text: &str) -> Result<Objective, ObjectiveError> {
        Objective::parse(text)
    }
}

impl fmt::Display for Objective {
    /// `read p99 <= 2x baseline`, `read p99.9 <= 5ms`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.bound {
            Bound::Relative(x) => write!(f, "read {} <= {x}x baseline", self.metric),
            Bound::Absolute(t) => write!(f, "read {} <= {t}", self.metric),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_grammars_parse_into_one_type() {
        let o: Objective = "p99<=2x".parse().unwrap();
        assert_eq!(
            o,
            Objective {
                metric: Metric::P99,
                bound: Bound::Relative(2.0)
            }
        );
        assert_eq!(o.to_string(), "read p99 <= 2x baseline");
        assert_eq!(o.text(), "p99<=2x");
        assert_eq!(Objective::parse(&o.text()), Ok(o));
        assert_eq!(Objective::parse("p99<=2X"), Ok(o), "as 5MS is 5ms");
        let o = Objective::parse("p99.9 <= 5ms").unwrap();
        assert_eq!(o.bound, Bound::Absolute(Nanos::from_millis(5)));
        assert_eq!(o.text(), "p99.9<=5ms");
        assert_eq!(o.to_string(), "read p99.9 <= 5ms");
        for (text, metric) in [
            ("mean<=800us", Metric::Mean),
            ("p50<=1.5x", Metric::P50),
            ("p90<=3ms", Metric::P90),
            ("p999<=10ms", Metric::P999),
            ("max<=0.5x", Metric::Max),
        ] {
            assert_eq!(Objective::parse(text).unwrap().metric, metric, "{text}");
        }
    }

    #[test]
    fn bad_objectives_say_what_is_wrong() {
        for (text, error) in [
            ("p99", ObjectiveError::NoBound),
            (
                "p98<=2x",
                ObjectiveError::UnknownMetric {
                    metric: "p98".into(),
                },
            ),
            (
                "p99<=-1x",
                ObjectiveError::BadFactor {
                    factor: "-1".into(),
                },
            ),
            ("p99<=0ms", ObjectiveError::ZeroBound),
        ] {
            assert_eq!(Objective::parse(text), Err(error), "{text}");
        }
        for text in ["p99<=5", "p99<=fast", "p99<=0x", "p99<=x"] {
            assert!(Objective::parse(text).is_err(), "{text}");
        }
        let err = Objective::parse("p99<=5").unwrap_err().to_string();
        assert!(err.contains("unit") && err.contains("p99<=2x"), "{err}");
    }
}
