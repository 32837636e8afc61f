use iosteer_fuzz::{fuzz, text_seeds, Outcome};
use iosteer_sched::objective::{Bound, Objective};
use iosteer_sched::policy::{build, build_from_toml, catalog};

/// `iosteer schedulers`' specs: each policy bare, then with every tunable
/// at its default.
fn spec_seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for policy in catalog() {
        seeds.push(policy.name.as_bytes().to_vec());
        let pairs: Vec<String> = policy
            .tunables
            .iter()
            .map(|t| format!("{}={}", t.key, t.default))
            .collect();
        if !pairs.is_empty() {
            seeds.push(format!("{}:{}", policy.name, pairs.join(",")).into_bytes());
        }
    }
    seeds
}

#[test]
fn scheduler_specs() {
    fuzz("sched-spec", &spec_seeds(), |bytes| {
        match build(&String::from_utf8_lossy(bytes)) {
            Ok(_) => Outcome::Accepted,
            Err(_) => Outcome::Refused,
        }
    });
}

/// The same settings as TOML, the policy's name on the first line (the
/// target splits it off), so mutations can change both.
#[test]
fn scheduler_toml() {
    let seeds: Vec<Vec<u8>> = catalog()
        .iter()
        .map(|policy| {
            let mut text = format!("{}\n", policy.name);
            for t in policy.tunables {
                let value = if t.default.parse::<f64>().is_ok()
                    || t.default == "true"
                    || t.default == "false"
                {
                    t.default.to_string()
                } else {
                    format!("{:?}", t.default)
                };
                text.push_str(&format!("{} = {value}\n", t.key));
            }
            text.into_bytes()
        })
        .collect();
    fuzz("sched-toml", &seeds, |bytes| {
        let text = String::from_utf8_lossy(bytes);
        let (name, toml) = text.split_once('\n').unwrap_or((&text, ""));
        match build_from_toml(name.trim(), toml) {
            Ok(_) => Outcome::Accepted,
            Err(_) => Outcome::Refused,
        }
    });
}

#[test]
fn objectives() {
    let seeds = text_seeds(&[
        "p99<=2x",
        "p99<=5ms",
        "mean<=1.5x",
        "p50<=100us",
        "p99.9<=3x",
        "max<=1s",
        "p90<=250000ns",
    ]);
    fuzz("objective", &seeds, |bytes| {
        let Ok(objective) = Objective::parse(&String::from_utf8_lossy(bytes)) else {
            return Outcome::Refused;
        };
        match objective.bound {
            Bound::Relative(f) if !(f.is_finite() && f > 0.0) => {
                Outcome::Violation(format!("relative bound {f}"))
            }
            Bound::Absolute(n) if n.0 == 0 => Outcome::Violation("zero bound".into()),
            _ => Outcome::Accepted,
        }
    });
}
