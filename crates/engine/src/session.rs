//! Embedding the engine in a server: a [`Session`] joins a scheduler policy,
//! the io_uring [`Engine`] and a clock behind five calls. The server asks for
//! reads and writes with its own bytes, polls for completions (with a read's
//! bytes), and reads the policy's statistics and `pressure()` to slow its
//! own producers down, as the Netflix paper wished its fill had done.
//!
//! The policy is the same code the simulator judges; the session only
//! stamps requests with the time since it began, keeps a write's bytes
//! until the policy lets it go, and turns each finished command back into
//! one [`Completion`] per request.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use iosteer_sched::{Command, Dispatch, Nanos, Op, Outcome, Pressure, Request, Scheduler, Stats};

use crate::engine::{Engine, EngineError, Finished};

/// A request the target (or the policy) finished.
#[derive(Debug)]
pub struct Completion {
    /// What [`Session::read`] (or write, trim, flush) returned.
    pub id: u64,
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    pub outcome: Outcome,
    /// The error the kernel reported, if any.
    pub errno: Option<i32>,
    /// From the request to its completion: queued in the policy plus in the
    /// target.
    pub latency: Duration,
    /// A read's bytes.
    pub data: Option<Vec<u8>>,
}

/// A scheduler policy driving an engine, for a server to embed. The engine
/// should be built with [`crate::EngineConfig::keep_read_data`] set, or reads
/// complete without their bytes.
pub struct Session {
    engine: Engine,
    sched: Box<dyn Scheduler>,
    start: Instant,
    next_id: u64,
    /// The offset and bytes of each write the policy still holds.
    write_data: HashMap<u64, (u64, Vec<u8>)>,
    finished: Vec<Finished>,
}

impl Session {
    pub fn new(engine: Engine, sched: Box<dyn Scheduler>) -> Session {
        Session {
            engine,
            sched,
            start: Instant::now(),
            next_id: 0,
            write_data: HashMap::new(),
            finished: Vec::new(),
        }
    }

    /// Time since the session began, the policy's clock.
    pub fn now(&self) -> Nanos {
        Nanos(self.start.elapsed().as_nanos() as u64)
    }

    /// Asks for `len` bytes at `offset`; returns the request's id.
    pub fn read(&mut self, offset: u64, len: u64) -> u64 {
        self.enqueue(Op::Read, offset, len)
    }

    /// Asks to write `data` at `offset`; returns the request's id.
    pub fn write(&mut self, offset: u64, data: Vec<u8>) -> u64 {
        let id = self.enqueue(Op::Write, offset, data.len() as u64);
        self.write_data.insert(id, (offset, data));
        id
    }

    pub fn trim(&mut self, offset: u64, len: u64) -> u64 {
        self.enqueue(Op::Trim, offset, len)
    }

    /// Asks for the writes completed before it to be durable.
    pub fn flush(&mut self) -> u64 {
        self.enqueue(Op::Flush, 0, 0)
    }

    fn enqueue(&mut self, op: Op, offset: u64, len: u64) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let now = self.now();
        self.sched
            .enqueue(Request::new(id, op, offset, len, now), now);
        id
    }

    /// Sends what the policy lets go, waits up to `timeout` for the target,
    /// and appends what finished to `out`.
    pub fn poll(
        &mut self,
        timeout: Duration,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        let before = out.len();
        self.dispatch(out)?;
        let now = self.now();
        let until_timer = self
            .sched
            .next_timer()
            .map_or(timeout, |t| Duration::from_nanos(t.0.saturating_sub(now.0)));
        if out.len() == before {
            self.engine.wait(timeout.min(until_timer))?;
        } else {
            self.engine.submit_queued()?;
        }
        let now = self.now();
        self.engine.reap(now, &mut self.finished);
        for f in std::mem::take(&mut self.finished) {
            let _ = self.sched.complete(&f.command.completion(f.outcome), f.at);
            self.complete(f, out);
        }
        if self.sched.next_timer().is_some_and(|t| t <= now) {
            let _ = self.sched.tick(now);
        }
        self.dispatch(out)
    }

    fn dispatch(&mut self, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let now = self.now();
        while let Some(d) = self.sched.dispatch(now, self.engine.view()) {
            match d {
                Dispatch::ToDevice(command) => self.send(command)?,
                Dispatch::CompletedWithoutDevice(request) => {
                    let mut done = self.completion(&request, Outcome::Ok, None, now);
                    if request.op == Op::Read {
                        done.data = Some(self.bytes_of_held_writes(&request));
                    }
                    out.push(done)
                }
            }
        }
        Ok(())
    }

    fn send(&mut self, command: Command) -> Result<(), EngineError> {
        let data = match command.op {
            Op::Write => self
                .write_data
                .remove(&command.requests[0].id.0)
                .map(|(_, bytes)| bytes),
            _ => None,
        };
        self.engine.submit_with_data(command, data.as_deref())
    }

    fn complete(&mut self, mut f: Finished, out: &mut Vec<Completion>) {
        let data = f.data.take();
        for request in &f.command.requests {
            let mut done = self.completion(request, f.outcome, f.errno, f.at);
            done.data = data.clone();
            out.push(done);
        }
    }

    /// The bytes of a read the policy answered from the writes it holds
    /// (steer does when they cover every byte): over each byte, the newest
    /// write's among those submitted before the read (a write submitted
    /// after it, before the answer is handed back, is not what it read).
    fn bytes_of_held_writes(&self, read: &Request) -> Vec<u8> {
        let (start, end) = (read.offset.0, read.end());
        let mut overlapping: Vec<(&u64, &(u64, Vec<u8>))> = self
            .write_data
            .iter()
            .filter(|(id, (offset, bytes))| {
                **id < read.id.0 && *offset < end && offset + bytes.len() as u64 > start
            })
            .collect();
        overlapping.sort_unstable_by_key(|(id, _)| **id);
        let mut data = vec![0; read.len.0 as usize];
        for (_, (offset, bytes)) in overlapping {
            let from = start.max(*offset);
            let to = end.min(offset + bytes.len() as u64);
            data[(from - start) as usize..(to - start) as usize]
                .copy_from_slice(&bytes[(from - offset) as usize..(to - offset) as usize]);
        }
        data
    }

    fn completion(
        &self,
        request: &Request,
        outcome: Outcome,
        errno: Option<i32>,
        at: Nanos,
    ) -> Completion {
        Completion {
            id: request.id.0,
            op: request.op,
            offset: request.offset.0,
            len: request.len.0,
            outcome,
            errno,
            latency: Duration::from_nanos((at - request.submitted).0),
            data: None,
        }
    }

    /// Requests waiting in the policy or in the target.
    pub fn outstanding(&self) -> bool {
        !self.sched.is_idle()
    }

    /// How long a request of each class queued now would wait, and whether
    /// the policy is holding its class back: a producer that listens slows
    /// down instead of queueing more.
    pub fn pressure(&self) -> Pressure {
        self.sched.pressure(self.now())
    }

    pub fn stats(&self) -> &Stats {
        self.sched.stats()
    }

    pub fn scheduler(&self) -> &dyn Scheduler {
        self.sched.as_ref()
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tests::{engine_with, temp_file};
    use crate::EngineConfig;
    use tempfile::TempPath;

    /// A session of `spec` over a new 1 MiB file `name`, kept as long as the
    /// path; `None` where io_uring is not allowed.
    fn session(name: &str, spec: &str) -> Option<(Session, TempPath)> {
        let path = temp_file(name, 1 << 20);
        let config = EngineConfig {
            queue_depth: 4,
            max_io_bytes: 64 << 10,
            keep_read_data: true,
            ..EngineConfig::default()
        };
        let engine = engine_with(&path, &config)?;
        let policy = iosteer_sched::policy::build(spec).unwrap();
        Some((Session::new(engine, policy), path))
    }

    fn wait_for(session: &mut Session, count: usize) -> Vec<Completion> {
        let mut done = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        while done.len() < count {
            assert!(
                Instant::now() < deadline,
                "only {} of {count} completed",
                done.len()
            );
            session.poll(Duration::from_millis(10), &mut done).unwrap();
        }
        done
    }

    #[test]
    fn a_servers_bytes_go_through_a_throttling_policy_and_read_back() {
        let spec = "netflix:write.limiter=queue_depth,write.current=1";
        let Some((mut session, _file)) = session("session.img", spec) else {
            return;
        };
        let block = |i: u64| vec![i as u8 ^ 0x5a; 8192];
        let writes: Vec<u64> = (0..16).map(|i| session.write(i * 8192, block(i))).collect();
        session.flush();
        let done = wait_for(&mut session, 17);
        assert!(done.iter().all(|c| c.outcome == Outcome::Ok), "{done:?}");
        assert!(writes.iter().all(|id| done.iter().any(|c| c.id == *id)));
        // Every write went through the policy's write class.
        assert_eq!(session.stats().class(Op::Write).completed, 16);
        for i in 0..16 {
            session.read(i * 8192, 8192);
        }
        let reads = wait_for(&mut session, 16);
        for c in &reads {
            assert_eq!(c.op, Op::Read);
            assert_eq!(
                c.data.as_deref(),
                Some(&block(c.offset / 8192)[..]),
                "at {}",
                c.offset
            );
        }
        assert!(!session.outstanding());
        assert_eq!(session.pressure().class(Op::Write).queued, 0);
    }

    /// steer answers a read its held writes cover from their bytes (the
    /// newest over each byte), without the target.
    #[test]
    fn a_read_of_held_writes_gets_their_newest_bytes() {
        let Some((mut session, _file)) =
            session("session-held.img", "steer:min_rate=1,start_rate=1")
        else {
            return;
        };
        // Every write is held (no read baseline yet, then 1 kB/s).
        session.write(0, vec![9; 4096]);
        session.write(8192, vec![1; 8192]);
        session.write(16384, vec![2; 8192]);
        session.write(12288, vec![3; 4096]);
        let read = session.read(10240, 8192);
        // Written after the read was asked for: not what it reads.
        session.write(8192, vec![7; 16384]);
        let mut done = Vec::new();
        session.poll(Duration::from_millis(1), &mut done).unwrap();
        let answer = done
            .iter()
            .find(|c| c.id == read)
            .expect("answered at once");
        let mut expected = vec![1; 2048];
        expected.extend([3; 4096]);
        expected.extend([2; 2048]);
        assert_eq!(answer.data.as_deref(), Some(&expected[..]));
        assert_eq!(session.stats().class(Op::Read).elided, 1);
    }

    #[test]
    fn a_write_whose_bytes_do_not_fit_fails_alone() {
        let Some((mut session, _file)) = session("session-big.img", "fifo") else {
            return;
        };
        let too_big = session.write(0, vec![0; 128 << 10]);
        let fine = session.write(0, vec![1; 4096]);
        let done = wait_for(&mut session, 2);
        let outcome = |id| done.iter().find(|c| c.id == id).unwrap();
        assert_eq!(outcome(too_big).errno, Some(libc::EINVAL));
        assert_eq!(outcome(fine).outcome, Outcome::Ok);
    }
}
