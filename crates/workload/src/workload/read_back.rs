//! fio's verify read-back ([`ReadBack`]): a job that writes with `verify=`
//! and `do_verify=1` (fio's default) works in rounds, as fio's
//! `thread_main` does. A round issues the job's own requests until it has
//! moved `round_bytes` (fio's `do_io`), lets them complete, flushes if the
//! job has `end_fsync`, then reads back what the round wrote (fio's
//! `do_verify`): every written piece once, as fast as the job's iodepth
//! allows, whatever its rate or think time. fio keeps the pieces in a list
//! in the order written while its random map is on (a random job that
//! never writes a block twice in a pass), else in a tree by offset where a
//! write replaces every older piece it overlaps; [`Record`] does the same,
//! holding runs of equal pieces end to end so that a sequential writer of
//! any size keeps a handful. Rounds go on while the job has `loops` left,
//! then while the bytes it completed, read-backs included, fall short of
//! its `io_size` (or `size`) by a largest block or more (fio's
//! `keep_running`). A round cut short by the runtime reads nothing back,
//! and read-backs stop at the job's stop, as fio 3.33's do. With
//! `verify_backlog`, batches of read-backs go out among the writes too
//! ([`ReadBack::backlog`]).

use std::collections::{BTreeMap, VecDeque};

use iosteer_sched::{Nanos, Op, Request};

use super::rates::direction_index;
use super::{Generator, JobKind, Planned};
use crate::bssplit::BlockSplit;
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
struct Record {
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

    fn push(&mut self, offset: u64, len: u64) {
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

    /// The next piece to read back: the oldest, or the lowest.
    fn pop(&mut self) -> Option<(u64, u64)> {
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

    fn is_empty(&self) -> bool {
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Issuing the job's own requests.
    Writing,
    /// The round's flush (`end_fsync`) is due, or out.
    FlushDue,
    Flushing,
    /// Reading back the round's pieces.
    Reading,
    /// No round follows.
    Done,
}

/// Where a job that reads back is ([`ReadBack`]).
#[derive(Debug)]
pub(super) struct ReadBackState {
    plan: ReadBack,
    record: Record,
    stage: Stage,
    /// Bytes of the job's own requests issued in this round.
    round_issued: u64,
    rounds: u64,
    /// Bytes completed, read-backs included (fio's `io_bytes`).
    completed: u64,
    /// Read-backs left of a backlog's batch, and whether the job's last
    /// request was one.
    batch_left: u64,
    last_was_read_back: bool,
}

impl ReadBackState {
    pub(super) fn new(plan: ReadBack) -> ReadBackState {
        ReadBackState {
            record: Record::new(plan.by_offset),
            plan,
            stage: Stage::Writing,
            round_issued: 0,
            rounds: 1,
            completed: 0,
            batch_left: 0,
            last_was_read_back: false,
        }
    }

    /// No round follows: the job's own limits end it.
    pub(super) fn done(&self) -> bool {
        self.stage == Stage::Done
    }

    /// The round has moved its bytes: the job's own requests wait.
    fn round_full(&self) -> bool {
        self.round_issued >= self.plan.round_bytes
    }

    /// A backlog's read-back due before the job writes on, as fio's
    /// `get_io_u` takes one: a batch under way, or the pieces kept at a
    /// multiple of the backlog with the last request not a read-back.
    fn backlog_piece(&mut self) -> Option<(u64, u64)> {
        let (every, batch) = self.plan.backlog?;
        if self.record.is_empty() {
            return None;
        }
        if self.batch_left == 0 {
            if self.record.pieces % every != 0 || self.last_was_read_back {
                return None;
            }
            self.batch_left = batch;
        }
        self.batch_left -= 1;
        self.record.pop()
    }
}

impl Generator {
    /// A job that reads back issues its own requests only while writing and
    /// its round has room.
    pub(super) fn writes_open(&self) -> bool {
        self.shaped
            .read_back
            .as_ref()
            .is_none_or(|rb| rb.stage == Stage::Writing && !rb.round_full())
    }

    /// The job's own limits (bytes, requests) are reached.
    pub(super) fn own_limit_reached(&self) -> bool {
        let shape = &self.job.shape;
        shape.bytes_limit.is_some_and(|b| self.bytes_issued() >= b)
            || shape
                .ios_limit
                .is_some_and(|n| self.issued - self.issued_in_ramp >= n)
    }

    /// When a job that reads back issues next while not writing: `None`
    /// for a job writing (its own schedule holds), `Some(None)` while it
    /// waits for what it has out, `Some(Some(at))` when a flush or a
    /// read-back is due.
    pub(super) fn read_back_resume(&self) -> Option<Option<Nanos>> {
        let rb = self.shaped.read_back.as_ref()?;
        match rb.stage {
            Stage::Writing if self.writes_open() && !self.own_limit_reached() => None,
            Stage::FlushDue => Some(self.due),
            Stage::Reading if !rb.record.is_empty() => Some(self.due),
            _ => Some(None),
        }
    }

    /// A round is under way past the job's own writing: its issuing is not
    /// over, unless the job's stop has come (fio's runtime ends a
    /// read-back too) or its writing ended by time (none then).
    pub(super) fn read_back_pending(&self) -> bool {
        let Some(rb) = self.shaped.read_back.as_ref() else {
            return false;
        };
        let past_stop = self
            .job
            .stop
            .is_some_and(|stop| self.due.is_none_or(|due| due >= stop));
        let pending = match rb.stage {
            Stage::Done => false,
            Stage::Writing => rb.round_full() || self.own_limit_reached(),
            _ => true,
        };
        pending && !past_stop
    }

    /// Issues the round's flush, its next read-back or a backlog's at
    /// `now`; `false` when the job writes instead.
    pub(super) fn issue_read_back(
        &mut self,
        now: Nanos,
        next_id: &mut u64,
        out: &mut Vec<Request>,
    ) -> bool {
        let tenant = self.tenant;
        let Some(rb) = self.shaped.read_back.as_mut() else {
            return false;
        };
        let request = match rb.stage {
            Stage::FlushDue => {
                rb.stage = Stage::Flushing;
                self.shaped.flushed_at_end = true;
                Request::new(*next_id, Op::Flush, 0, 0, now)
            }
            Stage::Reading => {
                let Some((offset, len)) = rb.record.pop() else {
                    return true;
                };
                Request::new(*next_id, Op::Read, offset, len, now)
            }
            Stage::Writing if rb.plan.dry => {
                self.dry_round(now);
                return self.issue_read_back(now, next_id, out);
            }
            Stage::Writing => {
                // A backlog's read-back goes in the job's own turn and
                // counts in its round, but not in its schedule.
                let Some((offset, len)) = rb.backlog_piece() else {
                    rb.last_was_read_back = false;
                    return false;
                };
                rb.last_was_read_back = true;
                rb.round_issued += len;
                out.push(Request::new(*next_id, Op::Read, offset, len, now).with_tenant(tenant));
                *next_id += 1;
                self.outstanding += 1;
                return true;
            }
            Stage::Flushing | Stage::Done => return true,
        };
        out.push(request.with_tenant(tenant));
        *next_id += 1;
        self.outstanding += 1;
        self.due = Some(now);
        true
    }

    /// fio's `verify_only`: the round's requests drawn and their writes
    /// kept, none issued; the read-back follows at once.
    fn dry_round(&mut self, now: Nanos) {
        while self.writes_open() && !self.own_limit_reached() {
            let Planned { op, offset, len } = self.planned.take().unwrap_or_else(|| self.draw(now));
            if let Some(direction) = direction_index(op) {
                self.direction_bytes[direction] += len;
            }
            self.issued += 1;
            self.record_for_read_back(op, offset, len);
        }
        self.advance_read_back(now);
    }

    /// One of the job's own requests went out: a write is recorded.
    pub(super) fn record_for_read_back(&mut self, op: Op, offset: u64, len: u64) {
        if let Some(rb) = self.shaped.read_back.as_mut() {
            rb.round_issued += len;
            if op == Op::Write {
                rb.record.push(offset, len);
            }
        }
    }

    /// `request` completed at `now`: with nothing out, a round moves on
    /// (written: flush or read back; read back: the next round or the end).
    pub(super) fn read_back_completed(&mut self, request: &Request, now: Nanos) {
        let Some(rb) = self.shaped.read_back.as_mut() else {
            return;
        };
        rb.completed += request.len.0;
        if self.outstanding == 0 {
            self.advance_read_back(now);
        }
    }

    /// With nothing out, moves the round on as far as it goes at `now`
    /// (a round that wrote nothing reads nothing back and ends at once).
    fn advance_read_back(&mut self, now: Nanos) {
        loop {
            let writing_over = !self.writes_open();
            let own_over = self.own_limit_reached();
            let end_flush = self.job.shape.end_flush;
            let max_block = self.largest_block();
            let Some(rb) = self.shaped.read_back.as_mut() else {
                return;
            };
            let next = match rb.stage {
                Stage::Writing if writing_over || own_over => match end_flush && !rb.plan.dry {
                    true => Stage::FlushDue,
                    false => Stage::Reading,
                },
                Stage::Flushing => Stage::Reading,
                Stage::Reading if rb.record.is_empty() => {
                    let goal_left = rb.plan.goal_bytes.saturating_sub(rb.completed);
                    let more = rb.rounds < rb.plan.loops || goal_left >= max_block.max(1);
                    if more && !own_over {
                        rb.rounds += 1;
                        rb.round_issued = 0;
                        self.shaped.flushed_at_end = false;
                        Stage::Writing
                    } else {
                        Stage::Done
                    }
                }
                stage => stage,
            };
            if next == rb.stage {
                return;
            }
            rb.stage = next;
            self.due = Some(now);
            self.shaped.draining_to_think = false;
        }
    }

    fn largest_block(&self) -> u64 {
        match (&self.job.kind, &self.job.shape.blocks) {
            (_, Some(blocks)) => blocks.iter().map(BlockSplit::largest).max().unwrap_or(0),
            (JobKind::Synthetic(s), None) => s.block_max,
            (JobKind::Trace(_), None) => 0,
        }
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
