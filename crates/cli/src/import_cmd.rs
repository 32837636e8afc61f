//! `iosteer device import disksim FILE.parv | mqsim FILE.xml`: another
//! simulator's drive as our TOML, with every parameter's fate as comments
//! (the work is in `iosteer_device::import`).

use anyhow::{anyhow, Result};
use iosteer_device::import::{disksim, mqsim};

/// The drive of `file`, read as `format` (disksim or mqsim), as TOML.
pub fn import(format: &str, file: &str) -> Result<String> {
    let read = match format {
        "disksim" => disksim::import,
        "mqsim" => mqsim::import,
        _ => return Err(anyhow!("device import {format}: expected disksim or mqsim")),
    };
    let text = std::fs::read_to_string(file).map_err(|e| anyhow!("{file}: {e}"))?;
    Ok(read(&text, file)?.to_toml())
}
