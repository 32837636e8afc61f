//! Property tests over random request streams, random devices and random
//! configurations.
//!
//! The harness is a tiny event loop with a fake device: a number of slots and a
//! latency per request. It calls `dispatch` only after an arrival or when
//! `complete` / `tick` return [`Retry::Dispatch`], so a scheduler that forgets
//! to ask for a retry leaves requests stuck and fails the liveness property.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use proptest::prelude::*;

use crate::config::apply_pairs;
use crate::limiter::{credit_cap_ticks, LimiterKind};
use crate::policy;
use crate::policy::fifo::{Fifo, FifoConfig};
use crate::policy::netflix::{Netflix, NetflixConfig};
use crate::request::{Command, Dispatch, Op, Outcome, Request};
use crate::scheduler::{DeviceView, Retry, Scheduler};
use crate::units::Nanos;

#[derive(Clone, Debug)]
struct Arrival {
    at: Nanos,
    request: Request,
    latency: Nanos,
}

#[derive(Clone, Debug)]
struct Sent {
    at: Nanos,
    op: Op,
    ids: Vec<u64>,
    bytes: u64,
    /// Offset and length of each request, as sent.
    ranges: Vec<(u64, u64)>,
    /// Commands of the class in the device, this one included.
    class_in_flight: u32,
}

#[derive(Debug, Default)]
struct Trace {
    sent: Vec<Sent>,
    completions: HashMap<u64, u32>,
    completed_at: HashMap<u64, Nanos>,
    idle_at_end: bool,
    end: Nanos,
}

/// Runs `arrivals` through `sched` on a device with `slots` slots; gives up
/// `patience` after the last arrival.
fn run(sched: &mut dyn Scheduler, arrivals: &[Arrival], slots: u32, patience: Nanos) -> Trace {
    let latency: HashMap<u64, Nanos> = arrivals
        .iter()
        .map(|a| (a.request.id.0, a.latency))
        .collect();
    let deadline = arrivals.last().map_or(Nanos::ZERO, |a| a.at) + patience;
    let mut trace = Trace::default();
    let mut device: BinaryHeap<Reverse<(Nanos, usize)>> = BinaryHeap::new();
    let mut commands: Vec<Option<Command>> = Vec::new();
    let mut in_flight = [0u32; 4];
    let mut next = 0;
    loop {
        let timer = (next < arrivals.len() || !sched.is_idle())
            .then(|| sched.next_timer())
            .flatten();
        let candidates = [
            arrivals.get(next).map(|a| a.at),
            device.peek().map(|r| r.0 .0),
            timer,
        ];
        let Some(now) = candidates.into_iter().flatten().min() else {
            break;
        };
        if now > deadline {
            break;
        }
        let mut retry = false;
        while let Some(&Reverse((at, slot))) = device.peek() {
            if at != now {
                break;
            }
            device.pop();
            let command = commands[slot].take().expect("a command completes once");
            in_flight[command.op.index()] -= 1;
            for r in &command.requests {
                *trace.completions.entry(r.id.0).or_default() += 1;
                trace.completed_at.insert(r.id.0, now);
            }
            let answer = sched.complete(&command.completion(Outcome::Ok), now);
            retry |= answer == Retry::Dispatch;
            assert_idle_is_true(sched, answer, now, slots, device.len() as u32);
        }
        while next < arrivals.len() && arrivals[next].at == now {
            sched.enqueue(arrivals[next].request.clone(), now);
            next += 1;
            retry = true;
        }
        if timer.is_some_and(|t| t <= now) {
            let answer = sched.tick(now);
            retry |= answer == Retry::Dispatch;
            assert_idle_is_true(sched, answer, now, slots, device.len() as u32);
        }
        while retry {
            let view = DeviceView::new(slots, device.len() as u32);
            match sched.dispatch(now, view) {
                None => retry = false,
                Some(Dispatch::CompletedWithoutDevice(r)) => {
                    *trace.completions.entry(r.id.0).or_default() += 1;
                    trace.completed_at.insert(r.id.0, now);
                }
                Some(Dispatch::ToDevice(command)) => {
                    assert!(view.accepts(), "dispatched into a full device");
                    let op = command.op;
                    in_flight[op.index()] += 1;
                    let slowest = command
                        .requests
                        .iter()
                        .map(|r| latency[&r.id.0])
                        .max()
                        .unwrap();
                    trace.sent.push(Sent {
                        at: now,
                        op,
                        ids: command.requests.iter().map(|r| r.id.0).collect(),
                        bytes: command.bytes().0,
                        ranges: command
                            .requests
                            .iter()
                            .map(|r| (r.offset.0, r.len.0))
                            .collect(),
                        class_in_flight: in_flight[op.index()],
                    });
                    device.push(Reverse((now + slowest, commands.len())));
                    commands.push(Some(command));
                }
            }
        }
        trace.end = now;
    }
    trace.idle_at_end = sched.is_idle() && next == arrivals.len();
    trace
}

/// `Retry::Idle` promises that nothing waits: a dispatch now must find nothing.
fn assert_idle_is_true(
    sched: &mut dyn Scheduler,
    answer: Retry,
    now: Nanos,
    slots: u32,
    in_flight: u32,
) {
    if answer == Retry::Idle {
        let view = DeviceView::new(slots, in_flight);
        assert_eq!(
            sched.dispatch(now, view),
            None,
            "Retry::Idle with work waiting"
        );
    }
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![5 => Just(Op::Read), 3 => Just(Op::Write), 1 => Just(Op::Trim), 1 => Just(Op::Flush)]
}

/// Streams of up to `max` requests over a 64 MiB span, so overlaps happen.
fn arrivals(max: usize) -> impl Strategy<Value = Vec<Arrival>> {
    arrivals_over(max, 64 << 11)
}

/// Streams of up to `max` requests starting in the first `sectors` sectors.
fn arrivals_over(max: usize, sectors: u64) -> impl Strategy<Value = Vec<Arrival>> {
    let one = (
        0u64..3_000,
        op_strategy(),
        0u64..sectors,
        1u64..256,
        20u64..20_000,
    );
    prop::collection::vec(one, 1..max).prop_map(|items| {
        let mut at = Nanos::ZERO;
        items
            .into_iter()
            .enumerate()
            .map(|(id, (gap_us, op, sector, sectors, latency_us))| {
                at += Nanos::from_micros(gap_us);
                let (offset, len) = match op {
                    Op::Flush => (0, 0),
                    _ => (sector * 512, sectors * 512),
                };
                Arrival {
                    at,
                    request: Request::new(id as u64, op, offset, len, at),
                    latency: Nanos::from_micros(latency_us),
                }
            })
            .collect()
    })
}

/// Random Netflix settings: bias, quanta, composed write and read limiters,
/// trim batching and advisory trims.
fn netflix_settings() -> impl Strategy<Value = String> {
    let limiter = prop::sample::select(vec![
        "none",
        "queue_depth",
        "iops",
        "bandwidth",
        "queue_depth+iops",
        "bandwidth+queue_depth",
        "iops+bandwidth+queue_depth",
    ]);
    (
        prop::sample::select(vec![0u32, 1, 3, 100]),
        prop::sample::select(vec![10u32, 100, 200, 1000]),
        (limiter.clone(), 1u64..8, 20u64..5_000, 500u64..100_000),
        (limiter, 1u64..8, 20u64..5_000, 500u64..100_000),
        (0u32..6, 1u32..20, 0u32..4),
    )
        .prop_map(|(bias, quanta, w, r, (goal, ticks, extra))| {
            // Advisory trims off, or at least the batching goal.
            let advisory = if extra == 0 { 0 } else { goal.max(1) + extra };
            let class = |name: &str, (lim, qd, iops, bw): (&str, u64, u64, u64)| {
                let mut s = format!("{name}.limiter={lim}");
                // The kinds listed (a kind not listed is refused).
                for (kind, value) in [("queue_depth", qd), ("iops", iops), ("bandwidth", bw)] {
                    if lim.split('+').any(|k| k == kind) {
                        s += &format!(",{name}.{kind}.current={value}");
                    }
                }
                s
            };
            format!(
                "read_bias={bias},quanta={quanta},{},{},trim_goal={goal},trim_ticks={ticks},trim_advisory={advisory}",
                class("write", w),
                class("read", r),
            )
        })
}

fn netflix(settings: &str) -> (Netflix, NetflixConfig) {
    let mut config = NetflixConfig::default();
    apply_pairs(&mut config, settings).expect("generated settings are valid");
    (Netflix::new(config.clone()), config)
}

/// Time enough for any generated stream to drain through its limits.
const PATIENCE: Nanos = Nanos::from_secs(120);

fn assert_completes_exactly_once(trace: &Trace, arrivals: &[Arrival]) {
    assert!(
        trace.idle_at_end,
        "requests still queued or in flight at {:?}",
        trace.end
    );
    for a in arrivals {
        assert_eq!(
            trace.completions.get(&a.request.id.0),
            Some(&1),
            "{:?}",
            a.request
        );
    }
    assert_eq!(trace.completions.len(), arrivals.len());
}

fn assert_ordering_rules(trace: &Trace, arrivals: &[Arrival]) {
    let mut sent_index = HashMap::new();
    for (i, s) in trace.sent.iter().enumerate() {
        for id in &s.ids {
            sent_index.insert(*id, (i, s.at));
        }
    }
    for a in arrivals {
        let r = &a.request;
        let Some(&(index, at)) = sent_index.get(&r.id.0) else {
            continue;
        };
        let earlier_writes = arrivals[..r.id.0 as usize]
            .iter()
            .filter(|w| w.request.op == Op::Write);
        for w in earlier_writes {
            match r.op {
                Op::Flush => {
                    let done = trace.completed_at[&w.request.id.0];
                    assert!(
                        done <= at,
                        "flush {} sent at {at:?} before write {} completed",
                        r.id.0,
                        w.request.id.0
                    );
                }
                Op::Read if w.request.overlaps(r) => {
                    let write_index = sent_index[&w.request.id.0].0;
                    assert!(
                        write_index < index,
                        "read {} overtook write {}",
                        r.id.0,
                        w.request.id.0
                    );
                }
                _ => {}
            }
        }
    }
}

/// A trim sent never reaches a write queued after it (the write cut it), nor
/// goes beyond what was asked.
fn assert_trims_spare_later_writes(trace: &Trace, arrivals: &[Arrival]) {
    for (at, start, len, id) in sent_trims(trace, arrivals) {
        let later_writes = arrivals[id..]
            .iter()
            .filter(|w| w.request.op == Op::Write && w.at <= at);
        for w in later_writes {
            assert!(
                !overlap(&w.request, start, len),
                "trim {id} sent at {at:?} as {start}+{len} over write {} queued after it",
                w.request.id.0
            );
        }
    }
}

/// A trim never reaches the device after a write queued after it over the
/// same bytes: the drive would unmap the new data.
fn assert_trims_go_before_later_writes(trace: &Trace, arrivals: &[Arrival]) {
    let sent_at: HashMap<u64, usize> = trace
        .sent
        .iter()
        .enumerate()
        .flat_map(|(i, s)| s.ids.iter().map(move |id| (*id, i)))
        .collect();
    for (index, sent) in trace
        .sent
        .iter()
        .enumerate()
        .filter(|(_, s)| s.op == Op::Trim)
    {
        for (id, &(start, len)) in sent.ids.iter().zip(&sent.ranges) {
            let later_writes = arrivals[*id as usize..]
                .iter()
                .filter(|w| w.request.op == Op::Write && sent_at[&w.request.id.0] < index);
            for w in later_writes {
                assert!(
                    !overlap(&w.request, start, len),
                    "trim {id} sent as {start}+{len} after write {} queued after it",
                    w.request.id.0
                );
            }
        }
    }
}

/// Every trim sent, as `(when, offset, length, id)`, checked to lie within
/// what was asked.
fn sent_trims(trace: &Trace, arrivals: &[Arrival]) -> Vec<(Nanos, u64, u64, usize)> {
    let mut trims = Vec::new();
    for sent in trace.sent.iter().filter(|s| s.op == Op::Trim) {
        for (id, &(start, len)) in sent.ids.iter().zip(&sent.ranges) {
            let asked = &arrivals[*id as usize].request;
            assert!(
                asked.offset.0 <= start && start + len <= asked.offset.0 + asked.len.0,
                "trim {id} sent as {start}+{len}, asked {asked:?}"
            );
            trims.push((sent.at, start, len, *id as usize));
        }
    }
    trims
}

fn overlap(request: &Request, start: u64, len: u64) -> bool {
    let (r_start, r_end) = (request.offset.0, request.offset.0 + request.len.0);
    r_start < start + len && start < r_end
}

fn assert_limits_hold(trace: &Trace, config: &NetflixConfig) {
    for op in [Op::Read, Op::Write, Op::Trim] {
        let class = &config.classes[op.index()];
        let limits = class.effective_limits();
        let sent: Vec<&Sent> = trace.sent.iter().filter(|s| s.op == op).collect();
        for kind in &class.limiters {
            let current = limits[kind.index()].current;
            match kind {
                LimiterKind::QueueDepth => {
                    let worst = sent.iter().map(|s| s.class_in_flight).max().unwrap_or(0);
                    assert!(
                        u64::from(worst) <= current,
                        "{} queue depth {worst} > {current}",
                        op.name()
                    );
                }
                LimiterKind::Iops => {
                    let per_tick = current as f64 / f64::from(config.quanta);
                    let cap_ticks = credit_cap_ticks(config.quanta) as f64;
                    let slack = (cap_ticks * per_tick).max(1.0) + per_tick + 1.0;
                    assert_rate(&sent, |_| 1.0, current as f64, slack, op);
                }
                LimiterKind::Bandwidth => {
                    let per_tick = current as f64 * 1000.0 / f64::from(config.quanta);
                    let biggest = sent.iter().map(|s| s.bytes).max().unwrap_or(0) as f64;
                    let cap_ticks = credit_cap_ticks(config.quanta) as f64;
                    let slack = cap_ticks * per_tick + per_tick + biggest;
                    assert_rate(
                        &sent,
                        |s| s.bytes as f64,
                        current as f64 * 1000.0,
                        slack,
                        op,
                    );
                }
            }
        }
    }
}

/// Over every window of one second or more that starts at a dispatch, what
/// was sent stays within `rate * window + slack`.
fn assert_rate(sent: &[&Sent], amount: impl Fn(&Sent) -> f64, rate: f64, slack: f64, op: Op) {
    for (i, start) in sent.iter().enumerate() {
        let mut total = 0.0;
        for s in &sent[i..] {
            total += amount(s);
            let window = (s.at - start.at).as_secs_f64().max(1.0);
            assert!(
                total <= rate * window + slack + 1e-6,
                "{}: {total} sent in {window} s against {rate}/s + {slack}",
                op.name()
            );
        }
    }
}

/// Builds a policy from a generated spec, which must be valid.
fn build(spec: &str) -> Box<dyn Scheduler> {
    policy::build(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// Completes everything exactly once, keeps the ordering rules, never
/// sends a trim over a later write, and never answers `Retry::Idle` with
/// work waiting.
fn assert_live_and_ordered(spec: &str, stream: &[Arrival], slots: u32) -> Trace {
    let mut sched = build(spec);
    let trace = run(sched.as_mut(), stream, slots, PATIENCE);
    assert_completes_exactly_once(&trace, stream);
    assert_ordering_rules(&trace, stream);
    assert_trims_go_before_later_writes(&trace, stream);
    trace
}

fn deadline_spec() -> impl Strategy<Value = String> {
    (1u32..20, 0u32..4, 1u64..600, 1u64..6000).prop_map(|(batch, starved, r, w)| {
        format!(
            "deadline:fifo_batch={batch},writes_starved={starved},read_expire={r},write_expire={w}"
        )
    })
}

fn kyber_spec() -> impl Strategy<Value = String> {
    (50u64..5_000, 200u64..20_000)
        .prop_map(|(r, w)| format!("kyber:read_lat_nsec={r}us,write_lat_nsec={w}us"))
}

fn wbt_spec() -> impl Strategy<Value = String> {
    (
        0u64..5_000,
        0u32..2,
        prop::sample::select(vec![0u32, 1, 2, 4, 32]),
    )
        .prop_map(|(lat, wc, qd)| {
            format!("wbt:wbt_lat_usec={lat},write_cache={wc},queue_depth={qd}")
        })
}

/// Limits loose enough that any generated stream (up to 250 requests of up
/// to 128 KiB) drains well within the harness's patience.
fn throttle_spec() -> impl Strategy<Value = String> {
    let iops = prop::sample::select(vec![0u64, 5, 100, 5_000]);
    let bps = prop::sample::select(vec![0u64, 400_000, 1_000_000, 100_000_000]);
    (iops.clone(), iops, bps.clone(), bps, 1u64..200).prop_map(|(ri, wi, rb, wb, slice)| {
        format!("throttle:riops={ri},wiops={wi},tenant.0.rbps={rb},tenant.0.wbps={wb},throtl_slice={slice}")
    })
}

/// Latency targets from tight to loose, percentiles from off to strict.
fn iocost_spec() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![0u32, 50, 90, 99]),
        100u64..50_000,
        prop::sample::select(vec!["1", "25", "100"]),
        1u32..1000,
    )
        .prop_map(|(pct, lat, min, weight)| {
            format!("iocost:rpct={pct},wpct={pct},rlat={lat},wlat={lat},min={min},weight={weight}")
        })
}

fn steer_spec() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["p99<=2x", "p90<=3x", "p99.9<=500us", "p50<=5ms"]),
        prop::sample::select(vec![1u64, 100, 10_000]),
        1u32..8,
        1u64..2_000,
        prop::sample::select(vec!["0s", "30ms", "5s"]),
    )
        .prop_map(|(objective, rate, depth, deadline_ms, hold)| {
            format!(
                "steer:objective={objective},min_rate=1,start_rate={rate},write_depth={depth},\
                 write_deadline={deadline_ms}ms,trim_deadline={deadline_ms}ms,trim_hold={hold}"
            )
        })
}

/// Spreads a stream over `tenants` tenants, for the per-tenant policies.
fn spread_over_tenants(mut stream: Vec<Arrival>, tenants: u32) -> Vec<Arrival> {
    for a in &mut stream {
        a.request.tenant = crate::request::TenantId(a.request.id.0 as u32 % tenants);
    }
    stream
}

/// Targets from far below the device's latencies (peers throttled to depth
/// 1 and delayed) to above them, on some tenants or all.
fn iolatency_spec() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![10u64, 500, 5_000, 50_000]),
        prop::sample::select(vec!["target.0", "target.1", "target"]),
        prop::sample::select(vec![0u32, 1, 4, 64]),
    )
        .prop_map(|(target_us, key, nr)| format!("iolatency:{key}={target_us},nr_requests={nr}"))
}

/// Weights, idling from off to long, raising, sync writes, cgroup
/// asymmetry, budgets from tiny to upstream's, slots from none to queueing.
fn bfq_spec() -> impl Strategy<Value = String> {
    (
        (1u32..1000, 1u32..1000),
        prop::sample::select(vec![0u64, 1, 8, 50]),
        (0u32..2, 0u32..2, 0u32..2, 0u32..2),
        prop::sample::select(vec![0u64, 1, 64, 16384]),
        1u64..200,
    )
        .prop_map(
            |((w0, w1), idle, (lowlat, sync, groups, strict), budget, timeout)| {
                format!(
                    "bfq:weight.0={w0},weight.1={w1},slice_idle={idle},low_latency={lowlat},\
                 sync_writes={sync},groups={groups},strict_guarantees={strict},\
                 max_budget={budget},timeout_sync={timeout}"
                )
            },
        )
}

/// A property test a policy: under any settings of `$spec`, every request
/// completes once and in order (`over tenants`: spread over one to three).
macro_rules! completes_everything_once_in_order {
    ($($name:ident: $spec:ident;)*) => {$(
        proptest! {
            #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

            #[test]
            fn $name(stream in arrivals(250), spec in $spec(), slots in 1u32..32) {
                assert_live_and_ordered(&spec, &stream, slots);
            }
        }
    )*};
    (over tenants: $($name:ident: $spec:ident;)*) => {$(
        proptest! {
            #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

            #[test]
            fn $name(
                stream in arrivals(250),
                spec in $spec(),
                tenants in 1u32..4,
                slots in 1u32..32,
            ) {
                let stream = spread_over_tenants(stream, tenants);
                assert_live_and_ordered(&spec, &stream, slots);
            }
        }
    )*};
}

completes_everything_once_in_order! {
    over tenants:
    bfq_completes_everything_once_in_order: bfq_spec;
    iolatency_completes_everything_once_in_order: iolatency_spec;
}

completes_everything_once_in_order! {
    deadline_completes_everything_once_in_order: deadline_spec;
    kyber_completes_everything_once_in_order: kyber_spec;
    wbt_completes_everything_once_in_order: wbt_spec;
    throttle_completes_everything_once_in_order: throttle_spec;
    iocost_completes_everything_once_in_order: iocost_spec;
}

/// Any policy, with any of its generated settings.
fn any_spec() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("fifo".to_string()),
        netflix_settings().prop_map(|s| format!("netflix:{s}")),
        deadline_spec(),
        kyber_spec(),
        wbt_spec(),
        throttle_spec(),
        iocost_spec(),
        steer_spec(),
        iolatency_spec(),
        bfq_spec(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Over 1 MiB, where trims and writes overlap often, no policy sends a
    /// trim after a write queued after it over the same bytes, whichever
    /// tenants they come from (a throttle queues each tenant apart).
    #[test]
    fn no_policy_sends_a_trim_after_a_later_write_over_it(
        stream in arrivals_over(120, 1 << 11),
        spec in any_spec(),
        tenants in 1u32..4,
        slots in 1u32..32,
    ) {
        let stream = spread_over_tenants(stream, tenants);
        assert_live_and_ordered(&spec, &stream, slots);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn steer_completes_everything_once_in_order(
        stream in arrivals(250),
        spec in steer_spec(),
        slots in 1u32..32,
    ) {
        let trace = assert_live_and_ordered(&spec, &stream, slots);
        assert_trims_spare_later_writes(&trace, &stream);
    }

    /// However low the limit, a write leaves the scheduler within the write
    /// deadline plus one tick, or the report counts it (the deadline yields
    /// to an owed objective; a device with a slot for everything; no
    /// flushes, which wait for the device by rule).
    #[test]
    fn steer_never_holds_a_write_past_its_deadline_uncounted(
        stream in arrivals(250),
        deadline_ms in 1u64..300,
        quanta in prop::sample::select(vec![50u32, 200, 1000]),
    ) {
        let stream: Vec<Arrival> = stream
            .into_iter()
            .filter(|a| a.request.op != Op::Flush)
            .enumerate()
            .map(|(id, mut a)| { a.request.id = crate::request::RequestId(id as u64); a })
            .collect();
        prop_assume!(!stream.is_empty());
        let deadline = Nanos::from_millis(deadline_ms);
        let spec = format!(
            "steer:min_rate=1,start_rate=1,write_deadline={deadline_ms}ms,\
             trim_deadline={deadline_ms}ms,quanta={quanta}"
        );
        let mut sched = build(&spec);
        let trace = run(sched.as_mut(), &stream, 1024, PATIENCE);
        assert_completes_exactly_once(&trace, &stream);
        let tick = Nanos(1_000_000_000 / u64::from(quanta));
        let late = trace
            .sent
            .iter()
            .filter(|s| s.op == Op::Write)
            .flat_map(|s| s.ids.iter().map(|id| s.at - stream[*id as usize].at))
            .filter(|waited| *waited > deadline + tick)
            .count();
        let notes = sched.notes();
        let counted = notes.iter().find_map(|n| {
            n.strip_prefix("steer held ")?.split(' ').next()?.parse::<usize>().ok()
        });
        prop_assert_eq!(counted.unwrap_or(0), late, "{:?}", notes);
    }

    #[test]
    fn netflix_completes_everything_once_and_keeps_its_limits_and_order(
        stream in arrivals(250),
        settings in netflix_settings(),
        slots in 1u32..32,
    ) {
        let (mut sched, config) = netflix(&settings);
        let trace = run(&mut sched, &stream, slots, PATIENCE);
        assert_completes_exactly_once(&trace, &stream);
        assert_ordering_rules(&trace, &stream);
        assert_trims_spare_later_writes(&trace, &stream);
        assert_limits_hold(&trace, &config);
    }

    #[test]
    fn fifo_completes_everything_once_in_order(stream in arrivals(250), slots in 1u32..32) {
        let mut sched = Fifo::new(FifoConfig::default());
        let trace = run(&mut sched, &stream, slots, PATIENCE);
        assert_completes_exactly_once(&trace, &stream);
        assert_ordering_rules(&trace, &stream);
        assert_trims_spare_later_writes(&trace, &stream);
        let trims_in_flight = trace.sent.iter().filter(|s| s.op == Op::Trim).map(|s| s.class_in_flight).max();
        prop_assert!(trims_in_flight.unwrap_or(0) <= 1);
    }

    #[test]
    fn steering_never_strands_a_request(
        stream in arrivals(150),
        start in 1u64..50,
        kind in prop::sample::select(vec!["queue_depth", "iops", "bandwidth"]),
        slots in 1u32..32,
    ) {
        let settings = format!(
            "read_bias=10,write.limiter={kind},write.current={start},write.max=100,\
             control.type=read_latency,control.steer_interval=50ms,control.lolat=1ms,control.hilat=2ms"
        );
        let (mut sched, _) = netflix(&settings);
        let trace = run(&mut sched, &stream, slots, PATIENCE);
        assert_completes_exactly_once(&trace, &stream);
    }

    #[test]
    fn the_read_bias_ratio_is_exact_while_both_classes_wait(
        reads in 1usize..200,
        writes in 1usize..50,
        bias in 1u32..12,
    ) {
        let (mut sched, _) = netflix(&format!("read_bias={bias}"));
        let mut id = 0u64;
        for (count, op) in [(writes, Op::Write), (reads, Op::Read)] {
            for _ in 0..count {
                sched.enqueue(Request::new(id, op, id << 20, 4096, Nanos::ZERO), Nanos::ZERO);
                id += 1;
            }
        }
        let mut order = String::new();
        while let Some(Dispatch::ToDevice(c)) = sched.dispatch(Nanos(1), DeviceView::new(u32::MAX, 0)) {
            order.push(if c.op == Op::Read { 'R' } else { 'W' });
        }
        let mut expected = String::new();
        let (mut r, mut w) = (reads, writes);
        while r > 0 && w > 0 {
            let burst = r.min(bias as usize);
            expected += &"R".repeat(burst);
            r -= burst;
            if r == 0 { break; }
            expected.push('W');
            w -= 1;
        }
        expected += &"R".repeat(r);
        expected += &"W".repeat(w);
        prop_assert_eq!(order, expected);
    }
}
