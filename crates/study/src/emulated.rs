//! A simulation's workload in real time on the simulator's drive model:
//! `iosteer run --emulate`.
//!
//! The simulation gives the jobs, the phases and the drive; the drive is
//! aged as `iosteer sim` ages it, then served by the real-time loop
//! ([`iosteer_engine::drive`]) behind [`Emulated`], so a policy meets a
//! misbehaving drive on any machine. The report adds the drive's own
//! figures (write amplification, GC) as a simulation's does.

use iosteer_engine::drive::{drive, Measured, Plan};
use iosteer_engine::emulate::Emulated;
use iosteer_engine::runner::Backend;
use iosteer_sim::run::device_report;
use iosteer_sim::{SimError, Simulation};
use iosteer_workload::report::Phase;
use iosteer_workload::workload::Job;

/// Ages `sim`'s drive (until `stop` says so) and drives the plan `plan_for`
/// makes of its jobs and phases (`None`: phases follow the jobs, as a job
/// file's) through it.
pub fn run_emulated(
    sim: Simulation,
    stop: fn() -> bool,
    plan_for: impl FnOnce(Vec<Job>, Option<Vec<Phase>>) -> Plan,
) -> Result<Measured, SimError> {
    sim.validate()?;
    let mut emulated = Emulated::new(sim.aged_device_until(&mut || !stop())?);
    let label = format!("emulated {}", sim.device.name);
    let description = format!(
        "the emulated {} drive (real time, {} command slots)",
        sim.device.name,
        emulated.view().slots
    );
    let phases = (!sim.workload.job_phases).then_some(sim.workload.phases);
    let mut plan = plan_for(sim.workload.jobs, phases);
    // What the simulation says of its jobs (drive sharing) goes in the report too.
    plan.notes.extend(sim.notes);
    let mut measured = drive(plan, &mut emulated, &label, &description);
    let device = emulated.device();
    measured.report.device_stats = Some(device_report(&device.stats(), device.aging()));
    Ok(measured)
}
