//! `--verify`: every 4 KiB block a write sends carries a header (a magic
//! number, its own offset, a generation and a checksum of the rest), and every
//! read checks the blocks it gets back.
//!
//! A block is right when its checksum holds, its offset is where it was read
//! from, and its generation is one the verifier allows there: the last write
//! to complete there before the read was sent, any write in flight there
//! then (it may or may not have landed), or any write sent there while the
//! read was in flight (nothing orders a write behind a read in flight: the
//! kernel and the device may apply it first). Writes to a block that were in
//! flight at once may land in either order, so after them any generation of
//! this run is right there until a lone write completes. A block without a
//! header (as it was before the run) is right only if no write there had
//! completed when the read was sent.
//!
//! ## Memory
//!
//! The verifier remembers one byte per block this run has written, a tag of
//! the last completed write's generation ([`tag`]), in chunks of
//! [`CHUNK_BLOCKS`] blocks allocated on a chunk's first write: at most
//! `target bytes / 4096` bytes, 256 MiB for a 1 TiB target (a map entry per
//! block took about 8 GiB), and only the chunks a job touches. Writes in
//! flight are remembered exactly, in a map bounded by the blocks of the
//! commands in flight (queue depth x largest request / 4 KiB). The price of
//! the tag: data left by an earlier write of this same run passes when its
//! generation has the same tag, one chance in 254 per stale block; every
//! other check (checksum, offset, a generation of this run) is exact.
//!
//! [`read_back`] checks a target with no memory of the run at all: each
//! stamped block checks itself (its checksum and its offset).

use std::collections::HashMap;
use std::io;
use std::os::unix::fs::FileExt;

use std::fmt;
use std::path::Path;

use crate::buffers::Buffers;
use crate::target::{OpenOptionsSpec, Target, TargetError};

pub const BLOCK: usize = 4096;
const MAGIC: u64 = 0x696f_7374_6565_7231; // "iosteer1"
const HEADER: usize = 32;

/// Blocks per chunk of remembered tags: 64 KiB of tags for 256 MiB of
/// target.
pub const CHUNK_BLOCKS: u64 = 1 << 16;

/// The tag of a block no write of this run has completed to.
const NEVER: u8 = 0;
/// The tag of a block whose last write failed: it may hold that write's
/// data, some of it, or what was there before, so any of this run's
/// generations passes (its checksum and offset must still hold).
const UNKNOWN: u8 = u8::MAX;

/// A generation's tag: 1 to 254 (0 and 255 have the meanings above).
pub fn tag(generation: u64) -> u8 {
    (generation % 254) as u8 + 1
}

/// What the verifier knows of a block's writes in flight.
#[derive(Clone, Debug, Default)]
struct InFlight {
    generations: Vec<u64>,
    /// The latest generation completed while this entry lived.
    latest_done: u64,
    /// Two writes were in flight here at once while this entry lived: the
    /// device may apply them in either order, whatever order they were sent
    /// or completed in, so the block may end holding either.
    overlapped: bool,
}

/// What a read may find in one block, taken when the read is sent.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Expected {
    /// The tag of the last write completed there ([`NEVER`] if none).
    done: u8,
    /// The lowest and highest generations in flight there, if any.
    in_flight: Option<(u64, u64)>,
    /// The newest generation stamped when the read was sent: a later one
    /// there was sent while the read was in flight.
    sent_up_to: u64,
}

#[derive(Debug)]
pub struct Verifier {
    /// Tags by chunk (block / [`CHUNK_BLOCKS`]).
    done: HashMap<u64, Box<[u8]>>,
    in_flight: HashMap<u64, InFlight>,
    /// Generations of this run are above this.
    base: u64,
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
            done: HashMap::new(),
            in_flight: HashMap::new(),
            base,
            next_generation: base,
            checked: 0,
            mismatches: 0,
            first: Vec::new(),
        }
    }

    /// Bytes of tags held: one per block in each chunk written.
    pub fn tag_bytes(&self) -> u64 {
        self.done.len() as u64 * CHUNK_BLOCKS
    }

    /// Blocks with a write in flight (what the exact map holds).
    pub fn blocks_in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// The report's `--verify` figures, and a note naming each of the
    /// first mismatches by offset.
    pub fn report(&self) -> (iosteer_workload::report::VerifyReport, Vec<String>) {
        let figures = iosteer_workload::report::VerifyReport {
            blocks: self.checked,
            mismatches: self.mismatches,
        };
        let notes = self
            .first
            .iter()
            .map(|(offset, problem)| format!("verify: block at offset {offset}: {problem}"))
            .collect();
        (figures, notes)
    }

    fn done_tag(&self, block: u64) -> u8 {
        self.done
            .get(&(block / CHUNK_BLOCKS))
            .map_or(NEVER, |tags| tags[(block % CHUNK_BLOCKS) as usize])
    }

    fn set_done_tag(&mut self, block: u64, tag: u8) {
        let tags = self
            .done
            .entry(block / CHUNK_BLOCKS)
            .or_insert_with(|| vec![NEVER; CHUNK_BLOCKS as usize].into_boxed_slice());
        tags[(block % CHUNK_BLOCKS) as usize] = tag;
    }

    fn is_this_runs(&self, generation: u64) -> bool {
        generation > self.base && generation <= self.next_generation
    }
}

/// The blocks of `len` bytes at `offset`, by number.
fn blocks(offset: u64, len: u64) -> impl Iterator<Item = u64> {
    let first = offset / BLOCK as u64;
    first..first + len / BLOCK as u64
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
    /// blocks and records the generation as in flight; returns it.
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
        }
        for block in blocks(offset, buf.len() as u64 / BLOCK as u64 * BLOCK as u64) {
            let entry = self.in_flight.entry(block).or_default();
            entry.overlapped |= !entry.generations.is_empty();
            entry.generations.push(generation);
        }
        generation
    }

    /// A write of `len` bytes at `offset` with `generation` completed.
    pub fn write_done(&mut self, offset: u64, len: u64, generation: u64) {
        self.write_ended(offset, len, generation, true);
    }

    /// A write of `len` bytes at `offset` with `generation` failed: its
    /// blocks may hold any part of it, so they pass any generation of this
    /// run until the next write there completes.
    pub fn write_failed(&mut self, offset: u64, len: u64, generation: u64) {
        self.write_ended(offset, len, generation, false);
    }

    fn write_ended(&mut self, offset: u64, len: u64, generation: u64, completed: bool) {
        for block in blocks(offset, len) {
            let Some(entry) = self.in_flight.get_mut(&block) else {
                continue;
            };
            entry.generations.retain(|g| *g != generation);
            let latest = generation >= entry.latest_done;
            if latest {
                entry.latest_done = generation;
            }
            let overlapped = entry.overlapped;
            if entry.generations.is_empty() {
                self.in_flight.remove(&block);
            }
            match (completed, latest) {
                // Which of the overlapping writes landed last is unknown:
                // any of this run's generations passes (its checksum and
                // offset must still hold) until a lone write completes.
                (true, _) if overlapped => self.set_done_tag(block, UNKNOWN),
                (true, true) => self.set_done_tag(block, tag(generation)),
                (false, _) => self.set_done_tag(block, UNKNOWN),
                (true, false) => {}
            }
        }
    }

    /// What each block of a read may hold, taken when it is sent.
    pub fn expect(&self, offset: u64, len: u64) -> Vec<Expected> {
        blocks(offset, len)
            .map(|block| Expected {
                done: self.done_tag(block),
                in_flight: self.in_flight.get(&block).and_then(|e| {
                    Some((*e.generations.iter().min()?, *e.generations.iter().max()?))
                }),
                sent_up_to: self.next_generation,
            })
            .collect()
    }

    /// Checks a read of `buf` at `offset` against what `expect` said then.
    pub fn check(&mut self, offset: u64, buf: &[u8], expected: &[Expected]) {
        for (i, (block, expected)) in buf.chunks_exact(BLOCK).zip(expected.iter()).enumerate() {
            let at = offset + (i * BLOCK) as u64;
            self.checked += 1;
            if let Some(problem) = self.problem(block, at, *expected) {
                self.mismatches += 1;
                if self.first.len() < 16 {
                    self.first.push((at, problem));
                }
            }
        }
    }

    fn problem(&self, block: &[u8], at: u64, expected: Expected) -> Option<String> {
        if expected.done == NEVER && expected.in_flight.is_none() {
            // This run never wrote here: whatever was there before is right.
            return None;
        }
        let generation = match stamped(block, at) {
            Stamp::Good { generation } if self.is_this_runs(generation) => generation,
            // Old data (no header, or an earlier run's) is right only while
            // no write there had completed.
            Stamp::Good { .. } | Stamp::Absent => {
                return (expected.done != NEVER)
                    .then(|| "old data, but a write there had completed".to_string())
            }
            Stamp::Bad(problem) => return Some(problem),
        };
        let in_flight = expected
            .in_flight
            .is_some_and(|(lowest, highest)| (lowest..=highest).contains(&generation));
        let last_done = match expected.done {
            NEVER => false,
            UNKNOWN => true,
            done => tag(generation) == done,
        };
        let sent_since = generation > expected.sent_up_to;
        (!in_flight && !last_done && !sent_since).then(|| {
            format!("generation {generation} is neither the last write completed there before the read nor one in flight or sent since")
        })
    }
}

/// What a block's header says of it.
#[derive(Debug, PartialEq, Eq)]
enum Stamp {
    /// No header: never written by a verifying run.
    Absent,
    /// Its offset is where it was read from and its checksum holds.
    Good {
        generation: u64,
    },
    Bad(String),
}

/// Checks a block read at `at` against its own header.
fn stamped(block: &[u8], at: u64) -> Stamp {
    if word(block, 0) != MAGIC {
        return Stamp::Absent;
    }
    let (offset, generation, sum) = (word(block, 8), word(block, 16), word(block, 24));
    if offset != at {
        return Stamp::Bad(format!("header says offset {offset}"));
    }
    if checksum(&block[HEADER..]) != sum {
        return Stamp::Bad(format!("checksum mismatch (generation {generation})"));
    }
    Stamp::Good { generation }
}

/// What [`read_back`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadBack {
    /// Stamped blocks whose offset and checksum hold.
    pub good: u64,
    /// Stamped blocks whose offset or checksum does not, or that could not
    /// be read.
    pub bad: u64,
    /// Blocks without a stamp: never written by a verifying run, or whose
    /// write was lost (with no memory of the run the two look alike).
    pub never_written: u64,
    /// Bytes past the last whole block, not read.
    pub tail_bytes: u64,
    /// The first bad blocks, as (offset, what was wrong).
    pub first: Vec<(u64, String)>,
}

/// Bytes [`read_back`] reads at once.
const READ_BACK_CHUNK: usize = 1 << 20;

/// Reads every whole block of `target` and checks each stamped one against
/// itself: its offset is where it was read and its checksum holds. Needs no
/// memory of the run that wrote it, so it checks a target after a crash or
/// a power cut. A part that cannot be read counts its blocks as bad and the
/// reading goes on; an error is returned only when no buffer can be had.
pub fn read_back(target: &Target) -> io::Result<ReadBack> {
    let mut buffer = Buffers::new(1, READ_BACK_CHUNK).map_err(io::Error::other)?;
    let end = target.size / BLOCK as u64 * BLOCK as u64;
    let mut found = ReadBack {
        tail_bytes: target.size - end,
        ..ReadBack::default()
    };
    let mut offset = 0;
    while offset < end {
        let len = (end - offset).min(READ_BACK_CHUNK as u64) as usize;
        let chunk = buffer.slice_mut(0, len);
        match target.file.read_exact_at(chunk, offset) {
            Ok(()) => found.count_chunk(offset, chunk),
            Err(e) => found.count_bad(offset, (len / BLOCK) as u64, format!("read failed: {e}")),
        }
        offset += len as u64;
    }
    Ok(found)
}

/// Opens `path` for reading only (direct I/O where its file system takes
/// it, else through the page cache) and [`read_back`]s it.
pub fn read_back_path(path: &Path) -> Result<ReadBack, TargetError> {
    let direct = OpenOptionsSpec {
        direct: true,
        ..OpenOptionsSpec::default()
    };
    let target = match Target::open(path, &direct) {
        Err(TargetError::DirectIoUnsupported { .. }) => {
            Target::open(path, &OpenOptionsSpec::default())?
        }
        opened => opened?,
    };
    read_back(&target).map_err(|source| TargetError::Io {
        path: path.to_path_buf(),
        source,
    })
}

impl fmt::Display for ReadBack {
    /// A line of counts, then a line per bad block found first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "read-back: {} blocks of {BLOCK} bytes: {} good, {} bad, {} never written (unstamped: never written by a verifying run, or the write was lost)",
            self.good + self.bad + self.never_written,
            self.good,
            self.bad,
            self.never_written
        )?;
        if self.tail_bytes > 0 {
            write!(
                f,
                "\nthe last {} bytes, less than a block, were not read",
                self.tail_bytes
            )?;
        }
        for (offset, problem) in &self.first {
            write!(f, "\nbad block at offset {offset}: {problem}")?;
        }
        Ok(())
    }
}

/// Why a read-back does not vouch for its target.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadBackError {
    #[error("{0} blocks disagree with their stamps")]
    Bad(u64),
    /// No block carries a stamp: a target no verifying run wrote, or one
    /// whose every write was lost.
    #[error("no block carries the stamp of `iosteer run --verify`: nothing was checked")]
    NothingChecked,
}

impl ReadBack {
    /// Whether the target held what the verifying run wrote: no bad block,
    /// and at least one stamped block checked.
    pub fn verdict(&self) -> Result<(), ReadBackError> {
        match (self.bad, self.good) {
            (0, 0) => Err(ReadBackError::NothingChecked),
            (0, _) => Ok(()),
            (bad, _) => Err(ReadBackError::Bad(bad)),
        }
    }

    fn count_chunk(&mut self, offset: u64, chunk: &[u8]) {
        for (i, block) in chunk.chunks_exact(BLOCK).enumerate() {
            let at = offset + (i * BLOCK) as u64;
            match stamped(block, at) {
                Stamp::Good { .. } => self.good += 1,
                Stamp::Absent => self.never_written += 1,
                Stamp::Bad(problem) => self.count_bad(at, 1, problem),
            }
        }
    }

    fn count_bad(&mut self, at: u64, blocks: u64, problem: String) {
        self.bad += blocks;
        if self.first.len() < 16 {
            self.first.push((at, problem));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block stamped for offset `at` by `v` (a write in flight), and its
    /// generation.
    fn stamped_block(v: &mut Verifier, at: u64) -> (Vec<u8>, u64) {
        let mut block = vec![0u8; BLOCK];
        let generation = v.stamp(at, &mut block);
        (block, generation)
    }

    /// A block written at `at` through `v`, its write completed.
    fn written_block(v: &mut Verifier, at: u64) -> Vec<u8> {
        let (block, generation) = stamped_block(v, at);
        v.write_done(at, BLOCK as u64, generation);
        block
    }

    /// Checks `block`, read back at `at`, against what `v` expects there.
    fn check_block(v: &mut Verifier, at: u64, block: &[u8]) {
        let expected = v.expect(at, BLOCK as u64);
        v.check(at, block, &expected);
    }

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
        written_block(&mut v, 0);
        check_block(&mut v, 0, &buf[..BLOCK]);
        assert_eq!(v.mismatches, 2, "{:?}", v.first);
        // A place this run never wrote: not judged.
        check_block(&mut v, 1 << 20, &buf[..BLOCK]);
        assert_eq!(v.mismatches, 2);
    }

    #[test]
    fn a_block_left_by_an_earlier_run_is_a_mismatch_once_this_run_wrote_there() {
        let mut earlier = Verifier::starting_at(7 << 32);
        let (block, _) = stamped_block(&mut earlier, 0);
        let mut v = Verifier::starting_at(9 << 32);
        let (_, g) = stamped_block(&mut v, 0);
        check_block(&mut v, 0, &block);
        assert_eq!(
            v.mismatches, 0,
            "the write is in flight: old data may come back"
        );
        v.write_done(0, 4096, g);
        check_block(&mut v, 0, &block);
        assert_eq!(v.mismatches, 1, "{:?}", v.first);
    }

    #[test]
    fn an_older_generation_than_the_last_completed_write_is_a_mismatch() {
        let mut v = Verifier::default();
        let old = written_block(&mut v, 0);
        let new = written_block(&mut v, 0);
        check_block(&mut v, 0, &old);
        assert_eq!(v.mismatches, 1, "stale data came back");
        check_block(&mut v, 0, &new);
        assert_eq!(v.mismatches, 1);
    }

    #[test]
    fn verify_memory_is_one_byte_per_block_of_the_chunks_written() {
        let mut v = Verifier::default();
        let mut block = vec![0u8; BLOCK];
        let region = 1u64 << 30;
        // A block in every 64: each chunk of the region is touched.
        for at in (0..region).step_by(64 * BLOCK) {
            let g = v.stamp(at, &mut block);
            v.write_done(at, BLOCK as u64, g);
        }
        assert_eq!(v.tag_bytes(), region / BLOCK as u64);
        assert_eq!(v.blocks_in_flight(), 0, "completed writes are forgotten");
        // Far away, one more chunk only.
        let g = v.stamp(1 << 40, &mut block);
        assert_eq!(v.blocks_in_flight(), 1);
        v.write_done(1 << 40, BLOCK as u64, g);
        assert_eq!(v.tag_bytes(), region / BLOCK as u64 + CHUNK_BLOCKS);
    }

    #[test]
    fn overlapping_writes_may_land_in_either_order_until_a_lone_write_completes() {
        // Found by scripts/soak.sh: two writes to a block in flight at once,
        // the later one completing first; the device applied the earlier
        // one last, and its data came back.
        let mut v = Verifier::default();
        let (first, g1) = stamped_block(&mut v, 0);
        let (second, g2) = stamped_block(&mut v, 0);
        v.write_done(0, 4096, g2);
        v.write_done(0, 4096, g1);
        assert_eq!(v.blocks_in_flight(), 0);
        check_block(&mut v, 0, &first);
        check_block(&mut v, 0, &second);
        assert_eq!(v.mismatches, 0, "{:?}", v.first);
        // In sending order too: completions say nothing of which landed last.
        let (third, g3) = stamped_block(&mut v, 0);
        let (fourth, g4) = stamped_block(&mut v, 0);
        v.write_done(0, 4096, g3);
        v.write_done(0, 4096, g4);
        check_block(&mut v, 0, &third);
        assert_eq!(v.mismatches, 0, "{:?}", v.first);
        // A lone write settles the block: the others are stale again.
        let lone = written_block(&mut v, 0);
        check_block(&mut v, 0, &lone);
        assert_eq!(v.mismatches, 0, "{:?}", v.first);
        for stale in [&first, &second, &third, &fourth] {
            check_block(&mut v, 0, stale);
        }
        assert_eq!(v.mismatches, 4, "{:?}", v.first);
    }

    #[test]
    fn a_write_sent_while_a_read_is_in_flight_may_land_first() {
        // Found by a review: with reads and writes on the same blocks at
        // queue depth 32, a write sent after a read reached the file before
        // it, and its data came back.
        let mut v = Verifier::default();
        let old = written_block(&mut v, 0);
        let expected = v.expect(0, BLOCK as u64);
        let (new, g) = stamped_block(&mut v, 0);
        v.check(0, &new, &expected);
        v.write_done(0, 4096, g);
        v.check(0, &old, &expected);
        assert_eq!(v.mismatches, 0, "{:?}", v.first);
        // A read sent after that write completed finds only it.
        check_block(&mut v, 0, &old);
        assert_eq!(v.mismatches, 1, "{:?}", v.first);
    }

    #[test]
    fn a_failed_write_leaves_its_blocks_passing_old_or_new_data() {
        let mut v = Verifier::default();
        let old = written_block(&mut v, 0);
        let (mut torn, g2) = stamped_block(&mut v, 0);
        v.write_failed(0, 4096, g2);
        assert_eq!(v.blocks_in_flight(), 0);
        check_block(&mut v, 0, &old);
        check_block(&mut v, 0, &torn);
        assert_eq!(v.mismatches, 0, "{:?}", v.first);
        // Its checksum must still hold.
        torn[100] ^= 1;
        check_block(&mut v, 0, &torn);
        assert_eq!(v.mismatches, 1);
    }

    #[test]
    fn read_back_counts_good_bad_and_never_written_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.img");
        let mut v = Verifier::default();
        // Eight blocks and 100 bytes that are not a block.
        let mut data = vec![0u8; 8 * BLOCK + 100];
        v.stamp(0, &mut data[..6 * BLOCK]);
        // Block 4 flipped, block 5 carries another block's stamp, 6 and 7
        // never written.
        data[4 * BLOCK + 77] ^= 0x10;
        let mut elsewhere = vec![0u8; BLOCK];
        v.stamp(1 << 20, &mut elsewhere);
        data[5 * BLOCK..6 * BLOCK].copy_from_slice(&elsewhere);
        std::fs::write(&path, &data).unwrap();
        let target = Target::open(&path, &crate::OpenOptionsSpec::default()).unwrap();
        let found = read_back(&target).unwrap();
        assert_eq!(
            (found.good, found.bad, found.never_written),
            (4, 2, 2),
            "{found:?}"
        );
        assert_eq!(found.first[0].0, 4 * BLOCK as u64);
        assert!(found.first[0].1.contains("checksum"), "{:?}", found.first);
        assert!(found.first[1].1.contains("offset"), "{:?}", found.first);
        assert_eq!(found.verdict(), Err(ReadBackError::Bad(2)));
        assert_eq!(found.tail_bytes, 100);
        assert!(found.to_string().contains("the last 100 bytes"), "{found}");
    }

    #[test]
    fn a_target_without_a_stamp_checks_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plain.img");
        std::fs::write(&path, vec![7u8; 4 * BLOCK]).unwrap();
        let target = Target::open(&path, &crate::OpenOptionsSpec::default()).unwrap();
        let found = read_back(&target).unwrap();
        assert_eq!((found.never_written, found.tail_bytes), (4, 0));
        assert_eq!(found.verdict(), Err(ReadBackError::NothingChecked));
    }
}
