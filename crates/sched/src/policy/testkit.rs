//! A small test bench for policy tests: a fake device with a latency per
//! command, driven through the [`Scheduler`] interface as a caller would
//! (dispatch after every arrival, completion and tick that asks for it).

use std::ops::Range;

use crate::config::{apply_pairs, Configurable};
use crate::request::{Command, Dispatch, Op, Outcome, Request};
use crate::scheduler::{DeviceView, Scheduler};
use crate::units::Nanos;

pub(crate) struct Bench {
    pub now: Nanos,
    pub slots: u32,
    /// Commands in the device and when each finishes.
    device: Vec<(Nanos, Command)>,
    latency: Box<dyn Fn(&Command) -> Nanos>,
    /// Every command sent, with its dispatch time.
    pub sent: Vec<Command>,
}

impl Bench {
    pub fn new(slots: u32, latency: impl Fn(&Command) -> Nanos + 'static) -> Bench {
        Bench {
            now: Nanos::ZERO,
            slots,
            device: Vec::new(),
            latency: Box::new(latency),
            sent: Vec::new(),
        }
    }

    pub fn submit(&mut self, s: &mut dyn Scheduler, request: Request) {
        s.enqueue(request, self.now);
        self.pump(s);
    }

    /// Submits one after the other, now, a 4 KiB request of `op` for each id
    /// in `ids`, id MiB into the drive.
    pub fn submit_each(&mut self, s: &mut dyn Scheduler, op: Op, ids: Range<u64>) {
        for id in ids {
            self.submit(s, Request::new(id, op, id << 20, 4096, self.now));
        }
    }

    /// Enqueues requests arriving at one instant, then dispatches, as the
    /// simulator and the engine do.
    pub fn submit_together(&mut self, s: &mut dyn Scheduler, requests: Vec<Request>) {
        for request in requests {
            s.enqueue(request, self.now);
        }
        self.pump(s);
    }

    fn pump(&mut self, s: &mut dyn Scheduler) {
        loop {
            let view = DeviceView::new(self.slots, self.device.len() as u32);
            match s.dispatch(self.now, view) {
                None => return,
                Some(Dispatch::CompletedWithoutDevice(_)) => {}
                Some(Dispatch::ToDevice(command)) => {
                    let done = self.now + (self.latency)(&command);
                    self.device.push((done, command.clone()));
                    self.sent.push(command);
                }
            }
        }
    }

    /// Runs completions and timers up to `until`.
    pub fn advance(&mut self, s: &mut dyn Scheduler, until: Nanos) {
        loop {
            let done = self.device.iter().map(|(t, _)| *t).min();
            let timer = s.next_timer();
            let Some(next) = [done, timer].into_iter().flatten().min() else {
                break;
            };
            if next > until {
                break;
            }
            self.now = self.now.max(next);
            let mut retry = false;
            while let Some(i) = self.device.iter().position(|(t, _)| *t <= self.now) {
                let (_, command) = self.device.swap_remove(i);
                retry |= s
                    .complete(&command.completion(Outcome::Ok), self.now)
                    .should_dispatch();
            }
            if timer.is_some_and(|t| t <= self.now) {
                retry |= s.tick(self.now).should_dispatch();
            }
            if retry {
                self.pump(s);
            }
        }
        self.now = until;
    }
}

/// Dispatches at `now` until the scheduler holds back, to a device of
/// `slots` that holds `in_flight` commands and then each one sent; returns
/// the commands sent.
pub(crate) fn drain(s: &mut dyn Scheduler, now: Nanos, slots: u32, in_flight: u32) -> Vec<Command> {
    let mut sent = Vec::new();
    while let Some(Dispatch::ToDevice(c)) =
        s.dispatch(now, DeviceView::new(slots, in_flight + sent.len() as u32))
    {
        sent.push(c);
    }
    sent
}

/// The id of each command's first request.
pub(crate) fn ids(sent: &[Command]) -> Vec<u64> {
    sent.iter().map(|c| c.requests[0].id.0).collect()
}

/// A policy configuration: the defaults with `settings` (`key=value,...`)
/// applied, which must be valid.
pub(crate) fn configured<C: Default + Configurable>(settings: &str) -> C {
    let mut config = C::default();
    apply_pairs(&mut config, settings).unwrap();
    config
}

/// Milliseconds, short enough to keep a test's calls on one line.
pub(crate) fn ms(v: u64) -> Nanos {
    Nanos::from_millis(v)
}

/// Microseconds, as [`ms`].
pub(crate) fn us(v: u64) -> Nanos {
    Nanos::from_micros(v)
}
