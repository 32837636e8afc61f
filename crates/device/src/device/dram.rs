//! Reads served from controller DRAM: a unit written but not yet programmed
//! (in a sector-mapped drive's write buffer, or in the write cache waiting
//! to be destaged) is read from DRAM, without a NAND read, as a controller
//! that keeps its write data until the program ends does. Counted per unit,
//! since one unit can be written again before its first copy is programmed.

use std::collections::HashMap;

#[derive(Clone, Debug, Default)]
pub(super) struct InDram {
    /// Copies of each unit written and not yet programmed.
    copies: HashMap<u32, u32>,
}

impl InDram {
    /// A copy of `unit` entered the buffer or the cache.
    pub(super) fn hold(&mut self, unit: u32) {
        *self.copies.entry(unit).or_default() += 1;
    }

    /// A copy of `unit` was programmed.
    pub(super) fn release(&mut self, unit: u32) {
        if let Some(copies) = self.copies.get_mut(&unit) {
            *copies -= 1;
            if *copies == 0 {
                self.copies.remove(&unit);
            }
        }
    }

    /// Whether a read of `unit` finds it in DRAM.
    pub(super) fn holds(&self, unit: u32) -> bool {
        !self.copies.is_empty() && self.copies.contains_key(&unit)
    }
}
