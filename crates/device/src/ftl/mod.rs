//! The flash translation layer: where each logical page lives, and garbage
//! collection. It counts work but knows no time; [`crate::Device`] turns the
//! work into die time.
//!
//! - Mapped by units of `ftl.mapping_unit` bytes (4 KiB by default; the
//!   page size makes a page-mapped drive): `l2p[lun]` is a physical unit
//!   number (PUN: page * units per page + slot) or [`UNMAPPED`]; `p2l[pun]`
//!   maps back, so GC finds the owner of each valid unit. Both are dense
//!   arrays of `u32`, as cheap per unit as they were per page.
//! - Units fill the open block's pages slot by slot (the write buffer of the
//!   frontier); a page counts as programmed when its last slot is filled, or
//!   when [`Ftl::pad`] closes a partly filled page (a flush of the buffer).
//!   Valid counts, victims and GC moves are in units; [`GcWork`] says how
//!   many pages GC read and programmed to move them.
//! - Each die owns its blocks, free list and open blocks (one per stream:
//!   stream 0 takes host writes, stream 1 GC relocations when
//!   `separate_frontier` is on; lifetime hints can add streams). The caller
//!   picks the die of each host write.
//! - Foreground GC: before a write on a die whose free blocks are below
//!   `low_watermark`, victims of that die are cleaned (valid pages moved to
//!   the GC stream of the same die, as with copyback, then the block erased)
//!   until the pool is back at the watermark. [`Ftl::collect`] cleans one
//!   victim for idle (background) GC. Both return what they did as
//!   [`GcWork`]: the seam where a preemptible GC can later split the work.
//! - Victims: greedy from buckets of closed blocks indexed by valid count
//!   (O(1) per choice), FIFO from a queue in closing order (a fully valid
//!   block at its head is cleaned too, as FIFO cleaning does), cost-benefit
//!   by a scan of the die's closed blocks (O(blocks)).
//!
//! Simplifications: no wear levelling (erase counts are kept for reports);
//! no bad blocks; TRIM unmaps whole units only; a write smaller than a unit
//! programs a whole unit without reading the rest of the old one.

use std::collections::VecDeque;

use iosteer_sched::LifetimeHint;
use thiserror::Error;

use crate::config::{DeviceConfig, VictimPolicy};

/// `l2p` value of a page that holds no data; also "no block" in links.
pub const UNMAPPED: u32 = u32::MAX;

/// Stream of host writes.
pub const HOST_STREAM: usize = 0;
/// Stream of GC relocations (when separate from the host's).
pub const GC_STREAM: usize = 1;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FtlError {
    #[error("logical page {lpn} is beyond the drive's {pages} pages")]
    OutOfRange { lpn: u64, pages: u64 },
    #[error(
        "die {die} has no free block and GC can reclaim nothing (the drive is full of valid data)"
    )]
    NoSpace { die: u32 },
    /// The caller asked aging to stop ([`crate::Device::precondition_until`]).
    #[error("aging was stopped before the drive reached its start state")]
    Stopped,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BlockState {
    Free,
    Open,
    Closed,
}

#[derive(Clone, Debug)]
struct Block {
    state: BlockState,
    /// Valid units.
    valid: u32,
    /// Next unit slot to fill (padding included).
    written: u32,
    erases: u32,
    /// The stream that wrote the block.
    stream: u8,
    /// Page writes of the whole FTL when the block was closed (its age).
    closed_at: u64,
    /// Links in the greedy bucket list.
    prev: u32,
    next: u32,
}

#[derive(Clone, Debug)]
struct Die {
    free: Vec<u32>,
    open: Vec<u32>,
    /// The FTL's page writes when each stream last wrote on this die.
    last_write: Vec<u64>,
    fifo: VecDeque<u32>,
    /// Greedy: head of the list of closed blocks with `v` valid units.
    buckets: Vec<u32>,
}

/// Work done by garbage collection on one die.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct GcWork {
    /// Page moves: each a page read and a page program. On a page-mapped
    /// drive one per valid page; with smaller units, the pages programmed.
    pub pages_moved: u32,
    /// Victim pages read beyond one per page move (sub-page units scattered
    /// over more pages than they fill); each an array read.
    pub extra_reads: u32,
    /// Blocks erased.
    pub blocks_erased: u32,
}

impl GcWork {
    pub fn is_empty(&self) -> bool {
        self.blocks_erased == 0 && self.pages_moved == 0 && self.extra_reads == 0
    }

    fn add(&mut self, other: GcWork) {
        self.pages_moved += other.pages_moved;
        self.extra_reads += other.extra_reads;
        self.blocks_erased += other.blocks_erased;
    }
}

/// Where a write went, and the GC it needed first.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The physical unit now holding the data.
    pub ppn: u32,
    pub gc: GcWork,
}

#[derive(Clone, Debug)]
pub struct Ftl {
    pages_per_block: u32,
    units_per_page: u32,
    /// Unit slots per block: the unit of `Block::written` and `valid`.
    units_per_block: u32,
    blocks_per_die: u32,
    logical_units: u32,
    victim: VictimPolicy,
    low_watermark: u32,
    gc_stream: usize,
    hint_streams: bool,
    /// Logical pages GC moved, in order, while recording is on.
    moved: Vec<u32>,
    record_moves: bool,
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    blocks: Vec<Block>,
    dies: Vec<Die>,
    page_writes: u64,
    pub counters: FtlCounters,
}

impl Ftl {
    /// An empty (all free) drive of `config`'s geometry; `config` should be
    /// valid.
    pub fn new(config: &DeviceConfig) -> Ftl {
        let g = &config.geometry;
        let ppb = g.pages_per_block;
        let upp = config.units_per_page();
        let bpd = g.blocks_per_die();
        let streams = config.gc.streams() as usize;
        let blocks = (0..g.blocks())
            .map(|_| Block {
                state: BlockState::Free,
                valid: 0,
                written: 0,
                erases: 0,
                stream: 0,
                closed_at: 0,
                prev: UNMAPPED,
                next: UNMAPPED,
            })
            .collect();
        let dies = (0..g.dies())
            .map(|d| Die {
                // Popped from the back: lower block numbers first.
                free: (d * bpd..(d + 1) * bpd).rev().collect(),
                open: vec![UNMAPPED; streams],
                last_write: vec![0; streams],
                fifo: VecDeque::new(),
                buckets: vec![UNMAPPED; (ppb * upp) as usize + 1],
            })
            .collect();
        Ftl {
            pages_per_block: ppb,
            units_per_page: upp,
            units_per_block: ppb * upp,
            blocks_per_die: bpd,
            logical_units: config.logical_units() as u32,
            victim: config.gc.victim,
            low_watermark: config.gc.low_watermark,
            hint_streams: config.gc.hint_streams,
            moved: Vec::new(),
            record_moves: false,
            gc_stream: if config.gc.separate_frontier {
                GC_STREAM
            } else {
                HOST_STREAM
            },
            l2p: vec![UNMAPPED; config.logical_units() as usize],
            p2l: vec![UNMAPPED; (g.physical_pages() * u64::from(upp)) as usize],
            blocks,
            dies,
            page_writes: 0,
            counters: FtlCounters::default(),
        }
    }

    /// The stream a host write with `hint` goes to: its own when hint streams
    /// are on, else the host's.
    pub fn stream_for(&self, hint: LifetimeHint) -> usize {
        // After the host's stream and GC's (which is the host's when shared).
        let first_hint_stream = self.gc_stream + 1;
        match hint {
            LifetimeHint::None => HOST_STREAM,
            _ if !self.hint_streams => HOST_STREAM,
            LifetimeHint::Short => first_hint_stream,
            LifetimeHint::Medium => first_hint_stream + 1,
            LifetimeHint::Long => first_hint_stream + 2,
            LifetimeHint::Extreme => first_hint_stream + 3,
        }
    }

    /// Where GC moves the valid pages of a block written by `stream`: hint
    /// streams keep to their own lifetime, everything else goes to GC's
    /// stream.
    fn relocation_stream(&self, stream: usize) -> usize {
        let first_hint_stream = self.gc_stream + 1;
        if !self.hint_streams || stream < first_hint_stream {
            return self.gc_stream;
        }
        let hint = (stream - first_hint_stream) % 4;
        let gc_offset = if self.gc_stream == HOST_STREAM { 0 } else { 4 };
        first_hint_stream + gc_offset + hint
    }

    /// Logical pages: the logical units a page holds, counted as pages.
    pub fn logical_pages(&self) -> u32 {
        self.logical_units / self.units_per_page
    }

    /// Logical mapping units the host sees (pages on a page-mapped drive).
    pub fn logical_units(&self) -> u32 {
        self.logical_units
    }

    pub fn units_per_page(&self) -> u32 {
        self.units_per_page
    }

    /// The physical page holding physical unit `pun`.
    pub fn page_of(&self, pun: u32) -> u32 {
        pun / self.units_per_page
    }

    pub fn dies(&self) -> u32 {
        self.dies.len() as u32
    }

    pub fn pages_per_block(&self) -> u32 {
        self.pages_per_block
    }

    /// The physical unit holding logical unit `lpn`, if any.
    pub fn lookup(&self, lpn: u32) -> Option<u32> {
        self.l2p
            .get(lpn as usize)
            .copied()
            .filter(|p| *p != UNMAPPED)
    }

    /// Asks the cache for what writing `lpn` soon will touch first: its map
    /// entry. Random writes (aging) miss the cache on every page; asking a
    /// few pages ahead lets those misses overlap.
    pub fn prefetch_entry(&self, lpn: u32) {
        prefetch(&self.l2p, lpn as usize);
    }

    /// Asks the cache for what writing `lpn` soon will touch next, once its
    /// map entry is in: the old copy's reverse entry and its block.
    pub fn prefetch_old_copy(&self, lpn: u32) {
        let old = self.l2p.get(lpn as usize).copied().unwrap_or(UNMAPPED);
        if old != UNMAPPED {
            prefetch(&self.p2l, old as usize);
            prefetch(&self.blocks, (old / self.units_per_block) as usize);
        }
    }

    /// The die of physical unit `ppn`.
    pub fn die_of(&self, ppn: u32) -> u32 {
        ppn / self.units_per_block / self.blocks_per_die
    }

    pub fn free_blocks(&self, die: u32) -> u32 {
        self.dies[die as usize].free.len() as u32
    }

    pub fn total_free_blocks(&self) -> u64 {
        self.dies.iter().map(|d| d.free.len() as u64).sum()
    }

    /// Erase counts of every block (wear).
    pub fn erase_counts(&self) -> impl Iterator<Item = u32> + '_ {
        self.blocks.iter().map(|b| b.erases)
    }

    /// Records the logical pages GC moves, for [`Ftl::take_moved`].
    pub fn record_moves(&mut self, on: bool) {
        self.record_moves = on;
        self.moved.clear();
    }

    /// The logical pages GC moved since the last call, in order.
    pub fn take_moved(&mut self) -> std::vec::Drain<'_, u32> {
        self.moved.drain(..)
    }

    pub fn reset_counters(&mut self) {
        self.counters = FtlCounters::default();
    }

    fn check_lpn(&self, lpn: u64) -> Result<u32, FtlError> {
        if lpn < u64::from(self.logical_units) {
            Ok(lpn as u32)
        } else {
            Err(FtlError::OutOfRange {
                lpn,
                pages: u64::from(self.logical_units),
            })
        }
    }

    /// Writes `lpn` on `die` in `stream`, after any foreground GC the die
    /// needs.
    pub fn write(&mut self, lpn: u64, die: u32, stream: usize) -> Result<Placed, FtlError> {
        let lpn = self.check_lpn(lpn)?;
        let gc = self.make_room(die)?;
        let ppn = self.allocate(die, stream)?;
        self.invalidate(lpn);
        self.map(lpn, ppn);
        self.counters.host_pages_written += 1;
        Ok(Placed { ppn, gc })
    }

    /// Closes the partly filled page of `die`'s open block for `stream`, if
    /// any: its empty slots are programmed as padding (a flush of the write
    /// buffer). Returns the slots padded.
    pub fn pad(&mut self, die: u32, stream: usize) -> u32 {
        let block = self.dies[die as usize].open[stream];
        if block == UNMAPPED {
            return 0;
        }
        let b = &mut self.blocks[block as usize];
        let filled = b.written % self.units_per_page;
        if filled == 0 {
            return 0;
        }
        let padding = self.units_per_page - filled;
        b.written += padding;
        self.counters.pages_programmed += 1;
        self.counters.units_padded += u64::from(padding);
        if b.written == self.units_per_block {
            self.dies[die as usize].open[stream] = UNMAPPED;
            self.close(block);
        }
        padding
    }

    /// Unmaps `lpn`; returns whether it held data.
    pub fn trim(&mut self, lpn: u64) -> Result<bool, FtlError> {
        let lpn = self.check_lpn(lpn)?;
        let mapped = self.invalidate(lpn);
        if mapped {
            self.counters.pages_trimmed += 1;
        }
        Ok(mapped)
    }

    /// Foreground GC: cleans victims of `die` until its free pool is back at
    /// the low watermark, or nothing more can be reclaimed (at most one pass
    /// over the die's blocks: FIFO may clean fully valid blocks on its way).
    fn make_room(&mut self, die: u32) -> Result<GcWork, FtlError> {
        let mut work = GcWork::default();
        let mut attempts = self.blocks_per_die;
        while self.free_blocks(die) < self.low_watermark && attempts > 0 {
            attempts -= 1;
            match self.collect(die)? {
                Some(step) => work.add(step),
                None => break,
            }
        }
        Ok(work)
    }

    /// Cleans one victim block of `die`, if any block would free space.
    pub fn collect(&mut self, die: u32) -> Result<Option<GcWork>, FtlError> {
        let Some(victim) = self.take_victim(die) else {
            return Ok(None);
        };
        let destination = self.relocation_stream(usize::from(self.blocks[victim as usize].stream));
        if self.room_for_relocation(die, destination) < self.blocks[victim as usize].valid {
            self.put_back_victim(die, victim);
            return Ok(None);
        }
        let programmed_before = self.counters.pages_programmed;
        let (mut moved, mut pages_read, mut last_page) = (0u32, 0u32, UNMAPPED);
        let first = victim * self.units_per_block;
        let end = first + self.units_per_block;
        for old in first..end {
            // The map entries of the units a few ahead (each a cache miss).
            if let Some(&ahead) = self.p2l[..end as usize].get(old as usize + MOVE_AHEAD) {
                if ahead != UNMAPPED {
                    self.prefetch_entry(ahead);
                }
            }
            let lpn = self.p2l[old as usize];
            if lpn == UNMAPPED {
                continue;
            }
            let new = self.allocate(die, destination)?;
            if self.record_moves {
                self.moved.push(lpn);
            }
            self.p2l[old as usize] = UNMAPPED;
            self.blocks[victim as usize].valid -= 1;
            self.map(lpn, new);
            moved += 1;
            if self.page_of(old) != last_page {
                last_page = self.page_of(old);
                pages_read += 1;
            }
        }
        self.erase(victim);
        self.counters.gc_pages_moved += u64::from(moved);
        self.counters.gc_victims += 1;
        let programmed = (self.counters.pages_programmed - programmed_before) as u32;
        Ok(Some(GcWork {
            pages_moved: programmed,
            extra_reads: pages_read.saturating_sub(programmed),
            blocks_erased: 1,
        }))
    }

    /// Units GC can still write on `die`: the rest of its open GC block and
    /// every free block.
    fn room_for_relocation(&self, die: u32, stream: usize) -> u32 {
        let d = &self.dies[die as usize];
        let open = d.open[stream];
        let in_open = if open == UNMAPPED {
            0
        } else {
            self.units_per_block - self.blocks[open as usize].written
        };
        in_open + d.free.len() as u32 * self.units_per_block
    }

    fn put_back_victim(&mut self, die: u32, block: u32) {
        match self.victim {
            VictimPolicy::Greedy => self.bucket_insert(die, block),
            VictimPolicy::Fifo => self.dies[die as usize].fifo.push_front(block),
            VictimPolicy::CostBenefit => {}
        }
    }

    fn erase(&mut self, block: u32) {
        let die = block / self.blocks_per_die;
        let b = &mut self.blocks[block as usize];
        assert_eq!(b.valid, 0, "GC must never erase a block holding valid data");
        b.state = BlockState::Free;
        b.written = 0;
        b.erases += 1;
        self.dies[die as usize].free.push(block);
        self.counters.blocks_erased += 1;
    }

    /// The next unit slot of `die`'s open block for `stream`, opening a free
    /// block when needed; a page is programmed when its last slot fills.
    fn allocate(&mut self, die: u32, stream: usize) -> Result<u32, FtlError> {
        let upb = self.units_per_block;
        let mut block = self.dies[die as usize].open[stream];
        if block == UNMAPPED {
            self.close_idle_streams(die, stream);
            block = self.dies[die as usize]
                .free
                .pop()
                .ok_or(FtlError::NoSpace { die })?;
            self.blocks[block as usize].state = BlockState::Open;
            self.blocks[block as usize].stream = stream as u8;
            self.dies[die as usize].open[stream] = block;
        }
        let b = &mut self.blocks[block as usize];
        let ppn = block * upb + b.written;
        b.written += 1;
        if b.written % self.units_per_page == 0 {
            self.counters.pages_programmed += 1;
        }
        self.page_writes += 1;
        self.dies[die as usize].last_write[stream] = self.page_writes;
        if b.written == upb {
            self.dies[die as usize].open[stream] = UNMAPPED;
            self.close(block);
        }
        Ok(ppn)
    }

    /// With the free pool at its low watermark, a stream that opens a block
    /// first closes the open blocks of streams idle for a whole drive's worth
    /// of writes (an aging's leftovers, a lifetime no longer written), so
    /// their unwritten pages return to the pool through GC rather than sit
    /// idle for ever.
    fn close_idle_streams(&mut self, die: u32, opening: usize) {
        if self.dies[die as usize].free.len() as u32 > self.low_watermark {
            return;
        }
        let idle_after = self.p2l.len() as u64;
        for stream in 0..self.dies[die as usize].open.len() {
            let d = &self.dies[die as usize];
            let block = d.open[stream];
            let idle = self.page_writes.saturating_sub(d.last_write[stream]) > idle_after;
            if stream != opening && block != UNMAPPED && idle {
                self.dies[die as usize].open[stream] = UNMAPPED;
                self.close(block);
            }
        }
    }

    fn close(&mut self, block: u32) {
        let b = &mut self.blocks[block as usize];
        b.state = BlockState::Closed;
        b.closed_at = self.page_writes;
        let die = block / self.blocks_per_die;
        match self.victim {
            VictimPolicy::Greedy => self.bucket_insert(die, block),
            VictimPolicy::Fifo => self.dies[die as usize].fifo.push_back(block),
            VictimPolicy::CostBenefit => {}
        }
    }

    fn map(&mut self, lpn: u32, ppn: u32) {
        self.l2p[lpn as usize] = ppn;
        self.p2l[ppn as usize] = lpn;
        let block = ppn / self.units_per_block;
        self.change_valid(block, 1);
    }

    /// Drops the mapping of `lpn`; returns whether it had one.
    fn invalidate(&mut self, lpn: u32) -> bool {
        let old = self.l2p[lpn as usize];
        if old == UNMAPPED {
            return false;
        }
        self.l2p[lpn as usize] = UNMAPPED;
        self.p2l[old as usize] = UNMAPPED;
        self.change_valid(old / self.units_per_block, -1);
        true
    }

    fn change_valid(&mut self, block: u32, delta: i32) {
        let greedy_listed = self.victim == VictimPolicy::Greedy
            && self.blocks[block as usize].state == BlockState::Closed;
        let die = block / self.blocks_per_die;
        if greedy_listed {
            self.bucket_remove(die, block);
        }
        let b = &mut self.blocks[block as usize];
        b.valid = b
            .valid
            .checked_add_signed(delta)
            .expect("valid count stays in range");
        if greedy_listed {
            self.bucket_insert(die, block);
        }
    }

    fn bucket_insert(&mut self, die: u32, block: u32) {
        let valid = self.blocks[block as usize].valid as usize;
        let head = self.dies[die as usize].buckets[valid];
        self.blocks[block as usize].prev = UNMAPPED;
        self.blocks[block as usize].next = head;
        if head != UNMAPPED {
            self.blocks[head as usize].prev = block;
        }
        self.dies[die as usize].buckets[valid] = block;
    }

    fn bucket_remove(&mut self, die: u32, block: u32) {
        let (prev, next, valid) = {
            let b = &self.blocks[block as usize];
            (b.prev, b.next, b.valid as usize)
        };
        if prev == UNMAPPED {
            self.dies[die as usize].buckets[valid] = next;
        } else {
            self.blocks[prev as usize].next = next;
        }
        if next != UNMAPPED {
            self.blocks[next as usize].prev = prev;
        }
    }

    /// Removes and returns the victim of `die`, if cleaning one frees space.
    fn take_victim(&mut self, die: u32) -> Option<u32> {
        let ppb = self.units_per_block;
        match self.victim {
            VictimPolicy::Greedy => {
                let valid = self.dies[die as usize].buckets[..ppb as usize]
                    .iter()
                    .position(|head| *head != UNMAPPED)?;
                let block = self.dies[die as usize].buckets[valid];
                self.bucket_remove(die, block);
                Some(block)
            }
            // The oldest block, even a fully valid one: cleaning it gains
            // nothing but moves the queue on to blocks that do.
            VictimPolicy::Fifo => self.dies[die as usize].fifo.pop_front(),
            VictimPolicy::CostBenefit => {
                let first = die * self.blocks_per_die;
                let now = self.page_writes;
                (first..first + self.blocks_per_die)
                    .filter(|b| {
                        let b = &self.blocks[*b as usize];
                        b.state == BlockState::Closed && b.valid < ppb
                    })
                    .max_by(|a, b| {
                        let score = |block: u32| {
                            let b = &self.blocks[block as usize];
                            let u = f64::from(b.valid) / f64::from(ppb);
                            (now - b.closed_at + 1) as f64 * (1.0 - u) / (2.0 * u).max(1e-9)
                        };
                        score(*a).total_cmp(&score(*b))
                    })
            }
        }
    }

    /// Checks every structural invariant; for tests.
    pub fn check_invariants(&self) -> Result<(), String> {
        let ppb = self.units_per_block;
        let mut owner = vec![false; self.p2l.len()];
        for (lpn, &ppn) in self.l2p.iter().enumerate() {
            if ppn == UNMAPPED {
                continue;
            }
            if std::mem::replace(&mut owner[ppn as usize], true) {
                return Err(format!("two logical pages map to physical page {ppn}"));
            }
            if self.p2l[ppn as usize] != lpn as u32 {
                return Err(format!("p2l[{ppn}] does not point back to {lpn}"));
            }
        }
        // A physical unit that names an owner the owner does not name back is
        // a stale copy GC would move over the live one.
        if let Some(stale) = (0..self.p2l.len()).find(|p| {
            let lpn = self.p2l[*p];
            lpn != UNMAPPED && !owner[*p]
        }) {
            return Err(format!("physical unit {stale} holds a stale copy"));
        }
        for (block, b) in self.blocks.iter().enumerate() {
            let first = block as u32 * ppb;
            let counted = (first..first + ppb).filter(|p| owner[*p as usize]).count() as u32;
            if counted != b.valid {
                return Err(format!(
                    "block {block} counts {} valid pages, the map {counted}",
                    b.valid
                ));
            }
            if b.state == BlockState::Free && (b.valid != 0 || b.written != 0) {
                return Err(format!("free block {block} holds data"));
            }
        }
        for (d, die) in self.dies.iter().enumerate() {
            let range = d as u32 * self.blocks_per_die..(d as u32 + 1) * self.blocks_per_die;
            let count = |state| {
                range
                    .clone()
                    .filter(|b| self.blocks[*b as usize].state == state)
                    .count()
            };
            let (free, open, closed) = (
                count(BlockState::Free),
                count(BlockState::Open),
                count(BlockState::Closed),
            );
            if free != die.free.len() {
                return Err(format!(
                    "die {d}: {free} free blocks but {} on the free list",
                    die.free.len()
                ));
            }
            let listed_open = die.open.iter().filter(|b| **b != UNMAPPED).count();
            if open != listed_open {
                return Err(format!(
                    "die {d}: {open} open blocks but {listed_open} frontiers"
                ));
            }
            if free + open + closed != self.blocks_per_die as usize {
                return Err(format!("die {d}: free + open + closed != blocks"));
            }
            // Every closed block is a victim candidate exactly once.
            let listed: Vec<u32> = match self.victim {
                VictimPolicy::Greedy => die
                    .buckets
                    .iter()
                    .flat_map(|&head| {
                        std::iter::successors((head != UNMAPPED).then_some(head), |b| {
                            let next = self.blocks[*b as usize].next;
                            (next != UNMAPPED).then_some(next)
                        })
                    })
                    .collect(),
                VictimPolicy::Fifo => die.fifo.iter().copied().collect(),
                VictimPolicy::CostBenefit => range
                    .clone()
                    .filter(|b| self.blocks[*b as usize].state == BlockState::Closed)
                    .collect(),
            };
            let mut sorted = listed.clone();
            sorted.sort_unstable();
            sorted.dedup();
            if sorted.len() != listed.len() || listed.len() != closed {
                return Err(format!(
                    "die {d}: {closed} closed blocks but {} victim entries",
                    listed.len()
                ));
            }
            if let Some(b) = listed
                .iter()
                .find(|b| self.blocks[**b as usize].state != BlockState::Closed)
            {
                return Err(format!(
                    "die {d}: block {b} is listed as a victim but not closed"
                ));
            }
        }
        Ok(())
    }
}

/// How many units ahead GC asks for the map entries of the units it moves.
const MOVE_AHEAD: usize = 8;

/// A hint that `slice[index]` is read soon; nothing if out of range or on
/// other targets than x86-64.
fn prefetch<T>(slice: &[T], index: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(item) = slice.get(index) {
        // SAFETY: a prefetch reads nothing the program sees and cannot
        // fault; the address is of a live element besides.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                (item as *const T).cast(),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, index);
}

mod counters;
mod fill;
mod replicate;
pub use counters::FtlCounters;
#[cfg(test)]
mod tests;
