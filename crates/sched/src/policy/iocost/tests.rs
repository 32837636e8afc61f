use super::*;
use crate::config::apply_pairs;
use crate::policy::testkit::{configured, Bench};
use crate::scheduler::Scheduler;

fn iocost(settings: &str) -> Iocost {
    Iocost::new(configured(settings))
}

/// `per_ms` 4 KiB reads per millisecond from each of `tenants` for
/// `millis` ms from the bench's time on.
fn reads(s: &mut Iocost, bench: &mut Bench, tenants: &[u32], per_ms: u64, millis: u64) {
    let start = bench.now;
    let mut id = start.0;
    for ms in 0..millis {
        bench.advance(s, start + Nanos::from_millis(ms));
        for _ in 0..per_ms {
            for tenant in tenants {
                id += 1;
                let r = Request::new(id, Op::Read, id << 20, 4096, bench.now);
                bench.submit(s, r.with_tenant(TenantId(*tenant)));
            }
        }
    }
}

#[test]
fn the_model_prices_sequential_and_random_io_as_upstream() {
    let c = Coefs::new(&IocostConfig::default().model);
    assert_eq!(c.page[0], 8383, "1 s / ceil(488636629 / 4096)");
    assert_eq!(c.seqio[0], 111_958 - 8383);
    assert_eq!(c.randio[0], 117_399 - 8383);
    let read = Request::new(1, Op::Read, 100 << 20, 8192, Nanos::ZERO);
    assert_eq!(c.cost(&read, 100 << 20), 111_958 - 8383 + 2 * 8383);
    assert_eq!(
        c.cost(&read, 1),
        117_399 - 8383 + 2 * 8383,
        "100 MiB away: random"
    );
    assert_eq!(
        c.cost(&Request::new(2, Op::Trim, 0, 1 << 20, Nanos::ZERO), 0),
        0
    );
}

#[test]
fn the_period_follows_the_latency_target_and_percentile() {
    assert_eq!(iocost("").period(), Nanos::from_millis(50));
    assert_eq!(iocost("rpct=50,wpct=50").period(), Nanos::from_millis(250));
    assert_eq!(iocost("rlat=1000,wlat=100").period(), Nanos::from_millis(2));
}

#[test]
fn vrate_drops_while_reads_miss_rlat_at_rpct() {
    let mut s = iocost("");
    let mut bench = Bench::new(64, |_| Nanos::from_millis(40));
    reads(&mut s, &mut bench, &[0], 1, 3000);
    assert!(s.busy_level() > 40, "busy level {}", s.busy_level());
    assert!(s.vrate_pct() < 50.0, "vrate {}%", s.vrate_pct());
}

#[test]
fn vrate_rises_while_latency_is_met_and_a_tenant_waits_for_budget() {
    let mut s = iocost("");
    let mut bench = Bench::new(64, |_| Nanos::from_micros(100));
    // Demand is 20 reads/ms; the model allows 8.9/ms at 100 %.
    reads(&mut s, &mut bench, &[0], 20, 1500);
    assert!(s.busy_level() < -20, "busy level {}", s.busy_level());
    assert!(s.vrate_pct() > 120.0, "vrate {}%", s.vrate_pct());
    assert!(s.pressure(bench.now).class(Op::Read).limited);
    // Once vrate covers the demand, nobody waits and vrate coasts.
    reads(&mut s, &mut bench, &[0], 20, 1500);
    assert_eq!(s.busy_level(), 0);
    assert!(s.vrate_pct() > 225.0, "vrate {}%", s.vrate_pct());
}

#[test]
fn weights_split_the_modelled_device_time() {
    // vrate held at 100 %: the two tenants share one modelled device.
    let mut s = iocost("min=100,max=100,tenant.1.weight=300");
    let mut bench = Bench::new(64, |_| Nanos::from_micros(100));
    reads(&mut s, &mut bench, &[1, 2], 20, 2000);
    let count = |tenant| {
        let sent = bench.sent.iter().flat_map(|c| c.requests.iter());
        sent.filter(|r| r.tenant == TenantId(tenant)).count() as f64
    };
    let (one, two) = (count(1), count(2));
    let ratio = one / two;
    assert!((2.8..=3.2).contains(&ratio), "{one} / {two}");
    // One 4 KiB sequential read is modelled at 111958 ns: about 8932/s.
    let capacity = 2.0 * 1e9 / 111_958.0;
    assert!(
        (one + two - capacity).abs() < capacity * 0.05,
        "{} vs {capacity}",
        one + two
    );
}

#[test]
fn settings_are_the_upstream_keys() {
    let mut config = IocostConfig::default();
    apply_pairs(
        &mut config,
        "rpct=99.5,rlat=5ms,wlat=10000,min=50,max=150.25,rbps=1000000",
    )
    .unwrap();
    assert_eq!(config.pct_ppm[0], 995_000);
    assert_eq!(config.lat, [Nanos::from_millis(5), Nanos::from_millis(10)]);
    assert_eq!(
        (config.vrate_min_ppm, config.vrate_max_ppm),
        (500_000, 1_502_500)
    );
    assert!(apply_pairs(&mut config, "min=200,max=100").is_err());
    assert!(apply_pairs(&mut config, "rpct=101").is_err());
    assert!(apply_pairs(&mut config, "tenant.3.weight=0").is_err());
    assert!(apply_pairs(&mut config, "cost=1").is_err());
}
