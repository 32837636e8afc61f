//! What a job that verifies keeps to read back ([`ReadBack`]): fio keeps
//! the pieces a round wrote in a list in the order written while its
//! random map is on (a random job that never writes a block twice in a
//! pass), else in a tree by offset where a write replaces every older
//! piece it overlaps; [`Record`] does the same, holding runs of equal
//! pieces end to end so that a sequential writer of any size keeps a
//! handful. With `verify_backlog`, batches of read-backs go out among the
//! writes ([`ReadBackState::backlog_piece`]); the rest after the round
//! ([`super::rounds`]).

use std::collections::{BTreeMap, VecDeque};

use iosteer_sched::Op;

use crate::job_shape::ReadBack;

/// `count` pieces of `len` bytes end to end from `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    offset: u64,
    len: u64,
    count: u64,
}

impl Run {
    fn end(&self) -> u64 {
        self.offset + self.len * self.count
    }

    /// The run's pieces that end at or before `at`.
    fn pieces_before(&self, at: u64) -> u64 {
        (at.saturating_sub(self.offset) / self.len).min(self.count)
    }

    /// The first of the run's pieces that starts at or after `at`.
    fn first_from(&self, at: u64) -> u64 {
        at.saturating_sub(self.offset)
            .div_ceil(self.len)
            .min(self.count)
    }
}

/// The pieces a round wrote, to read back, and how many.
#[derive(Debug)]
pub(super) struct Record {
    runs: Runs,
    pieces: u64,
}

#[derive(Debug)]
enum Runs {
    /// fio's history list: in the order written.
    AsWritten(VecDeque<Run>),
    /// fio's history tree: by offset, runs not overlapping, keyed by start.
    ByOffset(BTreeMap<u64, Run>),
}

impl Record {
    fn new(by_offset: bool) -> Record {
        let runs = if by_offset {
            Runs::ByOffset(BTreeMap::new())
        } else {
            Runs::AsWritten(VecDeque::new())
        };
        Record { runs, pieces: 0 }
    }

    pub(super) fn push(&mut self, offset: u64, len: u64) {
        self.pieces += 1;
        match &mut self.runs {
            Runs::AsWritten(runs) => match runs.back_mut() {
                Some(last) if last.len == len && last.end() == offset => last.count += 1,
                _ => runs.push_back(Run {
                    offset,
                    len,
                    count: 1,
                }),
            },
            Runs::ByOffset(runs) => self.pieces -= insert_replacing(runs, offset, len),
        }
    }

    /// The piece [`pop`](Self::pop) would take next.
    fn front(&self) -> Option<(u64, u64)> {
        let run = match &self.runs {
            Runs::AsWritten(runs) => runs.front(),
            Runs::ByOffset(runs) => runs.first_key_value().map(|(_, run)| run),
        };
        run.map(|run| (run.offset, run.len))
    }

    /// The next piece to read back: the oldest, or the lowest.
    pub(super) fn pop(&mut self) -> Option<(u64, u64)> {
        self.pieces = self.pieces.checked_sub(1)?;
        let (piece, rest) = match &mut self.runs {
            Runs::AsWritten(runs) => {
                let run = runs.front_mut()?;
                let piece = (run.offset, run.len);
                run.offset += run.len;
                run.count -= 1;
                if run.count == 0 {
                    runs.pop_front();
                }
                return Some(piece);
            }
            Runs::ByOffset(runs) => {
                let (_, run) = runs.pop_first()?;
                let rest = Run {
                    offset: run.offset + run.len,
                    count: run.count - 1,
                    ..run
                };
                (
                    (run.offset, run.len),
                    (rest.count > 0).then_some((runs, rest)),
                )
            }
        };
        if let Some((runs, rest)) = rest {
            runs.insert(rest.offset, rest);
        }
        Some(piece)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.pieces == 0
    }
}

/// Puts the piece `offset..offset + len` in `runs`, taking out every older
/// piece it overlaps (fio's `log_io_piece` drops an overlapped piece
/// whole); returns how many it took out.
fn insert_replacing(runs: &mut BTreeMap<u64, Run>, offset: u64, len: u64) -> u64 {
    let mut dropped = 0;
    let end = offset + len;
    let before = runs
        .range(..=offset)
        .next_back()
        .map(|(_, run)| *run)
        .filter(|run| run.end() > offset);
    let inside: Vec<Run> = runs.range(offset + 1..end).map(|(_, run)| *run).collect();
    for run in before.into_iter().chain(inside) {
        runs.remove(&run.offset);
        let kept_before = run.pieces_before(offset);
        let first_after = run.first_from(end);
        dropped += first_after - kept_before;
        if kept_before > 0 {
            runs.insert(
                run.offset,
                Run {
                    count: kept_before,
                    ..run
                },
            );
        }
        if first_after < run.count {
            let start = run.offset + first_after * run.len;
            runs.insert(
                start,
                Run {
                    offset: start,
                    count: run.count - first_after,
                    ..run
                },
            );
        }
    }
    match runs.range_mut(..offset).next_back() {
        Some((_, last)) if last.len == len && last.end() == offset => last.count += 1,
        _ => {
            runs.insert(
                offset,
                Run {
                    offset,
                    len,
                    count: 1,
                },
            );
        }
    }
    dropped
}

/// A round's pieces to read back, and where a backlog's batch is.
#[derive(Debug)]
pub(super) struct ReadBackState {
    pub(super) plan: ReadBack,
    pub(super) record: Record,
    /// Read-backs left of a backlog's batch.
    batch_left: u64,
    /// Whether the job's last request to complete (a sync aside) was a
    /// read: fio 3.33's `last_ddir`, which starts a batch only after a
    /// write completed (its initial value is a read's).
    last_done_read: bool,
    /// With a backlog, the writes out (offset, length): fio reads no piece
    /// back while its write is in flight (a handful: the job's iodepth).
    writes_out: Vec<(u64, u64)>,
}

impl ReadBackState {
    pub(super) fn new(plan: ReadBack) -> ReadBackState {
        ReadBackState {
            record: Record::new(plan.by_offset),
            plan,
            batch_left: 0,
            last_done_read: true,
            writes_out: Vec::new(),
        }
    }

    /// A write went out: kept to read back, and with a backlog marked out
    /// until it completes.
    pub(super) fn wrote(&mut self, offset: u64, len: u64) {
        self.record.push(offset, len);
        if self.plan.backlog.is_some() {
            self.writes_out.push((offset, len));
        }
    }

    /// One of the job's requests completed: a write's piece may now be
    /// read back.
    pub(super) fn done(&mut self, op: Op, offset: u64, len: u64) {
        match op {
            Op::Read => self.last_done_read = true,
            Op::Write | Op::Trim => self.last_done_read = false,
            Op::Flush => {}
        }
        if op != Op::Write {
            return;
        }
        if let Some(i) = self.writes_out.iter().position(|&w| w == (offset, len)) {
            self.writes_out.swap_remove(i);
        }
    }

    /// Whether the next piece's write is still out (fio's `get_next_verify`
    /// then reads nothing, and the job writes on).
    fn next_piece_out(&self) -> bool {
        self.record
            .front()
            .is_some_and(|piece| self.writes_out.contains(&piece))
    }

    /// A backlog's read-back due before the job writes on, as fio's
    /// `get_io_u` takes one: a batch under way, or the pieces kept at a
    /// multiple of the backlog with the last request done not a read. A
    /// batch whose next piece is still being written waits, armed, while
    /// the job writes on (fio 3.33, `iodepth=4 verify_backlog=1`: `w0 w1 w2
    /// w3 r0 w4`, the first read-back once the first write completed).
    pub(super) fn backlog_piece(&mut self) -> Option<(u64, u64)> {
        let (every, batch) = self.plan.backlog?;
        if self.record.is_empty() {
            return None;
        }
        if self.batch_left == 0 {
            if self.record.pieces % every != 0 || self.last_done_read {
                return None;
            }
            self.batch_left = batch;
        }
        if self.next_piece_out() {
            return None;
        }
        self.batch_left -= 1;
        self.record.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drained(mut record: Record) -> Vec<(u64, u64)> {
        std::iter::from_fn(|| record.pop()).collect()
    }

    #[test]
    fn a_list_reads_back_in_the_order_written_overwrites_too() {
        let mut record = Record::new(false);
        for (offset, len) in [(8, 4), (0, 4), (4, 4), (0, 4)] {
            record.push(offset, len);
        }
        assert_eq!(drained(record), [(8, 4), (0, 4), (4, 4), (0, 4)]);
    }

    #[test]
    fn a_tree_reads_back_by_offset_each_piece_once() {
        let mut record = Record::new(true);
        for (offset, len) in [(12, 4), (0, 4), (4, 4), (0, 4), (8, 4)] {
            record.push(offset, len);
        }
        assert_eq!(drained(record), [(0, 4), (4, 4), (8, 4), (12, 4)]);
    }

    /// fio drops every older piece a write overlaps, even in part: the
    /// job of `bsrange=4k-16k norandommap` wrote 28 pieces and read back 16.
    #[test]
    fn a_write_over_part_of_older_pieces_drops_them_whole() {
        let mut record = Record::new(true);
        for offset in (0..64).step_by(4) {
            record.push(offset, 4);
        }
        record.push(6, 8);
        let pieces = drained(record);
        assert_eq!(pieces.len(), 14);
        assert!(pieces.contains(&(6, 8)));
        assert!(!pieces.contains(&(4, 4)) && !pieces.contains(&(8, 4)));
        assert!(!pieces.contains(&(12, 4)));
        assert!(pieces.contains(&(0, 4)) && pieces.contains(&(16, 4)));
        assert!(pieces.windows(2).all(|w| w[0].0 + w[0].1 <= w[1].0));
    }

    #[test]
    fn a_sequential_writer_keeps_one_run() {
        let mut record = Record::new(true);
        for offset in (0..1 << 20).step_by(4096) {
            record.push(offset, 4096);
        }
        let Runs::ByOffset(runs) = &record.runs else {
            unreachable!()
        };
        assert_eq!(runs.len(), 1);
        assert_eq!(drained(record).len(), 256);
    }
}
