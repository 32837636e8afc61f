//! A job whose requests come from a replay (fio's `read_iolog`, or an
//! `iosteer_trace`): what of the job's options it keeps.

use super::*;

impl Reader {
    /// A job that replays an iolog: its start, runtime, waits and I/O
    /// depth are the job's; what it issues is the log's.
    pub(super) fn replay_spec(self, iolog: IologJob, last_line: usize) -> JobSpec {
        // A trace job's `offset` and `size` are the region its trace is
        // fitted to (fio's logs say their own offsets).
        let first_byte = match iolog.is_trace() {
            true => self.offsets.finish(4096),
            false => Start::default(),
        };
        let left = self
            .capacity
            .saturating_sub(first_byte.of_copy(0).unwrap_or(0));
        let region = match iolog.is_trace() {
            true => self.size.map_or(left, |size| size.min(left)),
            false => self.capacity,
        };
        JobSpec {
            synthetic: Synthetic::reads(4096, 0, region, self.arrival),
            shape: self.shape,
            start: self.start,
            runtime: self.runtime,
            time_based: false,
            size_cut: None,
            cut_at_end: None,
            time_based_ignored: false,
            numjobs: 1,
            first_byte,
            stonewall: self.stonewall,
            new_group: self.new_group,
            group_reporting: self.group_reporting,
            wait_for: self.wait_for,
            io_size: None,
            loops: 1,
            last_line,
            region_line: last_line,
            verify: Verify::default(),
            norandommap: self.norandommap,
            iolog: Some(iolog),
        }
    }
}
