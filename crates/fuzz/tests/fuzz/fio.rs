use iosteer_fuzz::{fuzz, head, repo_file, Outcome};
use iosteer_workload::fio;
use iosteer_workload::workload::JobKind;

const EXAMPLES: &[&str] = &[
    "examples/fill-listening.fio",
    "examples/fill-while-serving.fio",
    "examples/prefill.fio",
    "examples/read-write-mix.fio",
    "examples/fio/bssplit.fio",
    "examples/fio/distribution.fio",
    "examples/fio/files.fio",
    "examples/fio/flushes.fio",
    "examples/fio/ignored.fio",
    "examples/fio/limits.fio",
    "examples/fio/offset-modifiers.fio",
    "examples/fio/stonewall.fio",
    "examples/fio/timing.fio",
    "examples/fio/variables.fio",
    "examples/fio/verify.fio",
];

/// Drive sizes from a page to the largest `u64`: the parser fits jobs to
/// the drive, so its edges matter as much as the file's.
const CAPACITIES: [u64; 4] = [4096, 1 << 30, 256 << 30, u64::MAX];

/// A fixed environment: the real one would make runs differ by machine.
fn env(name: &str) -> Option<String> {
    match name {
        "SIZE" => Some("1g".into()),
        "BS" => Some("4k".into()),
        "HUGE" => Some("18446744073709551616".into()),
        _ => None,
    }
}

fn check(text: &str, capacity: u64) -> Outcome {
    let Ok(file) = fio::parse_with_env(text, "fuzz.fio", capacity, &env) else {
        return Outcome::Refused;
    };
    for job in &file.jobs {
        if let JobKind::Synthetic(s) = &job.kind {
            let fits = s
                .offset
                .checked_add(s.size)
                .is_some_and(|end| end <= capacity);
            if s.size == 0 || s.block_min == 0 || s.block_min > s.block_max || !fits {
                return Outcome::Violation(format!(
                    "job {}: offset {} size {} blocks {}..={} on a drive of {capacity}",
                    job.name, s.offset, s.size, s.block_min, s.block_max
                ));
            }
        }
        if job.stop.is_some_and(|stop| stop < job.start) {
            return Outcome::Violation(format!("job {} stops before it starts", job.name));
        }
    }
    Outcome::Accepted
}

#[test]
fn fio_job_files() {
    let seeds: Vec<Vec<u8>> = EXAMPLES.iter().map(|p| head(&repo_file(p), 200)).collect();
    fuzz("fio", &seeds, |bytes| {
        let text = String::from_utf8_lossy(bytes);
        check(&text, CAPACITIES[bytes.len() % CAPACITIES.len()])
    });
}
