//! Waiting for completions, as the reaping mode says: sleeping in the
//! kernel until one arrives (interrupts), spinning on the completion ring
//! (poll), or sleeping about half the time a command takes and then
//! spinning (hybrid).

use std::time::{Duration, Instant};

use io_uring::types;

use super::{Engine, EngineError, Reap};

impl Engine {
    /// Submits what is queued and waits, as the reaping mode says, until a
    /// completion arrives or `timeout` passes (with nothing in flight, just
    /// sleeps).
    pub fn wait(&mut self, timeout: Duration) -> Result<(), EngineError> {
        if !self.done_now.is_empty() {
            self.ring.submit()?;
            return Ok(());
        }
        if self.in_kernel == 0 {
            std::thread::sleep(timeout);
            return Ok(());
        }
        match self.reap_mode {
            // An IOPOLL ring has no interrupts to wait for: it is polled.
            Reap::Interrupt if !self.iopoll => self.wait_for_interrupt(timeout),
            Reap::Interrupt | Reap::Poll => self.spin(timeout),
            Reap::Hybrid => {
                let nap = self.hybrid_nap().min(timeout);
                if !nap.is_zero() {
                    self.ring.submit()?;
                    std::thread::sleep(nap);
                }
                self.spin(timeout - nap)
            }
        }
    }

    fn wait_for_interrupt(&mut self, timeout: Duration) -> Result<(), EngineError> {
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

    /// Spins until a completion is posted or `timeout` passes.
    fn spin(&mut self, timeout: Duration) -> Result<(), EngineError> {
        self.ring.submit()?;
        let start = Instant::now();
        while self.ring.completion().is_empty() && start.elapsed() < timeout {
            if self.iopoll {
                // Each enter on an IOPOLL ring polls the driver.
                self.ring.submit()?;
            } else {
                std::hint::spin_loop();
            }
        }
        Ok(())
    }

    /// How long until the first command in flight is half its expected time
    /// old: the hybrid mode sleeps that long before it polls.
    fn hybrid_nap(&self) -> Duration {
        let now = Instant::now();
        self.slots
            .iter()
            .flatten()
            .map(|slot| {
                let request = &slot.command.requests[0];
                let due = slot.sent + self.times.half(slot.command.op, request.len.0);
                due.saturating_duration_since(now)
            })
            .min()
            .unwrap_or(Duration::ZERO)
    }
}
