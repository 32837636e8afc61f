//! A server embedding iosteer: it stores numbered 64 KiB records in a file.
//! It first writes the records it will serve, then serves random reads of
//! them while it writes new records into the other half of the file, and
//! lets the `netflix` policy hold those writes to a bandwidth limit. The
//! writer listens to the policy's `pressure()` and waits instead of queueing
//! more, and every read checks that it got the bytes its record was written
//! with.
//!
//!     cargo run --release -p iosteer-engine --example embed [FILE] [WRITE_KB_PER_S]
//!
//! FILE defaults to a file in the temp directory (created, 64 MiB, removed
//! at the end); the write limit defaults to 20000 kB/s.

use std::time::{Duration, Instant};

use iosteer_engine::session::{Completion, Session};
use iosteer_engine::{Engine, EngineConfig, OpenOptionsSpec, Target};
use iosteer_sched::{policy, Nanos, Op, Outcome};

const RECORD: u64 = 64 << 10;
const RECORDS: u64 = 1024;
const RUN_FOR: Duration = Duration::from_secs(5);
/// The writer waits while a write queued now would wait longer than this.
const WRITE_PATIENCE: Nanos = Nanos::from_millis(50);
/// Reads the server keeps outstanding, as clients would.
const READERS: usize = 16;

/// A record's bytes: its number, repeated.
fn record_bytes(number: u64) -> Vec<u8> {
    let word = (number ^ 0x1057_ee50_0000_0000).to_le_bytes();
    word.iter().copied().cycle().take(RECORD as usize).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (path, temporary) = match args.next() {
        Some(path) => (path.into(), false),
        None => (std::env::temp_dir().join("iosteer-embed.img"), true),
    };
    let limit: u64 = args.next().map_or(Ok(20_000), |s| s.parse())?;
    let open = OpenOptionsSpec {
        size: Some(RECORD * RECORDS),
        writes: true,
        direct: true,
        ..OpenOptionsSpec::default()
    };
    let target = Target::open(&path, &open)?;
    let config = EngineConfig {
        queue_depth: 32,
        max_io_bytes: RECORD as usize,
        keep_read_data: true,
        ..EngineConfig::default()
    };
    let sched = policy::build(&format!(
        "netflix:write.limiter=bandwidth,write.current={limit}"
    ))?;
    let mut server = Server {
        session: Session::new(Engine::new(target, &config)?, sched),
        written: 0,
        reads_checked: 0,
        bad_reads: 0,
        writer_waits: 0,
        rng: 0x2545_f491_4f6c_dd1d,
    };
    server.store_served_records()?;
    server.written = 0;
    server.run()?;
    let stats = server.session.stats();
    println!(
        "wrote {} records ({:.1} MB/s under a {limit} kB/s limit); the writer waited {} times",
        server.written,
        (server.written * RECORD) as f64 / RUN_FOR.as_secs_f64() / 1e6,
        server.writer_waits
    );
    println!(
        "read {} records, {} with wrong bytes; read p99 in the drive {:.2} ms",
        server.reads_checked,
        server.bad_reads,
        stats.class(Op::Read).device_latency.run().p99.as_secs_f64() * 1e3
    );
    if temporary {
        std::fs::remove_file(&path)?;
    }
    if server.bad_reads > 0 {
        return Err("some reads did not return what was written".into());
    }
    Ok(())
}

/// Records `0..SERVED` are read; new records go to `SERVED..RECORDS`.
const SERVED: u64 = RECORDS / 2;

struct Server {
    session: Session,
    written: u64,
    reads_checked: u64,
    bad_reads: u64,
    writer_waits: u64,
    rng: u64,
}

impl Server {
    fn store_served_records(&mut self) -> Result<(), Box<dyn std::error::Error>> {
        for number in 0..SERVED {
            self.session.write(number * RECORD, record_bytes(number));
        }
        self.session.flush();
        let mut done = Vec::new();
        while self.session.outstanding() {
            self.session.poll(Duration::from_millis(10), &mut done)?;
        }
        match done.iter().find(|c| c.outcome != Outcome::Ok) {
            Some(failed) => Err(format!("storing records failed: {failed:?}").into()),
            None => Ok(()),
        }
    }

    fn run(&mut self) -> Result<(), Box<dyn std::error::Error>> {
        let start = Instant::now();
        let mut reading = 0;
        let mut done = Vec::new();
        while start.elapsed() < RUN_FOR || self.session.outstanding() {
            if start.elapsed() < RUN_FOR {
                self.write_if_welcome();
                while reading < READERS {
                    let number = self.random() % SERVED;
                    self.session.read(number * RECORD, RECORD);
                    reading += 1;
                }
            }
            self.session.poll(Duration::from_millis(5), &mut done)?;
            for completion in done.drain(..) {
                if completion.op == Op::Read {
                    reading -= 1;
                }
                self.check(completion);
            }
        }
        Ok(())
    }

    /// Writes the next record unless the policy says a write would wait too
    /// long (the listening producer the Netflix paper wished for).
    fn write_if_welcome(&mut self) {
        let pressure = self.session.pressure();
        let writes = pressure.class(Op::Write);
        if writes.expected_wait.max(writes.oldest_wait) > WRITE_PATIENCE {
            self.writer_waits += 1;
            return;
        }
        let number = SERVED + self.written % (RECORDS - SERVED);
        self.session.write(number * RECORD, record_bytes(number));
        self.written += 1;
    }

    fn check(&mut self, completion: Completion) {
        if completion.outcome != Outcome::Ok {
            eprintln!(
                "{:?} at {} failed: errno {:?}",
                completion.op, completion.offset, completion.errno
            );
            self.bad_reads += u64::from(completion.op == Op::Read);
            return;
        }
        let Some(data) = completion.data else {
            return;
        };
        self.reads_checked += 1;
        self.bad_reads += u64::from(data != record_bytes(completion.offset / RECORD));
    }

    fn random(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }
}
