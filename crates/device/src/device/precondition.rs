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
//! - `aged-fast[=N]`: the state of `aged=N` reached without aging every die:
//!   [`FAST_AGING_SAMPLES`] dies are aged on their own and copied onto the
//!   others (see `ftl/replicate.rs` for why that is the same state in
//!   distribution, and what differs); `dies / 4` times less work;
//! - `steady`: full, then random overwrites one capacity at a time until
//!   write amplification settles ([`STEADY_TOLERANCE`], at most
//!   [`STEADY_MAX_CAPACITY_WRITES`]).

use std::fmt;
use std::str::FromStr;

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::{gc, Device, DeviceStats};
use crate::ftl::{Ftl, FtlError, HOST_STREAM};

/// Random overwrites of `aged` without `=N`, in capacities.
pub const AGED_OVERWRITES: f64 = 2.0;
/// Dies `aged-fast` ages on their own and copies onto the others. One would
/// do for the state's distribution, but identical dies run out of free
/// blocks and pick equal victims at the same moments, so their GC pauses
/// line up and reads wait behind all of them at once; a few distinct samples
/// break that lock-step.
pub const FAST_AGING_SAMPLES: u32 = 4;
/// `steady` has settled when the write amplification of the last
/// capacity-write is within this fraction of the one before.
pub const STEADY_TOLERANCE: f64 = 0.01;
/// `steady` stops after this many capacity-writes, settled or not: write
/// amplification under uniform random overwrites settles within a few
/// capacities, and a drive that has not by then is reported as such.
pub const STEADY_MAX_CAPACITY_WRITES: u32 = 16;

/// Most capacities of random overwrites `aged` and `aged-fast` take: the
/// state settles within a few (see `STEADY_MAX_CAPACITY_WRITES`), so more
/// only costs time (about a second a capacity on the presets; a typo such
/// as `aged=20000000` would age for months).
pub const MAX_AGED_OVERWRITES: f64 = 100.0;

/// The accepted forms, for errors.
pub const START_STATE_FORMS: &str =
    "empty, fill[=PCT] (0..100), aged[=N] (0..100), aged-fast[=N] (0..100), steady";

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
    /// The state of `Aged` in distribution, by aging one die and copying it.
    AgedFast { overwrites: f64 },
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
            "aged-fast" => StartState::AgedFast {
                overwrites: number(AGED_OVERWRITES)?,
            },
            _ => return Err(bad()),
        };
        match state {
            StartState::Fill { percent } if !(0.0..=100.0).contains(&percent) => Err(bad()),
            StartState::Aged { overwrites } | StartState::AgedFast { overwrites }
                if !(0.0..=MAX_AGED_OVERWRITES).contains(&overwrites) =>
            {
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
            StartState::AgedFast { overwrites } => write!(f, "aged-fast={overwrites}"),
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
            StartState::Aged { .. } | StartState::AgedFast { .. } | StartState::Steady => 1.0,
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
                " (write amplification {waf:.3} after {} capacity-writes, {how}; then idle GC \
                 refilled each die to its high watermark, so a run's first writes meet less GC)",
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
        self.precondition_until(plan, &mut || true)
    }

    /// [`Device::precondition`], asking `keep_going` every
    /// [`WRITES_BETWEEN_ASKS`] writes whether to go on (aging a large drive
    /// many times over takes minutes, and a user may change their mind).
    /// When it says no, aging ends with [`FtlError::Stopped`] and leaves the
    /// drive half aged: not a state to run on.
    pub fn precondition_until(
        &mut self,
        plan: Precondition,
        keep_going: KeepGoing,
    ) -> Result<Aging, FtlError> {
        let high_watermark = self.config.gc.high_watermark;
        // Aging's GC moves are owed to no die: recording them took 4 bytes each.
        self.ftl.record_moves(false);
        let aging = match plan.state {
            StartState::AgedFast { overwrites } => {
                self.age_sample_dies_and_copy(overwrites, plan.seed, keep_going)?;
                Aging::plain(plan.state, overwrites)
            }
            _ => {
                let filled = (f64::from(self.ftl.logical_units())
                    * plan.state.fill_fraction().clamp(0.0, 1.0))
                    as u64;
                age(
                    &mut self.ftl,
                    plan,
                    filled,
                    high_watermark,
                    &mut |_| {},
                    keep_going,
                )?
            }
        };
        self.ftl.reset_counters();
        self.ftl.record_moves(gc::merges(&self.config));
        self.pending_moves.clear();
        self.stats = DeviceStats::fresh(self.dies.len());
        self.dies.iter_mut().for_each(|die| die.forget_owed_gc());
        self.aging = Some(aging);
        self.update_idle_gc_start();
        Ok(aging)
    }

    /// What the last [`Device::precondition`] did (`None`: a fresh drive).
    pub fn aging(&self) -> Option<Aging> {
        self.aging
    }

    /// `aged-fast`: ages [`FAST_AGING_SAMPLES`] dies (fewer if the drive
    /// has fewer), each with its share of the logical space and its own
    /// seed, copies them onto every die ([`Ftl::replicate`]), then writes in
    /// order the few logical units the shares leave over and refills the
    /// free pools.
    fn age_sample_dies_and_copy(
        &mut self,
        overwrites: f64,
        seed: u64,
        keep_going: KeepGoing,
    ) -> Result<(), FtlError> {
        let dies = self.ftl.dies();
        // Whole pages a die, so the copies stripe pages as the fill does.
        let upp = self.ftl.units_per_page();
        let share = self.ftl.logical_units() / (dies * upp) * upp;
        let high_watermark = self.config.gc.high_watermark;
        let mut samples = Vec::new();
        let mut overwritten = Vec::new();
        for i in 0..FAST_AGING_SAMPLES.min(dies) {
            let mut sample = Ftl::sample_die(&self.config, share);
            let mut touched = vec![false; share as usize];
            let plan = Precondition {
                state: StartState::Aged { overwrites },
                seed: seed.wrapping_add(u64::from(i)),
            };
            age(
                &mut sample,
                plan,
                u64::from(share),
                high_watermark,
                &mut |lpn| touched[lpn as usize] = true,
                keep_going,
            )?;
            samples.push(sample);
            overwritten.push(touched);
        }
        self.ftl.replicate(&samples, &overwritten, seed);
        for lpn in u64::from(share * dies)..u64::from(self.ftl.logical_units()) {
            self.ftl
                .write(lpn, self.ftl.striped_die(lpn), HOST_STREAM)?;
        }
        spread_die_shares(&mut self.ftl, overwrites, seed)?;
        refill_free_blocks(&mut self.ftl, high_watermark)
    }
}

/// Asked now and then during aging: `false` stops it.
pub type KeepGoing<'a> = &'a mut dyn FnMut() -> bool;

/// How many writes aging makes between two questions to its `keep_going`:
/// a few milliseconds of work.
pub const WRITES_BETWEEN_ASKS: u64 = 1 << 16;

/// [`FtlError::Stopped`] after every [`WRITES_BETWEEN_ASKS`]-th write if
/// `keep_going` says so.
fn ask(write: u64, keep_going: KeepGoing) -> Result<(), FtlError> {
    if write % WRITES_BETWEEN_ASKS == 0 && !keep_going() {
        return Err(FtlError::Stopped);
    }
    Ok(())
}

/// `plan` on `ftl`, untimed: `filled` logical units written in order, the
/// random overwrites of `plan` (each overwritten unit shown to
/// `on_overwrite`), then idle GC up to `high_watermark` free blocks per die.
fn age(
    ftl: &mut Ftl,
    plan: Precondition,
    filled: u64,
    high_watermark: u32,
    on_overwrite: &mut dyn FnMut(u32),
    keep_going: KeepGoing,
) -> Result<Aging, FtlError> {
    fill(ftl, filled, keep_going)?;
    let mut rng = SmallRng::seed_from_u64(plan.seed);
    let aging = match plan.state {
        StartState::Aged { overwrites } | StartState::AgedFast { overwrites } => {
            let count = (filled as f64 * overwrites) as u64;
            overwrite(ftl, filled, count, &mut rng, on_overwrite, keep_going)?;
            Aging::plain(plan.state, overwrites)
        }
        StartState::Steady => overwrite_until_steady(ftl, filled, &mut rng, keep_going)?,
        StartState::Empty | StartState::Fill { .. } => Aging::plain(plan.state, 0.0),
    };
    refill_free_blocks(ftl, high_watermark)?;
    Ok(aging)
}

/// Writes logical pages `0..filled` in order, spread over the dies.
fn fill(ftl: &mut Ftl, filled: u64, keep_going: KeepGoing) -> Result<(), FtlError> {
    ftl.fill_striped(filled, WRITES_BETWEEN_ASKS, &mut |lpn| ask(lpn, keep_going))
}

/// Writes `count` random pages of `0..filled`, spread over the dies.
fn overwrite(
    ftl: &mut Ftl,
    filled: u64,
    count: u64,
    rng: &mut SmallRng,
    on_overwrite: &mut dyn FnMut(u32),
    keep_going: KeepGoing,
) -> Result<(), FtlError> {
    if filled == 0 {
        return Ok(());
    }
    let dies = u64::from(ftl.dies());
    // The pages are drawn `AHEAD` writes early (the same draws in the
    // same order, never past `count`), so the cache can be asked for
    // their map entries early and then for their old copies.
    const AHEAD: u64 = 16;
    let mut ring = [0u32; AHEAD as usize];
    let slot = |i: u64| (i % AHEAD) as usize;
    let mut draw = |i: u64, ftl: &Ftl, ring: &mut [u32]| {
        let lpn = rng.random_range(0..filled) as u32;
        ftl.prefetch_entry(lpn);
        ring[slot(i)] = lpn;
    };
    for i in 0..AHEAD.min(count) {
        draw(i, ftl, &mut ring);
    }
    for i in 0..count {
        if i + AHEAD / 2 < count {
            ftl.prefetch_old_copy(ring[slot(i + AHEAD / 2)]);
        }
        let lpn = ring[slot(i)];
        if i + AHEAD < count {
            draw(i + AHEAD, ftl, &mut ring);
        }
        ask(i, keep_going)?;
        on_overwrite(lpn);
        ftl.write(u64::from(lpn), (i % dies) as u32, HOST_STREAM)?;
    }
    Ok(())
}

/// Random overwrites one capacity at a time until the write amplification
/// of a capacity-write is within [`STEADY_TOLERANCE`] of the one before,
/// or [`STEADY_MAX_CAPACITY_WRITES`] were written.
fn overwrite_until_steady(
    ftl: &mut Ftl,
    filled: u64,
    rng: &mut SmallRng,
    keep_going: KeepGoing,
) -> Result<Aging, FtlError> {
    let mut previous: Option<f64> = None;
    for round in 1..=STEADY_MAX_CAPACITY_WRITES {
        ftl.reset_counters();
        overwrite(ftl, filled, filled, rng, &mut |_| {}, keep_going)?;
        let waf = ftl.counters.write_amplification();
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

/// Gives the dies of a replicated drive the unequal shares of the logical
/// space that aging leaves them.
///
/// Aging writes round-robin over the dies but overwrites a unit wherever it
/// lives, so die `d`'s count of valid units `N_d` is an urn: each overwrite
/// takes one from `d` with probability `N_d / N` and gives one to `d` every
/// `D`-th write. Its deviation from `N / D` relaxes by `1 / N` per write
/// with a per-write variance of about `(1 / D)(1 - 1 / D)`, so after `k`
/// capacities of overwrites (`kN` writes) from the fill's equal shares its
/// variance is `(N / 2D)(1 - 1 / D)(1 - e^(-2k))` (consumer-sata, `k = 2`:
/// a standard deviation of 337 units; simulated aging left 375 over its 8
/// dies). Copied samples all hold exactly `N / D`, and dies with equal
/// shares reach foreground GC at the same moment. This draws each die's
/// deviation (normal, then centred so they sum to zero) and moves that many
/// units from the dies above their draw to those below: the units each
/// giver wrote last on its host stream ([`Ftl::last_written`]), as if
/// those overwrites had been sent to a taker instead. The refill that
/// follows restores each die's free pool.
///
/// Why the last-written units and not random ones: a random unit sits in a
/// random block, and most blocks aging leaves are fully valid or nearly
/// (over a third are at 100 % on consumer-sata), so ~1,200 random moves
/// knocked one unit out of hundreds of fully valid blocks, a state aging
/// never reaches, and raised the default scenario's fill-phase read p99 by
/// about 10 % (fifo, ten seeds; the same moves applied to an `aged` drive
/// raised it as much). Taking a die's newest units touches only its
/// newest one or two blocks. One unit from each of the giver's emptiest
/// blocks was tried too: closer on steer's fill write amplification, far
/// off on the queue-depth limiter's fill p99 (docs/RESULTS.md, "Fast
/// aging").
fn spread_die_shares(ftl: &mut Ftl, overwrites: f64, seed: u64) -> Result<(), FtlError> {
    let dies = ftl.dies() as usize;
    let units = u64::from(ftl.logical_units());
    if dies < 2 || units == 0 {
        return Ok(());
    }
    let d = dies as f64;
    let sd =
        (units as f64 / (2.0 * d) * (1.0 - 1.0 / d) * (1.0 - (-2.0 * overwrites).exp())).sqrt();
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x5eed_d1e5);
    // Box-Muller: a standard normal from two uniforms.
    let mut normal = || {
        let (u, v): (f64, f64) = (1.0 - rng.random::<f64>(), rng.random());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    let drawn: Vec<f64> = (0..dies).map(|_| normal() * sd).collect();
    let mean = drawn.iter().sum::<f64>() / d;
    // Units each die gives away (negative: takes), summing to zero.
    let mut give: Vec<i64> = drawn.iter().map(|x| (mean - x).round() as i64).collect();
    let residual: i64 = give.iter().sum();
    give[0] -= residual;
    // Each giver hands over the units it wrote last (as if those overwrites
    // had been sent to a taker instead); a taker writes them at its host
    // frontier. Random units would instead knock one unit out of hundreds
    // of blocks that aging leaves fully valid.
    let mut taken: Vec<u32> = Vec::new();
    for (die, n) in give.iter().enumerate() {
        if *n > 0 {
            taken.extend(ftl.last_written(die as u32, HOST_STREAM, *n as usize));
        }
    }
    taken.shuffle(&mut rng);
    let mut takers: Vec<u32> = Vec::new();
    for (die, n) in give.iter().enumerate() {
        takers.extend(std::iter::repeat_n(die as u32, (-n).max(0) as usize));
    }
    for (lpn, to) in taken.into_iter().zip(takers) {
        ftl.write(u64::from(lpn), to, HOST_STREAM)?;
    }
    Ok(())
}

/// Idle GC in the map: cleans victims on each die up to the high
/// watermark, stopping where a victim frees nothing.
fn refill_free_blocks(ftl: &mut Ftl, high_watermark: u32) -> Result<(), FtlError> {
    let ppb = ftl.pages_per_block();
    for die in 0..ftl.dies() {
        while ftl.free_blocks(die) < high_watermark {
            match ftl.collect(die)? {
                Some(work) if work.pages_moved < work.blocks_erased * ppb => {}
                _ => break,
            }
        }
    }
    Ok(())
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
            ("aged-fast", StartState::AgedFast { overwrites: 2.0 }),
            ("aged-fast=3", StartState::AgedFast { overwrites: 3.0 }),
            ("steady", StartState::Steady),
        ] {
            let parsed: StartState = text.parse().unwrap();
            assert_eq!(parsed, state, "{text}");
            assert_eq!(parsed.to_string().parse::<StartState>().unwrap(), state);
        }
        for bad in [
            "full",
            "fill=150",
            "fill=x",
            "aged=-1",
            "aged-fast=-1",
            "aged-fast=nan",
            "aged=100.5",
            "aged=18446744073709551615",
            "empty=3",
            "steady=2",
            "",
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
    fn aging_asks_whether_to_go_on_and_stops_when_told() {
        for text in ["fill", "aged=2", "aged-fast=2", "steady"] {
            let mut asked = 0;
            let mut keep_going = || {
                asked += 1;
                asked < 2
            };
            let aged = small_drive().precondition_until(state(text), &mut keep_going);
            assert_eq!((aged, asked), (Err(FtlError::Stopped), 2), "{text}");
        }
        let mut asked = 0;
        let mut d = small_drive();
        d.precondition_until(state("aged=2"), &mut || {
            asked += 1;
            true
        })
        .unwrap();
        // Three capacities written: the fill and two of overwrites.
        let writes = 3 * u64::from(d.ftl().logical_units());
        assert!(asked >= writes / WRITES_BETWEEN_ASKS, "{asked}");
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

    /// Random single-unit overwrites of the whole logical space, round-robin
    /// over the dies: the write amplification they cost.
    fn next_writes_waf(d: &mut Device, count: u64, seed: u64) -> f64 {
        let logical = u64::from(d.ftl().logical_units());
        let mut rng = SmallRng::seed_from_u64(seed);
        overwrite(
            &mut d.ftl,
            logical,
            count,
            &mut rng,
            &mut |_| {},
            &mut || true,
        )
        .unwrap();
        d.ftl.counters.write_amplification()
    }

    #[test]
    fn aged_fast_maps_every_unit_once_and_matches_simulated_aging() {
        let mut slow = small_drive();
        slow.precondition(state("aged=2")).unwrap();
        let mut fast = small_drive();
        let aging = fast.precondition(state("aged-fast=2")).unwrap();
        assert_eq!(aging.to_string(), "aged-fast=2");
        fast.ftl().check_invariants().unwrap();
        assert_eq!(mapped_pages(&fast), fast.ftl().logical_pages());
        assert_eq!(fast.ftl().counters, crate::ftl::FtlCounters::default());
        assert_eq!(
            fast.ftl().total_free_blocks(),
            slow.ftl().total_free_blocks()
        );
        let count = u64::from(slow.ftl().logical_units());
        let (slow_waf, fast_waf) = (
            next_writes_waf(&mut slow, count, 9),
            next_writes_waf(&mut fast, count, 9),
        );
        assert!(slow_waf > 1.5, "{slow_waf}");
        assert!(
            (fast_waf - slow_waf).abs() <= 0.05 * slow_waf,
            "simulated {slow_waf}, fast {fast_waf}"
        );
        fast.ftl().check_invariants().unwrap();
    }

    /// Valid units on each die.
    fn die_shares(d: &Device) -> Vec<u64> {
        let mut shares = vec![0; d.ftl().dies() as usize];
        for lpn in 0..d.ftl().logical_units() {
            if let Some(page) = d.ftl().lookup(lpn) {
                shares[d.ftl().die_of(page) as usize] += 1;
            }
        }
        shares
    }

    #[test]
    fn aged_fast_leaves_the_dies_unequal_shares_as_aging_does() {
        let sd = |shares: &[u64]| {
            let mean = shares.iter().sum::<u64>() as f64 / shares.len() as f64;
            let var = shares
                .iter()
                .map(|s| (*s as f64 - mean).powi(2))
                .sum::<f64>();
            (var / shares.len() as f64).sqrt()
        };
        let mut spreads = Vec::new();
        for seed in 1..=4 {
            let mut fast = small_drive();
            fast.precondition(Precondition {
                state: state("aged-fast=2").state,
                seed,
            })
            .unwrap();
            let shares = die_shares(&fast);
            assert_eq!(
                shares.iter().sum::<u64>(),
                u64::from(fast.ftl().logical_units())
            );
            fast.ftl().check_invariants().unwrap();
            spreads.push(sd(&shares));
        }
        let mut slow = small_drive();
        slow.precondition(state("aged=2")).unwrap();
        let units = f64::from(slow.ftl().logical_units());
        let dies = f64::from(slow.ftl().dies());
        let expected = (units / (2.0 * dies) * (1.0 - 1.0 / dies) * (1.0 - (-4.0f64).exp())).sqrt();
        let mean_spread = spreads.iter().sum::<f64>() / spreads.len() as f64;
        assert!(
            mean_spread > expected / 3.0 && mean_spread < expected * 3.0,
            "aged-fast's spread {mean_spread:.1} units, the urn's {expected:.1}, simulated aging's {:.1}",
            sd(&die_shares(&slow))
        );
    }

    /// Blocks holding every unit they can (fully valid).
    fn fully_valid_blocks(d: &Device) -> usize {
        let ftl = d.ftl();
        let upb = ftl.pages_per_block() * ftl.units_per_page();
        let mut valid = std::collections::HashMap::<u32, u32>::new();
        for lpn in 0..ftl.logical_units() {
            if let Some(p) = ftl.lookup(lpn) {
                *valid.entry(p / upb).or_default() += 1;
            }
        }
        valid.values().filter(|v| **v == upb).count()
    }

    #[test]
    fn spreading_the_shares_leaves_the_fully_valid_blocks_aging_leaves() {
        // A drive large enough that the spread moves hundreds of units.
        let mut c = crate::DeviceConfig::preset("consumer-sata").unwrap();
        c.geometry.blocks_per_plane = 128;
        c.gc.high_watermark = 8;
        c.over_provisioning = 0.2;
        let mut d = Device::new(c).unwrap();
        d.precondition(state("aged=2")).unwrap();
        let (before, shares) = (fully_valid_blocks(&d), die_shares(&d));
        spread_die_shares(&mut d.ftl, 2.0, 5).unwrap();
        d.ftl().check_invariants().unwrap();
        let moved: u64 = die_shares(&d)
            .iter()
            .zip(&shares)
            .map(|(a, b)| a.abs_diff(*b))
            .sum::<u64>()
            / 2;
        assert!(moved > 50, "{moved} units moved");
        let after = fully_valid_blocks(&d);
        // Each giver's newest blocks at most, never one block per unit moved.
        let dies = d.ftl().dies() as usize;
        assert!(
            before.saturating_sub(after) <= 3 * dies,
            "{before} fully valid blocks before the spread, {after} after ({moved} units moved)"
        );
    }

    #[test]
    fn aged_fast_is_deterministic_from_the_seed() {
        let layout = |seed| {
            let mut d = small_drive();
            d.precondition(Precondition {
                state: "aged-fast".parse().unwrap(),
                seed,
            })
            .unwrap();
            (0..d.ftl().logical_pages())
                .map(|lpn| d.ftl().lookup(lpn))
                .collect::<Vec<_>>()
        };
        assert_eq!(layout(3), layout(3));
        assert_ne!(layout(3), layout(4));
    }
}
