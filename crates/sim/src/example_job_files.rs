//! The job files of examples/fio, listed once for the simulator's job file
//! tests and the end-to-end tests of `iosteer run` (crates/cli/tests, which
//! include this file).

use std::path::PathBuf;

/// The job files of examples/fio (one per family of fio options), in name
/// order; there are at least ten.
pub fn example_job_files() -> Vec<PathBuf> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/fio");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    files
}
