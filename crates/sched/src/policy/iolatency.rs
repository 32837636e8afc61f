//! `iolatency`: Linux's blk-iolatency (block/blk-iolatency.c), the cgroup v2
//! `io.latency` controller. It protects groups with a latency target by
//! shrinking the queue depth of their peers.
//!
//! # Algorithm
//!
//! Each group (our tenant) may have a target, `io.latency target=`. A group
//! with a target measures the latency of its I/O (arrival to completion) in
//! *windows* of clamp(16 x target, 100 ms, 1 s). On a solid-state device a
//! window is *bad* when at least a tenth of its I/Os took longer than the
//! target (any miss at all when it had fewer than 20 I/Os); upstream's
//! rotational rule, a mean over the target, is not modelled.
//!
//! The groups share one *scale cookie*, starting at 1,000,000. The per-I/O
//! path only records; at the first completion after a window's end, the
//! group's window is judged (upstream decides there, not on a timer):
//! - a bad window lowers the cookie by nr_requests/4 and remembers the group
//!   as the one that asked (`scale_grp`) and its target (`scale_lat`), unless
//!   a group with a tighter target asked already;
//! - a good window of the group that asked, with at least 5 samples since the
//!   last decision, raises the cookie by nr_requests/16 (by 1 while the cookie
//!   is more than nr_requests below its start);
//! - either happens at most once per 500 ms (`BLKIOLATENCY_MIN_ADJUST_TIME`);
//!   bad windows in between add up until then.
//!
//! Each group follows the cookie when it next submits: one step per change
//! seen. Down: its depth (unlimited at first, counted from nr_requests) is
//! halved, down to 1; a group already at 1 is *delayed* one step more. Up: a
//! delayed group loses a delay step first, otherwise its depth grows by
//! nr_requests/16, up to nr_requests; the cookie back at its start lifts every
//! limit. A group is exempt from a step down when its own target is at least
//! as tight as `scale_lat`, or when it did 5% or less of the I/O judged since
//! the last decision; a group without a target is never exempt. A timer every
//! second raises the cookie when no group asked (`scale_grp` forgotten after
//! 5 s without a decision).
//!
//! # Constants (upstream's)
//!
//! - window: 16 x target, at least 100 ms, at most 1 s;
//! - SSD rule: bad when missed >= max(total / 10, 1);
//! - scale down nr_requests >> 2 (cookie), halving (depth); scale up
//!   nr_requests >> 4 (both); a cookie never more than 2 x nr_requests below
//!   its start;
//! - 500 ms between decisions, 5 good samples to scale up, 5% of the samples
//!   to be throttled, 1 s timer, 5 s to forget the group that asked.
//!
//! # Where ours differs, and why
//!
//! - Groups are our tenants, flat siblings under one parent (no hierarchy).
//!   Targets are per tenant (`target.<id>=2ms`; a bare number is in
//!   microseconds as in `io.latency`) or the same for all (`target`).
//! - `nr_requests` is the device's slots unless set: upstream uses the
//!   queue's nr_requests (with no elevator, the hardware queue depth).
//! - Delay: upstream charges delay from I/O that the root issued on a
//!   group's behalf (swap, metadata) and sleeps the group's tasks on their way
//!   back to user space, at most 250 ms at a time. We have neither tasks nor
//!   such I/O, so a delayed group admits its next request only
//!   delay steps x `scale_lat` (at most 250 ms) after its previous one.
//! - Depth counts reads and writes from admission to completion, as
//!   upstream's `rq_wait` counts bios; trims and flushes are not limited.
//!   What passed waits for a device slot in arrival order
//!   (`policy/issue.rs`), as requests do under the `none` elevator.
//! - The ordering rules hold across groups: a flush waits for the writes
//!   before it and holds the writes after it, and a read overlapping a queued
//!   write waits for it ([`crate::ordering::Barrier`]).
//! - Times are nanoseconds, not jiffies; there are no per-CPU counters.

use std::collections::{BTreeMap, VecDeque};

use crate::config::{
    parse_duration_in, parse_int, unknown_key, ConfigError, Configurable, PerTenant, Tunable,
};
use crate::ordering::Queued;
use crate::policy::common::{
    base_in_field, Base, CommonConfig, Policy, BAD_LATENCY, STATS_WINDOW, TRIM_MAX_RANGES,
};
use crate::policy::issue::{gate_in_field, Gate};
use crate::policy::{construct, PolicyInfo, Ticker};
use crate::request::{Command, Completion, Op, Request, TenantId};
use crate::scheduler::{DeviceView, WriteLimit};
use crate::units::Nanos;

/// The cookie's resting value: every group unthrottled.
const DEFAULT_SCALE_COOKIE: u64 = 1_000_000;
/// Windows are 16 x target (`lat_val << 4`), within these bounds.
const WINDOW_SHIFT: u32 = 4;
const MIN_WINDOW: Nanos = Nanos::from_millis(100);
const MAX_WINDOW: Nanos = Nanos::from_secs(1);
/// Steps of nr_requests >> 2 down, nr_requests >> 4 up.
const SCALE_DOWN_SHIFT: u32 = 2;
const SCALE_UP_SHIFT: u32 = 4;
/// Decisions are at least this far apart, so jagged loads do not make the
/// depth flap.
const MIN_ADJUST_TIME: Nanos = Nanos::from_millis(500);
/// A good window needs this many samples before it scales up: a few lucky
/// I/Os prove nothing.
const MIN_GOOD_SAMPLES: u64 = 5;
/// A group that did at most this percentage of the I/O judged is spared a
/// step down ("high priority groups are their own worst enemy").
const SPARED_PERCENT: u64 = 5;
/// The parent's timer runs every second; it forgets the group that asked
/// after 5 s without a decision.
const TIMERS_PER_SECOND: u32 = 1;
const FORGET_SCALE_GROUP: Nanos = Nanos::from_secs(5);
/// The longest one delay holds a group (upstream's longest task sleep).
const MAX_DELAY: Nanos = Nanos::from_millis(250);
pub const TUNABLES: &[Tunable] = &[
    Tunable {
        key: "target",
        default: "0",
        help: "latency target of every tenant, us (or with a unit: 2ms); 0 = none",
    },
    Tunable {
        key: "target.<id>",
        default: "the above",
        help: "one tenant's target (its io.latency target=), us or with a unit",
    },
    Tunable {
        key: "nr_requests",
        default: "0",
        help: "the queue's nr_requests, the base of every step; 0 = the device's slots",
    },
    TRIM_MAX_RANGES,
    STATS_WINDOW,
    BAD_LATENCY,
];

pub const INFO: PolicyInfo = PolicyInfo {
    name: "iolatency",
    summary: "Linux blk-iolatency (io.latency): per-tenant latency targets; peers' queue \
              depth halved per missed window, restored by nr_requests/16 per good one",
    tunables: TUNABLES,
    build: |configure| construct(configure, Iolatency::new),
};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IolatencyConfig {
    /// `target`, and `target.<id>` of the tenants that have their own;
    /// zero is none.
    pub target: PerTenant<Nanos>,
    /// Zero: the device's slots.
    pub nr_requests: u32,
    pub common: CommonConfig,
}

impl Configurable for IolatencyConfig {
    fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let us = Nanos::from_micros(1);
        match key {
            "nr_requests" => self.nr_requests = parse_int(key, value, 0, 1 << 20)? as u32,
            _ if self.common.set(key, value)? => {}
            _ if self.target.set(key, "target", "target.<id>", || {
                parse_duration_in(key, value, us)
            })? => {}
            _ => return Err(unknown_key(INFO.name, key, TUNABLES)),
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), ConfigError> {
        Ok(())
    }
}

/// Upstream's window: 16 x target, within [100 ms, 1 s].
pub fn window_of(target: Nanos) -> Nanos {
    Nanos(target.0.saturating_mul(1 << WINDOW_SHIFT)).clamp(MIN_WINDOW, MAX_WINDOW)
}

/// I/Os judged and how many took longer than the target.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct LatencyStat {
    total: u64,
    missed: u64,
}

impl LatencyStat {
    /// The SSD rule: fewer than a tenth missed (and none when under 20).
    fn ok(&self) -> bool {
        self.missed < (self.total / 10).max(1)
    }

    fn add(&mut self, other: LatencyStat) {
        self.total += other.total;
        self.missed += other.missed;
    }
}

/// What the parent knows of its children (upstream's `child_latency_info`).
#[derive(Clone, Debug)]
struct Parent {
    scale_cookie: u64,
    /// Target of the group that asked for the last step down.
    scale_lat: Nanos,
    scale_grp: Option<TenantId>,
    last_scale_event: Nanos,
    /// Samples judged since the last decision, all groups.
    nr_samples: u64,
}

impl Parent {
    fn new() -> Parent {
        Parent {
            scale_cookie: DEFAULT_SCALE_COOKIE,
            scale_lat: Nanos::ZERO,
            scale_grp: None,
            last_scale_event: Nanos::ZERO,
            nr_samples: 0,
        }
    }

    /// Upstream's `scale_cookie_change`.
    fn change_cookie(&mut self, nr_requests: u64, up: bool) {
        let old = self.scale_cookie;
        let below = DEFAULT_SCALE_COOKIE.saturating_sub(old);
        if up {
            let step = (nr_requests >> SCALE_UP_SHIFT).max(1);
            self.scale_cookie = if old + step > DEFAULT_SCALE_COOKIE {
                DEFAULT_SCALE_COOKIE
            } else if below > nr_requests {
                old + 1
            } else {
                old + step
            };
        } else if below <= nr_requests << 1 {
            // Not so deep a hole that it takes hours to climb out of.
            self.scale_cookie = old - (nr_requests >> SCALE_DOWN_SHIFT).max(1);
        }
    }
}

#[derive(Debug)]
struct Group {
    target: Nanos,
    window: Nanos,
    window_start: Nanos,
    /// This window's I/Os, and those judged since the parent's last decision.
    window_stat: LatencyStat,
    cur_stat: LatencyStat,
    /// Samples this group contributed to the parent's count.
    nr_samples: u64,
    /// The cookie this group last followed.
    scale_cookie: u64,
    /// In-flight limit; `u32::MAX` is none.
    max_depth: u32,
    in_flight: u32,
    use_delay: u32,
    /// A delayed group admits nothing before this.
    next_admit: Nanos,
    waiting: VecDeque<Queued>,
}

impl Group {
    fn new(target: Nanos) -> Group {
        Group {
            target,
            window: window_of(target),
            window_start: Nanos::ZERO,
            window_stat: LatencyStat::default(),
            cur_stat: LatencyStat::default(),
            nr_samples: 0,
            scale_cookie: DEFAULT_SCALE_COOKIE,
            max_depth: u32::MAX,
            in_flight: 0,
            use_delay: 0,
            next_admit: Nanos::ZERO,
            waiting: VecDeque::new(),
        }
    }

    /// Upstream's `scale_change`: one step of depth.
    fn scale_depth(&mut self, nr_requests: u32, up: bool) {
        let old = self.max_depth.min(nr_requests);
        if up {
            if old == 1 && self.use_delay > 0 {
                self.use_delay -= 1;
                return;
            }
            if old < nr_requests {
                let step = (nr_requests >> SCALE_UP_SHIFT).max(1);
                self.max_depth = (old + step).min(nr_requests);
            }
        } else {
            self.max_depth = (old >> 1).max(1);
        }
    }

    /// Upstream's `check_scale_change`: follows the parent's cookie one step.
    fn follow(&mut self, parent: &Parent, nr_requests: u32) {
        let cookie = parent.scale_cookie;
        if cookie == self.scale_cookie {
            return;
        }
        let down = cookie < self.scale_cookie;
        self.scale_cookie = cookie;
        if down && self.target > Nanos::ZERO {
            if parent.scale_lat == Nanos::ZERO || self.target <= parent.scale_lat {
                return;
            }
            let spared = (parent.nr_samples * SPARED_PERCENT / 100).max(1);
            if self.nr_samples <= spared {
                return;
            }
        }
        if down && self.max_depth == 1 {
            self.use_delay += 1;
            return;
        }
        if cookie == DEFAULT_SCALE_COOKIE {
            self.use_delay = 0;
            self.max_depth = u32::MAX;
            return;
        }
        self.scale_depth(nr_requests, !down);
    }

    fn may_admit(&self, now: Nanos) -> bool {
        self.in_flight < self.max_depth && now >= self.next_admit
    }

    /// How long a delayed group waits between admissions.
    fn delay(&self, scale_lat: Nanos) -> Nanos {
        Nanos(scale_lat.0.saturating_mul(u64::from(self.use_delay))).min(MAX_DELAY)
    }
}

#[derive(Debug)]
pub struct Iolatency {
    config: IolatencyConfig,
    groups: BTreeMap<TenantId, Group>,
    parent: Parent,
    gate: Gate,
    /// The parent's one-second timer.
    timer: Ticker,
    base: Base,
}

impl Iolatency {
    pub fn new(config: IolatencyConfig) -> Iolatency {
        Iolatency {
            groups: BTreeMap::new(),
            parent: Parent::new(),
            gate: Gate::new(config.common.trim_max_ranges),
            timer: Ticker::per_second(TIMERS_PER_SECOND),
            base: Base::new(&config.common),
            config,
        }
    }

    /// A tenant's depth limit now (`u32::MAX`: none).
    pub fn max_depth(&self, tenant: TenantId) -> u32 {
        self.groups.get(&tenant).map_or(u32::MAX, |g| g.max_depth)
    }

    fn nr_requests(&self) -> u32 {
        match self.config.nr_requests {
            0 => self.base.stats.device_slots.max(1),
            n => n,
        }
    }

    fn group(&mut self, tenant: TenantId) -> &mut Group {
        let target = *self.config.target.get(tenant);
        self.groups
            .entry(tenant)
            .or_insert_with(|| Group::new(target))
    }

    // ---- timer path ----

    /// Upstream's `blkiolatency_timer_fn`: climbs back when nobody asks.
    fn timer_fn(&mut self, now: Nanos) {
        let nr_requests = u64::from(self.nr_requests());
        let parent = &mut self.parent;
        if parent.scale_cookie >= DEFAULT_SCALE_COOKIE || parent.last_scale_event >= now {
            return;
        }
        if parent.scale_grp.is_none() {
            parent.change_cookie(nr_requests, true);
        } else if now - parent.last_scale_event >= FORGET_SCALE_GROUP {
            parent.scale_grp = None;
        }
    }

    /// Upstream's `iolatency_check_latencies`, at the end of a window of
    /// `tenant`.
    fn check_latencies(&mut self, tenant: TenantId, now: Nanos) {
        let nr_requests = u64::from(self.nr_requests());
        let parent = &mut self.parent;
        let group = self.groups.get_mut(&tenant).expect("group exists");
        let window = std::mem::take(&mut group.window_stat);
        if window.ok() && parent.scale_cookie == DEFAULT_SCALE_COOKIE {
            return;
        }
        group.cur_stat.add(window);
        parent.nr_samples = parent.nr_samples - group.nr_samples + group.cur_stat.total;
        group.nr_samples = group.cur_stat.total;
        if parent.last_scale_event >= now || now - parent.last_scale_event < MIN_ADJUST_TIME {
            return;
        }
        if group.cur_stat.ok() && window.ok() {
            if group.cur_stat.total < MIN_GOOD_SAMPLES {
                return;
            }
            if parent.scale_grp == Some(tenant) {
                parent.last_scale_event = now;
                parent.change_cookie(nr_requests, true);
            }
        } else if parent.scale_lat == Nanos::ZERO || parent.scale_lat >= group.target {
            parent.last_scale_event = now;
            if parent.scale_grp.is_none() || parent.scale_lat > group.target {
                parent.scale_lat = group.target;
                parent.scale_grp = Some(tenant);
            }
            parent.change_cookie(nr_requests, false);
        }
        group.cur_stat = LatencyStat::default();
    }

    // ---- admission ----

    /// A read, write or trim arrives at its group: trims pass, the rest wait
    /// in the group's FIFO. (Reads come here once no unadmitted write
    /// overlaps them.)
    fn arrive(&mut self, entry: Queued) {
        if entry.request.op == Op::Trim {
            return self.gate.push(entry.request, Nanos::ZERO);
        }
        self.group(entry.request.tenant).waiting.push_back(entry);
    }

    /// Lets through whatever may go now: ready held reads, a due flush, and
    /// each group's requests while it is under its depth.
    fn pump(&mut self, now: Nanos) {
        let nr_requests = self.nr_requests();
        loop {
            let mut moved = 0;
            for read in self.gate.ready_reads() {
                self.arrive(read);
                moved += 1;
            }
            while let Some(write) = self.gate.released_write(now) {
                self.arrive(write);
                moved += 1;
            }
            for group in self.groups.values_mut() {
                if group.waiting.is_empty() {
                    continue;
                }
                group.follow(&self.parent, nr_requests);
                while group.may_admit(now) {
                    let Some(entry) = group.waiting.pop_front() else {
                        break;
                    };
                    group.in_flight += 1;
                    if group.use_delay > 0 {
                        group.next_admit = now + group.delay(self.parent.scale_lat);
                    }
                    self.gate.pass(entry, now);
                    moved += 1;
                }
            }
            if moved == 0 {
                break;
            }
        }
        let held = self.groups.values().any(|g| !g.waiting.is_empty());
        for op in [Op::Read, Op::Write] {
            self.base.stats.class_mut(op).limited = held;
        }
    }

    /// When a delayed group with work may admit again.
    fn next_admission(&self) -> Option<Nanos> {
        self.groups
            .values()
            .filter(|g| !g.waiting.is_empty() && g.in_flight < g.max_depth)
            .map(|g| g.next_admit)
            .min()
    }
}

impl Policy for Iolatency {
    const INFO: PolicyInfo = INFO;

    base_in_field!();

    fn report_notes(&self) -> Vec<String> {
        let seen = |t: TenantId| self.groups.contains_key(&t);
        Vec::from_iter(
            self.config
                .target
                .unused_note(INFO.name, "target.<id>", seen),
        )
    }

    fn accept(&mut self, request: Request, _now: Nanos) {
        if let Some(ready) = self.gate.arrive(request) {
            self.arrive(ready);
        }
    }

    gate_in_field!();

    fn prepare(&mut self, now: Nanos, _device: DeviceView) {
        self.pump(now);
    }

    fn next_command(&mut self, now: Nanos) -> Option<Command> {
        self.gate.next_command(now, &self.base.stats)
    }

    /// Records only; a group's window is judged at its first completion past
    /// the window's end, as upstream's `blkcg_iolatency_done_bio` does.
    fn completed(&mut self, completion: &Completion, now: Nanos) {
        if matches!(completion.op, Op::Read | Op::Write) {
            let tenant = completion.tenant;
            let group = self.group(tenant);
            group.in_flight = group.in_flight.saturating_sub(1);
            if group.target > Nanos::ZERO {
                group.window_stat.total += 1;
                group.window_stat.missed += u64::from(now - completion.submitted > group.target);
                if now > group.window_start && now - group.window_start >= group.window {
                    group.window_start = now;
                    self.check_latencies(tenant, now);
                }
            }
        }
    }

    /// The parent's timer and the next admission a group waits for.
    fn own_timer(&self) -> Option<Nanos> {
        [Some(self.timer.next()), self.next_admission()]
            .into_iter()
            .flatten()
            .min()
    }

    fn ticked(&mut self, now: Nanos, _ticks: u64) {
        if self.timer.advance(now) > 0 {
            self.timer_fn(now);
        }
    }

    fn oldest(&self, op: Op) -> Option<Nanos> {
        let grouped = self
            .groups
            .values()
            .flat_map(|g| g.waiting.iter().map(|q| &q.request));
        self.gate.oldest(op, grouped)
    }

    /// The tightest depth any tenant is held to.
    fn limit_on_writes(&self) -> Option<WriteLimit> {
        let depth = self.groups.values().map(|g| g.max_depth).min()?;
        (depth != u32::MAX).then_some(WriteLimit {
            kind: "queue_depth",
            value: f64::from(depth),
            unit: "in flight per tenant",
        })
    }
}

#[cfg(test)]
mod tests;
