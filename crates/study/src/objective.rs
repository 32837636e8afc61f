//! The read-latency objective `iosteer sweep` and `iosteer probe` judge runs
//! by. The grammar and the type are the scheduler library's
//! ([`iosteer_sched::objective`]: `steer` takes the same text); this module
//! adds what a study needs on top: an objective whose metric the report
//! keeps ([`LatencyReport::KEPT`]), and its value in a phase of a report.

use iosteer_sched::objective::ObjectiveError as GrammarError;
pub use iosteer_sched::objective::{Bound, Metric, Objective, GRAMMAR};
use iosteer_workload::report::{LatencyReport, PhaseReport};
use thiserror::Error;

/// An objective a study cannot judge by.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum ObjectiveError {
    #[error("{text}: {source}")]
    Grammar { text: String, source: GrammarError },
    /// The report keeps mean, p50, p99, p99.9 and max of reads.
    #[error("{text}: reports keep the mean, p50, p99, p99.9 and max of reads, not {metric}")]
    NotReported { text: String, metric: Metric },
    /// A metric of no grammar: the ones a study takes are named.
    #[error("{text}: unknown metric `{metric}` (a study judges by the mean, p50, p99, p99.9 or max of reads, such as p99<=2x or p99<=5ms)")]
    UnknownMetric { text: String, metric: String },
}

/// Reads an objective (the grammar of [`iosteer_sched::objective`]) whose
/// metric a report keeps.
pub fn parse(text: &str) -> Result<Objective, ObjectiveError> {
    let text_owned = || text.to_string();
    let objective = Objective::parse(text).map_err(|source| match source {
        GrammarError::UnknownMetric { metric } => ObjectiveError::UnknownMetric {
            text: text_owned(),
            metric,
        },
        source => ObjectiveError::Grammar {
            text: text_owned(),
            source,
        },
    })?;
    if !LatencyReport::KEPT.contains(&objective.metric) {
        return Err(ObjectiveError::NotReported {
            text: text.to_string(),
            metric: objective.metric,
        });
    }
    Ok(objective)
}

/// The read value of `metric` in `phase`, microseconds. A metric [`parse`]
/// refuses has no value: NaN, which meets no bound.
pub fn read_value(metric: Metric, phase: &PhaseReport) -> f64 {
    phase.read.lat_us.metric(metric).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosteer_sched::Nanos;

    #[test]
    fn objectives_parse_relative_and_absolute() {
        assert_eq!(
            parse("p99<=2x").unwrap(),
            Objective {
                metric: Metric::P99,
                bound: Bound::Relative(2.0)
            }
        );
        assert_eq!(
            parse("p99.9 <= 5ms").unwrap().bound,
            Bound::Absolute(Nanos::from_millis(5))
        );
        for bad in ["p99", "p98<=2x", "p99<=-1x", "p99<=5", "p99<=0ms"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_metric_the_report_does_not_keep_is_refused() {
        let err = parse("p90<=2x").unwrap_err();
        assert!(matches!(err, ObjectiveError::NotReported { .. }), "{err}");
        assert!(err.to_string().contains("not p90"), "{err}");
        // An unknown one is told the metrics a study takes, p90 not among them.
        let err = parse("p95<=2x").unwrap_err().to_string();
        assert!(err.contains("`p95`") && err.contains("p50, p99"), "{err}");
        assert!(!err.contains("p90"), "{err}");
    }
}
