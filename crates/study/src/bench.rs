//! Benchmark: what a policy costs per request, on one core.
//!
//! Each run pushes a pre-generated stream through one scheduler and a
//! zero-cost fake device: every step one request arrives (enqueue), commands
//! whose service time has passed complete (complete), the scheduler fills free
//! device slots (dispatch), and ticks run when due. The device serves each
//! command in a fixed time, so about 24 of its 32 slots are busy and limiters
//! make queues form. The figure is wall
//! time over requests, so it covers enqueue + dispatch + complete + ticks and
//! all statistics. The median of several runs is reported (this machine is
//! shared and noisy).

use std::collections::VecDeque;
use std::hint::black_box;
use std::time::Instant;

use iosteer_device::SplitMix64;
use iosteer_sched::{
    policy, Command, DeviceView, Dispatch, Nanos, Op, Outcome, Request, Scheduler,
};
use iosteer_workload::round;
use serde::Serialize;
use thiserror::Error;

pub mod sim;

/// A spec to measure that does not build.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum BenchError {
    #[error("scheduler `{spec}`: {source}")]
    Scheduler {
        spec: String,
        source: iosteer_sched::ConfigError,
    },
    #[error("unknown case `{name}`; the cases: {cases}")]
    UnknownCase { name: String, cases: String },
    #[error("{0}")]
    Simulation(String),
}

/// Device slots of the fake device: SATA NCQ depth.
const DEVICE_SLOTS: u32 = 32;
/// Simulated time between arrivals: 100k requests per second.
const STEP: Nanos = Nanos::from_micros(10);
/// Service time of every command: 24 steps.
const SERVICE: Nanos = Nanos::from_micros(240);
/// Span of random reads: a 64 GiB drive.
const SPAN: u64 = 64 << 30;

/// The specs measured by default. The last one turns on every limiter of
/// every class and the read-latency control loop, with limits above the
/// offered load so requests keep flowing (a limit below it would only measure
/// a growing queue).
pub const DEFAULT_POLICIES: &[&str] = &[
    "fifo",
    "netflix",
    "netflix:read_bias=100",
    "netflix:read_bias=100,\
     read.limiter=queue_depth+iops+bandwidth,read.queue_depth.current=32,\
     read.iops.max=1000000,read.iops.current=1000000,\
     read.bandwidth.max=100000000,read.bandwidth.current=100000000,\
     write.limiter=queue_depth+iops+bandwidth,write.queue_depth.max=16,\
     write.iops.current=100000,write.bandwidth.max=10000000,write.bandwidth.current=5000000,\
     trim.limiter=queue_depth+iops,trim.iops.current=10000,\
     control.type=read_latency,control.steer_interval=100ms",
];

#[derive(Debug, Serialize)]
pub struct BenchResult {
    pub policy: String,
    /// Median over the runs.
    pub ns_per_request: f64,
    pub requests: u64,
    pub runs: Vec<f64>,
}

/// A deterministic stream: 70% 4 KiB random reads, 25% 128 KiB sequential
/// writes, 4% 1 MiB trims, 1% flushes.
pub fn workload(requests: u64) -> Vec<Request> {
    let mut rng = SplitMix64(0x105_7EE2);
    let mut write_cursor = 0u64;
    (0..requests)
        .map(|id| {
            let now = Nanos(id * STEP.0);
            match rng.next_u64() % 100 {
                0..=69 => Request::new(
                    id,
                    Op::Read,
                    (rng.next_u64() % (SPAN >> 12)) << 12,
                    4096,
                    now,
                ),
                70..=94 => {
                    write_cursor = (write_cursor + (128 << 10)) % SPAN;
                    Request::new(id, Op::Write, write_cursor, 128 << 10, now)
                }
                95..=98 => Request::new(
                    id,
                    Op::Trim,
                    (rng.next_u64() % (SPAN >> 20)) << 20,
                    1 << 20,
                    now,
                ),
                _ => Request::new(id, Op::Flush, 0, 0, now),
            }
        })
        .collect()
}

/// One run; returns the wall time per request in nanoseconds.
fn run_once(sched: &mut dyn Scheduler, stream: Vec<Request>) -> f64 {
    let requests = stream.len();
    let mut device = FakeDevice::default();
    let started = Instant::now();
    for request in stream {
        let now = request.submitted;
        device.step(sched, now);
        sched.enqueue(request, now);
        device.fill(sched, now);
    }
    let mut now = Nanos(requests as u64 * STEP.0);
    while !sched.is_idle() {
        now += STEP;
        device.step(sched, now);
    }
    started.elapsed().as_nanos() as f64 / requests as f64
}

/// Serves every command in `SERVICE`, in order.
#[derive(Default)]
struct FakeDevice {
    in_service: VecDeque<(Nanos, Command)>,
}

impl FakeDevice {
    /// Completes what is due and runs a due tick, dispatching when asked.
    fn step(&mut self, sched: &mut dyn Scheduler, now: Nanos) {
        let mut retry = false;
        if sched.next_timer().is_some_and(|t| t <= now) {
            retry |= sched.tick(now).should_dispatch();
        }
        while self.in_service.front().is_some_and(|(due, _)| *due <= now) {
            let (_, done) = self.in_service.pop_front().expect("checked");
            retry |= sched
                .complete(&done.completion(Outcome::Ok), now)
                .should_dispatch();
            black_box(done);
        }
        if retry {
            self.fill(sched, now);
        }
    }

    fn fill(&mut self, sched: &mut dyn Scheduler, now: Nanos) {
        loop {
            let view = DeviceView::new(DEVICE_SLOTS, self.in_service.len() as u32);
            match sched.dispatch(now, view) {
                None => break,
                Some(Dispatch::ToDevice(command)) => {
                    self.in_service.push_back((now + SERVICE, command))
                }
                Some(Dispatch::CompletedWithoutDevice(trim)) => {
                    black_box(trim);
                }
            }
        }
    }
}

/// The median of `values` (the upper one of an even count; 0 when empty).
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}

/// Measures each spec (every one of [`DEFAULT_POLICIES`] when none) `repeat` times over `requests` requests.
pub fn bench(
    specs: &[String],
    requests: u64,
    repeat: usize,
) -> Result<Vec<BenchResult>, BenchError> {
    let defaults: Vec<String> = DEFAULT_POLICIES.iter().map(|s| s.to_string()).collect();
    let specs = if specs.is_empty() { &defaults } else { specs };
    let stream = workload(requests);
    let mut results = Vec::new();
    for spec in specs {
        policy::build(spec).map_err(|source| BenchError::Scheduler {
            spec: spec.clone(),
            source,
        })?;
        let mut runs: Vec<f64> = (0..repeat.max(1))
            .map(|_| {
                let mut sched = policy::build(spec).expect("validated above");
                run_once(sched.as_mut(), stream.clone())
            })
            .collect();
        let median = median(&runs);
        runs.iter_mut().for_each(|r| *r = round(*r, 1));
        results.push(BenchResult {
            policy: spec.clone(),
            ns_per_request: round(median, 1),
            requests,
            runs,
        });
    }
    Ok(results)
}

/// The terminal table of [`bench`](fn@bench) results: cost per request, one line a policy.
pub fn table(results: &[BenchResult]) -> String {
    let mut out = format!("{:>14}  {:>10}  policy\n", "ns/request", "requests");
    for r in results {
        out += &format!(
            "{:>14.1}  {:>10}  {}\n",
            r.ns_per_request, r.requests, r.policy
        );
    }
    out + &format!(
        "(median of {} runs each; enqueue + dispatch + complete on one core)\n",
        results.first().map_or(0, |r| r.runs.len())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workload_has_the_documented_mix() {
        let stream = workload(100_000);
        let share = |op| stream.iter().filter(|r| r.op == op).count() as f64 / 1000.0;
        assert!((share(Op::Read) - 70.0).abs() < 1.0);
        assert!((share(Op::Write) - 25.0).abs() < 1.0);
        assert!((share(Op::Trim) - 4.0).abs() < 0.5);
        assert!(stream.iter().all(|r| r.end() <= SPAN));
    }

    #[test]
    fn every_default_policy_drains_the_stream() {
        let stream = workload(5_000);
        for spec in DEFAULT_POLICIES {
            let mut sched = policy::build(spec).unwrap();
            run_once(sched.as_mut(), stream.clone());
            let stats = sched.stats();
            let completed: u64 = Op::ALL.iter().map(|op| stats.class(*op).completed).sum();
            assert_eq!(completed, 5_000, "{spec}");
        }
    }
}
