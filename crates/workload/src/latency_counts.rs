//! Latencies counted in the buckets of an HDR histogram, the histogram
//! itself built only when a figure is asked for.
//!
//! The recorder counts every request's latency twice (its phase and its
//! second). `hdrhistogram::Histogram::saturating_record` also keeps a
//! minimum and maximum and checks its range on each record, several times
//! the instructions of the count alone; [`LatencyCounts`] counts into the
//! same buckets (a leading-zeros count and a shift) and
//! [`histogram`](LatencyCounts::histogram) hands back the histogram those
//! records would have made: the same counts, total, minimum and maximum
//! buckets, so the same quantiles and maximum.

use hdrhistogram::Histogram;

/// A bucket's count: `u32` where memory counts (the series' open seconds),
/// saturating as the histogram's counters do.
pub(crate) trait Count: Copy + Default {
    fn saturating_add(self, other: Self) -> Self;
    fn one() -> Self;
    fn get(self) -> u64;
}

impl Count for u32 {
    fn saturating_add(self, other: u32) -> u32 {
        u32::saturating_add(self, other)
    }
    fn one() -> u32 {
        1
    }
    fn get(self) -> u64 {
        u64::from(self)
    }
}

impl Count for u64 {
    fn saturating_add(self, other: u64) -> u64 {
        u64::saturating_add(self, other)
    }
    fn one() -> u64 {
        1
    }
    fn get(self) -> u64 {
        self
    }
}

/// Counts per bucket of `Histogram::new_with_bounds(1, highest, digits)`.
#[derive(Clone, Debug)]
pub(crate) struct LatencyCounts<C> {
    counts: Vec<C>,
    highest: u64,
    digits: u8,
    /// log2 of half the sub-buckets of a bucket.
    half_magnitude: u32,
    /// Where a value past the last bucket counts: at `highest`, as
    /// `saturating_record` clamps it.
    clamped_index: usize,
}

impl<C: Count> LatencyCounts<C> {
    /// Empty counts for values from 1 to `highest` at `digits` significant
    /// digits.
    pub(crate) fn new(highest: u64, digits: u8) -> LatencyCounts<C> {
        // A bucket's sub-buckets: 2 * 10^digits rounded up to a power of
        // two; buckets double until one holds `highest`, the first of
        // them twice as many slots (the histogram's own sizing).
        let sub_buckets = (2 * 10u64.pow(u32::from(digits))).next_power_of_two();
        let mut buckets = 1;
        let mut untrackable = sub_buckets;
        while untrackable <= highest {
            let Some(next) = untrackable.checked_mul(2) else {
                buckets += 1;
                break;
            };
            untrackable = next;
            buckets += 1;
        }
        let mut counts = LatencyCounts {
            counts: vec![C::default(); (buckets + 1) * (sub_buckets as usize / 2)],
            highest,
            digits,
            half_magnitude: sub_buckets.trailing_zeros() - 1,
            clamped_index: 0,
        };
        counts.clamped_index = counts.index_of(highest);
        counts
    }

    /// Counts `value` as `Histogram::saturating_record` does.
    pub(crate) fn record(&mut self, value: u64) {
        let index = self.index_of(value);
        let index = if index < self.counts.len() {
            index
        } else {
            self.clamped_index
        };
        self.counts[index] = self.counts[index].saturating_add(C::one());
    }

    /// The histogram's `index_for` (lowest value 1, so unit magnitude 0):
    /// bucket `b` holds values below `sub_buckets << b`, its upper half
    /// sub-buckets at steps of `2^b`.
    fn index_of(&self, value: u64) -> usize {
        let sub_bucket_mask = (2u64 << self.half_magnitude) - 1;
        let bucket = 63 - self.half_magnitude - (value | sub_bucket_mask).leading_zeros();
        let sub_bucket = value >> bucket;
        (((u64::from(bucket) + 1) << self.half_magnitude) + sub_bucket - (1 << self.half_magnitude))
            as usize
    }

    /// The lowest value of bucket index `index` (the histogram's `value_for`).
    fn value_of(&self, index: usize) -> u64 {
        let half = 1u64 << self.half_magnitude;
        let bucket = (index >> self.half_magnitude) as u32;
        let sub_bucket = (index as u64) & (half - 1);
        match bucket.checked_sub(1) {
            Some(bucket) => (sub_bucket + half) << bucket,
            None => sub_bucket,
        }
    }

    /// Adds `other`'s counts (same bounds).
    pub(crate) fn add(&mut self, other: &LatencyCounts<C>) {
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine = mine.saturating_add(*theirs);
        }
    }

    /// Back to no count, keeping the memory.
    pub(crate) fn reset(&mut self) {
        self.counts.fill(C::default());
    }

    /// Buckets a count takes (for memory accounting).
    #[cfg(test)]
    pub(crate) fn buckets(&self) -> usize {
        self.counts.len()
    }

    /// The histogram the same values would have made (its counters `u64`:
    /// the same as `C`'s while no bucket saturates `C`).
    pub(crate) fn histogram(&self) -> Histogram<u64> {
        let mut histogram = empty(self.highest, self.digits);
        for (index, &count) in self.counts.iter().enumerate() {
            if count.get() > 0 {
                histogram
                    .record_n(self.value_of(index), count.get())
                    .expect("a bucket's own value is in range");
            }
        }
        histogram
    }
}

fn empty(highest: u64, digits: u8) -> Histogram<u64> {
    Histogram::new_with_bounds(1, highest, digits)
        .expect("bounds checked by the callers' constants")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values across every bucket, their edges, zero and past the top.
    fn values(highest: u64) -> Vec<u64> {
        let mut values = vec![0, 1, 2, 3, highest - 1, highest, highest + 1, u64::MAX];
        for shift in 0..64 {
            let power = 1u64 << shift;
            values.extend([power - 1, power, power + 1, power + power / 3]);
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x >> (x % 64));
        }
        values
    }

    #[test]
    fn counts_make_the_histogram_its_records_make() {
        for (highest, digits) in [
            (3_600_000_000_000, 3),
            (3_600_000_000, 2),
            (u64::MAX / 4, 1),
        ] {
            let mut direct = empty(highest, digits);
            let mut counts = LatencyCounts::<u64>::new(highest, digits);
            for value in values(highest) {
                direct.saturating_record(value);
                counts.record(value);
            }
            assert_eq!(counts.buckets(), direct.distinct_values());
            let built = counts.histogram();
            assert_eq!(built, direct, "{highest} {digits}");
            assert_eq!(built.max(), direct.max());
            assert_eq!(built.min_nz(), direct.min_nz());
            for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
                assert_eq!(built.value_at_quantile(q), direct.value_at_quantile(q));
            }
            let mut twice = counts.clone();
            twice.add(&counts);
            direct.add(direct.clone()).unwrap();
            assert_eq!(twice.histogram(), direct);
            twice.reset();
            assert_eq!(twice.histogram(), empty(highest, digits));
        }
    }
}
