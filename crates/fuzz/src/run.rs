//! Runs a target over generated inputs, catching panics and timing every
//! call, and prints one totals line that `scripts/fuzz.sh` adds up.

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::mutate::input;

/// What a target's call made of one input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Accepted,
    Refused,
    /// Accepted, but the result breaks what an accepted input promises.
    Violation(String),
}

/// Cases per target when `IOSTEER_FUZZ_CASES` is unset: CI's short slice.
pub const DEFAULT_CASES: u32 = 256;
/// A call slower than this counts as a hang (`IOSTEER_FUZZ_TIMEOUT_MS`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
/// Inputs kept per kind of failure for the report.
const EXAMPLES: usize = 3;
/// Bytes of an input shown in a report.
const SHOWN: usize = 600;

#[derive(Clone, Debug, Default)]
pub struct Totals {
    pub cases: u64,
    pub accepted: u64,
    pub refused: u64,
    pub panics: u64,
    pub hangs: u64,
    pub violations: u64,
    /// Inputs that failed, each with what happened.
    pub failures: Vec<String>,
}

impl Totals {
    /// Keeps the `nth` failure of a kind for the report, if among the first.
    fn keep(&mut self, nth: u64, kind: &str, bytes: &[u8], what: String) {
        if nth <= EXAMPLES as u64 {
            self.failures
                .push(format!("{kind}: input {}\n  {what}", show(bytes)));
        }
    }
}

fn env_number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    Some(
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text}: expected a whole number")),
    )
}

pub fn cases() -> u32 {
    env_number("IOSTEER_FUZZ_CASES").map_or(DEFAULT_CASES, |n| n.min(u64::from(u32::MAX)) as u32)
}

pub fn timeout() -> Duration {
    env_number("IOSTEER_FUZZ_TIMEOUT_MS").map_or(DEFAULT_TIMEOUT, Duration::from_millis)
}

/// The generator's seed: fixed unless `IOSTEER_FUZZ_SEED` says, so CI's
/// slice is the same every run and a script's run can be replayed.
pub fn rng_seed() -> u64 {
    env_number("IOSTEER_FUZZ_SEED").unwrap_or(0)
}

thread_local! {
    /// Set while a target runs on this thread: its panics are recorded here
    /// rather than printed, since they are counted and reported together.
    static CAUGHT: RefCell<Option<Option<String>>> = const { RefCell::new(None) };
}

fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let fuzzing = CAUGHT.with(|c| c.borrow().is_some());
            if !fuzzing {
                return default(info);
            }
            let message = format!("{info}\n{}", std::backtrace::Backtrace::force_capture());
            CAUGHT.with(|c| *c.borrow_mut() = Some(Some(message)));
        }));
    });
}

/// An input for a report: text where it is UTF-8, escaped bytes otherwise.
pub fn show(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(SHOWN)];
    let more = if bytes.len() > SHOWN {
        format!(" ... ({} bytes in all)", bytes.len())
    } else {
        String::new()
    };
    match std::str::from_utf8(cut) {
        Ok(text) => format!("{text:?}{more}"),
        Err(_) => format!("bytes {cut:?}{more}"),
    }
}

/// The call under way: when it started, and its input.
type Running = Arc<Mutex<Option<(Instant, Vec<u8>)>>>;

/// Aborts the process when one call has run far past the timeout: a true
/// infinite loop would otherwise hold the test forever and report nothing.
struct Watchdog {
    current: Running,
    done: Arc<AtomicBool>,
}

impl Watchdog {
    fn start(target: &str, limit: Duration) -> Watchdog {
        let current: Running = Arc::default();
        let done = Arc::new(AtomicBool::new(false));
        let (watched, finished, target) = (current.clone(), done.clone(), target.to_string());
        std::thread::spawn(move || {
            while !finished.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                let guard = watched.lock().unwrap();
                if let Some((start, bytes)) = guard.as_ref() {
                    if start.elapsed() > limit {
                        eprintln!(
                            "fuzz target {target}: one call ran over {limit:?}, giving up: input {}",
                            show(bytes)
                        );
                        std::process::abort();
                    }
                }
            }
        });
        Watchdog { current, done }
    }

    fn enter(&self, bytes: &[u8]) {
        *self.current.lock().unwrap() = Some((Instant::now(), bytes.to_vec()));
    }

    fn leave(&self) {
        *self.current.lock().unwrap() = None;
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

/// Runs `call` on [`cases`] inputs made from `seeds` (see
/// [`crate::mutate::input`]), prints the totals line and panics, listing
/// the first failing inputs, if any call panicked, hung or broke a promise.
pub fn fuzz(target: &str, seeds: &[Vec<u8>], call: impl Fn(&[u8]) -> Outcome) -> Totals {
    install_panic_hook();
    let cases = cases();
    let timeout = timeout();
    let config = Config {
        cases,
        failure_persistence: None,
        // Inputs are never rejected: no need to bound rejections.
        ..Config::default()
    };
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&rng_seed().to_le_bytes());
    key[8..8 + target.len().min(24)].copy_from_slice(&target.as_bytes()[..target.len().min(24)]);
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &key));
    let watchdog = Watchdog::start(target, (timeout * 10).max(Duration::from_secs(30)));
    let totals = RefCell::new(Totals::default());
    let started = Instant::now();
    let strategy = input(seeds.len());
    // The seeds as they are first: a target whose seeds are refused would
    // spend its mutations on what its parser throws away at the first line.
    let seeds_accepted = seeds
        .iter()
        .filter(|seed| {
            panic::catch_unwind(AssertUnwindSafe(|| call(seed))).ok() == Some(Outcome::Accepted)
        })
        .count();
    let result = runner.run(&strategy, |generated| {
        let bytes = generated.bytes(seeds);
        watchdog.enter(&bytes);
        CAUGHT.with(|c| *c.borrow_mut() = Some(None));
        let begun = Instant::now();
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| call(&bytes)));
        let elapsed = begun.elapsed();
        let panicked = CAUGHT.with(|c| c.borrow_mut().take()).flatten();
        watchdog.leave();
        let mut t = totals.borrow_mut();
        t.cases += 1;
        match outcome {
            Err(_) => {
                t.panics += 1;
                let n = t.panics;
                t.keep(n, "panic", &bytes, panicked.unwrap_or_default());
            }
            Ok(Outcome::Accepted) => t.accepted += 1,
            Ok(Outcome::Refused) => t.refused += 1,
            Ok(Outcome::Violation(why)) => {
                t.violations += 1;
                let n = t.violations;
                t.keep(n, "violation", &bytes, why);
            }
        }
        if elapsed > timeout {
            t.hangs += 1;
            let n = t.hangs;
            t.keep(n, "hang", &bytes, format!("{elapsed:?}"));
        }
        Ok(())
    });
    drop(watchdog);
    result.expect("the fuzz property never fails: failures are counted");
    let t = totals.into_inner();
    println!(
        "fuzz target {target}: cases {} (accepted {}, refused {}), panics {}, hangs {} (timeout {} ms), violations {}, {:.1} s; seeds accepted {}/{}",
        t.cases,
        t.accepted,
        t.refused,
        t.panics,
        t.hangs,
        timeout.as_millis(),
        t.violations,
        started.elapsed().as_secs_f64(),
        seeds_accepted,
        seeds.len()
    );
    if t.panics + t.hangs + t.violations > 0 {
        panic!(
            "fuzz target {target} failed (generator seed {}):\n{}",
            rng_seed(),
            t.failures.join("\n")
        );
    }
    t
}
