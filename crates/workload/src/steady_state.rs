//! fio's steady state: `steadystate` (`ss`), `steadystate_duration`
//! (`ss_dur`) and `steadystate_ramp_time` (`ss_ramp`). A job with a
//! duration stops once its last `ss_dur` seconds of I/O look steady, as
//! fio 3.33's does (its `steadystate.c`):
//!
//! - Once a second of the run (fio's helper thread, whose ticks are the
//!   run's whole seconds here), each running job's completions since the
//!   last tick become a sample: I/Os per second and bytes per second, as
//!   `1000 x delta / milliseconds since the last tick`, in whole numbers.
//! - Samples start one second after the job has run `ss_ramp`, counted
//!   from the end of its `ramp_time` (fio does not sample a job in its
//!   ramp, and restarts its clock after it); the criterion is judged on
//!   every tick once `ss_dur` samples are in (the window rolls).
//! - `iops:L` and `bw:L`: every sample within `L` of the window's mean
//!   (the largest deviation under `L`); `iops_slope:L` and `bw_slope:L`:
//!   the least-squares slope per sample under `L` in size. `L%` is a
//!   percentage of the mean; a bare `L` is I/Os per second, or bytes per
//!   second (a size, `10m`) for `bw`. fio's default is `iops_slope:0.01%`.
//!   A slope's percentage is of the mean in whole numbers, and a criterion
//!   that is NaN (0 over a mean of 0, the slope of `ss_dur=1`'s one
//!   sample) is met, as fio 3.33 meets it (`"criterion" : "-nan"`,
//!   `"attained" : 1`).
//! - With `group_reporting`, the jobs of one reporting group are judged on
//!   the sum of their samples and stop together; without, each job alone.
//!   fio keeps a group's window with its last job and judges it only on
//!   the ticks that job runs: a group whose last job has not started
//!   (`startdelay`) or has ended is not judged, and its other jobs run on.
//!
//! A job that reaches steady state stops issuing at that tick (what it has
//! out completes), as fio marks it to terminate. The ticks here fall on
//! the run's whole seconds; fio's fall wherever its helper thread started,
//! a fraction of a second off the job's start, so its jobs stop up to a
//! second sooner or later (fio 3.33 on a file, `rate_iops=100 ss=iops:5%
//! ss_dur=3`: 284 reads in 2.83 s, here 300 in 3 s; with `ss_ramp=1
//! ss_dur=2` at 200 IOPS: 756 reads in 3.78 s, here 600 in 3 s).
//!
//! A [`SteadyWatch`] is the state of one job's or one group's judgement,
//! shared by its jobs' generators; they tell it each completion and ask it
//! before each issue whether the job may go on.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use iosteer_sched::units::{self, KbBase};
use iosteer_sched::Nanos;

/// What a window of samples is judged on.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum SteadyMetric {
    Iops,
    Bandwidth,
}

/// fio's `steadystate` criterion: what is measured, how, and the limit.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SteadyCriterion {
    pub metric: SteadyMetric,
    /// The slope of a least-squares line through the window, rather than
    /// the largest deviation from its mean.
    pub slope: bool,
    pub limit: f64,
    /// `limit` is a percentage of the window's mean.
    pub percent: bool,
}

impl Default for SteadyCriterion {
    /// fio's default, `iops_slope:0.01%`.
    fn default() -> Self {
        SteadyCriterion {
            metric: SteadyMetric::Iops,
            slope: true,
            limit: 0.01,
            percent: true,
        }
    }
}

/// Accepted criteria, for messages.
pub const CRITERIA: &str = "iops, iops_slope, bw or bw_slope, a colon and a limit: a \
    percentage of the mean (iops:2%), or I/Os per second (iops:20), or bytes per second \
    for bw (bw:10m)";

impl SteadyCriterion {
    /// fio's `ss=CRITERION:LIMIT`, a bandwidth limit's size read in `base`
    /// (fio's `kb_base`); the error names what is expected.
    pub fn parse(text: &str, base: KbBase) -> Result<SteadyCriterion, String> {
        let (name, limit) = text
            .split_once(':')
            .ok_or_else(|| format!("`{text}`: expected {CRITERIA}"))?;
        let (metric, slope) = match name.trim() {
            "iops" => (SteadyMetric::Iops, false),
            "iops_slope" => (SteadyMetric::Iops, true),
            "bw" => (SteadyMetric::Bandwidth, false),
            "bw_slope" => (SteadyMetric::Bandwidth, true),
            other => return Err(format!("`{other}` is not a criterion: expected {CRITERIA}")),
        };
        let limit = limit.trim();
        let bad = || format!("limit `{limit}`: expected {CRITERIA}");
        let (limit, percent) = match limit.strip_suffix('%') {
            Some(pct) => (pct.trim().parse::<f64>().map_err(|_| bad())?, true),
            None if metric == SteadyMetric::Iops => {
                (limit.parse::<f64>().map_err(|_| bad())?, false)
            }
            None => (
                units::parse_size(limit, base).map_err(|_| bad())?.0 as f64,
                false,
            ),
        };
        if !limit.is_finite() {
            return Err(bad());
        }
        Ok(SteadyCriterion {
            metric,
            slope,
            limit,
            percent,
        })
    }
}

impl std::fmt::Display for SteadyCriterion {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let metric = match self.metric {
            SteadyMetric::Iops => "iops",
            SteadyMetric::Bandwidth => "bw",
        };
        let slope = if self.slope { "_slope" } else { "" };
        let pct = if self.percent { "%" } else { "" };
        write!(f, "{metric}{slope}:{}{pct}", self.limit)
    }
}

/// A job's steady-state options.
#[derive(Clone, Debug, PartialEq)]
pub struct SteadyState {
    pub criterion: SteadyCriterion,
    /// `ss_dur`, whole seconds (fio drops the fraction): the window's samples.
    pub seconds: u32,
    /// `ss_ramp`: how long the job runs before samples start (one second
    /// more, as in fio).
    pub ramp: Nanos,
    /// The reporting group whose jobs are judged together (fio's
    /// `group_reporting`), or `None`: the job alone.
    pub group: Option<u32>,
}

/// One job's share of a watch.
#[derive(Clone, Debug, Default)]
struct Member {
    /// When the job started, once it has; `None` also after it ended.
    start: Option<Nanos>,
    ios: u64,
    bytes: u64,
    /// At the last tick: its time and the counts then.
    last_tick: Nanos,
    ios_then: u64,
    bytes_then: u64,
    ramp_over: bool,
}

/// The outcome of a window judged: the criterion's value against its limit.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Judged {
    pub at: Nanos,
    pub value: f64,
    pub attained: bool,
}

/// One job's, or one reporting group's, steady-state judgement.
#[derive(Clone, Debug)]
pub struct SteadyWatch {
    spec: SteadyState,
    members: Vec<Member>,
    next_tick: Nanos,
    /// The window: (I/Os per second, bytes per second), oldest first.
    samples: VecDeque<(u64, u64)>,
    last: Option<Judged>,
}

impl SteadyWatch {
    pub fn new(spec: SteadyState, members: usize) -> SteadyWatch {
        SteadyWatch {
            spec,
            members: vec![Member::default(); members],
            next_tick: Nanos::from_secs(1),
            samples: VecDeque::new(),
            last: None,
        }
    }

    pub fn spec(&self) -> &SteadyState {
        &self.spec
    }

    /// Member `m` started at `at`.
    pub fn started(&mut self, m: usize, at: Nanos) {
        self.members[m] = Member {
            start: Some(at),
            last_tick: at,
            ramp_over: self.spec.ramp == Nanos::ZERO,
            ..Member::default()
        };
    }

    /// Member `m` ended: it is no longer sampled.
    pub fn ended(&mut self, m: usize) {
        self.members[m].start = None;
    }

    /// One of member `m`'s requests of `bytes` (not a flush) completed at
    /// `now`; whether steady state has been reached by then.
    pub fn completed(&mut self, m: usize, bytes: u64, now: Nanos) -> bool {
        self.tick_until(now);
        let member = &mut self.members[m];
        // Completions before its start (in `ramp_time`) are not counted.
        if member.start.is_some_and(|s| s <= now) {
            member.ios += 1;
            member.bytes += bytes;
        }
        self.reached()
    }

    /// Whether the jobs stop: steady state reached by `now`.
    pub fn attained(&mut self, now: Nanos) -> bool {
        self.tick_until(now);
        self.reached()
    }

    /// Reached at a tick already judged.
    pub fn reached(&self) -> bool {
        self.last.is_some_and(|j| j.attained)
    }

    /// The last judgement, and the window it judged.
    pub fn last(&self) -> Option<(Judged, Vec<f64>)> {
        Some((self.last?, self.window()))
    }

    /// Plays the ticks up to `now` (none once reached).
    fn tick_until(&mut self, now: Nanos) {
        while !self.reached() && self.next_tick <= now {
            let at = self.next_tick;
            self.tick(at);
            self.next_tick = at + Nanos::from_secs(1);
        }
    }

    fn tick(&mut self, at: Nanos) {
        let ramp_end = self.spec.ramp + Nanos::from_secs(1);
        let (mut iops, mut bw, mut sampled) = (0, 0, false);
        for m in &mut self.members {
            let Some(start) = m.start.filter(|&s| s < at) else {
                continue;
            };
            m.ramp_over |= at - start >= ramp_end;
            let ms = (at - m.last_tick).0 / 1_000_000;
            if m.ramp_over && ms > 0 {
                iops += 1000 * (m.ios - m.ios_then) / ms;
                bw += 1000 * (m.bytes - m.bytes_then) / ms;
                sampled = true;
            }
            (m.last_tick, m.ios_then, m.bytes_then) = (at, m.ios, m.bytes);
        }
        // fio keeps a group's window with its last job, and judges it only
        // on the ticks that job is running (started, not ended).
        let holder_running = self
            .members
            .last()
            .and_then(|m| m.start)
            .is_some_and(|s| s < at);
        if !sampled || !holder_running {
            return;
        }
        self.samples.push_back((iops, bw));
        if self.samples.len() > self.spec.seconds as usize {
            self.samples.pop_front();
        }
        if self.samples.len() == self.spec.seconds as usize {
            self.last = Some(self.judge(at));
        }
    }

    fn judge(&self, at: Nanos) -> Judged {
        let c = self.spec.criterion;
        let ys = self.window();
        let n = ys.len() as f64;
        let mean = ys.iter().sum::<f64>() / n;
        let (measure, mean) = if c.slope {
            // fio divides a slope by the mean in whole numbers (its sum of
            // samples over their count, in integers).
            (slope(&ys), (ys.iter().sum::<f64>() / n).floor())
        } else {
            (
                ys.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max),
                mean,
            )
        };
        let value = if c.percent {
            100.0 * measure / mean
        } else {
            measure
        };
        // NaN (0 over a mean of 0 as a percentage, the slope of one sample:
        // ss_dur=1) passes in fio 3.33 as built (`attained: 1`, criterion
        // `-nan`); an infinite percentage does not.
        let attained = value.is_nan() || value.abs() < c.limit;
        Judged {
            at,
            value,
            attained,
        }
    }

    /// The samples of the metric judged, oldest first.
    fn window(&self) -> Vec<f64> {
        self.samples
            .iter()
            .map(|&(iops, bw)| match self.spec.criterion.metric {
                SteadyMetric::Iops => iops as f64,
                SteadyMetric::Bandwidth => bw as f64,
            })
            .collect()
    }
}

/// A job's place in a watch (its own, or its reporting group's).
#[derive(Clone, Debug)]
pub struct SteadyMember {
    watch: Arc<Mutex<SteadyWatch>>,
    index: usize,
    /// Jobs judged together (1: the job alone).
    pub members: usize,
}

impl SteadyMember {
    /// A watch of its own, for a job judged alone.
    pub fn alone(spec: SteadyState) -> SteadyMember {
        SteadyMember::of_group(spec, 1).pop().expect("one member")
    }

    /// One watch shared by `members` jobs.
    pub fn of_group(spec: SteadyState, members: usize) -> Vec<SteadyMember> {
        let watch = Arc::new(Mutex::new(SteadyWatch::new(spec, members)));
        (0..members)
            .map(|index| SteadyMember {
                watch: watch.clone(),
                index,
                members,
            })
            .collect()
    }

    /// The first of its group (the one whose note speaks for it).
    pub fn first(&self) -> bool {
        self.index == 0
    }

    pub fn watch(&self) -> MutexGuard<'_, SteadyWatch> {
        // A panic elsewhere cannot leave the counts half written.
        self.watch.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn started(&self, at: Nanos) {
        self.watch().started(self.index, at);
    }

    pub fn ended(&self) {
        self.watch().ended(self.index);
    }

    /// A request of the job completed; whether steady state is reached.
    pub fn completed(&self, bytes: u64, now: Nanos) -> bool {
        self.watch().completed(self.index, bytes, now)
    }

    /// Whether the job stops issuing: steady state reached by `now`.
    pub fn stops(&self, now: Nanos) -> bool {
        self.watch().attained(now)
    }
}

/// Least-squares slope of `ys` over x = 0, 1, 2, ... (NaN for one point).
fn slope(ys: &[f64]) -> f64 {
    let n = ys.len() as f64;
    let sum_x = n * (n - 1.0) / 2.0;
    let sum_x2 = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
    let sum_y: f64 = ys.iter().sum();
    let sum_xy: f64 = ys.iter().enumerate().map(|(i, y)| i as f64 * y).sum();
    (sum_xy - sum_x * sum_y / n) / (sum_x2 - sum_x * sum_x / n)
}

#[cfg(test)]
mod tests;
