//! fio's latency target: `latency_target`, `latency_window`,
//! `latency_percentile` and `latency_run`. The job starts at a queue depth
//! of 1 and, at the end of each window, looks at the share of its
//! completions (since the window began) that took no longer than the
//! target: at least `latency_percentile` percent, and the depth goes up
//! (doubling until a depth has failed, then halfway to the lowest failed
//! one); fewer, and it goes down halfway to the highest depth that passed.
//! With `latency_percentile=100` (fio's default) one completion over the
//! target is a failure at once, and at depth 1 it ends the job with an
//! error, as fio's "max latency exceeded". Every change of depth first lets
//! the requests out complete (fio's quiesce), and the next window starts
//! then. When a window passes and the depth would not change, the search has
//! found its depth: the job runs one more window at it (fio clears the job's
//! figures first, so what it reports is that window) and ends, unless
//! `latency_run=1` keeps it adjusting for its whole run.
//!
//! A [`DepthSearch`] is the state of one job's search; the generator asks it
//! how deep the job may go ([`DepthSearch::limit`]) and tells it each
//! completion ([`DepthSearch::completed`]).

use iosteer_sched::Nanos;

/// A job file's latency target (fio's `latency_*` options).
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyTarget {
    /// fio's `latency_target`: the latency a request must stay under.
    pub target: Nanos,
    /// fio's `latency_window`: how long each depth is tried.
    pub window: Nanos,
    /// fio's `latency_percentile`: percent of a window's completions that
    /// must be at or under the target (100: every one).
    pub percentile: f64,
    /// fio's `latency_run`: keep adjusting the depth for the whole run
    /// rather than end once it is found.
    pub keep_adjusting: bool,
}

/// Depths kept for the report's note; later ones are only counted.
const DEPTHS_KEPT: usize = 32;

/// Where a job's search is.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Still looking (or, with `latency_run=1`, adjusting).
    Searching,
    /// Found its depth and runs its final window at it.
    FinalWindow,
    /// Found its depth and ran its final window: the job ends.
    Found,
    /// A request took `latency` at depth 1 with every request bound to the
    /// target: fio ends the job with an error.
    GaveUp { latency: Nanos },
}

/// One job's search for its depth.
#[derive(Clone, Debug)]
pub struct DepthSearch {
    target: LatencyTarget,
    max_depth: u32,
    depth: u32,
    /// Highest depth that passed and lowest that failed (fio's qd_low and
    /// qd_high, the latter `max_depth` until a depth fails).
    passed: u32,
    failed_at: u32,
    /// Windows passed in a row one below `failed_at` (fio then tries
    /// `failed_at` again after three).
    stable: u32,
    window_start: Nanos,
    window_completions: u64,
    window_over: u64,
    /// Letting the requests out complete before the next window.
    quiescing: bool,
    /// The depth is found: the final window starts once quiesced.
    final_pending: bool,
    /// When the final window started (fio cleared the job's figures then).
    final_since: Option<Nanos>,
    outcome: Outcome,
    depths: Vec<u32>,
    depth_changes: usize,
}

impl DepthSearch {
    /// A search up to `max_depth` (the job's iodepth), its first window
    /// starting at `start`.
    pub fn new(target: LatencyTarget, max_depth: u32, start: Nanos) -> DepthSearch {
        DepthSearch {
            target,
            max_depth: max_depth.max(1),
            depth: 1,
            passed: 1,
            failed_at: max_depth.max(1),
            stable: 0,
            window_start: start,
            window_completions: 0,
            window_over: 0,
            quiescing: false,
            final_pending: false,
            final_since: None,
            outcome: Outcome::Searching,
            depths: vec![1],
            depth_changes: 0,
        }
    }

    /// The most requests the job may have out now: its depth, or none while
    /// it lets the requests out complete.
    pub fn limit(&self) -> u32 {
        if self.quiescing {
            0
        } else {
            self.depth
        }
    }

    /// The job issues nothing more: its depth found and final window run,
    /// or it gave up.
    pub fn ends_job(&self) -> bool {
        matches!(self.outcome, Outcome::Found | Outcome::GaveUp { .. })
    }

    pub fn outcome(&self) -> &Outcome {
        &self.outcome
    }

    /// When the final window at the depth found started: fio's figures of
    /// the job are from then on.
    pub fn final_window_since(&self) -> Option<Nanos> {
        self.final_since
    }

    pub fn target(&self) -> &LatencyTarget {
        &self.target
    }

    /// The depth the job runs at now (the one found once found).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The depths tried, in order (the first `DEPTHS_KEPT`), and how many
    /// changes of depth there were in all.
    pub fn depths_tried(&self) -> (&[u32], usize) {
        (&self.depths, self.depth_changes)
    }

    /// A request of the job completed at `now` after `latency`, leaving
    /// `outstanding` out; `counts` is false during the job's ramp (fio
    /// neither counts nor checks then).
    pub fn completed(&mut self, now: Nanos, latency: Nanos, outstanding: u32, counts: bool) {
        if counts && !self.quiescing && !self.ends_job() {
            self.window_completions += 1;
            if latency > self.target.target {
                self.over_target(now, latency);
            }
            if !self.ends_job() {
                self.check_window(now);
            }
        }
        if self.quiescing && outstanding == 0 {
            self.quiesced(now);
        }
    }

    fn over_target(&mut self, now: Nanos, latency: Nanos) {
        if self.target.percentile < 100.0 {
            self.window_over += 1;
        } else if !self.lower(now) {
            self.outcome = Outcome::GaveUp { latency };
        }
    }

    /// At a window's end, up or down by its share under the target.
    fn check_window(&mut self, now: Nanos) {
        if now - self.window_start.min(now) < self.target.window || self.window_completions == 0 {
            return;
        }
        let under = self.window_completions - self.window_over;
        let share = under as f64 * 100.0 / self.window_completions as f64;
        if share >= self.target.percentile {
            self.raise(now);
        } else {
            // At depth 1 fio stays there and checks again (no new window).
            self.lower(now);
        }
    }

    /// A window failed: halfway down to the highest depth that passed.
    /// `false` at depth 1, where it cannot go lower.
    fn lower(&mut self, now: Nanos) -> bool {
        if self.depth == 1 {
            return false;
        }
        self.failed_at = self.depth;
        if self.depth == self.passed {
            self.passed -= 1;
        }
        self.set_depth((self.depth + self.passed) / 2);
        self.stable = 0;
        self.begin_quiesce(now);
        true
    }

    /// A window passed: double, or halfway up to the lowest failed depth;
    /// the same depth again is the one found.
    fn raise(&mut self, now: Nanos) {
        let before = self.depth;
        self.passed = self.depth;
        if self.depth + 1 == self.failed_at {
            self.stable += 1;
            if self.stable >= 3 {
                self.failed_at += 1;
                self.stable = 0;
            }
        }
        let next = if self.failed_at != self.max_depth {
            (self.depth + self.failed_at) / 2
        } else {
            self.depth.saturating_mul(2)
        };
        self.set_depth(next.min(self.max_depth));
        if self.target.keep_adjusting || self.depth != before {
            self.new_window(now);
            return;
        }
        match self.outcome {
            Outcome::FinalWindow => self.outcome = Outcome::Found,
            _ => {
                self.final_pending = true;
                self.begin_quiesce(now);
            }
        }
    }

    fn set_depth(&mut self, depth: u32) {
        if depth != self.depth {
            self.depth_changes += 1;
            if self.depths.len() < DEPTHS_KEPT {
                self.depths.push(depth);
            }
        }
        self.depth = depth;
    }

    fn begin_quiesce(&mut self, now: Nanos) {
        self.quiescing = true;
        self.new_window(now);
    }

    /// The requests out completed: the next window (the final one when the
    /// depth was found) starts.
    fn quiesced(&mut self, now: Nanos) {
        self.quiescing = false;
        self.new_window(now);
        if std::mem::take(&mut self.final_pending) {
            self.outcome = Outcome::FinalWindow;
            self.final_since = Some(now);
        }
    }

    fn new_window(&mut self, now: Nanos) {
        self.window_start = now;
        self.window_completions = 0;
        self.window_over = 0;
    }
}

#[cfg(test)]
mod tests;
