//! `iocost`: Linux's IO cost controller (block/blk-iocost.c), the cgroup v2
//! `io.cost.model`, `io.cost.qos` and `io.weight`.
//!
//! # Algorithm
//!
//! A linear *cost model* prices every read and write in device time: a base
//! cost, sequential or random (more than 16 MiB away from where the tenant's
//! last request ended), plus a cost per 4 KiB page. The coefficients come
//! from the device's sequential bandwidth and its sequential and random 4 KiB
//! IOPS, per direction (`rbps`, `rseqiops`, `rrandiops`, `wbps`, ...):
//! page = 1 s / (bps / 4096), base = 1 s / iops - page.
//!
//! *Device vtime* runs at `vrate` times the wall clock. Each active tenant
//! (one that issued in this or the last period) has a share of it, its weight
//! over the active weights (hweight), and its own vtime cursor: a request
//! costs its model cost divided by the hweight, and may go when the tenant's
//! vtime plus that cost does not pass the device vtime. Otherwise it waits,
//! with everything the tenant queued after it, until vtime has run far
//! enough. A tenant that becomes active starts half a period of budget
//! behind device vtime, and unused budget beyond that is thrown away at each
//! period, so nobody banks capacity.
//!
//! Every *period* the controller looks at the completions of the period: the
//! share of reads that took longer than `rlat` (beyond their size cost), of
//! writes longer than `wlat`, and how long admitted requests waited for the
//! device (`rq_wait`). If more than (100 - `rpct`) % of reads or
//! (100 - `wpct`) % of writes missed, or requests waited for the device more
//! than 5 % of the period, the device is *busy*: `busy_level` rises and vrate
//! drops. If all are well within bounds (under 75 % of each threshold) while
//! some tenant waits for budget, `busy_level` falls and vrate rises. Steps
//! grow with `|busy_level|`: 0 % for the first 3 periods, then 1 %, 2 %, 4 %,
//! 8 %, and 16 % from the 52nd period on. vrate stays within [`min`, `max`].
//!
//! # Constants (upstream's)
//!
//! - model: upstream's built-in SSD parameters (`AUTOP_SSD_DFL`): rbps
//!   488636629, rseqiops 8932, rrandiops 8518, wbps 427891549, wseqiops
//!   28755, wrandiops 21940;
//! - QoS: rlat = wlat = 25 ms (the SSD default), min 1 %, max 10000 %;
//! - period: 2x the larger latency target at p90 and above, up to 10x at p50
//!   (`max((100 - pct) / 5, 2)` times), within [1 ms, 1 s]: 50 ms here;
//! - margins: budget kept after a period 50 % of a period; 4 KiB pages;
//!   random beyond 4096 pages (16 MiB); busy when rq_wait > 5 %; "well
//!   within" means under 75 % of a threshold; weights 1..10000, default 100.
//!
//! # Where ours differs, and why
//!
//! - `rpct` and `wpct` default to 95, not 0: upstream's built-in SSD
//!   parameters leave latency QoS off and steer by rq_wait alone, and the
//!   point of this policy here is vrate steered by latency. Set them to 0 for
//!   upstream's behaviour.
//! - No weight donation (upstream lowers the weight of tenants that do not use
//!   their share, for work conservation): a tenant that goes idle for a whole
//!   period stops counting instead. No debt or issuer delay (those are for
//!   I/O that must not wait: swap, metadata), no vtime error compensation, no
//!   "lagging" detection (we cannot tell which tenant a completion belongs
//!   to), and no automatic switch between parameter sets.
//! - Tenants are flat cgroups; tenant 0 is throttled like any other
//!   (upstream never throttles the root cgroup).
//! - A completion's latency is measured from dispatch (upstream: from request
//!   allocation, which also counts the wait for a tag); the wait for a device
//!   slot is counted apart, as rq_wait.
//! - Trims and flushes cost nothing (as upstream: only reads and writes are
//!   priced). What passed waits for a device slot in arrival order
//!   (`policy/issue.rs`), trims coalesced there. A waiting flush holds
//!   the writes queued after it and goes once the earlier writes have
//!   completed, across tenants (a flush is device-wide); a read overlapping a
//!   waiting write waits for it ([`crate::ordering::Barrier`]).

use std::collections::{BTreeMap, VecDeque};

use crate::config::{
    parse_duration_in, parse_int, unknown_key, ConfigError, Configurable, PerTenant, Tunable,
};
use crate::ordering::Queued;
use crate::policy::common::{
    base_in_field, Base, CommonConfig, Policy, BAD_LATENCY, STATS_WINDOW, TRIM_MAX_RANGES,
};
use crate::policy::issue::{gate_in_field, Gate};
use crate::policy::{class_pressure, construct, PolicyInfo};
use crate::request::{Command, Completion, Op, Request, TenantId};
use crate::scheduler::{ClassPressure, DeviceView, WriteLimit};
use crate::units::{Bytes, Nanos};

const MILLION: u64 = 1_000_000;
const SECOND_NS: u64 = 1_000_000_000;
/// Sizes are counted in 4 KiB pages.
const PAGE_SIZE: u64 = 4096;
/// A request further than this from the tenant's last one is random.
const RANDIO_PAGES: u64 = 4096;
/// The period is a multiple of the latency target, within these bounds.
const MIN_PERIOD: Nanos = Nanos::from_millis(1);
const MAX_PERIOD: Nanos = Nanos::from_secs(1);
/// Budget a tenant starts with and may keep, in percent of a period.
const MARGIN_TARGET_PCT: u64 = 50;
/// Requests waiting for the device longer than this share of the period mean
/// the device is saturated.
const RQ_WAIT_BUSY_PCT: u64 = 5;
/// "Well within" a threshold: under this percentage of it.
const UNBUSY_THR_PCT: u64 = 75;
/// vrate moves at most this much per period towards its bounds.
const VRATE_CLAMP_ADJ_PCT: u64 = 4;
/// vrate step in percent, by |busy_level|: the longer the trouble lasts, the
/// larger the step.
const VRATE_ADJ_PCT: [u64; 53] = [
    0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 4, 4, 4, 4, 4, 4, 4, 4, 8, 8, 8, 8, 8, 8, 8, 8, 16,
];
pub const TUNABLES: &[Tunable] = &[
    Tunable {
        key: "rbps",
        default: "488636629",
        help: "model: sequential read bytes per second",
    },
    Tunable {
        key: "rseqiops",
        default: "8932",
        help: "model: sequential 4 KiB reads per second",
    },
    Tunable {
        key: "rrandiops",
        default: "8518",
        help: "model: random 4 KiB reads per second",
    },
    Tunable {
        key: "wbps",
        default: "427891549",
        help: "model: sequential write bytes per second",
    },
    Tunable {
        key: "wseqiops",
        default: "28755",
        help: "model: sequential 4 KiB writes per second",
    },
    Tunable {
        key: "wrandiops",
        default: "21940",
        help: "model: random 4 KiB writes per second",
    },
    Tunable {
        key: "rpct",
        default: "95",
        help: "QoS: percentile of reads that must meet rlat (0 = no read latency QoS)",
    },
    Tunable {
        key: "rlat",
        default: "25000",
        help: "QoS: read latency target, us (or with a unit: 25ms)",
    },
    Tunable {
        key: "wpct",
        default: "95",
        help: "QoS: percentile of writes that must meet wlat (0 = no write latency QoS)",
    },
    Tunable {
        key: "wlat",
        default: "25000",
        help: "QoS: write latency target, us (or with a unit: 25ms)",
    },
    Tunable {
        key: "min",
        default: "1",
        help: "QoS: lowest vrate, percent (1 to 10000, two decimals)",
    },
    Tunable {
        key: "max",
        default: "10000",
        help: "QoS: highest vrate, percent (1 to 10000, two decimals)",
    },
    Tunable {
        key: "weight",
        default: "100",
        help: "io.weight of every tenant (1 to 10000)",
    },
    Tunable {
        key: "tenant.<id>.weight",
        default: "weight",
        help: "io.weight of one tenant",
    },
    TRIM_MAX_RANGES,
    STATS_WINDOW,
    BAD_LATENCY,
];

pub const INFO: PolicyInfo = PolicyInfo {
    name: "iocost",
    summary: "Linux blk-iocost: linear cost model, per-tenant vtime budgets by weight, \
              vrate steered by the share of completions missing rlat/wlat",
    tunables: TUNABLES,
    build: |configure| construct(configure, Iocost::new),
};

/// `io.cost.model`: per direction (0 read, 1 write) bps, seqiops, randiops.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CostModel {
    pub bps: [u64; 2],
    pub seqiops: [u64; 2],
    pub randiops: [u64; 2],
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IocostConfig {
    pub model: CostModel,
    /// Percentiles in parts per million (95 % is 950000), per direction.
    pub pct_ppm: [u64; 2],
    pub lat: [Nanos; 2],
    /// vrate bounds in parts per million of the wall clock (100 % is 1000000).
    pub vrate_min_ppm: u64,
    pub vrate_max_ppm: u64,
    /// `weight`, and `tenant.<id>.weight` of the tenants that have their own.
    pub weight: PerTenant<u32>,
    pub common: CommonConfig,
}

impl Default for IocostConfig {
    fn default() -> Self {
        IocostConfig {
            model: CostModel {
                bps: [488_636_629, 427_891_549],
                seqiops: [8932, 28_755],
                randiops: [8518, 21_940],
            },
            pct_ppm: [950_000; 2],
            lat: [Nanos::from_millis(25); 2],
            vrate_min_ppm: 10_000,
            vrate_max_ppm: 100_000_000,
            weight: PerTenant::new(100),
            common: CommonConfig::default(),
        }
    }
}

/// A percentage with up to two decimals, as parts per million.
fn parse_pct_ppm(key: &str, value: &str, min: f64, max: f64) -> Result<u64, ConfigError> {
    let bad = || ConfigError::BadValue {
        key: key.to_string(),
        value: value.to_string(),
        expected: format!("a percentage from {min} to {max}, such as 95 or 99.9"),
    };
    let pct: f64 = value.parse().map_err(|_| bad())?;
    if !(min..=max).contains(&pct) {
        return Err(bad());
    }
    Ok((pct * 100.0).round() as u64 * 100)
}

impl Configurable for IocostConfig {
    fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        const RATE_MAX: u64 = 1 << 40;
        let us = Nanos::from_micros(1);
        let m = &mut self.model;
        match key {
            "rbps" => m.bps[0] = parse_int(key, value, 1, RATE_MAX)?,
            "wbps" => m.bps[1] = parse_int(key, value, 1, RATE_MAX)?,
            "rseqiops" => m.seqiops[0] = parse_int(key, value, 1, RATE_MAX)?,
            "wseqiops" => m.seqiops[1] = parse_int(key, value, 1, RATE_MAX)?,
            "rrandiops" => m.randiops[0] = parse_int(key, value, 1, RATE_MAX)?,
            "wrandiops" => m.randiops[1] = parse_int(key, value, 1, RATE_MAX)?,
            "rpct" => self.pct_ppm[0] = parse_pct_ppm(key, value, 0.0, 100.0)?,
            "wpct" => self.pct_ppm[1] = parse_pct_ppm(key, value, 0.0, 100.0)?,
            "rlat" => self.lat[0] = parse_duration_in(key, value, us)?,
            "wlat" => self.lat[1] = parse_duration_in(key, value, us)?,
            "min" => self.vrate_min_ppm = parse_pct_ppm(key, value, 1.0, 10_000.0)?,
            "max" => self.vrate_max_ppm = parse_pct_ppm(key, value, 1.0, 10_000.0)?,
            _ if self.common.set(key, value)? => {}
            _ if self.weight.set(key, "weight", "tenant.<id>.weight", || {
                Ok(parse_int(key, value, 1, 10_000)? as u32)
            })? => {}
            _ => return Err(unknown_key(INFO.name, key, TUNABLES)),
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if self.vrate_min_ppm > self.vrate_max_ppm {
            return Err(ConfigError::Conflict(
                "iocost min must not exceed max".into(),
            ));
        }
        Ok(())
    }
}

/// Linear model coefficients in device nanoseconds, per direction.
#[derive(Copy, Clone, Debug)]
struct Coefs {
    page: [u64; 2],
    seqio: [u64; 2],
    randio: [u64; 2],
}

impl Coefs {
    /// Upstream's `calc_lcoefs`.
    fn new(model: &CostModel) -> Coefs {
        let mut c = Coefs {
            page: [0; 2],
            seqio: [0; 2],
            randio: [0; 2],
        };
        for dir in 0..2 {
            c.page[dir] = SECOND_NS.div_ceil(model.bps[dir].div_ceil(PAGE_SIZE));
            c.seqio[dir] = SECOND_NS
                .div_ceil(model.seqiops[dir])
                .saturating_sub(c.page[dir]);
            c.randio[dir] = SECOND_NS
                .div_ceil(model.randiops[dir])
                .saturating_sub(c.page[dir]);
        }
        c
    }

    fn pages(bytes: Bytes) -> u64 {
        (bytes.0 / PAGE_SIZE).max(1)
    }

    /// Device time a request costs, given where its tenant's last one ended.
    fn cost(&self, request: &Request, cursor: u64) -> u64 {
        let dir = match request.op {
            Op::Read => 0,
            Op::Write => 1,
            _ => return 0,
        };
        let seek_pages = if cursor == 0 {
            0
        } else {
            request.offset.0.abs_diff(cursor) / PAGE_SIZE
        };
        let base = if seek_pages > RANDIO_PAGES {
            self.randio[dir]
        } else {
            self.seqio[dir]
        };
        base + Self::pages(request.len) * self.page[dir]
    }

    /// The size part alone, which a completion's latency is allowed on top of
    /// its target.
    fn size_cost(&self, op: Op, bytes: Bytes) -> Nanos {
        match op {
            Op::Read => Nanos(Self::pages(bytes) * self.page[0]),
            Op::Write => Nanos(Self::pages(bytes) * self.page[1]),
            _ => Nanos::ZERO,
        }
    }
}

#[derive(Debug)]
struct Tenant {
    weight: u32,
    active: bool,
    /// The period it last issued in.
    active_period: u64,
    /// Its vtime cursor, device nanoseconds.
    vtime: u64,
    /// Where its last request ended, for sequential/random.
    cursor: u64,
    /// Requests waiting for budget, in order, with their model cost.
    queue: VecDeque<(Queued, u64)>,
}

#[derive(Debug)]
pub struct Iocost {
    config: IocostConfig,
    coefs: Coefs,
    period: Nanos,
    tenants: BTreeMap<TenantId, Tenant>,
    /// Sum of the weights of active tenants.
    active_weight: u64,
    vrate_ppm: u64,
    busy_level: i32,
    running: bool,
    cur_period: u64,
    period_at: Nanos,
    period_at_vtime: u64,
    /// Completions that met and missed their target this period, per
    /// direction, and the time admitted requests waited for the device.
    met: [u64; 2],
    missed: [u64; 2],
    rq_wait: Nanos,
    /// Reads and writes waiting for budget, all tenants.
    waiting: [u32; 2],
    gate: Gate,
    base: Base,
}

impl Iocost {
    pub fn new(config: IocostConfig) -> Iocost {
        let period = Self::period_of(&config);
        Iocost {
            coefs: Coefs::new(&config.model),
            period,
            tenants: BTreeMap::new(),
            active_weight: 0,
            vrate_ppm: MILLION,
            busy_level: 0,
            running: false,
            cur_period: 0,
            period_at: Nanos::ZERO,
            period_at_vtime: 0,
            met: [0; 2],
            missed: [0; 2],
            rq_wait: Nanos::ZERO,
            waiting: [0; 2],
            gate: Gate::new(config.common.trim_max_ranges),
            base: Base::new(&config.common),
            config,
        }
    }

    /// Upstream's `ioc_refresh_period_us`.
    fn period_of(config: &IocostConfig) -> Nanos {
        let dir = if config.lat[0] >= config.lat[1] { 0 } else { 1 };
        let ppm = config.pct_ppm[dir];
        let multiple = if ppm > 0 {
            ((MILLION - ppm) / 50_000).max(2)
        } else {
            2
        };
        let period = Nanos(config.lat[dir].0.saturating_mul(multiple));
        period.clamp(MIN_PERIOD, MAX_PERIOD)
    }

    /// Device vtime runs at this percentage of the wall clock now.
    pub fn vrate_pct(&self) -> f64 {
        self.vrate_ppm as f64 / 1e4
    }

    /// The controller's saturation history: > 0 busy, < 0 short of budget.
    pub fn busy_level(&self) -> i32 {
        self.busy_level
    }

    pub fn period(&self) -> Nanos {
        self.period
    }

    fn vnow(&self, now: Nanos) -> u64 {
        let elapsed = u128::from((now - self.period_at).0);
        let advance = elapsed * u128::from(self.vrate_ppm) / u128::from(MILLION);
        self.period_at_vtime
            .saturating_add(advance.min(u128::from(u64::MAX)) as u64)
    }

    /// A margin in vtime: `pct` percent of a period at the current vrate.
    fn margin(&self, pct: u64) -> u64 {
        let ns = u128::from(self.period.0) * u128::from(pct) / 100;
        (ns * u128::from(self.vrate_ppm) / u128::from(MILLION)) as u64
    }

    /// A cost scaled by the tenant's share of the active weight (rounded up).
    fn relative_cost(&self, abs_cost: u64, weight: u32) -> u64 {
        let total = u128::from(self.active_weight.max(u64::from(weight)));
        (u128::from(abs_cost) * total).div_ceil(u128::from(weight)) as u64
    }

    fn activate(&mut self, tenant: TenantId, now: Nanos) {
        if !self.running {
            self.running = true;
            self.period_at_vtime = self.vnow(now);
            self.period_at = now;
        }
        let vtarget = self
            .vnow(now)
            .saturating_sub(self.margin(MARGIN_TARGET_PCT));
        let cur_period = self.cur_period;
        let weight = *self.config.weight.get(tenant);
        let t = self.tenants.entry(tenant).or_insert_with(|| Tenant {
            weight,
            active: false,
            active_period: cur_period,
            vtime: 0,
            cursor: 0,
            queue: VecDeque::new(),
        });
        t.active_period = cur_period;
        if !t.active {
            t.active = true;
            t.vtime = vtarget;
            self.active_weight += u64::from(t.weight);
        }
    }

    /// A read or write of a tenant arrives: it goes if nothing of the tenant
    /// waits and it fits the budget, otherwise it waits.
    fn throttle(&mut self, entry: Queued, now: Nanos) {
        let tenant = entry.request.tenant;
        self.activate(tenant, now);
        let t = &self.tenants[&tenant];
        let abs_cost = self.coefs.cost(&entry.request, t.cursor);
        let t = self.tenants.get_mut(&tenant).expect("activated");
        t.cursor = entry.request.end();
        self.waiting[usize::from(entry.request.op != Op::Read)] += 1;
        t.queue.push_back((entry, abs_cost));
        self.kick(tenant, now);
    }

    /// Lets a tenant's waiting requests go, in order, while the budget lasts.
    fn kick(&mut self, tenant: TenantId, now: Nanos) {
        let vnow = self.vnow(now);
        loop {
            let t = &self.tenants[&tenant];
            let Some((_, abs_cost)) = t.queue.front() else {
                return;
            };
            let cost = self.relative_cost(*abs_cost, t.weight);
            if t.vtime.saturating_add(cost) > vnow {
                return;
            }
            let t = self.tenants.get_mut(&tenant).expect("exists");
            t.vtime += cost;
            t.active_period = self.cur_period;
            let (entry, _) = t.queue.pop_front().expect("head exists");
            self.waiting[usize::from(entry.request.op != Op::Read)] -= 1;
            self.gate.pass(entry, now);
        }
    }

    /// Held reads whose writes have passed, a flush whose writes have, and
    /// every tenant's budget.
    fn pump(&mut self, now: Nanos) {
        for read in self.gate.ready_reads() {
            self.throttle(read, now);
        }
        while let Some(write) = self.gate.released_write(now) {
            self.throttle(write, now);
        }
        let tenants: Vec<TenantId> = self.tenants.keys().copied().collect();
        for tenant in tenants {
            self.kick(tenant, now);
        }
        for (op, waiting) in [(Op::Read, self.waiting[0]), (Op::Write, self.waiting[1])] {
            if waiting > 0 {
                self.base.stats.class_mut(op).limited = true;
            }
        }
    }

    /// When device vtime reaches `vtime` at the current rate.
    fn when_vtime(&self, vtime: u64) -> Nanos {
        let ahead = vtime.saturating_sub(self.period_at_vtime);
        let wall = (u128::from(ahead) * u128::from(MILLION)).div_ceil(u128::from(self.vrate_ppm));
        self.period_at + Nanos(wall.min(u128::from(u64::MAX)) as u64)
    }

    /// When a tenant's first waiting request fits its budget.
    fn wake_time(&self, t: &Tenant) -> Option<Nanos> {
        let (_, abs_cost) = t.queue.front()?;
        Some(
            self.when_vtime(
                t.vtime
                    .saturating_add(self.relative_cost(*abs_cost, t.weight)),
            ),
        )
    }

    /// Upstream's `ioc_timer_fn`: judge the period, steer vrate, start the next.
    fn period_fn(&mut self, now: Nanos) {
        let vnow = self.vnow(now);
        let missed_ppm: [u64; 2] = std::array::from_fn(|dir| {
            let total = self.met[dir] + self.missed[dir];
            if total == 0 {
                0
            } else {
                (self.missed[dir] * MILLION).div_ceil(total)
            }
        });
        let rq_wait_pct = self.rq_wait.0.saturating_mul(100) / self.period.0;
        self.met = [0; 2];
        self.missed = [0; 2];
        self.rq_wait = Nanos::ZERO;

        // Deactivate idle tenants; throw away budget beyond the target.
        let target = self.margin(MARGIN_TARGET_PCT);
        let mut shortages = 0;
        for t in self.tenants.values_mut().filter(|t| t.active) {
            if !t.queue.is_empty() {
                shortages += 1;
            } else if t.active_period != self.cur_period {
                t.active = false;
                self.active_weight -= u64::from(t.weight);
            } else if vnow.saturating_sub(t.vtime) > target {
                t.vtime = vnow - target;
            }
        }

        let thresholds = self.config.pct_ppm.map(|ppm| MILLION - ppm);
        let over = rq_wait_pct > RQ_WAIT_BUSY_PCT
            || missed_ppm[0] > thresholds[0]
            || missed_ppm[1] > thresholds[1];
        let well_within = rq_wait_pct <= RQ_WAIT_BUSY_PCT * UNBUSY_THR_PCT / 100
            && missed_ppm[0] <= thresholds[0] * UNBUSY_THR_PCT / 100
            && missed_ppm[1] <= thresholds[1] * UNBUSY_THR_PCT / 100;
        if over {
            self.busy_level = self.busy_level.max(0) + 1;
        } else if well_within && shortages > 0 {
            self.busy_level = self.busy_level.min(0) - 1;
        } else {
            self.busy_level = 0;
        }
        self.busy_level = self.busy_level.clamp(-1000, 1000);
        self.adjust_vrate();

        // The next period starts at this vtime, at the new rate.
        self.cur_period += 1;
        self.period_at = now;
        self.period_at_vtime = vnow;
        if self.active_weight == 0 {
            self.running = false;
            self.busy_level = 0;
        }
    }

    /// Upstream's `ioc_adjust_base_vrate`.
    fn adjust_vrate(&mut self) {
        if self.busy_level == 0 {
            return;
        }
        let (min, max) = (self.config.vrate_min_ppm, self.config.vrate_max_ppm);
        let vrate = self.vrate_ppm;
        self.vrate_ppm = if vrate < min {
            (vrate * (100 + VRATE_CLAMP_ADJ_PCT) / 100).min(min)
        } else if vrate > max {
            (vrate * (100 - VRATE_CLAMP_ADJ_PCT) / 100).max(max)
        } else {
            let step = (self.busy_level.unsigned_abs() as usize).min(VRATE_ADJ_PCT.len() - 1);
            let adj = VRATE_ADJ_PCT[step];
            let pct = if self.busy_level > 0 {
                100 - adj
            } else {
                100 + adj
            };
            (vrate * pct).div_ceil(100).clamp(min, max)
        };
    }

    /// The longest any tenant's waiting request of `op` waits for budget.
    fn budget_wait(&self, op: Op, now: Nanos) -> Nanos {
        self.tenants
            .values()
            .filter(|t| t.queue.iter().any(|(q, _)| q.request.op == op))
            .map(|t| {
                let all: u64 = t
                    .queue
                    .iter()
                    .map(|(_, c)| self.relative_cost(*c, t.weight))
                    .sum();
                self.when_vtime(t.vtime.saturating_add(all)) - now
            })
            .max()
            .unwrap_or(Nanos::ZERO)
    }
}

impl Policy for Iocost {
    const INFO: PolicyInfo = INFO;

    base_in_field!();

    fn report_notes(&self) -> Vec<String> {
        let seen = |t: TenantId| self.tenants.contains_key(&t);
        Vec::from_iter((self.config.weight).unused_note(INFO.name, "tenant.<id>.weight", seen))
    }

    fn accept(&mut self, request: Request, now: Nanos) {
        if request.op == Op::Trim {
            // Trims cost nothing: straight on.
            self.gate.push(request, now);
        } else if let Some(ready) = self.gate.arrive(request) {
            self.throttle(ready, now);
        }
    }

    gate_in_field!();

    fn prepare(&mut self, now: Nanos, _device: DeviceView) {
        self.pump(now);
    }

    fn next_command(&mut self, now: Nanos) -> Option<Command> {
        let (command, waited) = self.gate.next_command_waited(now, &self.base.stats)?;
        if matches!(command.op, Op::Read | Op::Write) {
            self.rq_wait += waited;
        }
        Some(command)
    }

    fn completed(&mut self, completion: &Completion, now: Nanos) {
        let dir = match completion.op {
            Op::Read => 0,
            Op::Write => 1,
            _ => return,
        };
        let latency = now - completion.dispatched;
        let size = self.coefs.size_cost(completion.op, completion.bytes);
        if latency <= size || latency - size <= self.config.lat[dir] {
            self.met[dir] += 1;
        } else {
            self.missed[dir] += 1;
        }
    }

    fn own_timer(&self) -> Option<Nanos> {
        let period_end = self.running.then(|| self.period_at + self.period);
        let wakes = self.tenants.values().filter_map(|t| self.wake_time(t));
        period_end.into_iter().chain(wakes).min()
    }

    fn ticked(&mut self, now: Nanos, _ticks: u64) {
        if self.running && now >= self.period_at + self.period {
            self.period_fn(now);
        }
    }

    fn oldest(&self, op: Op) -> Option<Nanos> {
        let queued = self
            .tenants
            .values()
            .flat_map(|t| t.queue.iter().map(|(q, _)| &q.request));
        self.gate.oldest(op, queued)
    }

    fn class_pressure(&self, op: Op, now: Nanos) -> ClassPressure {
        class_pressure(&self.base.stats, op, None, self.oldest(op), now)
            .held_for(self.budget_wait(op, now))
    }

    /// vrate limits writes and reads alike: the share of the cost model's
    /// device time handed out.
    fn limit_on_writes(&self) -> Option<WriteLimit> {
        Some(WriteLimit {
            kind: "vrate",
            value: self.vrate_pct(),
            unit: "%",
        })
    }
}

#[cfg(test)]
mod tests;
