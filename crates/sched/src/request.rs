//! What flows through a scheduler: requests in, commands out, completions back.
//!
//! A producer builds a [`Request`] and hands it to
//! [`Scheduler::enqueue`](crate::Scheduler::enqueue). The scheduler later hands
//! back a [`Dispatch`]: either a [`Command`] for the device (one request, or
//! several trims coalesced into one command) or a request that it completed
//! without sending (an advisory trim, or a read answered from queued writes). When the device finishes a command, the
//! caller reports it with a [`Completion`] built from that command.

use smallvec::SmallVec;

use crate::units::{Bytes, Nanos};

/// The kind of operation. It is also the statistics class: each operation has
/// its own counters and histograms.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Read,
    Write,
    /// Discard / deallocate / BIO_DELETE: the data in the range is no longer needed.
    Trim,
    /// Make every write completed before it durable.
    Flush,
}

impl Op {
    pub const ALL: [Op; 4] = [Op::Read, Op::Write, Op::Trim, Op::Flush];

    /// Dense index for per-class arrays.
    pub const fn index(self) -> usize {
        self as usize
    }

    pub const fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
            Op::Flush => "flush",
        }
    }
}

/// Expected lifetime of the data written, as in Linux's `F_SET_RW_HINT` and
/// fio's `write_hint`. The device model may place each hint in its own blocks.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum LifetimeHint {
    #[default]
    None,
    Short,
    Medium,
    Long,
    Extreme,
}

impl LifetimeHint {
    pub const ALL: [LifetimeHint; 5] = [
        LifetimeHint::None,
        LifetimeHint::Short,
        LifetimeHint::Medium,
        LifetimeHint::Long,
        LifetimeHint::Extreme,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            LifetimeHint::None => "none",
            LifetimeHint::Short => "short",
            LifetimeHint::Medium => "medium",
            LifetimeHint::Long => "long",
            LifetimeHint::Extreme => "extreme",
        }
    }
}

/// Who issued a request (a process, a cgroup, a client): the unit of
/// per-tenant policies. Policies that do not care ignore it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TenantId(pub u32);

/// The caller's name for a request, handed back in every dispatch so the caller
/// can find its buffer and its producer. The scheduler never interprets it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub u64);

/// One I/O request as a producer submits it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub id: RequestId,
    pub op: Op,
    /// Byte offset on the device (ignored for flushes).
    pub offset: Bytes,
    /// Length in bytes (zero for flushes).
    pub len: Bytes,
    /// When the request reached the scheduler; time queued by the scheduler is
    /// measured from here to dispatch.
    pub submitted: Nanos,
    pub hint: LifetimeHint,
    pub tenant: TenantId,
    /// A write forced to stable media (FUA, force unit access): what Linux
    /// sends for an O_SYNC or O_DSYNC direct write. A drive with a volatile
    /// write cache completes it only once it is programmed; other drives
    /// treat it as a plain write.
    pub fua: bool,
}

impl Request {
    pub fn new(id: u64, op: Op, offset: u64, len: u64, submitted: Nanos) -> Request {
        Request {
            id: RequestId(id),
            op,
            offset: Bytes(offset),
            len: Bytes(len),
            submitted,
            hint: LifetimeHint::None,
            tenant: TenantId(0),
            fua: false,
        }
    }

    pub fn with_hint(mut self, hint: LifetimeHint) -> Request {
        self.hint = hint;
        self
    }

    pub fn with_tenant(mut self, tenant: TenantId) -> Request {
        self.tenant = tenant;
        self
    }

    /// Marks a write FUA (see [`Request::fua`]); other requests stay as
    /// they are, as the block layer drops the flag from them.
    pub fn with_fua(mut self, fua: bool) -> Request {
        self.fua = fua && self.op == Op::Write;
        self
    }

    /// First byte past the request.
    pub fn end(&self) -> u64 {
        self.offset.0.saturating_add(self.len.0)
    }

    /// Whether two requests touch a common byte.
    pub fn overlaps(&self, other: &Request) -> bool {
        self.offset.0 < other.end() && other.offset.0 < self.end()
    }
}

/// One command sent to the device. Reads, writes and flushes carry exactly one
/// request; a trim command may carry several coalesced trims (the ranges of one
/// ATA DSM TRIM or NVMe deallocate).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    pub op: Op,
    pub requests: SmallVec<[Request; 1]>,
    /// When the scheduler released it; the device latency runs from here.
    pub dispatched: Nanos,
}

impl Command {
    pub fn single(request: Request, now: Nanos) -> Command {
        Command {
            op: request.op,
            requests: SmallVec::from_buf([request]),
            dispatched: now,
        }
    }

    /// Total bytes the command covers.
    pub fn bytes(&self) -> Bytes {
        self.requests
            .iter()
            .fold(Bytes::ZERO, |total, r| total + r.len)
    }

    /// The completion to report when the device finishes this command.
    pub fn completion(&self, outcome: Outcome) -> Completion {
        Completion {
            op: self.op,
            bytes: self.bytes(),
            requests: self.requests.len() as u32,
            dispatched: self.dispatched,
            outcome,
            tenant: self.requests[0].tenant,
            submitted: self
                .requests
                .iter()
                .map(|r| r.submitted)
                .min()
                .unwrap_or(self.dispatched),
        }
    }
}

/// What [`Scheduler::dispatch`](crate::Scheduler::dispatch) decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dispatch {
    /// Send this command to the device, then report its [`Completion`].
    ToDevice(Command),
    /// A request the scheduler finished itself: an advisory trim it chose
    /// not to send (it piled up behind other work, or a producer asked for a
    /// speed-up), or a read it answered from queued writes' data (steer).
    /// Complete it to its producer as successful; do not report a
    /// completion.
    CompletedWithoutDevice(Request),
}

/// How a device command ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Error,
}

/// A finished device command, reported back to the scheduler.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub op: Op,
    pub bytes: Bytes,
    /// How many requests the command carried.
    pub requests: u32,
    pub dispatched: Nanos,
    pub outcome: Outcome,
    /// The tenant of the command's first request (per-tenant policies charge
    /// completions to it; a coalesced trim may carry several tenants).
    pub tenant: TenantId,
    /// The earliest arrival among its requests: the total latency runs from
    /// here.
    pub submitted: Nanos,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_is_half_open() {
        let a = Request::new(1, Op::Read, 0, 4096, Nanos::ZERO);
        let b = Request::new(2, Op::Write, 4096, 4096, Nanos::ZERO);
        let c = Request::new(3, Op::Write, 4095, 2, Nanos::ZERO);
        assert!(!a.overlaps(&b));
        assert!(a.overlaps(&c) && b.overlaps(&c));
    }

    #[test]
    fn a_completion_carries_the_command_totals() {
        let mut cmd = Command::single(Request::new(1, Op::Trim, 0, 100, Nanos(1)), Nanos(5));
        cmd.requests
            .push(Request::new(2, Op::Trim, 500, 50, Nanos(2)));
        let done = cmd.completion(Outcome::Ok);
        assert_eq!(
            (done.bytes, done.requests, done.dispatched),
            (Bytes(150), 2, Nanos(5))
        );
    }
}
