//! Overlapping commands finish in the order they were sent where the
//! kernel would not keep it. A trim on a file is a hole punch that io_uring
//! hands to a worker thread, so a write sent after it over the same bytes
//! often completes first and is then punched away (fio's `trimwrite` sends
//! each write after its trim has completed). So a command that overlaps a
//! trim in flight, a trim that overlaps a command in flight, and a command
//! that overlaps one already held wait in their slots (the scheduler counts
//! them in flight) and are sent, in the order they came, once what they
//! overlap has finished (a read behind a held write goes with it).
//!
//! This keeps the order commands reach the engine in; that no policy sends
//! a trim after a write queued later over its bytes is the scheduler's
//! part (the write takes its range out of the waiting trim).

use std::time::Instant;

use iosteer_sched::{Command, Op};

use super::Engine;

impl Engine {
    /// Whether `command` must wait: it overlaps a command in flight, one of
    /// the two a trim, or one of the `held` ones. Trims are few: a read or
    /// write looks at the trims in flight only; a trim at every command.
    pub(super) fn must_wait(&self, command: &Command, held: &[u32]) -> bool {
        let overlaps_slot = |slot: &u32| {
            let state = self.slots[*slot as usize].as_ref();
            state.is_some_and(|s| overlap(&s.command, command))
        };
        let in_the_way = match command.op {
            Op::Trim => {
                (self.slots.iter().flatten()).any(|s| !s.held && overlap(&s.command, command))
            }
            _ => self.trims_sent.iter().any(overlaps_slot),
        };
        in_the_way || held.iter().any(overlaps_slot)
    }

    /// Sends the held commands that no longer wait, in the order they came.
    /// One the ring refuses comes back from the next reap with its error.
    pub(super) fn send_released(&mut self) {
        let mut still = Vec::new();
        for slot in std::mem::take(&mut self.held) {
            let state = self.slots[slot as usize].as_ref();
            let state = state.expect("a held slot holds its command");
            if self.must_wait(&state.command, &still) {
                still.push(slot);
                continue;
            }
            let mut state = self.slots[slot as usize].take().expect("held");
            (state.held, state.sent) = (false, Instant::now());
            let entries = self.entries(slot, &mut state);
            self.slots[slot as usize] = Some(state);
            let _ = self.send(slot, entries);
        }
        self.held = still;
    }
}

/// Whether two commands touch a byte in common.
fn overlap(a: &Command, b: &Command) -> bool {
    let touches = |x: &iosteer_sched::Request, y: &iosteer_sched::Request| {
        x.offset.0 < y.end() && y.offset.0 < x.end()
    };
    (a.requests.iter()).any(|x| b.requests.iter().any(|y| touches(x, y)))
}
