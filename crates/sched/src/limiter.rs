//! Limiters: small strategies that decide whether a class may send one more
//! command to the device. A policy composes any of them per class.
//!
//! FreeBSD's cam_iosched keeps a table of five hooks per limiter kind (init,
//! tick, iop, caniop, iodone) and lets a class use one kind at a time. Here
//! each kind implements [`Limiter`] and a [`LimiterSet`] holds any combination:
//! a command goes only when every limiter of its class admits it.
//!
//! Kinds and the unit of their `current` value (as upstream):
//! - queue depth: commands of the class in the device;
//! - IOPS: commands per second;
//! - bandwidth: kB/s, with 1 kB = 1000 bytes.
//!
//! Rate limiters earn credit on every scheduler tick (`quanta` ticks per
//! second). Upstream grants `current / quanta` whole I/Os per tick, so a limit
//! below `quanta` IOPS truncates to zero and is floored to one I/O per tick:
//! a limit of 50 IOPS at 200 ticks/s gave 200 IOPS. Here credit is counted in
//! units of 1/quanta of an I/O (or of a byte): each tick adds exactly
//! `current` units and each I/O costs `quanta` units, so no limit, however
//! small, is distorted or frozen by integer truncation.
//!
//! Credit is capped at [`credit_cap_ticks`] ticks' worth (at least 4 ticks and
//! at least 20 ms, or one whole I/O if that is more), so an idle class cannot
//! save up a burst, while a tick that comes late (a busy machine, a coarse
//! timer) still earns the credit of all the time that passed, up to the cap. Bandwidth credit
//! may go into debt: an I/O is admitted while credit is positive and charged
//! in full, so a large request is never starved by smaller ones and later
//! ticks pay the debt back (as upstream). Over any window of W seconds a
//! backlogged class therefore sends at most `current * W` plus the cap plus
//! one tick (plus one request of debt, for bandwidth).

use crate::units::{Bytes, Nanos};

/// Ticks' worth of credit a rate limiter may hold. Upstream uses 4 ticks for
/// bandwidth ("extremely arbitrary"): 20 ms at its 200 ticks/s, enough to
/// absorb timer jitter, too little to matter as a burst. Expressed as time, so
/// that a high `quanta` does not shrink it to microseconds: the larger of 4
/// ticks and 20 ms.
pub fn credit_cap_ticks(quanta: u32) -> i64 {
    (i64::from(quanta) / 50).max(4)
}

/// The kinds of limiter, by their configuration name.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum LimiterKind {
    QueueDepth,
    Iops,
    Bandwidth,
}

impl LimiterKind {
    pub const ALL: [LimiterKind; 3] = [
        LimiterKind::QueueDepth,
        LimiterKind::Iops,
        LimiterKind::Bandwidth,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            LimiterKind::QueueDepth => "queue_depth",
            LimiterKind::Iops => "iops",
            LimiterKind::Bandwidth => "bandwidth",
        }
    }

    pub const fn unit(self) -> &'static str {
        match self {
            LimiterKind::QueueDepth => "commands in flight",
            LimiterKind::Iops => "IO/s",
            LimiterKind::Bandwidth => "kB/s (1 kB = 1000 bytes)",
        }
    }

    /// The unit in a short form, for one-line displays.
    pub const fn short_unit(self) -> &'static str {
        match self {
            LimiterKind::QueueDepth => "in flight",
            LimiterKind::Iops => "IO/s",
            LimiterKind::Bandwidth => "kB/s",
        }
    }

    pub fn from_name(name: &str) -> Option<LimiterKind> {
        LimiterKind::ALL.into_iter().find(|k| k.name() == name)
    }

    pub const fn index(self) -> usize {
        self as usize
    }
}

/// The range a limit may move in, and where it is now, in the kind's unit.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Limit {
    pub min: u64,
    pub max: u64,
    pub current: u64,
}

impl Limit {
    /// Upstream defaults: min 1, max and current 300000 (in effect no limit).
    pub const UNLIMITED: Limit = Limit {
        min: 1,
        max: 300_000,
        current: 300_000,
    };

    pub fn clamp(&mut self) {
        self.current = self.current.clamp(self.min, self.max);
    }
}

/// One limiting strategy.
pub trait Limiter: std::fmt::Debug + Send {
    fn kind(&self) -> LimiterKind;
    fn limit(&self) -> &Limit;
    fn limit_mut(&mut self) -> &mut Limit;
    /// `ticks` scheduler ticks have passed: earn credit.
    fn refill(&mut self, ticks: u64);
    /// May one more command of the class go, with `in_flight` of its commands
    /// already in the device?
    fn admits(&self, in_flight: u32) -> bool;
    /// A command of `bytes` was sent.
    fn charge(&mut self, bytes: Bytes);
    /// How long this limiter alone needs to let `queued` requests totalling
    /// `bytes` through, given that one device command takes `service`.
    fn drain_time(&self, queued: u32, bytes: Bytes, service: Nanos) -> Nanos;
}

/// At most `current` commands of the class in the device.
#[derive(Debug)]
pub struct QueueDepthLimiter {
    limit: Limit,
}

/// `limit` and `limit_mut` of a limiter that keeps its [`Limit`] in a
/// field named `limit`.
macro_rules! limit_in_field {
    () => {
        fn limit(&self) -> &Limit {
            &self.limit
        }
        fn limit_mut(&mut self) -> &mut Limit {
            &mut self.limit
        }
    };
}

impl Limiter for QueueDepthLimiter {
    fn kind(&self) -> LimiterKind {
        LimiterKind::QueueDepth
    }
    limit_in_field!();
    fn refill(&mut self, _ticks: u64) {}
    fn admits(&self, in_flight: u32) -> bool {
        u64::from(in_flight) < self.limit.current
    }
    fn charge(&mut self, _bytes: Bytes) {}
    fn drain_time(&self, queued: u32, _bytes: Bytes, service: Nanos) -> Nanos {
        let rounds = u64::from(queued).div_ceil(self.limit.current.max(1));
        Nanos(rounds.saturating_mul(service.0))
    }
}

/// Token bucket shared by the IOPS and bandwidth limiters. Credit is in units
/// of 1/quanta of the limited quantity (an I/O or a byte), so a tick adds
/// exactly `per_tick` units and no rate is truncated.
#[derive(Debug)]
struct Credit {
    quanta: i64,
    cap_ticks: i64,
    units: i64,
}

impl Credit {
    fn new(quanta: u32, per_tick: i64) -> Credit {
        Credit {
            quanta: i64::from(quanta.max(1)),
            cap_ticks: credit_cap_ticks(quanta),
            units: per_tick,
        }
    }

    fn refill(&mut self, ticks: u64, per_tick: i64, floor_cap: i64) {
        let cap = self.cap_ticks.saturating_mul(per_tick).max(floor_cap);
        if self.units >= cap {
            return;
        }
        let earned = per_tick.saturating_mul(ticks.min(i64::MAX as u64) as i64);
        self.units = self.units.saturating_add(earned).min(cap);
    }
}

/// At most `current` commands per second.
#[derive(Debug)]
pub struct IopsLimiter {
    limit: Limit,
    credit: Credit,
}

impl IopsLimiter {
    fn cost(&self) -> i64 {
        self.credit.quanta
    }
}

impl Limiter for IopsLimiter {
    fn kind(&self) -> LimiterKind {
        LimiterKind::Iops
    }
    limit_in_field!();
    fn refill(&mut self, ticks: u64) {
        let cost = self.cost();
        self.credit.refill(ticks, self.limit.current as i64, cost);
    }
    fn admits(&self, _in_flight: u32) -> bool {
        self.credit.units >= self.cost()
    }
    fn charge(&mut self, _bytes: Bytes) {
        self.credit.units -= self.cost();
    }
    fn drain_time(&self, queued: u32, _bytes: Bytes, _service: Nanos) -> Nanos {
        Nanos(u64::from(queued).saturating_mul(1_000_000_000) / self.limit.current.max(1))
    }
}

/// At most `current` kB/s; may go into debt by one request.
#[derive(Debug)]
pub struct BandwidthLimiter {
    limit: Limit,
    credit: Credit,
}

impl BandwidthLimiter {
    fn per_tick(&self) -> i64 {
        (self.limit.current as i64).saturating_mul(1000)
    }
}

impl Limiter for BandwidthLimiter {
    fn kind(&self) -> LimiterKind {
        LimiterKind::Bandwidth
    }
    limit_in_field!();
    fn refill(&mut self, ticks: u64) {
        let per_tick = self.per_tick();
        self.credit.refill(ticks, per_tick, 0);
    }
    fn admits(&self, _in_flight: u32) -> bool {
        self.credit.units > 0
    }
    fn charge(&mut self, bytes: Bytes) {
        let cost = (bytes.0.min(i64::MAX as u64) as i64).saturating_mul(self.credit.quanta);
        self.credit.units = self.credit.units.saturating_sub(cost);
    }
    fn drain_time(&self, _queued: u32, bytes: Bytes, _service: Nanos) -> Nanos {
        let bytes_per_s = self.limit.current.max(1).saturating_mul(1000);
        let ns = (u128::from(bytes.0) * 1_000_000_000) / u128::from(bytes_per_s);
        Nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }
}

/// The limiters of one class: at most one of each kind, composed statically
/// (each check is a few inlined instructions, not a virtual call). The first
/// kind listed is the one a control loop steers.
#[derive(Debug, Default)]
pub struct LimiterSet {
    queue_depth: Option<QueueDepthLimiter>,
    iops: Option<IopsLimiter>,
    bandwidth: Option<BandwidthLimiter>,
    steered: Option<LimiterKind>,
}

impl LimiterSet {
    /// A set of the listed kinds (each at most once) with their limits, by
    /// `LimiterKind::index`, for a scheduler ticking `quanta` times a second.
    pub fn new(kinds: &[LimiterKind], limits: [Limit; 3], quanta: u32) -> LimiterSet {
        let mut set = LimiterSet {
            steered: kinds.first().copied(),
            ..LimiterSet::default()
        };
        for kind in kinds {
            let limit = limits[kind.index()];
            match kind {
                LimiterKind::QueueDepth => set.queue_depth = Some(QueueDepthLimiter { limit }),
                LimiterKind::Iops => {
                    let first_tick = (limit.current as i64).max(i64::from(quanta));
                    set.iops = Some(IopsLimiter {
                        limit,
                        credit: Credit::new(quanta, first_tick),
                    })
                }
                LimiterKind::Bandwidth => {
                    let first_tick = (limit.current as i64).saturating_mul(1000);
                    set.bandwidth = Some(BandwidthLimiter {
                        limit,
                        credit: Credit::new(quanta, first_tick),
                    })
                }
            }
        }
        set
    }

    pub fn is_empty(&self) -> bool {
        self.steered.is_none()
    }

    #[inline]
    pub fn admits(&self, in_flight: u32) -> bool {
        self.queue_depth
            .as_ref()
            .is_none_or(|l| l.admits(in_flight))
            && self.iops.as_ref().is_none_or(|l| l.admits(in_flight))
            && self.bandwidth.as_ref().is_none_or(|l| l.admits(in_flight))
    }

    #[inline]
    pub fn charge(&mut self, bytes: Bytes) {
        if let Some(l) = &mut self.iops {
            l.charge(bytes);
        }
        if let Some(l) = &mut self.bandwidth {
            l.charge(bytes);
        }
    }

    pub fn refill(&mut self, ticks: u64) {
        self.for_each_mut(|l| l.refill(ticks));
    }

    /// The limit a control loop acts on (the first limiter of the class).
    pub fn steered_mut(&mut self) -> Option<&mut Limit> {
        let kind = self.steered?;
        self.get_mut(kind).map(|l| l.limit_mut())
    }

    pub fn steered(&self) -> Option<(LimiterKind, Limit)> {
        let kind = self.steered?;
        self.get(kind).map(|l| (kind, *l.limit()))
    }

    pub fn get(&self, kind: LimiterKind) -> Option<&dyn Limiter> {
        match kind {
            LimiterKind::QueueDepth => self.queue_depth.as_ref().map(|l| l as &dyn Limiter),
            LimiterKind::Iops => self.iops.as_ref().map(|l| l as &dyn Limiter),
            LimiterKind::Bandwidth => self.bandwidth.as_ref().map(|l| l as &dyn Limiter),
        }
    }

    pub fn get_mut(&mut self, kind: LimiterKind) -> Option<&mut dyn Limiter> {
        match kind {
            LimiterKind::QueueDepth => self.queue_depth.as_mut().map(|l| l as &mut dyn Limiter),
            LimiterKind::Iops => self.iops.as_mut().map(|l| l as &mut dyn Limiter),
            LimiterKind::Bandwidth => self.bandwidth.as_mut().map(|l| l as &mut dyn Limiter),
        }
    }

    /// Applies `f` to every limiter of the set.
    pub fn for_each_mut(&mut self, mut f: impl FnMut(&mut dyn Limiter)) {
        for kind in LimiterKind::ALL {
            if let Some(limiter) = self.get_mut(kind) {
                f(limiter);
            }
        }
    }

    /// The slowest limiter's time to let a backlog through.
    pub fn drain_time(&self, queued: u32, bytes: Bytes, service: Nanos) -> Nanos {
        LimiterKind::ALL
            .into_iter()
            .filter_map(|kind| self.get(kind))
            .map(|l| l.drain_time(queued, bytes, service))
            .max()
            .unwrap_or(Nanos::ZERO)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(current: u64) -> Limit {
        Limit {
            min: 1,
            max: 1_000_000,
            current,
        }
    }

    fn new_limiter(kind: LimiterKind, limit: Limit, quanta: u32) -> LimiterSet {
        LimiterSet::new(&[kind], [limit; 3], quanta)
    }

    /// Sends as many commands as the limiter admits at each of `ticks` ticks.
    fn sent_over(limiter: &mut LimiterSet, ticks: u64, bytes: u64) -> u64 {
        let mut sent = 0;
        for _ in 0..ticks {
            limiter.refill(1);
            while limiter.admits(0) {
                limiter.charge(Bytes(bytes));
                sent += 1;
            }
        }
        sent
    }

    #[test]
    fn queue_depth_admits_below_current() {
        let qd = new_limiter(LimiterKind::QueueDepth, limit(2), 200);
        assert!(qd.admits(0) && qd.admits(1) && !qd.admits(2));
    }

    #[test]
    fn a_small_iops_limit_is_not_truncated() {
        // Upstream: 50 / 200 truncates to 0, floored to 1 per tick = 200 IOPS.
        let mut iops = new_limiter(LimiterKind::Iops, limit(50), 200);
        let sent = sent_over(&mut iops, 200 * 10, 4096);
        assert!(
            (500..=501).contains(&sent),
            "{sent} I/Os in 10 s at 50 IOPS"
        );
    }

    #[test]
    fn iops_limit_below_one_per_second_still_flows() {
        let mut iops = new_limiter(LimiterKind::Iops, limit(1), 200);
        let sent = sent_over(&mut iops, 200 * 10, 4096);
        assert!((10..=11).contains(&sent), "{sent}");
    }

    #[test]
    fn bandwidth_goes_into_debt_and_pays_it_back() {
        // 1000 kB/s = 5000 bytes per tick; a 1 MB request is admitted on
        // positive credit, then nothing goes for ~200 ticks.
        let mut bw = new_limiter(LimiterKind::Bandwidth, limit(1000), 200);
        assert!(bw.admits(0));
        bw.charge(Bytes(1_000_000));
        assert!(!bw.admits(0));
        let mut ticks = 0;
        while !bw.admits(0) {
            bw.refill(1);
            ticks += 1;
        }
        assert!((199..=200).contains(&ticks), "{ticks}");
    }

    #[test]
    fn bandwidth_rate_holds_over_ten_seconds() {
        let mut bw = new_limiter(LimiterKind::Bandwidth, limit(30_000), 200);
        let sent = sent_over(&mut bw, 200 * 10, 128 * 1024);
        let mb = (sent * 128 * 1024) as f64 / 1e6;
        assert!((mb - 300.0).abs() < 1.0, "{mb} MB in 10 s at 30 MB/s");
    }

    #[test]
    fn idle_credit_is_capped_at_a_few_ticks() {
        let mut iops = new_limiter(LimiterKind::Iops, limit(2000), 200);
        iops.refill(10_000);
        let mut burst = 0;
        while iops.admits(0) {
            iops.charge(Bytes(0));
            burst += 1;
        }
        assert_eq!(burst, 10 * credit_cap_ticks(200) as u64);
    }

    #[test]
    fn a_late_tick_earns_the_credit_of_the_time_that_passed() {
        // 10000 IOPS at 100000 ticks/s: ticked every 1 ms (100 ticks late
        // each time), the limit still delivers 10000/s.
        let mut iops = new_limiter(LimiterKind::Iops, limit(10_000), 100_000);
        let mut sent = 0;
        for _ in 0..1000 {
            iops.refill(100);
            while iops.admits(0) {
                iops.charge(Bytes(4096));
                sent += 1;
            }
        }
        assert!((10_000..=10_001).contains(&sent), "{sent} in 1 s");
    }

    #[test]
    fn a_set_admits_only_when_every_limiter_does() {
        let mut set = LimiterSet::new(
            &[LimiterKind::QueueDepth, LimiterKind::Iops],
            [limit(4), limit(200), limit(0)],
            200,
        );
        assert!(set.admits(0));
        set.charge(Bytes(4096));
        assert!(!set.admits(0), "IOPS credit of one tick is spent");
        set.refill(1);
        assert!(set.admits(3) && !set.admits(4));
        assert_eq!(set.steered().unwrap().0, LimiterKind::QueueDepth);
    }
}
