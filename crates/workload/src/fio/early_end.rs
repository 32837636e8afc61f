//! Random jobs that fio 3.33 ends early, before `size` bytes, when their
//! directions' blocks differ in size, and iosteer does not
//! ([`early_end_note`]).
//!
//! fio counts a random job's file in blocks of its smallest block over all
//! directions (`rw_min_bs`: 1000 bytes for `bs=4k,1000`, even on a reader),
//! but places each direction's requests at a block number times that
//! direction's own alignment (`blockalign`, by default its own smallest
//! block: 4 KiB for those reads). Two ways this stops a job:
//!
//! - the random map (on unless `norandommap`, a `blockalign` other than the
//!   blocks, or a non-uniform distribution turns it off) has one entry per
//!   1000-byte block; a read draws an entry among the first 256 (1 MiB of
//!   4 KiB blocks) and, when it is used, takes the next free one, which may
//!   be the 257th: offset 1 MiB, past the end, and fio ends the job there,
//!   without an error. `rw=randread bs=4k,1000 size=1m` issues 155 reads
//!   (from 75 to 255 over forty runs with `randrepeat=0`), `rw=randrw` 97 reads
//!   and 100 writes: about half the bytes. A `time_based` job starts a new
//!   pass instead, and so does one with `io_size`; `loops` ends each pass
//!   early.
//! - `zipf`, `pareto` and `normal` draw block numbers over the region in
//!   blocks of the smaller of the read and write blocks, so a read on 4 KiB
//!   lands past the end for three draws in four and fio ends the job at the
//!   first (`rw=randread bs=4k,1000 random_distribution=zipf:1.2 size=1m`:
//!   no I/O at all).
//!
//! Neither is in fio's documentation, which says a job moves `size` bytes;
//! iosteer moves them, and says where fio would not.

use crate::distribution::Distribution;

/// What of a random job decides whether fio ends it early.
pub(super) struct RandomJob<'a> {
    /// Each direction's smallest block (read, write, trim), fio's `min_bs`.
    pub blocks: [u64; 3],
    /// Each direction's random alignment, fio's `ba` (its block unless
    /// `blockalign` is given).
    pub align: [u64; 3],
    /// The directions the job issues.
    pub issued: &'a [usize],
    pub distribution: &'a Distribution,
    pub norandommap: bool,
    /// `time_based` (with a runtime) or `io_size`: fio starts a new pass.
    pub passes_again: bool,
}

const NAMES: [&str; 3] = ["read", "write", "trim"];

/// The note for a job fio 3.33 would end before `size` bytes, if it is one.
pub(super) fn early_end_note(job: &str, j: &RandomJob) -> Option<String> {
    let kb = |b: u64| {
        if b % 1024 == 0 {
            format!("{} KiB", b / 1024)
        } else {
            format!("{b} bytes")
        }
    };
    match j.distribution {
        Distribution::Uniform => {
            // fio: "Any use of blockalign= turns off randommap". A new pass
            // (io_size, time_based) gives the map back its blocks; a
            // distribution's draws land past the end again (below).
            if j.norandommap || j.align != j.blocks || j.passes_again {
                return None;
            }
            let map_block = j.blocks.iter().copied().min()?;
            let d = *j.issued.iter().find(|&&d| j.blocks[d] > map_block)?;
            Some(format!(
                "job {job}: fio 3.33 may end this job early, before `size` bytes: its random map counts \
                 blocks of {} (the job's smallest) and the {}s' offsets fall on {}, so a {} that finds \
                 its block used may be sent past the region's end, where fio stops the job \
                 (`rw=randrw bs=4k,1000 size=1m`: 97 reads and 100 writes, half the bytes); iosteer \
                 moves `size` bytes, as fio does with `norandommap`",
                kb(map_block),
                NAMES[d],
                kb(j.align[d]),
                NAMES[d],
            ))
        }
        Distribution::Zipf { .. } | Distribution::Pareto { .. } | Distribution::Normal { .. } => {
            let range = j.blocks[0].min(j.blocks[1]);
            let d = *j.issued.iter().find(|&&d| j.align[d] > range)?;
            Some(format!(
                "job {job}: fio 3.33 may end this job almost at once: its random_distribution draws \
                 block numbers over blocks of {} (the smaller of the read and write blocks) and puts \
                 a {} at that number times {}, past the region's end for most draws, where fio stops \
                 the job (`rw=randread bs=4k,1000 random_distribution=zipf:1.2 size=1m`: no I/O); \
                 iosteer draws over the {}s' own blocks and moves `size` bytes",
                kb(range),
                NAMES[d],
                kb(j.align[d]),
                NAMES[d],
            ))
        }
        Distribution::Zoned(_) => None,
    }
}
