//! What a job may touch: its lowest and highest byte, and whether it reads
//! at all (a sweep judged by reads refuses a workload that cannot).

use iosteer_sched::Op;

use super::{Job, JobKind};

impl Job {
    /// Whether the job may issue a read: false only where it cannot (a
    /// synthetic job of writes or trims without a read-back, a trace
    /// without reads).
    pub fn may_read(&self) -> bool {
        match &self.kind {
            JobKind::Synthetic(s) => {
                let read_back = self
                    .shape
                    .rounds
                    .as_ref()
                    .is_some_and(|r| r.read_back.is_some());
                (s.read_percent > 0 && !s.trim) || read_back
            }
            JobKind::Trace(records) => records.summary().has(Op::Read),
        }
    }

    /// The lowest byte the job touches.
    pub fn start_offset(&self) -> u64 {
        match &self.kind {
            JobKind::Synthetic(s) => s.offset,
            JobKind::Trace(records) => records.summary().min_offset,
        }
    }

    /// The highest byte the job touches.
    pub fn end_offset(&self) -> u64 {
        match &self.kind {
            JobKind::Synthetic(s) => s.offset.saturating_add(s.size),
            JobKind::Trace(records) => records.summary().max_end,
        }
    }
}
