//! Where a job's region starts: fio's `offset`, `offset_increment` and
//! `offset_align` ([`Offsets`]).
//!
//! As fio 3.33 places it (`get_start_offset`): copy *n* of `numjobs`
//! starts at `offset + n × offset_increment`; when either is a percentage
//! (of the drive here, of the file in fio) that start is rounded up to a
//! multiple of `offset_align`, or, without one, of the job's smallest
//! block over reads, writes and trims (`offset=10%` of 1 MiB with 4 KiB
//! blocks: 106,496, not 104,857). A start given in bytes is kept as it is,
//! `offset_align` or not.

use super::*;

/// A section's `offset`, `offset_increment` and `offset_align`.
#[derive(Default)]
pub(super) struct Offsets {
    /// Bytes, a percentage's unrounded.
    offset: u64,
    increment: u64,
    /// `offset` or `offset_increment` was a percentage: fio aligns the start.
    percent: [bool; 2],
    align: Option<u64>,
}

/// Copy *n*'s start: `(offset, increment, align)`, `align` when fio rounds it.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Start {
    pub(super) offset: u64,
    pub(super) increment: u64,
    pub(super) align: Option<u64>,
}

impl Offsets {
    /// Reads `key` if it is one of these options (`Ok(false)` if not).
    pub(super) fn option(&mut self, setting: &Setting, capacity: u64) -> Result<bool, String> {
        let Setting {
            key,
            value,
            kb_base,
            ..
        } = *setting;
        let bad = |expected: &str| setting.bad(expected);
        match key {
            "offset" | "offset_increment" => {
                let (bytes, percent) = size_or_exact_percent(value, capacity, kb_base)
                    .ok_or_else(|| bad("a size or a percentage"))?;
                let which = usize::from(key == "offset_increment");
                *[&mut self.offset, &mut self.increment][which] = bytes;
                self.percent[which] = percent;
            }
            // fio reads 0 as not given: the smallest block.
            "offset_align" => {
                let align = size_in(value, kb_base)
                    .ok_or_else(|| bad("a size (0: the job's smallest block, fio's default)"))?;
                self.align = (align > 0).then_some(align);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Where the copies start, for a job whose smallest block (over the
    /// three directions, as fio's `td_min_bs`) is `min_block`.
    pub(super) fn finish(&self, min_block: u64) -> Start {
        let rounds = self.percent.contains(&true);
        Start {
            offset: self.offset,
            increment: self.increment,
            align: rounds.then(|| self.align.unwrap_or(min_block)),
        }
    }
}

impl Start {
    /// Copy `copy`'s first byte; `None` past `u64::MAX`.
    pub(super) fn of_copy(&self, copy: u32) -> Option<u64> {
        let raw = u64::from(copy)
            .checked_mul(self.increment)
            .and_then(|shift| self.offset.checked_add(shift))?;
        match self.align {
            Some(align) => raw.div_ceil(align).checked_mul(align),
            None => Some(raw),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::fio::{parse, FioError};
    use crate::workload::JobKind;

    const MIB: u64 = 1 << 20;

    fn offsets(text: &str) -> Vec<u64> {
        parse(text, "o.fio", MIB)
            .unwrap()
            .iter()
            .map(|j| match &j.kind {
                JobKind::Synthetic(s) => s.offset,
                _ => unreachable!(),
            })
            .collect()
    }

    /// fio 3.33 on a 1 MiB file: `offset=10%` starts at 106,496 (104,857
    /// rounded up to 4 KiB), with `offset_align=64k` at 131,072; a start
    /// in bytes is kept (`offset=100000 offset_align=64k`: 100,000); copy
    /// 1 of `offset_increment=10% offset_align=8k` at 106,496; with
    /// `bs=4k,1000`, `offset=3%` at 32,000.
    #[test]
    fn percentage_starts_round_up_as_fios() {
        let job = |options: &str| offsets(&format!("[j]\nrw=read\nsize=64k\n{options}"));
        assert_eq!(job("offset=10%\n"), [106_496]);
        assert_eq!(job("offset=10%\noffset_align=64k\n"), [131_072]);
        assert_eq!(job("offset=100000\noffset_align=64k\n"), [100_000]);
        assert_eq!(
            job("offset_increment=10%\nnumjobs=2\noffset_align=8k\n"),
            [0, 106_496]
        );
        assert_eq!(job("bs=4k,1000\nrw=write\noffset=3%\n"), [32_000]);
        assert_eq!(job("offset=10%\noffset_align=0\n"), [106_496]);
    }

    #[test]
    fn a_bad_offset_align_names_its_line() {
        let err: FioError = parse("[j]\nrw=read\noffset_align=lots\n", "o.fio", MIB).unwrap_err();
        assert_eq!(err.line, 3);
        assert!(err.message.contains("offset_align=lots"), "{err}");
    }
}
