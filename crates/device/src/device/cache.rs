//! The DRAM write cache (`[cache]`): with `write_back`, a write completes
//! once its data is in the cache, and its pages go on to the dies behind it
//! (the destage), owned by no command. The cache holds `size_mib` of data
//! not yet programmed; a write that does not fit waits (the drive throttles)
//! until destaged pages make room, and then completes. A FLUSH waits until
//! the cache is empty, unless the cache is `power_protected`, when it
//! completes at once. With `write_through` writes complete when programmed,
//! as without a cache, and only the FLUSH rule applies. A FUA write (an
//! O_SYNC or O_DSYNC write) skips a cache that is not power protected: it
//! goes to the dies as a write-through write does, and completes when
//! programmed.
//!
//! The destage keeps at most [`DESTAGE_OPS_PER_DIE`] program operations'
//! worth of cached units queued at the dies; the rest wait in the cache,
//! in the order written, and go as programs end. So a host read waits
//! behind a few programs on its die, as behind a drive's background
//! flush, not behind everything the cache holds (with all of it queued
//! at once, random reads beside 4 KiB random writes at depth 32 on
//! consumer-sata waited 88 ms at the median with a 16 MiB cache, 4.8 s
//! with 1 GiB).
//!
//! Simplification: reads are not served from the cache (a read of data
//! still cached reads its last programmed copy, at NAND cost).

use std::cmp::Reverse;
use std::collections::VecDeque;

use iosteer_sched::Nanos;

use super::{micros, Device, UnitWrite};

/// The slot of page tasks that destage the cache: they belong to no command.
pub(super) const DESTAGE_SLOT: u32 = u32::MAX - 1;

/// Program operations (each of a page per plane it programs at once) of
/// destaged data a die may have queued: two, so that a die finishing one
/// finds the next already there and never idles while the cache holds
/// data, and a read queued behind them waits for at most two programs.
pub(super) const DESTAGE_OPS_PER_DIE: u64 = 2;

/// The cache's state.
#[derive(Clone, Debug, Default)]
pub(super) struct Cache {
    /// Bytes cached and not yet programmed, and the most it may hold.
    dirty: u64,
    capacity: u64,
    /// Writes waiting for room, or (FUA) for the cache to empty.
    throttled: VecDeque<UnitWrite>,
    /// Cached units not yet queued at a die, in the order written (unit,
    /// stream), and the units queued at the dies.
    pending: VecDeque<(u64, u8)>,
    destaging: u64,
    /// FLUSH and TRIM commands (slots) waiting for the cache to empty.
    flushes: Vec<u32>,
    trims: Vec<u32>,
    /// A write larger than the whole cache, taken into an empty one (it
    /// would never fit otherwise): it completes once all but the cache's
    /// size of it is programmed, not when its data is in.
    oversized: Option<u32>,
}

impl Cache {
    pub(super) fn new(capacity: u64) -> Cache {
        Cache {
            capacity,
            ..Cache::default()
        }
    }

    fn empty(&self) -> bool {
        self.dirty == 0 && self.throttled.is_empty() && self.trims.is_empty()
    }
}

impl Device {
    /// Takes a write-back write; returns its completion if it fits now.
    pub(super) fn cache_write(&mut self, write: UnitWrite) -> Option<Nanos> {
        // Behind a held TRIM, writes wait too: the TRIM must not unmap them.
        let behind = !self.cache.throttled.is_empty() || !self.cache.trims.is_empty();
        if behind || !self.fits(write.units) {
            self.cache.throttled.push_back(write);
            return None;
        }
        self.admit(write, write.data_in);
        self.admitted_done(&write, write.data_in)
    }

    /// When a write admitted at `at` completes: then, or (larger than the
    /// whole cache) once all but the cache's size of it is programmed.
    fn admitted_done(&mut self, write: &UnitWrite, at: Nanos) -> Option<Nanos> {
        if write.units * self.unit_size <= self.cache.capacity {
            return Some(at);
        }
        self.cache.oversized = Some(write.slot);
        None
    }

    /// Whether a FUA write must wait before it skips the cache, and if so
    /// holds it: behind throttled writes or a held TRIM (it must not
    /// overtake them), or while an older copy of one of its units is cached
    /// (a later destage would map the older copy again). It is then written
    /// through once the cache is empty.
    pub(super) fn fua_waits_for_cache(&mut self, write: UnitWrite) -> bool {
        let units = write.first..write.first + write.units;
        let overlaps = || units.clone().any(|lpn| self.in_dram.holds(lpn as u32));
        let waits = !self.cache.throttled.is_empty()
            || !self.cache.trims.is_empty()
            || (self.cache.dirty > 0 && overlaps());
        if waits {
            self.cache.throttled.push_back(write);
        }
        waits
    }

    /// Whether `units` more fit (a write larger than the whole cache fits
    /// an empty one, or it would never go in; it completes later,
    /// [`Cache::oversized`]).
    fn fits(&self, units: u64) -> bool {
        let bytes = units * self.unit_size;
        self.cache.dirty == 0 || self.cache.dirty + bytes <= self.cache.capacity
    }

    /// Puts a write's units in the cache at `at` and starts destaging them.
    fn admit(&mut self, write: UnitWrite, at: Nanos) {
        self.cache.dirty += write.units * self.unit_size;
        for lpn in write.first..write.first + write.units {
            if !self.sector_mapped() {
                self.in_dram.hold(lpn as u32);
            }
            self.cache.pending.push_back((lpn, write.stream));
        }
        self.queue_destage(at);
    }

    /// Queues cached units at the dies at `at`, up to the destage's share
    /// ([`DESTAGE_OPS_PER_DIE`]).
    fn queue_destage(&mut self, at: Nanos) {
        let per_operation = u64::from(self.planes_per_operation() * self.units_per_page);
        let limit = self.dies.len() as u64 * DESTAGE_OPS_PER_DIE * per_operation;
        self.queue_together(at, |device| {
            while device.cache.destaging < limit {
                let Some((lpn, stream)) = device.cache.pending.pop_front() else {
                    break;
                };
                device.cache.destaging += 1;
                if device.sector_mapped() {
                    device.buffer_unit(lpn as u32, DESTAGE_SLOT, stream, at);
                } else {
                    let d = device.write_die(lpn as u32, at);
                    device.enqueue_page(d, DESTAGE_SLOT, Some((lpn as u32, stream)), (0, 0), at);
                }
            }
        });
    }

    /// A destaged unit (a page, when page-mapped) was programmed at `at`:
    /// throttled writes that now fit go in and complete; an empty cache
    /// releases the FLUSHes.
    pub(super) fn unit_destaged(&mut self, at: Nanos) {
        self.cache.dirty -= self.unit_size;
        self.cache.destaging -= 1;
        if self.cache.dirty <= self.cache.capacity {
            if let Some(slot) = self.cache.oversized.take() {
                self.completions.push(Reverse((at, slot)));
            }
        }
        self.queue_destage(at);
        if self.cache.dirty == 0 {
            for slot in std::mem::take(&mut self.cache.trims) {
                self.run_deferred_trim(slot, at);
            }
        }
        self.admit_throttled(at);
        if self.cache.empty() {
            let done = at + micros(self.config.flush_us);
            for slot in std::mem::take(&mut self.cache.flushes) {
                if self.exclusive_until.is_some() {
                    self.exclusive_until = Some(done);
                }
                self.completions.push(Reverse((done, slot)));
            }
        }
    }

    /// Takes in, in order, the throttled writes that fit at `at`.
    fn admit_throttled(&mut self, at: Nanos) {
        if !self.cache.trims.is_empty() {
            return;
        }
        while let Some(write) = self.cache.throttled.front().copied() {
            if write.fua {
                if self.cache.dirty > 0 {
                    break;
                }
                self.cache.throttled.pop_front();
                let start = at.max(write.data_in);
                if let Some(done) = self.write_through(UnitWrite {
                    data_in: start,
                    ..write
                }) {
                    self.completions.push(Reverse((done, write.slot)));
                }
                continue;
            }
            if !self.fits(write.units) {
                break;
            }
            self.cache.throttled.pop_front();
            let admitted = at.max(write.data_in);
            self.admit(write, admitted);
            if let Some(done) = self.admitted_done(&write, admitted) {
                self.completions.push(Reverse((done, write.slot)));
            }
        }
    }

    /// Whether the TRIM in `slot` must wait for the cache to empty: it
    /// covers cached data, which a later destage would map again (a
    /// sector-mapped drive does not track its cached units, and a write
    /// waiting for room may be of the TRIM's range: both wait). A TRIM of
    /// other data goes at once, at its own cost.
    pub(super) fn defer_trim(&mut self, slot: u32) -> bool {
        if !self.config.cache.writes_back() || self.cache.dirty == 0 {
            return false;
        }
        let requests = self.command(slot).requests.clone();
        let mut units = requests
            .iter()
            .filter_map(|r| self.pages(r.offset.0, r.len.0))
            .flat_map(|(first, last)| first..=last);
        let covers_cached = self.sector_mapped()
            || !self.cache.throttled.is_empty()
            || units.any(|unit| self.in_dram.holds(unit as u32));
        if !covers_cached {
            return false;
        }
        self.cache.trims.push(slot);
        if self.non_queued(iosteer_sched::Op::Trim) {
            self.exclusive_until = Some(Nanos(u64::MAX));
        }
        true
    }

    /// When a FLUSH starting at `start` completes, or `None` while it waits
    /// for the cache to empty (it is then released by [`Device::unit_destaged`]).
    pub(super) fn flush_done(&mut self, slot: u32, start: Nanos) -> Option<Nanos> {
        let cache = &self.config.cache;
        if cache.size_mib > 0 && cache.power_protected {
            return Some(start);
        }
        if !cache.writes_back() || self.cache.empty() {
            return Some(start + micros(self.config.flush_us));
        }
        self.cache.flushes.push(slot);
        if self.non_queued(iosteer_sched::Op::Flush) {
            // Holds the queue until the cache is empty.
            self.exclusive_until = Some(Nanos(u64::MAX));
        }
        None
    }
}
