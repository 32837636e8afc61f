//! `--verify`: every 4 KiB block a write sends carries a header (a magic
//! number, its own offset, a generation and a checksum of the rest), and every
//! read checks the blocks it gets back.
//!
//! A block is right when its checksum holds, its offset is where it was read
//! from, and its generation is one the verifier allows there: at least the
//! last write to complete there before the read was sent (older data came
//! back), at most the last write sent there (a write in flight beside the
//! read may or may not have landed). A block without a header (as it was
//! before the run) is right only if no write there had completed when the
//! read was sent.

use std::collections::HashMap;

pub const BLOCK: usize = 4096;
const MAGIC: u64 = 0x696f_7374_6565_7231; // "iosteer1"
const HEADER: usize = 32;

/// What the verifier knows of one block: the last generation sent, and the
/// last that completed.
#[derive(Copy, Clone, Debug, Default)]
struct Known {
    sent: u64,
    done: u64,
}

#[derive(Debug)]
pub struct Verifier {
    blocks: HashMap<u64, Known>,
    next_generation: u64,
    pub checked: u64,
    pub mismatches: u64,
    /// The first mismatches, as (offset, what was wrong).
    pub first: Vec<(u64, String)>,
}

impl Default for Verifier {
    /// Generations start from a per-run base (the clock's nanoseconds in the
    /// high bits), so blocks left by an earlier run never pass for this one's.
    fn default() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.subsec_nanos() as u64 | 1);
        Verifier::starting_at(nanos << 32)
    }
}

impl Verifier {
    /// A verifier whose first generation is `base + 1`.
    pub fn starting_at(base: u64) -> Verifier {
        Verifier {
            blocks: HashMap::new(),
            next_generation: base,
            checked: 0,
            mismatches: 0,
            first: Vec::new(),
        }
    }
}

fn checksum(data: &[u8]) -> u64 {
    // FNV-1a over 8-byte words: cheap, and any flipped byte changes it.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for chunk in data.chunks_exact(8) {
        h ^= u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn word(data: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(data[at..at + 8].try_into().expect("8 bytes"))
}

impl Verifier {
    /// Fills `buf` (a write of `buf.len()` bytes at `offset`) with stamped
    /// blocks and records the generation as sent; returns it.
    pub fn stamp(&mut self, offset: u64, buf: &mut [u8]) -> u64 {
        self.next_generation += 1;
        let generation = self.next_generation;
        for (i, block) in buf.chunks_exact_mut(BLOCK).enumerate() {
            let at = offset + (i * BLOCK) as u64;
            let mut x = at ^ generation.rotate_left(32);
            for chunk in block[HEADER..].chunks_exact_mut(8) {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                chunk.copy_from_slice(&x.to_le_bytes());
            }
            let sum = checksum(&block[HEADER..]);
            block[0..8].copy_from_slice(&MAGIC.to_le_bytes());
            block[8..16].copy_from_slice(&at.to_le_bytes());
            block[16..24].copy_from_slice(&generation.to_le_bytes());
            block[24..32].copy_from_slice(&sum.to_le_bytes());
            self.blocks.entry(at).or_default().sent = generation;
        }
        generation
    }

    /// A write of `len` bytes at `offset` with `generation` completed.
    pub fn write_done(&mut self, offset: u64, len: u64, generation: u64) {
        for i in 0..len / BLOCK as u64 {
            let known = self.blocks.entry(offset + i * BLOCK as u64).or_default();
            known.done = known.done.max(generation);
        }
    }

    /// The generations each block of a read may hold, taken when it is sent.
    pub fn expect(&self, offset: u64, len: u64) -> Vec<(u64, u64)> {
        (0..len / BLOCK as u64)
            .map(|i| {
                let k = self
                    .blocks
                    .get(&(offset + i * BLOCK as u64))
                    .copied()
                    .unwrap_or_default();
                (k.done, k.sent)
            })
            .collect()
    }

    /// Checks a read of `buf` at `offset` against what `expect` said then.
    pub fn check(&mut self, offset: u64, buf: &[u8], expected: &[(u64, u64)]) {
        for (i, (block, (lowest, highest))) in
            buf.chunks_exact(BLOCK).zip(expected.iter()).enumerate()
        {
            let at = offset + (i * BLOCK) as u64;
            self.checked += 1;
            if let Some(problem) = problem(block, at, *lowest, *highest) {
                self.mismatches += 1;
                if self.first.len() < 16 {
                    self.first.push((at, problem));
                }
            }
        }
    }
}

fn problem(block: &[u8], at: u64, lowest: u64, highest: u64) -> Option<String> {
    if highest == 0 {
        // This run never wrote here: whatever was there before is right.
        return None;
    }
    if word(block, 0) != MAGIC {
        // Old data is right only while no write there had completed.
        return (lowest > 0).then(|| format!("no header, but generation {lowest} was written"));
    }
    let (offset, generation, sum) = (word(block, 8), word(block, 16), word(block, 24));
    if offset != at {
        return Some(format!("header says offset {offset}"));
    }
    if checksum(&block[HEADER..]) != sum {
        return Some(format!("checksum mismatch (generation {generation})"));
    }
    if generation < lowest || generation > highest {
        return Some(format!(
            "generation {generation}, expected {lowest}..={highest}"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamped_block_checks_and_a_flipped_byte_does_not() {
        let mut v = Verifier::default();
        let mut buf = vec![0u8; 2 * BLOCK];
        let generation = v.stamp(8192, &mut buf);
        v.write_done(8192, buf.len() as u64, generation);
        let expected = v.expect(8192, 8192);
        v.check(8192, &buf, &expected);
        assert_eq!((v.checked, v.mismatches), (2, 0));
        buf[BLOCK + 100] ^= 1;
        v.check(8192, &buf, &expected);
        assert_eq!(v.mismatches, 1);
        assert_eq!(v.first[0].0, 8192 + BLOCK as u64);
        // Read back at the wrong place (a place this run wrote).
        let mut other = vec![0u8; BLOCK];
        let g = v.stamp(0, &mut other);
        v.write_done(0, 4096, g);
        v.check(0, &buf[..BLOCK], &v.expect(0, 4096));
        assert_eq!(v.mismatches, 2, "{:?}", v.first);
        // A place this run never wrote: not judged.
        v.check(1 << 20, &buf[..BLOCK], &v.expect(1 << 20, 4096));
        assert_eq!(v.mismatches, 2);
    }

    #[test]
    fn a_block_left_by_an_earlier_run_is_a_mismatch_once_this_run_wrote_there() {
        let mut earlier = Verifier::starting_at(7 << 32);
        let mut block = vec![0u8; BLOCK];
        earlier.stamp(0, &mut block);
        let mut v = Verifier::starting_at(9 << 32);
        let mut mine = vec![0u8; BLOCK];
        let g = v.stamp(0, &mut mine);
        v.check(0, &block, &v.expect(0, 4096));
        assert_eq!(
            v.mismatches, 0,
            "the write is in flight: old data may come back"
        );
        v.write_done(0, 4096, g);
        v.check(0, &block, &v.expect(0, 4096));
        assert_eq!(v.mismatches, 1, "{:?}", v.first);
    }

    #[test]
    fn an_older_generation_than_the_last_completed_write_is_a_mismatch() {
        let mut v = Verifier::default();
        let mut old = vec![0u8; BLOCK];
        let g1 = v.stamp(0, &mut old);
        v.write_done(0, 4096, g1);
        let mut new = vec![0u8; BLOCK];
        let g2 = v.stamp(0, &mut new);
        v.write_done(0, 4096, g2);
        v.check(0, &old, &v.expect(0, 4096));
        assert_eq!(v.mismatches, 1, "stale data came back");
        v.check(0, &new, &v.expect(0, 4096));
        assert_eq!(v.mismatches, 1);
    }
}
