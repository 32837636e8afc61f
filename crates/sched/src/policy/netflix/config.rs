//! netflix's configuration: the classes' limiters and schedules, the
//! latency control, and how `key=value` tunables set them.

use super::{INFO, LIMITED, TUNABLES};
use crate::config::{
    parse_choice, parse_duration, parse_int, unknown_key, ConfigError, Configurable,
};
use crate::limit_schedule::LimitSchedule;
use crate::limiter::{Limit, LimiterKind};
use crate::policy::common::CommonConfig;
use crate::request::Op;
use crate::units::Nanos;

/// How the write limit is steered.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ControlType {
    None,
    SetMax,
    ReadLatency,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlConfig {
    pub kind: ControlType,
    pub steer_interval: Nanos,
    pub lolat: Nanos,
    pub hilat: Nanos,
    /// Percent.
    pub alpha: u32,
}

/// Limiters of one class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassConfig {
    /// Active limiters; the first one is steered.
    pub limiters: Vec<LimiterKind>,
    /// Range of each kind, by `LimiterKind::index`.
    pub limits: [Limit; 3],
    /// `<class>.{min,max,current}`: apply to the first limiter, whichever it is.
    first: [Option<u64>; 3],
    /// Which kinds' `current` was set explicitly; the others follow a lowered
    /// `max` (upstream starts `current` at `max`).
    explicit_current: [bool; 3],
    /// `<class>.<kind>.{min,max,current}` given, by kind and bound: a kind
    /// not in `limiters` limits nothing, so setting it is refused.
    given: [[bool; 3]; 3],
    /// `<class>.schedule`: the first limiter's current over time.
    pub schedule: Option<LimitSchedule>,
}

impl ClassConfig {
    fn unlimited() -> ClassConfig {
        ClassConfig {
            limiters: Vec::new(),
            limits: [Limit::UNLIMITED; 3],
            first: [None; 3],
            explicit_current: [false; 3],
            given: [[false; 3]; 3],
            schedule: None,
        }
    }

    /// The stock trim rule: one trim command in the device at a time.
    fn one_at_a_time() -> ClassConfig {
        let mut class = ClassConfig::unlimited();
        class.limiters = vec![LimiterKind::QueueDepth];
        class.limits[LimiterKind::QueueDepth.index()] = Limit {
            min: 1,
            max: 1,
            current: 1,
        };
        class
    }

    /// The limits, by `LimiterKind::index`, with the class-level settings
    /// applied to the first limiter and unset currents clamped to their range.
    pub fn effective_limits(&self) -> [Limit; 3] {
        let mut limits = self.limits;
        let mut explicit = self.explicit_current;
        if let Some(first) = self.limiters.first() {
            let limit = &mut limits[first.index()];
            let [min, max, current] = self.first;
            limit.min = min.unwrap_or(limit.min);
            limit.max = max.unwrap_or(limit.max);
            limit.current = current.unwrap_or(limit.current);
            explicit[first.index()] |= current.is_some();
        }
        for (limit, explicit) in limits.iter_mut().zip(explicit) {
            if !explicit {
                limit.current = limit.current.min(limit.max).max(limit.min);
            }
        }
        limits
    }

    /// The limits the class starts with: [`Self::effective_limits`] with the
    /// schedule's steps due at time zero applied, and the index of its first
    /// step not yet applied.
    pub(super) fn starting_limits(&self) -> ([Limit; 3], usize) {
        let mut limits = self.effective_limits();
        let mut next = 0;
        let due = self
            .schedule
            .as_ref()
            .and_then(|s| s.due(&mut next, Nanos::ZERO));
        if let (Some(value), Some(first)) = (due, self.limiters.first()) {
            limits[first.index()].current = value;
        }
        (limits, next)
    }

    /// A limiter's bound given for a kind `limiters` does not list (it would
    /// limit nothing), or given twice: as `<class>.<bound>` of the first
    /// limiter and as `<class>.<kind>.<bound>`, or as a current beside a
    /// schedule's step at 0 s.
    fn check_given(&self, op: Op) -> Result<(), ConfigError> {
        let class = op.name();
        for kind in LimiterKind::ALL {
            let Some(bound) = (0..3).find(|&b| self.given[kind.index()][b]) else {
                continue;
            };
            let key = format!("{class}.{}.{}", kind.name(), BOUND_NAMES[bound]);
            if !self.limiters.contains(&kind) {
                return Err(ConfigError::Conflict(format!(
                    "{key} sets the {0} limiter, which {class}.limiter does not list, so it \
                     would limit nothing; add it: {class}.limiter={0} (or a '+' list)",
                    kind.name()
                )));
            }
        }
        if let Some(first) = self.limiters.first() {
            let current_given = self.first[2].is_some() || self.given[first.index()][2];
            let mut next = 0;
            let at_zero = (self.schedule.as_ref()).and_then(|s| s.due(&mut next, Nanos::ZERO));
            if current_given && at_zero.is_some() {
                return Err(ConfigError::Conflict(format!(
                    "{class}.schedule's step at 0s and the current given both set the {} limiter's \
                     start; give one",
                    first.name()
                )));
            }
            let twice = (0..3).find(|&b| self.first[b].is_some() && self.given[first.index()][b]);
            if let Some(bound) = twice {
                let name = BOUND_NAMES[bound];
                return Err(ConfigError::Conflict(format!(
                    "{class}.{name} and {class}.{}.{name} both set the {} limiter's {name}; give one",
                    first.name(),
                    first.name()
                )));
            }
        }
        Ok(())
    }

    /// A schedule's values outside the range of the limiter it sets.
    fn check_schedule(&self, op: Op) -> Result<(), ConfigError> {
        let Some(schedule) = &self.schedule else {
            return Ok(());
        };
        let Some(first) = self.limiters.first() else {
            return Err(ConfigError::Conflict(format!(
                "{0}.schedule sets the first limiter of {0}.limiter, which is none; \
                 set {0}.limiter to queue_depth, iops or bandwidth (or a '+' list)",
                op.name()
            )));
        };
        let limit = self.effective_limits()[first.index()];
        match schedule
            .steps()
            .iter()
            .find(|s| !(limit.min..=limit.max).contains(&s.value))
        {
            Some(step) => Err(ConfigError::Conflict(format!(
                "{}.schedule: {} at {} is outside the {} limiter's range {}..{} ({}); \
                 set {}.{}.max (or min) to take it",
                op.name(),
                step.value,
                step.start,
                first.name(),
                limit.min,
                limit.max,
                first.short_unit(),
                op.name(),
                first.name()
            ))),
            None => Ok(()),
        }
    }

    fn current_set(&self) -> bool {
        self.first[2].is_some() || self.explicit_current.contains(&true)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetflixConfig {
    pub read_bias: u32,
    pub quanta: u32,
    /// Read, write and trim, by `Op::index`.
    pub classes: [ClassConfig; 3],
    pub control: ControlConfig,
    pub trim_goal: u32,
    pub trim_ticks: u32,
    pub common: CommonConfig,
    pub trim_advisory: u32,
}

impl Default for NetflixConfig {
    fn default() -> Self {
        NetflixConfig {
            read_bias: 0,
            quanta: 200,
            classes: [
                ClassConfig::unlimited(),
                ClassConfig::unlimited(),
                ClassConfig::one_at_a_time(),
            ],
            control: ControlConfig {
                kind: ControlType::None,
                steer_interval: Nanos::from_secs(5),
                lolat: Nanos::from_millis(5),
                hilat: Nanos::from_millis(15),
                alpha: 20,
            },
            trim_goal: 0,
            trim_ticks: 0,
            common: CommonConfig::default(),
            trim_advisory: 0,
        }
    }
}

const BOUND_NAMES: [&str; 3] = ["min", "max", "current"];
const LIMIT_MAX: u64 = 1 << 40;

fn class_of(name: &str) -> Option<Op> {
    LIMITED.into_iter().find(|op| op.name() == name)
}

fn parse_limiters(key: &str, value: &str) -> Result<Vec<LimiterKind>, ConfigError> {
    let expected = "none, or any of queue_depth, iops, bandwidth joined by '+' (each once)";
    let bad = || ConfigError::BadValue {
        key: key.to_string(),
        value: value.to_string(),
        expected: expected.to_string(),
    };
    if value == "none" {
        return Ok(Vec::new());
    }
    let mut kinds = Vec::new();
    for name in value.split('+').map(str::trim) {
        let kind = LimiterKind::from_name(name).ok_or_else(bad)?;
        if kinds.contains(&kind) {
            return Err(bad());
        }
        kinds.push(kind);
    }
    Ok(kinds)
}

impl NetflixConfig {
    fn set_class_key(
        &mut self,
        key: &str,
        class: Op,
        rest: &str,
        value: &str,
    ) -> Result<(), ConfigError> {
        let config = &mut self.classes[class.index()];
        if rest == "limiter" {
            config.limiters = parse_limiters(key, value)?;
            return Ok(());
        }
        if rest == "schedule" {
            config.schedule = Some(LimitSchedule::parse(key, value, 1, LIMIT_MAX)?);
            return Ok(());
        }
        let (kind, bound) = match rest.split_once('.') {
            Some((kind, bound)) => (Some(kind), bound),
            None => (None, rest),
        };
        let Some(which) = BOUND_NAMES.iter().position(|b| *b == bound) else {
            return Err(unknown_key(INFO.name, key, TUNABLES));
        };
        let n = parse_int(key, value, 1, LIMIT_MAX)?;
        match kind {
            None => config.first[which] = Some(n),
            Some(kind) => {
                let kind = LimiterKind::from_name(kind)
                    .ok_or_else(|| unknown_key(INFO.name, key, TUNABLES))?;
                config.explicit_current[kind.index()] |= which == 2;
                config.given[kind.index()][which] = true;
                let limit = &mut config.limits[kind.index()];
                *[&mut limit.min, &mut limit.max, &mut limit.current][which] = n;
            }
        }
        Ok(())
    }
}

impl Configurable for NetflixConfig {
    fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        const COUNT_MAX: u64 = 1_000_000_000;
        match key {
            "read_bias" => self.read_bias = parse_int(key, value, 0, COUNT_MAX)? as u32,
            "quanta" => self.quanta = parse_int(key, value, 1, 100_000)? as u32,
            "trim_goal" => self.trim_goal = parse_int(key, value, 0, COUNT_MAX)? as u32,
            "trim_ticks" => self.trim_ticks = parse_int(key, value, 0, COUNT_MAX)? as u32,
            _ if self.common.set(key, value)? => {}
            "trim_advisory" => self.trim_advisory = parse_int(key, value, 0, COUNT_MAX)? as u32,
            "control.type" => {
                self.control.kind =
                    match parse_choice(key, value, &["none", "set_max", "read_latency"])? {
                        "none" => ControlType::None,
                        "set_max" => ControlType::SetMax,
                        _ => ControlType::ReadLatency,
                    }
            }
            "control.steer_interval" => self.control.steer_interval = parse_duration(key, value)?,
            "control.lolat" => self.control.lolat = parse_duration(key, value)?,
            "control.hilat" => self.control.hilat = parse_duration(key, value)?,
            "control.alpha" => self.control.alpha = parse_int(key, value, 1, 99)? as u32,
            _ => {
                let (class, rest) = key
                    .split_once('.')
                    .and_then(|(c, rest)| Some((class_of(c)?, rest)))
                    .ok_or_else(|| unknown_key(INFO.name, key, TUNABLES))?;
                self.set_class_key(key, class, rest, value)?;
            }
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), ConfigError> {
        for op in LIMITED {
            let class = &self.classes[op.index()];
            if class.limiters.is_empty() && class.first.iter().any(Option::is_some) {
                return Err(ConfigError::Conflict(format!(
                    "{0}.min/max/current set the first limiter of {0}.limiter, which is none; \
                     set {0}.limiter to queue_depth, iops or bandwidth (or a '+' list)",
                    op.name()
                )));
            }
            class.check_schedule(op)?;
            class.check_given(op)?;
            let limits = class.effective_limits();
            for kind in &class.limiters {
                let l = limits[kind.index()];
                if !(l.min <= l.current && l.current <= l.max) {
                    return Err(ConfigError::Conflict(format!(
                        "{}.{}: need min <= current <= max, got min {} current {} max {}",
                        op.name(),
                        kind.name(),
                        l.min,
                        l.current,
                        l.max
                    )));
                }
            }
        }
        let control = &self.control;
        let scheduled = LIMITED
            .into_iter()
            .find(|op| self.classes[op.index()].schedule.is_some());
        if let (Some(op), false) = (scheduled, control.kind == ControlType::None) {
            return Err(ConfigError::Conflict(format!(
                "{}.schedule sets a limit on a timetable, which control.type={} would also \
                 move; use control.type=none with a schedule",
                op.name(),
                match control.kind {
                    ControlType::SetMax => "set_max",
                    _ => "read_latency",
                }
            )));
        }
        if control.kind == ControlType::SetMax && self.classes.iter().any(ClassConfig::current_set)
        {
            return Err(ConfigError::Conflict(
                "control.type=set_max sets every limit to its max each steer_interval, which \
                 would overwrite the current you set; set max instead, or use control.type=none"
                    .into(),
            ));
        }
        if control.kind == ControlType::ReadLatency
            && self.classes[Op::Write.index()].limiters.is_empty()
        {
            return Err(ConfigError::Conflict(
                "control.type=read_latency steers the write limit; set write.limiter to \
                 queue_depth, iops or bandwidth"
                    .into(),
            ));
        }
        if control.lolat > control.hilat {
            return Err(ConfigError::Conflict(format!(
                "control.lolat ({}) must not exceed control.hilat ({})",
                control.lolat, control.hilat
            )));
        }
        if control.steer_interval == Nanos::ZERO {
            return Err(ConfigError::Conflict(
                "control.steer_interval must be above zero".into(),
            ));
        }
        if self.trim_advisory > 0 && self.trim_advisory < self.trim_goal {
            return Err(ConfigError::Conflict(format!(
                "trim_advisory ({}) below trim_goal ({}) would complete unsent the very trims \
                 the goal holds back; set trim_advisory to at least trim_goal, or 0",
                self.trim_advisory, self.trim_goal
            )));
        }
        if self.trim_goal > 0 && self.trim_ticks == 0 {
            return Err(ConfigError::Conflict(
                "trim_goal > 0 needs trim_ticks > 0, or trims below the goal would wait forever"
                    .into(),
            ));
        }
        Ok(())
    }
}
