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
