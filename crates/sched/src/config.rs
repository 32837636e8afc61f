//! Policy configuration from `key=value` strings and from TOML.
//!
//! Both forms end in the same place: TOML tables are flattened to dotted keys
//! (`[write] limiter = "iops"` is `write.limiter=iops`), and every key goes
//! through the policy's [`Configurable::set`]. An unknown key or a bad value is
//! an error that names the key and what it accepts.

use std::collections::BTreeMap;
use std::fmt;

use thiserror::Error;

use crate::objective::ObjectiveError;
use crate::request::TenantId;
use crate::units::{self, Nanos};

/// A configuration mistake, worded for the person who made it.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("unknown scheduler `{name}`; known schedulers: {known}")]
    UnknownPolicy { name: String, known: String },
    #[error("unknown key `{key}` for scheduler `{policy}`; known keys: {known}")]
    UnknownKey {
        policy: String,
        key: String,
        known: String,
    },
    #[error("bad value `{value}` for `{key}`: expected {expected}")]
    BadValue {
        key: String,
        value: String,
        expected: String,
    },
    /// A tenant id in a key (`weight.<id>`) that is not a plain number.
    #[error("`{key}`: the tenant `{id}` is not a tenant number (a job's: 0 for the first, numjobs counted out, written plainly: 0, 1, 12)")]
    TenantId { key: String, id: String },
    #[error("bad objective `{value}` for `{key}`: {reason}")]
    Objective {
        key: String,
        value: String,
        #[source]
        reason: Box<ObjectiveError>,
    },
    #[error("`{item}` is not a `key=value` setting")]
    Syntax { item: String },
    /// A key given twice in one spec (`read_bias=1,read_bias=100`): which
    /// one was meant is a guess, so neither is taken.
    #[error("`{key}` is given twice (`{first}` and `{second}`); give each key once")]
    DuplicateKey {
        key: String,
        first: String,
        second: String,
    },
    #[error("{0}")]
    Conflict(String),
    #[error("TOML: {0}")]
    Toml(String),
}

/// One tunable, for listings and for unknown-key errors.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Tunable {
    pub key: &'static str,
    pub default: &'static str,
    pub help: &'static str,
}

/// A policy configuration that accepts settings one key at a time.
pub trait Configurable {
    /// Applies one setting.
    fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError>;
    /// Checks the settings together, once all are applied.
    fn validate(&self) -> Result<(), ConfigError>;
}

/// Applies `key=value` settings separated by commas (`read_bias=100,quanta=200`).
pub fn apply_pairs<C: Configurable + ?Sized>(
    config: &mut C,
    pairs: &str,
) -> Result<(), ConfigError> {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for item in pairs.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (key, value) = item.split_once('=').ok_or_else(|| ConfigError::Syntax {
            item: item.to_string(),
        })?;
        let key = key.trim();
        if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
            return Err(ConfigError::DuplicateKey {
                key: key.to_string(),
                first: (*first).to_string(),
                second: item.to_string(),
            });
        }
        seen.push((key, item));
        config.set(key, value.trim())?;
    }
    config.validate()
}

/// Applies the settings of a TOML document.
pub fn apply_toml<C: Configurable + ?Sized>(config: &mut C, text: &str) -> Result<(), ConfigError> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| ConfigError::Toml(e.to_string().trim().to_string()))?;
    let mut pairs = Vec::new();
    flatten("", &table, &mut pairs)?;
    for (key, value) in pairs {
        config.set(&key, &value)?;
    }
    config.validate()
}

fn flatten(
    prefix: &str,
    table: &toml::Table,
    out: &mut Vec<(String, String)>,
) -> Result<(), ConfigError> {
    for (name, value) in table {
        let key = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        let text = match value {
            toml::Value::Table(inner) => {
                flatten(&key, inner, out)?;
                continue;
            }
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            toml::Value::Array(items) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string())
                })
                .collect::<Vec<_>>()
                .join("+"),
            toml::Value::Datetime(_) => {
                return Err(ConfigError::BadValue {
                    key,
                    value: value.to_string(),
                    expected: "a number, a string or a list of names".into(),
                })
            }
        };
        out.push((key, text));
    }
    Ok(())
}

/// The error for a key the policy does not know.
pub fn unknown_key(policy: &str, key: &str, tunables: &[Tunable]) -> ConfigError {
    ConfigError::UnknownKey {
        policy: policy.to_string(),
        key: key.to_string(),
        known: tunables
            .iter()
            .map(|t| t.key)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

pub(crate) fn bad(key: &str, value: &str, expected: impl fmt::Display) -> ConfigError {
    ConfigError::BadValue {
        key: key.to_string(),
        value: value.to_string(),
        expected: expected.to_string(),
    }
}

/// An integer in `[min, max]`.
pub fn parse_int(key: &str, value: &str, min: u64, max: u64) -> Result<u64, ConfigError> {
    let expected = || format!("an integer from {min} to {max}");
    let n: u64 = value.parse().map_err(|_| bad(key, value, expected()))?;
    if (min..=max).contains(&n) {
        Ok(n)
    } else {
        Err(bad(key, value, expected()))
    }
}

/// The tenant number `id` taken from key `key`: a job's number (0 for the
/// first, `numjobs` counted out), written plainly, so that one tenant has one
/// key (`weight.00` and `weight.0` set the same tenant twice).
pub fn parse_tenant(key: &str, id: &str) -> Result<TenantId, ConfigError> {
    let n = id.parse::<u32>().ok().filter(|n| n.to_string() == id);
    n.map(TenantId).ok_or_else(|| ConfigError::TenantId {
        key: key.into(),
        id: id.into(),
    })
}

/// A setting every tenant has: a default, and the overrides of the tenants
/// that have their own (BFQ's `weight` and `weight.<id>`, blk-throttle's
/// `rbps` and `tenant.<id>.rbps`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerTenant<T> {
    /// The setting of tenants without their own.
    pub default: T,
    /// Tenants' own settings.
    pub tenants: BTreeMap<TenantId, T>,
}

impl<T> PerTenant<T> {
    /// `default` for every tenant, no overrides.
    pub fn new(default: T) -> Self {
        PerTenant {
            default,
            tenants: BTreeMap::new(),
        }
    }

    /// The tenant's own setting, or the default.
    pub fn get(&self, tenant: TenantId) -> &T {
        self.tenants.get(&tenant).unwrap_or(&self.default)
    }

    /// [`unused_tenants_note`] of the tenants with a setting of their own.
    pub fn unused_note(
        &self,
        policy: &str,
        key: &str,
        seen: impl Fn(TenantId) -> bool,
    ) -> Option<String> {
        unused_tenants_note(policy, key, self.tenants.keys().copied(), seen)
    }

    /// Sets, to the value `parse` reads, every tenant's default when `key`
    /// is `every` (`weight`), or the override of the tenant `key` names when
    /// it has the form of `pattern`, a per-tenant tunable's key with `<id>`
    /// in it (`weight.<id>`, `tenant.<id>.weight`); `Ok(false)` when the key
    /// is neither, so the policy can go on.
    pub fn set(
        &mut self,
        key: &str,
        every: &str,
        pattern: &str,
        parse: impl FnOnce() -> Result<T, ConfigError>,
    ) -> Result<bool, ConfigError> {
        if key == every {
            self.default = parse()?;
            return Ok(true);
        }
        let Some(tenant) = tenant_in_key(key, pattern)? else {
            return Ok(false);
        };
        self.tenants.insert(tenant, parse()?);
        Ok(true)
    }
}

/// A run note naming the `configured` tenants (`key` with `<id>` in it:
/// `weight.<id>`) that sent no read or write: a tenant is a job, so their
/// settings reached nothing (a typo, or a job file of fewer jobs).
pub fn unused_tenants_note(
    policy: &str,
    key: &str,
    configured: impl Iterator<Item = TenantId>,
    seen: impl Fn(TenantId) -> bool,
) -> Option<String> {
    let unused: Vec<String> = (configured.filter(|t| !seen(*t)))
        .map(|t| format!("`{}`", key.replace("<id>", &t.0.to_string())))
        .collect();
    let (whom, them) = match unused.len() {
        1 => ("a tenant", "it"),
        _ => ("tenants", "they"),
    };
    (!unused.is_empty()).then(|| {
        format!(
            "{policy}: {} set {whom} that sent no read or write, so {them} reached nothing (tenants are the jobs in order, 0 for the first, numjobs counted out)",
            unused.join(", ")
        )
    })
}

/// The tenant that `key` names, when it has the form of `pattern`; `None`
/// when it has not.
fn tenant_in_key(key: &str, pattern: &str) -> Result<Option<TenantId>, ConfigError> {
    let (prefix, suffix) = pattern.split_once("<id>").unwrap_or((pattern, ""));
    match key
        .strip_prefix(prefix)
        .and_then(|rest| rest.strip_suffix(suffix))
    {
        Some(id) => parse_tenant(key, id).map(Some),
        None => Ok(None),
    }
}

/// A duration with its unit: `5s`, `15ms`, `1.5ms`, `500us`, `100ns`, `1m`
/// (fio's grammar, [`units::parse_duration`]).
pub fn parse_duration(key: &str, value: &str) -> Result<Nanos, ConfigError> {
    units::parse_duration(value, None).map_err(|e| match e {
        units::UnitError::OutOfRange { .. } => bad(key, value, "a shorter duration"),
        _ => bad(
            key,
            value,
            format_args!(
                "a duration with a unit ({}), such as 5s, 15ms or 500us",
                units::DURATION_UNIT_NAMES
            ),
        ),
    })
}

/// A duration as upstream writes it, a bare number in `unit` (`500` for
/// mq-deadline's `read_expire` in ms, `2000000` for Kyber's `read_lat_nsec`),
/// or with its own unit as [`parse_duration`] takes it (`500ms`).
pub fn parse_duration_in(key: &str, value: &str, unit: Nanos) -> Result<Nanos, ConfigError> {
    units::parse_duration(value, Some(unit)).map_err(|e| match e {
        units::UnitError::OutOfRange { .. } => bad(key, value, "a shorter duration"),
        _ => bad(
            key,
            value,
            format_args!(
                "a number of {}, or a duration with a unit ({})",
                unit_name(unit),
                units::DURATION_UNIT_NAMES
            ),
        ),
    })
}

/// What a bare number counts in `unit`: `1ms` is milliseconds.
fn unit_name(unit: Nanos) -> String {
    match unit {
        Nanos(1) => "nanoseconds".into(),
        Nanos(1_000) => "microseconds".into(),
        Nanos(1_000_000) => "milliseconds".into(),
        Nanos(1_000_000_000) => "seconds".into(),
        other => format!("units of {other}"),
    }
}

/// One of `choices`.
pub fn parse_choice<'a>(
    key: &str,
    value: &str,
    choices: &[&'a str],
) -> Result<&'a str, ConfigError> {
    choices
        .iter()
        .copied()
        .find(|c| *c == value)
        .ok_or_else(|| bad(key, value, format!("one of {}", choices.join(", "))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default, Debug)]
    struct Toy {
        depth: u64,
        names: String,
        hold: Nanos,
    }

    const TOY_TUNABLES: &[Tunable] = &[
        Tunable {
            key: "depth",
            default: "1",
            help: "",
        },
        Tunable {
            key: "group.names",
            default: "",
            help: "",
        },
        Tunable {
            key: "hold",
            default: "0s",
            help: "",
        },
    ];

    impl Configurable for Toy {
        fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
            match key {
                "depth" => self.depth = parse_int(key, value, 1, 32)?,
                "group.names" => self.names = value.to_string(),
                "hold" => self.hold = parse_duration(key, value)?,
                _ => return Err(unknown_key("toy", key, TOY_TUNABLES)),
            }
            Ok(())
        }
        fn validate(&self) -> Result<(), ConfigError> {
            Ok(())
        }
    }

    #[test]
    fn pairs_and_toml_reach_the_same_keys() {
        let mut a = Toy::default();
        apply_pairs(&mut a, "depth=4, group.names=x+y,hold=1.5ms").unwrap();
        let mut b = Toy::default();
        apply_toml(
            &mut b,
            "depth = 4\nhold = \"1.5ms\"\n[group]\nnames = [\"x\", \"y\"]\n",
        )
        .unwrap();
        assert_eq!((a.depth, &a.names, a.hold), (b.depth, &b.names, b.hold));
        assert_eq!(a.hold, Nanos(1_500_000));
    }

    #[test]
    fn errors_name_the_key_and_what_it_accepts() {
        let mut toy = Toy::default();
        let err = apply_pairs(&mut toy, "depth=99").unwrap_err().to_string();
        assert!(
            err.contains("`depth`") && err.contains("from 1 to 32"),
            "{err}"
        );
        let err = apply_pairs(&mut toy, "deep=1").unwrap_err().to_string();
        assert!(
            err.contains("`deep`") && err.contains("depth, group.names, hold"),
            "{err}"
        );
        let err = apply_pairs(&mut toy, "hold=5").unwrap_err().to_string();
        assert!(err.contains("unit"), "{err}");
        let err = apply_pairs(&mut toy, "depth").unwrap_err().to_string();
        assert!(err.contains("key=value"), "{err}");
        let err = apply_toml(&mut toy, "depth = ").unwrap_err().to_string();
        assert!(err.starts_with("TOML"), "{err}");
    }

    #[test]
    fn duplicated_key_is_refused_naming_it() {
        let mut toy = Toy::default();
        let err = apply_pairs(&mut toy, "depth=1, depth=4")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`depth`") && err.contains("twice") && err.contains("depth=4"),
            "{err}"
        );
        assert!(apply_pairs(&mut toy, "depth=1,hold=1ms").is_ok());
    }

    #[test]
    fn upstream_durations_are_bare_integers_in_their_unit() {
        let ms = Nanos::from_millis(1);
        assert_eq!(
            parse_duration_in("k", "500", ms).unwrap(),
            Nanos::from_millis(500)
        );
        assert_eq!(
            parse_duration_in("k", "2s", ms).unwrap(),
            Nanos::from_secs(2)
        );
        assert!(parse_duration_in("k", "18446744073709551615", ms).is_err());
        let e = parse_duration_in("k", "x", ms).unwrap_err().to_string();
        assert!(e.contains("a number of milliseconds"), "{e}");
    }

    #[test]
    fn durations_accept_every_unit() {
        for (text, ns) in [
            ("100ns", 100),
            ("20us", 20_000),
            ("5ms", 5_000_000),
            ("2s", 2_000_000_000),
        ] {
            assert_eq!(parse_duration("k", text).unwrap(), Nanos(ns));
        }
        // fio's `m` is minutes.
        assert_eq!(parse_duration("k", "5m").unwrap(), Nanos::from_secs(300));
        for text in ["", "ms", "5", "-1s", "1e400s"] {
            assert!(parse_duration("k", text).is_err(), "{text}");
        }
        // Past 2^64 ns: too long, not malformed.
        let err = parse_duration("k", "99999999999d").unwrap_err().to_string();
        assert!(err.contains("a shorter duration"), "{err}");
    }

    #[test]
    fn a_per_tenant_key_names_its_tenant_or_is_not_one() {
        let pattern = "tenant.<id>.weight";
        assert_eq!(
            tenant_in_key("tenant.3.weight", pattern),
            Ok(Some(TenantId(3)))
        );
        assert_eq!(tenant_in_key("tenant.3.rbps", pattern), Ok(None));
        assert_eq!(
            tenant_in_key("weight.3", "weight.<id>"),
            Ok(Some(TenantId(3)))
        );
        let err = tenant_in_key("weight.x", "weight.<id>").unwrap_err();
        assert!(err.to_string().contains("`weight.x`"), "{err}");
        // One tenant, one key: `weight.00` set tenant 0 again, silently
        // over `weight.0` (found by a review).
        for key in ["weight.00", "weight.+0", "weight. 1"] {
            let err = tenant_in_key(key, "weight.<id>").unwrap_err().to_string();
            assert!(
                err.contains("not a tenant number") && err.contains("written plainly"),
                "{err}"
            );
        }
        assert_eq!(
            tenant_in_key("weight.10", "weight.<id>"),
            Ok(Some(TenantId(10)))
        );
    }

    #[test]
    fn a_tenant_has_its_own_setting_or_the_default() {
        let mut weights = PerTenant::new(100u32);
        assert_eq!(*weights.get(TenantId(3)), 100);
        let mut set = |key: &str, parse: fn() -> Result<u32, ConfigError>| {
            weights.set(key, "weight", "weight.<id>", parse)
        };
        assert_eq!(set("weight.3", || Ok(200)), Ok(true));
        assert_eq!(set("weighty", || Ok(1)), Ok(false));
        assert!(set("weight.x", || Ok(1)).is_err());
        // A value that does not parse sets nothing.
        assert!(set("weight.4", || Ok(
            parse_int("weight.4", "0", 1, 1000)? as u32
        ))
        .is_err());
        assert!(set("weight", || Ok(parse_int("weight", "0", 1, 1000)? as u32)).is_err());
        assert_eq!(
            (*weights.get(TenantId(3)), *weights.get(TenantId(4))),
            (200, 100)
        );
        weights.default = 50;
        assert_eq!(
            (*weights.get(TenantId(3)), *weights.get(TenantId(4))),
            (200, 50)
        );
    }
}
