//! The boundary every request of a job falls on: the largest power of two
//! that divides each offset and each length it may issue. O_DIRECT refuses
//! a request off the target's direct-I/O alignment, so `iosteer run` checks
//! it against each job's granule before the run, not after thousands of
//! failed requests.

use crate::workload::{Job, JobKind};

impl Job {
    /// The largest power of two dividing every offset and length the job
    /// may issue; `None` when they are all zero (no boundary binds them).
    pub fn granule(&self) -> Option<u64> {
        let bits = match &self.kind {
            JobKind::Synthetic(s) => {
                let shape = &self.shape;
                let splits = shape.blocks.iter().flatten();
                let sizes = splits.flat_map(|split| split.sizes.iter().map(|&(size, _)| size));
                let aligns = shape.random_align.iter().flatten().copied();
                [s.offset, s.align, s.block_min, s.block_max]
                    .into_iter()
                    .chain(sizes)
                    .chain(aligns)
                    .chain([shape.offset_add.unsigned_abs()])
                    .fold(0, |bits, value| bits | value)
            }
            JobKind::Trace(records) => records.iter().fold(0, |bits, r| bits | r.offset | r.len),
        };
        (bits != 0).then(|| 1 << bits.trailing_zeros())
    }
}

#[cfg(test)]
mod tests {
    use crate::fio::parse;

    fn granule(text: &str) -> Option<u64> {
        parse(text, "t.fio", 1 << 30).unwrap()[0].granule()
    }

    #[test]
    fn a_jobs_granule_is_its_finest_size_or_boundary() {
        assert_eq!(granule("[j]\nrw=randread\nbs=4k\n"), Some(4096));
        assert_eq!(granule("[j]\nrw=randwrite\nbs=1000\n"), Some(8));
        assert_eq!(granule("[j]\nrw=read\nbsrange=4k-64k\n"), Some(4096));
        assert_eq!(
            granule("[j]\nrw=randread\nbssplit=4k/50:1536/50\n"),
            Some(512)
        );
        assert_eq!(
            granule("[j]\nrw=randread\nbs=64k\nblockalign=512\n"),
            Some(512)
        );
        assert_eq!(granule("[j]\nrw=read\nbs=8k\noffset=4k\n"), Some(4096));
        assert_eq!(granule("[j]\nrw=write:2k\nbs=8k\n"), Some(2048));
    }
}
