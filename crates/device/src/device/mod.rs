//! The timed drive: host interface, controller, channels and dies around the
//! [`Ftl`].
//!
//! A discrete-event model. Each die serves one NAND operation at a time from
//! its own queue; channels and the host link are reserved in time order as
//! the operations that need them come up. [`Device::next_event`] says when
//! something next happens and [`Device::advance`] plays the drive up to a time,
//! handing out the commands finished by then.
//!
//! - Read: each mapped page queues at its die: array read (tR), then the
//!   channel transfer. When the last page is out, the command crosses the host
//!   link. Unmapped pages cost no NAND time.
//! - Write: the data crosses the host link at submission; each page is placed
//!   by the FTL on the least busy die and queues there: channel transfer, then
//!   tPROG. A write completes when its last page is programmed (no write-back
//!   cache).
//! - Garbage collection: the FTL cleans victims in its map at once; the die
//!   then owes the time, page moves (tR + tPROG each) and erases (tBERS). With
//!   `gc.mode = blocking` (NPGC) a die pays a whole victim in one go before
//!   anything queued. With `semi_preemptive` (PGC) it pays one page move or one
//!   erase at a time, and host requests queued at the die may go first as the
//!   die's free-block state allows: state 1 reads and writes, state 2 reads
//!   only, state 3 nothing. A free die with nothing queued pays what it owes.
//! - TRIM and FLUSH take controller time only (see [`crate::config::TrimCost`]).
//!   On SATA they are non-queued: the drive stops accepting, lets its queue
//!   drain, runs the command alone, then accepts again.
//! - Background GC runs only after the host link has been idle for
//!   `background_idle_ms`, one victim per die at a time, until every die has
//!   `high_watermark` free blocks; it is owed and paid like foreground GC.
//!
//! The parts, each in a file of its own:
//!
//! - `host`: command slots, submission and completion, the host link, the
//!   NCQ/NVMe queue and the draining of non-queued TRIM and FLUSH.
//! - `dies`: each die's queue and busy state, the start of its next NAND
//!   operation, channel transfers, and where a write's pages go.
//! - `gc`: foreground and background GC as die time owed and paid, the
//!   semi-preemptive states, merge and suspend.
//! - `precondition`: aging a fresh drive, untimed.
//!
//! This file holds the [`Device`] itself, what it reports, and the event loop
//! ([`Device::next_event`], [`Device::advance`]) that ties the parts together.

mod buffer;
mod cache;
mod dies;
mod dram;
mod gc;
mod host;
mod planes;
mod precondition;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_cache;
#[cfg(test)]
mod tests_planes;
#[cfg(test)]
mod tests_sectors;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use iosteer_sched::{Command, Nanos};

use crate::config::{ConfigError, DeviceConfig};
use crate::ftl::{Ftl, FtlCounters};

use buffer::{OpenGroup, WriteGroup};
use dies::Die;
use host::InFlight;

pub use gc::{GcModeBusy, GcOwed};
pub use host::{Finished, Refused};
pub use precondition::{
    Aging, KeepGoing, Precondition, StartState, StartStateError, AGED_OVERWRITES,
    FAST_AGING_SAMPLES, START_STATE_FORMS, STEADY_MAX_CAPACITY_WRITES, STEADY_TOLERANCE,
    WRITES_BETWEEN_ASKS,
};

/// What the drive did, since it was built or last preconditioned.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceStats {
    pub ftl: FtlCounters,
    pub host_pages_read: u64,
    pub commands: [u64; 4],
    pub errors: u64,
    /// GC victims cleaned while a write waited / while idle.
    pub foreground_victims: u64,
    pub background_victims: u64,
    /// Merge: owed moves a host write made needless; host reads that lent
    /// an owed move their array read.
    pub merged_writes: u64,
    pub merged_reads: u64,
    /// GC operations suspended for a host read.
    pub gc_suspensions: u64,
    /// Bytes the host wrote, and its writes that covered part of a mapping
    /// unit: each programs whole units, with no read of the old data (no
    /// read-modify-write is modelled).
    pub host_bytes_written: u64,
    pub partial_unit_writes: u64,
    /// Host reads of data never written (or trimmed), which no flash read
    /// serves.
    pub unwritten_reads: UnwrittenReads,
    /// Time reads waited for a die busy with other work.
    pub read_waits: ReadWaits,
    /// Each die's busy time.
    pub dies: Vec<DieTime>,
    /// Erases per block over the drive's life (preconditioning included).
    pub wear: Wear,
    /// Bytes per page and per mapping unit, for write amplification in bytes.
    pub page_size: u32,
    pub mapping_unit: u32,
}

/// Host reads that addressed data never written or trimmed: the drive
/// answers those mapping units without a flash read (as drives answer
/// unmapped addresses), so they cost only the command and the link.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct UnwrittenReads {
    /// Reads with at least one such unit.
    pub touching: u64,
    /// Reads of only such units.
    pub wholly: u64,
}

/// Time reads waited for a die busy with other work, by the kind of work
/// the die had started since the read came.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct ReadWaits {
    pub behind_read: Nanos,
    pub behind_program: Nanos,
    /// GC page moves and erases.
    pub behind_gc: Nanos,
}

/// One die's busy time, and the part of it spent on GC.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct DieTime {
    pub busy: Nanos,
    pub gc: Nanos,
}

/// Erase counts per block: the spread shows how evenly the drive wears.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Wear {
    pub min: u32,
    pub mean: f64,
    pub max: u32,
}

impl DeviceStats {
    /// Nothing done yet, on a drive of `dies` dies.
    fn fresh(dies: usize) -> DeviceStats {
        DeviceStats {
            dies: vec![DieTime::default(); dies],
            ..DeviceStats::default()
        }
    }

    /// NAND pages written per host page written (units when sector-mapped).
    pub fn write_amplification(&self) -> f64 {
        self.ftl.write_amplification()
    }

    /// NAND bytes programmed (whole pages, padding included) per byte of the
    /// mapping units the host wrote.
    pub fn write_amplification_bytes(&self) -> f64 {
        self.ftl
            .write_amplification_bytes(self.page_size, self.mapping_unit)
    }
}

impl Wear {
    fn of(erase_counts: impl Iterator<Item = u32>) -> Wear {
        let (mut min, mut max, mut sum, mut n) = (u32::MAX, 0, 0u64, 0u64);
        for erases in erase_counts {
            min = min.min(erases);
            max = max.max(erases);
            sum += u64::from(erases);
            n += 1;
        }
        Wear {
            min: if n == 0 { 0 } else { min },
            mean: sum as f64 / n.max(1) as f64,
            max,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Device {
    config: DeviceConfig,
    ftl: Ftl,
    page_size: u64,
    /// Bytes per mapping unit, and units per page (1: page-mapped).
    unit_size: u64,
    units_per_page: u32,
    /// Sector-mapped write buffer: groups of units (one page program each),
    /// the free ones, each stream's filling group, and how long a partly
    /// filled group waits.
    groups: Vec<WriteGroup>,
    free_groups: Vec<u32>,
    open_groups: Vec<Option<OpenGroup>>,
    t_buffer_flush: Nanos,
    /// How long the host link must be idle before background GC, and how
    /// long a suspended GC operation takes to stop (asked at every event:
    /// converted once).
    t_background_idle: Nanos,
    t_suspend: Nanos,
    /// Die time each plane beyond the first adds to a multi-plane operation.
    t_plane_extra: Nanos,
    /// While a command's pages are queued, dies do not start (multi-plane).
    holding_dies: bool,
    cache: cache::Cache,
    /// Units written and not yet programmed, which reads find in DRAM.
    in_dram: dram::InDram,
    t_read: Nanos,
    t_program: Nanos,
    t_erase: Nanos,
    t_overhead: Nanos,
    t_page_transfer: Nanos,
    link_ps_per_byte: u64,
    dies: Vec<Die>,
    /// Dies whose operation under way ends at the given time.
    die_events: BinaryHeap<Reverse<(Nanos, u32, u32)>>,
    channels: Vec<Nanos>,
    link_free: Nanos,
    /// Commands whose completion time is known.
    completions: BinaryHeap<Reverse<(Nanos, u32)>>,
    /// Commands in the drive, by slot; `free_slots` lists the empty ones.
    slots: Vec<Option<InFlight>>,
    free_slots: Vec<u32>,
    in_flight: u32,
    /// Merge: the die each logical page with an owed move is on, and
    /// whether a host read lent that move its array read.
    pending_moves: HashMap<u32, (u32, bool), gc::PageHash>,
    /// A non-queued command waiting for the queue to drain.
    waiting: Option<Command>,
    /// A non-queued command is running until this time.
    exclusive_until: Option<Nanos>,
    /// When the drive last became idle (no command in it).
    idle_since: Nanos,
    /// What preconditioning did (`None`: a fresh drive).
    aging: Option<Aging>,
    /// Dies where idle GC found nothing to reclaim.
    gc_stuck: Vec<bool>,
    /// When idle GC next starts a victim, while the drive is idle: worked
    /// out after each change (see [`Device::update_idle_gc_start`]).
    idle_gc_start: Option<Nanos>,
    next_die: usize,
    stats: DeviceStats,
}

/// The earlier of two times, either of which may be missing.
/// A write's units, `first..first + units`, on their way to the cache or
/// the dies (`host`, `cache`): the command's slot, its FTL stream, when
/// its data is in, and whether it is FUA.
#[derive(Copy, Clone, Debug)]
struct UnitWrite {
    slot: u32,
    first: u64,
    units: u64,
    stream: u8,
    data_in: Nanos,
    fua: bool,
}

fn earliest(a: Option<Nanos>, b: Option<Nanos>) -> Option<Nanos> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// Microseconds of the configuration as the model's integer nanoseconds.
fn micros(us: f64) -> Nanos {
    Nanos((us * 1e3).round() as u64)
}

impl Device {
    /// A fresh, empty drive.
    pub fn new(config: DeviceConfig) -> Result<Device, ConfigError> {
        config.validate()?;
        let g = &config.geometry;
        let t = &config.timing;
        let dies = g.dies() as usize;
        let page_size = u64::from(g.page_size);
        let mut ftl = Ftl::new(&config);
        ftl.record_moves(gc::merges(&config));
        let mut device = Device {
            ftl,
            page_size,
            unit_size: u64::from(config.ftl.mapping_unit.min(g.page_size)),
            units_per_page: config.units_per_page(),
            groups: Vec::new(),
            free_groups: Vec::new(),
            open_groups: vec![None; config.gc.streams() as usize],
            t_buffer_flush: micros(config.ftl.buffer_flush_us),
            t_background_idle: micros(config.gc.background_idle_ms * 1e3),
            t_suspend: micros(config.gc.suspend_us),
            t_plane_extra: micros(config.multi_plane.extra_us_per_plane),
            holding_dies: false,
            cache: cache::Cache::new(config.cache.bytes()),
            in_dram: dram::InDram::default(),
            t_read: micros(t.page_read_us),
            t_program: micros(t.page_program_us),
            t_erase: micros(t.block_erase_us),
            t_overhead: micros(t.command_overhead_us),
            t_page_transfer: Nanos((page_size as f64 * 1e3 / t.channel_mb_per_s).round() as u64),
            link_ps_per_byte: (1e6 / t.host_link_mb_per_s).round() as u64,
            dies: vec![Die::default(); dies],
            die_events: BinaryHeap::new(),
            channels: vec![Nanos::ZERO; g.channels as usize],
            link_free: Nanos::ZERO,
            completions: BinaryHeap::new(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            in_flight: 0,
            pending_moves: HashMap::default(),
            waiting: None,
            exclusive_until: None,
            idle_since: Nanos::ZERO,
            gc_stuck: vec![false; dies],
            idle_gc_start: None,
            next_die: 0,
            stats: DeviceStats::fresh(dies),
            aging: None,
            config,
        };
        device.update_idle_gc_start();
        Ok(device)
    }

    pub fn config(&self) -> &DeviceConfig {
        &self.config
    }

    pub fn ftl(&self) -> &Ftl {
        &self.ftl
    }

    /// Bytes the host can address.
    pub fn capacity(&self) -> u64 {
        u64::from(self.ftl.logical_units()) * self.unit_size
    }

    pub fn stats(&self) -> DeviceStats {
        DeviceStats {
            ftl: self.ftl.counters,
            wear: Wear::of(self.ftl.erase_counts()),
            page_size: self.page_size as u32,
            mapping_unit: self.unit_size as u32,
            ..self.stats.clone()
        }
    }

    /// When the drive next has something to do: a completion, a die
    /// operation ending, or an idle GC step.
    pub fn next_event(&self) -> Option<Nanos> {
        // Asked at every step of a run: folded pairwise, not through an
        // iterator over an array.
        let completion = self.completions.peek().map(|Reverse((t, _))| *t);
        let die = self.die_events.peek().map(|Reverse((t, _, _))| *t);
        earliest(
            earliest(completion, die),
            earliest(self.next_background_gc(), self.next_buffer_flush()),
        )
    }

    /// Moves the drive to `now`: plays die operations and idle GC, and
    /// appends the commands finished by then, in completion order, to
    /// `finished`.
    pub fn advance(&mut self, now: Nanos, finished: &mut Vec<Finished>) {
        loop {
            // Die work that ends by the next completion may finish a command
            // earlier still, so play the dies up to it first.
            let limit = self
                .completions
                .peek()
                .map_or(now, |Reverse((t, _))| (*t).min(now));
            self.run_dies(limit);
            match self.completions.peek() {
                Some(&Reverse((at, slot))) if at <= now => {
                    self.completions.pop();
                    self.finish_command(slot, at, finished);
                    self.update_idle_gc_start();
                }
                _ => break,
            }
        }
    }

    /// Plays die operations and idle GC up to `now`, in time order; a die
    /// operation ends before an idle GC victim starts at the same time.
    fn run_dies(&mut self, now: Nanos) {
        loop {
            let die_next = self.die_events.peek().map(|Reverse((t, _, _))| *t);
            if let Some(flush) = self.next_buffer_flush() {
                if flush <= now && die_next.is_none_or(|t| flush <= t) {
                    self.flush_timed_out(flush);
                    self.update_idle_gc_start();
                    continue;
                }
            }
            let gc_next = self.next_background_gc();
            match (die_next, gc_next) {
                (Some(t), g) if t <= now && g.is_none_or(|g| t <= g) => {
                    let Reverse((t, d, epoch)) = self.die_events.pop().expect("peeked");
                    if epoch == self.dies[d as usize].epoch {
                        self.finish_operation(d as usize, t);
                        self.update_idle_gc_start();
                    }
                }
                (_, Some(g)) if g <= now => {
                    self.start_background_gc(g);
                    self.update_idle_gc_start();
                }
                _ => return,
            }
        }
    }
}
