//! Building the engine's io_uring: an ordinary ring with fio's flags, or an
//! IOPOLL ring once a probe read has shown the target completes polled I/O.
//! The probe reads into a buffer of its own, never one of the engine's
//! slots, so a probe read that outlives its timeout can only write into
//! memory leaked for it.

use std::io;
use std::time::{Duration, Instant};

use io_uring::{opcode, types, IoUring};

use super::{EngineError, Reap};
use crate::buffers::Buffers;
use crate::target::Target;
use crate::verify::BLOCK;

/// An ordinary ring. Waiting for interrupts, it takes fio's flags: the
/// kernel runs completion work when this one thread enters it rather than
/// interrupting it (measured against fio on a virtio disk, submitting each
/// command at once plus these flags took iosteer's p50 from 1.30x fio's to
/// 1.05x; bench/README.md). Spinning modes must not defer completions to
/// the next system call, since they make none; they get a plain ring, as
/// do kernels older than 6.1 that refuse the flags.
pub(super) fn ring(entries: u32, reap: Reap) -> Result<IoUring, EngineError> {
    let plain = || {
        IoUring::builder()
            .setup_cqsize(4 * entries)
            .build(entries)
            .map_err(EngineError::Unsupported)
    };
    if reap != Reap::Interrupt {
        return plain();
    }
    IoUring::builder()
        .setup_cqsize(4 * entries)
        .setup_coop_taskrun()
        // Flags pending completion work, so a plain submit runs it too.
        .setup_taskrun_flag()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
        .or_else(|_| plain())
}

/// An IOPOLL ring, if the target takes polled I/O: one read of its first
/// block must complete within [`IOPOLL_PROBE_TIMEOUT`].
///
/// The probe reads into a buffer of its own, never one of the engine's
/// slots: a read that has not completed may still land in it, so the probe
/// frees it only after seeing its completion and otherwise leaks it with
/// the ring ([`abandon_probe`]).
pub(super) fn iopoll_ring(entries: u32, target: &Target) -> Result<IoUring, String> {
    if !target.direct {
        return Err("IOPOLL needs O_DIRECT, and the target is opened buffered".into());
    }
    if target.size < BLOCK as u64 {
        return Err("the target is smaller than one block".into());
    }
    let mut ring: IoUring = IoUring::builder()
        .setup_cqsize(4 * entries)
        .setup_iopoll()
        .build(entries)
        .map_err(|e| format!("the kernel refused an IOPOLL ring: {e}"))?;
    let probe = Buffers::new(1, BLOCK).map_err(|e| e.to_string())?;
    // SAFETY: `probe` is freed below only when the read has completed or
    // was never submitted; while it may be in flight, it is leaked with the
    // ring.
    match unsafe { probe_read(&mut ring, &probe, target.fd(), IOPOLL_PROBE_TIMEOUT) } {
        Probe::Done(Ok(())) => Ok(ring),
        Probe::Done(Err(why)) => Err(why),
        Probe::InFlight(why) => {
            abandon_probe(ring, probe);
            Err(why)
        }
    }
}

/// How long the IOPOLL probe's read may take.
const IOPOLL_PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// How the IOPOLL probe's read ended.
pub(super) enum Probe {
    /// It completed (or was never submitted): its buffer is free again.
    Done(Result<(), String>),
    /// It may still be in flight: the kernel may yet write its buffer.
    InFlight(String),
}

/// Reads the first block of `fd` into `probe` through `ring` and polls for
/// its completion for up to `timeout`.
///
/// # Safety
///
/// On [`Probe::InFlight`] the kernel may still write into `probe`: the
/// caller must keep it allocated for as long as the ring lives (in
/// practice, leak both with [`abandon_probe`]).
pub(super) unsafe fn probe_read(
    ring: &mut IoUring,
    probe: &Buffers,
    fd: i32,
    timeout: Duration,
) -> Probe {
    let read = opcode::Read::new(types::Fd(fd), probe.ptr(0), BLOCK as u32)
        .offset(0)
        .build();
    // SAFETY: the buffer stays valid while the read may be in flight (this
    // function's contract).
    if let Err(e) = unsafe { ring.submission().push(&read) } {
        return Probe::Done(Err(e.to_string()));
    }
    let start = Instant::now();
    loop {
        // On an IOPOLL ring every enter polls the driver for completions.
        if let Err(e) = ring.submit() {
            return Probe::InFlight(format!("IOPOLL submit: {e}"));
        }
        if let Some(result) = ring.completion().next().map(|cqe| cqe.result()) {
            return Probe::Done(match result {
                r if r >= 0 => Ok(()),
                r => Err(format!(
                    "the target does not take polled I/O ({})",
                    io::Error::from_raw_os_error(-r)
                )),
            });
        }
        if start.elapsed() > timeout {
            return Probe::InFlight(format!("a polled read did not complete within {timeout:?}"));
        }
    }
}

/// Leaks a probe's ring and buffer whose read never completed: the kernel
/// may still write into the buffer, so it must never be freed or reused.
pub(super) fn abandon_probe(ring: IoUring, mut probe: Buffers) {
    probe.leak();
    std::mem::forget(ring);
}
