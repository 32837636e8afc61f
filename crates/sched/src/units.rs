//! Units in types, so that a number never needs a comment to say what it counts.
//!
//! FreeBSD's scheduler mixes 1024ths, 65536ths and kB/s in plain `int`s and its
//! comments disagree with its code about which is which. Here a time is a
//! [`Nanos`] and a size is a [`Bytes`]; rates keep their unit in their name.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

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

impl Add for Nanos {
    type Output = Nanos;
    fn add(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for Nanos {
    fn add_assign(&mut self, rhs: Nanos) {
        *self = *self + rhs;
    }
}

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

impl Add for Bytes {
    type Output = Bytes;
    fn add(self, rhs: Bytes) -> Bytes {
        Bytes(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for Bytes {
    fn add_assign(&mut self, rhs: Bytes) {
        *self = *self + rhs;
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}B", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
