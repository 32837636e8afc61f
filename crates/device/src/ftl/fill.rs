//! The in-order fill of a fresh drive, written in bulk.
//!
//! Every start state but `empty` begins by writing logical units `0..n` in
//! order, a page at a time round-robin over the dies ([`Ftl::striped_die`]:
//! a page's units are consecutive, as a host's sequential writes leave
//! them). On a drive never written, while no die
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
    /// The die the in-order fill writes logical unit `lpn` on: page `p` of
    /// the logical space (units `p * units_per_page ..`) on die `p % dies`.
    /// Striping units instead would fill each page with units `dies` apart,
    /// so that reading one page's worth of logical space took a page read
    /// on each of `units_per_page` dies.
    pub fn striped_die(&self, lpn: u64) -> u32 {
        (lpn / u64::from(self.units_per_page) % u64::from(self.dies())) as u32
    }

    /// Writes logical units `0..units` in order, each on its
    /// [`Ftl::striped_die`], in the host's stream: the state as many
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
            for lpn in 0..units {
                if lpn % ask_every == 0 {
                    ask(lpn)?;
                }
                self.write(lpn, self.striped_die(lpn), HOST_STREAM)?;
            }
            return Ok(());
        }
        let (dies, upp) = (self.dies(), self.units_per_page);
        let die_units = self.blocks_per_die * self.units_per_block;
        let mut start = 0;
        while start < units {
            if let Err(stop) = ask(start) {
                self.lay_out_filled(start);
                return Err(stop);
            }
            let end = units.min(start + ask_every);
            // Unit `slot` of the die's page that starts at its unit `k`.
            let page = start as u32 / upp;
            let (mut die, mut k, mut slot) = (page % dies, page / dies * upp, start as u32 % upp);
            for lpn in start as u32..end as u32 {
                let ppn = die * die_units + k + slot;
                self.l2p[lpn as usize] = ppn;
                self.p2l[ppn as usize] = lpn;
                slot += 1;
                if slot == upp {
                    (die, slot) = (die + 1, 0);
                    if die == dies {
                        (die, k) = (0, k + upp);
                    }
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
        let (dies, upp) = (self.dies(), self.units_per_page);
        let (pages, rest) = (units / upp, units % upp);
        let whole = pages / dies + u32::from(die < pages % dies);
        whole * upp + if die == pages % dies { rest } else { 0 }
    }

    /// Block states, victim lists, free list, open block and counters of
    /// `die` after `units` striped writes.
    fn lay_out_filled_blocks(&mut self, die: u32, units: u32) {
        let (dies, upp) = (u64::from(self.dies()), u64::from(self.units_per_page));
        let upb = self.units_per_block;
        let written = self.striped_units(die, units);
        let first = die * self.blocks_per_die;
        // The global write count after the die's `k`-th unit: slot `k % upp`
        // of logical page `k / upp * dies + die` was written then.
        let count_after = |k: u32| {
            let k = u64::from(k);
            (k / upp * dies + u64::from(die)) * upp + k % upp + 1
        };
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
        for lpn in 0..units {
            ftl.write(lpn, ftl.striped_die(lpn), HOST_STREAM).unwrap();
        }
    }

    #[test]
    fn a_bulk_fill_leaves_the_state_the_writes_leave() {
        for victim in VictimPolicy::ALL {
            for (separate, unit) in [(true, 4096), (false, 4096), (true, 1024), (false, 512)] {
                for dies in [1, 2, 3] {
                    let mut config = tiny_4k_pages(dies, 16, 8, victim, separate);
                    config.ftl.mapping_unit = unit;
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
                        let case = format!(
                            "{victim} separate={separate} unit={unit} dies={dies} units={units}"
                        );
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
    fn the_fill_keeps_each_logical_page_in_one_physical_page() {
        // 1 KiB units of 4 KiB pages on 3 dies. The fill striped units:
        // logical units 0..4 went to dies 0, 1, 2, 0, and a 4 KiB read of
        // them took three page reads (a 128 KiB read on consumer-sata in
        // 4 KiB units took 0.66 ms after `fill`, 0.36 ms after the host
        // wrote the same range; in 512-byte units 3.49 ms).
        let mut config = tiny_4k_pages(3, 16, 8, VictimPolicy::Greedy, true);
        config.ftl.mapping_unit = 1024;
        for bulk in [true, false] {
            let mut ftl = Ftl::new(&config);
            let units = ftl.logical_units();
            if bulk {
                ftl.fill_striped(u64::from(units), 64, &mut |_| Ok(()))
                    .unwrap();
            } else {
                write_one_by_one(&mut ftl, u64::from(units));
            }
            for lpn in 0..units {
                let (first, this) = (ftl.lookup(lpn / 4 * 4), ftl.lookup(lpn));
                let page = |u: Option<u32>| ftl.page_of(u.unwrap());
                assert_eq!(page(this), page(first), "unit {lpn}, bulk {bulk}");
                assert_eq!(ftl.die_of(this.unwrap()), lpn / 4 % 3, "unit {lpn}");
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
