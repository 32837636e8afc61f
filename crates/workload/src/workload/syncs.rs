//! fio's syncs between a job's requests: `fsync=N` and `fdatasync=N`, each
//! on its own count, as fio issues them, and the closing `end_fsync`.

use iosteer_sched::{Nanos, Op, Request};

use super::Generator;

impl Generator {
    /// The syncs that follow a request of `op` just issued: fio syncs
    /// whenever it goes on while its writes are a multiple of `fsync=N`
    /// and it did not just sync (its `get_io_u` checks the count each
    /// time): after the Nth write, and after each read until the next write.
    pub(super) fn syncs_after(
        &mut self,
        op: Op,
        now: Nanos,
        next_id: &mut u64,
        out: &mut Vec<Request>,
    ) {
        match op {
            Op::Write => {
                self.shaped.sync_after_reads = false;
                self.flush_after_writes(now, next_id, out);
            }
            // Not after the job's last request, and behind batched read-backs.
            _ if self.shaped.sync_after_reads
                && !self.limit_reached()
                && !self.own_limit_reached() =>
            {
                self.sync(now, next_id, out);
            }
            _ => {}
        }
    }

    /// fio's `end_fsync`: issuing is over and the closing flush is not out.
    pub(super) fn end_flush_pending(&self) -> bool {
        self.job.shape.end_flush && !self.shaped.flushed_at_end && self.issuing_over()
    }

    /// fio's `fsync=N`: a flush after every N writes, as fio issues it:
    /// when the job goes on to its next request, so not after the write
    /// that moves its size or makes its `number_ios` (fio 3.33: 16 writes
    /// with `fsync=4` make 3 syncs, and `end_fsync` a fourth).
    /// `fdatasync=N` counts on its own beside it; when both are due, one sync
    /// goes, as fio's.
    fn flush_after_writes(&mut self, now: Nanos, next_id: &mut u64, out: &mut Vec<Request>) {
        let shape = &self.job.shape;
        let cadences = [shape.flush_every, shape.datasync_every];
        if cadences == [None, None] {
            return;
        }
        let last = self.limit_reached() || self.own_limit_reached() || !self.writes_open();
        let counts = &mut self.shaped.writes_since_flush;
        let mut due = 0;
        for (every, count) in cadences.into_iter().zip(counts.iter_mut()) {
            let Some(every) = every else { continue };
            *count += 1;
            if *count >= every && !last {
                *count = 0;
                due += 1;
            }
        }
        // Both due: fio checks fsync first and issues that sync alone.
        for _ in 0..due.min(1) {
            self.shaped.sync_after_reads = true;
            self.sync(now, next_id, out);
        }
    }

    /// A sync, when fio would send it: with a backlog at the job's next
    /// turn, where the read-backs due then go first (fio's `get_io_u` takes
    /// them before it looks for a sync); at its iodepth once a request
    /// completes, as the job goes on (the flush's latency is then its own,
    /// not that of the request it would wait behind); else now.
    fn sync(&mut self, now: Nanos, next_id: &mut u64, out: &mut Vec<Request>) {
        match (self.reads_back_in_batches(), self.at_depth()) {
            (true, _) => self.shaped.flush_owed = true,
            (false, true) => self.shaped.flush_next = true,
            (false, false) => self.push_flush(now, next_id, out),
        }
    }

    pub(super) fn push_flush(&mut self, now: Nanos, next_id: &mut u64, out: &mut Vec<Request>) {
        out.push(Request::new(*next_id, Op::Flush, 0, 0, now).with_tenant(self.tenant));
        *next_id += 1;
        self.outstanding += 1;
    }
}
