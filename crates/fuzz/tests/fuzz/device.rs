use iosteer_device::config::preset_names;
use iosteer_device::{Device, DeviceConfig};
use iosteer_fuzz::{fuzz, Outcome};

/// Physical pages up to which an accepted drive is also built: building
/// allocates per page, and the presets' hundreds of millions would make each
/// case slow without testing more of the parser.
const BUILT_PAGES: u64 = 1 << 16;

#[test]
fn drive_toml() {
    let seeds: Vec<Vec<u8>> = preset_names()
        .into_iter()
        .map(|name| DeviceConfig::preset(name).unwrap().to_toml().into_bytes())
        .collect();
    fuzz("device-toml", &seeds, |bytes| {
        let text = String::from_utf8_lossy(bytes);
        let Ok(config) = DeviceConfig::from_toml(&text, "fuzz.toml") else {
            return Outcome::Refused;
        };
        if let Err(e) = config.validate() {
            return Outcome::Violation(format!("accepted, then does not validate: {e}"));
        }
        if config.geometry.physical_pages() <= BUILT_PAGES {
            if let Err(e) = Device::new(config) {
                return Outcome::Violation(format!("accepted, then not built: {e}"));
            }
        }
        Outcome::Accepted
    });
}
