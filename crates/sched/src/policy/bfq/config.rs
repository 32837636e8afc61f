//! BFQ's settings: upstream's tunable names and defaults, and per-tenant
//! weights (`weight.N`), read from specs and TOML.

use super::*;
use crate::config::{parse_duration_in, parse_int, unknown_key, PerTenant};
use crate::policy::common::{BAD_LATENCY, STATS_WINDOW, TRIM_MAX_RANGES};

pub const TUNABLES: &[Tunable] = &[
    Tunable {
        key: "weight",
        default: "100",
        help: "weight of every tenant's queues (1..1000)",
    },
    Tunable {
        key: "weight.<id>",
        default: "the above",
        help: "one tenant's weight",
    },
    Tunable {
        key: "slice_idle",
        default: "8",
        help: "idling for a sync queue's next request, ms (or with a unit); 0 = never",
    },
    Tunable {
        key: "low_latency",
        default: "1",
        help: "weight raising for interactive and soft real-time queues (0 or 1)",
    },
    Tunable {
        key: "max_budget",
        default: "0",
        help: "largest budget, sectors; 0 = automatic (16384 here)",
    },
    Tunable {
        key: "timeout_sync",
        default: "125",
        help: "longest service slot, ms (or with a unit)",
    },
    Tunable {
        key: "back_seek_max",
        default: "16384",
        help: "farthest backward seek preferred to a forward one, KiB",
    },
    Tunable {
        key: "back_seek_penalty",
        default: "2",
        help: "a backward seek counts this many times its distance",
    },
    Tunable {
        key: "fifo_expire_sync",
        default: "125",
        help: "a read older than this goes first once per slot, ms",
    },
    Tunable {
        key: "fifo_expire_async",
        default: "250",
        help: "a write older than this goes first once per slot, ms",
    },
    Tunable {
        key: "strict_guarantees",
        default: "0",
        help: "always idle for an empty sync queue (0 or 1)",
    },
    Tunable {
        key: "sync_writes",
        default: "0",
        help: "writes are sync (O_DIRECT/O_SYNC) rather than buffered (0 or 1)",
    },
    Tunable {
        key: "groups",
        default: "0",
        help: "tenants are cgroups: several busy ones make the scenario asymmetric (0 or 1)",
    },
    TRIM_MAX_RANGES,
    STATS_WINDOW,
    BAD_LATENCY,
];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BfqConfig {
    /// `weight`, and `weight.<id>` of the tenants that have their own.
    pub weight: PerTenant<u32>,
    pub slice_idle: Nanos,
    pub low_latency: bool,
    /// Sectors; zero is automatic.
    pub max_budget: u64,
    pub timeout_sync: Nanos,
    pub back_seek_max: Bytes,
    pub back_seek_penalty: u64,
    pub fifo_expire_sync: Nanos,
    pub fifo_expire_async: Nanos,
    pub strict_guarantees: bool,
    pub sync_writes: bool,
    pub groups: bool,
    pub common: CommonConfig,
}

impl Default for BfqConfig {
    fn default() -> Self {
        BfqConfig {
            weight: PerTenant::new(100),
            slice_idle: Nanos::from_millis(8),
            low_latency: true,
            max_budget: 0,
            timeout_sync: Nanos::from_millis(125),
            back_seek_max: Bytes(16384 << 10),
            back_seek_penalty: 2,
            fifo_expire_sync: Nanos::from_millis(125),
            fifo_expire_async: Nanos::from_millis(250),
            strict_guarantees: false,
            sync_writes: false,
            groups: false,
            common: CommonConfig::default(),
        }
    }
}

impl BfqConfig {
    pub(super) fn max_budget(&self) -> u64 {
        match self.max_budget {
            0 => DEFAULT_MAX_BUDGET,
            n => n,
        }
    }

    pub(super) fn min_budget(&self) -> u64 {
        (self.max_budget() >> MIN_BUDGET_SHIFT).max(1)
    }
}

fn flag(key: &str, value: &str) -> Result<bool, ConfigError> {
    Ok(parse_int(key, value, 0, 1)? == 1)
}

impl Configurable for BfqConfig {
    fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let ms = Nanos::from_millis(1);
        match key {
            "slice_idle" => self.slice_idle = parse_duration_in(key, value, ms)?,
            "low_latency" => self.low_latency = flag(key, value)?,
            "max_budget" => self.max_budget = parse_int(key, value, 0, 1 << 30)?,
            "timeout_sync" => self.timeout_sync = parse_duration_in(key, value, ms)?,
            "back_seek_max" => self.back_seek_max = Bytes(parse_int(key, value, 0, 1 << 40)? << 10),
            "back_seek_penalty" => self.back_seek_penalty = parse_int(key, value, 1, 1000)?,
            "fifo_expire_sync" => self.fifo_expire_sync = parse_duration_in(key, value, ms)?,
            "fifo_expire_async" => self.fifo_expire_async = parse_duration_in(key, value, ms)?,
            "strict_guarantees" => self.strict_guarantees = flag(key, value)?,
            "sync_writes" => self.sync_writes = flag(key, value)?,
            "groups" => self.groups = flag(key, value)?,
            _ if self.common.set(key, value)? => {}
            _ if self.weight.set(key, "weight", "weight.<id>", || {
                Ok(parse_int(key, value, 1, 1000)? as u32)
            })? => {}
            _ => return Err(unknown_key(INFO.name, key, TUNABLES)),
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if self.timeout_sync == Nanos::ZERO {
            return Err(ConfigError::Conflict(
                "timeout_sync must be above zero".into(),
            ));
        }
        Ok(())
    }
}
