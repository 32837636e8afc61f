//! The trims a sequential writer sends ahead of its writes: fio's
//! `trimwrite`, which trims each write's own blocks just before writing
//! them, and `iosteer_trim_ahead`, which trims the region a segment at a
//! time as the writer enters it.
//!
//! fio 3.33's `trimwrite` walks trims and writes apart, in their own block
//! sizes, and sends a trim when the last trim and the last write started at
//! the same offset (`set_rw_ddir`): where the two sizes are equal (one `bs`,
//! `bs=r,w`, one `bssplit` or `bsrange` for both, drawn from equal seeds)
//! each trim is the next write's range, holes (`trimwrite:4k`) and
//! backwards (`trimwrite:-8k`) included, which is what the job does here.
//! Where a job gives trims their own sizes the walks drift apart; the
//! reader notes it (`fio::reader`).

use iosteer_sched::{Nanos, Op, Request};

use super::{Generator, JobKind, Planned, Synthetic};

impl Generator {
    /// Whether trims are due ahead of `planned`: it is a write, and either
    /// its own trim (`trimwrite`) has not gone, or it reaches past the
    /// segments already trimmed ahead.
    pub(super) fn trims_due(&self, planned: Planned) -> bool {
        let JobKind::Synthetic(s) = &self.job.kind else {
            return false;
        };
        if planned.op != Op::Write {
            return false;
        }
        if self.job.shape.writes_after_trims {
            return !self.shaped.write_trimmed;
        }
        let end = s.offset + s.size;
        s.trim_ahead.is_some()
            && s.sequential
            && self.trimmed_up_to < (planned.offset + planned.len).min(end)
    }

    /// Sends the trims due ahead of `planned` into `out`; `true` when the
    /// write must then wait for them to complete (`trimwrite`, as fio
    /// trims the blocks and then writes them).
    pub(super) fn send_trims_ahead(
        &mut self,
        s: &Synthetic,
        planned: Planned,
        now: Nanos,
        next_id: &mut u64,
        out: &mut Vec<Request>,
    ) -> bool {
        let due = self.trims_due(planned);
        if due && self.job.shape.writes_after_trims {
            self.send_trim(planned.offset, planned.len, now, next_id, out);
            self.shaped.write_trimmed = true;
        } else if let (true, Some(segment)) = (due, s.trim_ahead) {
            let (reach, end) = (planned.offset + planned.len, s.offset + s.size);
            while self.trimmed_up_to < reach && self.trimmed_up_to < end {
                let len = segment.max(s.align).min(end - self.trimmed_up_to);
                self.send_trim(self.trimmed_up_to, len, now, next_id, out);
                self.trimmed_up_to += len;
            }
        }
        !self.shaped.trims_awaited.is_empty()
    }

    fn send_trim(
        &mut self,
        offset: u64,
        len: u64,
        now: Nanos,
        next_id: &mut u64,
        out: &mut Vec<Request>,
    ) {
        out.push(Request::new(*next_id, Op::Trim, offset, len, now).with_tenant(self.tenant));
        if self.job.shape.writes_after_trims {
            self.shaped.trims_awaited.push(*next_id);
        }
        *next_id += 1;
        self.outstanding += 1;
    }
}
