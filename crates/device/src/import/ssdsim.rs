//! SSDsim's `page.parameters` (Hu et al., HUST; version 2.1 as in
//! huaicheng/ssdsim, and the forks built on it such as tcyfree/ssdsim) as
//! our drive.
//!
//! The file is lines `name = value;` read by SSDsim's `load_parameters`
//! (initialize.c): `#` starts a comment, a line starting with a space is
//! skipped, the name is matched whole and the value read as a number up to
//! the first character that is not one. SSDsim times in nanoseconds, its
//! channel in nanoseconds per byte (t_RC out of the chip, t_WC into it),
//! pages in bytes with 512-byte subpages (sectors); over-provisioning and
//! GC thresholds are fractions (of the drive's pages, of a plane's pages).

use super::params::{Param, Params};
use super::{blocks_for_fraction, most_free_blocks, ImportError, Imported, Notes};
use crate::config::{CachePolicy, DeviceConfig, GcMode, VictimPolicy, WritePlacement};

/// The preset behind an imported SSDsim drive: SSDsim's defaults are the
/// same 2010-era SLC as DiskSim's SSD extension (t_PROG 200 us, t_BERS
/// 1.5 ms), whose drive this preset is.
const BASE_PRESET: &str = "diskSim-slc";

/// SSDsim models no host interface (a request ends with its last flash
/// transfer): a link so fast its transfer time vanishes (1 TB/s).
const INSTANT_LINK_MB_PER_S: f64 = 1e6;

/// SSDsim's sector and subpage: the unit of its traces (512 bytes).
const SUBPAGE_BYTES: u32 = 512;

/// Channels SSDsim can address (`find_ppn` keeps `page_channel[100]`).
const MAX_CHANNELS: u32 = 100;

/// Advanced-command bits of `advanced command`.
const AD_RANDOM: u32 = 1;
const AD_COPYBACK: u32 = 2;
const AD_TWO_PLANE_PROGRAM: u32 = 4;
const AD_INTERLEAVE: u32 = 8;
const AD_TWO_PLANE_READ: u32 = 16;

const BUS_CYCLES: &str = "ONFI bus cycle timing: the channel is a rate here (t_RC, t_WC)";
const ENERGY: &str = "energy is not modelled";
const FORK: &str = "an extension of a fork (tcyfree/ssdsim), not of SSDsim 2.1";
const READ_ONLY: &str = "read by SSDsim's load_parameters; not modelled";
const AGING: &str = "aging is chosen per run (--precondition); SSDsim's (pages laid in \
                     each plane as invalid) has no start state here";

/// SSDsim parameters the model leaves out, and why.
const NOT_MODELLED: &[(&str, &str)] = &[
    ("t_CLS", BUS_CYCLES),
    ("t_CLH", BUS_CYCLES),
    ("t_CS", BUS_CYCLES),
    ("t_CH", BUS_CYCLES),
    ("t_WP", BUS_CYCLES),
    ("t_ALS", BUS_CYCLES),
    ("t_ALH", BUS_CYCLES),
    ("t_DS", BUS_CYCLES),
    ("t_DH", BUS_CYCLES),
    ("t_WH", BUS_CYCLES),
    ("t_ADL", BUS_CYCLES),
    ("t_AR", BUS_CYCLES),
    ("t_CLR", BUS_CYCLES),
    ("t_RR", BUS_CYCLES),
    ("t_RP", BUS_CYCLES),
    ("t_WB", BUS_CYCLES),
    ("t_REA", BUS_CYCLES),
    ("t_CEA", BUS_CYCLES),
    ("t_RHZ", BUS_CYCLES),
    ("t_CHZ", BUS_CYCLES),
    ("t_RHOH", BUS_CYCLES),
    ("t_RLOH", BUS_CYCLES),
    ("t_COH", BUS_CYCLES),
    ("t_REH", BUS_CYCLES),
    ("t_IR", BUS_CYCLES),
    ("t_RHW", BUS_CYCLES),
    ("t_WHR", BUS_CYCLES),
    ("t_RST", "reset: the drive is never reset"),
    ("t_RH", BUS_CYCLES),
    ("erase limit", "no wear-out"),
    ("flash operating current", ENERGY),
    ("flash supply voltage", ENERGY),
    ("dram active current", ENERGY),
    ("dram standby current", ENERGY),
    ("dram refresh current", ENERGY),
    ("dram voltage", ENERGY),
    (
        "wear leveling",
        "no wear levelling (erase counts are reported)",
    ),
    (
        "gc",
        "GC mode selector: GC here is SSDsim's default, at gc hard threshold",
    ),
    (
        "gc threshold",
        "the soft threshold of SSDsim's active-write GC (active write = 1); its default \
         GC (get_ppn) starts at gc hard threshold alone",
    ),
    ("buffer management", "one cache policy (cache.policy)"),
    (
        "scheduling algorithm",
        "the host-side scheduler is the simulator's own (--sched); each die serves its queue in order",
    ),
    (
        "advanced command priority",
        "interleave versus two-plane order: dies work on their own here",
    ),
    (
        "advanced command priority2",
        "interleave versus two-plane order: dies work on their own here",
    ),
    (
        "greed MPW command",
        "multi-plane programs are taken whenever the planes allow (multi_plane.enabled)",
    ),
    ("aged", AGING),
    ("aged ratio", AGING),
    ("cpu sdram", "controller memory: the whole map is always in DRAM"),
    (
        "clean in background",
        "GC here starts at gc hard threshold only (no idle GC)",
    ),
    ("quick table radio", READ_ONLY),
    ("related mapping", READ_ONLY),
    ("striping", READ_ONLY),
    ("interleaving", READ_ONLY),
    ("pipelining", READ_ONLY),
    ("time_step", READ_ONLY),
    ("small large write", READ_ONLY),
    ("active write threshold", READ_ONLY),
    ("threshold value", READ_ONLY),
    (
        "t_PROG_L",
        "a fork's (tcyfree/ssdsim) MLC/TLC program time by page type; every page programs in t_PROG here",
    ),
    (
        "t_PROG_C",
        "a fork's (tcyfree/ssdsim) MLC/TLC program time by page type; every page programs in t_PROG here",
    ),
    (
        "t_PROG_M",
        "a fork's (tcyfree/ssdsim) MLC/TLC program time by page type; every page programs in t_PROG here",
    ),
    ("turbo_mode", FORK),
    ("turbo_mode_factor", FORK),
    ("turbo_mode_factor_2", FORK),
    ("fast_gc", FORK),
    ("fast_gc_thr_1", FORK),
    ("fast_gc_filter_1", FORK),
    ("fast_gc_thr_2", FORK),
    ("fast_gc_filter_2", FORK),
    ("fast_gc_filter_idle", FORK),
    ("dr_switch", FORK),
    ("dr_cycle", FORK),
    ("dr_filter", FORK),
];

/// The `name = value` lines of the file, as SSDsim reads them but stricter:
/// a value is cut at `#` and a trailing `;`, and a line SSDsim would skip
/// or misread is refused, not dropped.
fn parameter_lines(text: &str, file: &str) -> Result<Vec<Param>, ImportError> {
    // A byte-order mark (an editor's) is not part of the first name.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut params = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let syntax = |message: String| ImportError::Syntax {
            file: file.to_string(),
            line: index + 1,
            message,
        };
        let line = raw.split('#').next().unwrap_or("");
        if line.trim().is_empty() {
            continue;
        }
        let Some((name, value)) = line.split_once('=') else {
            return Err(syntax(format!(
                "`{}`: expected `name = value;` (SSDsim's page.parameters)",
                line.trim()
            )));
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(syntax("no parameter name before `=`".to_string()));
        }
        if raw.starts_with(' ') {
            return Err(syntax(format!(
                "`{name}` is indented: SSDsim skips a line that starts with a space, \
                 so it would not set it; remove the indentation or make the line a comment"
            )));
        }
        let value = value.trim();
        let value = value.strip_suffix(';').unwrap_or(value);
        params.push(Param::new(name, value, index + 1));
    }
    Ok(params)
}

/// The drive of an SSDsim `page.parameters`; `file` names it in errors.
pub fn import(text: &str, file: &str) -> Result<Imported, ImportError> {
    let mut p = Params::new(file, parameter_lines(text, file)?)?;
    let mut notes = Notes::new();
    let mut c = DeviceConfig::preset(BASE_PRESET).expect("the base preset exists");
    let (channels, dies) = geometry(&mut p, &mut c, &mut notes)?;
    timing(&mut p, &mut c, &mut notes)?;
    let advanced = advanced_commands(&mut p, &mut c, &mut notes, dies)?;
    garbage_collection(&mut p, &mut c, &mut notes, advanced)?;
    placement(&mut p, &mut c, &mut notes)?;
    host(&mut p, &mut c, &mut notes)?;
    for param in p.unused() {
        let beyond = param
            .name
            .strip_prefix("chip number[")
            .and_then(|rest| rest.strip_suffix(']'))
            .and_then(|i| i.parse::<u32>().ok())
            .is_some_and(|i| i >= channels);
        let why = if beyond {
            "beyond channel number: SSDsim reads no channel there"
        } else {
            NOT_MODELLED
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(&param.name))
                .map_or("unknown to the importer; ignored", |(_, why)| why)
        };
        let source = format!("{} = {} (line {})", param.name, param.value, param.line);
        notes.not_modelled(source, why);
    }
    c.name = "ssdsim".to_string();
    notes.finish(c, format!("SSDsim {file}"), BASE_PRESET, file)
}

/// A whole number from 0 to `most`, if the file sets `name`; `accepted`
/// says, in the error, what the values mean.
fn small_whole(
    p: &mut Params,
    name: &str,
    most: u32,
    accepted: &str,
) -> Result<Option<u32>, ImportError> {
    let Some(value) = p.text(name) else {
        return Ok(None);
    };
    match value.parse::<u32>() {
        Ok(n) if n <= most => Ok(Some(n)),
        _ => Err(p.bad(name, &value, accepted)),
    }
}

/// Sets the geometry; returns the channels and the dies a chip.
fn geometry(
    p: &mut Params,
    c: &mut DeviceConfig,
    notes: &mut Notes,
) -> Result<(u32, u32), ImportError> {
    let channels = p.required_count("channel number")?;
    if channels > MAX_CHANNELS {
        let accepted =
            format!("at most {MAX_CHANNELS} (SSDsim's find_ppn keeps {MAX_CHANNELS} channels)");
        return Err(p.bad("channel number", &channels.to_string(), &accepted));
    }
    let chips = p.required_count("chip number")?;
    let per_channel = p.required_count("chip number[0]")?;
    for i in 1..channels {
        let name = format!("chip number[{i}]");
        let n = p.required_count(&name)?;
        if n != per_channel {
            let accepted = format!(
                "{per_channel}, as chip number[0]: SSDsim addresses every channel by chip number[0] \
                 (find_location, get_ppn)"
            );
            return Err(p.bad(&name, &n.to_string(), &accepted));
        }
    }
    if u64::from(chips) != u64::from(channels) * u64::from(per_channel) {
        let accepted = format!(
            "channel number x chip number[0] = {}",
            u64::from(channels) * u64::from(per_channel)
        );
        return Err(p.bad("chip number", &chips.to_string(), &accepted));
    }
    let dies = p.required_count("die number")?;
    let unit = format!("with chip number[0] = {per_channel} (dies per channel must fit 32 bits)");
    let dies_per_channel = p.product("die number", dies, per_channel, &unit)?;
    let page = p.required_count("page capacity")?;
    let subpages = p.required_count("subpage page")?;
    let subpage = p.required_count("subpage capacity")?;
    if subpage != SUBPAGE_BYTES {
        let accepted = format!("{SUBPAGE_BYTES} (SSDsim's sector: the unit of its traces)");
        return Err(p.bad("subpage capacity", &subpage.to_string(), &accepted));
    }
    if page % SUBPAGE_BYTES != 0 {
        let accepted = format!("a multiple of subpage capacity ({SUBPAGE_BYTES} bytes)");
        return Err(p.bad("page capacity", &page.to_string(), &accepted));
    }
    if subpages != page / SUBPAGE_BYTES {
        let accepted = format!(
            "page capacity / subpage capacity = {}",
            page / SUBPAGE_BYTES
        );
        return Err(p.bad("subpage page", &subpages.to_string(), &accepted));
    }
    let g = &mut c.geometry;
    let counts = ["plane number", "block number", "page number"];
    p.geometry_into(g, (channels, dies_per_channel), counts)?;
    g.page_size = page;
    c.ftl.mapping_unit = page;
    notes.mapped(
        format!("channel number = {channels}"),
        format!("geometry.channels = {channels}"),
    );
    notes.mapped(
        format!("chip number = {chips}, chip number[0..{channels}] = {per_channel} each"),
        format!("{per_channel} chips a channel (checked: chip number = channels x chips)"),
    );
    notes.mapped(
        format!("die number = {dies} a chip"),
        format!("geometry.dies_per_channel = {dies_per_channel} (chips x dies)"),
    );
    for (source, key, value) in [
        ("plane number", "geometry.planes_per_die", g.planes_per_die),
        (
            "block number",
            "geometry.blocks_per_plane",
            g.blocks_per_plane,
        ),
        ("page number", "geometry.pages_per_block", g.pages_per_block),
    ] {
        notes.mapped(format!("{source} = {value}"), format!("{key} = {value}"));
    }
    notes.mapped(
        format!("page capacity = {page} B"),
        format!(
            "geometry.page_size = {page}, ftl.mapping_unit = {page} (page-mapped, as SSDsim's map)"
        ),
    );
    notes.mapped(
        format!("subpage page = {subpages}, subpage capacity = {subpage} B"),
        "checked: page capacity = subpage page x subpage capacity; SSDsim's bitmap of \
         valid sectors in each page and its read of the old page before a partial \
         update are not modelled: a page is mapped and programmed whole",
    );
    Ok((channels, dies))
}

fn timing(p: &mut Params, c: &mut DeviceConfig, notes: &mut Notes) -> Result<(), ImportError> {
    let t = &mut c.timing;
    for (name, key, field) in [
        ("t_R", "timing.page_read_us", &mut t.page_read_us),
        ("t_PROG", "timing.page_program_us", &mut t.page_program_us),
        ("t_BERS", "timing.block_erase_us", &mut t.block_erase_us),
    ] {
        let ns = p.required_number(name)?;
        *field = ns / 1e3;
        notes.mapped(format!("{name} = {ns} ns"), format!("{key} = {}", *field));
    }
    let mut per_byte = [0.0; 2];
    for (name, ns) in ["t_RC", "t_WC"].into_iter().zip(&mut per_byte) {
        *ns = p.required_number(name)?;
        if *ns <= 0.0 {
            return Err(p.bad(name, &ns.to_string(), "a time per byte above 0 ns"));
        }
    }
    let [rc, wc] = per_byte;
    t.channel_mb_per_s = 1e3 / ((rc + wc) / 2.0);
    let how = if rc == wc {
        "one byte per t_RC = t_WC".to_string()
    } else {
        "their mean time per byte: SSDsim moves read data at t_RC, written data at t_WC".to_string()
    };
    notes.mapped(
        format!("t_RC = {rc} ns, t_WC = {wc} ns (a byte each)"),
        format!(
            "timing.channel_mb_per_s = {} ({how}); SSDsim's 7 t_WC of command and address \
             cycles per operation ({} us) are not modelled, and it moves only the sectors \
             asked for where a page moves whole here",
            t.channel_mb_per_s,
            7.0 * wc / 1e3
        ),
    );
    Ok(())
}

/// Reads `advanced command` (0 when unset, as in SSDsim) and sets
/// multi-plane operations; returns the bits.
fn advanced_commands(
    p: &mut Params,
    c: &mut DeviceConfig,
    notes: &mut Notes,
    dies: u32,
) -> Result<u32, ImportError> {
    let accepted = "0 to 31: the sum of 1 (random input), 2 (copy-back), 4 (two-plane program), \
                    8 (interleave), 16 (two-plane read)";
    let bits = small_whole(p, "advanced command", 31, accepted)?.unwrap_or(0);
    let dbsy = p.number("t_DBSY")?.unwrap_or(0.0);
    let two_plane = bits & (AD_TWO_PLANE_PROGRAM | AD_TWO_PLANE_READ) != 0;
    let m = &mut c.multi_plane;
    m.enabled = two_plane && c.geometry.planes_per_die > 1;
    m.same_page_offset = true;
    m.extra_us_per_plane = dbsy / 1e3;
    notes.mapped(
        format!("advanced command = {bits}, t_DBSY = {dbsy} ns"),
        format!(
            "multi_plane.enabled = {} (two-plane program or read; here a die's multi-plane \
             reads, programs and GC moves go together), same_page_offset = true, \
             extra_us_per_plane = {} (t_DBSY: SSDsim's wait between the planes of a \
             two-plane program)",
            m.enabled, m.extra_us_per_plane
        ),
    );
    if bits & AD_RANDOM != 0 {
        notes.not_modelled(
            "advanced command: random input (1)",
            "a partial-page update merged in the chip: a write here programs whole pages",
        );
    }
    if bits & AD_INTERLEAVE == 0 && dies > 1 {
        notes.not_modelled(
            "advanced command without interleave (8)",
            format!(
                "SSDsim runs one of a chip's {dies} dies at a time without it; here each die works on its own"
            ),
        );
    }
    Ok(bits)
}

fn garbage_collection(
    p: &mut Params,
    c: &mut DeviceConfig,
    notes: &mut Notes,
    advanced: u32,
) -> Result<(), ImportError> {
    let spare = "SSDsim's spare area (0 when unset, which leaves GC no room)";
    let op = p
        .number("overprovide")?
        .ok_or_else(|| p.missing("overprovide", spare))?;
    let trigger = "SSDsim cleans a plane only below it (0 when unset: never)";
    let hard = p
        .number("gc hard threshold")?
        .ok_or_else(|| p.missing("gc hard threshold", trigger))?;
    if hard > 1.0 {
        let accepted = "a share of a plane's pages, from 0 to 1";
        return Err(p.bad("gc hard threshold", &hard.to_string(), accepted));
    }
    if let Some(active) = p.number("active write")? {
        if active != 0.0 {
            let accepted =
                "0 (SSDsim's default GC; its active-write GC at gc threshold is not imported)";
            return Err(p.bad("active write", &active.to_string(), accepted));
        }
    }
    c.over_provisioning = op;
    notes.mapped(
        format!("overprovide = {op}"),
        format!("over_provisioning = {op} (the share of pages hidden from the host, as in SSDsim)"),
    );
    let gc = &mut c.gc;
    gc.victim = VictimPolicy::Greedy;
    gc.mode = GcMode::Blocking;
    gc.pipeline = false;
    gc.separate_frontier = false;
    gc.background_idle_ms = crate::config::MAX_BACKGROUND_IDLE_MS;
    let blocks_per_die = c.geometry.blocks_per_die();
    let wanted = blocks_for_fraction(hard, blocks_per_die);
    let most = most_free_blocks(op, blocks_per_die, gc.streams());
    let blocks = wanted.min(most.max(2));
    gc.low_watermark = blocks;
    gc.high_watermark = blocks;
    let clamped = if blocks < wanted {
        format!(
            "; {wanted} blocks ({hard} of the die) exceed what overprovide = {op} leaves \
             room for, so the most the drive takes: SSDsim would clean without end once \
             the drive is {:.0}% full",
            (1.0 - hard) * 100.0
        )
    } else {
        String::new()
    };
    notes.mapped(
        format!("gc hard threshold = {hard} of a plane's pages"),
        format!(
            "gc.low_watermark = gc.high_watermark = {blocks} free blocks per die (SSDsim \
             counts free pages per plane; one victim per page written below it){clamped}"
        ),
    );
    let greedy_copy_back = small_whole(p, "greed CB command", 1, "0 or 1")?.unwrap_or(0);
    let copy_back = match (advanced & AD_COPYBACK != 0, greedy_copy_back) {
        (true, 1) => "with copy-back SSDsim's moves skip their transfers",
        (true, _) => {
            "SSDsim 2.1's uninterrupt_gc gives GC no time at all with copy-back on and \
             greed CB command = 0, which is not imported"
        }
        _ => "SSDsim adds each moved page's transfer out and in",
    };
    notes.mapped(
        format!(
            "(SSDsim's default GC: get_ppn, uninterrupt_gc), greed CB command = {greedy_copy_back}"
        ),
        format!(
            "gc.mode = blocking, gc.victim = greedy (most invalid pages; SSDsim picks in the \
             plane, here in the die), gc.pipeline = false (GC holds the channel until it \
             ends; a move costs t_R + t_PROG here, {copy_back}), gc.separate_frontier = \
             false (GC writes into the host's active block), no idle GC \
             (gc.background_idle_ms = {})",
            c.gc.background_idle_ms
        ),
    );
    Ok(())
}

fn placement(p: &mut Params, c: &mut DeviceConfig, notes: &mut Notes) -> Result<(), ImportError> {
    let scheme = small_whole(p, "allocation", 1, "0 (dynamic) or 1 (static)")?.unwrap_or(0);
    let dynamic = small_whole(
        p,
        "dynamic_allocation",
        1,
        "0 (all dynamic) or 1 (channel fixed by the page, the rest dynamic)",
    )?;
    let fixed = small_whole(p, "static_allocation", 5, "0 to 5 (SSDsim's static modes)")?;
    if scheme == 1 {
        c.ftl.write_placement = WritePlacement::Striped;
        notes.mapped(
            format!(
                "allocation = 1 (static), static_allocation = {}",
                fixed.unwrap_or(0)
            ),
            "ftl.write_placement = striped (a fixed die per logical page, die = page mod \
             dies; SSDsim's modes order channel, chip, die and plane in the page number \
             differently)",
        );
        if let Some(mode) = dynamic {
            notes.not_modelled(
                format!("dynamic_allocation = {mode}"),
                "used only with allocation = 0",
            );
        }
    } else {
        c.ftl.write_placement = WritePlacement::LeastBusy;
        let how = if dynamic == Some(1) {
            "the channel fixed by the page, chip, die and plane round robin"
        } else {
            "channel, chip, die and plane round robin"
        };
        notes.mapped(
            format!(
                "allocation = 0 (dynamic), dynamic_allocation = {}",
                dynamic.unwrap_or(0)
            ),
            format!(
                "ftl.write_placement = least_busy (SSDsim takes {how}; the nearest here is \
                 the die whose work ends first)"
            ),
        );
        if let Some(mode) = fixed {
            notes.not_modelled(
                format!("static_allocation = {mode}"),
                "used only with allocation = 1",
            );
        }
    }
    if let Some(mapping) = small_whole(p, "address mapping", 3, "1 (page mapping)")? {
        if mapping != 1 {
            return Err(p.bad("address mapping", &mapping.to_string(), "1 (page mapping)"));
        }
        notes.mapped(
            "address mapping = 1 (page)",
            "page-mapped (ftl.mapping_unit = page size)",
        );
    }
    Ok(())
}

fn host(p: &mut Params, c: &mut DeviceConfig, notes: &mut Notes) -> Result<(), ImportError> {
    c.timing.host_link_mb_per_s = INSTANT_LINK_MB_PER_S;
    c.timing.command_overhead_us = 0.0;
    notes.mapped(
        "(SSDsim models no host interface: a request ends with its last flash transfer)",
        format!(
            "timing.host_link_mb_per_s = {INSTANT_LINK_MB_PER_S}, timing.command_overhead_us = 0"
        ),
    );
    if let Some(depth) = p.count("queue_length")? {
        c.interface.queue_depth = depth;
        notes.mapped(
            format!("queue_length = {depth}"),
            format!("interface.queue_depth = {depth}"),
        );
    }
    let bytes = p.number("dram capacity")?.unwrap_or(0.0);
    let mib = (bytes / f64::from(1u32 << 20)).floor();
    c.cache.size_mib = mib as u64;
    c.cache.policy = CachePolicy::WriteBack;
    c.cache.power_protected = false;
    let how = if bytes > 0.0 && mib == 0.0 {
        " (below 1 MiB, which the cache here cannot be: no cache, writes complete when programmed)"
    } else if bytes > 0.0 {
        " (whole MiB, policy = write_back: SSDsim's buffer completes writes it holds; its read hits are not modelled)"
    } else {
        " (no buffer)"
    };
    notes.mapped(
        format!("dram capacity = {bytes} B"),
        format!("cache.size_mib = {}{how}", c.cache.size_mib),
    );
    Ok(())
}
