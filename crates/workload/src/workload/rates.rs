//! A job's rates: the gap to its next request under one rate, and rates
//! per direction on a job that reads and writes (fio's `rate` and
//! `rate_iops` with one cap per direction): when a direction may go, and
//! which one goes.

use iosteer_sched::{Nanos, Op};
use rand::Rng;

use super::{Generator, JobKind, Synthetic};

/// Read, write, trim: 0, 1, 2; a flush has no direction.
pub(super) fn direction_index(op: Op) -> Option<usize> {
    match op {
        Op::Read => Some(0),
        Op::Write => Some(1),
        Op::Trim => Some(2),
        Op::Flush => None,
    }
}

/// `ns` nanoseconds rounded, at most half the clock's range: a rate so low
/// that its next request would come after the end of time comes at a time
/// the loop can still add to.
fn clamped_nanos(ns: f64) -> Nanos {
    Nanos(ns.round().min(u64::MAX as f64 / 2.0) as u64)
}

impl Generator {
    /// The first moment from `at` on when a job with per-direction rates
    /// may issue: one of its directions is uncapped or due.
    pub(super) fn rate_allows(&self, at: Nanos) -> Nanos {
        match self.job.shape.direction_rates {
            Some([Some(_), Some(_)]) => {
                let [read, write] = self.shaped.rate_due;
                at.max(read.min(write))
            }
            _ => at,
        }
    }

    /// fio's direction under per-direction rates: the drawn one if it may
    /// go `now`, else the other (which may, since the job issues only once
    /// one can).
    pub(super) fn rated(&self, op: Op, now: Nanos) -> Op {
        let Some(rates) = self.job.shape.direction_rates else {
            return op;
        };
        let Some(direction @ 0..=1) = direction_index(op) else {
            return op;
        };
        if rates[direction].is_none() || self.shaped.rate_due[direction] <= now {
            op
        } else if op == Op::Read {
            Op::Write
        } else {
            Op::Read
        }
    }

    /// A read or write went out (and is counted in `direction_bytes`): its
    /// direction's next moment under its rate, on fio's schedule (linear:
    /// the bytes issued over the rate since the job started, so a job held
    /// back catches up; poisson: exponential gaps averaging the rate over
    /// the direction's smallest block, as fio 3.33's `usec_for_io` counts
    /// its requests, whatever each one's size).
    pub(super) fn spend_rate(&mut self, op: Op, poisson: bool) {
        let Some(direction @ 0..=1) = direction_index(op) else {
            return;
        };
        let Some(Some(bytes_per_s)) = self.job.shape.direction_rates.map(|r| r[direction]) else {
            return;
        };
        let issued = self.direction_bytes[direction];
        let smallest = self.smallest_block(&[direction]);
        let state = &mut self.shaped;
        state.rate_due[direction] = if poisson {
            let u: f64 = self.rng.random_range(f64::EPSILON..1.0);
            let gap = -u.ln() * smallest * 1e9 / bytes_per_s;
            state.rate_due[direction].max(self.job.start) + clamped_nanos(gap)
        } else {
            let since_start = issued as f64 * 1e9 / bytes_per_s;
            self.job.start + clamped_nanos(since_start)
        };
    }

    /// The smallest block the job issues in `directions` (0 read, 1 write,
    /// 2 trim): fio's `min_bs`.
    pub(super) fn smallest_block(&self, directions: &[usize]) -> f64 {
        let smallest = match (&self.job.kind, &self.job.shape.blocks) {
            (_, Some(blocks)) => directions.iter().map(|&d| blocks[d].smallest()).min(),
            (JobKind::Synthetic(s), None) => Some(s.block_min),
            (JobKind::Trace(_), None) => None,
        };
        smallest.unwrap_or(1).max(1) as f64
    }

    /// The gap to the next request under the job's one rate (none: closed
    /// loop, zero).
    pub(super) fn gap(&mut self, s: &Synthetic) -> Nanos {
        let mean_len = match &self.job.shape.blocks {
            // A rate in bytes over the sizes a writer (or reader) issues.
            Some(blocks) => {
                let mix = f64::from(s.read_percent) / 100.0;
                let direction = if s.trim { 2 } else { 1 };
                (blocks[0].mean() * mix + blocks[direction].mean() * (1.0 - mix)).max(1.0)
            }
            None => ((s.block_min + s.block_max) / 2).max(1) as f64,
        };
        let per_second = match (s.arrival.iops, s.arrival.bytes_per_s) {
            (Some(iops), _) => iops,
            // fio 3.33 counts a Poisson rate in requests of the smallest
            // block (`usec_for_io`), a linear one in the bytes issued.
            (None, Some(bytes)) if s.arrival.poisson => {
                let issued = [
                    !s.trim && s.read_percent > 0,
                    !s.trim && s.read_percent < 100,
                    s.trim,
                ];
                let directions: Vec<usize> = (0..3).filter(|&d| issued[d]).collect();
                bytes / self.smallest_block(&directions)
            }
            (None, Some(bytes)) => bytes / mean_len,
            // Closed loop: the next request as soon as the iodepth allows;
            // think time follows completions (`completed`).
            (None, None) => return Nanos::ZERO,
        };
        let mean_gap = 1e9 / per_second.max(1e-9);
        let gap = if s.arrival.poisson {
            let u: f64 = self.rng.random_range(f64::EPSILON..1.0);
            -u.ln() * mean_gap
        } else {
            mean_gap
        };
        clamped_nanos(gap)
    }
}
