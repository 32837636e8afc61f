//! `deadline`: Linux's mq-deadline (block/mq-deadline.c), for one priority
//! level.
//!
//! # Algorithm
//!
//! Each direction (read, write) keeps its requests twice: sorted by position
//! and in a FIFO by deadline (arrival + `read_expire` or `write_expire`).
//! Requests leave in *batches* of one direction:
//! - while the current batch has sent fewer than `fifo_batch` requests and
//!   the request that followed the last one sent (in position order, taken
//!   when it was sent) is still queued, it goes next;
//! - otherwise a new batch starts. Reads are preferred, but each read batch
//!   chosen while writes wait counts one "starvation"; once reads have
//!   starved writes `writes_starved` times, the next batch is writes (and the
//!   count resets).
//! - In the chosen direction the batch starts at the oldest request if its
//!   deadline has passed (or nothing follows the last position), and
//!   otherwise carries on in position order from where that direction left
//!   off: a one-way elevator with a deadline.
//!
//! Deadlines are soft: they only decide where a batch starts, never preempt
//! one.
//!
//! # Constants (upstream defaults)
//!
//! - `read_expire` 500 ms, `write_expire` 5 s: reads are waited on
//!   synchronously, writes mostly not;
//! - `writes_starved` 2: reads may starve writes at most twice in a row;
//! - `fifo_batch` 16: requests sent in position order before re-deciding,
//!   which is what sequential throughput on a disk needed;
//! - `front_merges` 1: accepted for compatibility and a no-op here.
//!
//! # Where ours differs, and why
//!
//! - Positions are byte offsets (we have no sectors); ties keep arrival order.
//! - No merging: requests are never merged into one another, so
//!   `front_merges` changes nothing. Only trims are combined (next point).
//! - Trims are writes, as upstream (`op_is_write(REQ_OP_DISCARD)`): they sit
//!   in the write direction, sorted and with `write_expire`. When one is
//!   picked, the other waiting trims go with it in one command of up to
//!   `trim_max_ranges` ranges, as the block layer merges discards into a
//!   multi-range request before the scheduler would see them.
//! - One priority level: our requests carry no I/O priority class, so the
//!   RT > BE > IDLE levels and `prio_aging_expire` (10 s) do not apply; nor
//!   does `async_depth` (it limits tag allocation for async requests, and we
//!   cannot tell sync from async).
//! - Flushes go first, as upstream's flush machinery bypasses the elevator,
//!   but only once every earlier write has completed; writes queued after a
//!   waiting flush wait with it ([`crate::ordering::Barrier`]). A read that
//!   overlaps a queued write is kept out of the sort until that write has
//!   been sent (upstream leaves this to the page cache).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ops::Bound;

use crate::config::{
    parse_duration_in, parse_int, unknown_key, ConfigError, Configurable, Tunable,
};
use crate::ordering::{flush_may_go, Barrier, Queued};
use crate::policy::common::{
    base_in_field, Base, CommonConfig, Policy, BAD_LATENCY, STATS_WINDOW, TRIM_MAX_RANGES,
};
use crate::policy::{construct, PolicyInfo};
use crate::request::{Command, Op, Request};
use crate::trim::{overwrite, Overwritten, TrimCuts, TrimQueue};
use crate::units::{Bytes, Nanos};

pub const TUNABLES: &[Tunable] = &[
    Tunable {
        key: "read_expire",
        default: "500",
        help: "deadline of a read after arrival, ms (or with a unit: 500ms)",
    },
    Tunable {
        key: "write_expire",
        default: "5000",
        help: "deadline of a write or trim after arrival, ms (or with a unit: 5s)",
    },
    Tunable {
        key: "writes_starved",
        default: "2",
        help: "read batches that may go while writes wait, before a write batch",
    },
    Tunable {
        key: "fifo_batch",
        default: "16",
        help: "requests sent in position order before the direction is re-decided",
    },
    Tunable {
        key: "front_merges",
        default: "1",
        help: "0 or 1; accepted for compatibility, a no-op (we do not merge)",
    },
    Tunable {
        help: "most trims combined into one command",
        ..TRIM_MAX_RANGES
    },
    STATS_WINDOW,
    BAD_LATENCY,
];

pub const INFO: PolicyInfo = PolicyInfo {
    name: "deadline",
    summary: "Linux mq-deadline: offset-sorted batches per direction, read/write FIFO deadlines, \
              reads preferred up to writes_starved",
    tunables: TUNABLES,
    build: |configure| construct(configure, Deadline::new),
};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadlineConfig {
    pub read_expire: Nanos,
    pub write_expire: Nanos,
    pub writes_starved: u32,
    pub fifo_batch: u32,
    pub front_merges: bool,
    pub common: CommonConfig,
}

impl Default for DeadlineConfig {
    fn default() -> Self {
        DeadlineConfig {
            read_expire: Nanos::from_millis(500),
            write_expire: Nanos::from_secs(5),
            writes_starved: 2,
            fifo_batch: 16,
            front_merges: true,
            common: CommonConfig::default(),
        }
    }
}

impl Configurable for DeadlineConfig {
    fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        const MS: Nanos = Nanos::from_millis(1);
        match key {
            "read_expire" => self.read_expire = parse_duration_in(key, value, MS)?,
            "write_expire" => self.write_expire = parse_duration_in(key, value, MS)?,
            "writes_starved" => self.writes_starved = parse_int(key, value, 0, 1_000_000)? as u32,
            "fifo_batch" => self.fifo_batch = parse_int(key, value, 1, 1_000_000)? as u32,
            "front_merges" => self.front_merges = parse_int(key, value, 0, 1)? == 1,
            _ if self.common.set(key, value)? => {}
            _ => return Err(unknown_key(INFO.name, key, TUNABLES)),
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), ConfigError> {
        Ok(())
    }
}

/// Position in the sort: byte offset, then arrival.
type Key = (u64, u64);

/// The two directions, as upstream's `DD_READ` and `DD_WRITE`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Dir {
    Read = 0,
    Write = 1,
}

#[derive(Debug)]
struct Entry {
    queued: Queued,
    deadline: Nanos,
}

/// One direction's requests, sorted by position and by deadline.
#[derive(Debug, Default)]
struct Direction {
    sorted: BTreeMap<Key, Entry>,
    /// (deadline, arrival) to position.
    fifo: BTreeMap<(Nanos, u64), Key>,
    /// The request that followed the last one sent, when it was sent
    /// (upstream's `next_rq`).
    next: Option<Key>,
    /// Positions of the trims among `sorted` (write direction only).
    trims: BTreeSet<Key>,
}

impl Direction {
    fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    fn insert(&mut self, key: Key, entry: Entry) {
        self.fifo.insert((entry.deadline, key.1), key);
        if entry.queued.request.op == Op::Trim {
            self.trims.insert(key);
        }
        self.sorted.insert(key, entry);
    }

    fn successor(&self, key: Key) -> Option<Key> {
        self.sorted
            .range((Bound::Excluded(key), Bound::Unbounded))
            .next()
            .map(|(k, _)| *k)
    }

    fn remove(&mut self, key: Key) -> Entry {
        if self.next == Some(key) {
            self.next = self.successor(key);
        }
        let entry = self.sorted.remove(&key).expect("key is queued");
        self.fifo.remove(&(entry.deadline, key.1));
        self.trims.remove(&key);
        entry
    }

    /// Takes `key` for the device: the next in position order is noted.
    fn take(&mut self, key: Key) -> Entry {
        let entry = self.remove(key);
        self.next = self.successor(key);
        entry
    }

    fn fifo_head(&self) -> Option<Key> {
        self.fifo.values().next().copied()
    }

    fn head_expired(&self, now: Nanos) -> bool {
        self.fifo
            .keys()
            .next()
            .is_some_and(|(deadline, _)| now >= *deadline)
    }
}

#[derive(Debug)]
pub struct Deadline {
    config: DeadlineConfig,
    dirs: [Direction; 2],
    /// Reads that overlap a write not yet sent; they join the sort once it is.
    blocked_reads: Vec<Queued>,
    /// Trims a later write overwrote whole, to complete unsent.
    overwritten: VecDeque<Request>,
    barrier: Barrier,
    last_dir: Dir,
    batching: u32,
    starved: u32,
    arrivals: u64,
    base: Base,
}

impl Deadline {
    pub fn new(config: DeadlineConfig) -> Deadline {
        Deadline {
            dirs: Default::default(),
            blocked_reads: Vec::new(),
            overwritten: VecDeque::new(),
            barrier: Barrier::default(),
            last_dir: Dir::Read,
            batching: 0,
            starved: 0,
            arrivals: 0,
            base: Base::new(&config.common),
            config,
        }
    }

    fn insert(&mut self, queued: Queued) {
        let dir = if queued.request.op == Op::Read {
            Dir::Read
        } else {
            Dir::Write
        };
        let expire = match dir {
            Dir::Read => self.config.read_expire,
            Dir::Write => self.config.write_expire,
        };
        self.arrivals += 1;
        let key = (queued.request.offset.0, self.arrivals);
        let deadline = queued.request.submitted + expire;
        self.dirs[dir as usize].insert(key, Entry { queued, deadline });
    }

    /// Reads whose blocking writes have now all been sent join the sort.
    fn unblock_reads(&mut self) {
        if self.blocked_reads.is_empty() {
            return;
        }
        let mut still = Vec::new();
        for mut read in std::mem::take(&mut self.blocked_reads) {
            if self.barrier.read_ready(&mut read) {
                self.insert(read);
            } else {
                still.push(read);
            }
        }
        self.blocked_reads = still;
    }

    /// Upstream's `__dd_dispatch_request`: the direction and request to send.
    fn select(&mut self, now: Nanos) -> Option<(Dir, Key)> {
        let last = self.last_dir;
        if let Some(next) = self.dirs[last as usize].next {
            if self.batching < self.config.fifo_batch {
                self.batching += 1;
                return Some((last, next));
            }
        }
        let reads = !self.dirs[Dir::Read as usize].is_empty();
        let writes = !self.dirs[Dir::Write as usize].is_empty();
        let dir = if reads {
            let starve_writes = writes && self.starved >= self.config.writes_starved;
            if writes {
                self.starved += 1;
            }
            if starve_writes {
                self.starved = 0;
                Dir::Write
            } else {
                Dir::Read
            }
        } else if writes {
            self.starved = 0;
            Dir::Write
        } else {
            return None;
        };
        let direction = &self.dirs[dir as usize];
        let key = match direction.next {
            Some(next) if !direction.head_expired(now) => next,
            _ => direction.fifo_head()?,
        };
        self.last_dir = dir;
        self.batching = 1;
        Some((dir, key))
    }

    fn take_command(&mut self, dir: Dir, key: Key, now: Nanos) -> Command {
        let direction = &mut self.dirs[dir as usize];
        let entry = direction.take(key);
        if entry.queued.request.op == Op::Write {
            self.barrier.sent_write(&entry.queued);
            self.unblock_reads();
            return Command::single(entry.queued.request, now);
        }
        let request = entry.queued.request;
        let mut command = Command::single(request, now);
        if command.op == Op::Trim {
            // The other waiting trims ride along, from the picked one on in
            // position order, then from the lowest.
            let others: Vec<Key> = direction
                .trims
                .range(key..)
                .chain(direction.trims.range(..key))
                .copied()
                .take(self.config.common.trim_max_ranges as usize - 1)
                .collect();
            for other in others {
                command
                    .requests
                    .push(direction.remove(other).queued.request);
            }
        }
        command
    }

    fn take_flush(&mut self, now: Nanos) -> Option<Command> {
        if !self.barrier.flush_due() || !flush_may_go(self.base.stats.class(Op::Write).in_flight) {
            return None;
        }
        let flush = self.barrier.take_flush()?;
        while let Some(write) = self.barrier.release() {
            self.insert(write);
        }
        Some(Command::single(flush.request, now))
    }
}

impl Policy for Deadline {
    const INFO: PolicyInfo = INFO;

    base_in_field!();

    fn accept(&mut self, request: Request, _now: Nanos) {
        if let Some(ready) = self.barrier.pass(request, &mut self.blocked_reads) {
            self.insert(ready);
        }
    }

    /// Trims are writes here and are always sent unless overwritten: none
    /// is sped up.
    fn trims(&mut self) -> Option<&mut TrimQueue> {
        None
    }

    /// The sorted trims a write overlaps are shortened (their position
    /// moves with their offset); one overwritten whole completes unsent.
    fn cut_trims(&mut self, offset: Bytes, len: Bytes, cuts: &mut TrimCuts) {
        let direction = &mut self.dirs[Dir::Write as usize];
        let end = offset.0.saturating_add(len.0);
        let reached: Vec<Key> = direction
            .trims
            .range(..(end, 0))
            .filter(|key| {
                let trim = &direction.sorted[key].queued.request;
                trim.offset.0 + trim.len.0 > offset.0
            })
            .copied()
            .collect();
        for key in reached {
            let mut entry = direction.remove(key);
            match overwrite(&mut entry.queued.request, offset, len, cuts) {
                Overwritten::Whole => self.overwritten.push_back(entry.queued.request),
                _ => direction.insert((entry.queued.request.offset.0, key.1), entry),
            }
        }
    }

    fn pop_elided(&mut self) -> Option<Request> {
        self.overwritten.pop_front()
    }

    fn next_command(&mut self, now: Nanos) -> Option<Command> {
        if let Some(flush) = self.take_flush(now) {
            return Some(flush);
        }
        let (dir, key) = self.select(now)?;
        Some(self.take_command(dir, key, now))
    }

    fn oldest(&self, op: Op) -> Option<Nanos> {
        let dir = &self.dirs[if op == Op::Read { 0 } else { 1 }];
        let queued = dir
            .fifo
            .values()
            .map(|k| &dir.sorted[k].queued.request)
            .chain(self.barrier.held())
            .chain(self.blocked_reads.iter().map(|q| &q.request));
        queued.filter(|r| r.op == op).map(|r| r.submitted).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::apply_pairs;
    use crate::policy::testkit::{configured, drain, ids};
    use crate::request::{Dispatch, Outcome};
    use crate::scheduler::{DeviceView, Scheduler};

    fn deadline(settings: &str) -> Deadline {
        Deadline::new(configured(settings))
    }

    fn req(id: u64, op: Op, offset: u64, at: Nanos) -> Request {
        Request::new(id, op, offset, 4096, at)
    }

    fn send_all(s: &mut Deadline, now: Nanos) -> Vec<Command> {
        drain(s, now, 1024, 0)
    }

    #[test]
    fn a_batch_goes_in_offset_order_from_the_oldest() {
        let mut s = deadline("");
        for (id, offset) in [(0, 50), (1, 10), (2, 30), (3, 20)] {
            s.enqueue(req(id, Op::Read, offset << 20, Nanos::ZERO), Nanos::ZERO);
        }
        // The oldest (id 0, at 50 MiB) starts the batch; nothing is above it,
        // so the next batch restarts from the FIFO head, then goes up.
        assert_eq!(ids(&send_all(&mut s, Nanos(1))), [0, 1, 3, 2]);
    }

    #[test]
    fn writes_get_a_batch_after_writes_starved_read_batches() {
        // Batches of 2; 8 reads and 2 writes waiting.
        let mut s = deadline("fifo_batch=2");
        s.enqueue(req(100, Op::Write, 900 << 20, Nanos::ZERO), Nanos::ZERO);
        s.enqueue(req(101, Op::Write, 901 << 20, Nanos::ZERO), Nanos::ZERO);
        for id in 0..8 {
            s.enqueue(req(id, Op::Read, id << 20, Nanos::ZERO), Nanos::ZERO);
        }
        let order: String = send_all(&mut s, Nanos(1))
            .iter()
            .map(|c| if c.op == Op::Read { 'R' } else { 'W' })
            .collect();
        assert_eq!(order, "RRRRWWRRRR", "two read batches, then the writes");
    }

    /// One request sent at `now` on an otherwise full device.
    fn send_one(s: &mut Deadline, now: Nanos) -> u64 {
        match s.dispatch(now, DeviceView::new(1024, 0)) {
            Some(Dispatch::ToDevice(c)) => c.requests[0].id.0,
            other => panic!("nothing sent: {other:?}"),
        }
    }

    /// Writes A (10 MiB), B (5 MiB), C (20 MiB), all at time zero; A is sent,
    /// so the write elevator stands before C while B heads the FIFO.
    fn elevator_past_b() -> Deadline {
        let mut s = deadline("fifo_batch=1");
        for (id, mib) in [(10, 10), (5, 5), (20, 20)] {
            s.enqueue(req(id, Op::Write, mib << 20, Nanos::ZERO), Nanos::ZERO);
        }
        assert_eq!(send_one(&mut s, Nanos::ZERO), 10);
        s
    }

    #[test]
    fn a_write_batch_carries_on_up_unless_the_fifo_head_expired() {
        let mut s = elevator_past_b();
        assert_eq!(send_one(&mut s, Nanos::from_secs(1)), 20, "B not expired");
        let mut s = elevator_past_b();
        assert_eq!(send_one(&mut s, Nanos::from_secs(6)), 5, "B expired at 5 s");
    }

    #[test]
    fn an_expired_write_is_served_after_writes_starved_read_batches() {
        let mut s = elevator_past_b();
        let now = Nanos::from_secs(6);
        for id in 0..3 {
            s.enqueue(req(id, Op::Read, (100 + id) << 20, now), now);
        }
        // Two read batches (writes_starved = 2), then a write batch that
        // starts at the expired B, not at C where the elevator stood.
        assert_eq!(ids(&send_all(&mut s, now)), [0, 1, 5, 2, 20]);
    }

    #[test]
    fn a_write_cuts_the_trims_queued_before_it() {
        let mut s = deadline("");
        let t = Nanos::ZERO;
        s.enqueue(Request::new(0, Op::Write, 0, 4096, t), t);
        s.enqueue(Request::new(1, Op::Trim, 100 << 10, 50 << 10, t), t);
        s.enqueue(Request::new(2, Op::Trim, 200 << 10, 8 << 10, t), t);
        s.enqueue(Request::new(3, Op::Write, 90 << 10, 20 << 10, t), t);
        s.enqueue(Request::new(4, Op::Write, 200 << 10, 8 << 10, t), t);
        let view = DeviceView::new(1024, 0);
        match s.dispatch(Nanos(1), view) {
            Some(Dispatch::CompletedWithoutDevice(r)) => assert_eq!(r.id.0, 2),
            other => panic!("trim 2 was overwritten whole, not {other:?}"),
        }
        let sent = send_all(&mut s, Nanos(1));
        let trim = sent.iter().find(|c| c.op == Op::Trim).expect("trim 1 sent");
        assert_eq!(trim.requests.len(), 1);
        assert_eq!(
            (trim.requests[0].offset.0, trim.requests[0].len.0),
            (110 << 10, 40 << 10),
            "trim 1 no longer reaches write 3"
        );
        assert_eq!(s.stats().class(Op::Trim).queued, 0);
    }

    #[test]
    fn trims_are_writes_and_leave_together() {
        let mut s = deadline("");
        for id in 0..3 {
            s.enqueue(req(id, Op::Trim, id << 20, Nanos::ZERO), Nanos::ZERO);
        }
        let sent = send_all(&mut s, Nanos(1));
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].requests.len(), 3);
        assert_eq!(s.stats().class(Op::Trim).queued, 0);
    }

    #[test]
    fn a_flush_waits_for_earlier_writes_and_holds_later_ones() {
        let mut s = deadline("");
        let t = Nanos::ZERO;
        s.enqueue(req(0, Op::Write, 5 << 20, t), t);
        s.enqueue(Request::new(1, Op::Flush, 0, 0, t), t);
        s.enqueue(req(2, Op::Write, 1 << 20, t), t);
        s.enqueue(req(3, Op::Read, 5 << 20, t), t);
        let sent = send_all(&mut s, Nanos(1));
        assert_eq!(
            ids(&sent),
            [0, 3],
            "read 3 overlaps write 0, which went first"
        );
        let retry = s.complete(&sent[0].completion(Outcome::Ok), Nanos(2));
        assert!(retry.should_dispatch());
        assert_eq!(ids(&send_all(&mut s, Nanos(2))), [1, 2]);
    }

    #[test]
    fn settings_are_checked() {
        let mut config = DeadlineConfig::default();
        assert!(apply_pairs(
            &mut config,
            "read_expire=250,write_expire=2s,front_merges=0"
        )
        .is_ok());
        assert_eq!(config.read_expire, Nanos::from_millis(250));
        assert!(apply_pairs(&mut config, "fifo_batch=0").is_err());
        let err = apply_pairs(&mut config, "elevator=1")
            .unwrap_err()
            .to_string();
        assert!(err.contains("read_expire"), "{err}");
    }
}
