//! A trace job's issuing: its requests at their arrivals (open loop), or
//! paced as fio replays an iolog ([`JobShape::iolog_pacing`]).
//!
//! Open loop, a drive slower than the trace falls behind and the requests
//! wait in the host. That backlog is bounded at [`MAX_BACKLOG`] requests
//! out (about 150 MB), so that a day's trace at twice what the drive can do
//! does not fill memory hours into the run: past it, a request waits in the
//! trace until one completes, then enters the scheduler with its arrival
//! time, so its latency still counts from when the trace says it arrived,
//! as with an unbounded queue. What differs is only what a scheduler sees:
//! it cannot reorder a request it has not been given. The run's notes say
//! when the bound held requests back, how many, and by how much at most.

use iosteer_sched::{Nanos, Request};

use super::{Generator, JobKind, JobShape, TraceRecord, TraceRecords};
use crate::trace::{TraceCursor, TraceError};

/// Most requests an open-loop trace job has out (queued in the scheduler
/// or in the drive) before the rest wait in the trace.
pub const MAX_BACKLOG: u32 = 1 << 20;

/// How long a run goes on after a trace's last arrival, for the requests
/// still out (and a paced replay's held ones) to finish.
pub const TRACE_DRAIN: Nanos = Nanos::from_secs(60);

/// A trace job's next request, read ahead one, and the error that ended
/// the trace early, if one did.
#[derive(Debug)]
pub(super) struct TraceQueue {
    cursor: TraceCursor,
    pub(super) next: Option<TraceRecord>,
    pub(super) error: Option<TraceError>,
    /// A paced iolog replay issued late by this much, which its later
    /// requests carry (fio's gaps count from the request before), and
    /// whether its I/O depth was full when the last request went.
    slip: Nanos,
    depth_held: bool,
    /// Open loop: whether the backlog bound has held a request back, the
    /// requests issued past their arrival since, and the longest such wait.
    bound_hit: bool,
    held: u64,
    held_max: Nanos,
}

impl TraceQueue {
    pub(super) fn new(records: &TraceRecords) -> TraceQueue {
        let mut queue = TraceQueue {
            cursor: records.cursor(),
            next: None,
            error: None,
            slip: Nanos::ZERO,
            depth_held: false,
            bound_hit: false,
            held: 0,
            held_max: Nanos::ZERO,
        };
        queue.advance();
        queue
    }

    fn advance(&mut self) {
        self.next = match self.cursor.next() {
            Some(Ok(r)) => Some(r),
            Some(Err(e)) => {
                self.error = Some(e);
                None
            }
            None => None,
        };
    }
}

impl Generator {
    /// Most requests the trace job may have out.
    fn trace_depth(shape: &JobShape) -> u32 {
        shape.iolog_pacing.map_or(MAX_BACKLOG, |p| p.iodepth)
    }

    /// A trace job with no request left to issue (its last one went, or
    /// an error ended it): it ends then, as fio's replay ends with its log,
    /// whatever its `runtime`.
    pub(super) fn trace_over(&self) -> bool {
        self.trace.as_ref().is_some_and(|t| t.next.is_none())
    }

    /// Whether the trace job has as many requests out as it may.
    pub(super) fn trace_full(&self) -> bool {
        self.outstanding >= Generator::trace_depth(&self.job.shape)
    }

    /// Issues the trace's requests due by `now`: all of them, open loop,
    /// up to [`MAX_BACKLOG`] out, or as fio replays an iolog, up to its I/O
    /// depth, a request held by it carrying its lateness to the next ones
    /// when the log's waits count from the request before.
    pub(super) fn issue_trace(&mut self, now: Nanos, next_id: &mut u64, out: &mut Vec<Request>) {
        let pacing = self.job.shape.iolog_pacing;
        let carries = pacing.is_some_and(|p| p.waits_from_previous);
        let depth = Generator::trace_depth(&self.job.shape);
        let Some(trace) = self.trace.as_mut() else {
            unreachable!()
        };
        while let Some(r) = trace.next {
            let slip = if carries { trace.slip } else { Nanos::ZERO };
            let at = (r.at + slip).max(self.job.start);
            if at > now {
                self.due = Some(at);
                return;
            }
            if self.outstanding >= depth {
                // Held: due now, issued when one completes.
                trace.bound_hit |= pacing.is_none();
                trace.depth_held = true;
                self.due = Some(at);
                return;
            }
            // Only a hold by the depth moves the schedule, as in fio: a
            // real-time loop waking late does not (fio corrects its sleeps).
            if carries && trace.depth_held {
                trace.slip = now - r.at.min(now);
            }
            // Paced, latency counts from the issue, as fio's; open loop,
            // from the arrival (later than `now` only when held).
            let submitted = if pacing.is_some() { now } else { at };
            if trace.bound_hit && submitted < now {
                trace.held += 1;
                trace.held_max = trace.held_max.max(now - submitted);
            }
            out.push(
                Request::new(*next_id, r.op, r.offset, r.len, submitted)
                    .with_tenant(self.tenant)
                    .with_fua(r.fua),
            );
            *next_id += 1;
            trace.advance();
            self.issued += 1;
            self.outstanding += 1;
            // Full: the next request, if due before a completion, waits
            // for one (the flag is set whether or not the loop looks then).
            trace.depth_held = self.outstanding >= depth;
        }
        self.due = None;
    }

    /// Why a trace's replay ended before its last request, if it did and
    /// no one took the error ([`Generator::take_trace_error`]).
    pub(super) fn trace_note(&self) -> Option<String> {
        let error = self.trace.as_ref()?.error.as_ref()?;
        Some(format!(
            "job {}: the trace's replay stopped after {} requests: {error}",
            self.name(),
            self.issued
        ))
    }

    /// The error that ended a trace's replay early, if one did: a run that
    /// cannot go on without it takes it to stop.
    pub fn take_trace_error(&mut self) -> Option<TraceError> {
        self.trace.as_mut()?.error.take()
    }

    /// Requests of the trace never issued (the job or the run ended first,
    /// the drive behind), and when the backlog bound held requests back,
    /// what it cost them.
    pub(super) fn backlog_note(&self) -> Option<String> {
        let trace = self.trace.as_ref()?;
        let JobKind::Trace(records) = &self.job.kind else {
            return None;
        };
        let left = records.summary().requests.saturating_sub(self.issued);
        let unissued = (left > 0 && trace.error.is_none()).then(|| {
            format!(
                "job {}: {left} of the trace's {} requests were never issued: the job or the run ended first (the run ends {} s after the last arrival)",
                self.name(),
                records.summary().requests,
                TRACE_DRAIN.as_secs_f64()
            )
        });
        if trace.held == 0 {
            return unissued;
        }
        let held = format!(
            "job {}: the drive fell behind the trace and {MAX_BACKLOG} requests were out at once (the most a trace replay holds, to bound memory): {} requests waited in the trace up to {:.3} s past their arrival before the scheduler saw them; their latencies count from their arrival",
            self.name(),
            trace.held,
            trace.held_max.as_secs_f64()
        );
        Some(match unissued {
            Some(u) => format!("{held}; {u}"),
            None => held,
        })
    }
}

#[cfg(test)]
mod tests {
    use iosteer_sched::Op;

    use super::*;
    use crate::workload::{Job, JobKind};

    /// A trace job of 4 KiB reads arriving at `ats`, stopped at `stop`.
    fn reads_at(ats: impl Iterator<Item = Nanos>, stop: Option<Nanos>) -> Generator {
        let records: Vec<TraceRecord> = ats
            .map(|at| TraceRecord {
                at,
                op: Op::Read,
                offset: 0,
                len: 4096,
                fua: false,
            })
            .collect();
        let job = Job {
            name: "t".into(),
            kind: JobKind::Trace(records.into()),
            start: Nanos::ZERO,
            stop,
            shape: JobShape::default(),
        };
        Generator::new(job, 0, 1)
    }

    #[test]
    fn an_open_loop_trace_holds_past_the_backlog_bound_and_keeps_the_arrival_time() {
        let n = MAX_BACKLOG as u64 + 2;
        let mut g = reads_at((0..n).map(Nanos), None);
        let mut out = Vec::new();
        g.issue(Nanos(n), &mut 0, &mut out);
        assert_eq!(out.len(), MAX_BACKLOG as usize);
        assert_eq!(g.next_at(), None, "full: nothing more until one completes");
        let notes = g.control_notes();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("2 of the trace's 1048578 requests were never issued"),
            "{}",
            notes[0]
        );
        let done = Nanos::from_millis(2);
        g.completed(&out[0], done);
        assert_eq!(g.next_at(), Some(Nanos(u64::from(MAX_BACKLOG))));
        let mut more = Vec::new();
        g.issue(done, &mut 0, &mut more);
        assert_eq!(more.len(), 1);
        assert_eq!(more[0].submitted, Nanos(u64::from(MAX_BACKLOG)));
        let notes = g.control_notes();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("1 requests waited in the trace up to 0.001 s")
                && notes[0].contains("1 of the trace's 1048578 requests were never issued"),
            "{}",
            notes[0]
        );
    }

    #[test]
    fn a_paced_replay_woken_late_keeps_the_log_s_schedule_and_a_held_one_moves_it() {
        let records: Vec<TraceRecord> = [0, 100, 200, 300]
            .map(|us| TraceRecord {
                at: Nanos::from_micros(us),
                op: Op::Write,
                offset: 0,
                len: 4096,
                fua: false,
            })
            .to_vec();
        let shape = JobShape {
            iolog_pacing: Some(crate::job_shape::IologPacing {
                iodepth: 2,
                waits_from_previous: true,
            }),
            ..JobShape::default()
        };
        let job = Job {
            name: "t".into(),
            kind: JobKind::Trace(records.into()),
            start: Nanos::ZERO,
            stop: None,
            shape,
        };
        let mut g = Generator::new(job, 0, 1);
        let mut out = Vec::new();
        // Woken 60 us late: both due requests go, and the next stays at 200.
        g.issue(Nanos::from_micros(160), &mut 0, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(g.next_at(), None, "two out: the depth holds the next");
        g.completed(&out[0], Nanos::from_micros(250));
        // Held by the depth from 200 to 250 us: the rest move 50 us later.
        assert_eq!(g.next_at(), Some(Nanos::from_micros(200)));
        g.issue(Nanos::from_micros(250), &mut 0, &mut out);
        assert_eq!(out.len(), 3);
        g.completed(&out[1], Nanos::from_micros(260));
        assert_eq!(g.next_at(), Some(Nanos::from_micros(350)));
    }

    /// fio ends a replay with its log, whatever its `runtime` (read_iolog
    /// of 3 reads with runtime=5: 0 ms in fio; iosteer run had gone on to
    /// 5 s and said the run ended before the job did).
    #[test]
    fn a_trace_job_ends_with_its_last_request_before_its_stop() {
        let ats = [0, 100].into_iter().map(Nanos::from_micros);
        let mut g = reads_at(ats, Some(Nanos::from_secs(5)));
        let mut out = Vec::new();
        g.issue(Nanos::from_micros(100), &mut 0, &mut out);
        assert_eq!(out.len(), 2);
        let done = Nanos::from_millis(1);
        g.completed(&out[0], done);
        assert!(!g.ended(done), "a request still out");
        g.completed(&out[1], done);
        assert!(g.done_issuing());
        assert!(
            g.ended(done),
            "the trace is over: the job ends before its stop"
        );
    }
}
