//! Fast aging: a few dies aged on their own, copied onto every die.
//!
//! Under uniform random overwrites spread round-robin over the dies, with GC
//! inside each die, every die sees the same process: the same share of the
//! writes, the same share of the logical space, the same victim policy. So
//! the state a die reaches (valid units per block, which blocks are free,
//! open or closed, their order and wear) is a sample of one distribution,
//! and aging one die of the same geometry with `1 / dies` of the logical
//! space draws such a sample in `1 / dies` of the time. [`Ftl::replicate`]
//! copies a few such samples onto the dies of a fresh drive, round-robin,
//! and names the logical units they hold so that every logical unit is held
//! exactly once:
//! - a unit its sample never overwrote stays where the in-order fill put it
//!   (sample unit `s`, slot `s % u` of the sample's page `s / u`, on die `d`
//!   is logical unit `((s / u) * dies + d) * u + s % u`, `u` units a page,
//!   as the fill stripes pages);
//! - the overwritten ones are permuted among themselves by a seeded shuffle
//!   ([`Shuffle`]), as random overwrites scatter them over the dies.
//!
//! What a copy does not reproduce: dies that copy the same sample are alike
//! rather than alike in distribution; each die holds exactly its share of
//! the logical space (aged together, shares drift by a fraction of a
//! percent, which `aged-fast` restores after the copy: see
//! `spread_die_shares` in `device/precondition.rs`); an overwritten unit lands within 65,536 logical units of where
//! the fill put its position rather than anywhere. `scripts/fast-aging-check.sh`
//! measures what that changes.

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::{Block, Die, Ftl, UNMAPPED};
use crate::splitmix::mix;

/// Indices a [`Shuffle`] permutes among themselves (a chunk of `0..len`).
const CHUNK_BITS: u32 = 16;
const CHUNK: u64 = 1 << CHUNK_BITS;

/// A seeded pseudo-random permutation of `0..len` that is cheap for
/// hundreds of millions of indices: each chunk of [`CHUNK`] consecutive
/// indices is permuted among itself by one random table (a Fisher-Yates
/// shuffle of the chunk, in cache) after an XOR with the chunk's own key, so
/// chunks differ; the last, partial chunk walks the cycle until it lands
/// inside. An index moves at most a chunk away: far enough to scatter
/// logical units over the dies.
pub(crate) struct Shuffle {
    len: u64,
    seed: u64,
    table: Vec<u16>,
    inverse: Vec<u16>,
}

impl Shuffle {
    pub(crate) fn new(len: u64, seed: u64) -> Shuffle {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut table: Vec<u16> = (0..CHUNK).map(|i| i as u16).collect();
        table.shuffle(&mut rng);
        let mut inverse = vec![0u16; CHUNK as usize];
        table
            .iter()
            .enumerate()
            .for_each(|(i, t)| inverse[*t as usize] = i as u16);
        Shuffle {
            len,
            seed,
            table,
            inverse,
        }
    }

    /// Where `index` (< `len`) goes; a bijection of `0..len`.
    pub(crate) fn apply(&self, index: u64) -> u64 {
        self.walk(index, |key, x| u64::from(self.table[(x ^ key) as usize]))
    }

    /// The index [`Shuffle::apply`] sends to `image`.
    pub(crate) fn invert(&self, image: u64) -> u64 {
        self.walk(image, |key, y| u64::from(self.inverse[y as usize]) ^ key)
    }

    /// `step` within the chunk of `index` until the result is below `len`.
    fn walk(&self, index: u64, step: impl Fn(u64, u64) -> u64) -> u64 {
        debug_assert!(index < self.len);
        let base = index & !(CHUNK - 1);
        let key = mix(self.seed ^ base) & (CHUNK - 1);
        let mut x = index - base;
        loop {
            x = step(key, x);
            if base + x < self.len {
                return base + x;
            }
        }
    }
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

    /// The logical units `die` last wrote in `stream` that are still
    /// valid there, newest first, at most `n`: the open block's slots from
    /// its frontier back, then the stream's closed blocks from the latest
    /// closed, each from its last slot back.
    pub fn last_written(&self, die: u32, stream: usize, n: usize) -> Vec<u32> {
        let first = die * self.blocks_per_die;
        let mut blocks: Vec<u32> = (first..first + self.blocks_per_die)
            .filter(|b| {
                let block = &self.blocks[*b as usize];
                block.state == super::BlockState::Closed && usize::from(block.stream) == stream
            })
            .collect();
        blocks.sort_unstable_by_key(|b| std::cmp::Reverse(self.blocks[*b as usize].closed_at));
        let open = self.dies[die as usize].open[stream];
        let mut units = Vec::with_capacity(n);
        for block in (open != UNMAPPED).then_some(open).into_iter().chain(blocks) {
            let start = block * self.units_per_block;
            let written = self.blocks[block as usize].written;
            for pun in (start..start + written).rev() {
                if units.len() == n {
                    return units;
                }
                let lpn = self.p2l[pun as usize];
                if lpn != UNMAPPED {
                    units.push(lpn);
                }
            }
        }
        units
    }

    /// Makes this fresh drive a copy of `samples` (see the module): die `d`
    /// copies sample `d % samples.len()`. Each sample must have this drive's
    /// die geometry and stream count and the same logical units, whole
    /// pages of them, at most
    /// `logical_units / dies`; `overwritten[i][s]` says whether sample `i`
    /// ever overwrote its unit `s`. Logical units past `sample units * dies`
    /// stay unmapped. Counters are left as they were.
    pub fn replicate(&mut self, samples: &[Ftl], overwritten: &[Vec<bool>], seed: u64) {
        let dies = self.dies.len() as u32;
        let share = samples[0].logical_units;
        for sample in samples {
            assert_eq!(sample.dies.len(), 1, "a sample is one die");
            assert_eq!(sample.blocks_per_die, self.blocks_per_die);
            assert_eq!(sample.units_per_block, self.units_per_block);
            assert_eq!(sample.logical_units, share);
        }
        assert!(u64::from(share) * u64::from(dies) <= u64::from(self.logical_units));
        assert_eq!(share % self.units_per_page, 0, "a sample holds whole pages");
        let stripes = u64::from(dies);
        let upp = u64::from(self.units_per_page);
        let of_die = |die: u32| (die as usize) % samples.len();
        // Where the fill stripes logical unit `lpn`: (die, sample unit),
        // and back.
        let striped = |lpn: u64| {
            let page = lpn / upp;
            ((page % stripes) as u32, page / stripes * upp + lpn % upp)
        };
        let unstriped = |s: u64, die: u32| (s / upp * stripes + u64::from(die)) * upp + s % upp;
        // Logical unit `lpn` is "moved" when the sample unit the fill put
        // it in was overwritten: the moved ones are permuted among
        // themselves (the shuffle walked until it lands on a moved one),
        // the others stay where the fill striped them.
        let moved = |lpn: u64| {
            let (die, s) = striped(lpn);
            overwritten[of_die(die)][s as usize]
        };
        let shuffle = Shuffle::new(u64::from(share) * stripes, seed);
        let walk = |lpn: u64, step: &dyn Fn(u64) -> u64| -> u64 {
            let mut x = lpn;
            if moved(x) {
                x = step(x);
                while !moved(x) {
                    x = step(x);
                }
            }
            x
        };
        // Sample unit `s` on `die` -> the logical unit it becomes.
        let logical = |s: u32, die: u32| -> u32 {
            walk(unstriped(u64::from(s), die), &|x| shuffle.apply(x)) as u32
        };
        // Logical unit `lpn` -> the die and the sample unit that hold it.
        let source = |lpn: u32| -> (u32, u32) {
            let (die, s) = striped(walk(u64::from(lpn), &|y| shuffle.invert(y)));
            (die, s as u32)
        };
        let bpd = self.blocks_per_die;
        let units_per_die = bpd * self.units_per_block;
        for die in 0..dies {
            let first_block = die * bpd;
            let shift = |b: u32| {
                if b == UNMAPPED {
                    UNMAPPED
                } else {
                    b + first_block
                }
            };
            let sample = &samples[of_die(die)];
            for (i, b) in sample.blocks.iter().enumerate() {
                self.blocks[first_block as usize + i] = Block {
                    prev: shift(b.prev),
                    next: shift(b.next),
                    closed_at: b.closed_at * stripes,
                    ..b.clone()
                };
            }
            let d = &sample.dies[0];
            self.dies[die as usize] = Die {
                free: d.free.iter().map(|b| shift(*b)).collect(),
                open: d.open.iter().map(|b| shift(*b)).collect(),
                last_write: d.last_write.iter().map(|w| w * stripes).collect(),
                fifo: d.fifo.iter().map(|b| shift(*b)).collect(),
                buckets: d.buckets.iter().map(|b| shift(*b)).collect(),
            };
            // Both maps are written in their own order (the other order
            // writes at random into hundreds of MB: a miss per unit).
            let base = (die * units_per_die) as usize;
            for (slot, &s) in sample.p2l.iter().enumerate() {
                if s != UNMAPPED {
                    self.p2l[base + slot] = logical(s, die);
                }
            }
        }
        for lpn in 0..share * dies {
            let (die, s) = source(lpn);
            let slot = samples[of_die(die)].l2p[s as usize];
            assert_ne!(slot, UNMAPPED, "the sample maps all of its units");
            self.l2p[lpn as usize] = die * units_per_die + slot;
        }
        self.page_writes = samples.iter().map(|s| s.page_writes).max().unwrap_or(0) * stripes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn shuffle_is_a_permutation_and_inverts(len in 1u64..200_000, seed: u64) {
            let s = Shuffle::new(len, seed);
            let mut seen = vec![false; len as usize];
            for i in 0..len {
                let j = s.apply(i);
                prop_assert!(j < len);
                prop_assert!(!std::mem::replace(&mut seen[j as usize], true));
                prop_assert_eq!(s.invert(j), i);
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
