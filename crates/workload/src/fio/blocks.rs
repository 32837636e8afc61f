//! A job's block sizes as fio reads them ([`Blocks`]): `bs`, `bsrange`,
//! `bssplit`, and how sizes are drawn from them: `blocksize_unaligned`
//! (`bs_unaligned`) and `bs_is_seq_rand`.
//!
//! - `bs_unaligned`: a `bsrange` draws any byte count, not only multiples
//!   of its low end. fio 3.33 draws `lo + ⌊hi × u⌋` capped at `hi` (`u`
//!   uniform in [0, 1)), so each count from `lo` to `hi - 1` has chance
//!   `1/hi` and `hi` itself `lo/hi` (`bsrange=1k-4k`: 25% of 4096, the
//!   rest spread evenly over 1024 to 4095; fio's own 45,599 writes: 25.0%,
//!   mean 2,943 bytes). Random offsets still fall on the low end.
//!   Without it, a `bssplit` size that is not a multiple of its
//!   direction's smallest is rounded down to one, as fio does (noted).
//! - `bs_is_seq_rand`: the read sizes are those of sequential requests,
//!   the write sizes those of random ones, whatever their direction, as in
//!   fio; each direction's random offsets stay on its own smallest block
//!   (or `blockalign`). Where a random request may be larger than its
//!   direction's boundary (`bs=4k,16k` on random reads), fio 3.33 shortens
//!   it where its random map is used or ends the job where it runs past
//!   the region's end, which draws decide (0 to 16 reads of 64 in twelve
//!   runs): refused.

use super::*;

/// Block options as read, turned into sizes when the section ends.
pub(super) struct Blocks {
    /// Per direction (read, write, trim).
    splits: [BlockSplit; 3],
    /// The plain `bsrange` (one range for all directions, its high end a
    /// multiple of its low end, at least a sector): drawn by the job's
    /// plain path.
    plain_range: Option<(u64, u64)>,
    /// Each direction's `bsrange`, when its sizes came from one.
    ranges: [Option<(u64, u64)>; 3],
    /// fio's `bs_unaligned` and `bs_is_seq_rand`.
    unaligned: bool,
    seq_rand: bool,
    /// The `bssplit` lists whose shares fall short of 100, with the share
    /// their last size took (for the notes).
    topped_up: Vec<(String, f64)>,
}

/// The sizes a job draws.
pub(super) struct BlockPlan {
    pub(super) min: u64,
    pub(super) max: u64,
    /// Sizes per direction when not the plain `min..=max` in steps of `align`.
    pub(super) splits: Option<[BlockSplit; 3]>,
    /// The step of plain sizes (at least a sector).
    pub(super) align: u64,
    /// Each direction's smallest block, fio's `min_bs` (random offsets fall
    /// on it; `rate_iops` counts it).
    pub(super) own: [u64; 3],
    /// fio's `bs_is_seq_rand`.
    pub(super) by_randomness: bool,
}

impl Default for Blocks {
    fn default() -> Blocks {
        Blocks {
            splits: std::array::from_fn(|_| BlockSplit::single(4096)),
            plain_range: None,
            ranges: [None; 3],
            unaligned: false,
            seq_rand: false,
            topped_up: Vec::new(),
        }
    }
}

impl Blocks {
    /// Sets the directions `splits` gives (`bs`, `bssplit`); a blank one
    /// keeps its sizes, from a `bsrange` too, as fio leaves it.
    fn set_splits(&mut self, splits: [Option<BlockSplit>; 3]) -> Result<(), String> {
        // A plain range kept its sizes for every direction in itself: the
        // directions left blank take them now.
        if let (Some((lo, hi)), true) = (self.plain_range, splits.iter().any(Option::is_some)) {
            let range = BlockSplit::fio_range(lo, hi).ok_or_else(|| {
                format!("bsrange={lo}-{hi} has too many sizes to keep beside another direction's blocks")
            })?;
            self.splits = std::array::from_fn(|_| range.clone());
            self.plain_range = None;
        }
        for (d, split) in splits.into_iter().enumerate() {
            if let Some(split) = split {
                self.splits[d] = split;
                self.ranges[d] = None;
            }
        }
        Ok(())
    }

    /// Reads `key` if it is one of these options (`Ok(false)` if not).
    pub(super) fn option(&mut self, setting: &Setting) -> Result<bool, String> {
        let Setting {
            key,
            value,
            kb_base: base,
            ..
        } = *setting;
        let bad = |expected: &str| setting.bad(expected);
        match key {
            "bs" => {
                let sizes = per_direction(value, |t| positive_size(t, base))
                    .ok_or_else(|| bad("a size such as 4k or 128k, or read,write,trim sizes"))?;
                self.set_splits(sizes.map(|size| size.map(BlockSplit::single)))
                    .map_err(|e| bad(&e))?;
            }
            // fio's sizes are multiples of a range's low end (its high end
            // too when it is not one), a range written high to low swapped,
            // and one range per direction as `bs` has one size.
            "bsrange" => {
                let range = |text: &str| -> Option<(u64, u64)> {
                    let (lo, hi) = text.split_once('-').or_else(|| text.split_once(':'))?;
                    let (lo, hi) = (positive_size(lo, base)?, positive_size(hi, base)?);
                    Some((lo.min(hi), lo.max(hi)))
                };
                let ranges = per_direction(value, range).ok_or_else(|| {
                    bad("min-max, such as 4k-64k, or read,write,trim ranges such as 4k-16k,64k-256k")
                })?;
                let before = self.plain_range.take();
                match ranges {
                    // The plain range steps by its low end, at least a sector.
                    [Some((lo, hi)), w, t]
                        if w == ranges[0] && t == ranges[0] && hi % lo == 0 && lo >= 512 =>
                    {
                        self.plain_range = Some((lo, hi));
                        self.ranges = [Some((lo, hi)); 3];
                    }
                    _ => {
                        // A blank direction keeps its sizes (a range inherited, as fio's).
                        for (d, r) in ranges.into_iter().enumerate() {
                            if let Some((lo, hi)) = r.or(before) {
                                self.splits[d] = BlockSplit::fio_range(lo, hi).ok_or_else(|| {
                                    bad(&format!(
                                        "a range of at most {} sizes (the multiples of its low end, and its high end) \
                                         when its high end is not a multiple of its low end or the directions' ranges differ",
                                        crate::bssplit::MAX_RANGE_SIZES
                                    ))
                                })?;
                                self.ranges[d] = Some((lo, hi));
                            }
                        }
                    }
                }
            }
            "bssplit" => {
                let parsed = per_direction(value, |t| BlockSplit::parse_topped_up(t, base))
                    .ok_or_else(|| bad(crate::bssplit::ACCEPTED))?;
                let short = (parsed.iter().flatten()).filter(|(_, short)| *short > 0.0);
                self.topped_up = short
                    .map(|(_, short)| (value.to_string(), *short))
                    .collect();
                self.set_splits(parsed.map(|p| p.map(|(split, _)| split)))
                    .map_err(|e| bad(&e))?;
            }
            "blocksize_unaligned" => {
                self.unaligned = boolean(value).ok_or_else(|| bad("nothing, 0 or 1"))?
            }
            "bs_is_seq_rand" => {
                self.seq_rand = boolean(value).ok_or_else(|| bad("nothing, 0 or 1"))?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The sizes the job draws; a note for the sizes fio rounds.
    pub(super) fn finish(mut self, job: &str, notes: &mut Vec<String>) -> BlockPlan {
        if let Some((value, short)) = self.topped_up.first() {
            notes.push(format!(
                "job {job}: bssplit={value}: shares short of 100; the last size takes the rest ({short}% more), as fio 3.33 draws it"
            ));
        }
        if !self.unaligned {
            // A range's sizes are multiples of its low end but for its top,
            // which fio's cap leaves as it is.
            let classes = ["read", "write", "trim"];
            let splits = self.splits.iter_mut().zip(self.ranges).zip(classes);
            for ((split, _), class) in splits.filter(|((_, range), _)| range.is_none()) {
                let rounded = split.round_to_smallest();
                if rounded.is_empty() {
                    continue;
                }
                let sizes: Vec<String> = rounded
                    .iter()
                    .map(|(given, issued)| format!("{given} bytes as {issued}"))
                    .collect();
                notes.push(format!(
                    "job {job}: bssplit: {class} sizes are multiples of the smallest ({} bytes) without bs_unaligned, as in fio 3.33: {}",
                    split.smallest(),
                    sizes.join(", ")
                ));
            }
        }
        if self.unaligned {
            for (split, range) in self.splits.iter_mut().zip(self.ranges) {
                if let Some((lo, hi)) = range.filter(|(lo, hi)| lo < hi) {
                    *split = BlockSplit::fio_unaligned(lo, hi);
                }
            }
            self.plain_range = None;
        }
        let sizes = || self.splits.iter().flat_map(|b| b.sizes.iter().map(|s| s.0));
        let (min, max) = self
            .plain_range
            .unwrap_or_else(|| (sizes().min().unwrap_or(4096), sizes().max().unwrap_or(4096)));
        let plain =
            self.plain_range.is_some() || self.splits.iter().all(|b| b == &BlockSplit::single(min));
        // A range's sizes are multiples of its low end, as in fio (the
        // blocks of `bs` do not count: the range replaced them).
        let align = match self.plain_range {
            Some((lo, _)) => lo,
            None => sizes().fold(0, gcd),
        }
        .max(512);
        let own = [0, 1, 2].map(|d| match self.plain_range {
            Some((lo, _)) => lo,
            None => self.splits[d].smallest(),
        });
        BlockPlan {
            min,
            max,
            splits: (!plain).then(|| self.splits.clone()),
            align,
            own,
            by_randomness: self.seq_rand && !plain,
        }
    }
}

impl BlockPlan {
    /// fio draws only block sizes that fit a file (`bsrange=4k-64k
    /// size=32k` runs), and issues nothing where a direction's smallest
    /// does not ("size too small, must not be less than minimum block
    /// size"): refused, as its requests would run past the region. `size`
    /// over `files` files; `issued`, the directions the job issues.
    pub(super) fn check_fits(&self, size: u64, files: u64, issued: &[usize]) -> Result<(), String> {
        let per_file = size / files;
        let needed = match self.by_randomness {
            true => self.min,
            false => issued
                .iter()
                .map(|&d| self.own[d])
                .max()
                .unwrap_or(self.min),
        };
        if per_file >= needed {
            return Ok(());
        }
        let holds = match files {
            1 => format!("its size, {size} bytes, is"),
            _ => format!(
                "each of its {files} files holds {per_file} bytes (size {size} over nrfiles),"
            ),
        };
        Err(format!(
            "{holds} less than its smallest block of {needed}: fio issues no I/O for such a job (\"size too small, must not be less than minimum block size\")"
        ))
    }

    /// The largest block drawn in a file of `per_file` bytes: a plain
    /// range's sizes are those that fit (a split draws its own that fit).
    pub(super) fn largest_fitting(&self, per_file: u64) -> u64 {
        match self.splits {
            None => self
                .max
                .min(per_file / self.align * self.align)
                .max(self.min),
            Some(_) => self.max,
        }
    }

    /// The note for a `trimwrite` job whose trims have sizes of their own
    /// (`bs=4k,8k,16k`, a `bssplit` or `bsrange` with its own trim part):
    /// here each trim is its write's range. fio 3.33 walks trims in their
    /// sizes and writes in theirs, and trims when its last trim and last
    /// write began at the same offset, so the walks drift apart and it stops
    /// once the trims reach the end (`bs=4k,8k,16k size=64k`: trims of
    /// 16 KiB at 0, 16k, 32k and 48k, one before every other 8 KiB write,
    /// and 7 writes of 8).
    pub(super) fn trimwrite_note(&self, job: &str) -> Option<String> {
        let splits = self.splits.as_ref().filter(|_| !self.by_randomness)?;
        let (write, trim) = (&splits[1], &splits[2]);
        if write == trim {
            return None;
        }
        let span = |b: &BlockSplit| match (b.smallest(), b.largest()) {
            (lo, hi) if lo == hi => format!("{lo} bytes"),
            (lo, hi) => format!("{lo} to {hi} bytes"),
        };
        Some(format!(
            "job {job}: rw=trimwrite with trim sizes ({}) other than its write sizes ({}): iosteer trims each write's own blocks just before it; fio 3.33 trims in the trim sizes, only when its last trim and last write began at the same offset, so its trims drift off its writes and it may stop before it has written its size",
            span(trim),
            span(write)
        ))
    }

    /// Refuses `bs_is_seq_rand` where a random request of a direction the
    /// job issues may be larger than the boundary its offsets fall on
    /// (`align`, fio's `blockalign`, by default its smallest block): fio
    /// then shortens or stops it by draws iosteer cannot follow.
    pub(super) fn check_seq_rand(&self, align: [u64; 3], issued: &[usize]) -> Result<(), String> {
        let Some(splits) = self.splits.as_ref().filter(|_| self.by_randomness) else {
            return Ok(());
        };
        let random = splits[1].largest();
        match issued
            .iter()
            .find(|&&d| random > align[d].max(self.own[d]))
        {
            Some(&d) => Err(format!(
                "bs_is_seq_rand: random requests take the write sizes (up to {random} bytes), and the {}s' random \
                 offsets fall on {} bytes: fio 3.33 then shortens requests that meet blocks its random map \
                 has used and ends the job at the first that runs past the region's end, as its draws fall \
                 (0 to 16 of 64 reads in twelve runs of bs=4k,16k rw=randread), which iosteer cannot reproduce; \
                 give write sizes no larger than that boundary, or a blockalign as large as them",
                ["read", "write", "trim"][d],
                align[d].max(self.own[d]),
            )),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use iosteer_sched::{Op, Request};

    use crate::fio::parse;
    use crate::workload::Generator;

    const MIB: u64 = 1 << 20;

    fn requests(text: &str) -> Vec<Request> {
        let job = parse(text, "b.fio", 16 * MIB).unwrap().remove(0);
        Generator::new(job, 0, 1).requests_unloaded()
    }

    /// The sizes of `op` requests, but for the last request (cut to the
    /// bytes left, as fio cuts it).
    fn sizes(out: &[Request], op: Op) -> Vec<u64> {
        let mut sizes: Vec<u64> = out[..out.len() - 1]
            .iter()
            .filter(|r| r.op == op)
            .map(|r| r.len.0)
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }

    /// fio 3.33, `bs=4k,16k bs_is_seq_rand` on 256 KiB: `rw=write` 64
    /// writes of 4 KiB; `rw=rw` only 4 KiB reads and writes; `rw=randrw
    /// percentage_random=50 norandommap blockalign=16k` 16 KiB where random, 4 KiB where
    /// following on, in both directions; `rw=randwrite` 16 KiB writes on
    /// 16 KiB boundaries.
    #[test]
    fn seq_rand_sizes_sequential_requests_as_reads_and_random_ones_as_writes() {
        let job = |rw: &str| {
            requests(&format!(
                "[j]\nsize=256k\nbs=4k,16k\nbs_is_seq_rand=1\nnorandommap\nrw={rw}\n"
            ))
        };
        let out = job("write");
        assert_eq!((out.len(), sizes(&out, Op::Write)), (64, vec![4096]));
        let out = job("rw");
        assert_eq!(sizes(&out, Op::Read), [4096]);
        assert_eq!(sizes(&out, Op::Write), [4096]);
        let out = job("randwrite");
        assert_eq!(sizes(&out, Op::Write), [16384]);
        assert!(out.iter().all(|r| r.offset.0 % 16384 == 0));
        let out = job("randrw\npercentage_random=50\nblockalign=16k");
        assert_eq!(sizes(&out, Op::Read), [4096, 16384]);
        assert_eq!(sizes(&out, Op::Write), [4096, 16384]);
        // Without it, each direction keeps its own.
        let out = requests("[j]\nsize=256k\nbs=4k,16k\nrw=randrw\n");
        assert_eq!(sizes(&out, Op::Read), [4096]);
        assert_eq!(sizes(&out, Op::Write), [16384]);
    }

    /// Random reads of 16 KiB on 4 KiB boundaries: fio 3.33 shortens them
    /// or ends the job by its draws (0 to 16 reads in twelve runs).
    #[test]
    fn seq_rand_refuses_random_requests_larger_than_their_boundary() {
        let text = "[j]\nsize=256k\nbs=4k,16k\nbs_is_seq_rand\nrw=randread\n";
        let err = parse(text, "b.fio", 16 * MIB).unwrap_err();
        assert_eq!(err.line, 5);
        assert!(err.message.contains("bs_is_seq_rand"), "{err}");
        assert!(
            err.message
                .contains("the reads' random offsets fall on 4096"),
            "{err}"
        );
        // A blockalign as large as the random requests fits them.
        let out = requests(&format!("{text}blockalign=16k\n"));
        assert_eq!(sizes(&out, Op::Read), [16384]);
        assert!(out.iter().all(|r| r.offset.0 % 16384 == 0));
        // A sequential reader is never random.
        assert_eq!(
            sizes(
                &requests("[j]\nsize=256k\nbs=4k,16k\nbs_is_seq_rand\nrw=read\n"),
                Op::Read
            ),
            [4096]
        );
    }

    /// fio 3.33 `bsrange=1k-4k bs_unaligned rw=write` on 16 MiB: 5,644
    /// writes, 26.5% of 4096 bytes, 73% not on 512 bytes, each following
    /// on where the last ended (0, 1801, 2990...); `bsrange=1000-3000`:
    /// a third of 3000. Without it, multiples of 1 KiB only.
    #[test]
    fn unaligned_ranges_issue_any_byte_count() {
        let out = requests("[j]\nsize=16m\nrw=write\nbsrange=1k-4k\nbs_unaligned\n");
        let n = out.len() as f64;
        assert!((5_550.0..5_850.0).contains(&n), "{n}");
        let share = |f: &dyn Fn(u64) -> bool| out.iter().filter(|r| f(r.len.0)).count() as f64 / n;
        assert!((share(&|b| b == 4096) - 0.25).abs() < 0.02);
        assert!(share(&|b| b % 512 != 0) > 0.7);
        assert!(out
            .windows(2)
            .all(|w| w[1].offset.0 == w[0].offset.0 + w[0].len.0 || w[1].offset.0 == 0));
        let out = requests("[j]\nsize=16m\nrw=read\nbsrange=1000-3000\nblocksize_unaligned=1\n");
        let top = out.iter().filter(|r| r.len.0 == 3000).count() as f64 / out.len() as f64;
        assert!((top - 1.0 / 3.0).abs() < 0.02, "{top}");
        let out = requests("[j]\nsize=16m\nrw=write\nbsrange=1k-4k\nbs_unaligned=0\n");
        assert!(out.iter().all(|r| r.len.0 % 1024 == 0));
        // Random offsets stay on the range's low end.
        let out = requests("[j]\nsize=16m\nrw=randread\nbsrange=1k-4k\nbs_unaligned\n");
        assert!(out.iter().all(|r| r.offset.0 % 1024 == 0));
        assert_eq!(
            parse(
                "[j]\nrw=read\nbsrange=1k-4k\nbs_unaligned=1\n",
                "b.fio",
                MIB
            )
            .unwrap()[0]
                .granule(),
            Some(1)
        );
    }
}

#[cfg(test)]
mod rounding_tests {
    use iosteer_sched::Op;

    use crate::fio::{parse_file, JobFile};
    use crate::workload::Generator;

    fn sized(text: &str) -> (JobFile, Vec<(Op, u64)>) {
        let file = parse_file(text, "b.fio", 16 << 20).unwrap();
        let out = Generator::new(file.jobs[0].clone(), 0, 1).requests_unloaded();
        // The last request is cut to the bytes left.
        let mut sizes: Vec<(Op, u64)> = out[..out.len() - 1]
            .iter()
            .map(|r| (r.op, r.len.0))
            .collect();
        sizes.sort_unstable_by_key(|s| (s.0 as u8, s.1));
        sizes.dedup();
        (file, sizes)
    }

    /// fio 3.33, `rw=randread norandommap size=2m`: `bssplit=4k/50:6k/50`
    /// 512 reads, every one 4 KiB; `3k/50:8k/50` 3 and 6 KiB (8 KiB less
    /// its remainder of 3); with `bs_unaligned`, 4 and 6 KiB; per
    /// direction in `randrw` (`4k/50:6k/50,3k/50:8k/50`: writes of 3 and
    /// 6 KiB).
    #[test]
    fn bssplit_sizes_round_down_to_the_smallest_as_fio_s() {
        let job = |split: &str| {
            sized(&format!(
                "[j]\nrw=randread\nnorandommap\nsize=2m\n{split}\n"
            ))
        };
        let (file, sizes) = job("bssplit=4k/50:6k/50");
        assert_eq!(sizes, [(Op::Read, 4096)]);
        assert!(
            file.notes.iter().any(|n| n.contains("6144 bytes as 4096")),
            "{:?}",
            file.notes
        );
        assert_eq!(
            job("bssplit=3k/50:8k/50").1,
            [(Op::Read, 3072), (Op::Read, 6144)]
        );
        let (file, sizes) = job("bssplit=4k/50:6k/50\nbs_unaligned");
        assert_eq!(sizes, [(Op::Read, 4096), (Op::Read, 6144)]);
        assert!(file.notes.is_empty(), "{:?}", file.notes);
        let (_, sizes) =
            sized("[j]\nrw=randrw\nnorandommap\nsize=2m\nbssplit=4k/50:6k/50,3k/50:8k/50\n");
        assert!(sizes.contains(&(Op::Write, 3072)) && sizes.contains(&(Op::Write, 6144)));
        assert!(!sizes.contains(&(Op::Read, 6144)), "{sizes:?}");
        // Multiples of the smallest are kept, without a note.
        let (file, sizes) = job("bssplit=4k/50:64k/50");
        assert_eq!(sizes, [(Op::Read, 4096), (Op::Read, 65536)]);
        assert!(file.notes.is_empty(), "{:?}", file.notes);
    }
}
