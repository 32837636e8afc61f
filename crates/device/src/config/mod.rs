//! Drive configuration: geometry, timing, host interface, garbage collection,
//! TRIM cost; loadable from TOML, with three documented presets.
//!
//! Units are in the field names (`page_read_us`, `channel_mb_per_s`), so a
//! configuration file reads without comments. MB is 10^6 bytes, as in data
//! sheets.

mod features;

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use features::{
    CacheConfig, CachePolicy, FtlConfig, MultiPlane, WritePlacement, MAX_UNITS_PER_PAGE,
    SECTOR_BYTES,
};
/// Most physical pages a drive may have: the model keeps two 4-byte maps
/// (logical to physical, physical to logical), about 8 bytes a page, so
/// 2^28 pages take 2 GiB of memory (4 TiB of NAND in 16 KiB pages).
pub const MAX_PHYSICAL_PAGES: u64 = 1 << 28;
/// Most mapping units a drive may have, for the same reason: the maps hold
/// a unit each (a page on a page-mapped drive), 8 bytes a unit.
pub const MAX_MAPPING_UNITS: u64 = MAX_PHYSICAL_PAGES;
/// Most erase blocks a drive may have: the model keeps about 48 bytes a
/// block (its state and free lists), so 2^22 blocks take about 200 MiB.
pub const MAX_BLOCKS: u64 = 1 << 22;
/// Most pages per block (each die keeps a bucket per valid-page count).
pub const MAX_PAGES_PER_BLOCK: u32 = 1 << 16;
/// Page sizes accepted, in bytes (multiples of 512).
pub const PAGE_SIZES: std::ops::RangeInclusive<u32> = 512..=(1 << 20);
/// Longest any one operation's time may be (a NAND read, program, erase,
/// the command overhead, a FLUSH, a GC suspension, each TRIM cost term):
/// 10 s, far above any real drive, and short enough that a run finishes.
pub const MAX_OPERATION_US: f64 = 10_000_000.0;
/// Longest a TRIM of the whole drive in one range may take: 10 minutes.
pub const MAX_WHOLE_TRIM_US: f64 = 600_000_000.0;
/// Largest TRIM size exponent (1 is linear in the bytes trimmed).
pub const MAX_TRIM_EXPONENT: f64 = 2.0;
/// Link and channel rates accepted, in MB/s: a 1 MiB page moves in about
/// a second at the slowest.
pub const RATES_MB_PER_S: std::ops::RangeInclusive<f64> = 1.0..=1_000_000.0;
/// Longest idle time before background GC: an hour.
pub const MAX_BACKGROUND_IDLE_MS: f64 = 3_600_000.0;

/// A configuration that cannot describe a drive.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("unknown device preset `{name}`; presets: {known}; or family:N (the family's drive of seed N) or a drive TOML file")]
    UnknownPreset { name: String, known: String },
    #[error("{file}: {message}")]
    Toml { file: String, message: String },
    #[error("`{field}` = {}: {reason}", readable(value))]
    Invalid {
        field: &'static str,
        value: String,
        reason: String,
    },
}

/// NAND organisation. The die is the unit of parallelism: it serves one NAND
/// operation at a time. Blocks are spread over planes in turn; multi-plane
/// operations (`[multi_plane]`) serve pages of different planes at once, and
/// the presets, which leave them off, fold them into their per-page timings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Geometry {
    pub channels: u32,
    pub dies_per_channel: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    /// Bytes per page (the FTL maps units of `ftl.mapping_unit` bytes).
    pub page_size: u32,
}

impl Geometry {
    /// Dies of the drive; saturates at `u32::MAX` for a geometry that
    /// `validate` refuses, so an importer's thresholds never overflow.
    pub fn dies(&self) -> u32 {
        self.channels.saturating_mul(self.dies_per_channel)
    }

    /// Blocks of a die; saturates as [`Geometry::dies`] does.
    pub fn blocks_per_die(&self) -> u32 {
        self.planes_per_die.saturating_mul(self.blocks_per_plane)
    }

    pub fn blocks(&self) -> u64 {
        u64::from(self.dies()) * u64::from(self.blocks_per_die())
    }

    pub fn physical_pages(&self) -> u64 {
        self.blocks() * u64::from(self.pages_per_block)
    }

    pub fn physical_bytes(&self) -> u64 {
        self.physical_pages() * u64::from(self.page_size)
    }
}

/// Time of each operation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    /// Array read of one page into the die's register (tR).
    pub page_read_us: f64,
    /// Program of one page (tPROG).
    pub page_program_us: f64,
    /// Erase of one block (tBERS).
    pub block_erase_us: f64,
    /// NAND bus of one channel, shared by its dies.
    pub channel_mb_per_s: f64,
    /// Host link (SATA, PCIe), shared by all commands.
    pub host_link_mb_per_s: f64,
    /// Controller time to take in any command.
    pub command_overhead_us: f64,
}

/// Commands a SATA drive queues at once: NCQ's 32 tags.
const SATA_TAGS: u32 = 32;

/// How the host talks to the drive.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InterfaceKind {
    /// SATA with NCQ: tagged commands, and non-queued commands that first drain
    /// every tag, then hold the queue while they run.
    Sata,
    /// NVMe: deep queues; deallocate and flush are queued like any command.
    Nvme,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interface {
    pub kind: InterfaceKind,
    /// Commands the drive accepts at once (NCQ tags, NVMe queue depth).
    pub queue_depth: u32,
    /// Whether TRIM is a queued command (NCQ TRIM, NVMe deallocate).
    pub queued_trim: bool,
    /// Whether FLUSH is a queued command.
    pub queued_flush: bool,
}

/// Victim selection for garbage collection.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VictimPolicy {
    /// Fewest valid pages.
    Greedy,
    /// Least recently written (closed) block.
    Fifo,
    /// Highest age * (1 - u) / (2u), u the valid fraction (Rosenblum & Ousterhout).
    CostBenefit,
}

impl VictimPolicy {
    pub const ALL: [VictimPolicy; 3] = [
        VictimPolicy::Greedy,
        VictimPolicy::Fifo,
        VictimPolicy::CostBenefit,
    ];

    pub fn name(self) -> &'static str {
        match self {
            VictimPolicy::Greedy => "greedy",
            VictimPolicy::Fifo => "fifo",
            VictimPolicy::CostBenefit => "cost_benefit",
        }
    }
}

impl fmt::Display for VictimPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How GC shares a die with host requests (seed 002).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GcMode {
    /// Non-preemptive GC (NPGC): a victim is cleaned in one go, every page
    /// move and the erase back to back, before the die serves anything else.
    #[serde(alias = "npgc")]
    Blocking,
    /// Semi-preemptive GC (PGC): cleaning is split into page moves and the
    /// erase, and host requests queued at the die may go between those steps,
    /// as the free-block state allows (see [`GcConfig::state2_below`]).
    #[serde(alias = "pgc")]
    SemiPreemptive,
}

impl GcMode {
    pub fn name(self) -> &'static str {
        match self {
            GcMode::Blocking => "blocking",
            GcMode::SemiPreemptive => "semi_preemptive",
        }
    }
}

fn state2_default() -> u32 {
    2
}

fn state3_default() -> u32 {
    1
}

fn pipeline_default() -> bool {
    true
}

/// ONFI erase/program suspend latencies are tens of microseconds; with the
/// resume this is a round 50 us.
fn suspend_us_default() -> f64 {
    50.0
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GcConfig {
    pub victim: VictimPolicy,
    pub mode: GcMode,
    /// Free blocks per die below which the FTL cleans a victim before a write.
    pub low_watermark: u32,
    /// Semi-preemptive GC, the preemption states of seed 002. A die's erased
    /// blocks are its free blocks less the erases it still owes. At or above
    /// `state2_below` (state 1) host reads and writes may go between GC
    /// steps; below it (state 2) only reads may; below `state3_below`
    /// (state 3) nothing may, until the die has erased enough.
    #[serde(default = "state2_default")]
    pub state2_below: u32,
    #[serde(default = "state3_default")]
    pub state3_below: u32,
    /// Semi-preemptive GC's pipeline technique: page moves use the die's
    /// copy-back and leave its channel to other dies' host transfers. When
    /// off, a GC step holds the channel too (that part of the drive serves
    /// nobody, as seed 002 draws NPGC).
    #[serde(default = "pipeline_default")]
    pub pipeline: bool,
    /// Semi-preemptive GC's merge technique: a host write of a page GC still
    /// owes a move for cancels the move (the new data supersedes it), and a
    /// host read of such a page lends the move its array read.
    #[serde(default = "pipeline_default")]
    pub merge: bool,
    /// Fully preemptible GC (with semi-preemptive mode): a host read that
    /// reaches a die in the middle of a GC page move or erase suspends it
    /// (program/erase suspend), is served, and the operation resumes later;
    /// each suspension costs `suspend_us` of die time. A resumed operation is
    /// not suspended again, so GC always progresses.
    #[serde(default)]
    pub suspend: bool,
    #[serde(default = "suspend_us_default")]
    pub suspend_us: f64,
    /// Free blocks per die that idle (background) GC cleans up to.
    pub high_watermark: u32,
    /// Idle host link time after which background GC starts.
    pub background_idle_ms: f64,
    /// Relocated pages go to their own open block rather than the host's.
    pub separate_frontier: bool,
    /// Stream separation: writes with a lifetime hint (short, medium, long,
    /// extreme) go to an open block of their own per hint (seed 004), and
    /// GC relocates their pages within the hint's streams (to a GC block of
    /// their own when `separate_frontier` is on), so lifetimes never mix.
    #[serde(default)]
    pub hint_streams: bool,
}

impl GcConfig {
    /// Open blocks per die: the host's, GC's if separate, and as many again
    /// for each hint.
    pub fn streams(&self) -> u32 {
        let per_lifetime = 1 + u32::from(self.separate_frontier);
        per_lifetime * if self.hint_streams { 5 } else { 1 }
    }
}

/// Time a TRIM command takes in the controller:
/// `fixed + per_range * ranges + per_mib * MiB^size_exponent`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrimCost {
    pub fixed_us: f64,
    pub per_range_us: f64,
    pub per_mib_us: f64,
    pub size_exponent: f64,
}

impl TrimCost {
    pub fn micros(&self, ranges: u32, bytes: u64) -> f64 {
        let mib = bytes as f64 / (1u64 << 20) as f64;
        self.fixed_us
            + self.per_range_us * f64::from(ranges)
            + self.per_mib_us * mib.powf(self.size_exponent)
    }
}

/// A whole drive.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    pub name: String,
    pub geometry: Geometry,
    pub timing: Timing,
    /// Fraction of the physical pages hidden from the host.
    pub over_provisioning: f64,
    pub interface: Interface,
    pub gc: GcConfig,
    pub trim_cost: TrimCost,
    /// Time a FLUSH takes (writes are programmed before they complete, so a
    /// flush only commits metadata, and programs partly filled pages).
    pub flush_us: f64,
    /// Mapping unit and write buffer.
    #[serde(default)]
    pub ftl: FtlConfig,
    #[serde(default)]
    pub multi_plane: MultiPlane,
    #[serde(default)]
    pub cache: CacheConfig,
    /// The state the drive starts in, when the file chooses one (a run's
    /// `--precondition` overrides it; without either, the scenario's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition: Option<PreconditionTable>,
}

/// `[precondition]` in a drive file: `state = "fill=50"` (the forms of
/// [`StartState`](crate::StartState)).
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreconditionTable {
    pub state: crate::StartState,
}

impl DeviceConfig {
    /// Logical pages the host sees.
    pub fn logical_pages(&self) -> u64 {
        ((self.geometry.physical_pages() as f64) * (1.0 - self.over_provisioning)).floor() as u64
    }

    pub fn logical_bytes(&self) -> u64 {
        self.logical_pages() * u64::from(self.geometry.page_size)
    }

    /// Mapping units per page (1 on a page-mapped drive); 1 when the unit
    /// does not divide the page (which `validate` refuses).
    pub fn units_per_page(&self) -> u32 {
        let unit = self.ftl.mapping_unit.max(1);
        (self.geometry.page_size / unit).max(1)
    }

    /// About the memory a model of the drive holds, bytes: its forward and
    /// reverse maps take 4 bytes a mapping unit of NAND each (measured
    /// peak RSS of an aged drive: 16.5 MB for consumer-sata's 17.8 here,
    /// 1.85 GB for 2^28 pages' 2.1).
    pub fn model_bytes(&self) -> u64 {
        8 * self.geometry.physical_pages() * u64::from(self.units_per_page())
    }

    /// Logical mapping units the host sees.
    pub fn logical_units(&self) -> u64 {
        self.logical_pages() * u64::from(self.units_per_page())
    }

    /// What the NAND reads, in MB/s: its dies (dies x page / tR) or its
    /// channels (channels x rate), the slower; a die's wait for its channel
    /// is left out, as the family's rule leaves it (`family`).
    pub fn nand_read_mb_per_s(&self) -> f64 {
        let (g, t) = (&self.geometry, &self.timing);
        let dies = f64::from(g.dies()) * f64::from(g.page_size) / t.page_read_us;
        dies.min(f64::from(g.channels) * t.channel_mb_per_s)
    }

    /// What the drive reads, in MB/s: its host link or its NAND, the slower.
    pub fn read_mb_per_s(&self) -> f64 {
        self.timing
            .host_link_mb_per_s
            .min(self.nand_read_mb_per_s())
    }

    /// Parses a TOML description; `file` names it in errors.
    pub fn from_toml(text: &str, file: &str) -> Result<DeviceConfig, ConfigError> {
        let config: DeviceConfig = toml::from_str(text).map_err(|e| ConfigError::Toml {
            file: file.to_string(),
            message: e.to_string().trim().to_string(),
        })?;
        config.validate()?;
        Ok(config)
    }

    /// The drive as TOML, each section of `features` preceded by comments
    /// on its keys.
    pub fn to_toml(&self) -> String {
        let mut text = toml::to_string_pretty(self).expect("a config always serializes");
        for (header, doc) in features::SECTION_DOCS {
            text = text.replacen(&format!("\n{header}\n"), &format!("\n{doc}{header}\n"), 1);
        }
        let notes: String = (self.implausible().iter())
            .map(|n| format!("# note: {n}\n"))
            .collect();
        notes + &text
    }

    /// What the drive asks that no drive shows or that has no effect, said
    /// rather than refused (a what-if may want it): an array step of no
    /// time, a program no slower than a read, an erase no slower than a
    /// program, more commands queued than SATA's 32 tags, erase suspension
    /// with blocking GC. None for the presets and the family's drives.
    pub fn implausible(&self) -> Vec<String> {
        let t = &self.timing;
        let steps = [
            ("page_read_us", t.page_read_us),
            ("page_program_us", t.page_program_us),
            ("block_erase_us", t.block_erase_us),
        ];
        let mut said: Vec<String> = (steps.iter())
            .filter(|(_, us)| *us == 0.0)
            .map(|(name, _)| format!("timing.{name} = 0: no NAND does that step in no time"))
            .collect();
        let slower = |(a, x): (&str, f64), (b, y): (&str, f64), typical: &str| {
            (x > 0.0 && y > 0.0 && y <= x).then(|| {
                format!(
                    "timing.{b} ({y} us) not above {a} ({x} us): NAND takes longer for it ({typical})"
                )
            })
        };
        said.extend(slower(
            steps[0],
            steps[1],
            "SLC programs 200 us against reads of 25, TLC 1-3 ms against 50-100",
        ));
        said.extend(slower(steps[1], steps[2], "erases take 1.5-10 ms"));
        let interface = &self.interface;
        if interface.kind == InterfaceKind::Sata && interface.queue_depth > SATA_TAGS {
            said.push(format!(
                "interface.queue_depth = {} on a SATA drive: NCQ has {SATA_TAGS} tags",
                interface.queue_depth
            ));
        }
        if self.gc.suspend && self.gc.mode == GcMode::Blocking {
            said.push("gc.suspend = true has no effect with gc.mode = blocking: only semi-preemptive GC is suspended for reads".into());
        }
        if self.multi_plane.enabled && self.geometry.planes_per_die == 1 {
            said.push("multi_plane.enabled = true has no effect with geometry.planes_per_die = 1: a multi-plane operation needs two planes or more".into());
        }
        said
    }

    /// A preset by name, or an error listing the presets.
    pub fn preset(name: &str) -> Result<DeviceConfig, ConfigError> {
        PRESETS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, make)| make())
            .ok_or_else(|| ConfigError::UnknownPreset {
                name: name.to_string(),
                known: preset_names().join(", "),
            })
    }

    /// Checks what the types cannot.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let g = &self.geometry;
        let t = &self.timing;
        let positive_ints = [
            ("geometry.channels", g.channels),
            ("geometry.dies_per_channel", g.dies_per_channel),
            ("geometry.planes_per_die", g.planes_per_die),
            ("geometry.blocks_per_plane", g.blocks_per_plane),
            ("geometry.pages_per_block", g.pages_per_block),
            ("geometry.page_size", g.page_size),
            ("interface.queue_depth", self.interface.queue_depth),
        ];
        for (field, value) in positive_ints {
            if value == 0 {
                return invalid(field, value, "must be at least 1");
            }
        }
        let dies = u64::from(g.channels) * u64::from(g.dies_per_channel);
        let blocks_per_die = u64::from(g.planes_per_die) * u64::from(g.blocks_per_plane);
        if dies > 4096 {
            return invalid(
                "geometry",
                dies,
                "more than 4096 dies (channels x dies_per_channel)",
            );
        }
        if blocks_per_die > 1 << 24 {
            return invalid(
                "geometry",
                blocks_per_die,
                "more than 2^24 blocks per die (planes_per_die x blocks_per_plane)",
            );
        }
        if g.pages_per_block > MAX_PAGES_PER_BLOCK {
            return invalid(
                "geometry.pages_per_block",
                g.pages_per_block,
                &format!("must be from 1 to {MAX_PAGES_PER_BLOCK}"),
            );
        }
        if !PAGE_SIZES.contains(&g.page_size) || g.page_size % 512 != 0 {
            return invalid(
                "geometry.page_size",
                g.page_size,
                &format!(
                    "must be a multiple of 512 bytes from {} to {}",
                    PAGE_SIZES.start(),
                    PAGE_SIZES.end()
                ),
            );
        }
        let blocks = dies * blocks_per_die;
        if blocks > MAX_BLOCKS {
            return invalid(
                "geometry",
                blocks,
                &format!(
                    "more than {MAX_BLOCKS} blocks (2^22, about 200 MiB of model state); \
                     use fewer channels, dies, planes or blocks_per_plane"
                ),
            );
        }
        let pages = blocks * u64::from(g.pages_per_block);
        if pages > MAX_PHYSICAL_PAGES {
            return invalid(
                "geometry",
                pages,
                &format!(
                    "more than {MAX_PHYSICAL_PAGES} pages (2^28; the model keeps 8 bytes a page, \
                     so that is 2 GiB of memory); use larger pages or fewer blocks"
                ),
            );
        }
        self.ftl.validate(g)?;
        self.multi_plane.validate(g)?;
        if self.cache.bytes() > g.physical_bytes() {
            return invalid(
                "cache.size_mib",
                self.cache.size_mib,
                "a write cache larger than the drive's NAND holds nothing the drive could",
            );
        }
        // The maps hold a unit each, not a page: 512-byte units of 16 KiB
        // pages take 32 times the memory the page count says.
        let units = pages * u64::from(self.units_per_page());
        if units > MAX_MAPPING_UNITS {
            let gib = (units * 8) as f64 / f64::from(1u32 << 30);
            return invalid(
                "geometry",
                units,
                &format!(
                    "more than {MAX_MAPPING_UNITS} mapping units (2^28; the model keeps 8 bytes a \
                     unit, so this drive would need {gib:.1} GiB of memory, at most 2 GiB); use \
                     a larger ftl.mapping_unit (the page size maps by page), larger pages or fewer blocks"
                ),
            );
        }
        let positive_rates = [
            ("timing.channel_mb_per_s", t.channel_mb_per_s),
            ("timing.host_link_mb_per_s", t.host_link_mb_per_s),
        ];
        for (field, value) in positive_rates {
            if !RATES_MB_PER_S.contains(&value) {
                return invalid(
                    field,
                    value,
                    &format!(
                        "must be a number of MB/s from {} to {}",
                        RATES_MB_PER_S.start(),
                        RATES_MB_PER_S.end()
                    ),
                );
            }
        }
        let durations = [
            ("timing.page_read_us", t.page_read_us),
            ("timing.page_program_us", t.page_program_us),
            ("timing.block_erase_us", t.block_erase_us),
            ("timing.command_overhead_us", t.command_overhead_us),
            ("gc.suspend_us", self.gc.suspend_us),
            ("trim_cost.fixed_us", self.trim_cost.fixed_us),
            ("trim_cost.per_range_us", self.trim_cost.per_range_us),
            ("trim_cost.per_mib_us", self.trim_cost.per_mib_us),
            ("flush_us", self.flush_us),
            ("ftl.buffer_flush_us", self.ftl.buffer_flush_us),
        ];
        for (field, value) in durations {
            at_most(
                field,
                value,
                MAX_OPERATION_US,
                &format!("must be a number of microseconds from 0 to {MAX_OPERATION_US} (10 s)"),
            )?;
        }
        at_most(
            "gc.background_idle_ms",
            self.gc.background_idle_ms,
            MAX_BACKGROUND_IDLE_MS,
            &format!(
                "must be a number of milliseconds from 0 to {MAX_BACKGROUND_IDLE_MS} (an hour)"
            ),
        )?;
        at_most(
            "trim_cost.size_exponent",
            self.trim_cost.size_exponent,
            MAX_TRIM_EXPONENT,
            &format!("must be a number from 0 to {MAX_TRIM_EXPONENT} (1 is linear)"),
        )?;
        let gc = &self.gc;
        // A die writes only to erased blocks: at none, GC must go first.
        if gc.state3_below < 1 {
            return invalid(
                "gc.state3_below",
                gc.state3_below,
                "must be at least 1 (a die with no erased block cannot take a host write before its GC)",
            );
        }
        if gc.low_watermark < 2 {
            return invalid(
                "gc.low_watermark",
                gc.low_watermark,
                "must be at least 2 (GC needs a free block to move data into)",
            );
        }
        if gc.state3_below > gc.state2_below {
            return invalid(
                "gc.state3_below",
                gc.state3_below,
                &format!("must not be above gc.state2_below ({})", gc.state2_below),
            );
        }
        if gc.high_watermark < gc.low_watermark {
            return invalid(
                "gc.high_watermark",
                gc.high_watermark,
                &format!("must not be below gc.low_watermark ({})", gc.low_watermark),
            );
        }
        let frontiers = u64::from(gc.streams());
        if u64::from(gc.high_watermark) + frontiers + 1 >= blocks_per_die {
            return invalid(
                "gc.high_watermark",
                gc.high_watermark,
                &format!(
                    "leaves no block per die for data: a die of {blocks_per_die} blocks keeps \
                     the watermark, {frontiers} open block(s) and one more; at least 2 free \
                     blocks, so a die needs at least {} blocks",
                    frontiers + 4
                ),
            );
        }
        let op = self.over_provisioning;
        let reserved =
            (f64::from(gc.high_watermark) + frontiers as f64 + 1.0) / blocks_per_die as f64;
        if !(op.is_finite() && op > reserved && op < 1.0) {
            return Err(ConfigError::Invalid {
                field: "over_provisioning",
                value: op.to_string(),
                reason: format!(
                    "must be below 1 and above the share of blocks GC keeps free or open ({reserved:.4}), \
                     or the drive cannot hold its own logical capacity"
                ),
            });
        }
        if self.logical_pages() == 0 {
            return invalid(
                "over_provisioning",
                op,
                "leaves the host no logical page (less than one page of the drive is not spare)",
            );
        }
        let whole = self.trim_cost.micros(1, self.logical_bytes());
        if !(whole.is_finite() && whole <= MAX_WHOLE_TRIM_US) {
            return Err(ConfigError::Invalid {
                field: "trim_cost",
                value: format!("{:.0} s for the whole drive", whole / 1e6),
                reason: format!(
                    "a TRIM of the whole drive may take at most {} s; lower per_mib_us or size_exponent",
                    MAX_WHOLE_TRIM_US / 1e6
                ),
            });
        }
        Ok(())
    }
}

pub(super) fn invalid(
    field: &'static str,
    value: impl ToString,
    reason: &str,
) -> Result<(), ConfigError> {
    Err(ConfigError::Invalid {
        field,
        value: value.to_string(),
        reason: reason.to_string(),
    })
}

/// A number too long to read (`1e-300` prints 300 digits; every u64 fits)
/// in scientific notation; anything else as it is.
fn readable(text: &str) -> String {
    const LONGEST: usize = 24;
    match text.parse::<f64>() {
        Ok(x) if text.len() > LONGEST => format!("{x:e}"),
        _ => text.to_string(),
    }
}

/// `value` must be a finite number from 0 to `max`; `reason` says so.
fn at_most(field: &'static str, value: f64, max: f64, reason: &str) -> Result<(), ConfigError> {
    if value.is_finite() && (0.0..=max).contains(&value) {
        Ok(())
    } else {
        invalid(field, value, reason)
    }
}

mod presets;
pub use presets::*;

#[cfg(test)]
mod tests;
