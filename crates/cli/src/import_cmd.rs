//! `iosteer device import disksim FILE.parv | mqsim FILE.xml | ssdsim
//! page.parameters`: another simulator's drive as our TOML, with every
//! parameter's fate as comments (the work is in `iosteer_device::import`).

use anyhow::{anyhow, Result};

/// The drive of `file`, read as `format` (disksim, mqsim or ssdsim), as
/// TOML ([`iosteer_device::import::read_source`] reads the file).
pub fn import(format: &str, file: &str) -> Result<String> {
    let read = iosteer_device::import::importer(format).map_err(|e| anyhow!(e))?;
    let text = iosteer_device::import::read_source(format, file)?;
    Ok(read(&text, file)?.to_toml())
}
