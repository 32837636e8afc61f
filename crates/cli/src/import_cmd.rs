//! `iosteer device import disksim FILE.parv | mqsim FILE.xml | ssdsim
//! page.parameters`: another simulator's drive as our TOML, with every
//! parameter's fate as comments (the work is in `iosteer_device::import`).

use anyhow::{anyhow, Result};

/// The drive of `file`, read as `format` (disksim, mqsim or ssdsim), as
/// TOML. An SSDsim file's invalid UTF-8 (its GBK comments) is replaced: a
/// value with one is then refused, never misread; other files must be UTF-8.
pub fn import(format: &str, file: &str) -> Result<String> {
    let read = iosteer_device::import::importer(format).map_err(|e| anyhow!(e))?;
    let bytes = std::fs::read(file).map_err(|e| anyhow!("{file}: {e}"))?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) if format == "ssdsim" => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        Err(e) => return Err(anyhow!("{file}: not UTF-8 text: {}", e.utf8_error())),
    };
    Ok(read(&text, file)?.to_toml())
}
