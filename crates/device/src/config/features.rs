//! The parts of a drive beyond its NAND and host link, each a TOML section
//! of its own with defaults so older drive files still load: the FTL's
//! mapping unit and write buffer (`[ftl]`), multi-plane operations
//! (`[multi_plane]`) and the DRAM write cache (`[cache]`).
//!
//! Kept apart from `config/mod.rs` so each feature's keys, defaults and
//! checks read in one place.

use serde::{Deserialize, Serialize};

use super::{ConfigError, Geometry};

/// The smallest mapping unit: one 512-byte sector.
pub const SECTOR_BYTES: u32 = 512;

/// Most mapping units one page may hold: a write group (one page program)
/// keeps its units in a fixed array of this size, so the per-page path
/// allocates nothing (64 units = 32 KiB pages of 512-byte sectors).
pub const MAX_UNITS_PER_PAGE: u32 = 64;

/// 4 KiB: the host's usual block and the mapping unit of most drives since
/// flash pages outgrew it (MQSim's sector-mapped FTL, most data sheets).
fn mapping_unit_default() -> u32 {
    4096
}

/// A partly filled page waits this long for more units before it is
/// programmed padded: a millisecond, the order of real controllers' buffer
/// timeouts, and a few page programs long.
fn buffer_flush_us_default() -> f64 {
    1000.0
}

/// Which die a host write's page goes to.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WritePlacement {
    /// The die whose queued work ends first (dynamic allocation).
    #[default]
    LeastBusy,
    /// Die = logical page mod dies, whatever the dies are doing (static
    /// striping, as DiskSim's SSD extension with an element stride of one
    /// page): a write waits behind its die's work, GC included.
    Striped,
}

/// `[ftl]`: how the FTL maps the host's space.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    /// Bytes per mapping unit: the page size makes a page-mapped drive;
    /// smaller (a power-of-two fraction, at least 512) packs units into page
    /// programs through a write buffer per write frontier.
    #[serde(default = "mapping_unit_default")]
    pub mapping_unit: u32,
    /// How long a partly filled page waits in the write buffer for more
    /// units before it is programmed padded (FLUSH programs it at once).
    #[serde(default = "buffer_flush_us_default")]
    pub buffer_flush_us: f64,
    #[serde(default)]
    pub write_placement: WritePlacement,
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            mapping_unit: mapping_unit_default(),
            buffer_flush_us: buffer_flush_us_default(),
            write_placement: WritePlacement::LeastBusy,
        }
    }
}

impl FtlConfig {
    /// A page-mapped FTL for `geometry` (the presets' choice).
    pub fn page_mapped(geometry: &Geometry) -> FtlConfig {
        FtlConfig {
            mapping_unit: geometry.page_size,
            ..FtlConfig::default()
        }
    }

    pub(super) fn validate(&self, geometry: &Geometry) -> Result<(), ConfigError> {
        let unit = self.mapping_unit;
        let fits = unit >= SECTOR_BYTES
            && unit <= geometry.page_size
            && geometry.page_size % unit == 0
            && geometry.page_size / unit <= MAX_UNITS_PER_PAGE;
        if !fits {
            // A file without the key gets the default, which it never wrote.
            let default = match unit == mapping_unit_default() {
                true => format!(
                    " ({unit} is the default when the file sets none; `mapping_unit = {}` maps by page)",
                    geometry.page_size
                ),
                false => String::new(),
            };
            return Err(ConfigError::Invalid {
                field: "ftl.mapping_unit",
                value: unit.to_string(),
                reason: format!(
                    "must divide geometry.page_size ({}) into at most {MAX_UNITS_PER_PAGE} units \
                     of at least {SECTOR_BYTES} bytes{default}",
                    geometry.page_size
                ),
            });
        }
        Ok(())
    }
}

/// Most planes a multi-plane operation may join: the die keeps the planes an
/// operation uses in one 64-bit mask.
pub const MAX_PLANES: u32 = 64;

/// A few microseconds per extra plane: the command and address cycles of one
/// more plane in an ONFI multi-plane sequence (tDBSY-class waits).
fn plane_extra_us_default() -> f64 {
    2.0
}

/// `[multi_plane]`: whether a die serves up to `planes_per_die` pages of
/// different planes in one read, host program or GC page move.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MultiPlane {
    #[serde(default)]
    pub enabled: bool,
    /// ONFI's restriction of many parts: the pages of one multi-plane
    /// operation sit at the same page offset in their blocks.
    #[serde(default)]
    pub same_page_offset: bool,
    /// Die time each plane beyond the first adds to the operation.
    #[serde(default = "plane_extra_us_default")]
    pub extra_us_per_plane: f64,
}

impl MultiPlane {
    /// Multi-plane off (the presets' choice: their timings fold it in).
    pub fn off() -> MultiPlane {
        MultiPlane {
            enabled: false,
            same_page_offset: false,
            extra_us_per_plane: plane_extra_us_default(),
        }
    }

    pub(super) fn validate(&self, geometry: &Geometry) -> Result<(), ConfigError> {
        if self.enabled && geometry.planes_per_die > MAX_PLANES {
            return Err(ConfigError::Invalid {
                field: "geometry.planes_per_die",
                value: geometry.planes_per_die.to_string(),
                reason: format!("must be at most {MAX_PLANES} with multi_plane.enabled"),
            });
        }
        super::at_most(
            "multi_plane.extra_us_per_plane",
            self.extra_us_per_plane,
            MAX_PLANE_EXTRA_US,
            "must be from 0 to 1,000,000 us (a second a plane is no flash operation)",
        )
    }
}

/// The most die time a plane beyond the first may add, us.
const MAX_PLANE_EXTRA_US: f64 = 1e6;

/// The comments `iosteer device show` prints above each section of this
/// file, so every key is documented where it is edited.
pub const SECTION_DOCS: &[(&str, &str)] = &[
    (
        "[ftl]",
        "# [ftl] mapping_unit: bytes per mapped unit (page_size = page-mapped; smaller packs\n\
         #   units into page programs through a write buffer per frontier).\n\
         # buffer_flush_us: how long a partly filled page waits before it is programmed padded.\n\
         # write_placement: least_busy (a write's page goes to the least busy die) or\n\
         #   striped (die = logical page mod dies).\n",
    ),
    (
        "[cache]",
        "# [cache] size_mib: DRAM write cache (0: none); policy: write_back (a write\n\
         #   completes when cached, destaged behind it, throttled when full) or\n\
         #   write_through; power_protected: FLUSH completes at once (and a FUA write\n\
         #   when cached; without it a FUA write skips the cache).\n",
    ),
    (
        "[multi_plane]",
        "# [multi_plane] enabled: a die reads, programs (and GC moves) up to planes_per_die pages of\n\
         #   different planes in one operation; same_page_offset: only pages at one offset;\n\
         # extra_us_per_plane: die time each plane beyond the first adds.\n",
    ),
];

/// When a write completes with a DRAM write cache.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CachePolicy {
    /// Once its data is in the cache; the cache destages to NAND behind it.
    #[default]
    WriteBack,
    /// Once its data is programmed, as without a cache.
    WriteThrough,
}

/// `[cache]`: the drive's DRAM write cache.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// Bytes of write cache, in MiB (0: none).
    #[serde(default)]
    pub size_mib: u64,
    #[serde(default)]
    pub policy: CachePolicy,
    /// Capacitors carry the cache through a power loss: FLUSH then has
    /// nothing to wait for and completes at once; without them a FLUSH waits
    /// until the cache is destaged.
    #[serde(default)]
    pub power_protected: bool,
}

impl CacheConfig {
    /// No cache (the presets' choice: writes complete when programmed).
    pub fn none() -> CacheConfig {
        CacheConfig::default()
    }

    /// Whether writes complete when cached.
    pub fn writes_back(&self) -> bool {
        self.size_mib > 0 && self.policy == CachePolicy::WriteBack
    }

    /// Whether a write, FUA or not, completes when cached: a FUA write
    /// skips a volatile cache (it completes once programmed, as a
    /// write-through write), and a power-protected cache is stable media.
    pub fn completes_when_cached(&self, fua: bool) -> bool {
        self.writes_back() && (!fua || self.power_protected)
    }

    pub fn bytes(&self) -> u64 {
        self.size_mib.saturating_mul(1 << 20)
    }
}
