//! fio's rates against a job's iodepth and runtime: catching up, and
//! stopping at the runtime whatever is owed.

use super::*;

/// fio's rate counts from the job's start: a job its iodepth held back
/// (here a read as long as the mean gap) issues what it owes at once and
/// keeps its rate; `iosteer_rate_resumes` resumes from when it is freed
/// and falls short, as the built-in scenarios' jobs do.
#[test]
fn a_rated_job_held_by_its_iodepth_catches_up_as_fios_do() {
    let job = |resumes: &str| {
        format!(
            "[w]\nrw=write\nbs=128k\nsize=64m\n[r]\nstonewall\nrw=randread\nbs=4k\nsize=64m\n\
             iodepth=1\nrate_iops=8000\nrate_process=poisson\nruntime=2\ntime_based\n{resumes}"
        )
    };
    let iops = |text: &str| {
        phase_named(&simulate(text, "t.fio", "consumer-sata"), "r")
            .read
            .iops
    };
    let caught_up = iops(&job(""));
    assert!((7800.0..8200.0).contains(&caught_up), "{caught_up}");
    let resumed = iops(&job("iosteer_rate_resumes=1\n"));
    assert!(resumed < 7000.0, "{resumed}");
}

/// A job behind its rate at its runtime stops there, owing what it owes, as
/// fio's does: it went on issuing its arrears, and the group after it
/// never ran.
#[test]
fn a_job_behind_its_rate_stops_at_its_runtime() {
    let text = "[global]\nsize=16m\ntime_based\nruntime=1\n[w]\nrw=randwrite\nbs=4k\n\
                rate_iops=200000\n[r]\nstonewall\nrw=randread\nbs=4k\n";
    let report = simulate(text, "t.fio", "consumer-sata");
    let w = phase_named(&report, "w");
    assert!(w.end_s < 1.1, "{w:?}");
    assert!(phase_named(&report, "r").read.ops > 1000);
}
