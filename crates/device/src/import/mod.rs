//! Drives from other simulators' configurations: an MQSim `ssdconfig.xml`
//! ([`mqsim`]), the SSD block of a DiskSim 4.0 + SSD extension parameter
//! file ([`disksim`]) or an SSDsim `page.parameters` ([`ssdsim`]) becomes a
//! [`DeviceConfig`], printed as our drive TOML
//! (`iosteer device import`). Every parameter of the source is either mapped,
//! its unit converted, or listed as not modelled, both as TOML comments
//! above the drive, so nothing is dropped silently. What the source does not
//! set comes from a named preset.

pub mod disksim;
pub mod mqsim;
mod params;
pub mod ssdsim;

use std::fmt::Write as _;

use thiserror::Error;

use crate::config::{ConfigError, DeviceConfig};

/// A configuration file that cannot be imported.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum ImportError {
    #[error("{file}: line {line}: {message}")]
    Syntax {
        file: String,
        line: usize,
        message: String,
    },
    #[error("{file}: `{name}` is missing; {needed}")]
    Missing {
        file: String,
        name: String,
        needed: String,
    },
    #[error("{file}: {}`{name}` = {value}: accepted: {accepted}", at_line(*.line))]
    BadValue {
        file: String,
        /// The line that sets it, when one does.
        line: Option<usize>,
        name: String,
        value: String,
        accepted: String,
    },
    /// The parameters describe a drive our model refuses.
    #[error("{file}: the imported drive is not valid: {source}{}", set_from(.from))]
    Config {
        file: String,
        #[source]
        source: ConfigError,
        /// The source's parameters the refused field was mapped from, as
        /// written there, when one note maps them.
        from: Option<String>,
    },
}

/// " (set from `Flash_Channel_Width = 0 B`)", or nothing.
fn set_from(from: &Option<String>) -> String {
    from.as_ref()
        .map_or(String::new(), |source| format!(" (set from `{source}`)"))
}

/// A number as a note shows it: as Rust prints it, or in exponent form
/// when that would be longer than 24 characters (`1e308`, not 309 digits).
pub(crate) fn shown(x: f64) -> String {
    let plain = x.to_string();
    if plain.len() > 24 {
        format!("{x:e}")
    } else {
        plain
    }
}

/// "line 12: ", or nothing for a value no one line sets.
fn at_line(line: Option<usize>) -> String {
    line.map_or(String::new(), |n| format!("line {n}: "))
}

/// An importer: the source text and its file's name (for errors) in, a
/// drive out.
pub type Importer = fn(&str, &str) -> Result<Imported, ImportError>;

/// Every source format `iosteer device import` reads, by name.
pub const FORMATS: &[(&str, Importer)] = &[
    ("disksim", disksim::import),
    ("mqsim", mqsim::import),
    ("ssdsim", ssdsim::import),
];

/// The importer of `format`, or an error naming the formats.
pub fn importer(format: &str) -> Result<Importer, String> {
    FORMATS
        .iter()
        .find(|(name, _)| *name == format)
        .map(|(_, import)| *import)
        .ok_or_else(|| {
            let names: Vec<&str> = FORMATS.iter().map(|(name, _)| *name).collect();
            format!("device import {format}: expected {}", names.join(", "))
        })
}

/// Longest configuration file read: DiskSim's, MQSim's and SSDsim's are a
/// few KiB, and a file given by mistake (a trace, `/dev/zero`) must not
/// fill memory.
pub const MAX_SOURCE_BYTES: u64 = 16 << 20;

/// A file that cannot be read as a configuration's text.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReadError {
    #[error("{file}: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    #[error("{file}: longer than {limit} bytes: not a drive configuration")]
    TooLong { file: String, limit: u64 },
    #[error("{file}: not UTF-8 text: {message}")]
    NotText { file: String, message: String },
}

/// The text of `file` for the importer of `format`, at most
/// [`MAX_SOURCE_BYTES`]. An SSDsim file's invalid UTF-8 (its GBK comments)
/// is replaced: a value with one is then refused, never misread; other
/// files must be UTF-8.
pub fn read_source(format: &str, file: &str) -> Result<String, ReadError> {
    use std::io::Read as _;
    let io = |source| ReadError::Io {
        file: file.into(),
        source,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(MAX_SOURCE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(io)?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return Err(ReadError::TooLong {
            file: file.into(),
            limit: MAX_SOURCE_BYTES,
        });
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(e) if format == "ssdsim" => Ok(String::from_utf8_lossy(e.as_bytes()).into_owned()),
        Err(e) => Err(ReadError::NotText {
            file: file.into(),
            message: e.utf8_error().to_string(),
        }),
    }
}

/// One source parameter and what became of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    /// The source's parameter(s) and value, as written there.
    pub source: String,
    /// Mapped: the TOML key and converted value; not modelled: why.
    pub outcome: String,
}

/// An imported drive with its notes.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    pub config: DeviceConfig,
    /// The simulator and file it came from, and the preset behind it.
    pub origin: String,
    pub base_preset: &'static str,
    pub mapped: Vec<Note>,
    pub not_modelled: Vec<Note>,
}

impl Imported {
    /// The drive as TOML, the mapping and what is not modelled above it as
    /// comments.
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# Imported from {}.", self.origin);
        let _ = writeln!(
            out,
            "# Parameters the source does not set come from the preset `{}`.",
            self.base_preset
        );
        let _ = writeln!(out, "#\n# Mapped (source -> drive):");
        for note in &self.mapped {
            let _ = writeln!(out, "#   {} -> {}", note.source, note.outcome);
        }
        let _ = writeln!(out, "#\n# Not modelled:");
        for note in &self.not_modelled {
            let _ = writeln!(out, "#   {}: {}", note.source, note.outcome);
        }
        out.push('\n');
        out + &self.config.to_toml()
    }
}

/// Collects the notes of one import while the drive is filled in.
pub(crate) struct Notes {
    mapped: Vec<Note>,
    not_modelled: Vec<Note>,
}

impl Notes {
    pub(crate) fn new() -> Notes {
        Notes {
            mapped: Vec::new(),
            not_modelled: Vec::new(),
        }
    }

    pub(crate) fn mapped(&mut self, source: impl Into<String>, outcome: impl Into<String>) {
        self.mapped.push(Note {
            source: source.into(),
            outcome: outcome.into(),
        });
    }

    pub(crate) fn not_modelled(&mut self, source: impl Into<String>, why: impl Into<String>) {
        self.not_modelled.push(Note {
            source: source.into(),
            outcome: why.into(),
        });
    }

    /// The source parameters that set `field`, and those of the fields its
    /// check weighs it against (over-provisioning against the blocks GC
    /// keeps free), as written there: "A`, `B".
    fn sources_of(&self, field: &str) -> Option<String> {
        const WEIGHED_WITH: &[(&str, &str)] = &[("over_provisioning", "gc.low_watermark")];
        let related = WEIGHED_WITH
            .iter()
            .filter(|(f, _)| *f == field)
            .map(|(_, r)| *r);
        let sources: Vec<&str> = std::iter::once(field)
            .chain(related)
            .filter_map(|f| {
                let set = format!("{f} =");
                self.mapped.iter().find(|note| note.outcome.contains(&set))
            })
            .map(|note| note.source.as_str())
            .collect();
        (!sources.is_empty()).then(|| sources.join("`, `"))
    }

    /// The finished import, once the drive validates.
    pub(crate) fn finish(
        self,
        config: DeviceConfig,
        origin: String,
        base_preset: &'static str,
        file: &str,
    ) -> Result<Imported, ImportError> {
        config.validate().map_err(|source| {
            let from = match &source {
                ConfigError::Invalid { field, .. } => self.sources_of(field),
                _ => None,
            };
            ImportError::Config {
                file: file.to_string(),
                source,
                from,
            }
        })?;
        Ok(Imported {
            config,
            origin,
            base_preset,
            mapped: self.mapped,
            not_modelled: self.not_modelled,
        })
    }
}

/// Free blocks per die for a fraction of the die's blocks, at least 2 (GC
/// needs a block to move data into).
pub(crate) fn blocks_for_fraction(fraction: f64, blocks_per_die: u32) -> u32 {
    ((fraction * f64::from(blocks_per_die)).ceil() as u32).max(2)
}

/// The most free blocks per die GC may keep with `op` spare and `streams`
/// open blocks: `DeviceConfig::validate` wants the spare area above the
/// watermark, the open blocks and one more.
pub(crate) fn most_free_blocks(op: f64, blocks_per_die: u32, streams: u32) -> u32 {
    let room = op * f64::from(blocks_per_die) - f64::from(streams) - 1.0;
    if !(room.is_finite() && room > 0.0) {
        return 0;
    }
    let mut most = (room.ceil() - 1.0) as u32;
    let fits =
        |high: u32| op > (f64::from(high) + f64::from(streams) + 1.0) / f64::from(blocks_per_die);
    while most > 0 && !fits(most) {
        most -= 1;
    }
    most
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `iosteer device import disksim /dev/zero` read on without end (16 GB
    /// of memory in 20 s); a configuration is now read up to a bound.
    #[test]
    fn a_source_is_read_up_to_a_bound_and_as_text() {
        for format in ["disksim", "mqsim", "ssdsim"] {
            let err = read_source(format, "/dev/zero").unwrap_err();
            assert!(matches!(err, ReadError::TooLong { .. }), "{err}");
            assert!(
                err.to_string()
                    .starts_with("/dev/zero: longer than 16777216 bytes"),
                "{err}"
            );
        }
        let path = std::env::temp_dir().join(format!("iosteer-import-{}.txt", std::process::id()));
        std::fs::write(&path, b"channel number = 8; \xb5\xc4\n").unwrap();
        let file = path.to_str().unwrap();
        let err = read_source("mqsim", file).unwrap_err();
        assert!(matches!(err, ReadError::NotText { .. }), "{err}");
        // SSDsim's GBK comments are replaced, not refused.
        assert!(read_source("ssdsim", file)
            .unwrap()
            .starts_with("channel number = 8;"));
        std::fs::remove_file(&path).unwrap();
        let err = read_source("ssdsim", "/no/such/file").unwrap_err();
        assert!(matches!(err, ReadError::Io { .. }), "{err}");
    }
}
