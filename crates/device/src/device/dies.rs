//! The dies: each serves one NAND operation at a time from its own queue.
//!
//! A die's next operation is a host page (array read then channel transfer,
//! or channel transfer then program) or a step of the GC it owes; which goes
//! first is the GC mode's call (see `gc`). A write's page is mapped only when
//! its die first picks it, so the GC that makes room is owed when the program
//! really needs the space. Each die keeps the time it spent by kind of work,
//! so a read can be told what it waited behind.

use std::cmp::Reverse;
use std::collections::VecDeque;

use iosteer_sched::Nanos;

use super::buffer::NO_GROUP;
use super::cache::DESTAGE_SLOT;
use super::Device;
use crate::config::WritePlacement;
use crate::ftl::GcWork;

/// A placed write's page when it is not on the die that runs it (that die
/// was full): it joins no multi-plane program.
pub(super) const ELSEWHERE: u32 = u32::MAX;

/// What a die spends its time on; a read that waits is charged to these.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum DieWork {
    Read = 0,
    Program = 1,
    Gc = 2,
}

/// A host page operation queued at a die.
#[derive(Copy, Clone, Debug)]
pub(super) struct PageTask {
    pub(super) slot: u32,
    pub(super) write: bool,
    /// A write's logical page, and whether the FTL has placed it yet: it does
    /// when the die first picks the write, so GC is owed when the program
    /// really needs the space, not when the command arrives.
    pub(super) lpn: u32,
    pub(super) placed: bool,
    /// A sector-mapped write's group of units (see `buffer`), or
    /// [`NO_GROUP`] for a page of its own.
    pub(super) group: u32,
    /// A read's physical page, or a placed write's ([`ELSEWHERE`] when it
    /// went to another die): its plane decides multi-plane partners.
    pub(super) page: u32,
    /// The FTL stream a write goes to (by its lifetime hint).
    pub(super) stream: u8,
    /// A read's bytes to move over the channel: the request's part of the
    /// page, in whole sectors (the page register holds the whole page after
    /// the array read; the die sends out only the columns asked for, as
    /// ONFI's change-read-column does). A write moves its whole page.
    pub(super) bytes: u32,
    /// When the task reached the die (writes: when their data is in).
    pub(super) arrived: Nanos,
    /// The die's `spent` when the task arrived, less what the operation then
    /// running had still to do: the difference at start is what it waited for.
    pub(super) seen: [Nanos; 3],
}

#[derive(Clone, Debug, Default)]
pub(super) struct Die {
    /// End of the operation under way (in the past when idle).
    pub(super) busy_until: Nanos,
    pub(super) running: Option<Running>,
    /// Reads that run with the one in `running` (a multi-plane read).
    pub(super) batch: Vec<PageTask>,
    pub(super) host: VecDeque<PageTask>,
    /// Victims cleaned in the map whose moves and erases are still owed.
    pub(super) owed: VecDeque<GcWork>,
    pub(super) owed_erases: u32,
    pub(super) owed_moves: u32,
    /// NAND time of the GC owed (set with [`Die::set_owed_time`]).
    pub(super) owed_time: Nanos,
    /// NAND time of host tasks queued here (set with
    /// [`Die::set_queued_time`]).
    pub(super) queued_time: Nanos,
    /// `queued_time + owed_time`, kept as they change: least-busy placement
    /// reads it for every die on every page written.
    backlog: Nanos,
    /// Merge: the logical pages of owed moves, in order (cancelled ones
    /// stay until reached), and moves whose array read a host read lent.
    pub(super) pending: VecDeque<u32>,
    pub(super) lent_reads: u32,
    /// Owed moves a merge cancelled: their pages in GC's open block are
    /// still erased, so the free-block state counts them until the die's
    /// moves pass them (they had counted until the die owed nothing, which
    /// under sustained writes it never does: the count grew without bound,
    /// the die stayed in state 1 and its GC debt with it).
    pub(super) cancelled_moves: u32,
    /// A GC operation suspended by a host read: the time it still needs.
    pub(super) suspended: Option<Nanos>,
    /// The GC operation under way was resumed and may not be suspended again.
    pub(super) resumed: bool,
    /// Bumped when an operation under way is cut short, so its scheduled end
    /// is ignored.
    pub(super) epoch: u32,
    /// Time of operations started, by [`DieWork`].
    pub(super) spent: [Nanos; 3],
}

#[derive(Copy, Clone, Debug)]
pub(super) enum Running {
    Host(PageTask),
    Gc,
}

impl Running {
    fn work(self) -> DieWork {
        match self {
            Running::Host(task) if task.write => DieWork::Program,
            Running::Host(_) => DieWork::Read,
            Running::Gc => DieWork::Gc,
        }
    }
}

/// The task at `index` of a die's queue: mostly the front one, which
/// `pop_front` takes without the shuffle `remove` goes through.
fn take_task(queue: &mut VecDeque<PageTask>, index: usize) -> PageTask {
    let task = if index == 0 {
        queue.pop_front()
    } else {
        queue.remove(index)
    };
    task.expect("index is in range")
}

/// When the work queued at or owed by `die` ends, counted from `now` at the
/// earliest: never before `now`. `+` saturates, and saturating sums of
/// non-negative terms do not depend on their grouping: the backlog sum is
/// the same end.
fn work_ends(die: &Die, now: Nanos) -> Nanos {
    die.busy_until.max(now) + die.backlog
}

/// Least-busy placement over `dies`, numbered from `first`: replaces `best`
/// (die, end) by the first die that ends earlier. True once one ends at
/// `now`: no die ends sooner, so the rest need not be looked at (on a drive
/// with idle dies this saves most of the scan).
fn improve_on(dies: &[Die], first: usize, now: Nanos, best: &mut (usize, Nanos)) -> bool {
    for (d, die) in (first..).zip(dies) {
        let ends = work_ends(die, now);
        if ends < best.1 {
            *best = (d, ends);
            if ends == now {
                return true;
            }
        }
    }
    false
}

impl Die {
    pub(super) fn set_queued_time(&mut self, queued: Nanos) {
        self.queued_time = queued;
        self.backlog = self.queued_time + self.owed_time;
    }

    pub(super) fn set_owed_time(&mut self, owed: Nanos) {
        self.owed_time = owed;
        self.backlog = self.queued_time + self.owed_time;
    }
}

impl Device {
    fn channel_of(&self, die: usize) -> usize {
        die % self.channels.len()
    }

    /// Die `d`'s channel is busy until at least `until`.
    pub(super) fn hold_channel(&mut self, d: usize, until: Nanos) {
        let c = self.channel_of(d);
        self.channels[c] = self.channels[c].max(until);
    }

    /// The die a write of logical unit `lpn` goes to at `now`, by
    /// `ftl.write_placement`.
    pub(super) fn write_die(&mut self, lpn: u32, now: Nanos) -> usize {
        match self.config.ftl.write_placement {
            WritePlacement::LeastBusy => self.least_busy_die(now),
            WritePlacement::Striped => (lpn / self.units_per_page) as usize % self.dies.len(),
        }
    }

    /// The die whose queued work ends first, scanning from a rotating start
    /// so ties spread.
    pub(super) fn least_busy_die(&mut self, now: Nanos) -> usize {
        let n = self.dies.len();
        let start = self.next_die;
        self.next_die = (start + 1) % n;
        // From `start` round to `start - 1`, the first of equals kept: two
        // plain loops, as this runs for every page written.
        let mut best = (start, work_ends(&self.dies[start], now));
        if best.1 == now || improve_on(&self.dies[start + 1..], start + 1, now, &mut best) {
            return best.0;
        }
        improve_on(&self.dies[..start], 0, now, &mut best);
        best.0
    }

    /// Queues a page operation at die `d`: a write of `(lpn, stream)` (on a
    /// sector-mapped drive `(group, stream)`), or a read.
    pub(super) fn enqueue_page(
        &mut self,
        d: usize,
        slot: u32,
        write: Option<(u32, u8)>,
        (read_page, read_bytes): (u32, u32),
        at: Nanos,
    ) {
        let (lpn, stream) = write.unwrap_or((0, 0));
        let write = write.is_some();
        let group = if write && self.sector_mapped() {
            lpn
        } else {
            NO_GROUP
        };
        let cost = if write { self.t_program } else { self.t_read };
        let die = &mut self.dies[d];
        let mut seen = die.spent;
        if let Some(running) = die.running {
            let left = die.busy_until.0.saturating_sub(at.0);
            let kind = running.work() as usize;
            seen[kind] = Nanos(seen[kind].0.saturating_sub(left));
        }
        die.host.push_back(PageTask {
            slot,
            write,
            lpn,
            placed: false,
            group,
            page: read_page,
            stream,
            bytes: match write {
                true => self.page_size as u32,
                false => read_bytes,
            },
            arrived: at,
            seen,
        });
        die.set_queued_time(die.queued_time + cost);
        if self.holding_dies {
            return;
        }
        if die.running.is_none() {
            let from = at.max(die.busy_until);
            self.run_next(d, from);
        } else if !write {
            self.suspend_gc_for_read(d, at);
        }
    }

    /// Maps a write's page on die `d`, or on the next dies if `d` is full of
    /// valid data (the time stays on `d`), and owes the GC that made room.
    pub(super) fn place(&mut self, d: usize, task: &mut PageTask, at: Nanos) {
        task.placed = true;
        task.page = ELSEWHERE;
        if task.group != NO_GROUP {
            return self.place_group(d, task, at);
        }
        self.merge_write_with_owed_move(task.lpn);
        let n = self.dies.len();
        let placed = (0..n).map(|i| (d + i) % n).find_map(|die| {
            self.ftl
                .write(u64::from(task.lpn), die as u32, usize::from(task.stream))
                .ok()
                .map(|placed| (die, placed))
        });
        let Some((die, placed)) = placed else {
            self.fail_command(task.slot);
            return;
        };
        if die == d {
            task.page = self.ftl.page_of(placed.ppn);
        }
        self.owe_gc(die, placed.gc, false);
        // GC owed on another die (this one is full) starts there now.
        if die != d && self.dies[die].running.is_none() {
            let from = at.max(self.dies[die].busy_until);
            self.run_next(die, from);
        }
    }

    /// Maps the units of a sector-mapped write's group on die `d` (or the
    /// next dies, as [`Device::place`] does), padding a partly filled page,
    /// and owes the GC that made room.
    fn place_group(&mut self, d: usize, task: &mut PageTask, at: Nanos) {
        let n = self.dies.len();
        let stream = usize::from(task.stream);
        let len = self.groups[task.group as usize].len as usize;
        let mut last_die = d;
        let mut all_here = true;
        for i in 0..len {
            let lpn = u64::from(self.groups[task.group as usize].lpns[i]);
            let placed = (0..n).map(|k| (d + k) % n).find_map(|die| {
                self.ftl
                    .write(lpn, die as u32, stream)
                    .ok()
                    .map(|placed| (die, placed))
            });
            let Some((die, placed)) = placed else {
                let slot = self.groups[task.group as usize].slots[i];
                self.fail_command(slot);
                continue;
            };
            last_die = die;
            all_here &= die == d;
            task.page = if all_here {
                self.ftl.page_of(placed.ppn)
            } else {
                ELSEWHERE
            };
            self.owe_gc(die, placed.gc, false);
            if die != d && self.dies[die].running.is_none() {
                let from = at.max(self.dies[die].busy_until);
                self.run_next(die, from);
            }
        }
        if len < self.units_per_page as usize {
            self.ftl.pad(last_die as u32, stream);
        }
    }

    /// Starts die `d`'s next operation at `at`, if it has any.
    pub(super) fn run_next(&mut self, d: usize, at: Nanos) {
        let end = match self.preempting_task(d) {
            Some(index) => {
                let mut task = take_task(&mut self.dies[d].host, index);
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
        self.stats.dies[d].busy += end - at;
        self.die_events.push(Reverse((end, d as u32, die.epoch)));
    }

    /// Starts a host page on die `d` at `at` (or when it arrived); returns
    /// when the die is done with it.
    fn start_page(&mut self, d: usize, task: PageTask, at: Nanos) -> Nanos {
        debug_assert!(
            !self.dies[d].owes_gc() || !task.write || self.gc_state(d) == 1,
            "a host write went before owed GC outside state 1"
        );
        let at = at.max(task.arrived);
        let pages = if task.write {
            self.gather_program_partners(d, &task, at)
        } else {
            self.count_read_wait(d, &task);
            self.gather_read_partners(d, &task)
        };
        let (cost, kind) = if task.write {
            (self.t_program, DieWork::Program)
        } else {
            (self.t_read, DieWork::Read)
        };
        let die = &mut self.dies[d];
        die.set_queued_time(die.queued_time - cost);
        die.running = Some(Running::Host(task));
        let c = self.channel_of(d);
        let transfer = match task.write {
            true => Nanos(self.t_page_transfer.0 * u64::from(pages)),
            false => {
                let partners = self.dies[d].batch.iter().map(|t| u64::from(t.bytes));
                self.channel_time(u64::from(task.bytes) + partners.sum::<u64>())
            }
        };
        let end = if task.write {
            let loaded = self.channels[c].max(at) + transfer;
            self.channels[c] = loaded;
            loaded + self.t_program + self.extra_plane_time(pages)
        } else {
            let read_done = at + self.t_read + self.extra_plane_time(pages);
            let out = self.channels[c].max(read_done) + transfer;
            self.channels[c] = out;
            out
        };
        self.dies[d].spent[kind as usize] += end - at;
        end
    }

    /// Channel time of `bytes` (a whole page's is `t_page_transfer`).
    fn channel_time(&self, bytes: u64) -> Nanos {
        Nanos((self.t_page_transfer.0 * bytes + self.page_size / 2) / self.page_size)
    }

    /// A read starting on die `d` waited for what the die started since it
    /// came, by kind of work.
    pub(super) fn count_read_wait(&mut self, d: usize, task: &PageTask) {
        self.stats.host_pages_read += 1;
        let die = &self.dies[d];
        let waits = [
            &mut self.stats.read_waits.behind_read,
            &mut self.stats.read_waits.behind_program,
            &mut self.stats.read_waits.behind_gc,
        ];
        for (kind, wait) in waits.into_iter().enumerate() {
            *wait += die.spent[kind] - task.seen[kind];
        }
    }

    /// A host page operation ended at `at`: its units are programmed (or
    /// read).
    pub(super) fn task_done(&mut self, task: &PageTask, at: Nanos) {
        if task.group != NO_GROUP {
            return self.group_done(task.group, at);
        }
        if task.write && task.slot == DESTAGE_SLOT {
            self.in_dram.release(task.lpn);
        }
        self.page_done(task.slot, at);
    }

    /// Die `d`'s operation ended at `at`.
    pub(super) fn finish_operation(&mut self, d: usize, at: Nanos) {
        self.finish_batch(d, at);
        if let Some(Running::Host(task)) = self.dies[d].running.take() {
            self.task_done(&task, at);
        }
        // A destaged page may have let the cache take a write whose pages
        // already started this die.
        if self.dies[d].running.is_none() {
            self.run_next(d, at);
        }
    }
}
