//! What a run says of itself at its end, beside its figures: requests
//! left out, jobs that ended long after their stop, GC the drive still
//! owed, jobs below their minimum rate.

use super::*;

impl State {
    /// Requests still in the scheduler or the drive when the run stopped:
    /// the figures leave them out.
    pub(super) fn unfinished_note(&self, sim: &Simulation) -> Option<String> {
        let left = self.submitted - self.completed;
        // Drained: at the deadline, not at the last event before it (a
        // request due past it may leave the drive quiet long before).
        let (at, why) = match self.cut_short? {
            CutShort::Drained => (
                self.deadline(sim).unwrap_or(self.now).max(self.now),
                format!("{} s after the jobs stopped", sim.drain.as_secs_f64()),
            ),
            CutShort::NothingDue => (self.now, "with nothing left to release them".to_string()),
        };
        Some(format!(
            "{left} of {} requests were still outstanding when the run stopped at {:.3} s, {why}; the figures count only the requests that completed",
            self.submitted,
            at.as_secs_f64(),
        ))
    }

    /// Jobs stopped by time whose held requests completed long after
    /// ([`Generator::held_past_stop_note`]): where phases follow the jobs.
    pub(super) fn held_past_stop_notes(&self, sim: &Simulation) -> Vec<String> {
        if !sim.workload.job_phases {
            return Vec::new();
        }
        let held = |job: &Generator| job.held_past_stop_note(None);
        self.jobs.iter().filter_map(held).collect()
    }

    /// GC the drive did in its map and had not paid for in die time when
    /// the run stopped: in the write amplification and GC counts, in no
    /// request's latency.
    pub(super) fn gc_owed_note(&self) -> Option<String> {
        let owed = self.device.gc_owed();
        (owed.page_moves + owed.erases > 0).then(|| {
            format!(
                "the drive still owed GC when the run stopped: {} page moves and {} erases, {:.3} s of die time; the write amplification and GC counts include them, no request waited for them",
                owed.page_moves,
                owed.erases,
                owed.die_time.as_secs_f64()
            )
        })
    }

    /// Reads of data never written or trimmed: the drive answered that data
    /// without a flash read, and the read figures include them.
    pub(super) fn unwritten_reads_note(&self) -> Option<String> {
        let stats = self.device.stats();
        let unwritten = stats.unwritten_reads;
        let reads = stats.commands[Op::Read.index()];
        (unwritten.touching > 0).then(|| {
            format!(
                "{} of {reads} reads ({:.1}%) addressed data never written or trimmed ({} of them only such data): the drive answers it without a flash read, as drives answer unmapped addresses, and the read figures include those reads",
                unwritten.touching,
                100.0 * unwritten.touching as f64 / reads.max(1) as f64,
                unwritten.wholly
            )
        })
    }

    /// Writes that covered part of a mapping unit: programmed as whole
    /// units with no read of the old data, so faster than on a drive that
    /// merges, and more flash bytes than the WAF's units say.
    pub(super) fn partial_unit_writes_note(&self) -> Option<String> {
        let stats = self.device.stats();
        let writes = stats.commands[Op::Write.index()];
        let partial = stats.partial_unit_writes;
        let flash_bytes = stats.ftl.pages_programmed * u64::from(stats.page_size);
        (partial > 0).then(|| {
            format!(
                "{partial} of {writes} writes ({:.1}%) covered part of a {}-byte mapping unit: the drive programs whole units and does not read the old data first (read-modify-write is not modelled, so those writes finish sooner than on a drive that merges); the flash programmed {:.2} bytes per byte the host wrote, where the WAF counts units",
                100.0 * partial as f64 / writes.max(1) as f64,
                stats.mapping_unit,
                flash_bytes as f64 / stats.host_bytes_written.max(1) as f64
            )
        })
    }

    /// Jobs that issued less than their `rate_min` or `rate_iops_min` in a
    /// direction they issued, over the time they ran (fio would have
    /// stopped them).
    pub(super) fn below_rate_min(&self) -> Vec<String> {
        let ends = self.ended_at.iter().map(|ended| ended.unwrap_or(self.now));
        self.jobs
            .iter()
            .zip(ends)
            .flat_map(|(job, end)| job.rate_floor_notes(end))
            .collect()
    }
}
