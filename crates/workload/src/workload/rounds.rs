//! fio's rounds ([`Rounds`]): a job of a job file that is not `time_based`
//! works as fio's `thread_main` does. A round issues the job's own
//! requests until it has moved `round_bytes` (fio's `do_io`; the job's
//! byte and request limits end the last one sooner), lets them complete,
//! flushes if the job has `end_fsync`, then, for a job that verifies,
//! reads back what the round wrote (fio's `do_verify`, [`ReadBack`]):
//! every piece once, as fast as the job's iodepth allows, whatever its
//! rate or think time. Rounds go on while the job has `loops` left, then
//! while the bytes it completed, read-backs included, fall short of its
//! `io_size` (or `size`) by a largest block or more (fio's
//! `keep_running`). A round cut short by the runtime reads nothing back,
//! and nothing more is issued past the job's stop, as in fio 3.33.

use iosteer_sched::{Nanos, Op, Request};

use super::rates::direction_index;
use super::read_back::ReadBackState;
use super::{Generator, JobKind, Planned};
use crate::bssplit::BlockSplit;
use crate::job_shape::Rounds;

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

/// Where a job is in its rounds ([`Rounds`]).
#[derive(Debug)]
pub(super) struct RoundsState {
    plan: Rounds,
    stage: Stage,
    /// Bytes of the round's requests issued (a backlog's read-backs too).
    round_issued: u64,
    rounds: u64,
    /// Bytes completed, read-backs included (fio's `io_bytes`), and the
    /// bytes out.
    completed: u64,
    in_flight: u64,
    /// Read-backs issued: fio's `number_ios` counts them.
    read_backs: u64,
    read_back: Option<ReadBackState>,
    /// The last round ended with every block of the random map taken.
    files_done: bool,
}

impl RoundsState {
    pub(super) fn new(plan: Rounds) -> RoundsState {
        RoundsState {
            read_back: plan.read_back.clone().map(ReadBackState::new),
            plan,
            stage: Stage::Writing,
            round_issued: 0,
            rounds: 1,
            completed: 0,
            in_flight: 0,
            read_backs: 0,
            files_done: false,
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

    fn nothing_to_read(&self) -> bool {
        self.read_back
            .as_ref()
            .is_none_or(|rb| rb.record.is_empty())
    }

    /// The next piece to read back after the round.
    fn next_piece(&mut self) -> Option<(u64, u64)> {
        self.read_back.as_mut()?.record.pop()
    }

    /// fio's `verify_only`: the round's writes are kept, not issued.
    fn dry(&self) -> bool {
        self.plan.dry()
    }
}

impl Generator {
    /// A job in rounds issues its own requests only while writing and its
    /// round has room.
    pub(super) fn writes_open(&self) -> bool {
        self.shaped
            .rounds
            .as_ref()
            .is_none_or(|r| r.stage == Stage::Writing && !r.round_full() && !self.shaped.maps_full)
    }

    /// The job's own limits (bytes, requests) are reached; fio's
    /// `number_ios` counts read-backs too.
    pub(super) fn own_limit_reached(&self) -> bool {
        let shape = &self.job.shape;
        let read_backs = self.shaped.rounds.as_ref().map_or(0, |r| r.read_backs);
        shape.bytes_limit.is_some_and(|b| self.bytes_issued() >= b)
            || self.shaped.pass_over
            || shape
                .ios_limit
                .is_some_and(|n| self.issued - self.issued_in_ramp + read_backs >= n)
    }

    /// When a job in rounds issues next while not writing: `None` for a
    /// job writing (its own schedule holds), `Some(None)` while it waits
    /// for what it has out, `Some(Some(at))` when a flush or a read-back
    /// is due.
    pub(super) fn round_resume(&self) -> Option<Option<Nanos>> {
        let rounds = self.shaped.rounds.as_ref()?;
        match rounds.stage {
            Stage::Writing if self.writes_open() && !self.own_limit_reached() => None,
            Stage::FlushDue => Some(self.due),
            Stage::Reading if !rounds.nothing_to_read() => Some(self.due),
            _ => Some(None),
        }
    }

    /// The job will issue more once what it has out completes (a flush,
    /// a read-back, another round): its issuing is not over, unless its
    /// stop has come (nothing is issued past it) or it is still writing
    /// (its own schedule says).
    pub(super) fn round_pending(&self) -> bool {
        let Some(rounds) = self.shaped.rounds.as_ref() else {
            return false;
        };
        let past_stop = self
            .job
            .stop
            .is_some_and(|stop| self.due.is_none_or(|due| due >= stop));
        if self.stopped_by_control() {
            return false;
        }
        let writing = self.writes_open() && !self.own_limit_reached();
        let pending = match rounds.stage {
            Stage::Done => false,
            Stage::Writing if writing => false,
            Stage::FlushDue => true,
            Stage::Reading if !rounds.nothing_to_read() => true,
            _ => self.round_follows(),
        };
        pending && !past_stop
    }

    /// Once what is out completes: a flush or a read-back, or a next round.
    fn round_follows(&self) -> bool {
        let Some(rounds) = self.shaped.rounds.as_ref() else {
            return false;
        };
        let end_flush = self.job.shape.end_flush && !rounds.dry();
        let written = matches!(rounds.stage, Stage::Writing);
        let unread = matches!(rounds.stage, Stage::Writing | Stage::Flushing);
        if (written && end_flush) || (unread && !rounds.nothing_to_read()) {
            return true;
        }
        let done = rounds.completed + rounds.in_flight;
        self.next_round(rounds, done)
    }

    /// Whether a round follows this one, `done` bytes completed by then:
    /// fio's `keep_running` (loops left, or short of `io_size`), but a
    /// round that issued nothing ends the job (fio's `td->done`), and one
    /// with the job's limits reached runs only to flush, once.
    fn next_round(&self, rounds: &RoundsState, done: u64) -> bool {
        let plan = &rounds.plan;
        let more_loops = rounds.rounds < plan.loops;
        if rounds.round_issued == 0 {
            return false;
        }
        if self.own_limit_reached() {
            return more_loops && self.job.shape.end_flush && !rounds.dry();
        }
        let goal_left = plan.goal_bytes.saturating_sub(done);
        let files_done = rounds.files_done || self.shaped.maps_full;
        let files_left = !files_done || plan.goal_given;
        more_loops || (plan.past_loops && files_left && goal_left >= self.largest_block().max(1))
    }

    /// Issues the round's flush, its next read-back or a backlog's at
    /// `now`; `false` when the job issues its own request instead.
    pub(super) fn issue_in_round(
        &mut self,
        now: Nanos,
        next_id: &mut u64,
        out: &mut Vec<Request>,
    ) -> bool {
        let tenant = self.tenant;
        let Some(rounds) = self.shaped.rounds.as_mut() else {
            return false;
        };
        let (op, offset, len) = match rounds.stage {
            Stage::FlushDue => {
                rounds.stage = Stage::Flushing;
                self.shaped.flushed_at_end = true;
                (Op::Flush, 0, 0)
            }
            Stage::Reading => match rounds.next_piece() {
                Some((offset, len)) => {
                    rounds.in_flight += len;
                    rounds.read_backs += 1;
                    (Op::Read, offset, len)
                }
                None => return true,
            },
            Stage::Writing if rounds.dry() => {
                self.dry_round(now);
                return self.issue_in_round(now, next_id, out);
            }
            Stage::Writing => {
                // A backlog's read-back goes in the job's own turn and
                // counts in its round, but not in its schedule.
                let Some(rb) = rounds.read_back.as_mut() else {
                    return false;
                };
                let Some((offset, len)) = rb.backlog_piece() else {
                    if std::mem::take(&mut self.shaped.flush_owed) {
                        self.push_flush(now, next_id, out);
                        return true;
                    }
                    return false;
                };
                rounds.round_issued += len;
                rounds.in_flight += len;
                rounds.read_backs += 1;
                out.push(Request::new(*next_id, Op::Read, offset, len, now).with_tenant(tenant));
                *next_id += 1;
                self.outstanding += 1;
                return true;
            }
            Stage::Flushing | Stage::Done => return true,
        };
        out.push(Request::new(*next_id, op, offset, len, now).with_tenant(tenant));
        *next_id += 1;
        self.outstanding += 1;
        self.due = Some(now);
        true
    }

    /// fio's `verify_only` (its `do_dry_run`): the job's requests drawn up
    /// to its byte or request limit, not to a round's bytes, and their
    /// writes kept, none issued; they count as done, and a backlog's
    /// read-backs among them are as dry as they are. What is kept is then
    /// read back (fio 3.33: 16 reads of `size=64k io_size=128k`, the second
    /// pass over the same blocks; 4 with `verify_backlog=4`).
    fn dry_round(&mut self, now: Nanos) {
        while !self.own_limit_reached() {
            // The backlog's read-backs due before the next write, dry.
            if let Some(rb) = self
                .shaped
                .rounds
                .as_mut()
                .and_then(|r| r.read_back.as_mut())
            {
                while let Some((offset, len)) = rb.backlog_piece() {
                    rb.done(Op::Read, offset, len);
                }
            }
            let Planned { op, offset, len } = self.planned.take().unwrap_or_else(|| self.draw(now));
            if let Some(direction) = direction_index(op) {
                self.direction_bytes[direction] += len;
            }
            self.issued += 1;
            self.record_in_round(op, offset, len);
            let Some(rounds) = self.shaped.rounds.as_mut() else {
                break;
            };
            rounds.in_flight -= len;
            rounds.completed += len;
            if let Some(rb) = rounds.read_back.as_mut() {
                rb.done(op, offset, len);
            }
            if self.shaped.maps_full {
                break;
            }
        }
        self.advance_round(now);
    }

    /// The job reads back in batches among its writes (`verify_backlog`).
    pub(super) fn reads_back_in_batches(&self) -> bool {
        let rounds = self.shaped.rounds.as_ref();
        rounds
            .and_then(|r| r.read_back.as_ref())
            .is_some_and(|rb| rb.plan.backlog.is_some())
    }

    /// One of the job's own requests went out: counted in the round, and
    /// a write kept to read back.
    pub(super) fn record_in_round(&mut self, op: Op, offset: u64, len: u64) {
        // The request that took the last free block went: the pass is over.
        if std::mem::take(&mut self.shaped.maps_fill) {
            self.shaped.maps_full = true;
        }
        let Some(rounds) = self.shaped.rounds.as_mut() else {
            return;
        };
        rounds.round_issued += len;
        rounds.in_flight += len;
        if let (Some(rb), Op::Write) = (rounds.read_back.as_mut(), op) {
            rb.wrote(offset, len);
        }
    }

    /// Whether the job issues its own requests (it is not in rounds, or its
    /// round is at that stage).
    pub(super) fn round_writing(&self) -> bool {
        self.shaped
            .rounds
            .as_ref()
            .is_none_or(|r| r.stage == Stage::Writing)
    }

    /// `request` completed at `now`, after which the job thinks `thought`:
    /// with nothing out, the round moves on once it has.
    pub(super) fn round_completed(&mut self, request: &Request, now: Nanos, thought: Nanos) {
        let ramped = !self.in_ramp(now);
        let Some(rounds) = self.shaped.rounds.as_mut() else {
            return;
        };
        // fio counts the bytes done from the ramp's end.
        if ramped {
            rounds.completed += request.len.0;
        }
        rounds.in_flight = rounds.in_flight.saturating_sub(request.len.0);
        if let Some(rb) = rounds.read_back.as_mut() {
            rb.done(request.op, request.offset.0, request.len.0);
        }
        if rounds.stage != Stage::Writing {
            // Read-backs go as fast as completions allow, never from an
            // earlier time (a job's stop then holds them).
            self.due = Some(now);
        }
        if self.outstanding == 0 {
            self.advance_round(now + thought);
        }
    }

    /// With nothing out, moves the round on as far as it goes at `now`:
    /// written, then flushed, then read back, then the next round or the
    /// end (a round with nothing to read back moves on at once).
    fn advance_round(&mut self, now: Nanos) {
        loop {
            let Some(rounds) = self.shaped.rounds.as_ref() else {
                return;
            };
            let writing_over = !self.writes_open() || self.own_limit_reached();
            let next = match rounds.stage {
                Stage::Writing if writing_over => match self.job.shape.end_flush && !rounds.dry() {
                    true => Stage::FlushDue,
                    false => Stage::Reading,
                },
                Stage::Flushing => Stage::Reading,
                Stage::Reading if rounds.nothing_to_read() => {
                    match self.next_round(rounds, rounds.completed) {
                        true => Stage::Writing,
                        false => Stage::Done,
                    }
                }
                stage => stage,
            };
            if next == rounds.stage {
                return;
            }
            if next == Stage::Writing {
                // A new round: its end flush is still to come, and an
                // `fsync=N` sync a backlog held back ended with the last
                // round, as fio's `do_io` ends before asking for it.
                self.shaped.flushed_at_end = rounds.dry();
                self.shaped.flush_owed = false;
            }
            let Some(rounds) = self.shaped.rounds.as_mut() else {
                return;
            };
            if next == Stage::Writing {
                rounds.rounds += 1;
                rounds.round_issued = 0;
            }
            if next != Stage::Writing && rounds.stage == Stage::Writing {
                // The loop's writing ends; its random map with it.
                let short = self.shaped.maps_full && !rounds.round_full();
                self.shaped.loops_cut_by_map += u32::from(short);
                rounds.files_done = self.shaped.maps_full;
                self.shaped.maps_full = false;
                self.shaped.random_maps.clear();
            }
            rounds.stage = next;
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
