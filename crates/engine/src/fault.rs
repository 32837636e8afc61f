//! A fault-injecting [`Backend`]: wraps another backend (the io_uring
//! [`crate::Engine`], an [`crate::emulate::Emulated`] drive, or a test's
//! virtual drive) and, deterministically from a seed, makes its commands
//! fail, come back short, come back late and out of order, or stop coming
//! back for a while, so a policy and the loop around it can be checked
//! against everything a misbehaving drive does.
//!
//! What each fault looks like to the loop:
//! - failed at once: the command never reaches the device and completes
//!   with EINVAL, as the engine completes a request it refuses;
//! - failed by the device: it completes with EIO;
//! - short transfer (reads and writes): it completes with EIO, as the
//!   engine reports a transfer shorter than asked (it does not resubmit the
//!   rest), and a read brings back no bytes;
//! - delayed: its completion is held up to [`FaultConfig::max_delay`],
//!   so completions come back out of order;
//! - stall: the device stops answering for up to
//!   [`FaultConfig::max_stall`]: nothing it finishes meanwhile is seen
//!   before the stall ends.
//!
//! A command the loop has not yet been told of still counts in
//! [`Backend::view`], so the scheduler never has more in flight than the
//! device's slots.

use std::collections::HashMap;
use std::time::Duration;

use iosteer_device::SplitMix64;
use iosteer_sched::{Command, DeviceView, Nanos, Op, Outcome};

use crate::engine::{EngineError, Finished};
use crate::runner::Backend;

/// How often each fault happens (chances from 0 to 1, per command) and how
/// long delays and stalls last.
#[derive(Clone, Debug)]
pub struct FaultConfig {
    pub seed: u64,
    /// The command fails without reaching the device (EINVAL).
    pub fail_at_once: f64,
    /// The device fails the command (EIO).
    pub fail_by_device: f64,
    /// A read or write transfers less than asked (EIO).
    pub short_transfer: f64,
    /// The completion is held back up to `max_delay`.
    pub delay: f64,
    pub max_delay: Duration,
    /// The device stops answering, up to `max_stall`, when this command
    /// is sent.
    pub stall: f64,
    pub max_stall: Duration,
}

impl FaultConfig {
    /// Every fault now and then: a few percent of commands each, delays up
    /// to 2 s, stalls up to 5 s.
    pub fn mixed(seed: u64) -> FaultConfig {
        FaultConfig {
            seed,
            fail_at_once: 0.02,
            fail_by_device: 0.03,
            short_transfer: 0.02,
            delay: 0.1,
            max_delay: Duration::from_secs(2),
            stall: 0.002,
            max_stall: Duration::from_secs(5),
        }
    }
}

/// How many of each fault were injected.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultCounts {
    pub commands: u64,
    pub failed_at_once: u64,
    pub failed_by_device: u64,
    pub short_transfers: u64,
    pub delayed: u64,
    pub stalls: u64,
}

impl std::ops::AddAssign for FaultCounts {
    fn add_assign(&mut self, other: FaultCounts) {
        self.commands += other.commands;
        self.failed_at_once += other.failed_at_once;
        self.failed_by_device += other.failed_by_device;
        self.short_transfers += other.short_transfers;
        self.delayed += other.delayed;
        self.stalls += other.stalls;
    }
}

/// What was decided for a command when it was sent, applied when the
/// device finishes it.
#[derive(Copy, Clone, Debug, Default)]
struct Planned {
    errno: Option<i32>,
    delay: Nanos,
}

/// A finished command the loop is not yet told of.
#[derive(Debug)]
struct Held {
    release: Nanos,
    finished: Finished,
}

/// A seeded stream of draws, the same for the same seed.
#[derive(Clone, Debug)]
struct Dice(SplitMix64);

impl Dice {
    /// True with chance `p`.
    fn chance(&mut self, p: f64) -> bool {
        let unit = (self.0.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        unit < p
    }

    /// Uniform in `[0, max]`.
    fn up_to(&mut self, max: Duration) -> Nanos {
        Nanos(self.0.next_u64() % (max.as_nanos() as u64 + 1))
    }
}

/// `inner` with faults injected as `config` says.
pub struct Faulty<B> {
    inner: B,
    config: FaultConfig,
    dice: Dice,
    /// By the first request's id of each command the device holds.
    planned: HashMap<u64, Planned>,
    held: Vec<Held>,
    /// Nothing the device finishes is seen before this.
    stalled_until: Nanos,
    /// Completions are handed back in time order.
    last_release: Nanos,
    counts: FaultCounts,
    /// Each request given an error, with it: for tests to check that every
    /// request got its own. Grows by one entry per failed request.
    injected: Vec<(u64, i32)>,
}

impl<B: Backend> Faulty<B> {
    pub fn new(inner: B, config: FaultConfig) -> Faulty<B> {
        Faulty {
            inner,
            dice: Dice(SplitMix64(config.seed)),
            config,
            planned: HashMap::new(),
            held: Vec::new(),
            stalled_until: Nanos::ZERO,
            last_release: Nanos::ZERO,
            counts: FaultCounts::default(),
            injected: Vec::new(),
        }
    }

    pub fn inner(&self) -> &B {
        &self.inner
    }

    pub fn counts(&self) -> FaultCounts {
        self.counts
    }

    /// Every request given an error, as (request id, errno).
    pub fn injected(&self) -> &[(u64, i32)] {
        &self.injected
    }

    /// Commands finished but not yet handed back.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    fn maybe_stall(&mut self, now: Nanos) {
        if self.dice.chance(self.config.stall) {
            self.counts.stalls += 1;
            let until = now + self.dice.up_to(self.config.max_stall);
            self.stalled_until = self.stalled_until.max(until);
        }
    }

    /// The error the device will give `command`, if any.
    fn device_error(&mut self, command: &Command) -> Option<i32> {
        if self.dice.chance(self.config.fail_by_device) {
            self.counts.failed_by_device += 1;
            return Some(libc::EIO);
        }
        let transfers = matches!(command.op, Op::Read | Op::Write);
        if transfers && self.dice.chance(self.config.short_transfer) {
            self.counts.short_transfers += 1;
            return Some(libc::EIO);
        }
        None
    }

    fn delay(&mut self) -> Nanos {
        if self.dice.chance(self.config.delay) {
            self.counts.delayed += 1;
            return self.dice.up_to(self.config.max_delay);
        }
        Nanos::ZERO
    }

    /// Holds `finished` until `release` (or the stall's end), with `errno`.
    fn hold(&mut self, mut finished: Finished, errno: Option<i32>, release: Nanos) {
        if let Some(errno) = errno {
            finished.outcome = Outcome::Error;
            finished.errno = Some(errno);
            finished.data = None;
            let ids = finished.command.requests.iter().map(|r| (r.id.0, errno));
            self.injected.extend(ids);
        }
        let release = release.max(self.stalled_until);
        self.held.push(Held { release, finished });
    }

    /// When the next held completion is due, if any.
    fn next_release(&self) -> Option<Nanos> {
        self.held.iter().map(|h| h.release).min()
    }
}

impl<B: Backend> Backend for Faulty<B> {
    fn view(&self) -> DeviceView {
        let mut view = self.inner.view();
        view.in_flight += self.held.len() as u32;
        view
    }

    fn submit(&mut self, command: Command, now: Nanos) -> Result<(), EngineError> {
        self.counts.commands += 1;
        self.maybe_stall(now);
        if self.dice.chance(self.config.fail_at_once) {
            self.counts.failed_at_once += 1;
            let finished = Finished {
                command,
                at: now,
                outcome: Outcome::Error,
                errno: None,
                data: None,
            };
            self.hold(finished, Some(libc::EINVAL), now);
            return Ok(());
        }
        let planned = Planned {
            errno: self.device_error(&command),
            delay: self.delay(),
        };
        let id = command.requests[0].id.0;
        self.inner.submit(command, now)?;
        self.planned.insert(id, planned);
        Ok(())
    }

    fn submit_queued(&mut self) -> Result<(), EngineError> {
        self.inner.submit_queued()
    }

    fn wait(&mut self, now: Nanos, timeout: Duration) -> Result<(), EngineError> {
        let until_release = self
            .next_release()
            .map_or(timeout, |t| Duration::from_nanos(t.0.saturating_sub(now.0)));
        if until_release.is_zero() {
            return self.inner.submit_queued();
        }
        self.inner.wait(now, timeout.min(until_release))
    }

    fn reap(&mut self, now: Nanos, finished: &mut Vec<Finished>) {
        let mut from_device = Vec::new();
        self.inner.reap(now, &mut from_device);
        for f in from_device {
            let planned = self
                .planned
                .remove(&f.command.requests[0].id.0)
                .unwrap_or_default();
            let release = f.at + planned.delay;
            // An error of the device's own stays; a planned one replaces it.
            self.hold(f, planned.errno, release);
        }
        self.release(now, finished);
    }

    fn drive_gauges(&self) -> Option<(u64, u64)> {
        self.inner.drive_gauges()
    }
}

impl<B> Faulty<B> {
    /// Hands back, in time order, what is due by `now`.
    fn release(&mut self, now: Nanos, finished: &mut Vec<Finished>) {
        let (mut due, held): (Vec<Held>, Vec<Held>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|h| h.release <= now);
        self.held = held;
        due.sort_by_key(|h| h.release);
        for mut h in due {
            self.last_release = self.last_release.max(h.release);
            h.finished.at = self.last_release;
            finished.push(h.finished);
        }
    }
}

#[cfg(test)]
mod tests;
