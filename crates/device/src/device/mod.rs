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

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use iosteer_sched::{Command, DeviceView, Nanos, Op, Outcome};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use thiserror::Error;

use crate::config::{ConfigError, DeviceConfig, GcMode};
use crate::ftl::{Ftl, FtlCounters, GcWork, HOST_STREAM};

/// What a die spends its time on; a read that waits is charged to these.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum DieWork {
    Read = 0,
    Program = 1,
    Gc = 2,
}

/// A host page operation queued at a die.
#[derive(Copy, Clone, Debug)]
struct PageTask {
    slot: u32,
    write: bool,
    /// A write's logical page, and whether the FTL has placed it yet: it does
    /// when the die first picks the write, so GC is owed when the program
    /// really needs the space, not when the command arrives.
    lpn: u32,
    placed: bool,
    /// The FTL stream a write goes to (by its lifetime hint).
    stream: u8,
    /// When the task reached the die (writes: when their data is in).
    arrived: Nanos,
    /// The die's `spent` when the task arrived, less what the operation then
    /// running had still to do: the difference at start is what it waited for.
    seen: [Nanos; 3],
}

#[derive(Clone, Debug, Default)]
struct Die {
    /// End of the operation under way (in the past when idle).
    busy_until: Nanos,
    running: Option<Running>,
    host: VecDeque<PageTask>,
    /// Victims cleaned in the map whose moves and erases are still owed.
    owed: VecDeque<GcWork>,
    owed_erases: u32,
    owed_moves: u32,
    owed_time: Nanos,
    /// NAND time of host tasks queued here.
    queued_time: Nanos,
    /// Merge: the logical pages of owed moves, in order (cancelled ones
    /// stay until reached), and moves whose array read a host read lent.
    pending: VecDeque<u32>,
    lent_reads: u32,
    /// Owed moves a merge cancelled: their pages in GC's open block are
    /// still taken, so the free-block state counts them until the die has
    /// paid what it owes.
    cancelled_moves: u32,
    /// A GC operation suspended by a host read: the time it still needs.
    suspended: Option<Nanos>,
    /// The GC operation under way was resumed and may not be suspended again.
    resumed: bool,
    /// Bumped when an operation under way is cut short, so its scheduled end
    /// is ignored.
    epoch: u32,
    /// Time of operations started, by [`DieWork`].
    spent: [Nanos; 3],
}

impl Die {
    fn owes_gc(&self) -> bool {
        !self.owed.is_empty() || self.suspended.is_some()
    }
}

#[derive(Copy, Clone, Debug)]
enum Running {
    Host(PageTask),
    Gc,
}

/// A command in the drive.
#[derive(Clone, Debug)]
struct InFlight {
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
    /// Merge: owed moves a host write made needless; host reads that lent
    /// an owed move their array read.
    pub merged_writes: u64,
    pub merged_reads: u64,
    /// GC operations suspended for a host read.
    pub gc_suspensions: u64,
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
    pending_moves: HashMap<u32, (u32, bool)>,
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

/// Whether the drive merges host requests with owed GC moves.
fn merges(config: &DeviceConfig) -> bool {
    config.gc.merge && config.gc.mode == GcMode::SemiPreemptive
}

fn work_of(running: Running) -> DieWork {
    match running {
        Running::Host(task) if task.write => DieWork::Program,
        Running::Host(_) => DieWork::Read,
        Running::Gc => DieWork::Gc,
    }
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
        let mut ftl = Ftl::new(&config);
        ftl.record_moves(merges(&config));
        Ok(Device {
            ftl,
            page_size,
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
            pending_moves: HashMap::new(),
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

    /// Switches how GC shares the dies (NPGC or PGC) on a drive that owes
    /// no GC, such as a freshly aged one: the map does not depend on it, so
    /// two modes can start from one aging.
    pub fn set_gc_mode(&mut self, mode: GcMode) -> Result<(), ConfigError> {
        if self.dies.iter().any(|d| d.owes_gc() || d.running.is_some()) {
            return Err(ConfigError::Invalid {
                field: "gc.mode",
                value: mode.name().into(),
                reason: "the drive is busy; switch modes on an idle drive".into(),
            });
        }
        self.config.gc.mode = mode;
        self.ftl.record_moves(merges(&self.config));
        Ok(())
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
            in_flight: self.in_flight + u32::from(self.waiting.is_some()),
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
        self.ftl.record_moves(merges(&self.config));
        self.pending_moves.clear();
        self.stats = DeviceStats {
            die_busy: vec![Nanos::ZERO; dies as usize],
            die_gc_busy: vec![Nanos::ZERO; dies as usize],
            ..DeviceStats::default()
        };
        for die in &mut self.dies {
            die.owed.clear();
            die.owed_erases = 0;
            die.owed_moves = 0;
            die.pending.clear();
            die.lent_reads = 0;
            die.cancelled_moves = 0;
            die.suspended = None;
            die.owed_time = Nanos::ZERO;
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
        self.run_dies(now);
        if self.non_queued(command.op) && self.in_flight > 0 {
            self.waiting = Some(command);
            return Ok(());
        }
        self.start(command, now);
        Ok(())
    }

    fn start(&mut self, command: Command, now: Nanos) {
        let start = now + self.t_overhead;
        let op = command.op;
        self.stats.commands[op.index()] += 1;
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
        let (outcome, done) = match op {
            Op::Read => self.queue_read(slot, start),
            Op::Write => self.queue_write(slot, start),
            Op::Trim => self.time_trim(slot, start),
            Op::Flush => (Outcome::Ok, Some(start + micros(self.config.flush_us))),
        };
        if outcome == Outcome::Error {
            self.stats.errors += 1;
        }
        let entry = self.slots[slot as usize]
            .as_mut()
            .expect("the slot was just filled");
        entry.outcome = outcome;
        if let Some(done) = done {
            if self.non_queued(op) {
                self.exclusive_until = Some(done);
            }
            self.completions.push(Reverse((done, slot)));
        }
    }

    fn command(&self, slot: u32) -> &Command {
        &self.slots[slot as usize]
            .as_ref()
            .expect("a queued page belongs to a command in the drive")
            .command
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

    /// Queues a read's pages at their dies; returns its completion time now
    /// if no page needs NAND time.
    fn queue_read(&mut self, slot: u32, start: Nanos) -> (Outcome, Option<Nanos>) {
        let request = &self.command(slot).requests[0];
        let (offset, len) = (request.offset.0, request.len.0);
        let Some((first, last)) = self.pages(offset, len) else {
            return (Outcome::Error, Some(start));
        };
        let mut pages = 0;
        for lpn in first..=last {
            let Some(ppn) = self.ftl.lookup(lpn as u32) else {
                continue;
            };
            let d = self.ftl.die_of(ppn) as usize;
            if let Some((_, lent @ false)) = self.pending_moves.get_mut(&(lpn as u32)) {
                *lent = true;
                self.dies[d].lent_reads += 1;
                self.stats.merged_reads += 1;
            }
            self.enqueue_page(d, slot, None, start);
            pages += 1;
        }
        self.set_pages_left(slot, pages);
        if pages == 0 {
            return (Outcome::Ok, Some(self.send_over_link(start, len)));
        }
        (Outcome::Ok, None)
    }

    fn set_pages_left(&mut self, slot: u32, pages: u32) {
        if let Some(entry) = self.slots[slot as usize].as_mut() {
            entry.pages_left = pages;
        }
    }

    fn send_over_link(&mut self, ready: Nanos, bytes: u64) -> Nanos {
        let link_start = self.link_free.max(ready);
        self.link_free = link_start + self.link_time(bytes);
        self.link_free
    }

    /// The die whose queued work ends first, scanning from a rotating start
    /// so ties spread.
    fn least_busy_die(&mut self, now: Nanos) -> usize {
        let n = self.dies.len();
        let start = self.next_die;
        self.next_die = (start + 1) % n;
        (0..n)
            .map(|i| (start + i) % n)
            .min_by_key(|d| {
                let die = &self.dies[*d];
                die.busy_until.max(now) + die.queued_time + die.owed_time
            })
            .expect("a drive has dies")
    }

    fn queue_write(&mut self, slot: u32, start: Nanos) -> (Outcome, Option<Nanos>) {
        let request = &self.command(slot).requests[0];
        let (offset, len) = (request.offset.0, request.len.0);
        let stream = self.ftl.stream_for(request.hint) as u8;
        let Some((first, last)) = self.pages(offset, len) else {
            return (Outcome::Error, Some(start));
        };
        let data_in = self.send_over_link(start, len);
        let mut pages = 0;
        for lpn in first..=last {
            let d = self.least_busy_die(data_in);
            self.enqueue_page(d, slot, Some((lpn as u32, stream)), data_in);
            pages += 1;
        }
        self.set_pages_left(slot, pages);
        if pages == 0 {
            return (Outcome::Ok, Some(data_in));
        }
        (Outcome::Ok, None)
    }

    /// Maps a write's page on die `d`, or on the next dies if `d` is full of
    /// valid data (the time stays on `d`), and owes the GC that made room.
    fn place(&mut self, d: usize, task: &mut PageTask, at: Nanos) {
        task.placed = true;
        if let Some((owing, lent)) = self.pending_moves.remove(&task.lpn) {
            let owing = owing as usize;
            self.cancel_move(owing);
            if lent {
                self.dies[owing].lent_reads -= 1;
            }
            self.stats.merged_writes += 1;
        }
        let n = self.dies.len();
        let placed = (0..n).map(|i| (d + i) % n).find_map(|die| {
            self.ftl
                .write(u64::from(task.lpn), die as u32, usize::from(task.stream))
                .ok()
                .map(|placed| (die, placed))
        });
        match placed {
            Some((die, placed)) => {
                self.owe_gc(die, placed.gc, false);
                // GC owed on another die (this one is full) starts there now.
                if die != d && self.dies[die].running.is_none() {
                    let from = at.max(self.dies[die].busy_until);
                    self.run_next(die, from);
                }
            }
            None => {
                if let Some(entry) = self.slots[task.slot as usize].as_mut() {
                    entry.outcome = Outcome::Error;
                }
            }
        }
    }

    fn time_trim(&mut self, slot: u32, start: Nanos) -> (Outcome, Option<Nanos>) {
        let mut outcome = Outcome::Ok;
        let requests = self.command(slot).requests.clone();
        for request in &requests {
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
        let bytes = requests.iter().map(|r| r.len.0).sum();
        let cost = self.config.trim_cost.micros(requests.len() as u32, bytes);
        (outcome, Some(start + micros(cost)))
    }

    /// Queues a page operation at die `d`: a write of `(lpn, stream)`, or a
    /// read.
    fn enqueue_page(&mut self, d: usize, slot: u32, write: Option<(u32, u8)>, at: Nanos) {
        let (lpn, stream) = write.unwrap_or((0, 0));
        let write = write.is_some();
        let cost = if write { self.t_program } else { self.t_read };
        let die = &mut self.dies[d];
        let mut seen = die.spent;
        if let Some(running) = die.running {
            let left = die.busy_until.0.saturating_sub(at.0);
            let kind = work_of(running) as usize;
            seen[kind] = Nanos(seen[kind].0.saturating_sub(left));
        }
        die.host.push_back(PageTask {
            slot,
            write,
            lpn,
            placed: false,
            stream,
            arrived: at,
            seen,
        });
        die.queued_time += cost;
        if die.running.is_none() {
            let from = at.max(die.busy_until);
            self.run_next(d, from);
        } else if !write {
            self.suspend_gc_for_read(d, at);
        }
    }

    /// Fully preemptible GC: a read arriving at `at` suspends the GC
    /// operation under way on die `d`, when the drive suspends, reads may
    /// preempt GC in the die's state, and suspending saves time.
    fn suspend_gc_for_read(&mut self, d: usize, at: Nanos) {
        let gc = &self.config.gc;
        let suspend = micros(gc.suspend_us);
        let die = &self.dies[d];
        let eligible = gc.suspend
            && gc.mode == GcMode::SemiPreemptive
            && matches!(die.running, Some(Running::Gc))
            && !die.resumed
            && die.suspended.is_none()
            && die.busy_until > at + suspend;
        if !eligible || self.gc_state(d) == 3 {
            return;
        }
        let free_at = at + suspend;
        let die = &mut self.dies[d];
        let cut = die.busy_until - free_at;
        die.suspended = Some(die.busy_until - at);
        die.spent[DieWork::Gc as usize] = die.spent[DieWork::Gc as usize] - cut;
        self.stats.die_gc_busy[d] = self.stats.die_gc_busy[d] - cut;
        self.stats.die_busy[d] = self.stats.die_busy[d] - cut;
        self.stats.gc_suspensions += 1;
        die.busy_until = free_at;
        die.epoch = die.epoch.wrapping_add(1);
        self.die_events
            .push(Reverse((free_at, d as u32, die.epoch)));
    }

    fn gc_cost(&self, work: GcWork) -> Nanos {
        Nanos(
            u64::from(work.pages_moved) * (self.t_read.0 + self.t_program.0)
                + u64::from(work.blocks_erased) * self.t_erase.0,
        )
    }

    /// Die `d` now owes the time of GC the FTL did in its map.
    fn owe_gc(&mut self, d: usize, work: GcWork, background: bool) {
        if work.is_empty() {
            return;
        }
        let cost = self.gc_cost(work);
        let victims = u64::from(work.blocks_erased);
        if background {
            self.stats.background_victims += victims;
        } else {
            self.stats.foreground_victims += victims;
        }
        if merges(&self.config) {
            let die = &mut self.dies[d];
            for lpn in self.ftl.take_moved() {
                die.pending.push_back(lpn);
                self.pending_moves.insert(lpn, (d as u32, false));
            }
        }
        let die = &mut self.dies[d];
        die.owed_erases += work.blocks_erased;
        die.owed_moves += work.pages_moved;
        die.owed_time += cost;
        // The FTL reports the victims of one cleaning together; each victim's
        // erase follows its own moves.
        let (moves, victims) = (work.pages_moved, work.blocks_erased.max(1));
        for i in 0..victims {
            die.owed.push_back(GcWork {
                pages_moved: moves * (i + 1) / victims - moves * i / victims,
                blocks_erased: u32::from(i < work.blocks_erased),
            });
        }
    }

    /// Merge: drops one of die `d`'s owed moves, whose page a host write
    /// superseded.
    fn cancel_move(&mut self, d: usize) {
        let t_move = self.t_read + self.t_program;
        let die = &mut self.dies[d];
        if let Some(work) = die.owed.iter_mut().find(|w| w.pages_moved > 0) {
            work.pages_moved -= 1;
            die.owed_moves -= 1;
            die.cancelled_moves += 1;
            die.owed_time = die.owed_time - t_move;
        }
    }

    /// Seed 002's preemption state of die `d`, from its erased free blocks:
    /// the FTL's free blocks, less the erases the die still owes, plus the
    /// blocks its owed moves will fill (the FTL took those already).
    fn gc_state(&self, d: usize) -> u8 {
        let gc = &self.config.gc;
        let die = &self.dies[d];
        let moves = die.owed_moves + die.cancelled_moves;
        let erased = (self.ftl.free_blocks(d as u32) + moves / self.ftl.pages_per_block())
            .saturating_sub(die.owed_erases);
        if erased < gc.state3_below {
            3
        } else if erased < gc.state2_below {
            2
        } else {
            1
        }
    }

    /// Which queued host task, if any, goes before the GC die `d` owes.
    fn preempting_task(&self, d: usize) -> Option<usize> {
        let die = &self.dies[d];
        if !die.owes_gc() {
            return (!die.host.is_empty()).then_some(0);
        }
        if self.config.gc.mode == GcMode::Blocking {
            return None;
        }
        match self.gc_state(d) {
            1 => (!die.host.is_empty()).then_some(0),
            2 => die.host.iter().position(|t| !t.write),
            _ => None,
        }
    }

    /// Starts die `d`'s next operation at `at`, if it has any.
    fn run_next(&mut self, d: usize, at: Nanos) {
        let end = match self.preempting_task(d) {
            Some(index) => {
                let mut task = self.dies[d].host.remove(index).expect("index is in range");
                if task.write && !task.placed {
                    // Placing it may owe GC that must go first: choose again.
                    self.place(d, &mut task, at);
                    self.dies[d].host.push_front(task);
                    return self.run_next(d, at);
                }
                self.start_page(d, task, at)
            }
            None if self.dies[d].owes_gc() => self.start_gc_step(d, at),
            None => {
                self.dies[d].running = None;
                return;
            }
        };
        let die = &mut self.dies[d];
        die.busy_until = end;
        self.stats.die_busy[d] += end - at;
        self.die_events.push(Reverse((end, d as u32, die.epoch)));
    }

    fn start_page(&mut self, d: usize, task: PageTask, at: Nanos) -> Nanos {
        debug_assert!(
            !self.dies[d].owes_gc() || !task.write || self.gc_state(d) == 1,
            "a host write went before owed GC outside state 1"
        );
        let at = at.max(task.arrived);
        let c = self.channel_of(d);
        let die = &mut self.dies[d];
        if !task.write {
            self.stats.host_pages_read += 1;
            // The read waited for what the die started since it came.
            let waits = [
                &mut self.stats.read_wait_behind_read,
                &mut self.stats.read_wait_behind_program,
                &mut self.stats.read_wait_behind_gc,
            ];
            for (kind, wait) in waits.into_iter().enumerate() {
                *wait += die.spent[kind] - task.seen[kind];
            }
        }
        let (cost, kind) = if task.write {
            (self.t_program, DieWork::Program)
        } else {
            (self.t_read, DieWork::Read)
        };
        die.queued_time = die.queued_time - cost;
        die.running = Some(Running::Host(task));
        let end = if task.write {
            let transfer = self.channels[c].max(at);
            let loaded = transfer + self.t_page_transfer;
            self.channels[c] = loaded;
            loaded + self.t_program
        } else {
            let read_done = at + self.t_read;
            let out = self.channels[c].max(read_done) + self.t_page_transfer;
            self.channels[c] = out;
            out
        };
        let die = &mut self.dies[d];
        die.spent[kind as usize] += end - at;
        end
    }

    /// One page move or erase of what die `d` owes (NPGC: a whole victim).
    fn start_gc_step(&mut self, d: usize, at: Nanos) -> Nanos {
        let blocking = self.config.gc.mode == GcMode::Blocking;
        let (t_move, t_erase) = (self.t_read + self.t_program, self.t_erase);
        let die = &mut self.dies[d];
        die.running = Some(Running::Gc);
        if let Some(left) = die.suspended.take() {
            die.resumed = true;
            die.spent[DieWork::Gc as usize] += left;
            self.stats.die_gc_busy[d] += left;
            return at + left;
        }
        die.resumed = false;
        let work = die.owed.front_mut().expect("the die owes GC");
        let step = if blocking {
            std::mem::take(work)
        } else if work.pages_moved > 0 {
            work.pages_moved -= 1;
            GcWork {
                pages_moved: 1,
                blocks_erased: 0,
            }
        } else {
            work.blocks_erased -= 1;
            GcWork {
                pages_moved: 0,
                blocks_erased: 1,
            }
        };
        if work.is_empty() {
            die.owed.pop_front();
            if die.owed.is_empty() {
                die.cancelled_moves = 0;
            }
        }
        let owed_cost = Nanos(
            u64::from(step.pages_moved) * t_move.0 + u64::from(step.blocks_erased) * t_erase.0,
        );
        let mut cost = owed_cost;
        if step.pages_moved == 1 {
            // The page this move copies: the first still owed (a merged
            // write took the others off the map).
            while let Some(lpn) = die.pending.pop_front() {
                if let Some((_, lent)) = self.pending_moves.remove(&lpn) {
                    if lent {
                        die.lent_reads -= 1;
                        cost = cost - self.t_read;
                    }
                    break;
                }
            }
        }
        die.owed_erases -= step.blocks_erased;
        die.owed_moves -= step.pages_moved;
        die.owed_time = die.owed_time - owed_cost;
        die.running = Some(Running::Gc);
        die.spent[DieWork::Gc as usize] += cost;
        self.stats.die_gc_busy[d] += cost;
        let end = at + cost;
        if !self.config.gc.pipeline {
            let c = self.channel_of(d);
            self.channels[c] = self.channels[c].max(end);
        }
        end
    }

    /// Die `d`'s operation ended at `at`.
    fn finish_operation(&mut self, d: usize, at: Nanos) {
        if let Some(Running::Host(task)) = self.dies[d].running.take() {
            self.page_done(task.slot, at);
        }
        self.run_next(d, at);
    }

    fn page_done(&mut self, slot: u32, at: Nanos) {
        let entry = self.slots[slot as usize]
            .as_mut()
            .expect("a page belongs to a command in the drive");
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

    /// Plays die operations and idle GC up to `now`.
    fn run_dies(&mut self, now: Nanos) {
        loop {
            let die_next = self.die_events.peek().map(|Reverse((t, _, _))| *t);
            let gc_next = self.next_background_gc();
            match (die_next, gc_next) {
                (Some(t), g) if t <= now && g.is_none_or(|g| t <= g) => {
                    let Reverse((t, d, epoch)) = self.die_events.pop().expect("peeked");
                    if epoch == self.dies[d as usize].epoch {
                        self.finish_operation(d as usize, t);
                    }
                }
                (_, Some(g)) if g <= now => self.start_background_gc(g),
                _ => return,
            }
        }
    }

    /// When the drive next has something to do: a completion, a die
    /// operation ending, or an idle GC step.
    pub fn next_event(&self) -> Option<Nanos> {
        [
            self.completions.peek().map(|Reverse((t, _))| *t),
            self.die_events.peek().map(|Reverse((t, _, _))| *t),
            self.next_background_gc(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn idle(&self) -> bool {
        self.in_flight == 0 && self.waiting.is_none()
    }

    fn needs_gc(&self, d: usize) -> bool {
        let die = &self.dies[d];
        !self.gc_stuck[d]
            && !die.owes_gc()
            && die.running.is_none()
            && self.ftl.free_blocks(d as u32) < self.config.gc.high_watermark
    }

    /// The start of the next idle GC victim, if the drive is idle and needs one.
    fn next_background_gc(&self) -> Option<Nanos> {
        if !self.idle() {
            return None;
        }
        let idle_time = micros(self.config.gc.background_idle_ms * 1e3);
        let link_idle = (self.idle_since + idle_time).max(self.link_free + idle_time);
        (0..self.dies.len())
            .filter(|d| self.needs_gc(*d))
            .map(|d| self.dies[d].busy_until.max(link_idle))
            .min()
    }

    /// Cleans one victim on the idle die that needs it first, at `at`.
    fn start_background_gc(&mut self, at: Nanos) {
        let d = (0..self.dies.len())
            .filter(|d| self.needs_gc(*d))
            .min_by_key(|d| self.dies[*d].busy_until)
            .expect("a die needs GC");
        let ppb = u64::from(self.ftl.pages_per_block());
        match self.ftl.collect(d as u32) {
            Ok(Some(work)) => {
                self.owe_gc(d, work, true);
                // A FIFO victim full of valid data frees nothing.
                if u64::from(work.pages_moved) >= u64::from(work.blocks_erased) * ppb {
                    self.gc_stuck[d] = true;
                }
                self.run_next(d, at);
            }
            _ => self.gc_stuck[d] = true,
        }
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
                }
                _ => break,
            }
        }
    }

    fn finish_command(&mut self, slot: u32, at: Nanos, finished: &mut Vec<Finished>) {
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
    fn semi_preemptive_gc_bounds_a_reads_wait() {
        let blocking = worst_read_under_gc(GcMode::Blocking);
        let paced = worst_read_under_gc(GcMode::SemiPreemptive);
        assert!(
            paced.0 * 3 < blocking.0,
            "paced {paced:?} vs blocking {blocking:?}"
        );
    }

    /// Die 0 of a fresh semi-preemptive drive owing erases that leave it
    /// `erased` erased blocks, with a write then a read queued behind.
    fn die_owing_gc(mode: GcMode, erased: u32) -> Device {
        let mut d = small_sata();
        d.config.gc.mode = mode;
        let free = d.ftl.free_blocks(0);
        d.owe_gc(
            0,
            GcWork {
                pages_moved: 0,
                blocks_erased: free - erased,
            },
            false,
        );
        for write in [true, false] {
            d.dies[0].host.push_back(PageTask {
                slot: 0,
                write,
                lpn: 0,
                placed: true,
                stream: 0,
                arrived: Nanos::ZERO,
                seen: [Nanos::ZERO; 3],
            });
        }
        d
    }

    #[test]
    fn a_write_merged_with_an_owed_move_keeps_the_new_data() {
        let mut d = small_sata();
        d.precondition(Precondition::default()).unwrap();
        let work = d.ftl.collect(0).unwrap().expect("an aged die has a victim");
        assert!(work.pages_moved > 1);
        d.owe_gc(0, work, false);
        let lpn = *d.dies[0].pending.front().unwrap();
        let gc_copy = d.ftl.lookup(lpn).unwrap();
        // The write lands on another die (die 0 owes GC) and is placed at
        // once, while die 0 has not started the move.
        d.submit(
            cmd(1, Op::Write, u64::from(lpn) * 16384, 16384, Nanos::ZERO),
            Nanos::ZERO,
        )
        .unwrap();
        assert_eq!(d.stats().merged_writes, 1);
        d.run_next(0, Nanos::ZERO);
        let mut done = run_until_idle(&mut d);
        while d.dies[0].owes_gc() || d.dies[0].running.is_some() {
            let t = d.next_event().unwrap();
            d.advance(t, &mut done);
        }
        assert_eq!(d.stats().background_victims, 0);
        let t = d.dies[0].busy_until;
        let host_copy = d.ftl.lookup(lpn).unwrap();
        assert_ne!(host_copy, gc_copy, "the host's data, not GC's copy");
        let moved = u64::from(work.pages_moved - 1) * (d.t_read.0 + d.t_program.0);
        assert_eq!(
            d.stats().die_gc_busy[0],
            Nanos(moved + d.t_erase.0),
            "one move fewer"
        );
        d.submit(cmd(2, Op::Read, u64::from(lpn) * 16384, 16384, t), t)
            .unwrap();
        let read = run_until_idle(&mut d);
        assert_eq!(read[0].outcome, Outcome::Ok);
        assert_eq!(d.ftl.lookup(lpn), Some(host_copy));
        d.ftl.check_invariants().unwrap();
    }

    /// Latency of a read reaching die 0 1 ms into a 5 ms GC erase.
    fn read_during_an_erase(suspend: bool) -> Nanos {
        let mut d = small_sata();
        d.config.gc.suspend = suspend;
        d.precondition(Precondition::default()).unwrap();
        let lpn = (0..d.ftl.logical_pages())
            .find(|l| d.ftl.lookup(*l).is_some_and(|p| d.ftl.die_of(p) == 0))
            .unwrap();
        let erase = GcWork {
            pages_moved: 0,
            blocks_erased: 1,
        };
        d.owe_gc(0, erase, false);
        d.run_next(0, Nanos::ZERO);
        let t = Nanos::from_millis(1);
        d.submit(cmd(1, Op::Read, u64::from(lpn) * 16384, 16384, t), t)
            .unwrap();
        let done = run_until_idle(&mut d);
        assert_eq!(d.stats().gc_suspensions, u64::from(suspend));
        done[0].at - t
    }

    #[test]
    fn a_suspended_erase_lets_a_read_through() {
        let waited = read_during_an_erase(false);
        assert!(waited > Nanos::from_millis(4), "{waited:?}");
        let suspended = read_during_an_erase(true);
        assert!(suspended < Nanos::from_micros(300), "{suspended:?}");
    }

    #[test]
    fn preemption_follows_the_free_block_states() {
        // consumer-sata: state 2 below 2 erased blocks, state 3 below 1.
        let state1 = die_owing_gc(GcMode::SemiPreemptive, 2);
        assert_eq!(state1.gc_state(0), 1);
        assert_eq!(state1.preempting_task(0), Some(0), "the write goes first");
        let state2 = die_owing_gc(GcMode::SemiPreemptive, 1);
        assert_eq!(state2.gc_state(0), 2);
        assert_eq!(
            state2.preempting_task(0),
            Some(1),
            "only the read goes first"
        );
        let state3 = die_owing_gc(GcMode::SemiPreemptive, 0);
        assert_eq!(state3.gc_state(0), 3);
        assert_eq!(state3.preempting_task(0), None, "GC goes first");
        let blocking = die_owing_gc(GcMode::Blocking, 2);
        assert_eq!(blocking.preempting_task(0), None, "NPGC never yields");
    }

    #[test]
    fn a_state_3_die_pays_its_gc_before_any_host_request() {
        let mut d = die_owing_gc(GcMode::SemiPreemptive, 0);
        d.run_next(0, Nanos::ZERO);
        // Each erase raises the erased count; the first host request starts
        // only once the die is out of state 3.
        let mut erases = 0;
        while matches!(d.dies[0].running, Some(Running::Gc)) {
            let at = d.dies[0].busy_until;
            d.dies[0].running = None;
            erases += 1;
            d.run_next(0, at);
        }
        assert_eq!(erases, 1, "one erase leaves state 3");
        assert!(
            matches!(d.dies[0].running, Some(Running::Host(t)) if !t.write),
            "then the read"
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
