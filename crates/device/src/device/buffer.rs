//! The write buffer of a sector-mapped drive: mapping units smaller than a
//! page are gathered per write frontier (FTL stream) until a page is full,
//! then go to a die as one page program.
//!
//! A page-mapped drive (`ftl.mapping_unit` = page size) never comes here: its
//! writes queue page by page as before. Here each unit of a write joins its
//! stream's open group; a full group is queued at the least busy die; a
//! partly filled one is queued when it has waited `ftl.buffer_flush_us` or
//! when a FLUSH arrives, and the FTL then pads the rest of its page. A write
//! completes when all of its units are programmed. Groups live in a slab
//! indexed by `u32` (no allocation per page, no hash map): a die's page task
//! names its group.

use iosteer_sched::Nanos;

use super::Device;
use crate::config::MAX_UNITS_PER_PAGE;

/// A page task that carries one page of its own, not a group.
pub(super) const NO_GROUP: u32 = u32::MAX;

/// The units of one page program: each a logical unit and the command
/// (slot) waiting for it.
#[derive(Clone, Debug)]
pub(super) struct WriteGroup {
    pub(super) len: u32,
    pub(super) lpns: [u32; MAX_UNITS_PER_PAGE as usize],
    pub(super) slots: [u32; MAX_UNITS_PER_PAGE as usize],
}

impl WriteGroup {
    fn empty() -> WriteGroup {
        WriteGroup {
            len: 0,
            lpns: [0; MAX_UNITS_PER_PAGE as usize],
            slots: [0; MAX_UNITS_PER_PAGE as usize],
        }
    }
}

/// The open (filling) group of one stream.
#[derive(Copy, Clone, Debug)]
pub(super) struct OpenGroup {
    pub(super) group: u32,
    /// When its first unit's data was in: the flush deadline counts from it.
    pub(super) since: Nanos,
}

impl Device {
    /// Whether the FTL maps units smaller than a page.
    pub(super) fn sector_mapped(&self) -> bool {
        self.units_per_page > 1
    }

    /// Adds logical unit `lpn` of the write in `slot` to `stream`'s buffer at
    /// `at`; queues the group at a die when its page is full.
    pub(super) fn buffer_unit(&mut self, lpn: u32, slot: u32, stream: u8, at: Nanos) {
        self.in_dram.hold(lpn);
        let open = match self.open_groups[usize::from(stream)] {
            Some(open) => open,
            None => {
                let open = OpenGroup {
                    group: self.new_group(),
                    since: at,
                };
                self.open_groups[usize::from(stream)] = Some(open);
                open
            }
        };
        let group = &mut self.groups[open.group as usize];
        let i = group.len as usize;
        group.lpns[i] = lpn;
        group.slots[i] = slot;
        group.len += 1;
        if group.len == self.units_per_page {
            self.dispatch_group(stream, at);
        }
    }

    /// Queues `stream`'s open group, full or not, at the least busy die.
    pub(super) fn dispatch_group(&mut self, stream: u8, at: Nanos) {
        let Some(open) = self.open_groups[usize::from(stream)].take() else {
            return;
        };
        let first = self.groups[open.group as usize].lpns[0];
        let d = self.write_die(first, at);
        let slot = self.groups[open.group as usize].slots[0];
        self.enqueue_page(d, slot, Some((open.group, stream)), (0, 0), at);
    }

    /// Queues every partly filled group (FLUSH).
    pub(super) fn flush_buffers(&mut self, at: Nanos) {
        for stream in 0..self.open_groups.len() {
            self.dispatch_group(stream as u8, at);
        }
    }

    /// When the next partly filled group times out, if any.
    pub(super) fn next_buffer_flush(&self) -> Option<Nanos> {
        // Asked at every event: a page-mapped drive never opens a group.
        if !self.sector_mapped() {
            return None;
        }
        self.open_groups
            .iter()
            .flatten()
            .map(|open| open.since + self.t_buffer_flush)
            .min()
    }

    /// Queues the groups whose wait ended by `now`.
    pub(super) fn flush_timed_out(&mut self, now: Nanos) {
        for stream in 0..self.open_groups.len() {
            if let Some(open) = self.open_groups[stream] {
                let deadline = open.since + self.t_buffer_flush;
                if deadline <= now {
                    self.dispatch_group(stream as u8, deadline);
                }
            }
        }
    }

    fn new_group(&mut self) -> u32 {
        if let Some(group) = self.free_groups.pop() {
            self.groups[group as usize].len = 0;
            return group;
        }
        self.groups.push(WriteGroup::empty());
        (self.groups.len() - 1) as u32
    }

    /// The page program of `group` ended at `at`: each of its units is done.
    pub(super) fn group_done(&mut self, group: u32, at: Nanos) {
        let len = self.groups[group as usize].len as usize;
        for i in 0..len {
            let slot = self.groups[group as usize].slots[i];
            self.in_dram.release(self.groups[group as usize].lpns[i]);
            self.page_done(slot, at);
        }
        self.free_groups.push(group);
    }
}
