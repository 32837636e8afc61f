//! A backend whose clock runs on across the probe's steps.

use std::time::{Duration, Instant};

use iosteer_engine::runner::Backend;
use iosteer_engine::{EngineError, Finished};
use iosteer_sched::{Command, DeviceView, Nanos};

use super::ProbeError;

/// How long commands a step left in the target may take to finish.
const QUIESCE: Duration = Duration::from_secs(30);

/// The probe's one backend across its steps. Each step's loop counts time
/// from zero, but a drive's clock must not go back (the emulated drive keeps
/// its dies, link and idle GC on absolute time), so the backend sees the
/// probe's clock: the step's time plus when the step began.
pub struct Continuous<B> {
    inner: B,
    origin: Instant,
    offset: Nanos,
}

impl<B: Backend> Continuous<B> {
    pub fn new(inner: B) -> Continuous<B> {
        Continuous {
            inner,
            origin: Instant::now(),
            offset: Nanos::ZERO,
        }
    }

    fn now(&self) -> Nanos {
        Nanos(self.origin.elapsed().as_nanos() as u64)
    }

    /// A step begins: its time zero is now.
    pub fn begin_step(&mut self) {
        self.offset = self.now();
    }

    /// Waits for commands a step left in the target when its drain time ran
    /// out, so that the next step's scheduler never hears of them.
    pub fn quiesce(&mut self) -> Result<(), ProbeError> {
        let started = Instant::now();
        let mut finished = Vec::new();
        while self.inner.view().in_flight > 0 {
            if started.elapsed() > QUIESCE {
                return Err(ProbeError::Quiesce {
                    in_flight: self.inner.view().in_flight,
                    seconds: QUIESCE.as_secs(),
                });
            }
            let now = self.now();
            self.inner.wait(now, Duration::from_millis(50))?;
            self.inner.reap(self.now(), &mut finished);
            finished.clear();
        }
        Ok(())
    }
}

impl<B: Backend> Backend for Continuous<B> {
    fn view(&self) -> DeviceView {
        self.inner.view()
    }

    fn submit(&mut self, command: Command, now: Nanos) -> Result<(), EngineError> {
        self.inner.submit(command, now + self.offset)
    }

    fn submit_queued(&mut self) -> Result<(), EngineError> {
        self.inner.submit_queued()
    }

    fn wait(&mut self, now: Nanos, timeout: Duration) -> Result<(), EngineError> {
        self.inner.wait(now + self.offset, timeout)
    }

    fn reap(&mut self, now: Nanos, finished: &mut Vec<Finished>) {
        let from = finished.len();
        self.inner.reap(now + self.offset, finished);
        for f in &mut finished[from..] {
            f.at = Nanos(f.at.0.saturating_sub(self.offset.0));
        }
    }

    fn drive_gauges(&self) -> Option<(u64, u64)> {
        self.inner.drive_gauges()
    }
}
