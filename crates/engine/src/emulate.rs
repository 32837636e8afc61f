//! An emulated drive: the simulator's SSD model ([`iosteer_device::Device`])
//! run in real time behind the same loop as a real target, so the closed
//! loop (a policy steering writes from read latency) can be tried on a
//! misbehaving drive on any machine, with no file and no root.
//!
//! The model is event driven in simulated nanoseconds; here its clock is the
//! run's wall clock. Commands enter when the loop dispatches them, and the
//! loop sleeps until the model's next event (a completion, a NAND operation
//! ending, an idle GC step) or the loop's own timers, whichever is first.
//! Completions are stamped with the model's completion time, not the moment
//! the loop woke, so a late wake-up (the host was busy) does not add to the
//! latency the model reports; it only delays the next dispatch, as a slow
//! interrupt would.

use std::time::Duration;

use iosteer_device::Device;
use iosteer_sched::{Command, DeviceView, Nanos};

use crate::engine::{EngineError, Finished};
use crate::runner::Backend;

/// Sleeps shorter than this are spun instead: a thread sleep overshoots by
/// tens of microseconds, as much as a NAND read takes.
const SPIN_BELOW: Duration = Duration::from_micros(100);

/// The device model as a [`Backend`].
pub struct Emulated {
    device: Device,
    finished: Vec<iosteer_device::device::Finished>,
}

impl Emulated {
    /// Runs `device` (already aged, if it should be) from time zero.
    pub fn new(device: Device) -> Emulated {
        Emulated {
            device,
            finished: Vec::new(),
        }
    }

    /// The drive, for its statistics.
    pub fn device(&self) -> &Device {
        &self.device
    }
}

impl Backend for Emulated {
    fn view(&self) -> DeviceView {
        self.device.view()
    }

    fn submit(&mut self, command: Command, now: Nanos) -> Result<(), EngineError> {
        self.device
            .submit(command, now)
            .map_err(|r| EngineError::Full {
                in_flight: r.in_flight,
                slots: r.slots,
            })
    }

    fn submit_queued(&mut self) -> Result<(), EngineError> {
        Ok(())
    }

    fn wait(&mut self, now: Nanos, timeout: Duration) -> Result<(), EngineError> {
        let until_event = self
            .device
            .next_event()
            .map_or(timeout, |t| Duration::from_nanos(t.0.saturating_sub(now.0)));
        let sleep = timeout.min(until_event);
        if sleep >= SPIN_BELOW {
            std::thread::sleep(sleep - SPIN_BELOW / 2);
        } else {
            let start = std::time::Instant::now();
            while start.elapsed() < sleep {
                std::hint::spin_loop();
            }
        }
        Ok(())
    }

    fn reap(&mut self, now: Nanos, finished: &mut Vec<Finished>) {
        self.device.advance(now, &mut self.finished);
        finished.extend(self.finished.drain(..).map(|f| Finished {
            command: f.command,
            at: f.at,
            outcome: f.outcome,
            errno: None,
            data: None,
        }));
    }

    fn drive_gauges(&self) -> Option<(u64, u64)> {
        let ftl = self.device.ftl();
        Some((ftl.total_free_blocks(), ftl.counters.gc_pages_moved))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosteer_device::DeviceConfig;
    use iosteer_sched::{Op, Request};

    #[test]
    fn a_read_completes_after_the_models_latency_in_real_time() {
        let device = Device::new(DeviceConfig::preset("consumer-sata").unwrap()).unwrap();
        let mut drive = Emulated::new(device);
        let read = Request::new(1, Op::Read, 0, 4096, Nanos::ZERO);
        drive
            .submit(Command::single(read, Nanos::ZERO), Nanos::ZERO)
            .unwrap();
        let start = std::time::Instant::now();
        let mut finished = Vec::new();
        while finished.is_empty() {
            let now = Nanos(start.elapsed().as_nanos() as u64);
            drive.wait(now, Duration::from_millis(5)).unwrap();
            drive.reap(Nanos(start.elapsed().as_nanos() as u64), &mut finished);
            assert!(start.elapsed() < Duration::from_secs(5), "never completed");
        }
        let at = finished[0].at;
        // The model's own completion time, not when the loop woke: a never
        // written page still pays command overhead and transfer.
        assert!(at > Nanos::ZERO && at < Nanos::from_millis(5), "{at:?}");
        assert!(start.elapsed() >= Duration::from_nanos(at.0));
        assert_eq!(drive.view().in_flight, 0);
    }
}
