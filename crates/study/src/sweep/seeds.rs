//! The seeds a sweep runs each setting on, and how a setting's figures
//! over them combine into one point.

use super::*;

/// Parses seeds: one seed, a range `a..b` (inclusive) or a list `a,b,c`.
pub fn parse_seeds(text: &str) -> Result<Vec<u64>, SweepError> {
    let bad = || SweepError::BadSeeds { text: text.into() };
    let seeds: Vec<u64> = if let Some((a, b)) = text.split_once("..") {
        let a: u64 = a.trim().parse().map_err(|_| bad())?;
        let b: u64 = b.trim().parse().map_err(|_| bad())?;
        if b < a {
            return Err(SweepError::ReversedSeeds {
                text: text.into(),
                start: a,
                end: b,
            });
        }
        (a..=b.min(a.saturating_add(MAX_SEEDS as u64))).collect()
    } else {
        let parsed: Result<Vec<u64>, _> = text.split(',').map(|s| s.trim().parse()).collect();
        parsed.map_err(|_| bad())?
    };
    if seeds.len() > MAX_SEEDS {
        return Err(SweepError::TooManySeeds { text: text.into() });
    }
    let mut unique = seeds.clone();
    unique.sort_unstable();
    unique.dedup();
    if unique.len() != seeds.len() {
        return Err(SweepError::RepeatedSeed { text: text.into() });
    }
    Ok(seeds)
}

/// One point per setting from the points of every seed (each seed's list
/// in the same grid order): see [`Point`] for how figures combine.
pub fn across_seeds(per_seed: &[Vec<Point>]) -> Vec<Point> {
    let Some(first) = per_seed.first() else {
        return Vec::new();
    };
    (0..first.len())
        .map(|i| {
            let runs: Vec<&Point> = per_seed.iter().map(|points| &points[i]).collect();
            let worst = runs
                .iter()
                .max_by(|a, b| (a.value_ms / a.bound_ms).total_cmp(&(b.value_ms / b.bound_ms)))
                .expect("one seed at least");
            let n = runs.len() as f64;
            let max = |f: fn(&Point) -> f64| runs.iter().map(|p| f(p)).fold(f64::MIN, f64::max);
            Point {
                spec: worst.spec.clone(),
                write_mbps: runs.iter().map(|p| p.write_mbps).sum::<f64>() / n,
                read_mbps: runs.iter().map(|p| p.read_mbps).sum::<f64>() / n,
                read_p99_ms: max(|p| p.read_p99_ms),
                read_p999_ms: max(|p| p.read_p999_ms),
                read_slo_violations: runs.iter().map(|p| p.read_slo_violations).sum(),
                write_p99_ms: max(|p| p.write_p99_ms),
                write_max_ms: max(|p| p.write_max_ms),
                baseline_ms: worst.baseline_ms,
                value_ms: worst.value_ms,
                bound_ms: worst.bound_ms,
                meets: runs.iter().all(|p| p.meets),
                meets_own: runs.iter().all(|p| p.meets_own),
                seeds: runs.len(),
                seeds_met: runs.iter().filter(|p| p.meets).count(),
                write_min_mbps: runs.iter().map(|p| p.write_mbps).fold(f64::MAX, f64::min),
                notes: every_note_once(&runs),
            }
        })
        .collect()
}

/// The notes of a setting's runs on every seed, each text once, in order.
fn every_note_once(runs: &[&Point]) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for note in runs.iter().flat_map(|p| &p.notes) {
        if !notes.contains(note) {
            notes.push(note.clone());
        }
    }
    notes
}
