//! The in-order fill of a fresh drive, written in bulk.
//!
//! Every start state but `empty` begins by writing logical units `0..n` in
//! order, unit `u` on die `u % dies`. On a drive never written, while no die
//! falls to its low watermark, each of those [`Ftl::write`]s does the same
//! few things: the die's `k`-th unit goes to slot `k` of its blocks in free
//! list order (lowest block first), so its physical unit is the die's first
//! unit plus `k`; a block closes when its last slot fills, at a global write
//! count known in closed form. [`Ftl::fill_striped`] writes the maps in one
//! pass and each block's state once, instead of paying the per-write
//! bookkeeping (block opening, valid counts, victim lists) once per unit:
//! on MQSim's 512 GiB drive, filled to 70%, that was most of a run's
//! start-up. Where GC could run, it falls back to the writes themselves, so
//! the state is always exactly theirs (tested against them below).

use super::{BlockState, Ftl, FtlError, HOST_STREAM};
use crate::config::VictimPolicy;

impl Ftl {
    /// Writes logical units `0..units` in order, unit `u` on die
    /// `u % dies`, in the host's stream: the state as many
    /// [`Ftl::write`]s leave. `ask(u)` is called before unit `u` for every
    /// `u` that is a multiple of `ask_every` (at least 1), and an error
    /// from it stops the fill where it was: units `0..u` written, as the
    /// writes one by one would leave them.
    pub fn fill_striped(
        &mut self,
        units: u64,
        ask_every: u64,
        ask: &mut dyn FnMut(u64) -> Result<(), FtlError>,
    ) -> Result<(), FtlError> {
        assert!(ask_every > 0, "asked every 0 units");
        if !self.fills_without_gc(units) {
            let dies = u64::from(self.dies());
            for lpn in 0..units {
                if lpn % ask_every == 0 {
                    ask(lpn)?;
                }
                self.write(lpn, (lpn % dies) as u32, HOST_STREAM)?;
            }
            return Ok(());
        }
        let dies = self.dies();
        let die_units = self.blocks_per_die * self.units_per_block;
        let mut start = 0;
        while start < units {
            if let Err(stop) = ask(start) {
                self.lay_out_filled(start);
                return Err(stop);
            }
            let end = units.min(start + ask_every);
            let (mut die, mut k) = (
                (start % u64::from(dies)) as u32,
                (start / u64::from(dies)) as u32,
            );
            for lpn in start as u32..end as u32 {
                let ppn = die * die_units + k;
                self.l2p[lpn as usize] = ppn;
                self.p2l[ppn as usize] = lpn;
                die += 1;
                if die == dies {
                    (die, k) = (0, k + 1);
                }
            }
            start = end;
        }
        self.lay_out_filled(units);
        Ok(())
    }

    /// Everything but the maps after `units` striped writes.
    fn lay_out_filled(&mut self, units: u64) {
        for die in 0..self.dies() {
            self.lay_out_filled_blocks(die, units as u32);
        }
        self.page_writes = units;
        self.counters.host_pages_written += units;
    }

    /// Whether `units` striped writes on this drive would run no GC and
    /// close no idle stream: it was never written, and each die keeps more
    /// than its low watermark of free blocks before its last block opens.
    fn fills_without_gc(&self, units: u64) -> bool {
        if self.page_writes != 0 || units > u64::from(self.logical_units) {
            return false;
        }
        (0..self.dies()).all(|die| {
            let blocks = self
                .striped_units(die, units as u32)
                .div_ceil(self.units_per_block);
            self.blocks_per_die >= blocks + self.low_watermark
        })
    }

    /// How many of units `0..units` striping puts on `die`.
    fn striped_units(&self, die: u32, units: u32) -> u32 {
        let dies = self.dies();
        units / dies + u32::from(die < units % dies)
    }

    /// Block states, victim lists, free list, open block and counters of
    /// `die` after `units` striped writes.
    fn lay_out_filled_blocks(&mut self, die: u32, units: u32) {
        let dies = u64::from(self.dies());
        let upb = self.units_per_block;
        let written = self.striped_units(die, units);
        let first = die * self.blocks_per_die;
        // The global write count after the die's `k`-th unit: unit
        // `k * dies + die` was written then.
        let count_after = |k: u32| u64::from(k) * dies + u64::from(die) + 1;
        for j in 0..written / upb {
            let block = first + j;
            let b = &mut self.blocks[block as usize];
            (b.state, b.valid, b.written, b.stream) = (BlockState::Closed, upb, upb, 0);
            b.closed_at = count_after((j + 1) * upb - 1);
            match self.victim {
                VictimPolicy::Greedy => self.bucket_insert(die, block),
                VictimPolicy::Fifo => self.dies[die as usize].fifo.push_back(block),
                VictimPolicy::CostBenefit => {}
            }
        }
        let partial = written % upb;
        let used = written.div_ceil(upb);
        if partial > 0 {
            let block = first + written / upb;
            let b = &mut self.blocks[block as usize];
            (b.state, b.valid, b.written, b.stream) = (BlockState::Open, partial, partial, 0);
            self.dies[die as usize].open[HOST_STREAM] = block;
        }
        let d = &mut self.dies[die as usize];
        d.free.truncate(d.free.len() - used as usize);
        if written > 0 {
            d.last_write[HOST_STREAM] = count_after(written - 1);
        }
        self.counters.pages_programmed += u64::from(written / self.units_per_page);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_drives::tiny_4k_pages;

    /// The whole state, as far as it can be compared: every public answer
    /// and the private fields through their debug form.
    fn state(ftl: &Ftl) -> String {
        format!("{ftl:?}")
    }

    fn write_one_by_one(ftl: &mut Ftl, units: u64) {
        let dies = u64::from(ftl.dies());
        for lpn in 0..units {
            ftl.write(lpn, (lpn % dies) as u32, HOST_STREAM).unwrap();
        }
    }

    #[test]
    fn a_bulk_fill_leaves_the_state_the_writes_leave() {
        for victim in VictimPolicy::ALL {
            for separate in [true, false] {
                for dies in [1, 2, 3] {
                    let config = tiny_4k_pages(dies, 16, 8, victim, separate);
                    let logical = u64::from(Ftl::new(&config).logical_units());
                    for units in
                        [0, 1, 7, 8, 9, 17, 64, 100, logical / 2, logical].map(|u| u.min(logical))
                    {
                        let mut bulk = Ftl::new(&config);
                        let mut asked = Vec::new();
                        bulk.fill_striped(units, 10, &mut |u| {
                            asked.push(u);
                            Ok(())
                        })
                        .unwrap();
                        let mut one_by_one = Ftl::new(&config);
                        write_one_by_one(&mut one_by_one, units);
                        let case =
                            format!("{victim} separate={separate} dies={dies} units={units}");
                        assert_eq!(state(&bulk), state(&one_by_one), "{case}");
                        bulk.check_invariants().unwrap();
                        let expected: Vec<u64> = (0..units).step_by(10).collect();
                        assert_eq!(asked, expected, "{case}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_bulk_path_is_taken_only_where_no_gc_can_run() {
        let mut config = tiny_4k_pages(2, 16, 8, VictimPolicy::Greedy, true);
        let mut ftl = Ftl::new(&config);
        let logical = u64::from(ftl.logical_units());
        assert!(ftl.fills_without_gc(logical));
        assert!(!ftl.fills_without_gc(logical + 1), "past the logical space");
        ftl.write(0, 0, HOST_STREAM).unwrap();
        assert!(!ftl.fills_without_gc(1), "a drive already written");
        // A watermark of all but one block: the second block of a die
        // would be opened at the watermark.
        config.gc.low_watermark = 15;
        let ftl = Ftl::new(&config);
        assert!(ftl.fills_without_gc(2 * 8));
        assert!(!ftl.fills_without_gc(2 * 8 + 1));
    }

    #[test]
    fn a_stop_asked_for_ends_the_fill() {
        let config = tiny_4k_pages(2, 16, 8, VictimPolicy::Greedy, true);
        let mut ftl = Ftl::new(&config);
        let stopped = ftl.fill_striped(100, 10, &mut |u| {
            if u == 30 {
                Err(FtlError::Stopped)
            } else {
                Ok(())
            }
        });
        assert_eq!(stopped, Err(FtlError::Stopped));
        // Stopped where it was: the state 30 writes leave, and usable.
        let mut thirty = Ftl::new(&config);
        write_one_by_one(&mut thirty, 30);
        assert_eq!(state(&ftl), state(&thirty));
        ftl.write(99, 0, HOST_STREAM).unwrap();
        ftl.check_invariants().unwrap();
    }
}
