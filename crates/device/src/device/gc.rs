//! Garbage collection as die time: the FTL cleans victims in its map at once
//! (see [`crate::ftl`]); here each die owes the page moves and erases that
//! took, and pays them between host pages.
//!
//! - Foreground GC is owed when a write's page is placed on a die low on free
//!   blocks; background GC cleans one victim per die once the drive has been
//!   idle `background_idle_ms`, up to `high_watermark` free blocks.
//! - Blocking GC (NPGC) pays a whole victim before anything queued.
//!   Semi-preemptive GC (PGC, seed 002) pays one page move or erase at a time
//!   and lets host pages go between steps as the die's free-block state
//!   allows; its merge technique lets a host write cancel an owed move of the
//!   same page and a host read lend one its array read, and with suspend a
//!   read may cut a GC operation short.

use std::cmp::Reverse;
use std::hash::{BuildHasherDefault, Hasher};

use iosteer_sched::Nanos;
use thiserror::Error;

use super::dies::{Die, DieWork, Running};
use super::Device;
use crate::config::{DeviceConfig, GcMode};
use crate::ftl::GcWork;

/// [`Device::set_gc_mode`] on a drive that owes or runs GC: what it owes was
/// booked for the mode it has (merge keeps a record of owed moves only in
/// semi-preemptive mode), so the mode may change only on an idle drive.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
#[error(
    "`gc.mode` cannot change to {} while a die owes or runs GC; change it on an idle drive, such as one just built or aged",
    .requested.name()
)]
pub struct GcModeBusy {
    pub requested: GcMode,
}

/// The hasher of the map of owed moves by logical page: one multiply, not
/// SipHash (page numbers are not chosen by an adversary, and the map is
/// touched for every page a merging drive writes or reads).
pub(super) type PageHash = BuildHasherDefault<PageHasher>;

#[derive(Default)]
pub(super) struct PageHasher(u64);

impl Hasher for PageHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u32(u32::from(b));
        }
    }

    /// Fibonacci hashing; the high half folded onto the low one, which picks
    /// the bucket.
    fn write_u32(&mut self, page: u32) {
        let h = (self.0 ^ u64::from(page)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }
}

/// Whether the drive merges host requests with owed GC moves.
/// Not on a sector-mapped drive (its moves are counted in pages, a host
/// write in units, so a write cannot cancel a move one for one), nor with
/// multi-plane moves (a cancelled move would leave its partner's time owed).
pub(super) fn merges(config: &DeviceConfig) -> bool {
    config.gc.merge
        && config.gc.mode == GcMode::SemiPreemptive
        && config.units_per_page() == 1
        && !config.multi_plane.enabled
}

impl Die {
    pub(super) fn owes_gc(&self) -> bool {
        !self.owed.is_empty() || self.suspended.is_some()
    }

    /// Drops the GC this die owes, unpaid: the map is already clean.
    pub(super) fn forget_owed_gc(&mut self) {
        self.owed.clear();
        self.owed_erases = 0;
        self.owed_moves = 0;
        self.pending.clear();
        self.lent_reads = 0;
        self.cancelled_moves = 0;
        self.suspended = None;
        self.set_owed_time(Nanos::ZERO);
    }

    /// Takes the next step of the GC owed: one page move or one erase, or
    /// a whole victim when `blocking`.
    /// A step moves up to `planes` pages at once (a multi-plane move).
    fn take_gc_step(&mut self, blocking: bool, planes: u32) -> GcWork {
        let work = self.owed.front_mut().expect("the die owes GC");
        let step = if blocking {
            std::mem::take(work)
        } else if work.pages_moved > 0 {
            let moved = work.pages_moved.min(planes);
            work.pages_moved -= moved;
            GcWork {
                pages_moved: moved,
                ..GcWork::default()
            }
        } else {
            // The victim's extra page reads go with its erase.
            let step = GcWork {
                pages_moved: 0,
                extra_reads: work.extra_reads,
                blocks_erased: work.blocks_erased.min(1),
            };
            work.extra_reads = 0;
            work.blocks_erased -= step.blocks_erased;
            step
        };
        if work.is_empty() {
            self.owed.pop_front();
            if self.owed.is_empty() {
                self.cancelled_moves = 0;
            }
        }
        self.owed_erases -= step.blocks_erased;
        self.owed_moves -= step.pages_moved;
        step
    }
}

/// GC the FTL did in its map that the dies have not paid for yet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcOwed {
    pub page_moves: u64,
    pub erases: u64,
    /// Die time those take, summed over the dies.
    pub die_time: Nanos,
}

impl Device {
    /// The GC the dies still owe (a run that stops with some counts it in
    /// the write amplification, but no request waited for it).
    pub fn gc_owed(&self) -> GcOwed {
        self.dies
            .iter()
            .fold(GcOwed::default(), |owed, die| GcOwed {
                page_moves: owed.page_moves + u64::from(die.owed_moves),
                erases: owed.erases + u64::from(die.owed_erases),
                die_time: owed.die_time + die.owed_time,
            })
    }

    /// Switches how GC shares the dies (NPGC or PGC) on a drive that owes
    /// no GC, such as a freshly aged one: the map does not depend on it, so
    /// two modes can start from one aging.
    pub fn set_gc_mode(&mut self, mode: GcMode) -> Result<(), GcModeBusy> {
        if self.dies.iter().any(|d| d.owes_gc() || d.running.is_some()) {
            return Err(GcModeBusy { requested: mode });
        }
        self.config.gc.mode = mode;
        self.ftl.record_moves(merges(&self.config));
        Ok(())
    }

    /// Die time of GC work: each page move an array read and a program
    /// (multi-plane: each `planes` moves one read and one program, plus the
    /// extra planes' time), each extra read an array read.
    fn gc_cost(&self, work: GcWork) -> Nanos {
        let moves = work.pages_moved;
        let operations = moves.div_ceil(self.planes_per_operation());
        Nanos(
            u64::from(operations) * (self.t_read.0 + self.t_program.0)
                + 2 * u64::from(moves - operations) * self.t_plane_extra.0
                + u64::from(work.extra_reads) * self.t_read.0
                + u64::from(work.blocks_erased) * self.t_erase.0,
        )
    }

    /// Die `d` now owes the time of GC the FTL did in its map.
    pub(super) fn owe_gc(&mut self, d: usize, work: GcWork, background: bool) {
        if work.is_empty() {
            return;
        }
        let victims = u64::from(work.blocks_erased);
        if background {
            self.stats.background_victims += victims;
        } else {
            self.stats.foreground_victims += victims;
        }
        if merges(&self.config) {
            for lpn in self.ftl.take_moved() {
                self.dies[d].pending.push_back(lpn);
                // A page moved again before its last move was paid: the new
                // move is the one a read or write may merge with now, and a
                // read lent to the old one no longer counts.
                if let Some((old, true)) = self.pending_moves.insert(lpn, (d as u32, false)) {
                    self.dies[old as usize].lent_reads -= 1;
                }
            }
        }
        let mut cost = Nanos::ZERO;
        let die = &mut self.dies[d];
        die.owed_erases += work.blocks_erased;
        die.owed_moves += work.pages_moved;
        // The FTL reports the victims of one cleaning together; each victim's
        // erase follows its own moves.
        let (moves, victims) = (work.pages_moved, work.blocks_erased.max(1));
        let reads = work.extra_reads;
        let share = |total: u32, i: u32| total * (i + 1) / victims - total * i / victims;
        for i in 0..victims {
            let victim = GcWork {
                pages_moved: share(moves, i),
                extra_reads: share(reads, i),
                blocks_erased: u32::from(i < work.blocks_erased),
            };
            // Each victim's moves pair up on their own (multi-plane).
            cost += self.gc_cost(victim);
            self.dies[d].owed.push_back(victim);
        }
        let die = &mut self.dies[d];
        die.set_owed_time(die.owed_time + cost);
    }

    /// Merge: a host read of logical page `lpn` lends an owed move of that
    /// page its array read, if one is owed and not lent yet; the die that
    /// owes the move counts it.
    pub(super) fn lend_read_to_owed_move(&mut self, lpn: u32) {
        if let Some((owing, lent @ false)) = self.pending_moves.get_mut(&lpn) {
            *lent = true;
            self.dies[*owing as usize].lent_reads += 1;
            self.stats.merged_reads += 1;
        }
    }

    /// Merge: a host write of logical page `lpn` supersedes an owed move of
    /// it, which is dropped.
    pub(super) fn merge_write_with_owed_move(&mut self, lpn: u32) {
        let Some((owing, lent)) = self.pending_moves.remove(&lpn) else {
            return;
        };
        let owing = owing as usize;
        self.cancel_move(owing);
        if lent {
            self.dies[owing].lent_reads -= 1;
        }
        self.stats.merged_writes += 1;
    }

    /// Merge: drops one of die `d`'s owed moves, whose page a host write
    /// superseded.
    fn cancel_move(&mut self, d: usize) {
        let t_move = self.gc_cost(GcWork {
            pages_moved: 1,
            ..GcWork::default()
        });
        let die = &mut self.dies[d];
        if let Some(work) = die.owed.iter_mut().find(|w| w.pages_moved > 0) {
            work.pages_moved -= 1;
            die.owed_moves -= 1;
            die.cancelled_moves += 1;
            die.set_owed_time(die.owed_time - t_move);
        }
    }

    /// Seed 002's preemption state of die `d`, from its erased free blocks:
    /// the FTL's free blocks, less the erases the die still owes, plus the
    /// blocks its owed moves will fill (the FTL took those already).
    pub(super) fn gc_state(&self, d: usize) -> u8 {
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
    pub(super) fn preempting_task(&self, d: usize) -> Option<usize> {
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

    /// Starts one page move or erase of what die `d` owes (NPGC: a whole
    /// victim), or resumes a suspended one; returns when it ends.
    pub(super) fn start_gc_step(&mut self, d: usize, at: Nanos) -> Nanos {
        let planes = self.planes_per_operation();
        let die = &mut self.dies[d];
        die.running = Some(Running::Gc);
        if let Some(left) = die.suspended.take() {
            die.resumed = true;
            self.charge_gc(d, left);
            return at + left;
        }
        die.resumed = false;
        let step = die.take_gc_step(self.config.gc.mode == GcMode::Blocking, planes);
        let owed_cost = self.gc_cost(step);
        let die = &mut self.dies[d];
        die.set_owed_time(die.owed_time - owed_cost);
        let mut cost = owed_cost;
        if step.pages_moved == 1 && self.next_move_was_lent_a_read(d) {
            cost = cost - self.t_read;
        }
        self.charge_gc(d, cost);
        let end = at + cost;
        if !self.config.gc.pipeline {
            self.hold_channel(d, end);
        }
        end
    }

    /// Merge: takes the page die `d`'s next move copies off the record (the
    /// first still owed: merged writes took the others off the map); whether
    /// a host read lent that move its array read.
    fn next_move_was_lent_a_read(&mut self, d: usize) -> bool {
        let die = &mut self.dies[d];
        while let Some(lpn) = die.pending.pop_front() {
            match self.pending_moves.get(&lpn) {
                Some(&(owing, lent)) if owing as usize == d => {
                    self.pending_moves.remove(&lpn);
                    if lent {
                        die.lent_reads -= 1;
                    }
                    return lent;
                }
                // A later move of the page (on this die or another) is the
                // one on record: this older move was lent nothing.
                Some(_) => return false,
                // A write merged with it: its time was dropped then, and
                // its page in GC's open block, passed now, is no longer
                // erased space.
                None => die.cancelled_moves = die.cancelled_moves.saturating_sub(1),
            }
        }
        false
    }

    fn charge_gc(&mut self, d: usize, time: Nanos) {
        self.dies[d].spent[DieWork::Gc as usize] += time;
        self.stats.dies[d].gc += time;
    }

    /// Fully preemptible GC: a read arriving at `at` suspends the GC
    /// operation under way on die `d`, when the drive suspends, reads may
    /// preempt GC in the die's state, and suspending saves time.
    pub(super) fn suspend_gc_for_read(&mut self, d: usize, at: Nanos) {
        let gc = &self.config.gc;
        let suspend = self.t_suspend;
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
        die.busy_until = free_at;
        die.epoch = die.epoch.wrapping_add(1);
        let epoch = die.epoch;
        let die_time = &mut self.stats.dies[d];
        die_time.gc = die_time.gc - cut;
        die_time.busy = die_time.busy - cut;
        self.stats.gc_suspensions += 1;
        self.die_events.push(Reverse((free_at, d as u32, epoch)));
    }

    /// Whether idle GC should clean a victim on die `d` now.
    fn needs_gc(&self, d: usize) -> bool {
        let die = &self.dies[d];
        !self.gc_stuck[d]
            && !die.owes_gc()
            && die.running.is_none()
            && self.ftl.free_blocks(d as u32) < self.config.gc.high_watermark
    }

    /// The start of the next idle GC victim, if the drive is idle and needs one.
    pub(super) fn next_background_gc(&self) -> Option<Nanos> {
        if !self.idle() {
            return None;
        }
        debug_assert_eq!(
            self.idle_gc_start,
            self.first_idle_gc(),
            "idle GC start not worked out again after a change"
        );
        self.idle_gc_start
    }

    /// Works out again when idle GC starts next, if the drive is idle: after
    /// anything that may have changed it (a die's work or free blocks, the
    /// host link, the drive going idle). The loop asks at every step, and
    /// on a drive idle between requests most steps change nothing. Not
    /// after a submission: that leaves the drive busy, and it goes idle
    /// again only as a command finishes.
    pub(super) fn update_idle_gc_start(&mut self) {
        if self.idle() {
            self.idle_gc_start = self.first_idle_gc();
        }
    }

    /// [`next_background_gc`](Self::next_background_gc) on an idle drive.
    /// Out of line: its callers run after every event, mostly on a busy
    /// drive that does not need it, and the die scan inlined made each of
    /// those calls save and restore the registers it uses.
    #[inline(never)]
    fn first_idle_gc(&self) -> Option<Nanos> {
        let idle_time = self.t_background_idle;
        let link_idle = (self.idle_since + idle_time).max(self.link_free + idle_time);
        (0..self.dies.len())
            .filter(|d| self.needs_gc(*d))
            .map(|d| self.dies[d].busy_until.max(link_idle))
            .min()
    }

    /// Cleans one victim on the idle die that needs it first, at `at`.
    pub(super) fn start_background_gc(&mut self, at: Nanos) {
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
}
