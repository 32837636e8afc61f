//! The SSD block of a DiskSim 4.0 parameter file (`.parv`) with Microsoft's
//! SSD extension (the simulator of seed 002's paper) as our drive.
//!
//! A `.parv` describes a whole system in blocks `type name { key = value, ...
//! }`; only the `ssdmodel_ssd` block is read (buses, controllers and the
//! topology describe the host side, which the simulator models itself).
//! DiskSim times in milliseconds, pages in 512-byte sectors, the chip bus in
//! ms per byte; its reserve and free-block thresholds are percentages.

use super::params::{Param, Params};
use super::{blocks_for_fraction, shown, ImportError, Imported, Notes};
use crate::config::{DeviceConfig, GcMode, VictimPolicy, WritePlacement, SECTOR_BYTES};

/// The preset behind an imported DiskSim drive: the drive of seed 002, whose
/// study used DiskSim's SSD extension.
const BASE_PRESET: &str = "diskSim-slc";

/// A host link so fast its transfer time vanishes (1 TB/s): DiskSim's
/// synthetic runs give the bus no transfer time, which a rate cannot be.
const INSTANT_LINK_MB_PER_S: f64 = 1e6;

/// DiskSim SSD parameters the model leaves out, and why.
const NOT_MODELLED: &[(&str, &str)] = &[
    (
        "Scheduler",
        "the host-side scheduler is the simulator's own (--sched)",
    ),
    (
        "Never disconnect",
        "bus protocol: the drive's link is a rate",
    ),
    ("Print stats", "reports, not the drive"),
    ("Timing model", "one timing model"),
    (
        "Plane block mapping",
        "blocks are taken in order within a die's pool",
    ),
    (
        "Allocation pool logic",
        "one free-block pool per die (per element here)",
    ),
    (
        "Elements per gang",
        "no ganging: each element has its own channel",
    ),
    ("Gang share", "no ganging: each element has its own channel"),
    (
        "Block count",
        "capacity follows the geometry and the reserve",
    ),
];

/// The `key = value` lines of the file's `ssdmodel_ssd` block; a nested
/// block's value is its type name.
fn ssd_block(text: &str, file: &str) -> Result<Vec<Param>, ImportError> {
    let mut params = Vec::new();
    let mut depth = 0usize;
    let mut inside = false;
    for (index, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if !inside {
            if line.starts_with("ssdmodel_ssd") && line.contains('{') {
                inside = true;
                depth = 1;
            }
            continue;
        }
        let opens = line.matches('{').count();
        let closes = line.matches('}').count();
        if depth == 1 {
            if let Some((key, value)) = line.split_once('=') {
                let value = value.trim().trim_end_matches(',');
                let value = value.split('{').next().unwrap_or(value).trim();
                params.push(Param::new(key, value, index + 1));
            }
        }
        depth = (depth + opens)
            .checked_sub(closes)
            .ok_or_else(|| ImportError::Syntax {
                file: file.to_string(),
                line: index + 1,
                message: "more `}` than `{`".to_string(),
            })?;
        if depth == 0 {
            return Ok(params);
        }
    }
    let message = if inside {
        "the ssdmodel_ssd block is not closed"
    } else {
        "no `ssdmodel_ssd NAME {` block (DiskSim's SSD extension)"
    };
    Err(ImportError::Syntax {
        file: file.to_string(),
        line: text.lines().count(),
        message: message.to_string(),
    })
}

/// The drive of a DiskSim SSD parameter file; `file` names it in errors.
pub fn import(text: &str, file: &str) -> Result<Imported, ImportError> {
    let mut p = Params::new(file, ssd_block(text, file)?)?;
    let mut notes = Notes::new();
    let mut c = DeviceConfig::preset(BASE_PRESET).expect("the base preset exists");
    geometry(&mut p, &mut c, &mut notes)?;
    timing(&mut p, &mut c, &mut notes)?;
    cleaning(&mut p, &mut c, &mut notes)?;
    host(&mut p, &mut c, &mut notes)?;
    for param in p.unused() {
        let why = NOT_MODELLED
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(&param.name))
            .map_or("unknown to the importer; ignored", |(_, why)| why);
        let source = format!("{} = {} (line {})", param.name, param.value, param.line);
        notes.not_modelled(source, why);
    }
    c.name = "disksim-ssd".to_string();
    notes.finish(c, format!("DiskSim {file}"), BASE_PRESET, file)
}

fn geometry(p: &mut Params, c: &mut DeviceConfig, notes: &mut Notes) -> Result<(), ImportError> {
    let elements = p.required_count("Flash chip elements")?;
    let units = p.count("Number of parallel units")?.unwrap_or(1);
    let planes = p.required_count("Planes per package")?;
    if planes % units != 0 {
        return Err(p.bad(
            "Planes per package",
            &planes.to_string(),
            "a multiple of Number of parallel units",
        ));
    }
    let sectors = p.required_count("Page size")?;
    let unit = format!("sectors of {SECTOR_BYTES} bytes");
    let page_size = p.product("Page size", sectors, SECTOR_BYTES, &unit)?;
    let g = &mut c.geometry;
    g.channels = elements;
    g.dies_per_channel = units;
    g.planes_per_die = planes / units;
    g.blocks_per_plane = p.required_count("Blocks per plane")?;
    g.pages_per_block = p.required_count("Pages per block")?;
    g.page_size = page_size;
    c.ftl.mapping_unit = g.page_size;
    if let Some(stride) = p.number("Element stride pages")? {
        if stride != 1.0 {
            let accepted = "1 (pages striped over the elements one by one)";
            return Err(p.bad("Element stride pages", &stride.to_string(), accepted));
        }
        c.ftl.write_placement = WritePlacement::Striped;
        notes.mapped(
            "Element stride pages = 1",
            "ftl.write_placement = striped (die = logical page mod dies)",
        );
    }
    notes.mapped(
        format!("Flash chip elements = {elements}"),
        format!("geometry.channels = {elements} (one bus per element)"),
    );
    notes.mapped(
        format!("Number of parallel units = {units}"),
        format!("geometry.dies_per_channel = {units}"),
    );
    notes.mapped(
        format!("Planes per package = {planes}"),
        format!("geometry.planes_per_die = {}", g.planes_per_die),
    );
    notes.mapped(
        format!("Blocks per plane = {}", g.blocks_per_plane),
        format!("geometry.blocks_per_plane = {}", g.blocks_per_plane),
    );
    notes.mapped(
        format!("Pages per block = {}", g.pages_per_block),
        format!("geometry.pages_per_block = {}", g.pages_per_block),
    );
    notes.mapped(
        format!("Page size = {sectors} sectors"),
        format!(
            "geometry.page_size = {} (and ftl.mapping_unit: page-mapped)",
            g.page_size
        ),
    );
    if let Some(per_element) = p.number("Blocks per element")? {
        let expected = f64::from(planes) * f64::from(g.blocks_per_plane);
        if per_element != expected {
            return Err(p.bad(
                "Blocks per element",
                &per_element.to_string(),
                &format!("Planes per package x Blocks per plane = {expected}"),
            ));
        }
        notes.mapped(
            format!("Blocks per element = {per_element}"),
            "checked: planes x blocks per plane",
        );
    }
    Ok(())
}

fn timing(p: &mut Params, c: &mut DeviceConfig, notes: &mut Notes) -> Result<(), ImportError> {
    let t = &mut c.timing;
    for (name, key, field) in [
        (
            "Page read latency",
            "timing.page_read_us",
            &mut t.page_read_us,
        ),
        (
            "Page write latency",
            "timing.page_program_us",
            &mut t.page_program_us,
        ),
        (
            "Block erase latency",
            "timing.block_erase_us",
            &mut t.block_erase_us,
        ),
    ] {
        let ms = p.required_number(name)?;
        *field = ms * 1e3;
        notes.mapped(
            format!("{name} = {} ms", shown(ms)),
            format!("{key} = {}", shown(*field)),
        );
    }
    let ms_per_byte = p.required_number("Chip xfer latency")?;
    if ms_per_byte <= 0.0 {
        return Err(p.bad(
            "Chip xfer latency",
            &ms_per_byte.to_string(),
            "a time per byte above 0 ms",
        ));
    }
    t.channel_mb_per_s = 1.0 / (ms_per_byte * 1e-3) / 1e6;
    notes.mapped(
        format!("Chip xfer latency = {ms_per_byte} ms/byte"),
        format!("timing.channel_mb_per_s = {}", t.channel_mb_per_s),
    );
    let overhead = p.number("Command overhead")?.unwrap_or(0.0);
    let bus = p.number("Bus transaction latency")?.unwrap_or(0.0);
    t.command_overhead_us = (overhead + bus) * 1e3;
    notes.mapped(
        format!("Command overhead = {overhead} ms + Bus transaction latency = {bus} ms"),
        format!("timing.command_overhead_us = {}", t.command_overhead_us),
    );
    Ok(())
}

fn cleaning(p: &mut Params, c: &mut DeviceConfig, notes: &mut Notes) -> Result<(), ImportError> {
    if let Some(reserve) = p.number("Reserve pages percentage")? {
        c.over_provisioning = reserve / 100.0;
        notes.mapped(
            format!("Reserve pages percentage = {reserve}"),
            format!("over_provisioning = {}", c.over_provisioning),
        );
    }
    if let Some(min_free) = p.number("Minimum free blocks percentage")? {
        let blocks = blocks_for_fraction(min_free / 100.0, c.geometry.blocks_per_die());
        c.gc.low_watermark = blocks;
        c.gc.high_watermark = blocks;
        notes.mapped(
            format!("Minimum free blocks percentage = {min_free}"),
            format!("gc.low_watermark = gc.high_watermark = {blocks} free blocks per die"),
        );
    }
    if let Some(policy) = p.number("Cleaning policy")? {
        c.gc.victim = VictimPolicy::Greedy;
        // Compared as written: `2.5` is no policy (not policy 2).
        let how = match policy {
            2.0 => "greedy",
            3.0 => "greedy (its wear awareness is not modelled)",
            1.0 => "greedy (random cleaning is not modelled)",
            _ => {
                return Err(p.bad(
                    "Cleaning policy",
                    &policy.to_string(),
                    "1 (random), 2 (greedy), 3 (greedy, wear-aware)",
                ))
            }
        };
        notes.mapped(
            format!("Cleaning policy = {policy}"),
            format!("gc.victim = {how}"),
        );
    }
    if let Some(background) = p.flag("Cleaning in background")? {
        c.gc.mode = GcMode::Blocking;
        // No background cleaning: the longest idle time a drive file takes
        // (an hour), far beyond any gap between DiskSim's arrivals.
        c.gc.background_idle_ms = if background {
            0.0
        } else {
            crate::config::MAX_BACKGROUND_IDLE_MS
        };
        notes.mapped(
            format!("Cleaning in background = {}", u8::from(background)),
            format!(
                "gc.mode = blocking (foreground), gc.background_idle_ms = {}",
                c.gc.background_idle_ms
            ),
        );
    }
    if let Some(copyback) = p.flag("Copy back")? {
        c.gc.pipeline = copyback;
        notes.mapped(
            format!("Copy back = {}", u8::from(copyback)),
            format!("gc.pipeline = {copyback} (a GC move does not cross the bus)"),
        );
    }
    if let Some(policy) = p.number("Write policy")? {
        if policy != 2.0 {
            return Err(p.bad("Write policy", &policy.to_string(), "2 (out of place, osr)"));
        }
        notes.mapped(
            "Write policy = 2 (osr)",
            "out-of-place writes (the only kind)",
        );
    }
    Ok(())
}

fn host(p: &mut Params, c: &mut DeviceConfig, notes: &mut Notes) -> Result<(), ImportError> {
    if let Some(depth) = p.number("Max queue length")? {
        c.interface.queue_depth = (depth as u32).max(1);
        notes.mapped(
            format!("Max queue length = {depth}"),
            format!("interface.queue_depth = {}", c.interface.queue_depth),
        );
    }
    if let Some(ms_per_sector) = p.number("Bulk sector transfer time")? {
        c.timing.host_link_mb_per_s = if ms_per_sector > 0.0 {
            f64::from(SECTOR_BYTES) / (ms_per_sector * 1e-3) / 1e6
        } else {
            INSTANT_LINK_MB_PER_S
        };
        notes.mapped(
            format!("Bulk sector transfer time = {ms_per_sector} ms/sector"),
            format!(
                "timing.host_link_mb_per_s = {} (0: no transfer time)",
                c.timing.host_link_mb_per_s
            ),
        );
    }
    Ok(())
}
