//! What a sweep runs: a built-in scenario, a fio job file or a trace, the
//! phases each is judged on, and the simulations it becomes.

use super::*;

/// What a sweep runs: a built-in scenario or the user's own workload.
#[derive(Clone, Debug)]
pub enum SweepWorkload {
    /// A built-in scenario of `iosteer-sim`, by name.
    Scenario(String),
    /// A fio job file: its phases are named after its jobs
    /// ([`iosteer_workload::job_phases`]).
    JobFile(String),
    /// A trace file: its phases are `trace` and time windows (`0s..60s`).
    Trace { file: String, options: TraceOptions },
}

impl SweepWorkload {
    /// How the report names it: the scenario's name or the file.
    pub fn name(&self) -> &str {
        match self {
            SweepWorkload::Scenario(name) | SweepWorkload::JobFile(name) => name,
            SweepWorkload::Trace { file, .. } => file,
        }
    }

    /// How the report's question names it: its kind and its label.
    pub fn describe(&self) -> String {
        format!("{} {}", self.kind(), self.label())
    }

    /// Its name, and a trace's window when it has one: the phases of a
    /// window count from its start, so the report says which it was.
    pub fn label(&self) -> String {
        match self {
            SweepWorkload::Trace {
                file,
                options:
                    TraceOptions {
                        window: Some(window),
                        ..
                    },
            } => format!("{file} --trace-window {window}"),
            _ => self.name().to_string(),
        }
    }

    /// The measured and baseline phases: a scenario's `fill` and `before`
    /// unless given; a job file or a trace has no such phases, so both must
    /// be given.
    pub fn phases(
        &self,
        phase: Option<&str>,
        baseline: Option<&str>,
    ) -> Result<(String, String), SweepError> {
        let how = match self {
            SweepWorkload::Scenario(_) => {
                let phase = phase.unwrap_or("fill");
                return Ok((phase.into(), baseline.unwrap_or("before").into()));
            }
            SweepWorkload::JobFile(_) => {
                "job phases are named after the jobs running together, as `iosteer sim --job FILE` lists them"
            }
            SweepWorkload::Trace { .. } => {
                "a trace's phases are `trace` or time windows such as 0s..60s"
            }
        };
        match (phase, baseline) {
            (Some(phase), Some(baseline)) => Ok((phase.into(), baseline.into())),
            _ => Err(SweepError::PhasesNeeded {
                workload: self.name().into(),
                how,
            }),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            SweepWorkload::Scenario(_) => "scenario",
            SweepWorkload::JobFile(_) => "job file",
            SweepWorkload::Trace { .. } => "trace",
        }
    }

    /// Its simulation on `device` with `seed`.
    pub(super) fn simulation(
        &self,
        device: &DeviceConfig,
        seed: u64,
    ) -> Result<Simulation, SweepError> {
        let device = device.clone();
        Ok(match self {
            SweepWorkload::Scenario(name) => scenario(name, device, seed)?,
            SweepWorkload::JobFile(file) => workload_file::job_simulation(file, device, seed)?,
            SweepWorkload::Trace { file, options } => {
                workload_file::trace_simulation(file, options, device, seed)?
            }
        })
    }

    /// Adds the phase `name` to a trace's `sim` when it is a time window.
    pub(super) fn add_window(
        &self,
        sim: &mut Simulation,
        name: &str,
        role: PhaseRole,
    ) -> Result<(), SweepError> {
        if !workload_file::is_time_window(name) {
            return Ok(());
        }
        if !matches!(self, SweepWorkload::Trace { .. }) {
            return Err(SweepError::WindowNeedsTrace {
                role,
                window: name.to_string(),
                workload: self.kind(),
            });
        }
        workload_file::add_time_window(sim, name)
            .map_err(|source| SweepError::Window { role, source })
    }
}
