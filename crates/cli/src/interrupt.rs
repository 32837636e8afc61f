//! The one Ctrl-C handler: the first Ctrl-C asks the run under way to stop
//! (it then reports and writes what it measured); a second one exits at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

/// Set by the first Ctrl-C.
static STOP: AtomicBool = AtomicBool::new(false);

/// Whether Ctrl-C asked the run to stop; installs the handler once.
pub fn requested() -> bool {
    static HANDLER: Once = Once::new();
    HANDLER.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            if STOP.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
        });
    });
    STOP.load(Ordering::SeqCst)
}
