//! A limit that changes at given times: a list of steps `(start, value)`,
//! each setting a limiter's `current` from its start on, as an operator's
//! timetable would ("15 MB/s until 40 s, then 25 MB/s"). The oracle study
//! (`iosteer-study`'s `oracle`) searches such timetables with hindsight; a
//! policy composes one with its limiters (netflix's `{class}.schedule`).
//!
//! Written `START:VALUE` items joined by `;` (a spec separates its settings
//! by `,`): `0s:15000;40s:25000`, starts as durations from the scheduler's
//! time zero, strictly increasing, values in the limiter's unit. Before the
//! first step the limiter keeps its configured `current`.
//!
//! Pure: the policy hands in the time ([`LimitSchedule::due`]) on its ticks,
//! so a step takes effect on the first tick at or after its start (within
//! one tick, 5 ms at netflix's default 200 ticks/s). Rate credit already
//! earned is kept when a step lowers the rate, as when a control loop lowers
//! it: at most the limiter's credit cap (20 ms at the old rate) goes at the
//! old rate.

use crate::config::{parse_duration, ConfigError};
use crate::units::Nanos;

/// Most steps one schedule may have: a timetable typed or generated for a
/// run, not a per-request trace.
pub const MAX_STEPS: usize = 10_000;

/// The form of a schedule, for error messages.
pub const SCHEDULE_FORM: &str =
    "steps START:VALUE joined by ';' with starts increasing, such as 0s:15000;40s:25000";

/// One step: from `start` on, the limit is `value`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub start: Nanos,
    pub value: u64,
}

/// Steps in increasing order of start (at least one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitSchedule {
    steps: Vec<Step>,
}

impl LimitSchedule {
    /// Reads `START:VALUE;...` given as `key`; values from `min` to `max`.
    pub fn parse(key: &str, text: &str, min: u64, max: u64) -> Result<LimitSchedule, ConfigError> {
        let bad = |expected: String| ConfigError::BadValue {
            key: key.to_string(),
            value: text.to_string(),
            expected,
        };
        let mut steps: Vec<Step> = Vec::new();
        for item in text.split(';').map(str::trim) {
            if steps.len() == MAX_STEPS {
                return Err(bad(format!("at most {MAX_STEPS} steps")));
            }
            let (start, value) = item
                .split_once(':')
                .ok_or_else(|| bad(format!("{SCHEDULE_FORM}; `{item}` has no ':'")))?;
            let start = parse_duration(key, start.trim())?;
            let value = value
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|v| (min..=max).contains(v))
                .ok_or_else(|| {
                    bad(format!(
                        "{SCHEDULE_FORM}; `{item}`: a value is a whole number from {min} to {max}"
                    ))
                })?;
            if steps.last().is_some_and(|last| last.start >= start) {
                return Err(bad(format!(
                    "{SCHEDULE_FORM}; `{item}` does not start after the step before it"
                )));
            }
            steps.push(Step { start, value });
        }
        Ok(LimitSchedule { steps })
    }

    /// The steps, in order.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The value of the last step started by `now` that `next` (the index
    /// of the first step not yet applied) had not reached, and moves `next`
    /// past every step started by `now`. `None`: no step fell due.
    pub fn due(&self, next: &mut usize, now: Nanos) -> Option<u64> {
        let started = self.steps.partition_point(|s| s.start <= now);
        if started <= *next {
            return None;
        }
        *next = started;
        Some(self.steps[started - 1].value)
    }

    /// The text it was read from, normalised (`0s:15000;40s:25000`).
    pub fn text(&self) -> String {
        let steps: Vec<String> = self
            .steps
            .iter()
            .map(|s| format!("{}:{}", s.start, s.value))
            .collect();
        steps.join(";")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LimitSchedule, ConfigError> {
        LimitSchedule::parse("write.schedule", text, 1, 1000)
    }

    #[test]
    fn steps_fall_due_in_order_and_once() {
        let s = parse("0s:10;2s:20;3500ms:30").unwrap();
        let mut next = 0;
        assert_eq!(s.due(&mut next, Nanos::ZERO), Some(10));
        assert_eq!(s.due(&mut next, Nanos::from_secs(1)), None);
        assert_eq!(s.due(&mut next, Nanos::from_secs(2)), Some(20));
        assert_eq!(s.due(&mut next, Nanos::from_secs(2)), None);
        // A late call skips to the latest step that started.
        let mut late = 0;
        assert_eq!(s.due(&mut late, Nanos::from_secs(9)), Some(30));
        assert_eq!(late, 3);
    }

    #[test]
    fn before_the_first_step_nothing_is_due() {
        let s = parse("10s:5").unwrap();
        let mut next = 0;
        assert_eq!(s.due(&mut next, Nanos::from_secs(9)), None);
        assert_eq!(s.due(&mut next, Nanos::from_secs(10)), Some(5));
    }

    #[test]
    fn the_text_reads_back_to_the_same_schedule() {
        let s = parse("0s:10; 2s:20 ;3500ms:30").unwrap();
        assert_eq!(parse(&s.text()).unwrap(), s);
    }

    #[test]
    fn bad_schedules_name_the_step_and_the_form() {
        for (text, says) in [
            ("10s", "has no ':'"),
            ("1s:10;1s:20", "does not start after"),
            ("2s:10;1s:20", "does not start after"),
            ("0s:0", "from 1 to 1000"),
            ("0s:1001", "from 1 to 1000"),
            ("0s:ten", "whole number"),
            ("", "has no ':'"),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(
                err.contains("write.schedule") && err.contains(says),
                "{text}: {err}"
            );
        }
        let err = parse("5:10").unwrap_err().to_string();
        assert!(err.contains("duration with a unit"), "{err}");
    }
}
