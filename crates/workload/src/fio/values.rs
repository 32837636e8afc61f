//! Values as fio writes them: booleans, sizes (fio's grammar, the one of
//! [`iosteer_sched::units`]), sizes that may be negative or a percentage of
//! the drive, percentages, times and `filename` lists.

use super::*;

/// One option of a job section as the parsers read it.
#[derive(Clone, Copy)]
pub(super) struct Setting<'a> {
    /// The option's canonical name (fio's aliases merged: [`canonical`]).
    pub(super) key: &'a str,
    /// The option as written.
    pub(super) given: &'a str,
    pub(super) value: &'a str,
    pub(super) line: usize,
    /// How the option reads size prefixes (fio's `kb_base` of the section
    /// it stands in, wherever it stands there: [`super::kb_bases`]).
    pub(super) kb_base: KbBase,
}

impl Setting<'_> {
    /// The message of a value the option does not take (with why a number
    /// with a decimal point is not one, for an option fio reads whole).
    pub(super) fn bad(&self, expected: &str) -> String {
        let fraction = if fractional(self.value) && !TAKES_FRACTIONS.contains(&self.key) {
            FRACTION_HINT
        } else if spaced(self.value) {
            SPACE_HINT
        } else if foreign_time_unit(self.value) {
            TIME_UNIT_HINT
        } else {
            ""
        };
        format!(
            "option `{}={}`: expected {expected}{fraction}",
            self.given, self.value
        )
    }
}

/// Options whose values may hold numbers with a decimal point in fio
/// (floats, or not read by fio's integer grammar).
const TAKES_FRACTIONS: &[&str] = &[
    "random_distribution",
    "steadystate",
    "rate_iops",
    "rate_iops_min",
    "latency_percentile",
    "bssplit",
    "cmdprio_bssplit",
];

/// Why a size or time with a decimal point is refused.
const FRACTION_HINT: &str = " (a whole number: fio reads a number with a decimal point as the \
    whole part in the option's default unit, dropping the rest, so `size=1.5m` is 1 byte and \
    `runtime=1.5s` one second to fio 3.33; write it in a smaller unit, such as 1536k or 1500ms)";

/// Why a size or time with a space before its unit is refused.
const SPACE_HINT: &str = " (no space between a number and its unit: fio 3.33 reads `bs=4 k` \
    as 4 bytes and `size=1 m` as 1 byte, dropping the unit)";

/// Why a time in a unit fio does not know is refused.
const TIME_UNIT_HINT: &str = " (fio 3.33 knows the time units us, usec, ms, msec, s, m, h and d, \
    and reads a number with any other, such as `sec`, `min` or `ns`, as microseconds: \
    `runtime=1sec` is 1 us to it and `runtime=1000000ns` one second; write s, m, ms or us)";

/// Time units iosteer's own grammar reads that fio 3.33 does not: it takes
/// the number before them as microseconds.
const FOREIGN_TIME_UNITS: &[&str] = &["ns", "nsec", "sec", "min"];

/// Whether `value` is a number in a time unit fio 3.33 does not know.
fn foreign_time_unit(value: &str) -> bool {
    let value = value.trim();
    let digits = value.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = value[digits.len()..].to_ascii_lowercase();
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && FOREIGN_TIME_UNITS.contains(&unit.as_str())
}

/// Whether a number in `value` is followed by spaces and then more (`4 k`):
/// fio reads the number alone.
pub(super) fn spaced(value: &str) -> bool {
    let value = value.trim();
    value.char_indices().any(|(i, c)| {
        c.is_ascii_digit()
            && value[i + 1..].starts_with(char::is_whitespace)
            && value[i + 1..]
                .trim_start()
                .starts_with(|c: char| c.is_alphabetic() || c == '%')
    })
}

/// Whether `value` holds a number with a decimal point (`1.5k`, `12.5%`).
pub(super) fn fractional(value: &str) -> bool {
    let bytes = value.as_bytes();
    bytes
        .windows(3)
        .any(|w| w[0].is_ascii_digit() && w[1] == b'.' && w[2].is_ascii_digit())
        || bytes
            .windows(2)
            .any(|w| w[0] == b'.' && w[1].is_ascii_digit())
}

/// A flag as fio writes it: alone, or `=1`/`=0` (and words).
pub(super) fn boolean(value: &str) -> Option<bool> {
    match value {
        "" | "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// One of an option's two keywords: `false` for the first, `true` for the
/// second (`rate_process=linear|poisson`); the error lists both.
pub(super) fn either(value: &str, (off, on): (&str, &str)) -> Result<bool, String> {
    match value {
        v if v == off => Ok(false),
        v if v == on => Ok(true),
        _ => Err(format!("{off} or {on}")),
    }
}

/// A size above zero (`4k`, `1m`).
pub(super) fn positive_size(value: &str, base: KbBase) -> Option<u64> {
    size_in(value, base).filter(|b| *b > 0)
}

/// Values for reads, writes and trims as fio writes them (`bs=8k,32k`,
/// `rate=,10m`): one value for all three, or a comma list in that order in
/// which a blank leaves the direction as it was (`None`, see
/// [`set_directions`]) and the last value stands for the directions after
/// it unless the list ends in a comma (`8k,` is 8k for reads and leaves
/// writes and trims). `None`
/// when a value does not parse or there are more than three.
pub(super) fn per_direction<T: Clone>(
    value: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Option<[Option<T>; 3]> {
    let tokens: Vec<&str> = value.split(',').map(str::trim).collect();
    if tokens.len() > 3 || tokens.iter().all(|t| t.is_empty()) {
        return None;
    }
    let values: Vec<Option<T>> = tokens
        .iter()
        .map(|t| {
            if t.is_empty() {
                Some(None)
            } else {
                parse(t).map(Some)
            }
        })
        .collect::<Option<_>>()?;
    let last = values.last()?.clone();
    Some(std::array::from_fn(|i| {
        values.get(i).cloned().unwrap_or_else(|| last.clone())
    }))
}

/// Sets the directions a [`per_direction`] list gives; a blank one keeps
/// the value in force (from `[global]`, an earlier line, or the default),
/// as fio leaves it (`[global] rate_iops=100,50` then `rate_iops=,20` reads
/// at 100 a second in fio 3.33).
pub(super) fn set_directions<T>(current: &mut [T; 3], given: [Option<T>; 3]) {
    for (slot, value) in current.iter_mut().zip(given) {
        if let Some(value) = value {
            *slot = value;
        }
    }
}

/// A whole number above zero.
pub(super) fn positive_count<T: std::str::FromStr + PartialOrd + From<u8>>(
    value: &str,
) -> Option<T> {
    value.parse().ok().filter(|n: &T| *n > T::from(0))
}

/// A size that may be negative (`-8k`).
pub(super) fn signed_size(value: &str, base: KbBase) -> Option<i64> {
    let (negative, digits) = match value.trim().strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, value.trim()),
    };
    let magnitude = i64::try_from(size_in(digits, base)?).ok()?;
    Some(if negative { -magnitude } else { magnitude })
}

/// fio's `irange`, two values split by `-` or `:` (`1-2`, `64k:1m`), as
/// written; `None` for one value.
pub(super) fn range(value: &str) -> Option<(&str, &str)> {
    let (lo, hi) = value.split_once(['-', ':'])?;
    let (lo, hi) = (lo.trim(), hi.trim());
    (!lo.is_empty() && !hi.is_empty()).then_some((lo, hi))
}

pub(super) fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

pub(super) fn percent(value: &str) -> Option<u32> {
    value
        .trim_end_matches('%')
        .parse()
        .ok()
        .filter(|p| *p <= 100)
}

/// A size in fio's grammar ([`iosteer_sched::units::parse_size`] with fio's
/// default `kb_base=1024`), or a number of bytes in hexadecimal after `0x`
/// (fio's "integer prefix"; without a suffix, as `0x1b` would be ambiguous).
/// A decimal point is taken (`1.5g`, for command lines); a job file's
/// sizes are read by [`size_in`], which refuses one as fio misreads it.
pub fn size_value(value: &str) -> Option<u64> {
    any_size(value, KbBase::Binary)
}

/// A size of a job file, in fio's grammar with the prefixes read in `base`
/// (fio's `kb_base`); a number with a decimal point is refused: fio 3.33
/// reads `1.5m` as 1 byte (`fractional`).
pub fn size_in(value: &str, base: KbBase) -> Option<u64> {
    if fractional(value) || spaced(value) {
        return None;
    }
    any_size(value, base)
}

fn any_size(value: &str, base: KbBase) -> Option<u64> {
    let value = value.trim();
    if let Some(hex) = value
        .strip_prefix("0x")
        .or_else(|| value.strip_prefix("0X"))
    {
        return u64::from_str_radix(hex, 16)
            .ok()
            .filter(|_| !hex.starts_with('+'));
    }
    units::parse_size(value, base).ok().map(|b| b.0)
}

/// A size, or a percentage of the drive rounded down to 4 KiB.
pub(super) fn size_or_percent(value: &str, capacity: u64, base: KbBase) -> Option<u64> {
    size_or_exact_percent(value, capacity, base).map(|(bytes, percent)| {
        if percent {
            bytes / 4096 * 4096
        } else {
            bytes
        }
    })
}

/// A size (`false`), or a percentage of the drive, unrounded (`true`).
pub(super) fn size_or_exact_percent(
    value: &str,
    capacity: u64,
    base: KbBase,
) -> Option<(u64, bool)> {
    match value.strip_suffix('%') {
        // fio reads `12.5%` as 12 bytes (`fractional`).
        Some(p) if fractional(p) || spaced(value) => None,
        Some(p) => {
            let p: f64 = p.parse().ok()?;
            (0.0..=100.0)
                .contains(&p)
                .then(|| ((capacity as f64 * p / 100.0) as u64, true))
        }
        None => size_in(value, base).map(|bytes| (bytes, false)),
    }
}

/// A time in fio's grammar ([`iosteer_sched::units::parse_duration`]); a
/// bare number is in units of `default_ns`. A number with a decimal point
/// is refused: fio 3.33 reads `runtime=1.5s` as 1 s (`fractional`).
pub fn time_value(value: &str, default_ns: u64) -> Option<Nanos> {
    if fractional(value) || spaced(value) || foreign_time_unit(value) {
        return None;
    }
    units::parse_duration(value, Some(Nanos(default_ns))).ok()
}

/// fio's `filename` list: names separated by `:`, a `\:` being a colon
/// inside a name (`/dev/bsg/0\:0\:0\:0` is one device).
pub(super) fn file_names(value: &str) -> Vec<String> {
    let mut names = vec![String::new()];
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ':' => names.push(String::new()),
            c => {
                let c = if c == '\\' && chars.peek() == Some(&':') {
                    chars.next().unwrap_or(c)
                } else {
                    c
                };
                if let Some(n) = names.last_mut() {
                    n.push(c);
                }
            }
        }
    }
    names.retain(|n| !n.is_empty());
    names
}
