//! Preconditioning: the state a fresh drive is put in before it is measured.
//!
//! A new drive has every block free and never collects garbage, so it says
//! nothing about the reads that wait behind GC. Preconditioning fills it,
//! fragments it with random overwrites, and lets idle GC refill the
//! free-block pool, all in the map and untimed (seconds of wall time instead
//! of hours of drive time); counters then start afresh and only wear is kept.
//!
//! The starting states ([`StartState`], written as on the command line):
//! - `empty`: nothing mapped; writes cost 1.0 until the drive fills;
//! - `fill[=PCT]`: PCT % of the logical space written in order (default 100,
//!   DiskSim's start and MQSim's "initial occupancy");
//! - `aged[=N]`: full, then N times the capacity in random single-page
//!   overwrites (default 2: the built-in scenarios' drive);
//! - `steady`: full, then random overwrites one capacity at a time until
//!   write amplification settles ([`STEADY_TOLERANCE`], at most
//!   [`STEADY_MAX_CAPACITY_WRITES`]).

use std::fmt;
use std::str::FromStr;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::{gc, Device, DeviceStats};
use crate::ftl::{FtlError, HOST_STREAM};

/// Random overwrites of `aged` without `=N`, in capacities.
pub const AGED_OVERWRITES: f64 = 2.0;
/// `steady` has settled when the write amplification of the last
/// capacity-write is within this fraction of the one before.
pub const STEADY_TOLERANCE: f64 = 0.01;
/// `steady` stops after this many capacity-writes, settled or not: write
/// amplification under uniform random overwrites settles within a few
/// capacities, and a drive that has not by then is reported as such.
pub const STEADY_MAX_CAPACITY_WRITES: u32 = 16;

/// The accepted forms, for errors.
pub const START_STATE_FORMS: &str = "empty, fill[=PCT] (0..100), aged[=N] (N >= 0), steady";

/// The state a fresh drive is put in before a run.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum StartState {
    /// Nothing written.
    Empty,
    /// `percent` of the logical space written in order.
    Fill { percent: f64 },
    /// Full, then `overwrites` capacities of random single-page overwrites.
    Aged { overwrites: f64 },
    /// Full, then random overwrites until write amplification settles.
    Steady,
}

/// A start state that does not parse.
#[derive(Debug, Error, PartialEq)]
#[error("`{value}`: expected one of {}", START_STATE_FORMS)]
pub struct StartStateError {
    pub value: String,
}

impl Default for StartState {
    fn default() -> Self {
        StartState::Aged {
            overwrites: AGED_OVERWRITES,
        }
    }
}

impl FromStr for StartState {
    type Err = StartStateError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || StartStateError {
            value: text.to_string(),
        };
        let (name, value) = match text.trim().split_once('=') {
            Some((name, value)) => (name.trim(), Some(value.trim())),
            None => (text.trim(), None),
        };
        let number = |default: f64| -> Result<f64, StartStateError> {
            value.map_or(Ok(default), |v| {
                v.trim_end_matches('%').parse::<f64>().map_err(|_| bad())
            })
        };
        let state = match name {
            "empty" if value.is_none() => StartState::Empty,
            "steady" if value.is_none() => StartState::Steady,
            "fill" => StartState::Fill {
                percent: number(100.0)?,
            },
            "aged" => StartState::Aged {
                overwrites: number(AGED_OVERWRITES)?,
            },
            _ => return Err(bad()),
        };
        match state {
            StartState::Fill { percent } if !(0.0..=100.0).contains(&percent) => Err(bad()),
            StartState::Aged { overwrites } if !(overwrites.is_finite() && overwrites >= 0.0) => {
                Err(bad())
            }
            _ => Ok(state),
        }
    }
}

impl TryFrom<String> for StartState {
    type Error = StartStateError;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        text.parse()
    }
}

impl From<StartState> for String {
    fn from(state: StartState) -> String {
        state.to_string()
    }
}

impl fmt::Display for StartState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartState::Empty => write!(f, "empty"),
            StartState::Fill { percent } => write!(f, "fill={percent}"),
            StartState::Aged { overwrites } => write!(f, "aged={overwrites}"),
            StartState::Steady => write!(f, "steady"),
        }
    }
}

impl StartState {
    /// Fraction of the logical space written in order first.
    fn fill_fraction(self) -> f64 {
        match self {
            StartState::Empty => 0.0,
            StartState::Fill { percent } => percent / 100.0,
            StartState::Aged { .. } | StartState::Steady => 1.0,
        }
    }
}

/// How to precondition a fresh drive (see [`Device::precondition`]).
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Precondition {
    pub state: StartState,
    /// Seed of the random overwrites.
    pub seed: u64,
}

/// What preconditioning did.
#[derive(Copy, Clone, Debug, PartialEq, Serialize)]
pub struct Aging {
    pub state: StartState,
    /// Random overwrites written, in capacities.
    pub capacity_writes: f64,
    /// `steady`: the write amplification of the last capacity-write, and
    /// whether it settled before the cap.
    pub steady_waf: Option<f64>,
    pub settled: Option<bool>,
}

impl fmt::Display for Aging {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.state)?;
        if let (Some(waf), Some(settled)) = (self.steady_waf, self.settled) {
            let how = if settled {
                "settled"
            } else {
                "not settled, capped"
            };
            write!(
                f,
                " (write amplification {waf:.3} after {} capacity-writes, {how})",
                self.capacity_writes
            )?;
        }
        Ok(())
    }
}

impl Device {
    /// Puts the drive in `plan`'s state without timing it: writes part of the
    /// logical space in order, overwrites random pages of it, then lets idle
    /// GC refill every die to the high watermark. Counters start afresh;
    /// wear is kept.
    pub fn precondition(&mut self, plan: Precondition) -> Result<Aging, FtlError> {
        let filled = (f64::from(self.ftl.logical_units())
            * plan.state.fill_fraction().clamp(0.0, 1.0)) as u64;
        self.fill(filled)?;
        let mut rng = SmallRng::seed_from_u64(plan.seed);
        let aging = match plan.state {
            StartState::Aged { overwrites } => {
                self.overwrite(filled, (filled as f64 * overwrites) as u64, &mut rng)?;
                Aging::plain(plan.state, overwrites)
            }
            StartState::Steady => self.overwrite_until_steady(filled, &mut rng)?,
            StartState::Empty | StartState::Fill { .. } => Aging::plain(plan.state, 0.0),
        };
        self.refill_free_blocks()?;
        self.ftl.reset_counters();
        self.ftl.record_moves(gc::merges(&self.config));
        self.pending_moves.clear();
        self.stats = DeviceStats::fresh(self.dies.len());
        self.dies.iter_mut().for_each(|die| die.forget_owed_gc());
        self.aging = Some(aging);
        Ok(aging)
    }

    /// What the last [`Device::precondition`] did (`None`: a fresh drive).
    pub fn aging(&self) -> Option<Aging> {
        self.aging
    }

    /// Writes logical pages `0..filled` in order, spread over the dies.
    fn fill(&mut self, filled: u64) -> Result<(), FtlError> {
        let dies = u64::from(self.ftl.dies());
        for lpn in 0..filled {
            self.ftl.write(lpn, (lpn % dies) as u32, HOST_STREAM)?;
        }
        Ok(())
    }

    /// Writes `count` random pages of `0..filled`, spread over the dies.
    fn overwrite(&mut self, filled: u64, count: u64, rng: &mut SmallRng) -> Result<(), FtlError> {
        if filled == 0 {
            return Ok(());
        }
        let dies = u64::from(self.ftl.dies());
        // The pages are drawn `AHEAD` writes early (the same draws in the
        // same order, never past `count`), so the cache can be asked for
        // their map entries early and then for their old copies.
        const AHEAD: u64 = 16;
        let mut ring = [0u32; AHEAD as usize];
        let slot = |i: u64| (i % AHEAD) as usize;
        let mut draw = |i: u64, ftl: &crate::ftl::Ftl, ring: &mut [u32]| {
            let lpn = rng.random_range(0..filled) as u32;
            ftl.prefetch_entry(lpn);
            ring[slot(i)] = lpn;
        };
        for i in 0..AHEAD.min(count) {
            draw(i, &self.ftl, &mut ring);
        }
        for i in 0..count {
            if i + AHEAD / 2 < count {
                self.ftl.prefetch_old_copy(ring[slot(i + AHEAD / 2)]);
            }
            let lpn = ring[slot(i)];
            if i + AHEAD < count {
                draw(i + AHEAD, &self.ftl, &mut ring);
            }
            self.ftl
                .write(u64::from(lpn), (i % dies) as u32, HOST_STREAM)?;
        }
        Ok(())
    }

    /// Random overwrites one capacity at a time until the write amplification
    /// of a capacity-write is within [`STEADY_TOLERANCE`] of the one before,
    /// or [`STEADY_MAX_CAPACITY_WRITES`] were written.
    fn overwrite_until_steady(
        &mut self,
        filled: u64,
        rng: &mut SmallRng,
    ) -> Result<Aging, FtlError> {
        let mut previous: Option<f64> = None;
        for round in 1..=STEADY_MAX_CAPACITY_WRITES {
            self.ftl.reset_counters();
            self.overwrite(filled, filled, rng)?;
            let waf = self.ftl.counters.write_amplification();
            let settled = previous.is_some_and(|p| (waf - p).abs() <= STEADY_TOLERANCE * p);
            if settled || round == STEADY_MAX_CAPACITY_WRITES {
                return Ok(Aging {
                    state: StartState::Steady,
                    capacity_writes: f64::from(round),
                    steady_waf: Some(waf),
                    settled: Some(settled),
                });
            }
            previous = Some(waf);
        }
        unreachable!("the last round returns")
    }

    /// Idle GC in the map: cleans victims on each die up to the high
    /// watermark, stopping where a victim frees nothing.
    fn refill_free_blocks(&mut self) -> Result<(), FtlError> {
        let ppb = self.ftl.pages_per_block();
        for die in 0..self.ftl.dies() {
            while self.ftl.free_blocks(die) < self.config.gc.high_watermark {
                match self.ftl.collect(die)? {
                    Some(work) if work.pages_moved < work.blocks_erased * ppb => {}
                    _ => break,
                }
            }
        }
        Ok(())
    }
}

impl Aging {
    fn plain(state: StartState, capacity_writes: f64) -> Aging {
        Aging {
            state,
            capacity_writes,
            steady_waf: None,
            settled: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_states_parse_and_print_back() {
        for (text, state) in [
            ("empty", StartState::Empty),
            ("fill", StartState::Fill { percent: 100.0 }),
            ("fill=50", StartState::Fill { percent: 50.0 }),
            ("aged", StartState::Aged { overwrites: 2.0 }),
            ("aged=0.5", StartState::Aged { overwrites: 0.5 }),
            ("steady", StartState::Steady),
        ] {
            let parsed: StartState = text.parse().unwrap();
            assert_eq!(parsed, state, "{text}");
            assert_eq!(parsed.to_string().parse::<StartState>().unwrap(), state);
        }
        for bad in [
            "full", "fill=150", "fill=x", "aged=-1", "empty=3", "steady=2", "",
        ] {
            let e = bad.parse::<StartState>().unwrap_err();
            assert!(e.to_string().contains("fill[=PCT]"), "{e}");
            assert_eq!(e.value, bad);
        }
    }

    fn small_drive() -> Device {
        let mut c = crate::DeviceConfig::preset("consumer-sata").unwrap();
        c.geometry.blocks_per_plane = 64;
        c.gc.high_watermark = 8;
        c.over_provisioning = 0.2;
        Device::new(c).unwrap()
    }

    fn mapped_pages(d: &Device) -> u32 {
        let ftl = d.ftl();
        (0..ftl.logical_pages())
            .filter(|&lpn| ftl.lookup(lpn).is_some())
            .count() as u32
    }

    fn state(text: &str) -> Precondition {
        Precondition {
            state: text.parse().unwrap(),
            seed: 1,
        }
    }

    #[test]
    fn fill_50_maps_half_the_logical_space_and_empty_none() {
        let mut d = small_drive();
        let aging = d.precondition(state("fill=50")).unwrap();
        let pages = d.ftl().logical_pages();
        assert_eq!(mapped_pages(&d), pages / 2);
        assert_eq!(aging.capacity_writes, 0.0);
        assert_eq!(d.aging(), Some(aging));
        let mut d = small_drive();
        d.precondition(state("empty")).unwrap();
        assert_eq!(mapped_pages(&d), 0);
        let mut d = small_drive();
        d.precondition(state("fill")).unwrap();
        assert_eq!(mapped_pages(&d), pages);
    }

    #[test]
    fn steady_overwrites_until_write_amplification_settles_and_reports_it() {
        let mut d = small_drive();
        let aging = d.precondition(state("steady")).unwrap();
        let waf = aging.steady_waf.unwrap();
        assert!(waf > 1.0, "{waf}");
        assert!(aging.capacity_writes >= 2.0);
        assert!(aging.capacity_writes <= f64::from(STEADY_MAX_CAPACITY_WRITES));
        assert!(aging.to_string().starts_with("steady (write amplification"));
        assert_eq!(mapped_pages(&d), d.ftl().logical_pages());
    }
}
