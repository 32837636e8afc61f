//! The baseline a relative objective is measured against: unloaded reads
//! by quiet stretch, when a read counts as unloaded, the calibration that
//! holds writes until one is known, and the target latency it gives; and the
//! background, the share of recent unloaded reads over the target.

use crate::objective::{Bound, Objective};
use crate::request::Op;
use crate::stats::Percentiles;
use crate::units::Nanos;

use super::objective::Percentile;
use super::{Steer, BACKGROUND_MISSES, MIN_BASELINE_MISSES, QUIET};

/// Unloaded reads, by quiet stretch: the unloaded reads between two loaded
/// ones. The baseline is the lowest percentile of a stretch with enough
/// reads for it: a drive that is still collecting garbage after writes
/// stopped (its idle GC, or a collection the last write triggered) reads
/// slower while no write is about, and pooling those reads with the rest
/// raised the baseline, and so the target, by 6% in `long-fill` on
/// consumer-sata. A stretch too short to judge goes on into the next.
#[derive(Debug, Default)]
pub(super) struct QuietStretches {
    stretch: Option<Percentiles>,
    count: u64,
    /// `count` when the stretch was last judged.
    judged: u64,
    /// A loaded read came since the last unloaded one.
    interrupted: bool,
    /// The lowest percentile of a finished stretch, and the share of its
    /// reads over the bound.
    settled: Option<(Nanos, f64)>,
    /// That of the stretch going on.
    current: Option<(Nanos, f64)>,
}

impl QuietStretches {
    pub(super) fn record(&mut self, latency: Nanos) {
        if self.interrupted && self.current.is_some() {
            self.settled = self.lowest();
            self.current = None;
            self.stretch = None;
            self.count = 0;
            self.judged = 0;
        }
        self.interrupted = false;
        self.stretch
            .get_or_insert_with(Percentiles::run_only)
            .record(latency);
        self.count += 1;
    }

    pub(super) fn interrupt(&mut self) {
        self.interrupted = true;
    }

    /// Takes the stretch's percentile once it holds enough reads.
    pub(super) fn judge(&mut self, objective: &Objective) {
        let Some(stretch) = &self.stretch else {
            return;
        };
        let fresh = self.count > self.judged;
        if !fresh || (self.count as f64) * objective.allowed_misses() < MIN_BASELINE_MISSES {
            return;
        }
        self.judged = self.count;
        let base = objective.pick(&stretch.run());
        let bound = match objective.bound {
            Bound::Relative(k) => Nanos((base.0 as f64 * k).round() as u64),
            Bound::Absolute(t) => t,
        };
        self.current = Some((base, stretch.share_above(bound)));
    }

    /// The baseline: the lower of the settled and the current percentile.
    pub(super) fn lowest(&self) -> Option<(Nanos, f64)> {
        match (self.settled, self.current) {
            (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
            (a, b) => a.or(b),
        }
    }
}

/// Whether the baseline is stale: the disk's own misses exceed the
/// objective's allowance.
#[derive(Copy, Clone, Debug, PartialEq)]
pub(super) struct Stale(pub(super) bool);

/// The share of recent unloaded reads over the target (unloaded: no write
/// in the device, whether or not writes wait in the scheduler). Counted
/// over about the last `BACKGROUND_MISSES / f` such reads: each read's
/// weight decays by one part in that many per read, not per second, so
/// with writes always in the device the last measure stands.
#[derive(Debug, Default)]
pub(super) struct Background {
    reads: f64,
    misses: f64,
}

impl Background {
    pub(super) fn record(&mut self, missed: bool, objective: &Objective) {
        let keep = 1.0 - objective.allowed_misses() / BACKGROUND_MISSES;
        self.reads = self.reads * keep + 1.0;
        self.misses = self.misses * keep + f64::from(u8::from(missed));
    }

    /// The share, once the reads counted allow `MIN_BASELINE_MISSES`.
    pub(super) fn share(&self, objective: &Objective) -> Option<f64> {
        (self.reads * objective.allowed_misses() >= MIN_BASELINE_MISSES)
            .then(|| self.misses / self.reads)
    }
}

impl Steer {
    /// The share of reads expected over the target with no write about,
    /// and whether the objective's own allowance covers it. Normally that
    /// of the baseline's stretch. But when recent unloaded reads miss the
    /// target more often than the objective allows, the baseline is stale
    /// (the disk turned slower on its own: a shared or virtual disk) and no
    /// write rate can meet the objective as measured: their share is the
    /// background, and it is not charged to the writes.
    pub(super) fn background_share(&self) -> (f64, Stale) {
        let objective = &self.config.objective;
        match self.background.share(objective) {
            Some(recent) if recent > objective.allowed_misses() => (recent, Stale(true)),
            _ => (
                self.unloaded.lowest().map_or(0.0, |(_, share)| share),
                Stale(false),
            ),
        }
    }

    /// The read latency target now, if known.
    pub fn target(&self) -> Option<Nanos> {
        match self.config.objective.bound {
            Bound::Absolute(t) => Some(t),
            Bound::Relative(k) => {
                let base = self
                    .baseline()
                    .or_else(|| self.lowest_median.map(|m| Nanos(m.0 * 2)))?;
                Some(Nanos((base.0 as f64 * k).round() as u64))
            }
        }
    }

    /// The measured unloaded percentile, once enough unloaded reads were seen.
    pub fn baseline(&self) -> Option<Nanos> {
        self.unloaded.lowest().map(|(base, _)| base)
    }

    /// Whether writes are held while reads measure the unloaded baseline: a
    /// relative objective, no baseline yet, reads about, and less than
    /// `calibrate` since the first write (a workload that starts loaded
    /// would otherwise never show an unloaded read).
    pub(super) fn calibrating(&self, now: Nanos) -> bool {
        matches!(self.config.objective.bound, Bound::Relative(_))
            && self.baseline().is_none()
            && self.read_seen
            && self
                .first_write
                .is_some_and(|first| now - first < self.config.calibrate)
    }

    /// Whether a read completing now counts for the baseline: no write or
    /// trim queued or in the device, none sent or completed for `QUIET`
    /// (writes held while calibrating do not count). Writes held by the
    /// limit do: stretches between them would be many, and the lowest of
    /// many stretches' percentiles is biased low (on family:3 at
    /// `p99<=1.5x` it cut what steer wrote from 1.6 to 0.9 MB/s).
    pub(super) fn quiet(&self, now: Nanos) -> bool {
        let w = self.base.stats.class(Op::Write);
        let t = self.base.stats.class(Op::Trim);
        let held = if self.calibrating(now) { w.queued } else { 0 };
        w.queued + t.queued == held && self.device_idle(now)
    }

    /// Whether a read completing now is unloaded for the background: no
    /// write or trim in the device, none sent or completed for `QUIET`
    /// (writes held in the scheduler do not load the device: a writer held
    /// at its limit or its deadline leaves unloaded reads between its
    /// writes).
    pub(super) fn device_idle(&self, now: Nanos) -> bool {
        let w = self.base.stats.class(Op::Write);
        let t = self.base.stats.class(Op::Trim);
        w.in_flight + t.in_flight == 0
            && self.last_write_activity.is_none_or(|at| now - at >= QUIET)
    }
}
