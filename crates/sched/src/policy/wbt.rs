//! `wbt`: Linux's writeback throttling (block/blk-wbt.c with the depth
//! stepping of block/blk-rq-qos.c), loosely CoDel: it limits how many writes
//! may be in flight, never reads, and steers that limit by read latency.
//!
//! # Algorithm
//!
//! Writes (and trims) must get a slot under a limit before they may go on to
//! the device queue; reads always go straight on. The limits come from a
//! scale step s and the device queue depth qd:
//! - max depth = min(16, qd) for s = 0; `1 + ((max - 1) >> s)` for s > 0
//!   (halved per step, down to 1); `1 + ((max - 1) << -s)` for s < 0 (doubled
//!   per step, up to 3/4 of qd); a qd of 1 gives 2 (1 when scaled down);
//! - normal limit (max + 1) / 2, background limit (max + 3) / 4 (max and 1
//!   when max <= 2);
//! - a write may have the normal limit, or the background limit when a read
//!   was issued or completed in the last 100 ms (competing I/O); a trim always
//!   has the background limit.
//!
//! A write that does not fit waits, and so does every write after it. Waiters
//! are woken by completions: with a volatile write cache only once every
//! write in flight has completed (the device would otherwise just absorb them
//! in cache), without one as soon as half the background limit is free; trims
//! as soon as half the background limit is free. Scaling up wakes them too.
//!
//! The per-I/O path only records: completions in a monitoring window count
//! reads (and their minimum device latency) and writes. The window (100 ms,
//! shortened to 100 / sqrt(s + 1) ms while scaled down) starts when a write
//! passes the throttle and re-arms itself while anything is in flight or
//! s != 0. At its end:
//! - the latency is *exceeded* if the oldest tracked read has been in the
//!   device longer than the window (or longer than the target with no read
//!   completed), or the window's minimum read latency exceeds `wbt_lat_usec`:
//!   s++ (from a negative s straight to 0), unless the max depth is 1 already;
//! - with fewer than 1 read and 3 writes completed it is *unknown*: if writes
//!   were seen or are in flight, s-- (writes alone may go faster than the
//!   default); otherwise after 5 such windows s moves one step towards 0;
//! - otherwise it is *ok*: s-- (until the max depth stops growing).
//!
//! # Constants (upstream's)
//!
//! - `wbt_lat_usec` 2000 (2 ms, the non-rotational default; 75 ms for disks);
//!   0 turns throttling off;
//! - default depth 16, window 100 ms, 3 write samples and 1 read sample for
//!   a valid window, 5 unknown windows before drifting back to step 0,
//!   competing I/O "close" within 100 ms.
//!
//! # Where ours differs, and why
//!
//! - All our writes are treated as plain buffered writeback: we cannot tell
//!   O_DIRECT writes (never throttled upstream), sync or kswapd writeback (the
//!   max depth) or background writeback (always the background limit), nor
//!   whether a task was recently throttled on dirty pages (assumed not).
//! - `write_cache` (upstream: the queue's volatile write cache flag) and
//!   `queue_depth` (0: the device's slots, learnt at the first dispatch;
//!   a change resets the step, as upstream) are tunables.
//! - What passed the throttle waits in arrival order for a device slot
//!   (`policy/issue.rs`), as bios waiting for a tag do; trims there are
//!   coalesced into one command, and `speed_up_trims` only reaches trims that
//!   have passed the throttle.
//! - The tracked read ("sync cookie") is recognised at completion by its
//!   dispatch time.
//! - Flushes are not throttled (as upstream); a waiting flush holds the writes
//!   queued after it and goes once the earlier writes have completed, and a
//!   read overlapping a throttled write waits for it
//!   ([`crate::ordering::Barrier`]).

use std::collections::VecDeque;

use crate::config::{
    parse_duration_in, parse_int, unknown_key, ConfigError, Configurable, Tunable,
};
use crate::ordering::Queued;
use crate::policy::common::{
    base_in_field, Base, CommonConfig, Policy, BAD_LATENCY, STATS_WINDOW, TRIM_MAX_RANGES,
};
use crate::policy::issue::{gate_in_field, Gate};
use crate::policy::{construct, PolicyInfo};
use crate::request::{Command, Completion, Op, Request};
use crate::scheduler::{DeviceView, WriteLimit};
use crate::trim::TrimCuts;
use crate::units::{Bytes, Nanos};

/// Max depth at step 0, unless the device queue is shallower.
const DEFAULT_DEPTH: u32 = 16;
/// The monitoring window at step <= 0.
const WINDOW: Nanos = Nanos::from_millis(100);
/// Write completions a window needs to say anything (with one read): without
/// writes, slow reads are not the writes' fault.
const MIN_WRITE_SAMPLES: u32 = 3;
/// Windows without enough samples before the step drifts back towards 0.
const UNKNOWN_BUMP: u32 = 5;
/// A read issued or completed this recently makes writes use the background
/// limit.
const CLOSE_IO: Nanos = Nanos::from_millis(100);
pub const TUNABLES: &[Tunable] = &[
    Tunable {
        key: "wbt_lat_usec",
        default: "2000",
        help: "read latency target, us (or with a unit: 2ms); 0 turns throttling off",
    },
    Tunable {
        key: "write_cache",
        default: "1",
        help: "1 if the device has a volatile write cache: waiting writes wake only when \
               all writes in flight are done",
    },
    Tunable {
        key: "queue_depth",
        default: "0",
        help: "device queue depth the limits derive from; 0 = the device's slots",
    },
    TRIM_MAX_RANGES,
    STATS_WINDOW,
    BAD_LATENCY,
];

pub const INFO: PolicyInfo = PolicyInfo {
    name: "wbt",
    summary: "Linux writeback throttling: write depth stepped down/up by the window's \
              minimum read latency (CoDel-like), reads never throttled",
    tunables: TUNABLES,
    build: |configure| construct(configure, Wbt::new),
};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WbtConfig {
    /// The read latency target; zero turns throttling off.
    pub min_lat: Nanos,
    pub write_cache: bool,
    /// Zero: the device's slots.
    pub queue_depth: u32,
    pub common: CommonConfig,
}

impl Default for WbtConfig {
    fn default() -> Self {
        WbtConfig {
            min_lat: Nanos::from_millis(2),
            write_cache: true,
            queue_depth: 0,
            common: CommonConfig::default(),
        }
    }
}

impl Configurable for WbtConfig {
    fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        match key {
            "wbt_lat_usec" => self.min_lat = parse_duration_in(key, value, Nanos::from_micros(1))?,
            "write_cache" => self.write_cache = parse_int(key, value, 0, 1)? == 1,
            "queue_depth" => self.queue_depth = parse_int(key, value, 0, 65_536)? as u32,
            _ if self.common.set(key, value)? => {}
            _ => return Err(unknown_key(INFO.name, key, TUNABLES)),
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), ConfigError> {
        Ok(())
    }
}

/// Upstream's `rq_depth`: the scale step and the max depth it gives.
#[derive(Clone, Debug)]
struct Depth {
    scale_step: i32,
    max_depth: u32,
    /// The last step up hit the ceiling; no further steps up.
    scaled_max: bool,
    queue_depth: u32,
}

impl Depth {
    /// Recomputes the max depth; true when it cannot grow further.
    fn calc_max_depth(&mut self) -> bool {
        if self.queue_depth == 1 {
            self.max_depth = if self.scale_step > 0 { 1 } else { 2 };
            return self.scale_step <= 0;
        }
        let depth = u64::from(DEFAULT_DEPTH.min(self.queue_depth));
        let mut at_ceiling = false;
        let depth = match self.scale_step {
            s if s > 0 => 1 + ((depth - 1) >> s.min(63)),
            0 => depth,
            s => {
                let ceiling = 3 * u64::from(self.queue_depth) / 4;
                let grown = (depth - 1)
                    .checked_shl(s.unsigned_abs())
                    .unwrap_or(u64::MAX);
                let grown = grown.saturating_add(1);
                if grown > ceiling {
                    at_ceiling = true;
                    ceiling
                } else {
                    grown
                }
            }
        };
        self.max_depth = depth.min(u64::from(u32::MAX)) as u32;
        at_ceiling
    }

    fn scale_up(&mut self) -> bool {
        if self.scaled_max {
            return false;
        }
        self.scale_step -= 1;
        self.scaled_max = self.calc_max_depth();
        true
    }

    fn scale_down(&mut self, hard: bool) -> bool {
        if self.max_depth == 1 {
            return false;
        }
        if self.scale_step < 0 && hard {
            self.scale_step = 0;
        } else {
            self.scale_step += 1;
        }
        self.scaled_max = false;
        self.calc_max_depth();
        true
    }
}

/// What a window's samples say.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Verdict {
    Ok,
    Unknown,
    UnknownWrites,
    Exceeded,
}

/// Throttled requests of one kind (upstream's `rq_wait`): the waiters and
/// what has passed and not completed.
#[derive(Debug, Default)]
struct Waiters {
    queue: VecDeque<Queued>,
    inflight: u32,
}

#[derive(Debug)]
pub struct Wbt {
    config: WbtConfig,
    depth: Depth,
    wb_normal: u32,
    wb_background: u32,
    writes: Waiters,
    trims: Waiters,
    gate: Gate,
    /// End of the monitoring window, when one is running.
    window_end: Option<Nanos>,
    cur_win: Nanos,
    read_samples: u32,
    read_min: Nanos,
    write_samples: u32,
    unknown_cnt: u32,
    /// Dispatch time of the tracked read in the device.
    sync_issue: Option<Nanos>,
    last_read_issue: Nanos,
    last_read_completion: Nanos,
    base: Base,
}

impl Wbt {
    pub fn new(config: WbtConfig) -> Wbt {
        let queue_depth = if config.queue_depth == 0 {
            u32::MAX
        } else {
            config.queue_depth
        };
        let mut wbt = Wbt {
            depth: Depth {
                scale_step: 0,
                max_depth: DEFAULT_DEPTH,
                scaled_max: false,
                queue_depth,
            },
            wb_normal: 0,
            wb_background: 0,
            writes: Waiters::default(),
            trims: Waiters::default(),
            gate: Gate::new(config.common.trim_max_ranges),
            window_end: None,
            cur_win: WINDOW,
            read_samples: 0,
            read_min: Nanos::MAX,
            write_samples: 0,
            unknown_cnt: 0,
            sync_issue: None,
            last_read_issue: Nanos::ZERO,
            last_read_completion: Nanos::ZERO,
            base: Base::new(&config.common),
            config,
        };
        wbt.update_limits();
        wbt
    }

    /// The scale step: > 0 throttled harder, < 0 writes allowed deeper.
    pub fn scale_step(&self) -> i32 {
        self.depth.scale_step
    }

    /// The max depth at the current step.
    pub fn max_depth(&self) -> u32 {
        self.depth.max_depth
    }

    /// The normal and background write limits.
    pub fn limits(&self) -> (u32, u32) {
        (self.wb_normal, self.wb_background)
    }

    fn enabled(&self) -> bool {
        self.wb_normal != 0
    }

    /// Upstream's `wbt_update_limits`: back to step 0 for a new queue depth.
    fn update_limits(&mut self) {
        self.depth.scale_step = 0;
        self.depth.scaled_max = false;
        self.depth.calc_max_depth();
        self.calc_wb_limits();
    }

    fn calc_wb_limits(&mut self) {
        let max = self.depth.max_depth;
        (self.wb_normal, self.wb_background) = if self.config.min_lat == Nanos::ZERO {
            (0, 0)
        } else if max <= 2 {
            (max, 1)
        } else {
            // (max + 1) / 2 and (max + 3) / 4 upstream.
            (max.div_ceil(2), max.div_ceil(4))
        };
    }

    fn close_io(&self, now: Nanos) -> bool {
        now < self.last_read_issue + CLOSE_IO || now < self.last_read_completion + CLOSE_IO
    }

    fn limit(&self, op: Op, now: Nanos) -> u32 {
        if !self.enabled() {
            u32::MAX
        } else if op == Op::Trim || self.close_io(now) {
            self.wb_background
        } else {
            self.wb_normal
        }
    }

    fn waiters_mut(&mut self, op: Op) -> &mut Waiters {
        if op == Op::Trim {
            &mut self.trims
        } else {
            &mut self.writes
        }
    }

    /// A write or trim arrives at the throttle: it passes if nobody waits and
    /// it fits, otherwise it waits.
    fn throttle(&mut self, entry: Queued, now: Nanos) {
        let op = entry.request.op;
        let limit = self.limit(op, now);
        let waiters = self.waiters_mut(op);
        if waiters.queue.is_empty() && waiters.inflight < limit {
            waiters.inflight += 1;
            self.pass(entry, now);
        } else {
            waiters.queue.push_back(entry);
        }
    }

    /// Wakes the waiters of one kind: they pass while they fit.
    fn wake(&mut self, op: Op, now: Nanos) {
        let limit = self.limit(op, now);
        loop {
            let waiters = self.waiters_mut(op);
            if waiters.inflight >= limit {
                return;
            }
            let Some(entry) = waiters.queue.pop_front() else {
                return;
            };
            waiters.inflight += 1;
            self.pass(entry, now);
        }
    }

    fn wake_all(&mut self, now: Nanos) {
        self.wake(Op::Write, now);
        self.wake(Op::Trim, now);
    }

    /// A throttled request passed: on to the device queue; the window starts.
    fn pass(&mut self, entry: Queued, now: Nanos) {
        if self.window_end.is_none() {
            self.arm_window(now);
        }
        self.gate.pass(entry, now);
    }

    /// Upstream's `wbt_rqw_done`: `done` requests of one kind completed.
    fn done(&mut self, op: Op, done: u32, now: Nanos) {
        let enabled = self.enabled();
        let limit = if op == Op::Trim {
            self.wb_background
        } else if self.config.write_cache {
            0
        } else {
            self.wb_normal
        };
        let background = self.wb_background;
        let waiters = self.waiters_mut(op);
        waiters.inflight = waiters.inflight.saturating_sub(done);
        let inflight = waiters.inflight;
        if waiters.queue.is_empty() {
            return;
        }
        let wake =
            !enabled || inflight == 0 || (inflight < limit && limit - inflight >= background / 2);
        if wake {
            self.wake(op, now);
        }
    }

    fn arm_window(&mut self, now: Nanos) {
        self.cur_win = if self.depth.scale_step > 0 {
            let step = (self.depth.scale_step as u64 + 1) << 8;
            Nanos((WINDOW.0 << 4) / step.isqrt())
        } else {
            WINDOW
        };
        self.window_end = Some(now + self.cur_win);
        self.read_samples = 0;
        self.read_min = Nanos::MAX;
        self.write_samples = 0;
    }

    fn latency_exceeded(&self, now: Nanos) -> Verdict {
        let sync_lat = self.sync_issue.map_or(Nanos::ZERO, |t| now - t);
        if sync_lat > self.cur_win || (sync_lat > self.config.min_lat && self.read_samples == 0) {
            return Verdict::Exceeded;
        }
        if self.read_samples < 1 || self.write_samples < MIN_WRITE_SAMPLES {
            let inflight = self.writes.inflight + self.trims.inflight;
            return if self.write_samples > 0 || inflight > 0 {
                Verdict::UnknownWrites
            } else {
                Verdict::Unknown
            };
        }
        if self.read_min > self.config.min_lat {
            return Verdict::Exceeded;
        }
        Verdict::Ok
    }

    fn scale_up(&mut self, now: Nanos) {
        if self.depth.scale_up() {
            self.calc_wb_limits();
            self.unknown_cnt = 0;
            self.wake_all(now);
        }
    }

    fn scale_down(&mut self, hard: bool) {
        if self.depth.scale_down(hard) {
            self.calc_wb_limits();
            self.unknown_cnt = 0;
        }
    }

    /// Upstream's `wb_timer_fn`: judge the window, step, re-arm.
    fn window_fn(&mut self, now: Nanos) {
        let inflight = self.writes.inflight + self.trims.inflight;
        match self.latency_exceeded(now) {
            Verdict::Exceeded => self.scale_down(true),
            Verdict::Ok | Verdict::UnknownWrites => self.scale_up(now),
            Verdict::Unknown => {
                self.unknown_cnt += 1;
                if self.unknown_cnt >= UNKNOWN_BUMP {
                    if self.depth.scale_step > 0 {
                        self.scale_up(now);
                    } else if self.depth.scale_step < 0 {
                        self.scale_down(false);
                    }
                }
            }
        }
        self.window_end = None;
        if self.depth.scale_step != 0 || inflight > 0 {
            self.arm_window(now);
        }
    }

    /// Held reads whose writes have passed, and a flush whose writes have,
    /// go on to the device queue.
    fn release(&mut self, now: Nanos) {
        for read in self.gate.ready_reads() {
            self.gate.push(read.request, now);
        }
        while let Some(write) = self.gate.released_write(now) {
            self.throttle(write, now);
        }
    }
}

impl Policy for Wbt {
    const INFO: PolicyInfo = INFO;

    base_in_field!();

    fn accept(&mut self, request: Request, now: Nanos) {
        let op = request.op;
        let ready = self.gate.arrive(request);
        if op == Op::Read {
            // Reads are never throttled, only held behind writes they overlap.
            self.last_read_issue = now;
            if let Some(read) = ready {
                self.gate.push(read.request, now);
            }
            return;
        }
        if let Some(entry) = ready {
            self.throttle(entry, now);
        }
        if op != Op::Trim {
            self.release(now);
        }
    }

    gate_in_field!();

    /// Trims still waiting at the throttle are cut as well: passing it
    /// later, they would reach the device after the write. One overwritten
    /// whole counts as passed, and is completed unsent.
    fn cut_trims(&mut self, offset: Bytes, len: Bytes, cuts: &mut TrimCuts) {
        let waiting = std::iter::once(&mut self.trims.queue);
        self.trims.inflight += self.gate.cut_trims(waiting, offset, len, cuts);
    }

    /// An elided trim is done as a completed one is.
    fn after_elide(&mut self, now: Nanos) {
        self.done(Op::Trim, 1, now);
    }

    fn prepare(&mut self, now: Nanos, device: DeviceView) {
        if self.config.queue_depth == 0 && device.slots != self.depth.queue_depth {
            self.depth.queue_depth = device.slots.max(1);
            self.update_limits();
            self.wake_all(now);
        }
        self.release(now);
        if !self.writes.queue.is_empty() {
            self.base.stats.class_mut(Op::Write).limited = true;
        }
        if !self.trims.queue.is_empty() {
            self.base.stats.class_mut(Op::Trim).limited = true;
        }
    }

    fn next_command(&mut self, now: Nanos) -> Option<Command> {
        let command = self.gate.next_command(now, &self.base.stats)?;
        if command.op == Op::Read && self.sync_issue.is_none() {
            self.sync_issue = Some(now);
        }
        Some(command)
    }

    fn completed(&mut self, completion: &Completion, now: Nanos) {
        let latency = now - completion.dispatched;
        match completion.op {
            Op::Read => {
                self.last_read_completion = now;
                if self.sync_issue == Some(completion.dispatched) {
                    self.sync_issue = None;
                }
                if self.window_end.is_some() {
                    self.read_samples += 1;
                    self.read_min = self.read_min.min(latency);
                }
            }
            Op::Write | Op::Trim => {
                if self.window_end.is_some() {
                    self.write_samples += 1;
                }
                self.done(completion.op, completion.requests, now);
            }
            Op::Flush => {}
        }
    }

    fn own_timer(&self) -> Option<Nanos> {
        self.window_end
    }

    fn ticked(&mut self, now: Nanos, _ticks: u64) {
        if self.window_end.is_some_and(|t| now >= t) {
            self.window_fn(now);
        }
    }

    fn oldest(&self, op: Op) -> Option<Nanos> {
        let throttled = self
            .writes
            .queue
            .iter()
            .chain(&self.trims.queue)
            .map(|q| &q.request);
        self.gate.oldest(op, throttled)
    }

    fn limit_on_writes(&self) -> Option<WriteLimit> {
        self.enabled().then(|| WriteLimit {
            kind: "wb_normal",
            value: f64::from(self.wb_normal),
            unit: "in flight",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{configured, Bench};
    use crate::scheduler::Scheduler;

    fn wbt(settings: &str) -> Wbt {
        Wbt::new(configured(settings))
    }

    #[test]
    fn depth_steps_halve_down_to_one_and_double_up_to_three_quarters_of_the_queue() {
        let mut d = Depth {
            scale_step: 0,
            max_depth: 0,
            scaled_max: false,
            queue_depth: 32,
        };
        d.calc_max_depth();
        assert_eq!(d.max_depth, 16);
        let downs: Vec<u32> = (0..5)
            .map(|_| {
                d.scale_down(false);
                d.max_depth
            })
            .collect();
        assert_eq!(downs, [8, 4, 2, 1, 1]);
        assert!(!d.scale_down(false), "no step below a depth of 1");
        while d.scale_step > 0 {
            d.scale_up();
        }
        assert!(d.scale_up() && d.max_depth == 24, "31 capped at 3/4 of 32");
        assert!(!d.scale_up(), "at the ceiling");
    }

    /// Every millisecond a read and four writes arrive; reads take
    /// `read_latency` in the device, writes 1 ms.
    fn load(s: &mut Wbt, bench: &mut Bench, from_ms: u64, to_ms: u64, id: &mut u64) {
        for ms in from_ms..to_ms {
            bench.advance(s, Nanos::from_millis(ms));
            for k in 0..5 {
                let op = if k == 0 { Op::Read } else { Op::Write };
                *id += 1;
                let r = Request::new(*id, op, *id << 20, 4096, bench.now);
                bench.submit(s, r);
            }
        }
    }

    #[test]
    fn slow_reads_scale_the_write_depth_down_and_fast_reads_scale_it_back_up() {
        let mut s = wbt("");
        let slow = std::rc::Rc::new(std::cell::Cell::new(true));
        let slow_reads = slow.clone();
        let mut bench = Bench::new(32, move |c| match (c.op, slow_reads.get()) {
            (Op::Read, true) => Nanos::from_millis(5),
            (Op::Read, false) => Nanos::from_micros(200),
            _ => Nanos::from_millis(1),
        });
        let mut id = 0;
        load(&mut s, &mut bench, 0, 450, &mut id);
        assert!(s.scale_step() >= 3, "step {}", s.scale_step());
        assert!(s.max_depth() <= 2, "max depth {}", s.max_depth());
        // Throttled to one write at a time, writes still trickle through.
        let late = bench
            .sent
            .iter()
            .filter(|c| c.dispatched > Nanos::from_millis(400));
        assert!(late.filter(|c| c.op == Op::Write).count() > 10);
        slow.set(false);
        load(&mut s, &mut bench, 450, 1500, &mut id);
        assert!(s.scale_step() <= 0, "step {}", s.scale_step());
        assert!(s.max_depth() >= 16, "max depth {}", s.max_depth());
    }

    #[test]
    fn reads_are_never_throttled_and_writes_stop_at_the_limit() {
        let mut s = wbt("write_cache=0");
        let mut bench = Bench::new(64, |_| Nanos::from_millis(10));
        bench.submit_each(&mut s, Op::Write, 0..40);
        bench.submit_each(&mut s, Op::Read, 40..80);
        let writes = bench.sent.iter().filter(|c| c.op == Op::Write).count();
        let reads = bench.sent.iter().filter(|c| c.op == Op::Read).count();
        // Within 100 ms of start, "competing I/O" holds: the background limit.
        assert_eq!((writes, reads), (4, 40));
        assert_eq!(s.limits(), (8, 4));
        assert!(s.stats().class(Op::Write).limited);
    }

    #[test]
    fn with_a_write_cache_waiting_writes_wake_only_when_all_are_done() {
        let mut s = wbt("");
        let mut bench = Bench::new(64, |c| Nanos::from_millis(1 + c.requests[0].id.0 % 4));
        bench.submit_each(&mut s, Op::Write, 0..12);
        assert_eq!(bench.sent.len(), 4);
        bench.advance(&mut s, Nanos::from_millis(3));
        assert_eq!(bench.sent.len(), 4, "two of four done: nobody woken");
        bench.advance(&mut s, Nanos::from_millis(4));
        assert_eq!(bench.sent.len(), 8, "all done: the next four pass");
    }

    #[test]
    fn zero_latency_target_turns_it_off() {
        let mut s = wbt("wbt_lat_usec=0");
        let mut bench = Bench::new(64, |_| Nanos::from_millis(10));
        bench.submit_each(&mut s, Op::Write, 0..40);
        assert_eq!(bench.sent.len(), 40);
    }
}
