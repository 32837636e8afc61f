//! What every policy has in common: the three tunables each one takes
//! (`trim_max_ranges`, `stats_window`, `bad_latency`), declared once with
//! their defaults; the statistics and the load ticker each one keeps; and
//! the [`Scheduler`] around a policy's own decisions (`Policy`), written
//! once: the order of the calls, what the statistics see, when to retry.

use crate::config::{bad, parse_duration, parse_int, ConfigError, Tunable};
use crate::policy::{class_pressure, PolicyInfo, Ticker};
use crate::request::{Command, Completion, Dispatch, Op, Request};
use crate::scheduler::{ClassPressure, DeviceView, Pressure, Retry, Scheduler, WriteLimit};
use crate::stats::Stats;
use crate::trim::{TrimCuts, TrimQueue, DEFAULT_MAX_RANGES};
use crate::units::{Bytes, Nanos};

pub const TRIM_MAX_RANGES: Tunable = Tunable {
    key: "trim_max_ranges",
    default: "512",
    help: "most trims coalesced into one command",
};

pub const STATS_WINDOW: Tunable = Tunable {
    key: "stats_window",
    default: "1s",
    help: "length of the rolling percentile window",
};

pub const BAD_LATENCY: Tunable = Tunable {
    key: "bad_latency",
    default: "500ms",
    help: "completions slower than this are counted as too_long",
};

/// The settings behind [`TRIM_MAX_RANGES`], [`STATS_WINDOW`] and
/// [`BAD_LATENCY`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommonConfig {
    pub trim_max_ranges: u32,
    pub stats_window: Nanos,
    pub bad_latency: Nanos,
}

impl Default for CommonConfig {
    fn default() -> Self {
        CommonConfig {
            trim_max_ranges: DEFAULT_MAX_RANGES,
            stats_window: Nanos::from_secs(1),
            bad_latency: Nanos::from_millis(500),
        }
    }
}

impl CommonConfig {
    /// Applies `key` when it is one of the common tunables; `Ok(false)` when
    /// it is not, so the policy can go on to its own keys.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, ConfigError> {
        match key {
            "trim_max_ranges" => self.trim_max_ranges = parse_int(key, value, 1, 65_535)? as u32,
            "stats_window" => {
                self.stats_window = parse_duration(key, value)?;
                if self.stats_window == Nanos::ZERO {
                    return Err(bad(key, value, "a duration above zero, such as 1s"));
                }
            }
            "bad_latency" => self.bad_latency = parse_duration(key, value)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The statistics these settings describe.
    pub fn stats(&self) -> Stats {
        Stats::new(self.stats_window, self.bad_latency)
    }
}

/// The statistics and the load-sampling ticker every policy keeps.
#[derive(Debug)]
pub(crate) struct Base {
    pub(crate) stats: Stats,
    pub(crate) ticker: Ticker,
}

/// Ticks per second, only to sample the load average (every policy samples
/// it alike, so their load figures compare).
pub(crate) const LOAD_TICKS_PER_SECOND: u32 = 200;

impl Base {
    /// Statistics from `common`, the load sampled [`LOAD_TICKS_PER_SECOND`].
    pub(crate) fn new(common: &CommonConfig) -> Base {
        Base::ticking(common, LOAD_TICKS_PER_SECOND)
    }

    /// Statistics from `common`, the load sampled `ticks_per_second` (a
    /// policy whose own timer runs at that rate: netflix's and steer's
    /// `quanta`).
    pub(crate) fn ticking(common: &CommonConfig, ticks_per_second: u32) -> Base {
        Base {
            stats: common.stats(),
            ticker: Ticker::per_second(ticks_per_second),
        }
    }
}

/// [`Policy::base`] and [`Policy::base_mut`] for a policy that keeps its
/// [`Base`] in its field `base`, as every policy does.
macro_rules! base_in_field {
    () => {
        fn base(&self) -> &$crate::policy::common::Base {
            &self.base
        }

        fn base_mut(&mut self) -> &mut $crate::policy::common::Base {
            &mut self.base
        }
    };
}
pub(crate) use base_in_field;

/// A policy's own decisions. Every policy implements this, and gets
/// [`Scheduler`] from it: what each call does around those decisions
/// (counting in the statistics, sampling the load, saying when to dispatch
/// again) is the same for all, so it is written once, below.
pub(crate) trait Policy: Send {
    /// The policy's catalogue entry.
    const INFO: PolicyInfo;

    fn base(&self) -> &Base;
    fn base_mut(&mut self) -> &mut Base;

    /// Queues a request, already counted as queued.
    fn accept(&mut self, request: Request, now: Nanos);

    /// The queue of waiting trims, which elides them (written over, or
    /// sped up); `None` for a policy that sends trims as writes.
    fn trims(&mut self) -> Option<&mut TrimQueue>;

    /// Takes `[offset, offset + len)`, which a write now queued overwrites,
    /// out of the trims waiting (by default those of [`Policy::trims`]),
    /// counting in `cuts` what it took.
    fn cut_trims(&mut self, offset: Bytes, len: Bytes, cuts: &mut TrimCuts) {
        if let Some(trims) = self.trims() {
            trims.cut(offset, len, cuts);
        }
    }

    /// A request completed without the device (by default a trim written
    /// over or sped up; steer also answers reads from queued writes): it is
    /// handed back before anything is sent.
    fn pop_elided(&mut self) -> Option<Request> {
        self.trims()?.pop_elided()
    }

    /// What a policy does once an elided request is counted.
    fn after_elide(&mut self, _now: Nanos) {}

    /// What a policy does before choosing, once the device's slots are
    /// known (release what its throttles let go).
    fn prepare(&mut self, _now: Nanos, _device: DeviceView) {}

    /// The next command for a device with a free slot, or `None` when
    /// nothing may go now.
    fn next_command(&mut self, now: Nanos) -> Option<Command>;

    /// What a policy learns from a completion, already counted.
    fn completed(&mut self, _completion: &Completion, _now: Nanos) {}

    /// Periodic work, once `ticks` load ticks (maybe none) fell due.
    fn ticked(&mut self, _now: Nanos, _ticks: u64) {}

    /// The policy's own next timer, besides the load ticker's.
    fn own_timer(&self) -> Option<Nanos> {
        None
    }

    /// Requests wait that a dispatch may send (by default: any is queued).
    fn has_work(&self) -> bool {
        self.base().stats.queued() > 0
    }

    /// When the oldest request of `op` still waiting for the device was
    /// submitted.
    fn oldest(&self, op: Op) -> Option<Nanos>;

    /// Back-pressure of one class (by default: its statistics and its
    /// oldest waiting request, no rate limiter).
    fn class_pressure(&self, op: Op, now: Nanos) -> ClassPressure {
        class_pressure(&self.base().stats, op, None, self.oldest(op), now)
    }

    /// [`Scheduler::write_limit`].
    fn limit_on_writes(&self) -> Option<WriteLimit> {
        None
    }

    /// [`Scheduler::notes`].
    fn report_notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// [`Scheduler::read_target`].
    fn latency_target(&self) -> Option<Nanos> {
        None
    }
}

impl<P: Policy> Scheduler for P {
    fn name(&self) -> &'static str {
        P::INFO.name
    }

    fn enqueue(&mut self, request: Request, now: Nanos) {
        self.base_mut().stats.on_enqueue(&request, now);
        // A write is newer than every trim queued before it: the range it
        // overwrites leaves those trims, or a trim sent after it would
        // unmap the new data.
        if request.op == Op::Write {
            let mut cuts = TrimCuts::default();
            self.cut_trims(request.offset, request.len, &mut cuts);
            self.base_mut().stats.on_trims_cut(cuts);
        }
        self.accept(request, now);
    }

    fn dispatch(&mut self, now: Nanos, device: DeviceView) -> Option<Dispatch> {
        if let Some(trim) = self.pop_elided() {
            self.base_mut().stats.on_elide(&trim, now);
            self.after_elide(now);
            return Some(Dispatch::CompletedWithoutDevice(trim));
        }
        self.base_mut().stats.device_slots = device.slots;
        self.prepare(now, device);
        if self.base().stats.queued() == 0 || !device.accepts() {
            return None;
        }
        let command = self.next_command(now)?;
        self.base_mut().stats.on_dispatch(&command, now);
        Some(Dispatch::ToDevice(command))
    }

    fn complete(&mut self, completion: &Completion, now: Nanos) -> Retry {
        self.base_mut().stats.on_complete(completion, now);
        self.completed(completion, now);
        Retry::when(self.has_work())
    }

    fn next_timer(&self) -> Option<Nanos> {
        let load = self.base().ticker.next();
        Some(self.own_timer().map_or(load, |t| t.min(load)))
    }

    fn tick(&mut self, now: Nanos) -> Retry {
        let base = self.base_mut();
        let ticks = base.ticker.advance(now);
        if ticks > 0 {
            base.stats.on_tick(now, ticks);
        }
        self.ticked(now, ticks);
        Retry::when(self.has_work())
    }

    fn stats(&self) -> &Stats {
        &self.base().stats
    }

    fn pressure(&self, now: Nanos) -> Pressure {
        Pressure::from_classes(|op| self.class_pressure(op, now))
    }

    fn speed_up_trims(&mut self, bytes: Bytes) {
        if let Some(trims) = self.trims() {
            trims.speed_up(bytes);
        }
    }

    fn write_limit(&self) -> Option<WriteLimit> {
        self.limit_on_writes()
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = self.report_notes();
        notes.extend(trim_cuts_note(&self.base().stats.trim_cuts));
        notes
    }

    fn read_target(&self) -> Option<Nanos> {
        self.latency_target()
    }
}

/// Says how often later writes cut trims that were still waiting, and by
/// how much: those trims complete shorter than they were asked.
fn trim_cuts_note(cuts: &TrimCuts) -> Option<String> {
    let mib = |bytes: Bytes| bytes.0 as f64 / (1u64 << 20) as f64;
    let dropped = match cuts.dropped.0 {
        0 => String::new(),
        _ => format!(
            ", and {:.2} MiB beside a write inside a trim not sent, since one request carries one range",
            mib(cuts.dropped)
        ),
    };
    (cuts.cuts > 0).then(|| {
        format!(
            "writes queued after trims still waiting took their bytes out of them {} times ({:.2} MiB written over{dropped}): those trims completed shorter than asked, and the trim figures count what was sent",
            cuts.cuts,
            mib(cuts.written_over),
        )
    })
}
