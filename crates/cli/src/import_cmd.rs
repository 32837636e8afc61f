//! `iosteer device import disksim FILE.parv | mqsim FILE.xml | ssdsim
//! page.parameters`: another simulator's drive as our TOML, with every
//! parameter's fate as comments (the work is in `iosteer_device::import`).

use anyhow::{anyhow, Result};

/// The drive of `file`, read as `format` (disksim, mqsim or ssdsim), as
/// TOML. The file is read as UTF-8, an invalid byte (SSDsim's GBK comments)
/// replaced: a value with one is then refused, never misread.
pub fn import(format: &str, file: &str) -> Result<String> {
    let read = iosteer_device::import::importer(format).map_err(|e| anyhow!(e))?;
    let bytes = std::fs::read(file).map_err(|e| anyhow!("{file}: {e}"))?;
    Ok(read(&String::from_utf8_lossy(&bytes), file)?.to_toml())
}
