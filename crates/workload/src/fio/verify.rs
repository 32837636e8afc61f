//! fio's verification options and what they make of a job: `verify` (the
//! method), `do_verify`, `verify_backlog` and `verify_backlog_batch`. A job
//! that writes with a method and `do_verify=1` (fio's default), and is not
//! `time_based`, reads back what it wrote ([`ReadBack`]); with a method a
//! loop moves `size` whatever `io_size` says (fio 3.33's `do_io`). The
//! data itself is not checked: the notes say so.

use super::values::{boolean, Setting};
use super::VERIFY_METHODS;
use crate::distribution::Distribution;
use crate::job_shape::{JobShape, ReadBack, Rounds};
use crate::workload::{Job, JobKind, Synthetic};

/// Pieces the read-backs of a job file's jobs may hold at once: fio keeps
/// each piece a job wrote until it reads it back (about 100 bytes each in
/// fio, about 65 here), and a job file that would hold more is refused
/// before it runs rather than run out of memory (about 1 GiB here). A
/// sequential writer of one block size holds a few runs whatever its size,
/// so only random writers, holes and mixed sizes count.
pub const MAX_READ_BACK_PIECES: u64 = 1 << 24;

/// What a section's verification options said.
#[derive(Clone, Debug)]
pub(super) struct Verify {
    /// fio's `verify` method; `None` for none.
    pub(super) method: Option<String>,
    do_verify: bool,
    /// fio's `verify_backlog` (0: none) and `verify_backlog_batch` (0: the
    /// backlog).
    backlog: u64,
    backlog_batch: u64,
    /// fio's `verify_only`: the writes are not issued, only read back.
    only: bool,
    /// fio's `random_generator=lfsr`: it never draws an offset twice a
    /// pass and keeps no random map, so it reads back by offset.
    lfsr: bool,
}

impl Default for Verify {
    fn default() -> Verify {
        Verify {
            method: None,
            do_verify: true,
            backlog: 0,
            backlog_batch: 0,
            only: false,
            lfsr: false,
        }
    }
}

impl Verify {
    /// Reads `key` if it is one of these options (`Ok(false)` if not); an
    /// error is the message.
    pub(super) fn option(&mut self, setting: &Setting) -> Result<bool, String> {
        let value = setting.value;
        let count = || {
            value
                .parse::<u64>()
                .map_err(|_| setting.bad("a count of blocks (0: none)"))
        };
        match setting.key {
            "verify" => {
                self.method = match value {
                    "0" | "none" | "" => None,
                    v if VERIFY_METHODS.contains(&v) => Some(v.to_string()),
                    _ => {
                        let methods = VERIFY_METHODS.join(", ");
                        return Err(setting.bad(&format!("a verify method: {methods}")));
                    }
                }
            }
            "do_verify" => {
                self.do_verify = boolean(value).ok_or_else(|| setting.bad("0 or 1"))?;
            }
            "verify_backlog" => self.backlog = count()?,
            "verify_backlog_batch" => self.backlog_batch = count()?,
            "verify_only" => {
                self.only = boolean(value).ok_or_else(|| setting.bad("nothing, 0 or 1"))?;
            }
            // Which offsets a random job draws is the same here (each block
            // once a pass); only the read-back's order tells them apart.
            "random_generator" => {
                self.lfsr = match value {
                    "lfsr" => true,
                    "tausworthe" | "tausworthe64" => false,
                    _ => return Err(setting.bad("tausworthe, lfsr or tausworthe64")),
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Whether the job reads back what it writes.
    fn reads_back(&self, s: &Synthetic) -> bool {
        let writes = s.read_percent < 100 && !s.trim;
        self.method.is_some() && self.do_verify && writes
    }

    /// The note of a job that reads back, or that fio would have read back.
    pub(super) fn note(&self, job: &str, s: &Synthetic, time_based: bool) -> Option<String> {
        let method = self.method.as_ref().filter(|_| self.reads_back(s))?;
        let what = if time_based && self.backlog > 0 {
            "fio reads each verify_backlog back while a time_based job runs; that is not \
             modelled here: nothing it writes is read back"
        } else if time_based {
            "a time_based job reads nothing back, as in fio (its runtime ends it first)"
        } else if self.only {
            "verify_only: the job issues no writes, and reads back what they would have \
             written, as fio does (an earlier run wrote it)"
        } else {
            "after each loop the job reads back what it wrote, as fio does (do_verify=1, \
             its default)"
        };
        Some(format!(
            "job {job}: verify={method}: {what}; the data is not checked \
             (iosteer run --verify checks data as it goes)"
        ))
    }

    /// Sets the rounds of a job that is not time based, with its
    /// read-back, and its byte limit: `size` and `io_size` are a loop's
    /// bytes without and with `io_size`.
    pub(super) fn apply(
        &self,
        shape: &mut JobShape,
        s: &Synthetic,
        (size, io_size): (u64, u64),
        (loops, norandommap): (u64, bool),
    ) {
        // fio's `do_io` ends a round at `size`, or for a random writer
        // without the random map at all its loops' bytes, and a backlog's
        // reads count in it.
        let writes = s.read_percent < 100 && !s.trim;
        let random_without_map = writes && !s.sequential && norandommap;
        // One round does all of a random writer's loops without the map.
        let round = match random_without_map {
            true => size.max(io_size.saturating_mul(loops)),
            false => size,
        };
        // fio reads back in the order written only while its random map
        // is on (`log_io_piece`): none with `norandommap`, nor for a
        // distribution other than uniform or with the lfsr generator, for
        // which it keeps no map.
        let random_map = !norandommap && !self.lfsr && shape.distribution == Distribution::Uniform;
        let read_back = self.reads_back(s).then(|| ReadBack {
            by_offset: s.sequential || !random_map,
            backlog: (self.backlog > 0).then(|| {
                let batch = if self.backlog_batch > 0 {
                    self.backlog_batch
                } else {
                    self.backlog
                };
                (self.backlog, batch)
            }),
            dry: self.only,
        });
        let backlog = read_back.as_ref().is_some_and(|r| r.backlog.is_some());
        shape.bytes_limit = Some(io_size.saturating_mul(loops));
        shape.rounds = Some(Rounds {
            round_bytes: round + if backlog { size } else { 0 },
            goal_bytes: io_size,
            loops,
            // With a method but no read-back, fio 3.33 stops after its
            // loops (`rw=write size=256k io_size=512k verify=crc32c
            // do_verify=0`: 64 writes); a read-back lets it go on.
            past_loops: self.method.is_none() || read_back.is_some(),
            goal_given: false,
            read_back,
        });
    }
}

/// The pieces `job` keeps to read back, at most, in a round (0 for a
/// sequential writer of one block size, which keeps a few runs).
pub(super) fn pieces_kept(job: &Job) -> u64 {
    let (JobKind::Synthetic(s), Some(rounds)) = (&job.kind, &job.shape.rounds) else {
        return 0;
    };
    let shape = &job.shape;
    let compact = s.sequential
        && shape.blocks.is_none()
        && s.block_min == s.block_max
        && shape.offset_add == 0;
    if rounds.read_back.is_none() || compact {
        return 0;
    }
    let smallest = shape
        .blocks
        .as_ref()
        .map_or(s.block_min, |b| b[1].smallest())
        .max(1);
    rounds.round_bytes / smallest
}

/// Refuses a job file whose jobs would keep more than
/// [`MAX_READ_BACK_PIECES`] pieces to read back, `total` with this job's.
pub(super) fn check_pieces(total: u64) -> Result<(), String> {
    if total <= MAX_READ_BACK_PIECES {
        return Ok(());
    }
    Err(format!(
        "verify with do_verify=1 reads back every block a loop wrote, and the jobs up \
         to this one would keep {total} of them to read back; at most \
         {MAX_READ_BACK_PIECES}: smaller sizes, larger blocks, fewer jobs, or do_verify=0"
    ))
}
