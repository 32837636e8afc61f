//! `bfq`: Linux's Budget Fair Queueing scheduler (block/bfq-iosched.c,
//! block/bfq-wf2q.c). Proportional shares of the device by weight, with
//! budgets counted in sectors rather than time slices.
//!
//! # Algorithm
//!
//! Each tenant has a *sync* queue (its reads) and an *async* queue (its
//! writes), each with a weight. One queue at a time is *in service*: it
//! dispatches (as many requests as the device takes) until it has used its
//! *budget* of sectors, runs empty, or overruns its time (`timeout_sync`);
//! then it *expires* and B-WF2Q+ picks the next one.
//!
//! - **B-WF2Q+.** Every busy queue has a virtual start S and finish
//!   F = S + budget / weight; the virtual time V advances by
//!   sectors served / sum of busy weights. The next queue is the *eligible*
//!   one (S <= V) with the smallest F (V jumps to the smallest S when none
//!   is eligible). A queue that expires is charged what it used,
//!   F = S + service / weight; if still busy it starts again at S = F. A queue
//!   becoming busy starts at S = max(V, F): one that left early keeps its
//!   place, none can bank time.
//! - **Time charge** (`bfq_bfqq_charge_time`). Budgets count sectors, but a
//!   queue that holds the device long for few sectors pays for the time: on
//!   expiry, a queue not raised that was *slow* (a sync queue that served
//!   under `max_budget` / 2 in a slot over 20 ms, or a seeky one in a slot
//!   under 1 ms) or that timed out with a third of its budget left is
//!   charged `max_budget` x slot / `timeout_sync` (slot at most
//!   `timeout_sync`; under 1 ms, 2 ms) if that is more than it used. The
//!   slot runs from its start to the expiry, or to the start of the idling
//!   that ended it. Async queues are never slow, and a timed-out one is
//!   charged only what it used (upstream measures no slot for them).
//! - **Budget feedback** (sync queues, not weight-raised), on expiry:
//!   ran empty and nothing to wait for: next budget = what it used (at least
//!   min_budget = max_budget / 32); idled in vain: budget - 4 x min_budget
//!   (or min_budget), but x2 if requests were still in flight; timed out: x2;
//!   used it all: x4; never above `max_budget`. Async queues always get
//!   `max_budget`, weight-raised ones 2 x min_budget. A new queue starts at
//!   2/3 of `max_budget`.
//! - **Idling.** When the in-service sync queue runs empty, BFQ may hold the
//!   device for it (`slice_idle`) so that its next request, about to come,
//!   keeps the queue's share. It idles when (`bfq_better_to_idle`):
//!   `slice_idle` > 0 and the queue is sync, and either
//!   - idling boosts throughput: on flash only without command queueing
//!     (device slots <= 3, upstream's `hw_tag` off), for a queue that is not
//!     seeky, and while no queue is weight-raised; or
//!   - idling is needed for service guarantees: the scenario is asymmetric
//!     for the queue (queues not raised with requests queued or in flight
//!     differ in weight and its own is not the smallest; or, with
//!     `groups=1`, more than one tenant has requests), or the queue is
//!     weight-raised and others are not (or the device holds 4 more than
//!     its own requests).
//!
//!   So on queued flash with equal weights and no raising, BFQ never idles.
//!   The timer is armed when the queue's last request completes; a seeky
//!   queue idles at most 2 ms in a symmetric scenario, a raised one at least
//!   20 ms. A request arriving in time cancels it; else the queue expires.
//! - **Weight raising** (`low_latency`): a sync queue that becomes busy after
//!   2 s idle (or is new) is *interactive*: weight x30 for 3 s or 120,000
//!   sectors, whichever comes first. One that
//!   becomes busy again no sooner than its past rate allows at 7000
//!   sectors/s is *soft real-time*: weight x3000 for 300 ms.
//! - **Within a queue**, requests leave in sector order from the last
//!   position (C-LOOK), a request behind it winning when less than half as
//!   far back and within `back_seek_max`; once per service slot, the oldest
//!   request goes first if it waited past `fifo_expire_sync` / `_async`.
//! - Async queues are charged 3x their sectors unless the scenario is
//!   asymmetric or they are raised (writes are cheap to buffer, reads wait).
//!
//! # Constants and tunables (upstream's)
//!
//! `slice_idle` 8 ms, `back_seek_max` 16384 KiB, `back_seek_penalty` 2,
//! `fifo_expire_sync` 125 ms, `fifo_expire_async` 250 ms, `timeout_sync`
//! 125 ms, `max_budget` 0 (automatic), `low_latency` 1, `strict_guarantees`
//! 0; default weight 100 (cgroup `io.bfq.weight`), weights 1..1000; raising
//! x30 (interactive) and x100 more (soft real-time), 300 ms soft real-time,
//! 2 s idle to count as interactive, 7000 sectors/s; seeky: more than 19
//! of the last 32 requests far (over 800 sectors) and small (under 8 sectors)
//! from the previous one; hw_tag above 3 requests in the driver.
//!
//! # Where ours differs, and why
//!
//! - Sync-ness: reads are sync; writes are async, as buffered writeback
//!   (our fills write through the page cache's stand-in), unless
//!   `sync_writes=1` (O_DIRECT / O_SYNC writers). Trims and flushes bypass
//!   the queues: flushes as upstream's flush machinery does, once every
//!   earlier write has completed (holding the writes after them,
//!   [`crate::ordering::Barrier`]); trims coalesced, one command at a time,
//!   before the queues. A read that overlaps an unsent write joins its queue
//!   only once the write is sent.
//! - Tenants are processes in one group (`weight.<id>` as a per-queue
//!   weight), not a cgroup hierarchy; `groups=1` only adds upstream's
//!   "several groups busy" asymmetry to the idling rule.
//! - `max_budget` 0 means 16384 sectors (upstream's starting value;
//!   upstream then tunes it to the peak rate x `timeout_sync`); no peak-rate
//!   estimate, so the interactive raising lasts a fixed 3 s (upstream's
//!   lower bound, where fast devices land); no burst detection, queue
//!   merging, or I/O injection during idling; `hw_tag` from the device's
//!   slots rather than observed depth. Upstream also idles for a queue
//!   that is the only busy one (`tot_busy_queues == 1`), which only pays
//!   with injection (other queues' I/O sent while it idles); without
//!   injection we do not idle there. With two busy queues, as in the fill
//!   scenarios, neither applies.
//! - Slow is judged against the fixed `max_budget` / 2 per slot, as
//!   upstream does against its tuned `bfq_max_budget`; the time charge uses
//!   nanoseconds where upstream truncates to milliseconds.
//! - Time since a queue was last busy stands for upstream's
//!   budget_timeout-based "idle for long".

use std::collections::BTreeMap;

use crate::config::{ConfigError, Configurable, Tunable};
use crate::ordering::{flush_may_go, Barrier, Queued};
use crate::policy::common::{base_in_field, Base, CommonConfig, Policy};
use crate::policy::PolicyInfo;
use crate::request::{Command, Completion, Op, Request, TenantId};
use crate::scheduler::DeviceView;
use crate::trim::TrimQueue;
use crate::units::{Bytes, Nanos};

pub use config::{BfqConfig, TUNABLES};

const SECTOR: u64 = 512;
/// Upstream's `bfq_default_max_budget`: 8 MiB, a few slots of a disk's
/// sequential throughput.
const DEFAULT_MAX_BUDGET: u64 = 16 * 1024;
/// min_budget is max_budget / 32.
const MIN_BUDGET_SHIFT: u32 = 5;
/// Async requests cost this many times their sectors in symmetric
/// scenarios: buffered writes should not steal reads' share.
const ASYNC_CHARGE_FACTOR: u64 = 3;
/// Interactive raising: weight x30 for 3 s, after 2 s idle.
const WR_COEFF: u32 = 30;
const WR_DURATION: Nanos = Nanos::from_secs(3);
const WR_MIN_IDLE_TIME: Nanos = Nanos::from_secs(2);
/// Soft real-time raising: x100 on top, for 300 ms, below 7000 sectors/s
/// (about a high-definition video stream).
const SOFTRT_WEIGHT_FACTOR: u32 = 100;
const WR_RT_MAX_TIME: Nanos = Nanos::from_millis(300);
const WR_MAX_SOFTRT_RATE: u64 = 7000;
/// Slack on the soft real-time start (4 jiffies at 1000 Hz).
const SOFTRT_SLACK: Nanos = Nanos::from_millis(4);
/// Idling bounds: seeky queues idle little, raised ones long enough for a
/// human-facing application to answer.
const MIN_TT: Nanos = Nanos::from_millis(2);
const WR_MIN_IDLE: Nanos = Nanos::from_millis(20);
/// More than this many requests in the driver means command queueing.
const HW_QUEUE_THRESHOLD: u32 = 3;
/// A raised queue idles if the device holds this many more requests than
/// the queue's own.
const WR_INFLIGHT_SLACK: u32 = 4;
/// Seekiness: over 800 sectors from the last request, for small requests on
/// flash; seeky when more than 19 of the last 32 were.
const SEEK_THR: u64 = 8 * 100 * SECTOR;
const SECT_THR_NONROT: u64 = 8 * SECTOR;
const SEEKY_COUNT: u32 = 19;
/// Interactive raising ends after this many sectors: a real application
/// start-up reads less (upstream measured up to about 110K); more is a
/// long-running job mistaken for one.
const MAX_SERVICE_FROM_WR: u64 = 120_000;
/// A slot shorter than this is too short to measure a rate
/// (`bfq_bfqq_is_slow`); one longer than this is long enough.
const SLOW_MIN_SLOT: Nanos = Nanos::from_millis(1);
const SLOW_RATE_SLOT: Nanos = Nanos::from_millis(20);
/// Virtual time is kept in sectors / weight, in 1/65536ths.
const WFQ_SHIFT: u32 = 16;
pub const INFO: PolicyInfo = PolicyInfo {
    name: "bfq",
    summary: "Linux BFQ: per-tenant weighted queues with sector budgets (B-WF2Q+), budget \
              feedback, idling for sync queues, weight raising",
    tunables: TUNABLES,
    build: |configure| super::construct(configure, Bfq::new),
};

/// Why the in-service queue gave up the device.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// Its idle timer ran out with no new request.
    TooIdle,
    BudgetTimeout,
    BudgetExhausted,
    NoMoreRequests,
}

/// A queue: one tenant's sync or async requests.
type QueueKey = (TenantId, bool);

/// Sectors a request covers.
fn sectors(request: &Request) -> u64 {
    request.len.0.div_ceil(SECTOR).max(1)
}

/// Virtual time of `service` sectors at `weight`.
fn delta(service: u64, weight: u64) -> u64 {
    ((u128::from(service) << WFQ_SHIFT) / u128::from(weight.max(1))) as u64
}

#[derive(Debug)]
pub struct Bfq {
    config: BfqConfig,
    queues: BTreeMap<QueueKey, BfqQueue>,
    vtime: u64,
    in_service: Option<QueueKey>,
    budget_timeout: Nanos,
    /// When the in-service queue's slot began, and when it last began to
    /// idle (upstream's `last_budget_start`, `last_idling_start`).
    budget_start: Nanos,
    idling_start: Nanos,
    fifo_checked: bool,
    /// The idle timer of the in-service queue, when armed.
    idle_until: Option<Nanos>,
    last_position: u64,
    hw_tag: bool,
    next_seq: u64,
    /// Reads over an unsent write, by the write they wait for (the last
    /// they overlap, [`Barrier::read_ready`]), each with its place in arrival
    /// order: a write sent frees only its own reads, not a scan of all.
    held_reads: BTreeMap<u64, Vec<(u64, Queued)>>,
    next_held: u64,
    /// Held reads looked at again after a write was sent.
    rechecked: u64,
    /// The write sent since the held reads were last looked at: only the
    /// reads waiting for it may have become ready.
    write_sent: Option<u64>,
    barrier: Barrier,
    trims: TrimQueue,
    base: Base,
}

impl Bfq {
    pub fn new(config: BfqConfig) -> Bfq {
        Bfq {
            queues: BTreeMap::new(),
            vtime: 0,
            in_service: None,
            budget_timeout: Nanos::ZERO,
            budget_start: Nanos::ZERO,
            idling_start: Nanos::ZERO,
            fifo_checked: false,
            idle_until: None,
            last_position: 0,
            hw_tag: true,
            next_seq: 0,
            held_reads: BTreeMap::new(),
            next_held: 0,
            rechecked: 0,
            write_sent: None,
            barrier: Barrier::default(),
            trims: TrimQueue::new(config.common.trim_max_ranges, 0),
            base: Base::new(&config.common),
            config,
        }
    }

    fn is_sync(&self, op: Op) -> bool {
        op == Op::Read || self.config.sync_writes
    }

    fn busy_queues(&self) -> impl Iterator<Item = &BfqQueue> {
        self.queues.values().filter(|q| q.busy)
    }

    /// Upstream's `bfq_asymmetric_scenario` for queue `key`: the queues with
    /// requests queued or in flight that are not raised (upstream's weights
    /// tree) differ in weight and `key`'s is not the smallest, or (as
    /// cgroups) several tenants have some.
    fn asymmetric(&self, key: QueueKey) -> bool {
        let active = || {
            self.queues
                .iter()
                .filter(|(_, q)| q.busy || q.dispatched > 0)
        };
        let mut weights = active()
            .map(|(_, q)| q)
            .filter(|q| q.wr_coeff == 1)
            .map(|q| q.weight);
        let varied = weights.next().is_some_and(|first| {
            let (smallest, varied) = weights.fold((first, false), |(min, varied), w| {
                (min.min(w), varied || w != first)
            });
            let q = &self.queues[&key];
            varied && !(q.wr_coeff == 1 && q.weight == smallest)
        });
        if varied || !self.config.groups {
            return varied;
        }
        let mut tenants = active().map(|((tenant, _), _)| *tenant);
        tenants
            .next()
            .is_some_and(|first| tenants.any(|t| t != first))
    }

    /// Upstream's `bfq_better_to_idle`, for the in-service queue.
    fn better_to_idle(&self, key: QueueKey) -> bool {
        let q = &self.queues[&key];
        if self.config.slice_idle == Nanos::ZERO || !q.sync {
            return false;
        }
        if self.config.strict_guarantees {
            return true;
        }
        let raised_busy = self.busy_queues().filter(|q| q.wr_coeff > 1).count();
        let busy = self.busy_queues().count();
        let boosts_throughput = !self.hw_tag && !q.is_seeky() && raised_busy == 0;
        let raised_among_others = q.wr_coeff > 1
            && (raised_busy < busy
                || self.base.stats.in_flight() >= q.dispatched + WR_INFLIGHT_SLACK);
        boosts_throughput || raised_among_others || self.asymmetric(key)
    }

    // ---- timer path ----

    /// Upstream's `bfq_arm_slice_timer`: how long to wait for the queue.
    fn arm_idle_timer(&mut self, key: QueueKey, now: Nanos) {
        let q = &self.queues[&key];
        let mut idle = self.config.slice_idle;
        if q.is_seeky() && q.wr_coeff == 1 && !self.asymmetric(key) {
            idle = idle.min(MIN_TT);
        } else if q.wr_coeff > 1 {
            idle = idle.max(WR_MIN_IDLE);
        }
        self.idle_until = Some(now + idle);
        self.idling_start = now;
    }

    /// Upstream's `bfq_bfqq_is_slow`: whether the in-service sync queue
    /// was slow in the slot that ends (served less than half of
    /// `max_budget` in a slot over 20 ms; for slots under 1 ms, whether it
    /// is seeky), and the slot's length, without the idling that ended it
    /// (`compensate`). Async queues are never slow and charge no time.
    fn slow_slot(&self, key: QueueKey, compensate: bool, now: Nanos) -> (bool, Nanos) {
        let q = &self.queues[&key];
        if !q.sync {
            return (false, Nanos::ZERO);
        }
        let end = if compensate { self.idling_start } else { now };
        let slot = end.since(self.budget_start);
        if slot < SLOW_MIN_SLOT {
            // Flash: the worst case idling would give a seeky queue.
            return (q.is_seeky(), MIN_TT);
        }
        let slow = if slot > SLOW_RATE_SLOT {
            q.service < self.config.max_budget() / 2
        } else {
            q.is_seeky()
        };
        (slow, slot)
    }

    /// Upstream's time charge on expiry (`bfq_bfqq_expire` with
    /// `bfq_bfqq_charge_time`): a queue not raised that was slow, or that
    /// timed out with a third of its budget left, is charged for the time
    /// it held the device, `max_budget` x slot / `timeout_sync` (the slot
    /// at most `timeout_sync`), when that is more than it used: a slow
    /// queue pays for the device time it took, not for its sectors.
    fn charge_time_if_slow(&mut self, key: QueueKey, reason: Expiry, now: Nanos) {
        let (slow, slot) = self.slow_slot(key, reason == Expiry::TooIdle, now);
        let q = &self.queues[&key];
        let timed_out =
            reason == Expiry::BudgetTimeout && q.budget.saturating_sub(q.service) >= q.budget / 3;
        if q.wr_coeff != 1 || !(slow || timed_out) {
            return;
        }
        let timeout = self.config.timeout_sync;
        let slot = slot.min(timeout);
        let for_time = (u128::from(self.config.max_budget()) * u128::from(slot.0)
            / u128::from(timeout.0)) as u64;
        let wsum: u64 = self.busy_queues().map(BfqQueue::effective_weight).sum();
        let q = self.queues.get_mut(&key).expect("queue exists");
        let extra = for_time.saturating_sub(q.service);
        q.service += extra;
        q.budget = q.budget.max(q.service);
        q.service_from_backlogged += extra;
        self.vtime += delta(extra, wsum);
    }

    /// Upstream's `__bfq_bfqq_recalc_budget`: the next budget from how the
    /// last one ended.
    fn recalc_budget(&mut self, key: QueueKey, reason: Expiry) {
        let (max, min) = (self.config.max_budget(), self.config.min_budget());
        let q = self.queues.get_mut(&key).expect("queue exists");
        if q.wr_coeff > 1 {
            q.max_budget = 2 * min;
        } else if !q.sync {
            q.max_budget = max;
        } else {
            let budget = q.max_budget;
            q.max_budget = match reason {
                Expiry::TooIdle if q.dispatched > 0 => (budget * 2).min(max),
                Expiry::TooIdle if budget > 5 * min => budget - 4 * min,
                Expiry::TooIdle => min,
                Expiry::BudgetTimeout => (budget * 2).min(max),
                Expiry::BudgetExhausted => (budget * 4).min(max),
                Expiry::NoMoreRequests => q.service.max(min),
            };
        }
        q.max_budget = q.max_budget.min(max);
    }

    /// Upstream's `bfq_bfqq_expire`: the in-service queue gives up the device.
    fn expire(&mut self, reason: Expiry, now: Nanos) {
        let key = self.in_service.take().expect("a queue is in service");
        self.idle_until = None;
        self.charge_time_if_slow(key, reason, now);
        self.recalc_budget(key, reason);
        let symmetric = !self.asymmetric(key);
        let q = self.queues.get_mut(&key).expect("queue exists");
        q.finish = q.start + delta(q.service, q.effective_weight());
        q.service = 0;
        if let Some(next) = Self::peek_next(q, self.last_position, &self.config) {
            let charge = Self::charge(q, &q.sorted[&next].request, symmetric);
            q.start = q.finish;
            q.budget = q.max_budget.max(charge);
            q.finish = q.start + delta(q.budget, q.effective_weight());
        } else {
            q.busy = false;
            q.idle_since = Some(now);
            if q.sync && self.config.low_latency {
                let paced = q.backlogged_since
                    + Nanos(q.service_from_backlogged * 1_000_000_000 / WR_MAX_SOFTRT_RATE);
                let soon = now + self.config.slice_idle + SOFTRT_SLACK;
                q.soft_rt_next_start = q.soft_rt_next_start.max(paced).max(soon);
            }
        }
    }

    // ---- choosing ----

    /// B-WF2Q+: the eligible busy queue with the smallest finish.
    fn next_queue(&mut self) -> Option<QueueKey> {
        let min_start = self.busy_queues().map(|q| q.start).min()?;
        self.vtime = self.vtime.max(min_start);
        let vtime = self.vtime;
        self.queues
            .iter()
            .filter(|(_, q)| q.busy && q.start <= vtime)
            .min_by_key(|(_, q)| q.finish)
            .map(|(key, _)| *key)
    }

    fn set_in_service(&mut self, key: QueueKey, now: Nanos) {
        let q = self.queues.get_mut(&key).expect("queue exists");
        q.end_raising_if_due(now);
        let coeff = if q.raising == Raising::Interactive {
            u64::from(q.wr_coeff)
        } else {
            1
        };
        self.budget_timeout = now + Nanos(self.config.timeout_sync.0.saturating_mul(coeff));
        self.budget_start = now;
        self.in_service = Some(key);
        self.fifo_checked = false;
    }

    /// The request the queue would send next: C-LOOK from `position`, a
    /// close enough backward one, or (see `next_request`) an expired one.
    fn peek_next(q: &BfqQueue, position: u64, config: &BfqConfig) -> Option<(u64, u64)> {
        let ahead = q.sorted.range((position, 0)..).next().map(|(k, _)| *k);
        let behind = q.sorted.range(..(position, 0)).next_back().map(|(k, _)| *k);
        match (ahead, behind) {
            (Some(a), Some(b)) => {
                let back = position - b.0;
                let back_cost = back.saturating_mul(config.back_seek_penalty);
                let ahead_cost = a.0 - position;
                if back <= config.back_seek_max.0 && back_cost < ahead_cost {
                    Some(b)
                } else {
                    Some(a)
                }
            }
            (Some(a), None) => Some(a),
            (None, Some(b)) if position - b.0 <= config.back_seek_max.0 => Some(b),
            // Nothing near: wrap around to the lowest offset.
            (None, _) => q.sorted.keys().next().copied(),
        }
    }

    fn charge(q: &BfqQueue, request: &Request, symmetric: bool) -> u64 {
        let sectors = sectors(request);
        if q.sync || q.wr_coeff > 1 || !symmetric {
            sectors
        } else {
            sectors * ASYNC_CHARGE_FACTOR
        }
    }

    /// The in-service queue's next request key: once per slot the oldest if
    /// it expired, else the elevator's choice.
    fn next_request(&mut self, key: QueueKey, now: Nanos) -> Option<(u64, u64)> {
        let q = &self.queues[&key];
        if !self.fifo_checked {
            self.fifo_checked = true;
            let expire = if q.sync {
                self.config.fifo_expire_sync
            } else {
                self.config.fifo_expire_async
            };
            if let Some((seq, (submitted, offset))) = q.fifo.iter().next() {
                if now.since(*submitted) > expire {
                    return Some((*offset, *seq));
                }
            }
        }
        Self::peek_next(q, self.last_position, &self.config)
    }

    /// Upstream's `bfq_select_queue` and dispatch from it.
    fn select_request(&mut self, now: Nanos) -> Option<Queued> {
        loop {
            let Some(key) = self.in_service else {
                let key = self.next_queue()?;
                self.set_in_service(key, now);
                continue;
            };
            let empty = self.queues[&key].sorted.is_empty();
            let must_idle = empty && self.better_to_idle(key);
            if now >= self.budget_timeout && !must_idle {
                let q = &self.queues[&key];
                let left = q.budget.saturating_sub(q.service);
                if self.idle_until.is_none() || left >= q.budget / 3 {
                    self.expire(Expiry::BudgetTimeout, now);
                    continue;
                }
            }
            if empty {
                let q = &self.queues[&key];
                if self.idle_until.is_some() || (q.dispatched > 0 && must_idle) {
                    return None;
                }
                self.expire(Expiry::NoMoreRequests, now);
                continue;
            }
            let sorted_key = self.next_request(key, now).expect("queue has requests");
            let symmetric = !self.asymmetric(key);
            let q = self.queues.get_mut(&key).expect("queue exists");
            let charge = Self::charge(q, &q.sorted[&sorted_key].request, symmetric);
            if charge > q.budget.saturating_sub(q.service) {
                if q.service > 0 {
                    self.expire(Expiry::BudgetExhausted, now);
                    continue;
                }
                // The slot's first request always fits (an expired request
                // may be larger than the one the budget was sized for).
                q.budget = charge;
            }
            let request = q.sorted.remove(&sorted_key).expect("request exists");
            q.fifo.remove(&sorted_key.1);
            q.service += charge;
            q.service_from_backlogged += charge;
            if q.wr_coeff > 1 {
                q.service_from_wr += charge;
                q.end_raising_if_due(now);
            }
            q.dispatched += 1;
            let wsum: u64 = self.busy_queues().map(BfqQueue::effective_weight).sum();
            self.vtime += delta(charge, wsum);
            self.last_position = request.request.end();
            return Some(request);
        }
    }

    // ---- per-I/O path ----

    /// A read or write joins its queue; an idle queue becomes busy
    /// (weight raising is decided here, as upstream does on arrival).
    fn add_request(&mut self, entry: Queued, now: Nanos) {
        let request = &entry.request;
        let key = (request.tenant, self.is_sync(request.op));
        let weight = *self.config.weight.get(request.tenant);
        let max_budget = self.config.max_budget();
        let low_latency = self.config.low_latency;
        let seq = self.next_seq;
        self.next_seq += 1;
        let vtime = self.vtime;
        let in_service = self.in_service == Some(key);
        let q = self
            .queues
            .entry(key)
            .or_insert_with(|| BfqQueue::new(key.1, weight, max_budget));
        let far = request.offset.0.abs_diff(q.last_request_end) > SEEK_THR;
        let seek = far && request.len.0 < SECT_THR_NONROT;
        q.seek_history = (q.seek_history << 1) | u32::from(seek);
        q.last_request_end = request.end();
        q.fifo.insert(seq, (request.submitted, request.offset.0));
        q.sorted.insert((request.offset.0, seq), entry);
        if in_service {
            // The awaited request: the idle timer stops.
            self.idle_until = None;
            return;
        }
        if q.busy {
            return;
        }
        q.end_raising_if_due(now);
        if low_latency && q.sync && q.dispatched == 0 && q.wr_coeff == 1 {
            let interactive = q
                .idle_since
                .is_none_or(|t| now.since(t) >= WR_MIN_IDLE_TIME);
            if interactive {
                q.raising = Raising::Interactive;
                q.service_from_wr = 0;
                q.wr_coeff = WR_COEFF;
                q.wr_until = now + WR_DURATION;
            } else if now >= q.soft_rt_next_start {
                q.raising = Raising::SoftRealTime;
                q.wr_coeff = WR_COEFF * SOFTRT_WEIGHT_FACTOR;
                q.wr_until = now + WR_RT_MAX_TIME;
            }
        }
        if q.wr_coeff > 1 {
            q.max_budget = 2 * (max_budget >> MIN_BUDGET_SHIFT).max(1);
        }
        q.busy = true;
        q.backlogged_since = now;
        q.service_from_backlogged = 0;
        q.start = vtime.max(q.finish);
        let first = q.sorted.values().next().map_or(1, |e| sectors(&e.request));
        q.budget = q.max_budget.max(first);
        q.finish = q.start + delta(q.budget, q.effective_weight());
    }

    /// Held reads looked at again after a write was sent, so far.
    pub fn reads_rechecked(&self) -> u64 {
        self.rechecked
    }

    /// Holds a read behind the write its tag names.
    fn hold(&mut self, order: u64, read: Queued) {
        self.held_reads
            .entry(read.tag)
            .or_default()
            .push((order, read));
    }

    /// Queues the reads the last write sent freed, in arrival order.
    fn release_ready_reads(&mut self, now: Nanos) {
        let Some(tag) = self.write_sent.take() else {
            return;
        };
        let Some(waiting) = self.held_reads.remove(&tag) else {
            return;
        };
        self.rechecked += waiting.len() as u64;
        let mut ready = Vec::new();
        for (order, mut read) in waiting {
            if self.barrier.read_ready(&mut read) {
                ready.push((order, read));
            } else {
                self.hold(order, read);
            }
        }
        ready.sort_by_key(|(order, _)| *order);
        for (_, read) in ready {
            self.add_request(read, now);
        }
    }

    fn choose_command(&mut self, now: Nanos) -> Option<Command> {
        self.release_ready_reads(now);
        if self.barrier.flush_due() && flush_may_go(self.base.stats.class(Op::Write).in_flight) {
            let flush = self.barrier.take_flush().expect("flush is due");
            while let Some(write) = self.barrier.release() {
                self.add_request(write, now);
            }
            return Some(Command::single(flush.request, now));
        }
        if !self.trims.is_empty() && self.base.stats.class(Op::Trim).in_flight == 0 {
            return self.trims.take_command(now);
        }
        let entry = self.select_request(now)?;
        if entry.request.op == Op::Write {
            self.write_sent = Some(entry.tag);
        }
        self.barrier.sent_write(&entry);
        Some(Command::single(entry.request, now))
    }
}

impl Policy for Bfq {
    const INFO: PolicyInfo = INFO;

    base_in_field!();

    fn report_notes(&self) -> Vec<String> {
        let seen = |t: TenantId| self.queues.keys().any(|(id, _)| *id == t);
        Vec::from_iter(
            self.config
                .weight
                .unused_note(INFO.name, "weight.<id>", seen),
        )
    }

    fn accept(&mut self, request: Request, now: Nanos) {
        match request.op {
            Op::Read => {
                let mut read = self.barrier.tag_read(request);
                if self.barrier.read_ready(&mut read) {
                    self.add_request(read, now);
                } else {
                    self.next_held += 1;
                    self.hold(self.next_held, read);
                }
            }
            Op::Write | Op::Flush => {
                if let Some(write) = self.barrier.admit(request) {
                    self.add_request(write, now);
                }
            }
            Op::Trim => self.trims.push(request),
        }
    }

    fn trims(&mut self) -> Option<&mut TrimQueue> {
        Some(&mut self.trims)
    }

    fn prepare(&mut self, _now: Nanos, device: DeviceView) {
        self.hw_tag = device.slots > HW_QUEUE_THRESHOLD;
    }

    /// Reads and writes count as limited while the in-service queue idles.
    fn next_command(&mut self, now: Nanos) -> Option<Command> {
        let command = self.choose_command(now);
        let idling = command.is_none() && self.in_service.is_some();
        for op in [Op::Read, Op::Write] {
            self.base.stats.class_mut(op).limited = idling;
        }
        command
    }

    /// When the in-service queue's last request is back and it should wait
    /// for the next, arms the idle timer.
    fn completed(&mut self, completion: &Completion, now: Nanos) {
        if matches!(completion.op, Op::Read | Op::Write) {
            let key = (completion.tenant, self.is_sync(completion.op));
            if let Some(q) = self.queues.get_mut(&key) {
                q.dispatched = q.dispatched.saturating_sub(1);
                let wait = self.in_service == Some(key) && q.sorted.is_empty() && q.dispatched == 0;
                if wait && self.better_to_idle(key) {
                    self.arm_idle_timer(key, now);
                }
            }
        }
    }

    fn own_timer(&self) -> Option<Nanos> {
        self.idle_until
    }

    fn ticked(&mut self, now: Nanos, _ticks: u64) {
        if self.idle_until.is_some_and(|t| now >= t) {
            self.idle_until = None;
            let empty = self
                .in_service
                .is_some_and(|key| self.queues[&key].sorted.is_empty());
            if empty {
                self.expire(Expiry::TooIdle, now);
            }
        }
    }

    fn oldest(&self, op: Op) -> Option<Nanos> {
        let queued = self
            .queues
            .values()
            .filter_map(|q| q.fifo.values().next().map(|(t, _)| *t));
        let waiting = self
            .held_reads
            .values()
            .flatten()
            .map(|(_, q)| &q.request)
            .chain(self.barrier.held())
            .filter(|r| r.op == op)
            .map(|r| r.submitted);
        match op {
            Op::Read | Op::Write => queued.chain(waiting).min(),
            _ => waiting.min(),
        }
    }
}

mod config;
mod queue;
#[cfg(test)]
mod tests;

use queue::{BfqQueue, Raising};
