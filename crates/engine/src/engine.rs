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
use std::time::Duration;

use io_uring::{opcode, types, IoUring};
use iosteer_sched::{Command, DeviceView, Nanos, Op, Outcome};
use thiserror::Error;

use crate::buffers::Buffers;
use crate::target::{discard, Target, TargetKind};
use crate::verify::{Verifier, BLOCK};

#[derive(Debug, Error)]
pub enum EngineError {
    /// The kernel or the sandbox does not allow io_uring.
    #[error("io_uring is not available here: {0}")]
    Unsupported(io::Error),
    #[error("io_uring: {0}")]
    Io(#[from] io::Error),
    #[error("the engine accepts no command now ({in_flight} of {slots} slots in use)")]
    Full { in_flight: u32, slots: u32 },
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
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            queue_depth: 32,
            max_io_bytes: 1 << 20,
            verify: false,
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
}

#[derive(Debug)]
struct Slot {
    command: Command,
    parts_left: u32,
    errno: Option<i32>,
    /// Verify: the generation a write stamped, or what a read may find.
    generation: u64,
    expected: Vec<(u64, u64)>,
}

pub struct Engine {
    // Field order matters for Drop: `Drop::drop` drains the ring first, then
    // the ring closes before the buffers it references are freed.
    ring: IoUring,
    buffers: Buffers,
    target: Target,
    slots: Vec<Option<Slot>>,
    free: Vec<u32>,
    in_flight: u32,
    queue_depth: u32,
    /// Commands done without the ring (block-device discards, bad requests).
    done_now: Vec<u32>,
    verifier: Option<Verifier>,
}

impl Engine {
    pub fn new(target: Target, config: &EngineConfig) -> Result<Engine, EngineError> {
        let depth = config.queue_depth.max(1);
        let entries = (2 * depth + 8).next_power_of_two();
        let ring = IoUring::builder()
            .setup_cqsize(4 * entries)
            .build(entries)
            .map_err(EngineError::Unsupported)?;
        let mut buffers = Buffers::new(depth as usize, config.max_io_bytes);
        // A pattern, not zeros, so drives that compress zeros do no less work.
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
        // SAFETY: the iovecs point into `buffers`, which the engine keeps
        // until the ring is closed (see the struct's field order and Drop).
        unsafe { ring.submitter().register_buffers(&buffers.iovecs()) }
            .map_err(EngineError::Unsupported)?;
        Ok(Engine {
            ring,
            buffers,
            target,
            slots: (0..depth).map(|_| None).collect(),
            free: (0..depth).rev().collect(),
            in_flight: 0,
            queue_depth: depth,
            done_now: Vec::new(),
            verifier: config.verify.then(Verifier::default),
        })
    }

    pub fn target(&self) -> &Target {
        &self.target
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
        };
        let entries = self.entries(slot, &mut state);
        state.parts_left = entries.len() as u32;
        self.slots[slot as usize] = Some(state);
        if entries.is_empty() {
            self.done_now.push(slot);
        }
        for entry in entries {
            self.push(entry.user_data(u64::from(slot)))?;
        }
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
        let fd = types::Fd(self.target.fd());
        let op = state.command.op;
        match op {
            Op::Read | Op::Write => {
                let request = &state.command.requests[0];
                let (offset, len) = (request.offset.0, request.len.0);
                if len as usize > self.buffers.size()
                    || offset.saturating_add(len) > self.target.size
                {
                    state.errno = Some(libc::EINVAL);
                    return Vec::new();
                }
                let ptr = self.buffers.ptr(slot as usize);
                if op == Op::Read {
                    if let Some(v) = &self.verifier {
                        state.expected = v.expect(offset, len);
                    }
                    vec![opcode::ReadFixed::new(fd, ptr, len as u32, slot as u16)
                        .offset(offset)
                        .build()]
                } else {
                    if let Some(v) = &mut self.verifier {
                        let whole = len as usize / BLOCK * BLOCK;
                        let buf = self.buffers.slice_mut(slot as usize, whole);
                        state.generation = v.stamp(offset, buf);
                    }
                    vec![opcode::WriteFixed::new(fd, ptr, len as u32, slot as u16)
                        .offset(offset)
                        .build()]
                }
            }
            Op::Trim => self.trim_entries(fd, state),
            Op::Flush => vec![opcode::Fsync::new(fd)
                .flags(types::FsyncFlags::DATASYNC)
                .build()],
        }
    }

    fn trim_entries(&mut self, fd: types::Fd, state: &mut Slot) -> Vec<io_uring::squeue::Entry> {
        let mut entries = Vec::new();
        for request in &state.command.requests {
            let (offset, len) = (request.offset.0, request.len.0);
            if offset.saturating_add(len) > self.target.size {
                state.errno = Some(libc::EINVAL);
                continue;
            }
            match self.target.kind {
                TargetKind::File => entries.push(
                    opcode::Fallocate::new(fd, len)
                        .offset(offset)
                        .mode(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE)
                        .build(),
                ),
                TargetKind::BlockDevice => {
                    if let Err(e) = discard(self.target.fd(), offset, len) {
                        state.errno = e.raw_os_error().or(Some(libc::EIO));
                    }
                }
            }
        }
        entries
    }

    /// Submits what is queued and waits until a completion arrives or
    /// `timeout` passes (with nothing in flight, just sleeps).
    pub fn wait(&mut self, timeout: Duration) -> Result<(), EngineError> {
        if !self.done_now.is_empty() {
            self.ring.submit()?;
            return Ok(());
        }
        if self.in_flight == 0 {
            std::thread::sleep(timeout);
            return Ok(());
        }
        let ts = types::Timespec::from(timeout);
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e.into()),
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
        for slot in std::mem::take(&mut self.done_now) {
            self.finish(slot, now, finished);
        }
    }

    fn finish(&mut self, slot: u32, now: Nanos, finished: &mut Vec<Finished>) {
        let state = self.slots[slot as usize]
            .take()
            .expect("a finished slot holds its command");
        self.free.push(slot);
        self.in_flight -= 1;
        let request = &state.command.requests[0];
        if let (Some(v), None) = (&mut self.verifier, state.errno) {
            match state.command.op {
                Op::Write => v.write_done(request.offset.0, request.len.0, state.generation),
                Op::Read => {
                    let len = request.len.0 as usize / BLOCK * BLOCK;
                    let buf = self.buffers.slice_mut(slot as usize, len);
                    v.check(request.offset.0, buf, &state.expected);
                }
                _ => {}
            }
        }
        finished.push(Finished {
            outcome: if state.errno.is_some() {
                Outcome::Error
            } else {
                Outcome::Ok
            },
            errno: state.errno,
            at: now,
            command: state.command,
        });
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // The kernel may still write into the buffers: wait for every
        // operation before they are freed.
        let mut sink = Vec::new();
        while self.in_flight > 0 {
            if self.ring.submit_and_wait(1).is_err() {
                // Cannot tell when the kernel is done with the buffers:
                // leak them rather than free memory it may write.
                std::mem::forget(std::mem::replace(&mut self.buffers, Buffers::new(1, 0)));
                break;
            }
            self.reap(Nanos::ZERO, &mut sink);
            sink.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::OpenOptionsSpec;
    use iosteer_sched::Request;
    use std::os::unix::fs::FileExt;
    use std::path::{Path, PathBuf};

    /// A fresh file of `size` bytes in the build machine's temp directory.
    pub(crate) fn temp_file(name: &str, size: u64) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("iosteer-engine-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        let _ = std::fs::remove_file(&path);
        std::fs::File::create(&path).unwrap().set_len(size).unwrap();
        path
    }

    /// An engine on `path`, or `None` (with the reason printed, so the skip
    /// shows in the test output) where io_uring is not permitted.
    pub(crate) fn engine_or_skip(path: &Path, verify: bool) -> Option<Engine> {
        let spec = OpenOptionsSpec {
            writes: true,
            direct: true,
            ..OpenOptionsSpec::default()
        };
        let target = Target::open(path, &spec)
            .or_else(|_| {
                // A file system without O_DIRECT (tmpfs): buffered I/O.
                Target::open(
                    path,
                    &OpenOptionsSpec {
                        direct: false,
                        ..spec.clone()
                    },
                )
            })
            .unwrap();
        let config = EngineConfig {
            queue_depth: 8,
            max_io_bytes: 64 << 10,
            verify,
        };
        match Engine::new(target, &config) {
            Ok(engine) => Some(engine),
            Err(EngineError::Unsupported(e)) => {
                eprintln!("SKIPPED (counted): io_uring not permitted here: {e}");
                None
            }
            Err(e) => panic!("{e}"),
        }
    }

    fn run_one(engine: &mut Engine, op: Op, offset: u64, len: u64) -> Finished {
        let request = Request::new(offset, op, offset, len, Nanos::ZERO);
        engine
            .submit(Command::single(request, Nanos::ZERO))
            .unwrap();
        let mut finished = Vec::new();
        while finished.is_empty() {
            engine.wait(Duration::from_millis(100)).unwrap();
            engine.reap(Nanos::ZERO, &mut finished);
        }
        finished.pop().unwrap()
    }

    #[test]
    fn verified_writes_read_back_without_mismatches() {
        let path = temp_file("verify.img", 1 << 20);
        let Some(mut engine) = engine_or_skip(&path, true) else {
            return;
        };
        for i in 0..16 {
            let f = run_one(&mut engine, Op::Write, i * 16384, 16384);
            assert_eq!((f.outcome, f.errno), (Outcome::Ok, None));
        }
        for i in 0..16 {
            assert_eq!(
                run_one(&mut engine, Op::Read, i * 16384, 16384).outcome,
                Outcome::Ok
            );
        }
        assert_eq!(run_one(&mut engine, Op::Flush, 0, 0).outcome, Outcome::Ok);
        let v = engine.verifier().unwrap();
        assert_eq!((v.checked, v.mismatches), (64, 0));
    }

    #[test]
    fn a_corrupted_block_is_reported_with_its_offset() {
        let path = temp_file("corrupt.img", 1 << 20);
        let Some(mut engine) = engine_or_skip(&path, true) else {
            return;
        };
        run_one(&mut engine, Op::Write, 0, 65536);
        // Flip one byte of the third block behind the engine's back.
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.write_all_at(&[0xff], 2 * 4096 + 100).unwrap();
        file.sync_all().unwrap();
        run_one(&mut engine, Op::Read, 0, 65536);
        let v = engine.verifier().unwrap();
        assert_eq!(v.checked, 16);
        assert_eq!(v.mismatches, 1, "{:?}", v.first);
        assert_eq!(v.first[0].0, 2 * 4096);
    }

    #[test]
    fn errors_reach_the_request_that_caused_them() {
        let path = temp_file("errors.img", 1 << 20);
        let Some(mut engine) = engine_or_skip(&path, false) else {
            return;
        };
        let past_the_end = run_one(&mut engine, Op::Read, 1 << 20, 4096);
        assert_eq!(past_the_end.outcome, Outcome::Error);
        // O_DIRECT refuses a misaligned offset (EINVAL) where it is in use.
        if engine.target().direct {
            let misaligned = run_one(&mut engine, Op::Write, 100, 4096);
            assert_eq!(misaligned.errno, Some(libc::EINVAL));
        }
        assert_eq!(
            run_one(&mut engine, Op::Write, 0, 4096).outcome,
            Outcome::Ok
        );
        assert_eq!(engine.in_flight(), 0);
    }

    #[test]
    fn a_trim_punches_a_hole_in_a_file() {
        use std::os::unix::fs::MetadataExt;
        let path = temp_file("trim.img", 4 << 20);
        let Some(mut engine) = engine_or_skip(&path, false) else {
            return;
        };
        run_one(&mut engine, Op::Write, 0, 65536);
        run_one(&mut engine, Op::Flush, 0, 0);
        let before = std::fs::metadata(&path).unwrap().blocks();
        assert_eq!(
            run_one(&mut engine, Op::Trim, 0, 65536).outcome,
            Outcome::Ok
        );
        let after = std::fs::metadata(&path).unwrap().blocks();
        assert!(after < before, "blocks {before} -> {after}");
    }
}
