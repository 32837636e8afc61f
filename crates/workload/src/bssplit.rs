//! Block sizes of a job: one size, fio's `bs=r,w,t` per direction, or
//! fio's `bssplit` (`4k/50:64k/50`, per direction as `r,w,t`).

use rand::rngs::SmallRng;
use rand::Rng;

use crate::fio::size_in;
use iosteer_sched::units::KbBase;

/// Sizes and their weights, in percent (summing to 100).
#[derive(Clone, Debug, PartialEq)]
pub struct BlockSplit {
    pub sizes: Vec<(u64, f64)>,
    /// fio's `bs_unaligned` range `(lo, hi)`: any byte count ([`BlockSplit::fio_unaligned`]);
    /// `sizes` then holds `lo`, standing for `lo..hi`, and `hi`.
    pub any_byte: Option<(u64, u64)>,
}

/// What `bssplit` accepts, for error messages.
pub const ACCEPTED: &str =
    "size/percent pairs joined by `:` (4k/50:64k/50), percentages summing to at most 100 \
                            (a blank one takes an even share of the rest, else the last size does), one list per direction \
                            joined by `,` (read,write,trim)";

/// Most sizes a `bsrange` drawn as a list may take ([`BlockSplit::fio_range`]).
pub const MAX_RANGE_SIZES: u64 = 4096;

impl BlockSplit {
    pub fn single(size: u64) -> BlockSplit {
        BlockSplit {
            sizes: vec![(size, 100.0)],
            any_byte: None,
        }
    }

    /// One direction's list, such as `4k/50:64k/50` or `4k/:8k/`.
    pub fn parse(text: &str, base: KbBase) -> Option<BlockSplit> {
        Self::parse_topped_up(text, base).map(|(split, _)| split)
    }

    /// [`Self::parse`], and the percent given to the last size to reach
    /// 100: fio 3.33 draws that size whenever the draw passes the given
    /// shares (`4k/30:8k/30`: 4k 30%, 8k 70%).
    pub fn parse_topped_up(text: &str, base: KbBase) -> Option<(BlockSplit, f64)> {
        let mut sizes = Vec::new();
        let mut blanks = 0usize;
        for entry in text.split(':') {
            let (size, percent) = entry.split_once('/').unwrap_or((entry, ""));
            let size = size_in(size, base).filter(|s| *s > 0)?;
            let percent = match percent.trim() {
                "" => {
                    blanks += 1;
                    f64::NAN
                }
                p => p
                    .parse::<f64>()
                    .ok()
                    .filter(|p| (0.0..=100.0).contains(p))?,
            };
            sizes.push((size, percent));
        }
        let given: f64 = sizes.iter().map(|s| s.1).filter(|p| !p.is_nan()).sum();
        if given > 100.0 + 1e-9 || (blanks == 0 && given == 0.0) {
            return None;
        }
        for entry in sizes.iter_mut().filter(|s| s.1.is_nan()) {
            entry.1 = (100.0 - given) / blanks as f64;
        }
        let short = match blanks {
            0 if given < 100.0 - 1e-6 => 100.0 - given,
            _ => 0.0,
        };
        if let Some(last) = sizes.iter_mut().rev().find(|s| s.1 > 0.0) {
            last.1 += short;
        }
        let split = BlockSplit {
            sizes,
            any_byte: None,
        };
        Some((split, short))
    }

    /// fio's `bsrange=lo-hi` for one direction, drawn as fio draws it: a
    /// number uniform in `lo..lo+hi`, rounded down to a multiple of `lo`
    /// and capped at `hi`. So every multiple of `lo` up to `hi` is equally
    /// likely, and `hi` itself, when it is not one, takes the rest
    /// (`6k-20k`: 6k, 12k and 18k 30% each, 20k 10%). `None` past
    /// [`MAX_RANGE_SIZES`] sizes.
    pub fn fio_range(lo: u64, hi: u64) -> Option<BlockSplit> {
        let whole = hi / lo;
        let rest = hi % lo;
        if whole + u64::from(rest > 0) > MAX_RANGE_SIZES {
            return None;
        }
        let share = |bytes: u64| bytes as f64 * 100.0 / hi as f64;
        let mut sizes: Vec<(u64, f64)> = (1..=whole).map(|k| (k * lo, share(lo))).collect();
        if rest > 0 {
            sizes.push((hi, share(rest)));
        }
        Some(BlockSplit {
            sizes,
            any_byte: None,
        })
    }

    /// fio's `bsrange=lo-hi` with `bs_unaligned` (`lo < hi`): `lo + ⌊hi × u⌋`
    /// capped at `hi`, as fio 3.33 draws it: every byte count from `lo` to
    /// `hi - 1` with chance `1/hi`, and `hi` with `lo/hi`.
    pub fn fio_unaligned(lo: u64, hi: u64) -> BlockSplit {
        let top = lo as f64 * 100.0 / hi as f64;
        BlockSplit {
            sizes: vec![(lo, 100.0 - top), (hi, top)],
            any_byte: Some((lo, hi)),
        }
    }

    /// Each size rounded down to a multiple of the smallest, as fio 3.33
    /// sizes a request without `bs_unaligned` (`buflen -= buflen % minbs`
    /// in `get_next_buflen`): `4k/50:6k/50` issues only 4 KiB. The sizes
    /// that changed, as (given, issued).
    pub fn round_to_smallest(&mut self) -> Vec<(u64, u64)> {
        let smallest = self.smallest().max(1);
        let mut rounded = Vec::new();
        for (size, _) in &mut self.sizes {
            let issued = *size - *size % smallest;
            if issued != *size {
                rounded.push((*size, issued));
                *size = issued;
            }
        }
        rounded
    }

    /// [`draw`](Self::draw), of the sizes that fit in `room` bytes (a
    /// file of the job), as fio 3.33's `get_next_buflen` draws only sizes
    /// that fit: the share of one that does not goes to the next that
    /// does, and with none after it fio draws again. The same draws as
    /// `draw` where every size fits; the smallest size where none does.
    pub fn draw_fitting(&self, rng: &mut SmallRng, room: u64) -> u64 {
        if self.largest() <= room || self.smallest() > room {
            return self.draw(rng);
        }
        // At most a few thousand draws for a share of 0.1%; then the
        // smallest, which fits.
        (0..1 << 16)
            .find_map(|_| self.pick(rng, |size| size <= room))
            .unwrap_or_else(|| self.smallest())
    }

    /// One draw: the size whose share the draw falls in, or the next one
    /// after it that `fits`; `None` when none after it does.
    fn pick(&self, rng: &mut SmallRng, fits: impl Fn(u64) -> bool) -> Option<u64> {
        if let Some((lo, hi)) = self.any_byte {
            let len = (lo + rng.random_range(0..hi)).min(hi);
            return fits(len).then_some(len);
        }
        let pick = rng.random_range(0.0..100.0f64);
        let mut sum = 0.0;
        self.sizes.iter().find_map(|&(size, percent)| {
            sum += percent;
            (pick < sum && fits(size)).then_some(size)
        })
    }

    pub fn smallest(&self) -> u64 {
        self.sizes.iter().map(|s| s.0).min().unwrap_or(0)
    }

    pub fn largest(&self) -> u64 {
        self.sizes.iter().map(|s| s.0).max().unwrap_or(0)
    }

    /// Mean size, bytes, weighted by the percentages.
    pub fn mean(&self) -> f64 {
        if let Some((lo, hi)) = self.any_byte {
            let (lo, hi) = (lo as f64, hi as f64);
            return (lo + hi - 1.0) / 2.0 * (hi - lo) / hi + lo;
        }
        self.sizes.iter().map(|(s, p)| *s as f64 * p / 100.0).sum()
    }

    pub fn draw(&self, rng: &mut SmallRng) -> u64 {
        match self.sizes.as_slice() {
            [(only, _)] if self.any_byte.is_none() => *only,
            _ => self.pick(rng, |_| true).unwrap_or_else(|| self.largest()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn splits_parse_as_fio_writes_them() {
        let s = BlockSplit::parse("4k/50:64k/50", KbBase::Binary).unwrap();
        assert_eq!(s.sizes, [(4096, 50.0), (65536, 50.0)]);
        let s = BlockSplit::parse("4k/20:8k/:16k/", KbBase::Binary).unwrap();
        assert_eq!(s.sizes, [(4096, 20.0), (8192, 40.0), (16384, 40.0)]);
        // Short of 100, the rest goes to the last size, as fio draws it.
        let s = BlockSplit::parse("4k/30:8k/30", KbBase::Binary).unwrap();
        assert_eq!(s.sizes, [(4096, 30.0), (8192, 70.0)]);
        for bad in ["4k/50:64k/60", "4k/150", "4q/100", "4k/0:8k/0", ""] {
            assert!(BlockSplit::parse(bad, KbBase::Binary).is_none(), "{bad}");
        }
    }

    #[test]
    fn draws_follow_the_weights() {
        let s = BlockSplit::parse("4k/25:64k/75", KbBase::Binary).unwrap();
        let mut rng = SmallRng::seed_from_u64(1);
        let small = (0..100_000).filter(|_| s.draw(&mut rng) == 4096).count();
        assert!((small as f64 / 1e5 - 0.25).abs() < 0.01, "{small}");
        assert_eq!(s.mean(), 0.25 * 4096.0 + 0.75 * 65536.0);
    }

    /// Only sizes that fit a file are drawn; the share of one that does not
    /// goes to the next that does, in the order given, as in fio 3.33's
    /// `get_next_buflen`; with none after it, a new draw.
    #[test]
    fn draws_that_must_fit_take_only_sizes_that_do() {
        let s = BlockSplit::parse("4k/30:64k/30:8k/40", KbBase::Binary).unwrap();
        let mut rng = SmallRng::seed_from_u64(1);
        let draws: Vec<u64> = (0..100_000)
            .map(|_| s.draw_fitting(&mut rng, 32 << 10))
            .collect();
        let small = draws.iter().filter(|&&b| b == 4096).count() as f64 / 1e5;
        assert!(draws.iter().all(|&b| b == 4096 || b == 8192));
        assert!((small - 0.30).abs() < 0.01, "{small}");
        let s = BlockSplit::parse("4k/50:64k/50", KbBase::Binary).unwrap();
        assert!((0..1000).all(|_| s.draw_fitting(&mut rng, 32 << 10) == 4096));
        // Where all fit, the same draws as `draw`.
        let (mut a, mut b) = (SmallRng::seed_from_u64(2), SmallRng::seed_from_u64(2));
        assert!((0..1000).all(|_| s.draw(&mut a) == s.draw_fitting(&mut b, 1 << 20)));
        let u = BlockSplit::fio_unaligned(1024, 65536);
        assert!((0..1000).all(|_| u.draw_fitting(&mut rng, 5000) <= 5000));
    }

    /// fio 3.33's `bsrange=1k-4k bs_unaligned`, 45,599 writes: 25.0% of
    /// 4096 bytes, 12.4% to 12.7% in each 512-byte band from 1024 to 4095,
    /// mean 2,943.4 bytes.
    #[test]
    fn unaligned_ranges_draw_any_byte_count_as_fio_does() {
        let s = BlockSplit::fio_unaligned(1024, 4096);
        let mut rng = SmallRng::seed_from_u64(1);
        let draws: Vec<u64> = (0..100_000).map(|_| s.draw(&mut rng)).collect();
        let share = |f: &dyn Fn(u64) -> bool| draws.iter().filter(|&&b| f(b)).count() as f64 / 1e5;
        assert!((share(&|b| b == 4096) - 0.25).abs() < 0.01);
        assert!((share(&|b| (1024..1536).contains(&b)) - 0.125).abs() < 0.01);
        assert!(draws.iter().all(|b| (1024..=4096).contains(b)));
        assert!(share(&|b| b % 512 != 0) > 0.7, "any byte count");
        let mean = draws.iter().sum::<u64>() as f64 / 1e5;
        assert!((mean - 2943.4).abs() < 15.0, "{mean}");
        assert!((s.mean() - 2943.6).abs() < 0.1, "{}", s.mean());
        assert_eq!((s.smallest(), s.largest()), (1024, 4096));
    }
}
