//! The boundary every request of a job falls on: the largest power of two
//! that divides each offset and each length it may issue. O_DIRECT refuses
//! a request off the target's direct-I/O alignment, so `iosteer run` checks
//! it against each job's granule before the run, not after thousands of
//! failed requests.

use crate::job_shape::JobShape;
use crate::workload::{Job, JobKind, Synthetic};

impl Job {
    /// The largest power of two dividing every offset and length the job
    /// may issue; `None` when they are all zero (no boundary binds them).
    /// Only the directions the job issues count (`bs=4k,1000` on a reader
    /// is 4 KiB reads).
    pub fn granule(&self) -> Option<u64> {
        let bits = match &self.kind {
            JobKind::Synthetic(s) => synthetic_bits(s, &self.shape),
            JobKind::Trace(records) => records.summary().bits,
        };
        (bits != 0).then(|| 1 << bits.trailing_zeros())
    }
}

/// The OR of every offset step and length a synthetic job may issue: its
/// start and `rw=...:N` step, and per direction it issues, its block
/// sizes and, if random, the boundary its offsets fall on.
fn synthetic_bits(s: &Synthetic, shape: &JobShape) -> u64 {
    let issues = [
        !s.trim && s.read_percent > 0,
        !s.trim && s.read_percent < 100,
        s.trim,
    ];
    let mut bits = s.offset | shape.offset_add.unsigned_abs();
    // Strided zones start `zonerange + zoneskip` apart.
    if let Some(zones) = &shape.zones {
        bits |= zones.range | zones.skip;
    }
    for direction in (0..3).filter(|&d| issues[d]) {
        // `bs_is_seq_rand`: any request may take the read or the write sizes.
        let splits = match shape.blocks_by_randomness {
            true => &[0, 1][..],
            false => &[direction][..],
        };
        bits |= match &shape.blocks {
            Some(blocks) => splits.iter().map(|&d| &blocks[d]).fold(0, |b, split| {
                let sizes = split.sizes.iter().fold(b, |b, &(size, _)| b | size);
                sizes | u64::from(split.any_byte.is_some())
            }),
            None => s.block_min | s.block_max | s.align,
        };
        if !s.sequential {
            bits |= shape.random_align.map_or(s.align, |align| align[direction]);
        }
    }
    bits
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
        // Only the directions issued: a reader's 1000-byte writes never go
        // (and its random offsets fall on its 4 KiB reads, as fio's).
        assert_eq!(granule("[j]\nrw=randread\nbs=4k,1000\n"), Some(4096));
        assert_eq!(granule("[j]\nrw=read\nbs=4k,1000\n"), Some(4096));
        assert_eq!(granule("[j]\nrw=randrw\nbs=4k,1000\n"), Some(8));
        // Zones start where their range and skip put them (found by a
        // review: 100,000-byte zones were simulated off the sectors).
        let zones = "[j]\nrw=read\nbs=4k\nsize=1m\nzonemode=strided\nzonesize=16k\n";
        assert_eq!(granule(&format!("{zones}zonerange=100000\n")), Some(32));
        assert_eq!(
            granule(&format!("{zones}zonerange=64k\nzoneskip=1000\n")),
            Some(8)
        );
        assert_eq!(granule(&format!("{zones}zonerange=64k\n")), Some(4096));
    }
}
