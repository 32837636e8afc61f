//! How long the target takes to complete, by direction and size: what
//! hybrid reaping sleeps half of before it spins.

use std::time::Duration;

use iosteer_sched::Op;

/// Mean completion time by direction and size (powers of two from 4 KiB),
/// moving 1/8 per completion: what hybrid reaping sleeps half of.
#[derive(Debug, Default)]
pub(super) struct CompletionTimes {
    mean: [[Duration; 12]; 2],
}

impl CompletionTimes {
    fn index(op: Op, len: u64) -> Option<(usize, usize)> {
        let direction = match op {
            Op::Read => 0,
            Op::Write => 1,
            _ => return None,
        };
        let size = (len.max(4096) / 4096).ilog2().min(11) as usize;
        Some((direction, size))
    }

    pub(super) fn record(&mut self, op: Op, len: u64, took: Duration) {
        if let Some((d, s)) = Self::index(op, len) {
            let mean = &mut self.mean[d][s];
            *mean = if mean.is_zero() {
                took
            } else {
                *mean - *mean / 8 + took / 8
            };
        }
    }

    /// Half the mean, or zero when none was seen (poll at once).
    pub(super) fn half(&self, op: Op, len: u64) -> Duration {
        Self::index(op, len).map_or(Duration::ZERO, |(d, s)| self.mean[d][s] / 2)
    }
}
