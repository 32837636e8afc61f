//! The timed drive: host interface, controller, channels and dies around the
//! [`Ftl`].
//!
//! Timing is by reservation: every die, channel and the host link has a time
//! at which it is next free, and a command reserves the work it needs when it
//! is submitted, in order. A die serves one NAND operation at a time, so a read
//! to a die that is programming, erasing or moving GC data waits for it, and
//! the wait is charged to what the die was doing. Completion times are known
//! at submission; [`Device::advance`] hands them out in time order.
//!
//! - Read: per page, array read on its die (tR), then the channel transfer;
//!   then the whole command crosses the host link. Unmapped pages cost no NAND
//!   time.
//! - Write: the data crosses the host link, then each page goes to the least
//!   busy die, channel transfer, then tPROG. A write completes when its last
//!   page is programmed (no write-back cache). Foreground GC that the die
//!   needs first (page moves of tR + tPROG each, then tBERS per erase) is
//!   reserved before the program in one go (`gc.mode = blocking`), or paid in
//!   steps by this and the next programs on the die (`paced`).
//! - TRIM and FLUSH take controller time only (see [`crate::config::TrimCost`]).
//!   On SATA they are non-queued: the drive stops accepting, lets its queue
//!   drain, runs the command alone, then accepts again.
//! - Background GC runs only after the host link has been idle for
//!   `background_idle_ms`, one victim per die at a time, until every die has
//!   `high_watermark` free blocks; a command arriving meanwhile waits for the
//!   GC step under way on its die.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use iosteer_sched::{Command, DeviceView, Nanos, Op, Outcome};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use thiserror::Error;

use crate::config::{ConfigError, DeviceConfig, GcMode};
use crate::ftl::{Ftl, FtlCounters, GcWork, HOST_STREAM};

/// What a die last did: a read that waits behind it is charged to this.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum DieWork {
    Read,
    Program,
    Gc,
}

#[derive(Clone, Debug)]
struct DieClock {
    free_at: Nanos,
    last: DieWork,
    busy: Nanos,
    gc_busy: Nanos,
    /// Paced GC: die time still owed for victims already cleaned in the map,
    /// and what each host program pays of it.
    gc_debt: Nanos,
    gc_share: Nanos,
    /// End of the last GC work on the die's timeline.
    gc_until: Nanos,
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
#[error(
    "the device accepts no command now ({in_flight} of {slots} slots in use, draining: {draining})"
)]
pub struct Refused {
    pub command: Box<Command>,
    pub in_flight: u32,
    pub slots: u32,
    pub draining: bool,
}

/// How to age a fresh drive (see [`Device::precondition`]).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Precondition {
    /// Fraction of the logical space written sequentially first.
    pub fill: f64,
    /// Random single-page overwrites of the filled space, in multiples of the
    /// logical capacity.
    pub overwrite: f64,
    pub seed: u64,
}

impl Default for Precondition {
    /// Full, then twice the capacity in random overwrites: an aged, fragmented
    /// drive.
    fn default() -> Self {
        Precondition {
            fill: 1.0,
            overwrite: 2.0,
            seed: 1,
        }
    }
}

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
    /// Time reads waited for a die busy with a host program, with GC (page
    /// moves and erases), or with other reads.
    pub read_wait_behind_program: Nanos,
    pub read_wait_behind_gc: Nanos,
    pub read_wait_behind_read: Nanos,
    /// Busy time of each die, and the part spent on GC.
    pub die_busy: Vec<Nanos>,
    pub die_gc_busy: Vec<Nanos>,
    /// Erases per block over the drive's life (preconditioning included).
    pub wear: Wear,
}

/// Erase counts per block: the spread shows how evenly the drive wears.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Wear {
    pub min: u32,
    pub mean: f64,
    pub max: u32,
}

impl DeviceStats {
    /// NAND pages written per host page written.
    pub fn write_amplification(&self) -> f64 {
        self.ftl.write_amplification()
    }
}

#[derive(Clone, Debug)]
pub struct Device {
    config: DeviceConfig,
    ftl: Ftl,
    page_size: u64,
    t_read: Nanos,
    t_program: Nanos,
    t_erase: Nanos,
    t_overhead: Nanos,
    t_page_transfer: Nanos,
    link_ps_per_byte: u64,
    dies: Vec<DieClock>,
    channels: Vec<Nanos>,
    link_free: Nanos,
    completions: BinaryHeap<Reverse<(Nanos, u64)>>,
    in_flight: Vec<(u64, Command, Outcome)>,
    next_tag: u64,
    /// A non-queued command waiting for the queue to drain.
    waiting: Option<Command>,
    /// A non-queued command is running until this time.
    exclusive_until: Option<Nanos>,
    /// When the drive last became idle (no command in it).
    idle_since: Nanos,
    /// Dies where idle GC found nothing to reclaim.
    gc_stuck: Vec<bool>,
    next_die: usize,
    stats: DeviceStats,
}

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
        Ok(Device {
            ftl: Ftl::new(&config),
            page_size,
            t_read: micros(t.page_read_us),
            t_program: micros(t.page_program_us),
            t_erase: micros(t.block_erase_us),
            t_overhead: micros(t.command_overhead_us),
            t_page_transfer: Nanos((page_size as f64 * 1e3 / t.channel_mb_per_s).round() as u64),
            link_ps_per_byte: (1e6 / t.host_link_mb_per_s).round() as u64,
            dies: vec![
                DieClock {
                    free_at: Nanos::ZERO,
                    last: DieWork::Read,
                    busy: Nanos::ZERO,
                    gc_busy: Nanos::ZERO,
                    gc_debt: Nanos::ZERO,
                    gc_share: Nanos::ZERO,
                    gc_until: Nanos::ZERO,
                };
                dies
            ],
            channels: vec![Nanos::ZERO; g.channels as usize],
            link_free: Nanos::ZERO,
            completions: BinaryHeap::new(),
            in_flight: Vec::new(),
            next_tag: 0,
            waiting: None,
            exclusive_until: None,
            idle_since: Nanos::ZERO,
            gc_stuck: vec![false; dies],
            next_die: 0,
            stats: DeviceStats {
                die_busy: vec![Nanos::ZERO; dies],
                die_gc_busy: vec![Nanos::ZERO; dies],
                ..DeviceStats::default()
            },
            config,
        })
    }

    pub fn config(&self) -> &DeviceConfig {
        &self.config
    }

    pub fn ftl(&self) -> &Ftl {
        &self.ftl
    }

    /// Bytes the host can address.
    pub fn capacity(&self) -> u64 {
        u64::from(self.ftl.logical_pages()) * self.page_size
    }

    pub fn stats(&self) -> DeviceStats {
        let mut stats = self.stats.clone();
        stats.ftl = self.ftl.counters;
        for (i, die) in self.dies.iter().enumerate() {
            stats.die_busy[i] = die.busy;
            stats.die_gc_busy[i] = die.gc_busy;
        }
        let (mut min, mut max, mut sum, mut n) = (u32::MAX, 0, 0u64, 0u64);
        for erases in self.ftl.erase_counts() {
            min = min.min(erases);
            max = max.max(erases);
            sum += u64::from(erases);
            n += 1;
        }
        stats.wear = Wear {
            min: if n == 0 { 0 } else { min },
            mean: sum as f64 / n.max(1) as f64,
            max,
        };
        stats
    }

    /// What a scheduler may know: slots, commands inside, and whether a
    /// non-queued command holds the queue.
    pub fn view(&self) -> DeviceView {
        DeviceView {
            slots: self.config.interface.queue_depth,
            in_flight: self.in_flight.len() as u32 + u32::from(self.waiting.is_some()),
            draining: self.waiting.is_some() || self.exclusive_until.is_some(),
        }
    }

    /// Ages the drive without timing it: writes `fill` of the logical space in
    /// order, overwrites random pages of it `overwrite` times its size, then
    /// lets idle GC refill every die to the high watermark. Counters start
    /// afresh; wear is kept.
    pub fn precondition(&mut self, plan: Precondition) -> Result<(), crate::ftl::FtlError> {
        let dies = self.ftl.dies();
        let filled = (f64::from(self.ftl.logical_pages()) * plan.fill.clamp(0.0, 1.0)) as u64;
        for lpn in 0..filled {
            self.ftl
                .write(lpn, (lpn % u64::from(dies)) as u32, HOST_STREAM)?;
        }
        if filled > 0 {
            let mut rng = SmallRng::seed_from_u64(plan.seed);
            let overwrites = (filled as f64 * plan.overwrite.max(0.0)) as u64;
            for i in 0..overwrites {
                let lpn = rng.random_range(0..filled);
                self.ftl
                    .write(lpn, (i % u64::from(dies)) as u32, HOST_STREAM)?;
            }
        }
        let ppb = self.ftl.pages_per_block();
        for die in 0..dies {
            while self.ftl.free_blocks(die) < self.config.gc.high_watermark {
                match self.ftl.collect(die)? {
                    Some(work) if work.pages_moved < work.blocks_erased * ppb => {}
                    _ => break,
                }
            }
        }
        self.ftl.reset_counters();
        self.stats = DeviceStats {
            die_busy: vec![Nanos::ZERO; dies as usize],
            die_gc_busy: vec![Nanos::ZERO; dies as usize],
            ..DeviceStats::default()
        };
        for die in &mut self.dies {
            die.busy = Nanos::ZERO;
            die.gc_busy = Nanos::ZERO;
        }
        Ok(())
    }

    fn non_queued(&self, op: Op) -> bool {
        let i = &self.config.interface;
        match op {
            Op::Trim => !i.queued_trim,
            Op::Flush => !i.queued_flush,
            _ => false,
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
        self.run_background_gc(now);
        if self.non_queued(command.op) && !self.in_flight.is_empty() {
            self.waiting = Some(command);
            return Ok(());
        }
        self.start(command, now);
        Ok(())
    }

    fn start(&mut self, command: Command, now: Nanos) {
        let start = now + self.t_overhead;
        let (done, outcome) = match command.op {
            Op::Read => self.time_read(&command, start),
            Op::Write => self.time_write(&command, start),
            Op::Trim => self.time_trim(&command, start),
            Op::Flush => (start + micros(self.config.flush_us), Outcome::Ok),
        };
        if self.non_queued(command.op) {
            self.exclusive_until = Some(done);
        }
        self.stats.commands[command.op.index()] += 1;
        if outcome == Outcome::Error {
            self.stats.errors += 1;
        }
        let tag = self.next_tag;
        self.next_tag += 1;
        self.completions.push(Reverse((done, tag)));
        self.in_flight.push((tag, command, outcome));
    }

    /// Logical pages `[first, last]` a byte range touches, or `None` past the end.
    fn pages(&self, offset: u64, len: u64) -> Option<(u64, u64)> {
        if len == 0 {
            return Some((1, 0));
        }
        let end = offset.checked_add(len)?;
        (end <= self.capacity()).then(|| (offset / self.page_size, (end - 1) / self.page_size))
    }

    fn link_time(&self, bytes: u64) -> Nanos {
        Nanos(bytes.saturating_mul(self.link_ps_per_byte) / 1000)
    }

    fn channel_of(&self, die: usize) -> usize {
        die % self.channels.len()
    }

    fn time_read(&mut self, command: &Command, start: Nanos) -> (Nanos, Outcome) {
        let request = &command.requests[0];
        let Some((first, last)) = self.pages(request.offset.0, request.len.0) else {
            return (start, Outcome::Error);
        };
        let mut ready = start;
        for lpn in first..=last {
            let Some(ppn) = self.ftl.lookup(lpn as u32) else {
                continue;
            };
            let d = self.ftl.die_of(ppn) as usize;
            let die = &mut self.dies[d];
            // The part of the wait that GC work occupies, then the rest by
            // what the die does last.
            let waited = die.free_at - start;
            let behind_gc = die.gc_until.min(die.free_at) - start;
            self.stats.read_wait_behind_gc += behind_gc;
            let rest = waited - behind_gc;
            match die.last {
                DieWork::Program => self.stats.read_wait_behind_program += rest,
                DieWork::Gc => self.stats.read_wait_behind_gc += rest,
                DieWork::Read => self.stats.read_wait_behind_read += rest,
            }
            let read_done = die.free_at.max(start) + self.t_read;
            let c = self.channel_of(d);
            let out = self.channels[c].max(read_done) + self.t_page_transfer;
            self.channels[c] = out;
            let die = &mut self.dies[d];
            die.busy += out - die.free_at.max(start);
            die.free_at = out;
            die.last = DieWork::Read;
            ready = ready.max(out);
            self.stats.host_pages_read += 1;
        }
        let link_start = self.link_free.max(ready);
        self.link_free = link_start + self.link_time(request.len.0);
        (self.link_free, Outcome::Ok)
    }

    /// The die whose queue of work ends first, scanning from a rotating start
    /// so ties spread.
    fn least_busy_die(&mut self) -> usize {
        let n = self.dies.len();
        let start = self.next_die;
        self.next_die = (start + 1) % n;
        (0..n)
            .map(|i| (start + i) % n)
            .min_by_key(|d| self.dies[*d].free_at)
            .expect("a drive has dies")
    }

    /// Writes `lpn` on the least busy die, or on the next ones if that die is
    /// full of valid data.
    fn place(&mut self, lpn: u64) -> Option<(usize, crate::ftl::Placed)> {
        let first = self.least_busy_die();
        let n = self.dies.len();
        (0..n).map(|i| (first + i) % n).find_map(|d| {
            self.ftl
                .write(lpn, d as u32, HOST_STREAM)
                .ok()
                .map(|placed| (d, placed))
        })
    }

    fn time_write(&mut self, command: &Command, start: Nanos) -> (Nanos, Outcome) {
        let request = &command.requests[0];
        let Some((first, last)) = self.pages(request.offset.0, request.len.0) else {
            return (start, Outcome::Error);
        };
        let link_start = self.link_free.max(start);
        let data_in = link_start + self.link_time(request.len.0);
        self.link_free = data_in;
        let mut done = data_in;
        for lpn in first..=last {
            let Some((d, placed)) = self.place(lpn) else {
                return (done, Outcome::Error);
            };
            match self.config.gc.mode {
                GcMode::Blocking => self.reserve_gc(d, placed.gc, start, false),
                GcMode::Paced => {
                    self.owe_gc(d, placed.gc);
                    if self.ftl.free_blocks(d as u32) < self.config.gc.critical_watermark {
                        self.pay_all_gc(d, start);
                    } else {
                        self.pay_gc_step(d, start);
                    }
                }
            }
            let c = self.channel_of(d);
            let transfer = self.channels[c].max(data_in).max(self.dies[d].free_at);
            let loaded = transfer + self.t_page_transfer;
            self.channels[c] = loaded;
            let die = &mut self.dies[d];
            let programmed = loaded + self.t_program;
            die.busy += programmed - transfer;
            die.free_at = programmed;
            die.last = DieWork::Program;
            done = done.max(programmed);
        }
        (done, Outcome::Ok)
    }

    fn time_trim(&mut self, command: &Command, start: Nanos) -> (Nanos, Outcome) {
        let mut outcome = Outcome::Ok;
        for request in &command.requests {
            let Some((first, last)) = self.pages(request.offset.0, request.len.0) else {
                outcome = Outcome::Error;
                continue;
            };
            // Only pages the range covers whole are unmapped.
            let whole_first = first + u64::from(request.offset.0 % self.page_size != 0);
            let end = request.end();
            let whole_last = if end % self.page_size == 0 || end == self.capacity() {
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
        let cost = self
            .config
            .trim_cost
            .micros(command.requests.len() as u32, command.bytes().0);
        (start + micros(cost), outcome)
    }

    fn gc_cost(&self, work: GcWork) -> Nanos {
        Nanos(
            u64::from(work.pages_moved) * (self.t_read.0 + self.t_program.0)
                + u64::from(work.blocks_erased) * self.t_erase.0,
        )
    }

    /// Paced GC: adds a cleaning's cost to die `d`'s debt, to be paid over
    /// the pages it freed.
    fn owe_gc(&mut self, d: usize, work: GcWork) {
        if work.is_empty() {
            return;
        }
        let cost = self.gc_cost(work);
        let freed = (u64::from(work.blocks_erased) * u64::from(self.ftl.pages_per_block()))
            .saturating_sub(u64::from(work.pages_moved))
            .max(1);
        let die = &mut self.dies[d];
        die.gc_debt += cost;
        die.gc_share = die.gc_share.max(Nanos(die.gc_debt.0.div_ceil(freed)));
        self.stats.foreground_victims += u64::from(work.blocks_erased);
    }

    /// Paced GC: before a host program on die `d`, pays one step of its debt.
    fn pay_gc_step(&mut self, d: usize, from: Nanos) {
        let die = &mut self.dies[d];
        if die.gc_debt == Nanos::ZERO {
            die.gc_share = Nanos::ZERO;
            return;
        }
        let step = die.gc_share.min(die.gc_debt);
        die.gc_debt = die.gc_debt - step;
        die.free_at = die.free_at.max(from) + step;
        die.gc_until = die.free_at;
        die.busy += step;
        die.gc_busy += step;
        die.last = DieWork::Gc;
    }

    /// Paced GC below the critical watermark: the die pays all it owes now.
    fn pay_all_gc(&mut self, d: usize, from: Nanos) {
        let die = &mut self.dies[d];
        die.gc_share = die.gc_debt;
        self.pay_gc_step(d, from);
    }

    /// Puts GC work on die `d`'s timeline, from `from` or when the die frees.
    fn reserve_gc(&mut self, d: usize, work: GcWork, from: Nanos, background: bool) {
        if work.is_empty() {
            return;
        }
        let cost = self.gc_cost(work);
        let die = &mut self.dies[d];
        die.free_at = die.free_at.max(from) + cost;
        die.gc_until = die.free_at;
        die.busy += cost;
        die.gc_busy += cost;
        die.last = DieWork::Gc;
        let victims = u64::from(work.blocks_erased);
        if background {
            self.stats.background_victims += victims;
        } else {
            self.stats.foreground_victims += victims;
        }
    }

    /// When the drive next has something to do: a completion, or an idle GC
    /// step.
    pub fn next_event(&self) -> Option<Nanos> {
        let completion = self.completions.peek().map(|Reverse((t, _))| *t);
        let gc = self.next_background_gc();
        match (completion, gc) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn idle(&self) -> bool {
        self.in_flight.is_empty() && self.waiting.is_none()
    }

    fn needs_gc(&self, d: usize) -> bool {
        !self.gc_stuck[d] && self.ftl.free_blocks(d as u32) < self.config.gc.high_watermark
    }

    /// The start of the next idle GC step, if the drive is idle and needs one.
    fn next_background_gc(&self) -> Option<Nanos> {
        if !self.idle() {
            return None;
        }
        let after_idle = self.idle_since + micros(self.config.gc.background_idle_ms * 1e3);
        let link_idle =
            after_idle.max(self.link_free + micros(self.config.gc.background_idle_ms * 1e3));
        (0..self.dies.len())
            .filter(|d| self.needs_gc(*d))
            .map(|d| self.dies[d].free_at.max(link_idle))
            .min()
    }

    /// Runs the idle GC steps that start by `now`. Each step reserves its
    /// die, so the next one starts later, or no die needs GC any more.
    fn run_background_gc(&mut self, now: Nanos) {
        while let Some(at) = self.next_background_gc() {
            if at > now {
                break;
            }
            let d = (0..self.dies.len())
                .filter(|d| self.needs_gc(*d))
                .min_by_key(|d| self.dies[*d].free_at)
                .expect("a die needs GC");
            let ppb = u64::from(self.ftl.pages_per_block());
            match self.ftl.collect(d as u32) {
                Ok(Some(work)) => {
                    self.reserve_gc(d, work, at, true);
                    // A FIFO victim full of valid data frees nothing.
                    if u64::from(work.pages_moved) >= u64::from(work.blocks_erased) * ppb {
                        self.gc_stuck[d] = true;
                    }
                }
                _ => self.gc_stuck[d] = true,
            }
        }
    }

    /// Moves the drive to `now`: runs due idle GC and appends the commands
    /// finished by then, in completion order, to `finished`.
    pub fn advance(&mut self, now: Nanos, finished: &mut Vec<Finished>) {
        loop {
            self.run_background_gc(now);
            let Some(&Reverse((at, tag))) = self.completions.peek() else {
                break;
            };
            if at > now {
                break;
            }
            self.completions.pop();
            let index = self
                .in_flight
                .iter()
                .position(|(t, _, _)| *t == tag)
                .expect("a completion has its command");
            let (_, command, outcome) = self.in_flight.swap_remove(index);
            if self.exclusive_until == Some(at) && self.non_queued(command.op) {
                self.exclusive_until = None;
            }
            if command.op == Op::Write {
                self.gc_stuck.iter_mut().for_each(|s| *s = false);
            }
            finished.push(Finished {
                command,
                at,
                outcome,
            });
            if self.in_flight.is_empty() {
                match self.waiting.take() {
                    Some(next) => self.start(next, at),
                    None => self.idle_since = at,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GcMode;
    use iosteer_sched::Request;

    fn small_sata() -> Device {
        let mut c = DeviceConfig::preset("consumer-sata").unwrap();
        c.geometry.blocks_per_plane = 64;
        c.gc.high_watermark = 8;
        c.over_provisioning = 0.2;
        Device::new(c).unwrap()
    }

    fn cmd(id: u64, op: Op, offset: u64, len: u64, now: Nanos) -> Command {
        Command::single(Request::new(id, op, offset, len, now), now)
    }

    /// Advances `d` until it accepts a command; returns the time then.
    fn wait_for_a_slot(d: &mut Device, mut now: Nanos, done: &mut Vec<Finished>) -> Nanos {
        while !d.view().accepts() {
            let t = d.next_event().unwrap();
            d.advance(t, done);
            now = now.max(t);
        }
        now
    }

    fn run_until_idle(device: &mut Device) -> Vec<Finished> {
        let mut done = Vec::new();
        while let Some(t) = device.next_event() {
            if device.idle() {
                break;
            }
            device.advance(t, &mut done);
        }
        done
    }

    #[test]
    fn a_read_of_unwritten_space_costs_no_nand_time() {
        let mut d = small_sata();
        d.submit(cmd(1, Op::Read, 0, 16384, Nanos::ZERO), Nanos::ZERO)
            .unwrap();
        let done = run_until_idle(&mut d);
        assert_eq!(done.len(), 1);
        assert_eq!(d.stats().host_pages_read, 0);
        // 20 us overhead + 16 KiB over a 550 MB/s link (~30 us).
        assert!(done[0].at < Nanos::from_micros(60), "{:?}", done[0].at);
    }

    #[test]
    fn a_written_page_reads_back_with_nand_time() {
        let mut d = small_sata();
        d.submit(cmd(1, Op::Write, 0, 16384, Nanos::ZERO), Nanos::ZERO)
            .unwrap();
        let write = run_until_idle(&mut d);
        assert!(
            write[0].at > Nanos::from_micros(650),
            "a program takes tPROG"
        );
        let t = write[0].at;
        d.submit(cmd(2, Op::Read, 0, 16384, t), t).unwrap();
        let read = run_until_idle(&mut d);
        let latency = read[0].at - t;
        assert!(
            latency >= Nanos::from_micros(60 + 40) && latency < Nanos::from_micros(200),
            "{latency:?}"
        );
        assert_eq!(d.stats().host_pages_read, 1);
    }

    #[test]
    fn a_read_behind_a_program_on_its_die_waits_for_it() {
        let mut c = DeviceConfig::preset("consumer-sata").unwrap();
        c.geometry.channels = 1;
        c.geometry.blocks_per_plane = 64;
        c.gc.high_watermark = 8;
        c.over_provisioning = 0.2;
        let mut d = Device::new(c).unwrap();
        d.submit(cmd(1, Op::Write, 0, 16384, Nanos::ZERO), Nanos::ZERO)
            .unwrap();
        let t = run_until_idle(&mut d)[0].at;
        d.submit(cmd(2, Op::Write, 16384, 16384, t), t).unwrap();
        d.submit(cmd(3, Op::Read, 0, 16384, t), t).unwrap();
        let done = run_until_idle(&mut d);
        let read = done.iter().find(|f| f.command.op == Op::Read).unwrap();
        assert!(
            read.at - t > Nanos::from_micros(650),
            "waited behind the program"
        );
        assert!(d.stats().read_wait_behind_program > Nanos::from_micros(500));
    }

    #[test]
    fn a_non_queued_trim_drains_the_queue_then_holds_it() {
        let mut d = small_sata();
        for i in 0..4 {
            d.submit(
                cmd(i, Op::Write, i * 16384, 16384, Nanos::ZERO),
                Nanos::ZERO,
            )
            .unwrap();
        }
        d.submit(cmd(9, Op::Trim, 0, 65536, Nanos::ZERO), Nanos::ZERO)
            .unwrap();
        assert!(d.view().draining, "the trim waits for the queue to drain");
        assert!(!d.view().accepts());
        assert!(d
            .submit(cmd(10, Op::Read, 0, 4096, Nanos::ZERO), Nanos::ZERO)
            .is_err());
        let mut done = Vec::new();
        let mut writes_done = Nanos::ZERO;
        while let Some(t) = d.next_event() {
            d.advance(t, &mut done);
            if let Some(last) = done
                .iter()
                .filter(|f| f.command.op == Op::Write)
                .map(|f| f.at)
                .max()
            {
                writes_done = last;
            }
            if done.iter().any(|f| f.command.op == Op::Trim) {
                break;
            }
            if done.len() == 4 {
                assert!(d.view().draining, "the trim runs alone and holds the queue");
            }
        }
        let trim = done.iter().find(|f| f.command.op == Op::Trim).unwrap();
        assert!(done
            .iter()
            .filter(|f| f.command.op == Op::Write)
            .all(|f| f.at <= writes_done));
        assert!(
            trim.at >= writes_done + Nanos::from_micros(2000),
            "the trim starts after the drain"
        );
        assert!(!d.view().draining && d.view().accepts());
        assert_eq!(d.ftl().lookup(0), None, "trimmed");
    }

    #[test]
    fn a_queued_trim_does_not_drain() {
        let mut d = Device::new(DeviceConfig::preset("enterprise-nvme").unwrap()).unwrap();
        d.submit(cmd(1, Op::Write, 0, 16384, Nanos::ZERO), Nanos::ZERO)
            .unwrap();
        d.submit(cmd(2, Op::Trim, 1 << 20, 65536, Nanos::ZERO), Nanos::ZERO)
            .unwrap();
        assert!(!d.view().draining);
        assert_eq!(d.view().in_flight, 2);
    }

    #[test]
    fn out_of_range_commands_fail_without_panicking() {
        let mut d = small_sata();
        let cap = d.capacity();
        d.submit(cmd(1, Op::Read, cap, 4096, Nanos::ZERO), Nanos::ZERO)
            .unwrap();
        d.submit(
            cmd(2, Op::Write, u64::MAX - 10, 4096, Nanos::ZERO),
            Nanos::ZERO,
        )
        .unwrap();
        let done = run_until_idle(&mut d);
        assert!(done.iter().all(|f| f.outcome == Outcome::Error));
        assert_eq!(d.stats().errors, 2);
    }

    #[test]
    fn idle_gc_refills_the_pool_only_after_the_idle_time() {
        let mut d = small_sata();
        d.precondition(Precondition::default()).unwrap();
        let pages = 2048u64;
        let mut now = Nanos::ZERO;
        let mut done = Vec::new();
        for i in 0..pages {
            now = wait_for_a_slot(&mut d, now, &mut done);
            d.submit(
                cmd(i, Op::Write, (i * 7919 % 4000) * 16384, 16384, now),
                now,
            )
            .unwrap();
        }
        done.extend(run_until_idle(&mut d));
        let low = d.ftl().total_free_blocks();
        let idle_at = done.iter().map(|f| f.at).max().unwrap();
        assert!(low < 8 * 8, "writes used the pool ({low} free)");
        // Nothing happens before 100 ms of idleness.
        d.advance(idle_at + Nanos::from_millis(99), &mut done);
        assert_eq!(d.ftl().total_free_blocks(), low);
        assert_eq!(d.stats().background_victims, 0);
        while let Some(t) = d.next_event() {
            d.advance(t, &mut done);
        }
        assert_eq!(
            d.ftl().total_free_blocks(),
            8 * 8,
            "refilled to the high watermark"
        );
        assert!(d.stats().background_victims > 0);
        d.ftl().check_invariants().unwrap();
    }

    /// Worst read latency while random writes force foreground GC.
    fn worst_read_under_gc(mode: GcMode) -> Nanos {
        let mut c = DeviceConfig::preset("consumer-sata").unwrap();
        c.geometry.blocks_per_plane = 64;
        c.gc.high_watermark = 5;
        c.gc.mode = mode;
        c.over_provisioning = 0.2;
        let mut d = Device::new(c).unwrap();
        d.precondition(Precondition::default()).unwrap();
        let pages = d.capacity() / 16384;
        let (mut now, mut worst, mut done) = (Nanos::ZERO, Nanos::ZERO, Vec::new());
        for i in 0..6000u64 {
            now = wait_for_a_slot(&mut d, now, &mut done);
            let op = if i % 4 == 0 { Op::Read } else { Op::Write };
            d.submit(cmd(i, op, (i * 7919 % pages) * 16384, 16384, now), now)
                .unwrap();
            for f in done.drain(..).filter(|f| f.command.op == Op::Read) {
                worst = worst.max(f.at - f.command.dispatched);
            }
        }
        assert!(d.stats().foreground_victims > 0, "GC ran");
        worst
    }

    #[test]
    fn paced_gc_bounds_a_reads_wait_to_one_step() {
        let blocking = worst_read_under_gc(GcMode::Blocking);
        let paced = worst_read_under_gc(GcMode::Paced);
        assert!(
            paced.0 * 3 < blocking.0,
            "paced {paced:?} vs blocking {blocking:?}"
        );
    }

    #[test]
    fn idle_fifo_gc_stops_when_victims_are_full_of_valid_data() {
        let mut c = DeviceConfig::preset("consumer-sata").unwrap();
        c.geometry.blocks_per_plane = 64;
        c.gc.high_watermark = 8;
        c.gc.victim = crate::config::VictimPolicy::Fifo;
        c.over_provisioning = 0.2;
        let mut d = Device::new(c).unwrap();
        // Written once, never overwritten: every closed block is fully valid.
        let mut now = Nanos::ZERO;
        let mut done = Vec::new();
        for i in 0..2000u64 {
            now = wait_for_a_slot(&mut d, now, &mut done);
            d.submit(cmd(i, Op::Write, i * 16384 * 8, 16384 * 8, now), now)
                .unwrap();
        }
        let mut events = 0;
        while let Some(t) = d.next_event() {
            d.advance(t, &mut done);
            events += 1;
            assert!(events < 100_000, "idle GC never stops");
        }
        d.ftl().check_invariants().unwrap();
    }

    #[test]
    fn preconditioning_ages_the_drive() {
        let mut d = small_sata();
        d.precondition(Precondition::default()).unwrap();
        d.ftl().check_invariants().unwrap();
        assert_eq!(d.stats().ftl.host_pages_written, 0, "counters start afresh");
        let wear = d.stats().wear;
        assert!(
            wear.max > 0 && wear.mean > 0.0 && wear.min <= wear.max,
            "wear is kept: {wear:?}"
        );
        assert_eq!(d.ftl().total_free_blocks(), 8 * 8);
    }
}
