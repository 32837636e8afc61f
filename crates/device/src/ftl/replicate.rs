//! Fast aging: one die aged on its own, copied onto every die of the drive.
//!
//! Under uniform random overwrites spread round-robin over the dies, with GC
//! inside each die, every die sees the same process: the same share of the
//! writes, the same share of the logical space, the same victim policy. So
//! the state a die reaches (valid units per block, which blocks are free,
//! open or closed, their order and wear) is a sample of one distribution,
//! and aging one die of the same geometry with `1 / dies` of the logical
//! space draws such a sample in `1 / dies` of the time. [`Ftl::replicate`]
//! copies that die onto each die of a fresh drive and names the logical
//! units it holds so that every logical unit is held exactly once:
//! - a unit the sample never overwrote stays where the in-order fill put it
//!   (sample unit `s` on die `d` is logical unit `s * dies + d`, as the fill
//!   stripes them);
//! - the overwritten ones are shuffled over the dies by a seeded permutation
//!   ([`Shuffle`]), as random overwrites scatter them.
//!
//! What a copy does not reproduce: the dies are alike instead of merely
//! alike in distribution, and units left in place come in whole stripes.

use super::{Block, Die, Ftl, UNMAPPED};

/// A seeded pseudo-random permutation of `0..len` that needs no memory: a
/// four-round Feistel network on the smallest even number of bits that
/// covers `len`, walked until it lands inside.
pub(crate) struct Shuffle {
    len: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Shuffle {
    pub(crate) fn new(len: u64, seed: u64) -> Shuffle {
        let bits = (64 - len.max(2).saturating_sub(1).leading_zeros()).max(2);
        let half_bits = bits.div_ceil(2);
        let mut state = seed;
        let keys = std::array::from_fn(|_| {
            state = mix(state.wrapping_add(0x9e37_79b9_7f4a_7c15));
            state
        });
        Shuffle {
            len,
            half_bits,
            keys,
        }
    }

    /// Where `index` (< `len`) goes; a bijection of `0..len`.
    pub(crate) fn apply(&self, index: u64) -> u64 {
        debug_assert!(index < self.len);
        let mask = (1u64 << self.half_bits) - 1;
        let mut x = index;
        loop {
            let (mut left, mut right) = (x >> self.half_bits, x & mask);
            for key in self.keys {
                let next = left ^ (mix(right ^ key) & mask);
                left = right;
                right = next;
            }
            x = (left << self.half_bits) | right;
            if x < self.len {
                return x;
            }
        }
    }
}

/// SplitMix64's finaliser: a good 64-bit mix.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Ftl {
    /// A one-die drive of `config`'s die geometry exposing `logical_units`:
    /// the sample [`Ftl::replicate`] copies.
    pub fn sample_die(config: &crate::DeviceConfig, logical_units: u32) -> Ftl {
        let mut one = config.clone();
        one.geometry.channels = 1;
        one.geometry.dies_per_channel = 1;
        let mut ftl = Ftl::new(&one);
        ftl.logical_units = logical_units;
        ftl.l2p = vec![UNMAPPED; logical_units as usize];
        ftl
    }

    /// Makes this fresh drive `sample` on every die (see the module). The
    /// sample must have this drive's die geometry and stream count and at
    /// most `logical_units / dies` logical units; `overwritten[s]` says
    /// whether sample unit `s` was ever overwritten. Logical units past
    /// `sample units * dies` stay unmapped. Counters are left as they were.
    pub fn replicate(&mut self, sample: &Ftl, overwritten: &[bool], seed: u64) {
        let dies = self.dies.len() as u32;
        assert_eq!(sample.dies.len(), 1, "the sample is one die");
        assert_eq!(sample.blocks_per_die, self.blocks_per_die);
        assert_eq!(sample.units_per_block, self.units_per_block);
        assert!(u64::from(sample.logical_units) * u64::from(dies) <= u64::from(self.logical_units));
        // The overwritten sample units, in order, and each one's rank.
        let shuffled: Vec<u32> = (0..sample.logical_units)
            .filter(|s| overwritten[*s as usize])
            .collect();
        let mut rank = vec![UNMAPPED; sample.logical_units as usize];
        shuffled.iter().enumerate().for_each(|(r, s)| rank[*s as usize] = r as u32);
        let shuffle = Shuffle::new(shuffled.len() as u64 * u64::from(dies), seed);
        let logical = |s: u32, die: u32| -> u32 {
            if rank[s as usize] == UNMAPPED {
                return s * dies + die;
            }
            let j = shuffle.apply(u64::from(rank[s as usize]) * u64::from(dies) + u64::from(die));
            shuffled[(j / u64::from(dies)) as usize] * dies + (j % u64::from(dies)) as u32
        };
        let bpd = self.blocks_per_die;
        let units_per_die = (bpd * self.units_per_block) as usize;
        let scale = u64::from(dies);
        for die in 0..dies {
            let first_block = die * bpd;
            let shift = |b: u32| if b == UNMAPPED { UNMAPPED } else { b + first_block };
            for (i, b) in sample.blocks.iter().enumerate() {
                self.blocks[first_block as usize + i] = Block {
                    prev: shift(b.prev),
                    next: shift(b.next),
                    closed_at: b.closed_at * scale,
                    ..b.clone()
                };
            }
            let d = &sample.dies[0];
            self.dies[die as usize] = Die {
                free: d.free.iter().map(|b| shift(*b)).collect(),
                open: d.open.iter().map(|b| shift(*b)).collect(),
                last_write: d.last_write.iter().map(|w| w * scale).collect(),
                fifo: d.fifo.iter().map(|b| shift(*b)).collect(),
                buckets: d.buckets.iter().map(|b| shift(*b)).collect(),
            };
            let base = die as usize * units_per_die;
            for (slot, &s) in sample.p2l.iter().enumerate() {
                if s != UNMAPPED {
                    let lpn = logical(s, die);
                    self.p2l[base + slot] = lpn;
                    self.l2p[lpn as usize] = (base + slot) as u32;
                }
            }
        }
        self.page_writes = sample.page_writes * scale;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn shuffle_is_a_permutation(len in 1u64..3000, seed: u64) {
            let s = Shuffle::new(len, seed);
            let mut seen = vec![false; len as usize];
            for i in 0..len {
                let j = s.apply(i);
                prop_assert!(j < len);
                prop_assert!(!std::mem::replace(&mut seen[j as usize], true));
            }
        }
    }

    #[test]
    fn shuffle_depends_on_the_seed_and_moves_most_indices() {
        let (a, b) = (Shuffle::new(1000, 1), Shuffle::new(1000, 2));
        let differ = (0..1000).filter(|i| a.apply(*i) != b.apply(*i)).count();
        let fixed = (0..1000).filter(|i| a.apply(*i) == *i).count();
        assert!(differ > 900, "{differ}");
        assert!(fixed < 20, "{fixed}");
    }
}
