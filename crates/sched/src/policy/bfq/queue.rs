//! One BFQ queue: a tenant's sync or async requests, its weight (and weight
//! raising), its budget in sectors and its place in B-WF2Q+ virtual time.

use std::collections::BTreeMap;

use super::{MAX_SERVICE_FROM_WR, SEEKY_COUNT};
use crate::ordering::Queued;
use crate::units::Nanos;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Raising {
    None,
    Interactive,
    SoftRealTime,
}

#[derive(Debug)]
pub(super) struct BfqQueue {
    /// Reads and sync writes (`true`), or buffered writes: the two queues
    /// of a tenant, as upstream's sync and async queues.
    pub(super) sync: bool,
    /// The tenant's weight, before raising.
    pub(super) weight: u32,
    /// Weight raising in effect: its kind, the factor on `weight` (1 when
    /// none), when it ends, and the sectors served under it (interactive
    /// raising stops at [`MAX_SERVICE_FROM_WR`]).
    pub(super) raising: Raising,
    pub(super) wr_coeff: u32,
    pub(super) wr_until: Nanos,
    pub(super) service_from_wr: u64,
    /// Requests by (offset, arrival sequence), and by arrival sequence
    /// with their submission time and offset (for the expiry check).
    pub(super) sorted: BTreeMap<(u64, u64), Queued>,
    pub(super) fifo: BTreeMap<u64, (Nanos, u64)>,
    /// Virtual start and finish times in B-WF2Q+.
    pub(super) start: u64,
    pub(super) finish: u64,
    /// Sectors: the current budget, the feedback's next one, and what was
    /// used of the current one.
    pub(super) budget: u64,
    pub(super) max_budget: u64,
    pub(super) service: u64,
    /// Whether it has requests queued, and how many of its requests the
    /// device holds.
    pub(super) busy: bool,
    pub(super) dispatched: u32,
    /// One bit a request, newest lowest: whether it was small and far from
    /// the end of the one before (`last_request_end`, bytes); over
    /// [`SEEKY_COUNT`] bits set, the queue is seeky.
    pub(super) seek_history: u32,
    pub(super) last_request_end: u64,
    /// When it last stopped being busy (`None`: never busy yet).
    pub(super) idle_since: Option<Nanos>,
    /// Soft real-time: when it last became backlogged, the sectors served
    /// since, and the earliest time it may be raised again (service paced
    /// at the soft real-time rate).
    pub(super) backlogged_since: Nanos,
    pub(super) service_from_backlogged: u64,
    pub(super) soft_rt_next_start: Nanos,
}

impl BfqQueue {
    pub(super) fn new(sync: bool, weight: u32, max_budget: u64) -> BfqQueue {
        BfqQueue {
            sync,
            weight,
            raising: Raising::None,
            wr_coeff: 1,
            wr_until: Nanos::ZERO,
            service_from_wr: 0,
            sorted: BTreeMap::new(),
            fifo: BTreeMap::new(),
            start: 0,
            finish: 0,
            budget: 0,
            max_budget: max_budget * 2 / 3,
            service: 0,
            busy: false,
            dispatched: 0,
            seek_history: 0,
            last_request_end: 0,
            idle_since: None,
            backlogged_since: Nanos::ZERO,
            service_from_backlogged: 0,
            soft_rt_next_start: Nanos::ZERO,
        }
    }

    pub(super) fn effective_weight(&self) -> u64 {
        u64::from(self.weight) * u64::from(self.wr_coeff)
    }

    pub(super) fn is_seeky(&self) -> bool {
        self.seek_history.count_ones() > SEEKY_COUNT
    }

    pub(super) fn end_raising_if_due(&mut self, now: Nanos) {
        let served_enough =
            self.raising == Raising::Interactive && self.service_from_wr >= MAX_SERVICE_FROM_WR;
        if self.wr_coeff > 1 && (now >= self.wr_until || served_enough) {
            self.wr_coeff = 1;
            self.raising = Raising::None;
        }
    }
}
