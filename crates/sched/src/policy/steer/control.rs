//! The control law: per-window counts of hits and misses, the budget, the
//! cost per byte written, and the steps of the write limit towards the rate
//! the budget can pay for (the algorithm is in [`super`]'s top comment).

use crate::limiter::LimiterKind;
use crate::request::Op;
use crate::units::Nanos;

use super::baseline::Stale;
use super::objective::Percentile;
use super::{
    Steer, COST_HORIZON, COST_MISSES, DEBT_RESPONSE, HORIZON, MAX_DEBT, MAX_GAP, MAX_HORIZON,
    MAX_SAVED, MIN_HORIZON_MISSES, MIN_STEP, PAYBACK, RESERVE, TRIM_SPREAD, WINDOW,
};

/// Hits and misses of one control window.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub(super) struct Window {
    pub(super) reads: u64,
    pub(super) misses: u64,
    /// Misses of reads that waited for a trim (a subset of `misses`).
    pub(super) trim_misses: u64,
    /// Misses charged: the others, plus a share of the trim misses owed.
    pub(super) charged: f64,
    /// Misses expected of these reads with no write about (the unloaded
    /// reads' share over the target)...
    pub(super) background: f64,
    /// ...and whether they are past the objective's allowance (then they
    /// are not charged to the budget either).
    pub(super) stale: bool,
    pub(super) write_bytes: u64,
    /// Device time of the writes completed in the window, and their bytes.
    pub(super) write_service: u64,
    pub(super) write_done: u64,
    /// Misses expected of the overdue writes sent in the window (the cost
    /// per byte times their bytes), not yet charged.
    pub(super) late_cost: f64,
    /// A write waited on the limiters during the window...
    pub(super) limited: bool,
    /// ...on the bandwidth limit itself (not only on the writes in flight).
    pub(super) rate_bound: bool,
    /// Writes were queued or in the device at some point of the window.
    pub(super) loaded: bool,
}

/// Totals over recent windows.
#[derive(Copy, Clone, Debug, Default)]
pub(super) struct Span {
    windows: usize,
    reads: u64,
    /// Charged misses.
    misses: f64,
    background: f64,
    bytes: u64,
    /// A write waited on the limiters, and on the bandwidth limit itself,
    /// in the last `HORIZON` of it.
    limited: bool,
    rate_bound: bool,
}

impl Span {
    /// Misses per kB written, less those the reads have with no write about.
    pub(super) fn cost(&self) -> f64 {
        (self.misses - self.background).max(0.0) / (self.bytes as f64 / 1000.0).max(1.0)
    }

    pub(super) fn reads_per_second(&self) -> f64 {
        self.reads as f64 / (self.windows.max(1) as f64 * WINDOW.0 as f64 / 1e9)
    }
}

/// Control windows in `d`.
pub(super) fn windows(d: Nanos) -> usize {
    (d.0 / WINDOW.0) as usize
}

impl Steer {
    /// One control window ended: update the baseline and steer the limit.
    pub(super) fn end_window(&mut self, now: Nanos) {
        let mut window = std::mem::take(&mut self.current);
        let w = self.base.stats.class(Op::Write);
        window.loaded |= window.write_bytes > 0 || w.queued + w.in_flight > 0;
        window.charged = self.charge(&window);
        let (share, Stale(stale)) = self.background_share();
        window.background = window.reads as f64 * share;
        window.stale = stale;
        self.history.push_back(window);
        while self.history.len() > windows(MAX_HORIZON) {
            self.history.pop_front();
        }
        let median = self
            .base
            .stats
            .class(Op::Read)
            .device_latency
            .last_window()
            .p50;
        if median > Nanos::ZERO {
            self.lowest_median = Some(self.lowest_median.map_or(median, |m| m.min(median)));
        }
        let f = self.config.objective.allowed_misses();
        self.unloaded.judge(&self.config.objective);
        // Misses against an estimate about to be replaced judge nothing.
        if !self.calibrating(now) {
            self.steer(f, window);
        }
        self.set_depth();
    }

    /// Misses charged for a window: the others at once, trim misses spread
    /// over `TRIM_SPREAD` (each window pays its share of what is owed).
    pub(super) fn charge(&mut self, window: &Window) -> f64 {
        self.trim_owed += window.trim_misses as f64;
        let paid = self.trim_owed * (WINDOW.0 as f64 / TRIM_SPREAD.0 as f64);
        self.trim_owed -= paid;
        (window.misses - window.trim_misses) as f64 + paid
    }

    /// Totals over the last `windows` windows, stretched back while `short`
    /// of evidence, but over at most `max` windows.
    pub(super) fn span(&self, windows: usize, max: usize, short: impl Fn(&Span) -> bool) -> Span {
        let mut t = Span::default();
        for (n, w) in self.history.iter().rev().enumerate() {
            if n >= max || (n >= windows && !short(&t)) {
                break;
            }
            t.windows += 1;
            t.reads += w.reads;
            t.misses += w.charged;
            t.background += w.background;
            t.bytes += w.write_bytes;
            t.limited |= w.limited && n < windows;
            t.rate_bound |= w.rate_bound && n < windows;
        }
        t
    }

    /// The span the cost per byte is taken over: `COST_HORIZON`, stretched
    /// back until it holds `COST_MISSES` misses, at most `MAX_HORIZON`.
    fn long_span(&self) -> Span {
        self.span(windows(COST_HORIZON), windows(MAX_HORIZON), |t| {
            t.misses < COST_MISSES
        })
    }

    pub(super) fn steer(&mut self, f: f64, last: Window) {
        let recent = self.span(windows(HORIZON), windows(MAX_HORIZON), |t| {
            (t.reads as f64) * f < MIN_HORIZON_MISSES
        });
        let allowance = (f * recent.reads_per_second()).max(1.0);
        self.reserve = RESERVE * allowance;
        let earned = if last.loaded {
            f * last.reads as f64
        } else {
            0.0
        };
        // Misses the reads would have with no write about, past what the
        // objective allows, are not charged: no write rate pays them back.
        let disk_own = if last.stale { last.background } else { 0.0 };
        let budget = self.budget + earned - last.charged + disk_own;
        let most_owed = MAX_DEBT * allowance;
        // Forgiven: whatever the cap cuts off the debt, misses of this
        // window or older ones when the cap falls with the read rate (reads
        // stalled behind GC complete slowly, so a burst lowers its own cap).
        self.forgiven += (-most_owed - budget).max(0.0);
        self.budget = budget.clamp(-most_owed, MAX_SAVED * allowance);
        self.cost = self.long_span().cost();
        // Nothing to judge: no write to limit, or no read to tell...
        if !last.loaded || last.reads == 0 {
            // ...but with no read about for a while, nothing to protect:
            // writes alone go as fast as they are sent.
            let second = self.span(windows(HORIZON), windows(HORIZON), |_| false);
            if last.loaded && second.reads == 0 && !self.reads_about() {
                self.apply(MAX_GAP / windows(COST_HORIZON) as f64, &second);
            }
            return;
        }
        let log_step = self.step_to_target(allowance, &recent);
        self.apply(log_step, &recent);
    }

    /// The fewest writes in flight that carry the limit: the limit times
    /// the device time per byte of a write, at its lowest over the history
    /// (a write that waited for GC says nothing of what more writes in
    /// flight would carry), rounded up; at most `write_depth`.
    pub(super) fn set_depth(&mut self) {
        let fastest = self
            .history
            .iter()
            .filter(|w| w.write_done > 0)
            .map(|w| w.write_service as f64 / w.write_done as f64)
            .min_by(f64::total_cmp);
        let Some(ns_per_byte) = fastest else {
            return;
        };
        let busy = self.rate * 1000.0 * ns_per_byte / 1e9;
        let depth = busy.ceil().clamp(1.0, f64::from(self.config.write_depth));
        if let Some(limiter) = self.limiter.get_mut(LimiterKind::QueueDepth) {
            limiter.limit_mut().current = depth as u64;
        }
    }

    /// The log2 step towards the rate that spends, at the current cost per
    /// byte, what the budget allows per second.
    pub(super) fn step_to_target(&self, allowance: f64, recent: &Span) -> f64 {
        // The allowance, less the debt or plus the savings off the reserve,
        // paid back or spent over PAYBACK; a sixteenth at least, so that the
        // deepest debt still gives a target (MAX_GAP below the rate at most).
        let spend =
            (allowance + (self.budget - RESERVE * allowance) / PAYBACK).max(allowance / 16.0);
        // `self.cost`: the long span's, taken when this window closed.
        let in_debt = self.budget < 0.0;
        let cost = if in_debt {
            self.cost.max(recent.cost())
        } else {
            self.cost
        };
        let gap = if cost > 0.0 {
            (spend / cost / self.rate).log2().clamp(-MAX_GAP, MAX_GAP)
        } else {
            MAX_GAP
        };
        if in_debt && gap < 0.0 {
            gap * DEBT_RESPONSE
        } else {
            gap / windows(COST_HORIZON) as f64
        }
    }

    /// Moves the limit by 2^`log_step`: up only while writes were held back
    /// by it, and not above twice what they used; at least `MIN_STEP`.
    pub(super) fn apply(&mut self, log_step: f64, recent: &Span) {
        let mut rate = self.rate * log_step.exp2();
        if log_step > 0.0 {
            if !recent.limited {
                return;
            }
            let seconds = (recent.windows.max(1) as u64 * WINDOW.0) as f64 / 1e9;
            let mut used = recent.bytes as f64 / 1000.0 / seconds;
            // Held by the bandwidth limit itself, the writes use all of it
            // (over a write's repayment): a 1 MiB write at a 10 kB/s floor
            // repays for 100 s with nothing sent, which is no sign that
            // the writer wants less.
            if recent.rate_bound {
                used = used.max(self.rate);
            }
            rate = rate
                .max(self.rate + MIN_STEP as f64)
                .min((2.0 * used).max(self.rate));
        } else if log_step < 0.0 {
            rate = rate.min(self.rate - MIN_STEP as f64);
        }
        let (min, max) = (self.config.min_rate as f64, self.config.max_rate as f64);
        self.rate = rate.clamp(min, max);
        if let Some(limit) = self.limiter.steered_mut() {
            limit.current = self.rate.round() as u64;
            limit.clamp();
        }
    }
}
