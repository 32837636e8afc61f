//! Preconditioning: aging a fresh drive before it is measured.
//!
//! A new drive has every block free and never collects garbage, so it says
//! nothing about the reads that wait behind GC. Aging fills it, fragments it
//! with random overwrites, and lets idle GC refill the free-block pool, all
//! in the map and untimed (seconds of wall time instead of hours of drive
//! time); counters then start afresh and only wear is kept.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::{gc, Device, DeviceStats};
use crate::ftl::{FtlError, HOST_STREAM};

/// How to age a fresh drive (see [`Device::precondition`]).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Precondition {
    /// Fraction of the logical space written sequentially first.
    pub fill: f64,
    /// Random single-unit (page, when page-mapped) overwrites of the filled
    /// space, in multiples of the logical capacity.
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

impl Device {
    /// Ages the drive without timing it: writes `fill` of the logical space in
    /// order, overwrites random pages of it `overwrite` times its size, then
    /// lets idle GC refill every die to the high watermark. Counters start
    /// afresh; wear is kept.
    pub fn precondition(&mut self, plan: Precondition) -> Result<(), FtlError> {
        let filled = (f64::from(self.ftl.logical_units()) * plan.fill.clamp(0.0, 1.0)) as u64;
        self.fill_and_overwrite(filled, plan)?;
        self.refill_free_blocks()?;
        self.ftl.reset_counters();
        self.ftl.record_moves(gc::merges(&self.config));
        self.pending_moves.clear();
        self.stats = DeviceStats::fresh(self.dies.len());
        self.dies.iter_mut().for_each(|die| die.forget_owed_gc());
        Ok(())
    }

    /// Writes logical pages `0..filled` in order, then random pages of them
    /// `plan.overwrite` times as many, spreading the writes over the dies.
    fn fill_and_overwrite(&mut self, filled: u64, plan: Precondition) -> Result<(), FtlError> {
        let dies = u64::from(self.ftl.dies());
        for lpn in 0..filled {
            self.ftl.write(lpn, (lpn % dies) as u32, HOST_STREAM)?;
        }
        if filled > 0 {
            let mut rng = SmallRng::seed_from_u64(plan.seed);
            let overwrites = (filled as f64 * plan.overwrite.max(0.0)) as u64;
            for i in 0..overwrites {
                let lpn = rng.random_range(0..filled);
                self.ftl.write(lpn, (i % dies) as u32, HOST_STREAM)?;
            }
        }
        Ok(())
    }

    /// Idle GC in the map: cleans victims on each die up to the high
    /// watermark, stopping where a victim frees nothing.
    fn refill_free_blocks(&mut self) -> Result<(), FtlError> {
        let ppb = self.ftl.pages_per_block();
        for die in 0..self.ftl.dies() {
            while self.ftl.free_blocks(die) < self.config.gc.high_watermark {
                match self.ftl.collect(die)? {
                    Some(work) if work.pages_moved < work.blocks_erased * ppb => {}
                    _ => break,
                }
            }
        }
        Ok(())
    }
}
