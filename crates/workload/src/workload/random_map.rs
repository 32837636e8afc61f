//! fio's random map: a random job with it (fio's default) takes each block
//! of a file once a pass. fio draws a block at random; when that block was
//! taken this pass it takes the next free one after it, from the start
//! past the end (its `axmap_next_free`); a request of several blocks stops
//! at the first block already taken (its `mark_random_map` shortens it);
//! and once every block is taken the pass is over and the map starts
//! again. [`RandomMap`] keeps a bit a block and a bit a word of those, so
//! the next free block is found without a scan of every block late in a
//! pass. A file whose pass is over gives its turn to the next file with
//! blocks left, and once every file's is over the job's loop ends (fio
//! marks the file done), even short of `size`, unless the job runs by
//! time or draws its files by a non-uniform distribution, whose full
//! file starts a new pass at once, as fio's does (the next loop of a job
//! starts every file's pass anew).

use rand::rngs::SmallRng;
use rand::Rng;

/// Where a random request of `len` bytes goes in the file of `map`, blocks
/// of `unit` bytes, and how long it is: a block drawn at random, or the
/// next free one; the request cut at the first block taken, and every
/// block it touches taken whole (fio's `mark_random_map`: a 6 KiB request
/// takes two 4 KiB blocks). A pass that has taken every block starts
/// again (a caller whose job ends with the pass never asks of a full map).
pub(super) fn place(map: &mut RandomMap, rng: &mut SmallRng, unit: u64, len: u64) -> (u64, u64) {
    let drawn = rng.random_range(0..map.blocks());
    let first = match map.free_from(drawn) {
        Some(block) => block,
        None => {
            map.reset();
            drawn
        }
    };
    let took = map.take(first, len.div_ceil(unit).max(1));
    (first * unit, (took * unit).min(len))
}

/// The blocks of one file a random job took this pass.
#[derive(Clone, Debug)]
pub(super) struct RandomMap {
    /// A bit a block: taken this pass (the bits past the last block are
    /// set, so they are never free).
    taken: Vec<u64>,
    /// A bit a word of `taken`: every block of the word is taken.
    full: Vec<u64>,
    blocks: u64,
    free: u64,
}

impl RandomMap {
    pub(super) fn new(blocks: u64) -> RandomMap {
        let words = blocks.div_ceil(64) as usize;
        let mut map = RandomMap {
            taken: vec![0; words],
            full: vec![0; words.div_ceil(64)],
            blocks,
            free: blocks,
        };
        map.reset();
        map
    }

    pub(super) fn blocks(&self) -> u64 {
        self.blocks
    }

    /// The pass has taken every block.
    pub(super) fn is_full(&self) -> bool {
        self.free == 0
    }

    /// A new pass: every block free.
    pub(super) fn reset(&mut self) {
        self.taken.fill(0);
        self.full.fill(0);
        self.free = self.blocks;
        let tail = self.blocks % 64;
        if tail > 0 {
            let last = self.taken.len() - 1;
            self.taken[last] = !0 << tail;
        }
    }

    /// The first free block at or after `from`, else the first free one
    /// from the start; `None` when the pass has taken every block.
    pub(super) fn free_from(&self, from: u64) -> Option<u64> {
        if self.free == 0 {
            return None;
        }
        self.free_in(from, self.taken.len())
            .or_else(|| self.free_in(0, self.taken.len()))
    }

    /// The first free block at or after `from`, in words before `end`.
    fn free_in(&self, from: u64, end: usize) -> Option<u64> {
        let word = (from / 64) as usize;
        if word >= end {
            return None;
        }
        let here = !self.taken[word] & (!0u64 << (from % 64));
        if here != 0 {
            return Some(word as u64 * 64 + u64::from(here.trailing_zeros()));
        }
        // The next word not full, by the summary.
        let mut next = word + 1;
        while next < end {
            let (summary, bit) = (next / 64, next % 64);
            let open = !self.full[summary] & (!0u64 << bit);
            if open != 0 {
                let w = summary * 64 + open.trailing_zeros() as usize;
                if w >= end {
                    return None;
                }
                let bits = !self.taken[w];
                return Some(w as u64 * 64 + u64::from(bits.trailing_zeros()));
            }
            next = (summary + 1) * 64;
        }
        None
    }

    /// Takes up to `count` blocks from the free block `first`, stopping at
    /// the first one taken or the file's end; how many it took.
    pub(super) fn take(&mut self, first: u64, count: u64) -> u64 {
        let mut taken = 0;
        while taken < count {
            let block = first + taken;
            let (word, bit) = ((block / 64) as usize, block % 64);
            if block >= self.blocks || self.taken[word] & (1 << bit) != 0 {
                break;
            }
            self.taken[word] |= 1 << bit;
            if self.taken[word] == !0 {
                self.full[word / 64] |= 1 << (word % 64);
            }
            taken += 1;
        }
        self.free -= taken;
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_takes_every_block_once_then_starts_again() {
        for blocks in [1, 63, 64, 65, 4097, 10_000] {
            let mut map = RandomMap::new(blocks);
            let mut seen = vec![false; blocks as usize];
            let mut x = 7u64;
            for _ in 0..blocks {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let b = map.free_from((x >> 20) % blocks).expect("a free block");
                assert!(!seen[b as usize], "{blocks}: block {b} twice");
                seen[b as usize] = true;
                assert_eq!(map.take(b, 1), 1);
            }
            assert_eq!(map.free_from(0), None, "{blocks}");
            map.reset();
            assert_eq!(map.free_from(blocks - 1), Some(blocks - 1));
        }
    }

    #[test]
    fn the_next_free_block_is_after_the_one_drawn_or_from_the_start() {
        let mut map = RandomMap::new(300);
        assert_eq!(map.take(10, 200), 200);
        assert_eq!(map.free_from(10), Some(210));
        assert_eq!(map.take(210, 90), 90);
        assert_eq!(map.free_from(250), Some(0));
        assert_eq!(map.take(0, 10), 10);
        assert_eq!(map.free_from(5), None);
    }

    #[test]
    fn a_request_stops_at_a_taken_block_or_the_end() {
        let mut map = RandomMap::new(16);
        assert_eq!(map.take(4, 1), 1);
        assert_eq!(map.take(2, 4), 2);
        assert_eq!(map.take(14, 4), 2);
    }
}
