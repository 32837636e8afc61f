//! Multi-plane operations: a die reads, programs (or GC moves) up to
//! `planes_per_die` pages of different planes in one operation, each plane beyond the first
//! adding `multi_plane.extra_us_per_plane`; with `same_page_offset` the
//! pages must also sit at one page offset in their blocks (ONFI's rule on
//! many parts).
//!
//! Where a page is: the FTL's block of a die is taken as a multi-plane block
//! (one block per plane, programmed together, as controllers that use
//! multi-plane programs lay data out), so its consecutive pages lie in the
//! planes in turn: plane = page in block mod planes, offset = page in block
//! div planes. A sequential extent written on one die then reads back two
//! (or more) pages per operation. A host program takes as partners the writes
//! queued behind it that are placed next on the same die (the frontier's
//! next pages lie in the next planes); GC's page moves go `planes_per_die`
//! at a time.

use iosteer_sched::Nanos;

use super::dies::{PageTask, ELSEWHERE};
use super::Device;

/// How far into a die's queue a read looks for partners: a bound on the
/// per-operation cost, deep enough for any NCQ or NVMe queue's reads of one
/// die to pair up.
const PARTNER_SCAN: usize = 32;

/// What a partner scan does with a queued task.
#[derive(Clone, Copy)]
enum Partner {
    /// It joins the operation.
    Join,
    /// It stays queued; the scan goes on behind it.
    PassOver,
    /// It stays queued, and so does everything behind it.
    Stop,
}

impl Device {
    /// Pages per operation: `planes_per_die` with multi-plane on, else 1.
    pub(super) fn planes_per_operation(&self) -> u32 {
        if self.config.multi_plane.enabled {
            self.config.geometry.planes_per_die
        } else {
            1
        }
    }

    /// Plane and page offset of physical page `page` (see the module doc).
    fn plane_and_offset(&self, page: u32) -> (u32, u32) {
        let planes = self.config.geometry.planes_per_die;
        let in_block = page % self.config.geometry.pages_per_block;
        (in_block % planes, in_block / planes)
    }

    /// Takes from die `d`'s queue the reads that can join `first` in one
    /// multi-plane read (different planes, and one offset if required) into
    /// the die's batch; returns how many pages the operation reads.
    pub(super) fn gather_read_partners(&mut self, d: usize, first: &PageTask) -> u32 {
        if self.planes_per_operation() == 1 {
            return 1;
        }
        self.gather_partners(d, first, Partner::PassOver, |device, index| {
            if device.dies[d].host[index].write {
                Partner::PassOver
            } else {
                Partner::Join
            }
        })
    }

    /// Takes from die `d`'s queue the writes that can join the placed write
    /// `first` in one multi-plane program starting at `at`: writes already
    /// there, placed on this die in another plane (and at one offset if
    /// required), placed here as they are taken. Stops at the first write
    /// that lands elsewhere or makes the die owe GC (which must then go
    /// first); returns how many pages the operation programs.
    pub(super) fn gather_program_partners(&mut self, d: usize, first: &PageTask, at: Nanos) -> u32 {
        if self.planes_per_operation() == 1 || first.page == ELSEWHERE || self.dies[d].owes_gc() {
            return 1;
        }
        self.gather_partners(d, first, Partner::Stop, |device, index| {
            let mut task = device.dies[d].host[index];
            if !task.write || task.arrived > at {
                return Partner::PassOver;
            }
            if !task.placed {
                device.place(d, &mut task, at);
                device.dies[d].host[index] = task;
            }
            if task.page == ELSEWHERE || device.dies[d].owes_gc() {
                Partner::Stop
            } else {
                Partner::Join
            }
        })
    }

    /// The scan both gatherers share: looks at most [`PARTNER_SCAN`] tasks
    /// into die `d`'s queue; `judge` says what to do with each, and a task it
    /// lets join must also sit in a plane not used yet (and at `first`'s
    /// offset if required), or `misfit` is done instead. Joining tasks leave
    /// the queue for the die's batch until the operation has all its planes;
    /// returns how many pages the operation takes.
    fn gather_partners(
        &mut self,
        d: usize,
        first: &PageTask,
        misfit: Partner,
        mut judge: impl FnMut(&mut Device, usize) -> Partner,
    ) -> u32 {
        let planes = self.planes_per_operation();
        let same_offset = self.config.multi_plane.same_page_offset;
        let (plane, offset) = self.plane_and_offset(first.page);
        let mut used = 1u64 << plane;
        let mut index = 0;
        let mut scanned = 0;
        while index < self.dies[d].host.len() && scanned < PARTNER_SCAN {
            scanned += 1;
            let verdict = match judge(self, index) {
                Partner::Join => {
                    let (p, o) = self.plane_and_offset(self.dies[d].host[index].page);
                    if used & (1 << p) != 0 || (same_offset && o != offset) {
                        misfit
                    } else {
                        used |= 1 << p;
                        Partner::Join
                    }
                }
                other => other,
            };
            match verdict {
                Partner::PassOver => {
                    index += 1;
                    continue;
                }
                Partner::Stop => break,
                Partner::Join => {}
            }
            let task = self.dies[d].host.remove(index).expect("index is in range");
            let die = &mut self.dies[d];
            if task.write {
                die.set_queued_time(die.queued_time - self.t_program);
            } else {
                die.set_queued_time(die.queued_time - self.t_read);
                self.count_read_wait(d, &task);
            }
            self.dies[d].batch.push(task);
            if self.dies[d].batch.len() + 1 == planes as usize {
                break;
            }
        }
        1 + self.dies[d].batch.len() as u32
    }

    /// Die time the extra planes of an operation of `pages` pages add.
    pub(super) fn extra_plane_time(&self, pages: u32) -> Nanos {
        Nanos(u64::from(pages.saturating_sub(1)) * self.t_plane_extra.0)
    }

    /// Runs `queue` with the dies held (with multi-plane on), so the pages it
    /// queues together can pair up, then starts the idle dies given work at
    /// `at`. Nested calls start them once, at the outermost.
    pub(super) fn queue_together<T>(
        &mut self,
        at: Nanos,
        queue: impl FnOnce(&mut Device) -> T,
    ) -> T {
        let outer = self.holding_dies;
        self.holding_dies = outer || self.config.multi_plane.enabled;
        let result = queue(self);
        if !outer && std::mem::take(&mut self.holding_dies) {
            self.start_held_dies(at);
        }
        result
    }

    /// Starts the idle dies that were given pages while held.
    fn start_held_dies(&mut self, at: Nanos) {
        for d in 0..self.dies.len() {
            let die = &self.dies[d];
            if die.running.is_none() && !die.host.is_empty() {
                let from = at.max(die.busy_until);
                self.run_next(d, from);
            }
        }
    }

    /// Completes the pages that ran with die `d`'s operation ending at `at`.
    pub(super) fn finish_batch(&mut self, d: usize, at: Nanos) {
        if self.dies[d].batch.is_empty() {
            return;
        }
        let mut batch = std::mem::take(&mut self.dies[d].batch);
        for task in batch.drain(..) {
            self.task_done(&task, at);
        }
        // Keep the allocation for the next batch.
        self.dies[d].batch = batch;
    }
}
