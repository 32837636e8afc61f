//! The io_uring executor: takes the commands a scheduler dispatches, sends
//! them to the target, and hands back what finished, like the simulated
//! drive does ([`Engine::view`], [`Engine::submit`], [`Engine::reap`]).
//!
//! Unsafe boundaries, and why they hold:
//! - Buffers are registered with the ring and referenced by raw pointer in
//!   each read or write. Each in-flight command owns one slot's buffer; the
//!   slot is not reused, and the buffer not touched, until its completion is
//!   reaped; and `Drop` waits for every operation in flight before the
//!   buffers are freed.
//! - Completion-queue overflow: the ring is sized for twice the queue depth
//!   plus the parts of multi-range trims, the engine never has more
//!   operations in flight than that, and it reaps on every wait; the kernel
//!   (5.5+) also keeps overflowed completions and the engine drains them all
//!   before returning from `reap`.

use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use io_uring::{opcode, types, IoUring};
use iosteer_sched::{Command, DeviceView, Nanos, Op, Outcome};
use thiserror::Error;

use crate::buffers::{Buffers, BuffersUnavailable, ALIGN};
use crate::target::{discard, Target, TargetKind};
use crate::verify::{Expected, Verifier, BLOCK};

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The kernel or the sandbox does not allow io_uring.
    #[error("io_uring is not available here ({0}); a container may need its seccomp profile to allow io_uring_setup")]
    Unsupported(io::Error),
    #[error("io_uring: {0}")]
    Io(#[from] io::Error),
    #[error("the engine accepts no command now ({in_flight} of {slots} slots in use)")]
    Full { in_flight: u32, slots: u32 },
    /// The configuration asks for what the engine refuses to build.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The I/O buffers could not be allocated.
    #[error(transparent)]
    Buffers(#[from] BuffersUnavailable),
}

/// The most commands the engine keeps in a target at once. The ring it
/// builds has `(2 * depth + 8).next_power_of_two()` entries and a
/// completion queue four times that: at 4096 the completion queue is 65,536
/// entries, the kernel's IORING_MAX_CQ_ENTRIES, so a deeper queue could not
/// be built as designed (and the submission queue's own maximum,
/// IORING_MAX_ENTRIES, is 32,768). It is also well past any device's queue:
/// NVMe's Linux driver defaults to 1,024 per queue, blk-mq caps requests per
/// queue at a few thousand, SATA NCQ takes 32.
pub const MAX_QUEUE_DEPTH: u32 = 4096;

/// The most bytes of I/O buffers (queue depth x largest request) the engine
/// allocates. They are registered with the ring, so they are pinned memory
/// that cannot be swapped (and count against RLIMIT_MEMLOCK on kernels
/// before 5.12); 1 GiB is 1,024 slots of 1 MiB requests, more large
/// requests than any device keeps in flight.
pub const MAX_BUFFER_BYTES: u64 = 1 << 30;

/// What is wrong with an [`EngineConfig`], found before anything is
/// allocated.
#[derive(Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("queue depth {depth} is out of range: the engine keeps 1 to {MAX_QUEUE_DEPTH} commands in the target at once")]
    QueueDepth { depth: u32 },
    #[error("the largest request is 0 bytes: each slot's buffer needs at least one byte")]
    NoRequestSize,
    /// [`Engine::of_targets`] needs targets in increasing, separate ranges.
    #[error("the engine needs at least one target, at base addresses in increasing order whose ranges do not overlap")]
    Targets,
    #[error("I/O buffers of {total} bytes ({depth} slots of {slot_bytes} bytes) exceed the engine's limit of {MAX_BUFFER_BYTES} bytes: a smaller queue depth or largest request fits")]
    BuffersTooLarge {
        depth: u32,
        slot_bytes: u64,
        total: u64,
    },
}

/// How the engine learns that commands finished: the seed's polling story.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Reap {
    /// Sleep in `io_uring_enter` until a completion (the device's interrupt)
    /// wakes the thread: no CPU while waiting, a wake-up's delay on each.
    #[default]
    Interrupt,
    /// Spin on the completion ring (no system call; the kernel posts
    /// completions from its interrupt handler, or, with IOPOLL, the engine
    /// asks the driver each turn): lowest latency, a whole core.
    Poll,
    /// Sleep about half the mean completion time of the oldest command's
    /// direction and size (as Linux's hybrid polling does), then spin: most
    /// of poll's latency for a part of its CPU.
    Hybrid,
}

impl Reap {
    pub const NAMES: [&'static str; 3] = ["interrupt", "poll", "hybrid"];

    pub fn from_name(name: &str) -> Option<Reap> {
        match name {
            "interrupt" => Some(Reap::Interrupt),
            "poll" => Some(Reap::Poll),
            "hybrid" => Some(Reap::Hybrid),
            _ => None,
        }
    }

    /// The name [`Reap::from_name`] takes.
    pub fn name(self) -> &'static str {
        Reap::NAMES[self as usize]
    }
}

/// How to run the ring.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Commands in the target at once (the device queue depth the scheduler
    /// fills).
    pub queue_depth: u32,
    /// Largest read or write, bytes: each slot's buffer.
    pub max_io_bytes: usize,
    /// Stamp writes and check reads (see [`crate::verify`]).
    pub verify: bool,
    pub reap: Reap,
    /// Ask for an IOPOLL ring (the driver is polled for completions instead
    /// of interrupting). Only O_DIRECT reads and writes on a target whose
    /// driver has poll queues; [`Engine::new`] tries one read and falls back
    /// to an ordinary ring, saying why in [`Engine::iopoll_refused`].
    pub iopoll: bool,
    /// Copy each read's bytes into [`Finished::data`] (for an embedding
    /// server; a load generator leaves them in the slot).
    pub keep_read_data: bool,
}

impl EngineConfig {
    /// Checks the queue depth and the buffers' size against the engine's
    /// limits ([`MAX_QUEUE_DEPTH`], [`MAX_BUFFER_BYTES`]); [`Engine::new`]
    /// does this first.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let depth = self.queue_depth;
        if !(1..=MAX_QUEUE_DEPTH).contains(&depth) {
            return Err(ConfigError::QueueDepth { depth });
        }
        if self.max_io_bytes == 0 {
            return Err(ConfigError::NoRequestSize);
        }
        // Each slot's buffer is rounded up to the alignment O_DIRECT needs.
        let slot_bytes = (self.max_io_bytes as u64).div_ceil(ALIGN as u64) * ALIGN as u64;
        let total = slot_bytes.saturating_mul(depth.into());
        if total > MAX_BUFFER_BYTES {
            return Err(ConfigError::BuffersTooLarge {
                depth,
                slot_bytes,
                total,
            });
        }
        Ok(())
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            queue_depth: 32,
            max_io_bytes: 1 << 20,
            verify: false,
            reap: Reap::Interrupt,
            iopoll: false,
            keep_read_data: false,
        }
    }
}

/// A command the target finished.
#[derive(Debug)]
pub struct Finished {
    pub command: Command,
    pub at: Nanos,
    pub outcome: Outcome,
    /// The error the kernel reported (errno), if any.
    pub errno: Option<i32>,
    /// A successful read's bytes, with [`EngineConfig::keep_read_data`].
    pub data: Option<Vec<u8>>,
}

#[derive(Debug)]
struct Slot {
    command: Command,
    parts_left: u32,
    errno: Option<i32>,
    /// Verify: the generation a write stamped, or what a read may find.
    generation: u64,
    expected: Vec<Expected>,
    /// When it was sent, for hybrid reaping's mean completion times.
    sent: Instant,
    /// Waiting for an overlapping command to finish (overlap.rs).
    held: bool,
    /// Parts given to the discard worker (discards.rs).
    handed_off: u32,
}

/// The io_uring executor. Waiting for interrupts, its ring is a single
/// issuer: use it from the thread that built it (the kernel refuses others).
pub struct Engine {
    // Field order matters for Drop: `Drop::drop` drains the ring first, then
    // the ring closes before the buffers it references are freed.
    ring: IoUring,
    buffers: Buffers,
    /// The files or devices, each at its own place in the commands' byte
    /// addresses: `targets[i]` holds `[bases[i], bases[i] + size)`.
    targets: Vec<Target>,
    bases: Vec<u64>,
    slots: Vec<Option<Slot>>,
    free: Vec<u32>,
    /// Commands taken and not yet handed back by `reap`.
    in_flight: u32,
    /// Ring operations the kernel has not completed: what `Drop` must wait
    /// for before the buffers may be freed. Commands done without the ring
    /// are in flight but not here, since no completion will come for them.
    in_kernel: u32,
    queue_depth: u32,
    /// Commands done without the ring (block-device discards, bad requests).
    done_now: Vec<u32>,
    /// Commands waiting for an overlapping one to finish, in the order they
    /// came, and the trims sent and not yet finished (overlap.rs).
    held: Vec<u32>,
    trims_sent: Vec<u32>,
    verifier: Option<Verifier>,
    reap_mode: Reap,
    iopoll: bool,
    iopoll_refused: Option<String>,
    times: CompletionTimes,
    keep_read_data: bool,
    /// Per tenant, the targets its flushes go to (none given: every one).
    flush_scope: Vec<Vec<usize>>,
    /// Per tenant, whether its FUA writes are O_SYNC (the file's metadata
    /// made durable too) rather than O_DSYNC.
    sync_metadata: Vec<bool>,
    /// Runs block-device discards, once the first comes (discards.rs).
    discards: Option<Discards>,
}

impl Engine {
    /// Builds the ring and the buffers for `target`; a configuration past
    /// the engine's limits is refused before anything is allocated.
    pub fn new(target: Target, config: &EngineConfig) -> Result<Engine, EngineError> {
        Engine::of_targets(vec![(target, 0)], config)
    }

    /// Sends each tenant's flushes only to its targets (indices into the
    /// targets given to [`Engine::of_targets`]), as fio syncs a job's own
    /// files; a tenant without a list flushes every target.
    pub fn scope_flushes(&mut self, per_tenant: Vec<Vec<usize>>) {
        self.flush_scope = per_tenant;
    }

    /// Makes each tenant's FUA writes O_SYNC where `per_tenant` says so
    /// (fio's `sync=1`: on a file, its times are made durable with the
    /// data), O_DSYNC otherwise (the data alone, as a drive's FUA).
    pub fn sync_metadata(&mut self, per_tenant: Vec<bool>) {
        self.sync_metadata = per_tenant;
    }

    /// [`Engine::new`] on several targets, each at a base address: a
    /// command's offset picks the target whose `[base, base + size)` holds
    /// it, and is moved by the base. The ranges must not overlap (a command
    /// outside every one fails with EINVAL); one scheduler then orders the
    /// I/O of every file, as one block layer queue does for a device.
    pub fn of_targets(
        targets: Vec<(Target, u64)>,
        config: &EngineConfig,
    ) -> Result<Engine, EngineError> {
        config.validate()?;
        let (targets, bases): (Vec<Target>, Vec<u64>) = targets.into_iter().unzip();
        let overlapping = targets
            .iter()
            .zip(&bases)
            .zip(bases.iter().skip(1))
            .any(|((t, base), next)| base.saturating_add(t.size) > *next);
        let Some(target) = targets.first().filter(|_| !overlapping) else {
            return Err(ConfigError::Targets.into());
        };
        let depth = config.queue_depth;
        let entries = (2 * depth + 8).next_power_of_two();
        let mut buffers = Buffers::new(depth as usize, config.max_io_bytes)?;
        fill_with_pattern(&mut buffers);
        let (ring, iopoll_refused) = if config.iopoll {
            match ring::iopoll_ring(entries, target) {
                Ok(ring) => (ring, None),
                Err(why) => (ring::ring(entries, config.reap)?, Some(why)),
            }
        } else {
            (ring::ring(entries, config.reap)?, None)
        };
        // SAFETY: the iovecs point into `buffers`, which the engine keeps
        // until the ring is closed (see the struct's field order and Drop).
        unsafe { ring.submitter().register_buffers(&buffers.iovecs()) }
            .map_err(EngineError::Unsupported)?;
        if config.reap == Reap::Hybrid {
            // Hybrid naps are tens of microseconds; the default timer slack
            // (50 us) would add as much to each.
            // SAFETY: PR_SET_TIMERSLACK takes an integer and touches no memory.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong) };
        }
        Ok(Engine {
            iopoll: config.iopoll && iopoll_refused.is_none(),
            ring,
            buffers,
            targets,
            bases,
            slots: (0..depth).map(|_| None).collect(),
            free: (0..depth).rev().collect(),
            in_flight: 0,
            in_kernel: 0,
            queue_depth: depth,
            done_now: Vec::new(),
            held: Vec::new(),
            trims_sent: Vec::new(),
            verifier: config.verify.then(Verifier::default),
            reap_mode: config.reap,
            iopoll_refused,
            times: CompletionTimes::default(),
            keep_read_data: config.keep_read_data,
            flush_scope: Vec::new(),
            sync_metadata: Vec::new(),
            discards: None,
        })
    }

    /// Why an IOPOLL ring was asked for and not used, if it was.
    pub fn iopoll_refused(&self) -> Option<&str> {
        self.iopoll_refused.as_deref()
    }

    /// Whether the ring polls the driver (IOPOLL).
    pub fn iopoll(&self) -> bool {
        self.iopoll
    }

    /// The first target (the only one but for [`Engine::of_targets`]).
    pub fn target(&self) -> &Target {
        &self.targets[0]
    }

    /// The target holding `[offset, offset + len)`: its index and the
    /// offset in it.
    fn locate(&self, offset: u64, len: u64) -> Option<(usize, u64)> {
        let i = self
            .bases
            .partition_point(|b| *b <= offset)
            .checked_sub(1)?;
        let inner = offset - self.bases[i];
        (inner.checked_add(len)? <= self.targets[i].size).then_some((i, inner))
    }

    pub fn verifier(&self) -> Option<&Verifier> {
        self.verifier.as_ref()
    }

    pub fn view(&self) -> DeviceView {
        DeviceView::new(self.queue_depth, self.in_flight)
    }

    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Sends a command (queued in the submission ring; [`Engine::wait`]
    /// submits).
    pub fn submit(&mut self, command: Command) -> Result<(), EngineError> {
        self.submit_with_data(command, None)
    }

    /// Sends a command; a write's bytes are `data` (its length) instead of
    /// whatever its slot's buffer held. A read's bytes come back in
    /// [`Finished::data`] when [`EngineConfig::keep_read_data`] is set.
    pub fn submit_with_data(
        &mut self,
        command: Command,
        data: Option<&[u8]>,
    ) -> Result<(), EngineError> {
        let Some(slot) = self.free.pop() else {
            return Err(EngineError::Full {
                in_flight: self.in_flight,
                slots: self.queue_depth,
            });
        };
        self.in_flight += 1;
        let mut state = Slot {
            command,
            parts_left: 0,
            errno: None,
            generation: 0,
            expected: Vec::new(),
            sent: Instant::now(),
            held: false,
            handed_off: 0,
        };
        let whole = self.take_write_data(slot, &state.command, data);
        if whole && self.must_wait(&state.command, &self.held) {
            state.held = true;
            self.slots[slot as usize] = Some(state);
            self.held.push(slot);
            return Ok(());
        }
        let entries = if whole {
            self.entries(slot, &mut state)
        } else {
            state.errno = Some(libc::EINVAL);
            Vec::new()
        };
        self.slots[slot as usize] = Some(state);
        self.send(slot, entries)
    }

    /// Copies a write's own bytes into its slot's buffer; false when they
    /// do not match the request's length or do not fit.
    fn take_write_data(&mut self, slot: u32, command: &Command, data: Option<&[u8]>) -> bool {
        let (Some(data), Op::Write) = (data, command.op) else {
            return true;
        };
        if data.len() as u64 != command.requests[0].len.0 || data.len() > self.buffers.size() {
            return false;
        }
        self.buffers
            .slice_mut(slot as usize, data.len())
            .copy_from_slice(data);
        true
    }

    /// Puts a command's ring entries in the ring and submits them. A command
    /// with none (refused, or done synchronously) finishes at the next
    /// reap; so does one the ring took only part of, with the ring's error.
    /// Once taken, a command always comes back from `reap`, even when this
    /// returns an error.
    fn send(
        &mut self,
        slot: u32,
        entries: Vec<io_uring::squeue::Entry>,
    ) -> Result<(), EngineError> {
        let mut pushed = 0;
        let mut refused = None;
        for entry in entries {
            match self.push(entry.user_data(u64::from(slot))) {
                Ok(()) => pushed += 1,
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
        let state = self.slots[slot as usize]
            .as_mut()
            .expect("a slot being sent holds its command");
        if state.command.op == Op::Trim {
            self.trims_sent.push(slot);
        }
        state.parts_left = pushed + state.handed_off;
        self.in_kernel += state.parts_left;
        if let Some(e) = &refused {
            state.errno.get_or_insert(errno_of(e));
        }
        if state.parts_left == 0 {
            self.done_now.push(slot);
        }
        if let Some(e) = refused {
            return Err(e);
        }
        // Sent at once, one system call per command as fio does: a batch of
        // more than two is plugged in the block layer and reaches the disk
        // together, which cost 17-30% of p50 on a virtio disk.
        self.ring.submit()?;
        Ok(())
    }

    fn push(&mut self, entry: io_uring::squeue::Entry) -> Result<(), EngineError> {
        loop {
            // SAFETY: every entry's buffer (if any) belongs to its slot and
            // stays valid until the completion is reaped (module docs).
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return Ok(());
            }
            self.ring.submit()?;
        }
    }

    /// The ring entries for a command; none when it is done already (an
    /// error, or a block-device discard done synchronously).
    fn entries(&mut self, slot: u32, state: &mut Slot) -> Vec<io_uring::squeue::Entry> {
        let op = state.command.op;
        match op {
            Op::Read | Op::Write => {
                let request = &state.command.requests[0];
                let (offset, len) = (request.offset.0, request.len.0);
                let located = self.locate(offset, len);
                let Some((target, inner)) = located.filter(|_| len as usize <= self.buffers.size())
                else {
                    state.errno = Some(libc::EINVAL);
                    return Vec::new();
                };
                let fd = types::Fd(self.targets[target].fd());
                let ptr = self.buffers.ptr(slot as usize);
                if op == Op::Read {
                    if let Some(v) = &self.verifier {
                        state.expected = v.expect(offset, len);
                    }
                    vec![opcode::ReadFixed::new(fd, ptr, len as u32, slot as u16)
                        .offset(inner)
                        .build()]
                } else {
                    if let Some(v) = &mut self.verifier {
                        let whole = len as usize / BLOCK * BLOCK;
                        let buf = self.buffers.slice_mut(slot as usize, whole);
                        state.generation = v.stamp(offset, buf);
                    }
                    // FUA: O_DSYNC or O_SYNC for this write alone (the
                    // kernel sends REQ_FUA, or a write and a flush).
                    let tenant = request.tenant.0 as usize;
                    let flags = match (request.fua, self.sync_metadata.get(tenant)) {
                        (false, _) => 0,
                        (true, Some(true)) => libc::RWF_SYNC,
                        (true, _) => libc::RWF_DSYNC,
                    };
                    vec![opcode::WriteFixed::new(fd, ptr, len as u32, slot as u16)
                        .offset(inner)
                        .rw_flags(flags)
                        .build()]
                }
            }
            Op::Trim => self.trim_entries(slot, state),
            Op::Flush => {
                let tenant = state.command.requests[0].tenant.0 as usize;
                let all: Vec<usize> = (0..self.targets.len()).collect();
                let scope = self
                    .flush_scope
                    .get(tenant)
                    .filter(|scope| !scope.is_empty())
                    .unwrap_or(&all);
                scope
                    .iter()
                    .map(|&t| {
                        opcode::Fsync::new(types::Fd(self.targets[t].fd()))
                            .flags(types::FsyncFlags::DATASYNC)
                            .build()
                    })
                    .collect()
            }
        }
    }

    fn trim_entries(&mut self, slot: u32, state: &mut Slot) -> Vec<io_uring::squeue::Entry> {
        self.start_discards();
        let mut entries = Vec::new();
        for request in &state.command.requests {
            let (offset, len) = (request.offset.0, request.len.0);
            let Some((target, inner)) = self.locate(offset, len) else {
                state.errno = Some(libc::EINVAL);
                continue;
            };
            let target = &self.targets[target];
            let fd = types::Fd(target.fd());
            match target.kind {
                TargetKind::File => entries.push(
                    opcode::Fallocate::new(fd, len)
                        .offset(inner)
                        .mode(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE)
                        .build(),
                ),
                TargetKind::BlockDevice => {
                    let sent = match &self.discards {
                        Some(worker) => worker.send(&target.file, inner, len, slot),
                        None => discard(target.fd(), inner, len),
                    };
                    match sent {
                        Ok(()) => state.handed_off += u32::from(self.discards.is_some()),
                        Err(e) => state.errno = e.raw_os_error().or(Some(libc::EIO)),
                    }
                }
            }
        }
        entries
    }

    /// Starts the discard worker for a block device's first discard; where
    /// it cannot start, discards run on this thread as before.
    fn start_discards(&mut self) {
        let devices = self
            .targets
            .iter()
            .any(|t| t.kind == TargetKind::BlockDevice);
        if devices && self.discards.is_none() {
            self.discards = Discards::start(self.ring.as_raw_fd()).ok();
        }
    }

    /// Submits what is queued without waiting.
    pub fn submit_queued(&mut self) -> Result<(), EngineError> {
        self.ring.submit()?;
        Ok(())
    }

    /// Appends every command finished so far to `finished`, stamped `now`.
    pub fn reap(&mut self, now: Nanos, finished: &mut Vec<Finished>) {
        let done: Vec<(u64, i32)> = self
            .ring
            .completion()
            .map(|cqe| (cqe.user_data(), cqe.result()))
            .collect();
        for (user_data, result) in done {
            let slot = user_data as u32;
            if slot == discards::NO_SLOT {
                continue;
            }
            self.in_kernel = self.in_kernel.saturating_sub(1);
            let Some(state) = self.slots[slot as usize].as_mut() else {
                continue;
            };
            state.parts_left = state.parts_left.saturating_sub(1);
            if result < 0 {
                state.errno = Some(-result);
            } else if matches!(state.command.op, Op::Read | Op::Write)
                && result as u64 != state.command.requests[0].len.0
            {
                state.errno = Some(libc::EIO);
            }
            if state.parts_left == 0 {
                self.done_now.push(slot);
            }
        }
        let any_done = !self.done_now.is_empty();
        for slot in std::mem::take(&mut self.done_now) {
            self.finish(slot, now, finished);
        }
        if any_done && !self.held.is_empty() {
            self.send_released();
        }
    }

    fn finish(&mut self, slot: u32, now: Nanos, finished: &mut Vec<Finished>) {
        let state = self.slots[slot as usize]
            .take()
            .expect("a finished slot holds its command");
        self.free.push(slot);
        self.in_flight -= 1;
        if state.command.op == Op::Trim {
            self.trims_sent.retain(|&s| s != slot);
        }
        let request = &state.command.requests[0];
        self.times
            .record(state.command.op, request.len.0, state.sent.elapsed());
        if let Some(v) = &mut self.verifier {
            let (offset, len) = (request.offset.0, request.len.0);
            match (state.command.op, state.errno) {
                (Op::Write, None) => v.write_done(offset, len, state.generation),
                (Op::Write, Some(_)) => v.write_failed(offset, len, state.generation),
                (Op::Read, None) => {
                    let whole = len as usize / BLOCK * BLOCK;
                    let buf = self.buffers.slice_mut(slot as usize, whole);
                    v.check(offset, buf, &state.expected);
                }
                _ => {}
            }
        }
        let data = (self.keep_read_data && state.command.op == Op::Read && state.errno.is_none())
            .then(|| {
                self.buffers
                    .slice_mut(slot as usize, request.len.0 as usize)
                    .to_vec()
            });
        finished.push(Finished {
            outcome: if state.errno.is_some() {
                Outcome::Error
            } else {
                Outcome::Ok
            },
            errno: state.errno,
            at: now,
            data,
            command: state.command,
        });
    }
}

/// A pattern, not zeros, so drives that compress zeros do no less work.
fn fill_with_pattern(buffers: &mut Buffers) {
    for i in 0..buffers.count() {
        let size = buffers.size();
        let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ i as u64;
        for chunk in buffers.slice_mut(i, size).chunks_exact_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            chunk.copy_from_slice(&x.to_le_bytes());
        }
    }
}

/// The errno a command gets when the ring would not take it.
fn errno_of(error: &EngineError) -> i32 {
    match error {
        EngineError::Io(e) | EngineError::Unsupported(e) => e.raw_os_error().unwrap_or(libc::EIO),
        _ => libc::EIO,
    }
}

/// How long dropping an engine waits for the kernel to finish what is in
/// flight. A device that stops answering can hold a command for the block
/// layer's timeout (30 s) and its retries; past this the buffers are leaked
/// instead, so that dropping never hangs and the kernel never writes into
/// freed memory.
pub const DROP_WAIT: Duration = Duration::from_secs(5);

/// The longest single wait while dropping, so the deadline is kept.
const MAX_DROP_NAP: Duration = Duration::from_millis(100);

impl Drop for Engine {
    fn drop(&mut self) {
        // What waited behind a trim is not sent now (overlap.rs).
        self.held.clear();
        // Commands done without the ring have no completion to wait for:
        // hand them back now, then wait only for the kernel's operations.
        let mut sink = Vec::new();
        self.reap(Nanos::ZERO, &mut sink);
        let deadline = Instant::now() + DROP_WAIT;
        while self.in_kernel > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || self.wait(left.min(MAX_DROP_NAP)).is_err() {
                // Cannot tell when the kernel is done with the buffers:
                // leak them rather than free memory it may write.
                self.buffers.leak();
                return;
            }
            sink.clear();
            self.reap(Nanos::ZERO, &mut sink);
        }
    }
}

mod discards;
mod overlap;
mod ring;
mod times;
mod waiting;
use discards::Discards;
use times::CompletionTimes;
#[cfg(test)]
pub(crate) mod tests;
