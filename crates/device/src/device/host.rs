//! The host interface: command slots, the NCQ/NVMe queue, and the host link.
//!
//! A command takes a slot when it starts and gives it back when it finishes;
//! reads and writes become page tasks at the dies (see `dies`), TRIM and
//! FLUSH take controller time only. A non-queued command (SATA TRIM and
//! FLUSH) is held until the queue drains and then runs alone, so the drive
//! refuses new commands from its arrival until it ends: this is why a large
//! TRIM stalls every read behind it on such a drive.

use std::cmp::Reverse;

use iosteer_sched::{Command, DeviceView, Nanos, Op, Outcome};
use thiserror::Error;

use super::cache::DESTAGE_SLOT;
use super::{micros, Device, UnitWrite};
use crate::config::SECTOR_BYTES;

/// A command in the drive.
#[derive(Clone, Debug)]
pub(super) struct InFlight {
    command: Command,
    outcome: Outcome,
    pages_left: u32,
}

/// A command the drive finished.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finished {
    pub command: Command,
    pub at: Nanos,
    pub outcome: Outcome,
}

/// The drive refused a command: it was full or draining. The scheduler should
/// have seen that in [`Device::view`].
#[derive(Debug, Error)]
#[non_exhaustive]
#[error(
    "the device accepts no command now ({in_flight} of {slots} slots in use, draining: {draining})"
)]
pub struct Refused {
    pub command: Box<Command>,
    pub in_flight: u32,
    pub slots: u32,
    pub draining: bool,
}

impl Device {
    /// What a scheduler may know: slots, commands inside, and whether a
    /// non-queued command holds the queue.
    pub fn view(&self) -> DeviceView {
        DeviceView {
            slots: self.config.interface.queue_depth,
            in_flight: self.in_flight + u32::from(self.waiting.is_some()),
            draining: self.waiting.is_some() || self.exclusive_until.is_some(),
        }
    }

    /// Accepts a command at `now`.
    pub fn submit(&mut self, command: Command, now: Nanos) -> Result<(), Refused> {
        let view = self.view();
        if !view.accepts() {
            return Err(Refused {
                command: Box::new(command),
                in_flight: view.in_flight,
                slots: view.slots,
                draining: view.draining,
            });
        }
        self.run_dies(now);
        if self.non_queued(command.op) && self.in_flight > 0 {
            if command.op == Op::Flush {
                // The queue drains only once the write buffer is programmed.
                self.flush_buffers(now);
            }
            self.waiting = Some(command);
            return Ok(());
        }
        self.start(command, now);
        Ok(())
    }

    /// No command in the drive, none waiting to get in.
    pub(super) fn idle(&self) -> bool {
        self.in_flight == 0 && self.waiting.is_none()
    }

    pub(super) fn non_queued(&self, op: Op) -> bool {
        let i = &self.config.interface;
        match op {
            Op::Trim => !i.queued_trim,
            Op::Flush => !i.queued_flush,
            _ => false,
        }
    }

    fn start(&mut self, command: Command, now: Nanos) {
        let start = now + self.t_overhead;
        let op = command.op;
        self.stats.commands[op.index()] += 1;
        let slot = self.take_slot(command);
        let (outcome, done) = match op {
            Op::Read => self.queue_read(slot, start),
            Op::Write => self.queue_write(slot, start),
            Op::Trim => self.time_trim(slot, start),
            Op::Flush => {
                self.flush_buffers(start);
                (Outcome::Ok, self.flush_done(slot, start))
            }
        };
        if outcome == Outcome::Error {
            self.stats.errors += 1;
        }
        self.in_flight_mut(slot).outcome = outcome;
        if let Some(done) = done {
            if self.non_queued(op) {
                self.exclusive_until = Some(done);
            }
            self.completions.push(Reverse((done, slot)));
        }
    }

    /// Puts `command` in a free slot (a new one if none is free).
    fn take_slot(&mut self, command: Command) -> u32 {
        let slot = self.free_slots.pop().unwrap_or_else(|| {
            self.slots.push(None);
            (self.slots.len() - 1) as u32
        });
        self.slots[slot as usize] = Some(InFlight {
            command,
            outcome: Outcome::Ok,
            pages_left: 0,
        });
        self.in_flight += 1;
        slot
    }

    fn in_flight_mut(&mut self, slot: u32) -> &mut InFlight {
        self.slots[slot as usize]
            .as_mut()
            .expect("a page belongs to a command in the drive")
    }

    pub(super) fn command(&self, slot: u32) -> &Command {
        &self.slots[slot as usize]
            .as_ref()
            .expect("a queued page belongs to a command in the drive")
            .command
    }

    /// Logical units (pages when page-mapped) `[first, last]` a byte range
    /// touches, or `None` past the end.
    pub(super) fn pages(&self, offset: u64, len: u64) -> Option<(u64, u64)> {
        if len == 0 {
            return Some((1, 0));
        }
        let end = offset.checked_add(len)?;
        (end <= self.capacity()).then(|| (offset / self.unit_size, (end - 1) / self.unit_size))
    }

    fn send_over_link(&mut self, ready: Nanos, bytes: u64) -> Nanos {
        let link_start = self.link_free.max(ready);
        let link_time = Nanos(bytes.saturating_mul(self.link_ps_per_byte) / 1000);
        self.link_free = link_start + link_time;
        self.link_free
    }

    /// Queues a read's pages at their dies; returns its completion time now
    /// if no page needs NAND time.
    fn queue_read(&mut self, slot: u32, start: Nanos) -> (Outcome, Option<Nanos>) {
        let request = &self.command(slot).requests[0];
        let (offset, len) = (request.offset.0, request.len.0);
        let Some((first, last)) = self.pages(offset, len) else {
            return (Outcome::Error, Some(start));
        };
        // Multi-plane: the dies start once every page is queued, so a read's
        // pages can pair up.
        let mut unwritten = 0u64;
        let pages = self.queue_together(start, |device| {
            let mut pages = 0;
            // The page being gathered: its die, page, first unit and the
            // request's bytes in it.
            let mut gathering: Option<(usize, u32, u64, u64)> = None;
            let mut send = |device: &mut Device, (d, page, lpn, bytes): (usize, u32, u64, u64)| {
                let bytes = bytes.min(device.page_size) as u32;
                device.lend_read_to_owed_move(lpn as u32);
                device.enqueue_page(d, slot, None, (page, bytes), start);
                pages += 1;
            };
            for lpn in first..=last {
                // A unit not yet programmed is read from DRAM.
                if device.in_dram.holds(lpn as u32) {
                    continue;
                }
                let Some(ppn) = device.ftl.lookup(lpn as u32) else {
                    // Never written (or trimmed): answered without a flash
                    // read, as drives answer unmapped addresses.
                    unwritten += 1;
                    continue;
                };
                // The sectors of the unit the request touches.
                let sector = u64::from(SECTOR_BYTES);
                let unit_start = lpn * device.unit_size;
                let unit_end = unit_start + device.unit_size;
                let (from, to) = (offset.max(unit_start), (offset + len).min(unit_end));
                let bytes = to.div_ceil(sector) * sector - from / sector * sector;
                // Units of one page that follow each other cost one page read.
                let page = device.ftl.page_of(ppn);
                match &mut gathering {
                    Some((_, same, _, gathered)) if *same == page => *gathered += bytes,
                    _ => {
                        let d = device.ftl.die_of(ppn) as usize;
                        if let Some(done) = gathering.replace((d, page, lpn, bytes)) {
                            send(device, done);
                        }
                    }
                }
            }
            if let Some(done) = gathering {
                send(device, done);
            }
            pages
        });
        if unwritten > 0 {
            self.stats.unwritten_reads.touching += 1;
            if unwritten == last - first + 1 {
                self.stats.unwritten_reads.wholly += 1;
            }
        }
        self.in_flight_mut(slot).pages_left = pages;
        if pages == 0 {
            return (Outcome::Ok, Some(self.send_over_link(start, len)));
        }
        (Outcome::Ok, None)
    }

    /// Sends a write's data over the link and queues its pages, each at the
    /// die least busy when the data is in.
    fn queue_write(&mut self, slot: u32, start: Nanos) -> (Outcome, Option<Nanos>) {
        let request = &self.command(slot).requests[0];
        let (offset, len, fua) = (request.offset.0, request.len.0, request.fua);
        let stream = self.ftl.stream_for(request.hint) as u8;
        let Some((first, last)) = self.pages(offset, len) else {
            return (Outcome::Error, Some(start));
        };
        self.stats.host_bytes_written += len;
        if offset % self.unit_size != 0 || (offset + len) % self.unit_size != 0 {
            self.stats.partial_unit_writes += 1;
        }
        let write = UnitWrite {
            slot,
            first,
            units: (first..=last).count() as u64,
            stream,
            data_in: self.send_over_link(start, len),
            fua,
        };
        if self.config.cache.completes_when_cached(fua) {
            return (Outcome::Ok, self.cache_write(write));
        }
        if self.config.cache.writes_back() && self.fua_waits_for_cache(write) {
            return (Outcome::Ok, None);
        }
        (Outcome::Ok, self.write_through(write))
    }

    /// Queues a write's units at the dies (no cache, or a FUA write past
    /// it); returns its completion now if it has no unit.
    pub(super) fn write_through(&mut self, write: UnitWrite) -> Option<Nanos> {
        let UnitWrite {
            slot,
            first,
            units,
            stream,
            data_in,
            ..
        } = write;
        self.in_flight_mut(slot).pages_left = units as u32;
        // Multi-plane: a write's pages queued together can be programmed
        // together.
        self.queue_together(data_in, |device| {
            for lpn in first..first + units {
                if device.sector_mapped() {
                    device.buffer_unit(lpn as u32, slot, stream, data_in);
                    continue;
                }
                // Placed when its die picks it: ask the cache for its map entry now.
                device.ftl.prefetch_entry(lpn as u32);
                let d = device.write_die(lpn as u32, data_in);
                device.enqueue_page(d, slot, Some((lpn as u32, stream)), (0, 0), data_in);
            }
        });
        (units == 0).then_some(data_in)
    }

    /// Unmaps the pages a TRIM covers whole; returns when the controller is
    /// done with it (`None` while a write-back cache still holds writes,
    /// which the TRIM must not be undone by: it then runs once they are
    /// programmed, see [`Device::run_deferred_trim`]).
    fn time_trim(&mut self, slot: u32, start: Nanos) -> (Outcome, Option<Nanos>) {
        if self.defer_trim(slot) {
            return (Outcome::Ok, None);
        }
        self.unmap_trim(slot, start)
    }

    /// Runs a TRIM the cache held back, at `at`.
    pub(super) fn run_deferred_trim(&mut self, slot: u32, at: Nanos) {
        let (outcome, done) = self.unmap_trim(slot, at);
        let done = done.expect("an unmapped TRIM has its time");
        self.in_flight_mut(slot).outcome = outcome;
        if outcome == Outcome::Error {
            self.stats.errors += 1;
        }
        if self.exclusive_until.is_some() {
            self.exclusive_until = Some(done);
        }
        self.completions.push(Reverse((done, slot)));
    }

    fn unmap_trim(&mut self, slot: u32, start: Nanos) -> (Outcome, Option<Nanos>) {
        let mut outcome = Outcome::Ok;
        let requests = self.command(slot).requests.clone();
        for request in &requests {
            let Some((first, last)) = self.pages(request.offset.0, request.len.0) else {
                outcome = Outcome::Error;
                continue;
            };
            // Only units the range covers whole are unmapped.
            let whole_first = first + u64::from(request.offset.0 % self.unit_size != 0);
            let end = request.end();
            let whole_last = if end % self.unit_size == 0 || end == self.capacity() {
                last
            } else {
                last.wrapping_sub(1)
            };
            if whole_last != u64::MAX {
                for lpn in whole_first..=whole_last {
                    let _ = self.ftl.trim(lpn);
                }
            }
        }
        let bytes = requests.iter().map(|r| r.len.0).sum();
        let cost = self.config.trim_cost.micros(requests.len() as u32, bytes);
        (outcome, Some(start + micros(cost)))
    }

    /// A write's page could not be placed anywhere: the command fails.
    pub(super) fn fail_command(&mut self, slot: u32) {
        if slot == DESTAGE_SLOT {
            // The write completed when cached: the loss shows in the stats.
            self.stats.errors += 1;
            return;
        }
        if let Some(entry) = self.slots[slot as usize].as_mut() {
            entry.outcome = Outcome::Error;
        }
    }

    /// One page of the command in `slot` is done at `at`; after its last, a
    /// read's data crosses the link and the command completes.
    pub(super) fn page_done(&mut self, slot: u32, at: Nanos) {
        if slot == DESTAGE_SLOT {
            return self.unit_destaged(at);
        }
        let entry = self.in_flight_mut(slot);
        entry.pages_left -= 1;
        if entry.pages_left > 0 {
            return;
        }
        let read_bytes = (entry.command.op == Op::Read).then(|| entry.command.requests[0].len.0);
        let done = match read_bytes {
            Some(bytes) => self.send_over_link(at, bytes),
            None => at,
        };
        self.completions.push(Reverse((done, slot)));
    }

    /// Hands the command in `slot` out, frees its slot, and starts a
    /// non-queued command once the queue has drained.
    pub(super) fn finish_command(&mut self, slot: u32, at: Nanos, finished: &mut Vec<Finished>) {
        let entry = self.slots[slot as usize]
            .take()
            .expect("a completion has its command");
        self.free_slots.push(slot);
        self.in_flight -= 1;
        let InFlight {
            command, outcome, ..
        } = entry;
        if self.exclusive_until == Some(at) && self.non_queued(command.op) {
            self.exclusive_until = None;
        }
        if command.op == Op::Write {
            // New data may give idle GC something to reclaim again.
            self.gc_stuck.iter_mut().for_each(|s| *s = false);
        }
        finished.push(Finished {
            command,
            at,
            outcome,
        });
        if self.in_flight == 0 {
            match self.waiting.take() {
                Some(next) => self.start(next, at),
                None => self.idle_since = at,
            }
        }
    }
}
