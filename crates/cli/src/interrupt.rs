//! The one stop handler. The first Ctrl-C (SIGINT) or SIGTERM asks the run to stop: it
//! reports and writes what it measured, as fio does for both. A second over 0.5 s later
//! exits at once; two within 0.5 s are one stop sent twice (GNU `timeout` signals the
//! child and its group). SIGHUP keeps its default, or the ignoring `nohup` sets.

use signal_hook::{consts::SIGINT, consts::SIGTERM, iterator::Signals};
use std::sync::{atomic::AtomicI32, atomic::Ordering::SeqCst, Once};
use std::time::{Duration, Instant};

/// The signal that first asked the run to stop; 0 while none has.
static STOP: AtomicI32 = AtomicI32::new(0);

/// Whether a signal asked the run to stop; installs the handler once (without
/// one, the signals keep their default: they end the process).
pub fn requested() -> bool {
    static HANDLER: Once = Once::new();
    HANDLER.call_once(|| {
        let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
            return;
        };
        std::thread::spawn(move || {
            let mut first = None;
            for signal in signals.forever() {
                let at = *first.get_or_insert_with(Instant::now);
                let again = STOP.compare_exchange(0, signal, SeqCst, SeqCst).is_err();
                if again && at.elapsed() > Duration::from_millis(500) {
                    std::process::exit(128 + signal);
                }
            }
        });
    });
    STOP.load(SeqCst) != 0
}

/// The exit status of a run a signal stopped with nothing to report: 128 plus the
/// signal's number, as a shell reports a command the signal ended.
pub fn exit_status() -> Option<u8> {
    requested().then(|| 128 + STOP.load(SeqCst) as u8)
}
