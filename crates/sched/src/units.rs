//! Units in types, so that a number never needs a comment to say what it counts.
//!
//! FreeBSD's scheduler mixes 1024ths, 65536ths and kB/s in plain `int`s and its
//! comments disagree with its code about which is which. Here a time is a
//! [`Nanos`] and a size is a [`Bytes`]; rates keep their unit in their name.
//!
//! Durations and sizes written by people are read here, once, with fio's
//! grammar, for policy specs and for fio job files alike:
//! - [`parse_duration`]: a number (decimals allowed) and a unit, `ns`/`nsec`,
//!   `us`/`usec`, `ms`/`msec`, `s`/`sec`, `m`/`min` (minutes, as fio),
//!   `h` or `d`, in any case: `500ms`, `1.5ms`, `10s`, `1m`, `1h`, `1d`. A bare
//!   number is in the unit its setting states (fio's `runtime=10` is 10 s,
//!   mq-deadline's `read_expire=500` is 500 ms); a setting that states none
//!   refuses it.
//! - [`parse_size`]: a number and a prefix `k`, `m`, `g`, `t` or `p`, in any
//!   case, with an optional `b` (`4k`, `4KB`, `1m`, `1g`, `1t`) or `ib`
//!   (`4KiB`). As fio's default `kb_base=1024` has it, `k`/`kb` are powers of
//!   1024 and `kib` powers of 1000 (fio keeps old scripts working that way);
//!   with `kb_base=1000`, the other way round, as the standards say.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

use thiserror::Error;

/// `+` and `+=` for a unit over `u64`, saturating: a sum past `u64::MAX`
/// stays there instead of wrapping (or panicking in a debug build).
macro_rules! saturating_add {
    ($unit:ident) => {
        impl Add for $unit {
            type Output = $unit;
            fn add(self, rhs: $unit) -> $unit {
                $unit(self.0.saturating_add(rhs.0))
            }
        }

        impl AddAssign for $unit {
            fn add_assign(&mut self, rhs: $unit) {
                *self = *self + rhs;
            }
        }
    };
}

/// A point in time or a duration, in integer nanoseconds.
///
/// The scheduler never reads a clock: every `now` comes from the caller, whose
/// origin (simulation start, engine start) is the caller's business.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nanos(pub u64);

impl Nanos {
    pub const ZERO: Nanos = Nanos(0);
    pub const MAX: Nanos = Nanos(u64::MAX);

    pub const fn from_micros(us: u64) -> Nanos {
        Nanos(us * 1_000)
    }

    pub const fn from_millis(ms: u64) -> Nanos {
        Nanos(ms * 1_000_000)
    }

    pub const fn from_secs(s: u64) -> Nanos {
        Nanos(s * 1_000_000_000)
    }

    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    pub fn as_micros_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }

    /// `self - earlier`, or zero when `earlier` is later (clocks of callers may
    /// hand us equal or, through rounding, slightly earlier times).
    pub fn since(self, earlier: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(earlier.0))
    }
}

saturating_add!(Nanos);

impl Sub for Nanos {
    type Output = Nanos;
    fn sub(self, rhs: Nanos) -> Nanos {
        self.since(rhs)
    }
}

impl fmt::Display for Nanos {
    /// The most readable of s, ms, us and ns; this is also the syntax that
    /// configuration values accept.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        let (value, unit) = if ns >= 1_000_000_000 && ns % 1_000_000 == 0 {
            (ns as f64 / 1e9, "s")
        } else if ns >= 1_000_000 && ns % 1_000 == 0 {
            (ns as f64 / 1e6, "ms")
        } else if ns >= 1_000 {
            (ns as f64 / 1e3, "us")
        } else {
            return write!(f, "{ns}ns");
        };
        write!(f, "{value}{unit}")
    }
}

/// A size or an offset, in bytes.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

impl Bytes {
    pub const ZERO: Bytes = Bytes(0);

    pub const fn kib(k: u64) -> Bytes {
        Bytes(k * 1024)
    }

    pub const fn mib(m: u64) -> Bytes {
        Bytes(m * 1024 * 1024)
    }

    pub const fn get(self) -> u64 {
        self.0
    }
}

saturating_add!(Bytes);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}B", self.0)
    }
}

/// A duration or a size that could not be read.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnitError {
    #[error("`{text}` is not a number followed by a unit")]
    NotANumber { text: String },
    #[error("`{text}` has no unit, and this setting has no default one")]
    NoUnit { text: String },
    #[error("unknown unit `{unit}` in `{text}`")]
    UnknownUnit { text: String, unit: String },
    #[error("`{text}` is out of range")]
    OutOfRange { text: String },
}

/// Nanoseconds per duration unit, as fio spells them (lower case).
const DURATION_UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("nsec", 1),
    ("us", 1_000),
    ("usec", 1_000),
    ("ms", 1_000_000),
    ("msec", 1_000_000),
    ("s", 1_000_000_000),
    ("sec", 1_000_000_000),
    ("m", 60_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
    ("d", 86_400_000_000_000),
];

/// The duration units, for messages that list what is accepted.
pub const DURATION_UNIT_NAMES: &str = "ns, us, ms, s, m (minutes), h or d";

/// How fio reads the prefixes of sizes (its `kb_base` option).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum KbBase {
    /// fio's default (`kb_base=1024`): `4k` and `4KB` are 4096 bytes, `4KiB`
    /// is 4000.
    #[default]
    Binary,
    /// `kb_base=1000`: `4KiB` is 4096 bytes, `4k` and `4KB` are 4000.
    Decimal,
}

/// A number and the (lower-cased, trimmed) suffix after it.
fn split_number(text: &str) -> Result<(f64, Option<u64>, String), UnitError> {
    let trimmed = text.trim();
    let end = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, suffix) = trimmed.split_at(end);
    let not_a_number = || UnitError::NotANumber {
        text: text.to_string(),
    };
    let value: f64 = number.parse().map_err(|_| not_a_number())?;
    // Whole numbers are kept exact (f64 is exact only up to 2^53).
    let whole = number.parse::<u64>().ok();
    Ok((value, whole, suffix.trim().to_ascii_lowercase()))
}

/// `value` times `scale`, exact for whole numbers, or out of range.
fn scaled(text: &str, value: f64, whole: Option<u64>, scale: u64) -> Result<u64, UnitError> {
    let out_of_range = || UnitError::OutOfRange {
        text: text.to_string(),
    };
    if let Some(n) = whole {
        return n.checked_mul(scale).ok_or_else(out_of_range);
    }
    let product = value * scale as f64;
    if product.is_finite() && product >= 0.0 && product < u64::MAX as f64 {
        Ok(product.round() as u64)
    } else {
        Err(out_of_range())
    }
}

/// A duration in fio's grammar (see the module's top); a bare number is in
/// `bare_unit`, or refused when that is `None`.
pub fn parse_duration(text: &str, bare_unit: Option<Nanos>) -> Result<Nanos, UnitError> {
    let (value, whole, unit) = split_number(text)?;
    let scale = if unit.is_empty() {
        bare_unit
            .ok_or_else(|| UnitError::NoUnit {
                text: text.to_string(),
            })?
            .0
    } else {
        DURATION_UNITS
            .iter()
            .find(|(name, _)| *name == unit)
            .map(|(_, ns)| *ns)
            .ok_or_else(|| UnitError::UnknownUnit {
                text: text.to_string(),
                unit: unit.clone(),
            })?
    };
    scaled(text, value, whole, scale).map(Nanos)
}

/// A size in fio's grammar (see the module's top); a bare number is bytes.
pub fn parse_size(text: &str, kb_base: KbBase) -> Result<Bytes, UnitError> {
    let (value, whole, suffix) = split_number(text)?;
    // `Ki` (no `b`) reads as `k`, as fio reads it: only `ib` flips the base.
    let (prefix, standard) = match suffix.strip_suffix("ib") {
        Some(prefix) => (prefix, true),
        None => (
            suffix
                .strip_suffix('b')
                .or_else(|| suffix.strip_suffix('i').filter(|p| !p.is_empty()))
                .unwrap_or(&suffix),
            false,
        ),
    };
    let power = match prefix {
        "" if !standard => 0,
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        _ => {
            return Err(UnitError::UnknownUnit {
                text: text.to_string(),
                unit: suffix.clone(),
            })
        }
    };
    // fio's compatibility rule: the `ib` prefixes take the base the plain
    // ones do not.
    let binary = (kb_base == KbBase::Binary) != standard;
    let base: u64 = if binary { 1024 } else { 1000 };
    scaled(text, value, whole, base.pow(power)).map(Bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_fio_reads_them() {
        let s = Some(Nanos::from_secs(1));
        for (text, ns) in [
            ("10", 10_000_000_000),
            ("10s", 10_000_000_000),
            ("500ms", 500_000_000),
            ("1.5ms", 1_500_000),
            ("250us", 250_000),
            ("250usec", 250_000),
            ("100ns", 100),
            ("1m", 60_000_000_000),
            ("2min", 120_000_000_000),
            ("1h", 3_600_000_000_000),
            ("1d", 86_400_000_000_000),
            ("5MS", 5_000_000),
            (" 5 ms ", 5_000_000),
        ] {
            assert_eq!(parse_duration(text, s), Ok(Nanos(ns)), "{text}");
        }
        assert!(matches!(
            parse_duration("5", None),
            Err(UnitError::NoUnit { .. })
        ));
        assert!(matches!(
            parse_duration("5y", s),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_duration("ms", s),
            Err(UnitError::NotANumber { .. })
        ));
        for text in ["", "-1s", "1e400s", "18446744073709551615ms"] {
            assert!(parse_duration(text, s).is_err(), "{text}");
        }
    }

    #[test]
    fn sizes_read_as_fio_reads_them_with_its_kb_base() {
        for (text, binary, decimal) in [
            ("4096", 4096, 4096),
            ("4k", 4096, 4000),
            ("4KB", 4096, 4000),
            ("4KiB", 4000, 4096),
            ("1m", 1 << 20, 1_000_000),
            ("1MB", 1 << 20, 1_000_000),
            ("1g", 1 << 30, 1_000_000_000),
            ("1t", 1 << 40, 1_000_000_000_000),
            ("1.5k", 1536, 1500),
            ("1Ki", 1024, 1000),
        ] {
            assert_eq!(
                parse_size(text, KbBase::Binary),
                Ok(Bytes(binary)),
                "{text}"
            );
            assert_eq!(
                parse_size(text, KbBase::Decimal),
                Ok(Bytes(decimal)),
                "{text}"
            );
        }
        for text in ["", "k", "4x", "4ib", "4i", "-4k", "99999999999t"] {
            assert!(parse_size(text, KbBase::Binary).is_err(), "{text}");
        }
    }

    #[test]
    fn durations_print_in_their_most_readable_unit() {
        assert_eq!(Nanos::from_secs(5).to_string(), "5s");
        assert_eq!(Nanos::from_millis(15).to_string(), "15ms");
        assert_eq!(Nanos::from_micros(1500).to_string(), "1.5ms");
        assert_eq!(Nanos(20_500).to_string(), "20.5us");
        assert_eq!(Nanos(7).to_string(), "7ns");
    }

    #[test]
    fn time_never_runs_backwards_through_subtraction() {
        assert_eq!(Nanos(5) - Nanos(9), Nanos::ZERO);
        assert_eq!(Nanos(9).since(Nanos(5)), Nanos(4));
    }
}
