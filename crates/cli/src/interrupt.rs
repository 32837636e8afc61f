//! The one Ctrl-C handler: the first Ctrl-C asks the run to stop (it reports and writes
//! what it measured); a second over 0.5 s later exits at once (GNU `timeout -s INT`
//! sends its one stop to the child and to its group: two signals at once).

use std::sync::{atomic::AtomicBool, atomic::Ordering, Once, OnceLock};
use std::time::{Duration, Instant};

/// Set by the first signal, and when it came.
static STOP: AtomicBool = AtomicBool::new(false);
static FIRST: OnceLock<Instant> = OnceLock::new();

/// Whether a signal asked the run to stop; installs the handler once.
pub fn requested() -> bool {
    static HANDLER: Once = Once::new();
    HANDLER.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            let first = *FIRST.get_or_init(Instant::now);
            if STOP.swap(true, Ordering::SeqCst) && first.elapsed() > Duration::from_millis(500) {
                std::process::exit(130);
            }
        });
    });
    STOP.load(Ordering::SeqCst)
}
