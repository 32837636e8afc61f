//! Block-device discards off the engine's thread.
//!
//! A discard on a block device is the BLKDISCARD ioctl, which returns only
//! once the device has done it. Run on the engine's only thread, it held
//! every other job while it lasted: nothing sent, nothing reaped (a review
//! counted 0 reads sent beside 4,785 discards, where fio's other jobs sent
//! 10,883), so every figure of a trim workload was the engine's stall.
//!
//! Here a worker thread runs the ioctls, one after the other as they come,
//! and answers each through the engine's own ring: an `IORING_OP_MSG_RING`
//! (Linux 5.18) posts a completion there with the command's slot as its
//! user data and the ioctl's result (0 or -errno). The engine counts a
//! discard as a ring operation in flight and reaps it like any other, so
//! waiting, reaping and `Drop` need nothing of their own. Each discard
//! carries its own duplicate of the device's descriptor, so it never
//! reaches another file, even if the engine closed its targets while the
//! worker was still busy.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::mpsc;
use std::thread::JoinHandle;

use io_uring::{opcode, types, IoUring};

use crate::target::discard;

/// The user data of the worker's first answer, which names no command:
/// the engine's reap passes over it.
pub(super) const NO_SLOT: u32 = u32::MAX;

/// One discard for the worker: `[offset, offset + len)` of `device`, for
/// the command in `slot`.
struct Discard {
    device: File,
    offset: u64,
    len: u64,
    slot: u32,
}

/// The worker and the way to it; dropping it lets the worker finish what
/// it was given and waits for it.
pub(super) struct Discards {
    jobs: Option<mpsc::Sender<Discard>>,
    worker: Option<JoinHandle<()>>,
}

impl Discards {
    /// Starts a worker that answers through the ring `engine_ring`, once it
    /// has shown it can: a first answer for no slot ([`NO_SLOT`]) must
    /// reach that ring (older kernels have no MSG_RING, or refuse it from
    /// another thread to a single-issuer ring).
    pub(super) fn start(engine_ring: RawFd) -> io::Result<Self> {
        let mut ring = IoUring::new(2)?;
        let (jobs, inbox) = mpsc::channel::<Discard>();
        let (ready, answered) = mpsc::channel::<io::Result<()>>();
        let worker = std::thread::Builder::new()
            .name("iosteer-discard".into())
            .spawn(move || {
                let probe = answer(&mut ring, engine_ring, NO_SLOT, 0);
                let can = probe.is_ok();
                let _ = ready.send(probe);
                if !can {
                    return;
                }
                for job in inbox {
                    let result = match discard(job.device.as_raw_fd(), job.offset, job.len) {
                        Ok(()) => 0,
                        Err(e) => -e.raw_os_error().unwrap_or(libc::EIO),
                    };
                    drop(job.device);
                    // The engine gone (its ring closed), nobody waits for
                    // the answer: it is dropped.
                    let _ = answer(&mut ring, engine_ring, job.slot, result);
                }
            })?;
        let started = Discards {
            jobs: Some(jobs),
            worker: Some(worker),
        };
        answered.recv().map_err(io::Error::other)??;
        Ok(started)
    }

    /// Hands the worker a discard of `[offset, offset + len)` of `device`
    /// for the command in `slot`; its completion comes through the ring.
    pub(super) fn send(&self, device: &File, offset: u64, len: u64, slot: u32) -> io::Result<()> {
        let device = device.try_clone()?;
        let job = Discard {
            device,
            offset,
            len,
            slot,
        };
        let sent = self.jobs.as_ref().map(|jobs| jobs.send(job));
        match sent {
            Some(Ok(())) => Ok(()),
            _ => Err(io::Error::other("the discard worker has stopped")),
        }
    }
}

impl Drop for Discards {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// Posts `result` for `slot` as a completion in the ring `engine_ring`.
fn answer(ring: &mut IoUring, engine_ring: RawFd, slot: u32, result: i32) -> io::Result<()> {
    let entry =
        opcode::MsgRingData::new(types::Fd(engine_ring), result, u64::from(slot), None).build();
    // SAFETY: the entry references no memory of ours.
    unsafe { ring.submission().push(&entry) }.map_err(io::Error::other)?;
    ring.submit_and_wait(1)?;
    let posted = ring.completion().next().map(|cqe| cqe.result());
    match posted {
        Some(res) if res < 0 => Err(io::Error::from_raw_os_error(-res)),
        _ => Ok(()),
    }
}
