//! One fuzz target per input surface; each runs `IOSTEER_FUZZ_CASES` cases
//! (256 when unset, CI's slice). `scripts/fuzz.sh` runs them long.

mod device;
mod fio;
mod regressions;
mod sched;
mod sweep;
mod trace;
