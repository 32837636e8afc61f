//! A job file's run on real files and block devices, from placed jobs to the
//! measured report: what `iosteer run` does with a target.
//!
//! The steps: place the jobs on their files ([`files::place`]: created,
//! laid out, each at its own address range), size the engine's buffers to
//! the largest request, open one engine over all the files, drive the plan
//! through it ([`drive`](mod@drive)), and add to the report what only the files and
//! the verifier know: the placement's notes, whether the ring polls, and
//! every stamped block that read back wrong.

use iosteer_workload::job_shape::WriteSync;
use thiserror::Error;

use crate::drive::{self, drive, largest_io, open_engine, Measured, Plan};
use crate::engine::{ConfigError, EngineError};
use crate::files::{self, FileOptions, FilesError};
use crate::EngineConfig;

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum OnFilesError {
    #[error(transparent)]
    Files(#[from] FilesError),
    /// The ring would poll the driver, and the jobs trim.
    #[error("an IOPOLL ring takes only reads and writes, and the job file trims")]
    IopollTrims,
    /// `--verify` stamps whole 4 KiB blocks: a request off them would
    /// carry another block's stamp and read back as corrupt.
    #[error("job {job}: its requests fall on {granule}-byte boundaries; verifying stamps whole {} KiB blocks, so every offset and size must be a multiple of {}", crate::verify::BLOCK / 1024, crate::verify::BLOCK)]
    VerifyBlocks { job: String, granule: u64 },
    /// The engine's configuration, with the jobs' largest request.
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Engine(EngineError),
}

/// Places `plan`'s jobs on their files and drives them through one engine
/// configured as `config` (its buffer size is the jobs' largest request).
/// What was measured stands even when the run ended with an error
/// ([`Measured::error`]); `report.verify` counts blocks that read back wrong.
pub fn run_on_files(
    mut plan: Plan,
    files: &FileOptions,
    mut config: EngineConfig,
) -> Result<Measured, OnFilesError> {
    if config.verify {
        let stamp = crate::verify::BLOCK as u64;
        let mut jobs = plan.workload.jobs.iter();
        if let Some(job) = jobs.find(|j| j.granule().is_some_and(|g| g % stamp != 0)) {
            return Err(OnFilesError::VerifyBlocks {
                job: job.name.clone(),
                granule: job.granule().unwrap_or(1),
            });
        }
    }
    if config.iopoll && plan.workload.jobs.iter().any(drive::trims) {
        return Err(OnFilesError::IopollTrims);
    }
    // Checked before the files are laid out: a layout of 128 MiB was
    // written, then the run refused for its buffers.
    config.max_io_bytes = largest_io(&plan.workload.jobs).max(4096) as usize;
    config.validate()?;
    let placement = files::place(&mut plan.workload.jobs, files)?;
    let (mut engine, label, mut description) =
        open_engine(placement.targets, &config).map_err(|e| match e {
            EngineError::Config(e) => OnFilesError::Config(e),
            other => OnFilesError::Engine(other),
        })?;
    engine.scope_flushes(placement.job_targets);
    let sync_metadata = plan.workload.jobs.iter();
    engine.sync_metadata(
        sync_metadata
            .map(|j| j.shape.write_sync == WriteSync::Sync)
            .collect(),
    );
    description += &format!(", reaping by {}", config.reap.name());
    if engine.iopoll() {
        description += " with IOPOLL";
    }
    let mut notes = placement.notes;
    if let Some(why) = engine.iopoll_refused() {
        notes.push(format!(
            "IOPOLL was asked for and refused ({why}): an ordinary ring served the run"
        ));
    }
    let mut measured = drive(plan, &mut engine, &label, &description);
    measured.report.notes.extend(notes);
    if let Some((figures, notes)) = engine.verifier().map(|v| v.report()) {
        measured.report.verify = Some(figures);
        measured.report.notes.extend(notes);
    }
    Ok(measured)
}
