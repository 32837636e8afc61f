//! DiskSim's synthetic generator against our drive, for bench/vs-disksim.sh:
//! one process, open arrivals (inter-arrival times uniform on [0, 1] ms),
//! request sizes exponential with a mean of 8 sectors rounded up to whole
//! 8-sector blocks (a zero-block draw is drawn again), addresses over the
//! first 7,018,904 sectors. A sequential run continues where the last request
//! ended, with the same size, until it would pass the end; a random one draws
//! address and size anew. The drive starts full, every logical page written
//! once in order (DiskSim's starting state). Prints the mean response time
//! (arrival to completion, waits for a device slot included).
//!
//!     cargo run --release -p iosteer-device --example disksim_synth -- \
//!         DRIVE.toml seq|rand read|write REQUESTS [SEED]

use std::collections::VecDeque;

use iosteer_device::{Device, DeviceConfig, Finished, Precondition, StartState};
use iosteer_sched::{Command, Nanos, Op, Request};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The validation runs' address range, in 512-byte sectors.
const SECTORS_ADDRESSED: u64 = 7_018_904;
/// DiskSim's blocking factor: requests are whole 8-sector (4 KiB) blocks.
const BLOCK_SECTORS: u64 = 8;
/// Mean of the exponential request size, in sectors.
const MEAN_SIZE_SECTORS: f64 = 8.0;
/// Inter-arrival times are uniform on [0, this) ns (1 ms).
const MAX_GAP_NS: f64 = 1e6;
const SECTOR_BYTES: u64 = 512;

/// DiskSim's synthetic generator, one process.
struct Generator {
    rng: SmallRng,
    sequential: bool,
    blocks: u64,
    block: u64,
    count: u64,
}

impl Generator {
    fn new(sequential: bool, seed: u64) -> Generator {
        let mut g = Generator {
            rng: SmallRng::seed_from_u64(seed),
            sequential,
            blocks: SECTORS_ADDRESSED / BLOCK_SECTORS,
            block: 0,
            count: 0,
        };
        g.draw_random();
        g
    }

    /// A random address and size that fit before the end.
    fn draw_random(&mut self) {
        loop {
            self.block = self.rng.random_range(0..self.blocks);
            let sectors = (-MEAN_SIZE_SECTORS * (1.0 - self.rng.random::<f64>()).ln()) as u64;
            self.count = sectors.div_ceil(BLOCK_SECTORS);
            if self.count > 0 && self.block + self.count < self.blocks {
                return;
            }
        }
    }

    /// The next request's (gap ns, offset bytes, length bytes).
    fn next(&mut self) -> (u64, u64, u64) {
        let gap = (self.rng.random::<f64>() * MAX_GAP_NS) as u64;
        let request = (
            gap,
            self.block * BLOCK_SECTORS * SECTOR_BYTES,
            self.count * BLOCK_SECTORS * SECTOR_BYTES,
        );
        if self.sequential && self.block + 2 * self.count < self.blocks {
            self.block += self.count;
        } else {
            self.draw_random();
        }
        request
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [drive, pattern, direction, requests, rest @ ..] = args.as_slice() else {
        return Err("usage: disksim_synth DRIVE.toml seq|rand read|write REQUESTS [SEED]".into());
    };
    let sequential = match pattern.as_str() {
        "seq" => true,
        "rand" => false,
        _ => return Err(format!("{pattern}: expected seq or rand").into()),
    };
    let op = match direction.as_str() {
        "read" => Op::Read,
        "write" => Op::Write,
        _ => return Err(format!("{direction}: expected read or write").into()),
    };
    let requests: u64 = requests.parse()?;
    let seed: u64 = rest.first().map_or(Ok(1), |s| s.parse())?;
    let config = DeviceConfig::from_toml(&std::fs::read_to_string(drive)?, drive)?;
    let mut device = Device::new(config)?;
    let full_in_order = Precondition {
        state: StartState::Fill { percent: 100.0 },
        seed,
    };
    device.precondition(full_in_order)?;
    let mean = run(&mut device, Generator::new(sequential, seed), op, requests)?;
    let stats = device.stats();
    println!(
        "mean_ms {:.4} requests {requests} waf {:.3} gc_victims {}",
        mean.0 as f64 / 1e6 / requests.max(1) as f64,
        stats.write_amplification(),
        stats.ftl.gc_victims
    );
    Ok(())
}

/// Plays `requests` arrivals; returns the sum of response times.
fn run(
    device: &mut Device,
    mut generator: Generator,
    op: Op,
    requests: u64,
) -> Result<Nanos, Box<dyn std::error::Error>> {
    let (mut arrived, mut next_arrival) = (0u64, Nanos::ZERO);
    let mut waiting: VecDeque<Command> = VecDeque::new();
    let mut finished: Vec<Finished> = Vec::new();
    let (mut total, mut done) = (Nanos::ZERO, 0u64);
    while done < requests {
        let device_next = device.next_event();
        let arrival_next = (arrived < requests).then_some(next_arrival);
        let now = match (device_next, arrival_next) {
            (Some(d), Some(a)) => d.min(a),
            (d, a) => d.or(a).ok_or("the drive stopped with requests left")?,
        };
        if arrival_next == Some(now) {
            let (gap, offset, len) = generator.next();
            waiting.push_back(Command::single(
                Request::new(arrived, op, offset, len, now),
                now,
            ));
            arrived += 1;
            next_arrival = now + Nanos(gap);
        }
        finished.clear();
        device.advance(now, &mut finished);
        for f in &finished {
            total += f.at - f.command.requests[0].submitted;
            done += 1;
        }
        while device.view().accepts() {
            let Some(command) = waiting.pop_front() else {
                break;
            };
            device.submit(command, now)?;
        }
    }
    Ok(total)
}
