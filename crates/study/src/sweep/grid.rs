//! The grid grammar of `--vary`: `name:key=a..b/step,key=x,y,z`, each key's
//! values listed after it, expanded into one spec per point.

use super::*;

/// Expands a values string: `a..b/s` or one literal.
fn expand_value(key: &str, value: &str) -> Result<Vec<String>, SweepError> {
    let Some((range, step)) = value.split_once("..") else {
        return Ok(vec![value.to_string()]);
    };
    let bad = || SweepError::BadRange {
        key: key.to_string(),
        value: value.to_string(),
    };
    let (end, step) = step.split_once('/').ok_or_else(bad)?;
    let start: u64 = range.trim().parse().map_err(|_| bad())?;
    let end: u64 = end.trim().parse().map_err(|_| bad())?;
    let step: u64 = step.trim().parse().map_err(|_| bad())?;
    if end < start {
        return Err(SweepError::ReversedRange {
            key: key.to_string(),
            value: value.to_string(),
            start,
            end,
        });
    }
    if step == 0 {
        return Err(SweepError::ZeroStep {
            key: key.to_string(),
            value: value.to_string(),
        });
    }
    // The steps past the first, compared before adding it: 0..u64::MAX/1
    // has 2^64 values, one more than a u64 counts.
    if (end - start) / step >= MAX_POINTS as u64 {
        return Err(SweepError::TooManyValues {
            key: key.to_string(),
            value: value.to_string(),
        });
    }
    let count = (end - start) / step + 1;
    Ok((0..count).map(|i| (start + i * step).to_string()).collect())
}

/// Expands one grid into scheduler specs, first key slowest. Time and
/// memory are linear in the specs returned: each is built once from its
/// index, never by copying the specs of the keys before it.
pub fn expand_grid(grid: &str) -> Result<Vec<String>, SweepError> {
    if grid.len() > MAX_GRID_BYTES {
        return Err(SweepError::GridTooLong { bytes: grid.len() });
    }
    let (name, settings) = grid.split_once(':').unwrap_or((grid, ""));
    let name = name.trim();
    if name.is_empty() {
        return Err(SweepError::NoPolicy { grid: grid.into() });
    }
    let keys = grid_keys(grid, settings)?;
    let points = keys
        .iter()
        .try_fold(1usize, |points, (_, values)| {
            points
                .checked_mul(values.len())
                .filter(|&p| p <= MAX_POINTS)
        })
        .ok_or_else(|| SweepError::GridTooLarge { grid: grid.into() })?;
    Ok((0..points)
        .map(|index| spec_at(name, &keys, index))
        .collect())
}

/// A grid's keys in order, each with its values expanded; a key given
/// twice is refused (the spec would carry it twice).
fn grid_keys(grid: &str, settings: &str) -> Result<Vec<(String, Vec<String>)>, SweepError> {
    let mut keys: Vec<(String, Vec<String>)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for item in settings.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.split_once('=').filter(|(key, _)| !is_objective(key)) {
            Some((key, value)) => {
                let key = key.trim().to_string();
                if !seen.insert(key.clone()) {
                    return Err(SweepError::RepeatedKey {
                        grid: grid.into(),
                        key,
                    });
                }
                let values = expand_value(&key, value.trim())?;
                keys.push((key, values));
            }
            None => {
                let (key, values) = keys.last_mut().ok_or_else(|| SweepError::ValueBeforeKey {
                    grid: grid.into(),
                    item: item.into(),
                })?;
                values.extend(expand_value(key, item)?);
                if values.len() > MAX_POINTS {
                    return Err(SweepError::TooManyValues {
                        key: key.clone(),
                        value: item.into(),
                    });
                }
            }
        }
    }
    Ok(keys)
}

/// The spec of grid point `index`: its value of each key, the last key
/// varying fastest.
fn spec_at(name: &str, keys: &[(String, Vec<String>)], mut index: usize) -> String {
    let mut chosen = vec![""; keys.len()];
    for (slot, (_, values)) in chosen.iter_mut().zip(keys).rev() {
        *slot = &values[index % values.len()];
        index /= values.len();
    }
    let settings: Vec<String> = keys
        .iter()
        .zip(chosen)
        .map(|((key, _), value)| format!("{key}={value}"))
        .collect();
    if settings.is_empty() {
        name.to_string()
    } else {
        format!("{name}:{}", settings.join(","))
    }
}

/// Whether `text`, before an item's `=`, is an objective's metric and `<`
/// (`p99<=2x`): a value of the key before it, not a key
/// (`objective=p99<=1.5x,p99<=2x` was refused as the key `p99<`). Any other
/// text is a key, checked as one (a typo is an unknown key).
fn is_objective(text: &str) -> bool {
    text.trim_end().ends_with(['<', '>'])
}
