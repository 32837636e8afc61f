//! `netflix`: FreeBSD's CAM I/O scheduler (cam_iosched.c, Netflix 2015), with
//! the flaws its own paper and code comments point out fixed.
//!
//! # Algorithm
//!
//! Queues. Reads, writes and trims wait in separate queues, as in upstream's
//! dynamic scheduler (`cam_iosched_queue_work` puts every non-read in the
//! write queue whatever `read_bias` is). Flushes travel with the writes, so
//! they stay behind every earlier write. The single shared queue of the stock
//! kernel (built without `CAM_IOSCHED_DYNAMIC`) is the `fifo` policy: with a
//! limiter on a shared queue, every read would wait behind a throttled write.
//!
//! Choice. Trims go first, then writes, then reads, as upstream's
//! `cam_iosched_next_bio`, except that while reads *and* a write or trim could
//! go, `read_bias` reads go before each write or trim (0: no bias, writes
//! first). The bias counter drops by one per read so preferred and reloads
//! when a write or trim goes, so the ratio is exactly `read_bias` to 1 while
//! both wait. (Upstream drops the counter whenever a write merely waits, even
//! one its limiter holds back.)
//!
//! Limiters. Each class has any combination of queue-depth, IOPS and bandwidth
//! limiters ([`crate::limiter`]); upstream allows one at a time. A request
//! goes only when all of its class's limiters admit it. Rate credit is earned
//! on a tick of `quanta` per second, exactly, with no truncation.
//!
//! Steering (`control.type`):
//! - `none` (our default): limits stay where they are configured;
//! - `set_max`: every `steer_interval`, every limit is set to its max (the
//!   upstream default, which silently overwrote manual limits; here setting a
//!   `current` together with `set_max` is an error);
//! - `read_latency`: every `steer_interval`, if the read latency EMA is below
//!   `lolat` (or fewer than 10 reads completed since the last step) the write
//!   limit grows by `alpha` percent; above `hilat` it shrinks by `alpha`
//!   percent; in between it holds (a dead band). Each step moves the limit by
//!   at least one unit, so a limit of 4 or less can grow again (upstream's
//!   integer truncation froze it). It steers the first limiter listed in
//!   `write.limiter`.
//!
//! Schedules. `{class}.schedule` sets the current of the class's first
//! limiter at given times ([`crate::limit_schedule`]: `0s:15000;40s:25000`,
//! each value from the limiter's min to its max): a timetable with
//! hindsight, what the oracle study searches. A step at 0 s is the limit
//! from the start; before the first step `current` holds. Steps are applied
//! on ticks, so with `control.type` other than `none` the two would fight
//! over the limit: that is refused.
//!
//! Trims. Trims are coalesced into one command of up to `trim_max_ranges`
//! ranges. With `trim_goal` > 0 they are held until `trim_goal` wait or the
//! oldest has waited `trim_ticks` ticks. The trim limiter counts commands
//! (queue depth, IOPS) and their total bytes (bandwidth, which upstream could
//! not limit). By default one trim command is in the device at a time, as
//! stock. With `trim_advisory` N > 0, trims beyond N waiting are completed
//! without being sent (advisory trims, upstream's BIO_SPEEDUP idea).
//!
//! Ordering: see [`crate::ordering`]; a read that overlaps a queued write is
//! held until that write is sent.
//!
//! # Constants and defaults (upstream's unless said)
//!
//! - `quanta` 200 ticks/s: 5 ms ticks; upstream found larger quanta save
//!   nothing and delay I/O.
//! - limits: min 1, max and current 300000 (no limit in practice); the trim
//!   class has a queue-depth limiter of 1 (max 1): one trim at a time.
//! - `control.steer_interval` 5 s, `lolat` 5 ms ("normal" read latency in the
//!   paper), `hilat` 15 ms, `alpha` 20 %: ~10 steps to back off 10x.
//! - `bad_latency` 500 ms: upstream's `too_long` threshold.

use std::collections::VecDeque;

use crate::config::Tunable;
use crate::limiter::{Limit, LimiterKind, LimiterSet};
use crate::ordering::{flush_may_go, Queued, ReadWriteQueues, WriteOrder};
use crate::policy::common::{
    base_in_field, Base, Policy, BAD_LATENCY, STATS_WINDOW, TRIM_MAX_RANGES,
};
use crate::policy::{class_pressure, construct, PolicyInfo};
use crate::request::{Command, Op, Request};
use crate::scheduler::{ClassPressure, WriteLimit};
use crate::trim::TrimQueue;
use crate::units::Nanos;

/// Fewer reads than this per steering interval count as "no read load":
/// the write limit then grows whatever the (stale) latency says. Upstream: 10.
const STEER_MIN_READS: u64 = 10;

/// The classes that have limiters, in `Op::index` order.
const LIMITED: [Op; 3] = [Op::Read, Op::Write, Op::Trim];

pub const TUNABLES: &[Tunable] = &[
    Tunable {
        key: "read_bias",
        default: "0",
        help:
            "reads sent per write or trim while both wait; 0 = no bias (writes first, as upstream)",
    },
    Tunable {
        key: "quanta",
        default: "200",
        help: "scheduler ticks per second (rate credit, steering, load)",
    },
    Tunable {
        key: "{read,write,trim}.limiter",
        default: "none (trim: queue_depth)",
        help: "none, or any of queue_depth, iops, bandwidth joined by '+'; the first is steered",
    },
    Tunable {
        key: "{read,write,trim}.{min,max,current}",
        default: "1, 300000, 300000 (trim: 1, 1, 1)",
        help: "range and value of the class's first limiter",
    },
    Tunable {
        key: "{read,write,trim}.{queue_depth,iops,bandwidth}.{min,max,current}",
        default: "1, 300000, 300000",
        help: "one limiter's range and value: commands in flight, IO/s, or kB/s (1 kB = 1000 B)",
    },
    Tunable {
        key: "{read,write,trim}.schedule",
        default: "none",
        help: "the first limiter's current over time: START:VALUE steps joined by ';' \
               (0s:15000;40s:25000); needs control.type=none",
    },
    Tunable {
        key: "control.type",
        default: "none",
        help: "none, set_max (limits held at max) or read_latency (steer the write limit)",
    },
    Tunable {
        key: "control.steer_interval",
        default: "5s",
        help: "time between steering steps",
    },
    Tunable {
        key: "control.lolat",
        default: "5ms",
        help: "read latency EMA below which the write limit grows",
    },
    Tunable {
        key: "control.hilat",
        default: "15ms",
        help: "read latency EMA above which the write limit shrinks",
    },
    Tunable {
        key: "control.alpha",
        default: "20",
        help: "steering step in percent of the limit (1-99)",
    },
    Tunable {
        key: "trim_goal",
        default: "0",
        help: "hold trims until this many wait (0 = send as soon as allowed)",
    },
    Tunable {
        key: "trim_ticks",
        default: "0",
        help: "most ticks a held trim waits for its goal (needed when trim_goal > 0)",
    },
    TRIM_MAX_RANGES,
    Tunable {
        key: "trim_advisory",
        default: "0",
        help: "complete trims unsent beyond this many waiting (0 = off)",
    },
    BAD_LATENCY,
    STATS_WINDOW,
];

pub const INFO: PolicyInfo = PolicyInfo {
    name: "netflix",
    summary: "FreeBSD cam_iosched: read bias, composable queue-depth/IOPS/bandwidth limiters, \
              latency steering, trim batching",
    tunables: TUNABLES,
    build: |configure| construct(configure, Netflix::new),
};

mod config;
pub use config::{ClassConfig, ControlConfig, ControlType, NetflixConfig};

/// Which queue the next command comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Pick {
    Read,
    Write,
    Trim,
}

#[derive(Debug)]
pub struct Netflix {
    config: NetflixConfig,
    queues: ReadWriteQueues,
    trims: TrimQueue,
    order: WriteOrder,
    /// Read, write and trim limiters, by `Op::index`.
    limiters: [LimiterSet; 3],
    bias_left: u32,
    base: Base,
    next_steer: Nanos,
    reads_at_last_steer: u64,
    /// Per class, the index of the first step of its schedule not applied.
    next_step: [usize; 3],
}

impl Netflix {
    /// Builds the scheduler; `config` should have passed `validate`.
    pub fn new(config: NetflixConfig) -> Netflix {
        let starting = LIMITED.map(|op| config.classes[op.index()].starting_limits());
        let limiters = LIMITED.map(|op| {
            let class = &config.classes[op.index()];
            LimiterSet::new(&class.limiters, starting[op.index()].0, config.quanta)
        });
        Netflix {
            queues: ReadWriteQueues::default(),
            trims: TrimQueue::new(config.common.trim_max_ranges, config.trim_advisory),
            order: WriteOrder::default(),
            limiters,
            bias_left: config.read_bias,
            base: Base::ticking(&config.common, config.quanta),
            next_steer: config.control.steer_interval,
            reads_at_last_steer: 0,
            next_step: starting.map(|(_, next)| next),
            config,
        }
    }

    /// The steered limit of a class (`read`, `write` or `trim`), if any.
    pub fn limit(&self, op: Op) -> Option<(LimiterKind, Limit)> {
        LIMITED
            .contains(&op)
            .then(|| self.limiters[op.index()].steered())
            .flatten()
    }

    /// Whether the class's limiters let one more command go; remembers a
    /// refusal for the load average and for `pressure`.
    fn admits(&mut self, op: Op) -> bool {
        if op == Op::Flush {
            return flush_may_go(self.base.stats.class(Op::Write).in_flight);
        }
        let ok = self.limiters[op.index()].admits(self.base.stats.class(op).in_flight);
        if !ok {
            self.base.stats.class_mut(op).limited = true;
        }
        ok
    }

    /// Whether a read may go: the first queued read that overlaps no queued
    /// write (or whose writes have been sent). A read that must wait for its
    /// write does not hold back the reads behind it, which overlap nothing.
    fn read_queue_ready(&mut self) -> bool {
        let found = self
            .queues
            .find_ready_read(|read| self.order.read_may_go(read.tag));
        found && self.admits(Op::Read)
    }

    fn write_queue_ready(&mut self) -> bool {
        match self.queues.writes.front() {
            Some(head) => {
                let op = head.request.op;
                self.admits(op)
            }
            None => false,
        }
    }

    fn trims_ready(&mut self, now: Nanos) -> bool {
        let hold = Nanos(
            self.base
                .ticker
                .period()
                .0
                .saturating_mul(u64::from(self.config.trim_ticks)),
        );
        self.trims.batch_due(now, self.config.trim_goal, hold) && self.admits(Op::Trim)
    }

    fn pick(&mut self, now: Nanos) -> Option<Pick> {
        let trim = self.trims_ready(now);
        let write = self.write_queue_ready();
        let read = self.read_queue_ready();
        let pick = if read && self.bias_left > 0 && (trim || write) {
            self.bias_left -= 1;
            Pick::Read
        } else if trim {
            self.bias_left = self.config.read_bias;
            Pick::Trim
        } else if write {
            self.bias_left = self.config.read_bias;
            Pick::Write
        } else if read {
            Pick::Read
        } else {
            return None;
        };
        Some(pick)
    }

    fn take(&mut self, pick: Pick, now: Nanos) -> Command {
        match pick {
            Pick::Read => self.queues.send_ready_read(now),
            Pick::Write => self
                .queues
                .send_write(|write| self.order.sent_write(write), now),
            Pick::Trim => self
                .trims
                .take_command(now)
                .expect("picked a non-empty queue"),
        }
    }

    /// Sets each class's first limit to the step of its schedule that
    /// started last by `now`, if one started since the last call.
    fn follow_schedules(&mut self, now: Nanos) {
        for op in LIMITED {
            let i = op.index();
            let Some(schedule) = &self.config.classes[i].schedule else {
                continue;
            };
            let Some(value) = schedule.due(&mut self.next_step[i], now) else {
                continue;
            };
            if let Some(limit) = self.limiters[i].steered_mut() {
                limit.current = value;
            }
        }
    }

    fn steer(&mut self) {
        match self.config.control.kind {
            ControlType::None => {}
            ControlType::SetMax => {
                for set in &mut self.limiters {
                    set.for_each_mut(|limiter| {
                        let limit = limiter.limit_mut();
                        limit.current = limit.max;
                    });
                }
            }
            ControlType::ReadLatency => self.steer_by_read_latency(),
        }
    }

    fn steer_by_read_latency(&mut self) {
        let read = self.base.stats.class(Op::Read);
        let latency = read.device_ema.mean();
        let idle = read.completed - self.reads_at_last_steer < STEER_MIN_READS;
        self.reads_at_last_steer = read.completed;
        let control = &self.config.control;
        let alpha = u64::from(control.alpha);
        let Some(limit) = self.limiters[Op::Write.index()].steered_mut() else {
            return;
        };
        let current = limit.current;
        if idle || latency < control.lolat {
            limit.current = (current * (100 + alpha) / 100).max(current + 1);
        } else if latency > control.hilat {
            limit.current = (current * (100 - alpha) / 100).min(current.saturating_sub(1));
        }
        limit.clamp();
    }
}

impl Policy for Netflix {
    const INFO: PolicyInfo = INFO;

    base_in_field!();

    fn accept(&mut self, request: Request, _now: Nanos) {
        match request.op {
            Op::Trim => self.trims.push(request),
            Op::Read => {
                let tag = self.order.read_tag(&request);
                self.queues.reads.push_back(Queued { request, tag });
            }
            Op::Write | Op::Flush => {
                let tag = self.order.enqueue_write(&request);
                self.queues.writes.push_back(Queued { request, tag });
            }
        }
    }

    fn trims(&mut self) -> Option<&mut TrimQueue> {
        Some(&mut self.trims)
    }

    fn next_command(&mut self, now: Nanos) -> Option<Command> {
        let pick = self.pick(now)?;
        let command = self.take(pick, now);
        if command.op != Op::Flush {
            self.limiters[command.op.index()].charge(command.bytes());
        }
        Some(command)
    }

    fn ticked(&mut self, now: Nanos, ticks: u64) {
        if ticks == 0 {
            return;
        }
        self.follow_schedules(now);
        for set in &mut self.limiters {
            set.refill(ticks);
        }
        if now >= self.next_steer {
            self.steer();
            self.next_steer = now + self.config.control.steer_interval;
        }
    }

    fn has_work(&self) -> bool {
        !self.queues.is_empty() || self.trims.has_work()
    }

    fn oldest(&self, op: Op) -> Option<Nanos> {
        let first_of = |q: &VecDeque<Queued>| {
            q.iter()
                .find(|e| e.request.op == op)
                .map(|e| e.request.submitted)
        };
        match op {
            Op::Trim => None,
            Op::Read => first_of(&self.queues.reads),
            _ => first_of(&self.queues.writes),
        }
    }

    fn class_pressure(&self, op: Op, now: Nanos) -> ClassPressure {
        let limiters = LIMITED.contains(&op).then(|| &self.limiters[op.index()]);
        class_pressure(&self.base.stats, op, limiters, self.oldest(op), now)
    }

    fn limit_on_writes(&self) -> Option<WriteLimit> {
        let (kind, limit) = self.limiters[Op::Write.index()].steered()?;
        Some(WriteLimit {
            kind: kind.name(),
            value: limit.current as f64,
            unit: kind.short_unit(),
        })
    }
}

#[cfg(test)]
mod tests;
