//! fio's `random_distribution`: where a random job's offsets fall.
//!
//! A distribution draws a block index in `0..blocks` of the job's region.
//! `zipf:θ` and `pareto:h` rank blocks by heat: rank 0 is the hottest, and
//! ranks are laid out from the region's `center` (fio's optional last value,
//! 0.0 to 1.0, default 0) upwards, wrapping. fio scatters ranks over the
//! region with a hash; contiguous hot blocks keep the law exact and the
//! layout readable, and the drive model maps pages, not ranges (a job's
//! notes say so: [`Distribution::layout_differs`]).

use rand::rngs::SmallRng;
use rand::Rng;

/// One zone of `zoned`: `access_percent` of the accesses fall in the next
/// `range_percent` of the region.
#[derive(Clone, Debug, PartialEq)]
pub struct Zone {
    pub access_percent: f64,
    pub range_percent: f64,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub enum Distribution {
    /// Every block equally likely (fio's `random`).
    #[default]
    Uniform,
    /// Rank k (from 1) has weight k^-θ.
    Zipf { theta: f64, center: f64 },
    /// fio's pareto: a share `1 - h` of the accesses go to the hottest `h`
    /// of the blocks (h = 0.2: the 80/20 rule), recursively.
    Pareto { h: f64, center: f64 },
    /// fio's `normal` (its `gauss_next`): the mean of 12 (`BELL_DRAWS`)
    /// uniform draws over the region, a bell whose standard deviation is
    /// 1/12 of the region whatever the deviation given, plus a uniform
    /// jitter `sigma_percent` of the region wide (halved while it would
    /// pass the region's end), moved to `center`. fio's deviation widens
    /// the bell by a jitter; it is not the bell's own.
    Normal { sigma_percent: f64, center: f64 },
    /// `zoned:60/10:30/20:10/70`, zones in order from the region's start.
    Zoned(Vec<Zone>),
}

/// fio's largest deviation of `normal`: half the region.
const MAX_SIGMA_PERCENT: f64 = 50.0;

/// Uniform draws fio's `normal` averages (`GAUSS_ITERS`): by the central
/// limit theorem their mean is nearly normal, of deviation 1/sqrt(12 x 12).
const BELL_DRAWS: u32 = 12;

/// What `random_distribution` accepts, for error messages.
pub const ACCEPTED: &str =
    "random, zipf:θ[:center] (θ > 0, not 1), pareto:h[:center] (0 < h < 1), normal[:dev%[:center]] (dev under 100; as fio draws it: a bell 1/12 of the region wide as its deviation, widened by a jitter dev% wide), \
                            zoned:access%/range%:... (summing to 100 each; a blank range shares the rest); zoned_abs is not modelled";

impl Distribution {
    /// Parses fio's syntax; `None` when it does not fit [`ACCEPTED`].
    pub fn parse(value: &str) -> Option<Distribution> {
        let mut parts = value.split(':');
        let kind = parts.next()?.trim();
        let rest: Vec<&str> = parts.collect();
        let number = |i: usize, default: f64| -> Option<f64> {
            match rest.get(i) {
                None => Some(default),
                Some(t) => t.trim().parse::<f64>().ok().filter(|v| v.is_finite()),
            }
        };
        let center = |i: usize| number(i, 0.0).filter(|c| (0.0..=1.0).contains(c));
        let parsed = match kind {
            "random" if rest.is_empty() => Distribution::Uniform,
            "zipf" => Distribution::Zipf {
                theta: number(0, 1.1).filter(|t| *t > 0.0 && *t != 1.0)?,
                center: center(1)?,
            },
            "pareto" => Distribution::Pareto {
                h: number(0, 0.2).filter(|h| *h > 0.0 && *h < 1.0)?,
                center: center(1)?,
            },
            // fio's deviation is at most half the region.
            "normal" => Distribution::Normal {
                // fio 3.33 refuses 100 and more ("0 <= input < 100.0").
                sigma_percent: number(0, 0.0)
                    .filter(|s| (0.0..100.0).contains(s))?
                    .min(MAX_SIGMA_PERCENT),
                center: number(1, 0.5).filter(|c| (0.0..=1.0).contains(c))?,
            },
            "zoned" => Distribution::Zoned(zones(&rest)?),
            _ => return None,
        };
        let too_many = match &parsed {
            Distribution::Uniform | Distribution::Zoned(_) => false,
            _ => rest.len() > 2,
        };
        (!too_many).then_some(parsed)
    }

    /// How the hot blocks lie where fio lays them out otherwise, for the
    /// report's notes: fio scatters the ranks of zipf, pareto and normal
    /// over the region with a hash; here they are contiguous.
    pub fn layout_differs(&self) -> Option<&'static str> {
        match self {
            Distribution::Zipf { .. } | Distribution::Pareto { .. } => Some(
                "the hottest blocks lie together from the region's center (its start by default) upwards, \
                 where fio scatters them over the region with a hash; how often each is hit is the same",
            ),
            Distribution::Normal { .. } => Some(
                "the blocks hit most lie together around the center, where fio scatters them over the \
                 region with a hash; how often each is hit is the same",
            ),
            _ => None,
        }
    }

    /// A block index in `0..blocks`.
    pub fn draw(&self, rng: &mut SmallRng, blocks: u64) -> u64 {
        let blocks = blocks.max(1);
        match self {
            Distribution::Uniform => rng.random_range(0..blocks),
            Distribution::Zipf { theta, center } => {
                let rank = zipf_rank(rng, blocks, *theta);
                shifted(rank, *center, blocks)
            }
            Distribution::Pareto { h, center } => {
                // u^(ln h / ln(1 - h)) puts a share 1 - h of draws below h.
                let exponent = h.ln() / (1.0 - h).ln();
                let x: f64 = rng.random_range(0.0..1.0f64).powf(exponent);
                let rank = ((x * blocks as f64) as u64).min(blocks - 1);
                shifted(rank, *center, blocks)
            }
            Distribution::Normal {
                sigma_percent,
                center,
            } => {
                let x = fio_bell(rng, sigma_percent / 100.0) + center - 0.5;
                ((x.rem_euclid(1.0) * blocks as f64) as u64).min(blocks - 1)
            }
            Distribution::Zoned(zones) => {
                let pick = rng.random_range(0.0..100.0f64);
                let (mut access, mut range_start) = (0.0, 0.0);
                for zone in zones {
                    access += zone.access_percent;
                    if pick < access || std::ptr::eq(zone, zones.last().unwrap_or(zone)) {
                        let start = (range_start / 100.0 * blocks as f64) as u64;
                        let end = (((range_start + zone.range_percent) / 100.0 * blocks as f64)
                            as u64)
                            .clamp(start + 1, blocks);
                        return rng.random_range(start.min(blocks - 1)..end);
                    }
                    range_start += zone.range_percent;
                }
                rng.random_range(0..blocks)
            }
        }
    }
}

/// A zone's access and range percentages as written, `None` when blank.
type GivenZone = (Option<f64>, Option<f64>);

/// fio's zones; a blank range (`20/`) shares out evenly what the given
/// ones leave of 100, as fio does; fio 3.33 refuses a blank access share
/// (`/10`: "split conversion failed"), and so is it here.
fn zones(parts: &[&str]) -> Option<Vec<Zone>> {
    let parse = |t: &str| -> Option<Option<f64>> {
        let t = t.trim().trim_end_matches('%');
        if t.is_empty() {
            return Some(None);
        }
        t.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map(Some)
    };
    let given: Vec<GivenZone> = parts
        .iter()
        .map(|p| {
            let (access, range) = p.split_once('/')?;
            Some((Some(parse(access)??), parse(range)?))
        })
        .collect::<Option<_>>()?;
    // What the blanks of one column get each, or None when it cannot add up.
    let fill = |column: &dyn Fn(&GivenZone) -> Option<f64>| -> Option<f64> {
        let sum: f64 = given.iter().filter_map(column).sum();
        let blanks = given.iter().filter(|z| column(z).is_none()).count();
        match blanks {
            0 => ((sum - 100.0).abs() < 1e-6).then_some(0.0),
            n => (sum < 100.0 - 1e-6).then(|| (100.0 - sum) / n as f64),
        }
    };
    let access_blank = fill(&|z| z.0)?;
    let range_blank = fill(&|z| z.1)?;
    let zones: Vec<Zone> = given
        .iter()
        .map(|&(access, range)| Zone {
            access_percent: access.unwrap_or(access_blank),
            range_percent: range.unwrap_or(range_blank),
        })
        .collect();
    (!zones.is_empty() && zones.iter().all(|z| z.range_percent > 0.0)).then_some(zones)
}

fn shifted(rank: u64, center: f64, blocks: u64) -> u64 {
    let start = ((center * blocks as f64) as u64).min(blocks - 1);
    (rank + start) % blocks
}

/// A share of the region as fio's `gauss_next` draws it (before its hash
/// scatters it): the mean of [`BELL_DRAWS`] uniform draws, plus a jitter
/// `width` wide around zero, halved while it would leave the region.
fn fio_bell(rng: &mut SmallRng, width: f64) -> f64 {
    let sum: f64 = (0..BELL_DRAWS).map(|_| rng.random_range(0.0..1.0f64)).sum();
    let bell = sum / f64::from(BELL_DRAWS);
    if width == 0.0 {
        return bell;
    }
    let mut jitter = (rng.random_range(0.0..1.0f64) - 0.5) * width;
    // fio adds the jitter to an unsigned block number: below zero it wraps
    // past the end, and is halved as one past the end is.
    while !(0.0..1.0).contains(&(bell + jitter)) {
        jitter /= 2.0;
    }
    bell + jitter
}

/// A zipf rank in `0..n` (rank 0 hottest), weight (k + 1)^-θ, by
/// rejection-inversion (Hörmann and Derflinger, 1996): constant time and
/// memory for any `n`.
fn zipf_rank(rng: &mut SmallRng, n: u64, theta: f64) -> u64 {
    let h = |x: f64| ((1.0 - theta) * x.ln()).exp_m1() / (1.0 - theta);
    let h_inv = |y: f64| (((1.0 - theta) * y).ln_1p() / (1.0 - theta)).exp();
    let h_x1 = h(1.5) - 1.0;
    let h_n = h(n as f64 + 0.5);
    let s = 2.0 - h_inv(h(2.5) - 2f64.powf(-theta));
    loop {
        let u = h_n + rng.random_range(0.0..1.0f64) * (h_x1 - h_n);
        let x = h_inv(u);
        let k = x.round().clamp(1.0, n as f64);
        if k - x <= s || u >= h(k + 0.5) - k.powf(-theta) {
            return k as u64 - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn shares(d: &Distribution, blocks: u64, draws: usize) -> Vec<u64> {
        let mut rng = SmallRng::seed_from_u64(5);
        let mut counts = vec![0u64; blocks as usize];
        for _ in 0..draws {
            counts[d.draw(&mut rng, blocks) as usize] += 1;
        }
        counts
    }

    /// The hottest 1% of 10,000 blocks under zipf θ = 1.2 takes
    /// H(100, 1.2) / H(10000, 1.2) of the accesses.
    #[test]
    fn zipf_concentrates_as_the_law_says() {
        let (blocks, draws) = (10_000u64, 400_000);
        let d = Distribution::parse("zipf:1.2").unwrap();
        let counts = shares(&d, blocks, draws);
        let harmonic = |m: u64| (1..=m).map(|k| (k as f64).powf(-1.2)).sum::<f64>();
        for hot in [1, 10, 100, 1000] {
            let expected = harmonic(hot) / harmonic(blocks);
            let measured = counts[..hot as usize].iter().sum::<u64>() as f64 / draws as f64;
            assert!(
                (measured - expected).abs() < 0.01,
                "hottest {hot}: measured {measured:.4}, closed form {expected:.4}"
            );
        }
    }

    #[test]
    fn pareto_follows_its_rule_and_zones_their_split() {
        let counts = shares(&Distribution::parse("pareto:0.2").unwrap(), 1000, 100_000);
        let hot = counts[..200].iter().sum::<u64>() as f64 / 100_000.0;
        assert!((hot - 0.8).abs() < 0.01, "{hot}");
        let counts = shares(
            &Distribution::parse("zoned:60/10:40/90").unwrap(),
            1000,
            100_000,
        );
        let first = counts[..100].iter().sum::<u64>() as f64 / 100_000.0;
        assert!((first - 0.6).abs() < 0.01, "{first}");
        // A blank range is the rest of the region, as fio reads it.
        assert_eq!(
            Distribution::parse("zoned:50/5:30/15:20/"),
            Distribution::parse("zoned:50/5:30/15:20/80")
        );
        // fio 3.33 refuses a blank access share ("split conversion failed").
        assert_eq!(Distribution::parse("zoned:50/10:/45:/45"), None);
        // fio 3.33's normal: a bell of deviation 1/12 of the region, 68% of
        // draws within one deviation; `:10` widens it by a jitter 10% wide
        // (deviation sqrt(1/144 + 0.1^2/12) = 0.088 of the region).
        let within = |spec: &str, deviation: f64| {
            let counts = shares(&Distribution::parse(spec).unwrap(), 1000, 100_000);
            let half = (deviation * 1000.0) as usize;
            counts[500 - half..500 + half].iter().sum::<u64>() as f64 / 100_000.0
        };
        let bell = within("normal", 1.0 / 12.0);
        assert!((bell - 0.6827).abs() < 0.01, "within one deviation: {bell}");
        let wider = within("normal:10", 0.0882);
        assert!(
            (wider - 0.6827).abs() < 0.01,
            "within one deviation: {wider}"
        );
        let counts = shares(&Distribution::parse("zipf:1.2:0.5").unwrap(), 1000, 10_000);
        assert!(
            counts[500] > counts[0] * 10,
            "the hot spot moves to the center"
        );
    }

    #[test]
    fn bad_values_are_refused() {
        for bad in [
            "zipf:1",
            "zipf:x",
            "pareto:1.5",
            "gauss:10",
            "normal:-1",
            "normal:100",
            "zoned:50/50",
            "zoned:50/100:50/",
            "zoned:100/50:/50",
            "zoned:60/50:50/",
            "random:3",
            "hot",
        ] {
            assert_eq!(Distribution::parse(bad), None, "{bad}");
        }
        // fio's normal without a deviation is its bell, not uniform.
        assert_eq!(
            Distribution::parse("normal"),
            Distribution::parse("normal:0:0.5")
        );
        assert_eq!(
            Distribution::parse("zipf"),
            Some(Distribution::Zipf {
                theta: 1.1,
                center: 0.0
            })
        );
    }
}
