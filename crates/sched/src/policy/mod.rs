//! The policies, one file each, and the registry that builds them from specs.
//!
//! A spec is `name[:key=value,...]`, for example
//! `netflix:read_bias=100,write.limiter=queue_depth,write.current=1`.

pub mod bfq;
pub mod common;
pub mod deadline;
pub mod fifo;
pub mod iocost;
pub mod iolatency;
pub(crate) mod issue;
pub mod kyber;
pub mod netflix;
pub mod steer;
#[cfg(test)]
mod testkit;
pub mod throttle;
pub mod wbt;

use crate::config::{apply_pairs, apply_toml, ConfigError, Configurable, Tunable};
use crate::limiter::LimiterSet;
use crate::request::Op;
use crate::scheduler::{ClassPressure, Scheduler};
use crate::stats::Stats;
use crate::units::Nanos;

/// A policy as the registry knows it: what `iosteer schedulers` shows of it,
/// and how to build it. Each policy declares its own, so its name, tunables
/// and constructor cannot disagree.
#[derive(Copy, Clone, Debug)]
pub struct PolicyInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub tunables: &'static [Tunable],
    /// Makes the policy from its default configuration with the settings
    /// that `configure` applies ([`construct`] for every policy).
    pub build: fn(Configure<'_>) -> Result<Box<dyn Scheduler>, ConfigError>,
}

/// Applies settings to a policy's configuration (pairs of a spec, a TOML
/// document).
pub type Configure<'a> = &'a dyn Fn(&mut dyn Configurable) -> Result<(), ConfigError>;

/// The [`PolicyInfo::build`] of a policy made by `new` from configuration `C`.
pub fn construct<C, P>(
    configure: Configure<'_>,
    new: fn(C) -> P,
) -> Result<Box<dyn Scheduler>, ConfigError>
where
    C: Default + Configurable,
    P: Scheduler + 'static,
{
    let mut config = C::default();
    configure(&mut config)?;
    Ok(Box::new(new(config)))
}

/// The catalogue as `iosteer schedulers` prints it: each policy's summary
/// and its tunables with their defaults and help.
pub fn describe_catalog() -> String {
    let mut out = String::new();
    for info in catalog() {
        out += &format!("{:<10} {}\n", info.name, info.summary);
        for t in info.tunables {
            out += &format!("    {:<62} default {}\n", t.key, t.default);
            out += &format!("    {:<62} {}\n", "", t.help);
        }
        out.push('\n');
    }
    out
}

/// Every policy, in the order they are listed: one line each.
pub fn catalog() -> &'static [PolicyInfo] {
    &[
        fifo::INFO,
        netflix::INFO,
        deadline::INFO,
        kyber::INFO,
        wbt::INFO,
        throttle::INFO,
        iocost::INFO,
        steer::INFO,
        bfq::INFO,
        iolatency::INFO,
    ]
}

fn known_names() -> String {
    catalog()
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

fn find(name: &str) -> Result<&'static PolicyInfo, ConfigError> {
    catalog()
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| ConfigError::UnknownPolicy {
            name: name.to_string(),
            known: known_names(),
        })
}

/// Builds a policy from a spec such as `netflix:read_bias=100`.
pub fn build(spec: &str) -> Result<Box<dyn Scheduler>, ConfigError> {
    let (name, settings) = spec.split_once(':').unwrap_or((spec, ""));
    (find(name.trim())?.build)(&|config| apply_pairs(config, settings))
}

/// Builds policy `name` from the settings of a TOML document.
pub fn build_from_toml(name: &str, toml: &str) -> Result<Box<dyn Scheduler>, ConfigError> {
    (find(name)?.build)(&|config| apply_toml(config, toml))
}

/// A periodic timer on multiples of `period` from time zero.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Ticker {
    period: Nanos,
    next: Nanos,
}

impl Ticker {
    pub(crate) fn per_second(ticks: u32) -> Ticker {
        let period = Nanos(1_000_000_000 / u64::from(ticks.max(1)));
        Ticker {
            period,
            next: period,
        }
    }

    pub(crate) fn period(&self) -> Nanos {
        self.period
    }

    pub(crate) fn next(&self) -> Nanos {
        self.next
    }

    /// Ticks that have fallen due by `now` (a late caller gets them all at
    /// once, so credit is earned for the time that really passed).
    pub(crate) fn advance(&mut self, now: Nanos) -> u64 {
        if now < self.next {
            return 0;
        }
        let due = (now.0 - self.next.0) / self.period.0 + 1;
        self.next = Nanos(
            self.next
                .0
                .saturating_add(due.saturating_mul(self.period.0)),
        );
        due
    }
}

/// Back-pressure of one class from its statistics and limiters.
pub(crate) fn class_pressure(
    stats: &Stats,
    op: Op,
    limiters: Option<&LimiterSet>,
    oldest_submitted: Option<Nanos>,
    now: Nanos,
) -> ClassPressure {
    let class = stats.class(op);
    let by_rate = Nanos(u64::from(class.queued).saturating_mul(class.service_gap.mean().0));
    let by_limits = limiters.map_or(Nanos::ZERO, |l| {
        l.drain_time(class.queued, class.queued_bytes, class.device_ema.mean())
    });
    ClassPressure {
        queued: class.queued,
        queued_bytes: class.queued_bytes,
        expected_wait: by_rate.max(by_limits),
        oldest_wait: oldest_submitted.map_or(Nanos::ZERO, |t| now - t),
        limited: class.limited,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_build_the_named_policy() {
        assert_eq!(build("fifo").unwrap().name(), "fifo");
        let s = build("netflix:read_bias=100,write.limiter=queue_depth,write.current=1").unwrap();
        assert_eq!(s.name(), "netflix");
    }

    #[test]
    fn every_catalogue_entry_builds_the_policy_it_names() {
        for info in catalog() {
            assert_eq!(build(info.name).unwrap().name(), info.name);
            assert_eq!(build_from_toml(info.name, "").unwrap().name(), info.name);
        }
    }

    #[test]
    fn an_unknown_policy_lists_the_known_ones() {
        let err = build("cfq").err().unwrap().to_string();
        assert!(
            err.contains("`cfq`") && err.contains("fifo, netflix"),
            "{err}"
        );
    }

    #[test]
    fn a_late_ticker_catches_up() {
        let mut t = Ticker::per_second(200);
        assert_eq!(t.advance(Nanos::from_millis(4)), 0);
        assert_eq!(t.advance(Nanos::from_millis(5)), 1);
        assert_eq!(t.advance(Nanos::from_millis(27)), 4);
        assert_eq!(t.next(), Nanos::from_millis(30));
        assert!(
            t.advance(Nanos::MAX) > 0,
            "the end of time does not overflow"
        );
    }
}
