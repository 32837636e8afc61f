//! MQSim's `ssdconfig.xml` (CMU SAFARI's simulator) as our drive.
//!
//! The file is flat: each parameter a leaf element `<Name>value</Name>`
//! inside `Host_Parameter_Set`, `Device_Parameter_Set` and
//! `Flash_Parameter_Set`, so a small reader of leaf elements is all the XML
//! it needs. MQSim times in nanoseconds, channel rates in MT/s over a width
//! in bytes, PCIe lanes in GB/s each; GC thresholds are fractions of a
//! plane's blocks, which become free blocks per die here.

use super::params::{Param, Params};
use super::{blocks_for_fraction, most_free_blocks, ImportError, Imported, Notes};
use crate::config::{CachePolicy, DeviceConfig, GcMode, InterfaceKind, VictimPolicy};

/// MQSim parameters the model leaves out, and why.
const NOT_MODELLED: &[(&str, &str)] = &[
    (
        "SATA_Processing_Delay",
        "used with SATA only (as the command overhead)",
    ),
    ("Enable_ResponseTime_Logging", "reports, not the drive"),
    (
        "ResponseTime_Logging_Period_Length",
        "reports, not the drive",
    ),
    (
        "Seed",
        "the run's seed is the workload's and Precondition's",
    ),
    (
        "Enabled_Preconditioning",
        "aging is chosen per run (Precondition)",
    ),
    ("Queue_Fetch_Size", "the NVMe queue is fetched whole"),
    ("Data_Cache_Sharing_Mode", "one cache for all streams"),
    (
        "Data_Cache_DRAM_Row_Size",
        "DRAM timing: the cache costs no time",
    ),
    (
        "Data_Cache_DRAM_Data_Rate",
        "DRAM timing: the cache costs no time",
    ),
    (
        "Data_Cache_DRAM_Data_Busrt_Size",
        "DRAM timing: the cache costs no time",
    ),
    (
        "Data_Cache_DRAM_tRCD",
        "DRAM timing: the cache costs no time",
    ),
    (
        "Data_Cache_DRAM_tCL",
        "DRAM timing: the cache costs no time",
    ),
    (
        "Data_Cache_DRAM_tRP",
        "DRAM timing: the cache costs no time",
    ),
    (
        "Ideal_Mapping_Table",
        "the whole map is always in DRAM (ideal)",
    ),
    (
        "CMT_Capacity",
        "the whole map is always in DRAM (no mapping-table cache)",
    ),
    (
        "CMT_Sharing_Mode",
        "the whole map is always in DRAM (no mapping-table cache)",
    ),
    (
        "Plane_Allocation_Scheme",
        "pages go to the least busy die, blocks in order",
    ),
    (
        "Transaction_Scheduling_Policy",
        "each die serves its queue in order, GC by gc.mode",
    ),
    (
        "Dynamic_Wearleveling_Enabled",
        "no wear levelling (erase counts are reported)",
    ),
    (
        "Static_Wearleveling_Enabled",
        "no wear levelling (erase counts are reported)",
    ),
    (
        "Static_Wearleveling_Threshold",
        "no wear levelling (erase counts are reported)",
    ),
    (
        "Preferred_suspend_erase_time_for_read",
        "suspend policy: a read suspends any GC operation",
    ),
    (
        "Preferred_suspend_erase_time_for_write",
        "writes never suspend GC",
    ),
    (
        "Preferred_suspend_write_time_for_read",
        "host programs are not suspended",
    ),
    (
        "Flash_Comm_Protocol",
        "the channel is a rate (timing.channel_mb_per_s)",
    ),
    ("Block_PE_Cycles_Limit", "no wear-out"),
    ("Suspend_Program_Time", "host programs are not suspended"),
    ("Page_Metadat_Capacity", "spare area is not modelled"),
];

/// Reads the leaf elements of an XML file: `(name, text, line)`.
fn leaf_elements(text: &str, file: &str) -> Result<Vec<Param>, ImportError> {
    let text = blank_comments(text);
    let mut params = Vec::new();
    let mut rest = text.as_str();
    let mut offset = 0;
    while let Some(open) = rest.find('<') {
        let line = text[..offset + open].matches('\n').count() + 1;
        let after = &rest[open + 1..];
        let close = after.find('>').ok_or_else(|| ImportError::Syntax {
            file: file.to_string(),
            line,
            message: "a tag is not closed with `>`".to_string(),
        })?;
        let tag = &after[..close];
        let body = &after[close + 1..];
        let is_open_tag = !tag.starts_with(['/', '?', '!']) && !tag.ends_with('/');
        let name = tag.split_whitespace().next().unwrap_or("");
        if is_open_tag {
            let end_tag = format!("</{name}>");
            let end = body.find(&end_tag).ok_or_else(|| ImportError::Syntax {
                file: file.to_string(),
                line,
                message: format!("`<{name}>` is not closed: no `{end_tag}` after it"),
            })?;
            if !body[..end].contains('<') {
                params.push(Param::new(name, &body[..end], line));
            }
        }
        let consumed = open + 1 + close + 1;
        offset += consumed;
        rest = &rest[consumed..];
    }
    Ok(params)
}

/// The text with each `<!-- ... -->` blanked (newlines kept for line numbers).
fn blank_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find("-->")
            .map_or(rest.len(), |e| start + e + 3);
        out.extend(rest[start..end].chars().filter(|c| *c == '\n'));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The drive of an MQSim `ssdconfig.xml`; `file` names it in errors.
pub fn import(text: &str, file: &str) -> Result<Imported, ImportError> {
    let mut p = Params::new(file, leaf_elements(text, file)?)?;
    let mut notes = Notes::new();
    let memory = p.text("Memory_Type").unwrap_or_else(|| "FLASH".to_string());
    if !memory.eq_ignore_ascii_case("FLASH") {
        return Err(p.bad("Memory_Type", &memory, "FLASH"));
    }
    p.required("HostInterface_Type")?;
    let (_, nvme) = p
        .choice("HostInterface_Type", &[("NVME", true), ("SATA", false)])?
        .expect("present");
    let base = if nvme {
        "enterprise-nvme"
    } else {
        "consumer-sata"
    };
    let mut c = DeviceConfig::preset(base).expect("the base presets exist");
    notes.mapped(
        format!("Memory_Type = {memory}"),
        "NAND flash (the only kind)",
    );
    geometry(&mut p, &mut c, &mut notes)?;
    timing(&mut p, &mut c, &mut notes)?;
    host(&mut p, &mut c, &mut notes, nvme)?;
    garbage_collection(&mut p, &mut c, &mut notes)?;
    cache_and_mapping(&mut p, &mut c, &mut notes)?;
    for param in p.unused() {
        let why = NOT_MODELLED
            .iter()
            .find(|(name, _)| *name == param.name)
            .map_or("unknown to the importer; ignored", |(_, why)| why);
        let source = format!("{} = {} (line {})", param.name, param.value, param.line);
        notes.not_modelled(source, why);
    }
    c.name = format!("mqsim-{}", if nvme { "nvme" } else { "sata" });
    notes.finish(c, format!("MQSim {file}"), base, file)
}

fn geometry(p: &mut Params, c: &mut DeviceConfig, notes: &mut Notes) -> Result<(), ImportError> {
    let channels = p.required_count("Flash_Channel_Count")?;
    let chips = p.required_count("Chip_No_Per_Channel")?;
    let dies = p.required_count("Die_No_Per_Chip")?;
    let unit = format!("with Chip_No_Per_Channel = {chips} (dies per channel must fit 32 bits)");
    let dies_per_channel = p.product("Die_No_Per_Chip", dies, chips, &unit)?;
    let g = &mut c.geometry;
    let counts = [
        "Plane_No_Per_Die",
        "Block_No_Per_Plane",
        "Page_No_Per_Block",
    ];
    p.geometry_into(g, (channels, dies_per_channel), counts)?;
    g.page_size = p.required_count("Page_Capacity")?;
    notes.mapped(
        format!("Flash_Channel_Count = {channels}"),
        format!("geometry.channels = {channels}"),
    );
    notes.mapped(
        format!("Chip_No_Per_Channel = {chips} x Die_No_Per_Chip = {dies}"),
        format!("geometry.dies_per_channel = {}", g.dies_per_channel),
    );
    for (source, key, value) in [
        (
            "Plane_No_Per_Die",
            "geometry.planes_per_die",
            g.planes_per_die,
        ),
        (
            "Block_No_Per_Plane",
            "geometry.blocks_per_plane",
            g.blocks_per_plane,
        ),
        (
            "Page_No_Per_Block",
            "geometry.pages_per_block",
            g.pages_per_block,
        ),
        ("Page_Capacity", "geometry.page_size", g.page_size),
    ] {
        notes.mapped(format!("{source} = {value}"), format!("{key} = {value}"));
    }
    Ok(())
}

/// MQSim's cell types: which of its LSB, CSB and MSB latencies each page
/// of a block takes (`Flash_Chip::Get_command_execution_latency`).
#[derive(Clone, Copy)]
enum Cell {
    Slc,
    Mlc,
    Tlc,
}

impl Cell {
    /// How many of a block's `pages` take the LSB, CSB and MSB latencies:
    /// SLC only LSB; MLC alternates LSB and MSB (`SSD_Device` gives MLC
    /// chips the pair LSB, MSB); TLC takes LSB for pages 0-5, CSB for 6-7,
    /// then pairs of pages LSB, CSB, MSB in turn.
    fn latency_shares(self, pages: u32) -> [u64; 3] {
        let n = u64::from(pages);
        match self {
            Cell::Slc => [n, 0, 0],
            Cell::Mlc => [n.div_ceil(2), 0, n / 2],
            Cell::Tlc => {
                let rest = n.saturating_sub(8);
                let (cycles, left) = (rest / 6, rest % 6);
                [
                    n.min(6) + 2 * cycles + left.min(2),
                    n.clamp(6, 8) - 6 + 2 * cycles + left.clamp(2, 4) - 2,
                    2 * cycles + left.saturating_sub(4),
                ]
            }
        }
    }
}

/// MQSim's page latency (ns) as microseconds: the mean over a block's
/// pages of the LSB, CSB and MSB latencies its cell type gives them, so a
/// latency the type never takes counts for nothing.
fn cell_latency_us(
    p: &mut Params,
    (stem, key): (&str, &str),
    (cell, technology): (Cell, &str),
    pages: u32,
    notes: &mut Notes,
) -> Result<f64, ImportError> {
    let mut sum = 0.0;
    let mut parts = Vec::new();
    let shares = cell.latency_shares(pages);
    for (bits, share) in ["LSB", "CSB", "MSB"].into_iter().zip(shares) {
        let name = format!("{stem}_{bits}");
        if share == 0 {
            if let Some(ns) = p.number(&name)? {
                parts.push(format!("{name} = {ns} ns (no page takes it)"));
            }
            continue;
        }
        let ns = p.required_number(&name)?;
        sum += ns * share as f64;
        parts.push(format!("{name} = {ns} ns ({share} pages)"));
    }
    let us = sum / f64::from(pages.max(1)) / 1e3;
    notes.mapped(
        parts.join(", "),
        format!("{key} = {us} (the mean over a block's {pages} pages as {technology} gives them; one latency for every page)"),
    );
    Ok(us)
}

fn timing(p: &mut Params, c: &mut DeviceConfig, notes: &mut Notes) -> Result<(), ImportError> {
    let cells = [("SLC", Cell::Slc), ("MLC", Cell::Mlc), ("TLC", Cell::Tlc)];
    let (technology, cell) = p
        .choice("Flash_Technology", &cells)?
        .unwrap_or(("MLC (MQSim's default)".into(), Cell::Mlc));
    let pages = c.geometry.pages_per_block;
    let technology = format!("Flash_Technology = {technology}");
    notes.mapped(
        &technology,
        "which page latency (LSB, CSB, MSB) each page of a block takes",
    );
    let cell = (cell, technology.as_str());
    let read = ("Page_Read_Latency", "timing.page_read_us");
    c.timing.page_read_us = cell_latency_us(p, read, cell, pages, notes)?;
    let program = ("Page_Program_Latency", "timing.page_program_us");
    c.timing.page_program_us = cell_latency_us(p, program, cell, pages, notes)?;
    let erase = p.required_number("Block_Erase_Latency")?;
    c.timing.block_erase_us = erase / 1e3;
    notes.mapped(
        format!("Block_Erase_Latency = {erase} ns"),
        format!("timing.block_erase_us = {}", c.timing.block_erase_us),
    );
    let rate = p.required_number("Channel_Transfer_Rate")?;
    let width = p.number("Flash_Channel_Width")?.unwrap_or(1.0);
    c.timing.channel_mb_per_s = rate * width;
    notes.mapped(
        format!("Channel_Transfer_Rate = {rate} MT/s x Flash_Channel_Width = {width} B"),
        format!("timing.channel_mb_per_s = {}", c.timing.channel_mb_per_s),
    );
    Ok(())
}

fn host(
    p: &mut Params,
    c: &mut DeviceConfig,
    notes: &mut Notes,
    nvme: bool,
) -> Result<(), ImportError> {
    c.interface.kind = if nvme {
        InterfaceKind::Nvme
    } else {
        InterfaceKind::Sata
    };
    notes.mapped(
        format!(
            "HostInterface_Type = {}",
            if nvme { "NVME" } else { "SATA" }
        ),
        format!("interface.kind = {}", if nvme { "nvme" } else { "sata" }),
    );
    if let Some(depth) = p.number("IO_Queue_Depth")? {
        c.interface.queue_depth = (depth as u32).max(1);
        notes.mapped(
            format!("IO_Queue_Depth = {depth}"),
            format!("interface.queue_depth = {}", c.interface.queue_depth),
        );
    }
    if nvme {
        let lane = p.number("PCIe_Lane_Bandwidth")?.unwrap_or(1.0);
        let lanes = p.number("PCIe_Lane_Count")?.unwrap_or(4.0);
        c.timing.host_link_mb_per_s = lane * lanes * 1e3;
        c.timing.command_overhead_us = 0.0;
        notes.mapped(
            format!("PCIe_Lane_Bandwidth = {lane} GB/s x PCIe_Lane_Count = {lanes}"),
            format!(
                "timing.host_link_mb_per_s = {}",
                c.timing.host_link_mb_per_s
            ),
        );
        notes.mapped(
            "(no NVMe controller delay in MQSim)",
            "timing.command_overhead_us = 0",
        );
    } else if let Some(delay) = p.number("SATA_Processing_Delay")? {
        c.timing.command_overhead_us = delay / 1e3;
        notes.mapped(
            format!("SATA_Processing_Delay = {delay} ns"),
            format!(
                "timing.command_overhead_us = {}",
                c.timing.command_overhead_us
            ),
        );
    }
    Ok(())
}

fn garbage_collection(
    p: &mut Params,
    c: &mut DeviceConfig,
    notes: &mut Notes,
) -> Result<(), ImportError> {
    let blocks_per_die = c.geometry.blocks_per_die();
    if let Some(op) = p.number("Overprovisioning_Ratio")? {
        c.over_provisioning = op;
        notes.mapped(
            format!("Overprovisioning_Ratio = {op}"),
            format!("over_provisioning = {op}"),
        );
    }
    if let Some(threshold) = blocks_fraction(p, "GC_Exec_Threshold", "0.05 for 5%")? {
        let wanted = blocks_for_fraction(threshold, blocks_per_die);
        let most = most_free_blocks(c.over_provisioning, blocks_per_die, c.gc.streams());
        let blocks = wanted.min(most.max(2));
        c.gc.low_watermark = blocks;
        c.gc.high_watermark = blocks;
        let clamped = match blocks < wanted {
            true => format!(
                "; {wanted} blocks exceed what over_provisioning = {} leaves room for, so the \
                 most the drive takes: MQSim collects without end once the drive is {:.0}% full",
                c.over_provisioning,
                (1.0 - threshold) * 100.0
            ),
            false => String::new(),
        };
        notes.mapped(
            format!("GC_Exec_Threshold = {threshold} of a plane's blocks"),
            format!("gc.low_watermark = gc.high_watermark = {blocks} free blocks per die (no idle GC beyond it, as in MQSim){clamped}"),
        );
    }
    let random = (
        VictimPolicy::Greedy,
        "greedy (random victims are not modelled)",
    );
    let policies = [
        ("GREEDY", (VictimPolicy::Greedy, "greedy")),
        (
            "RGA",
            (
                VictimPolicy::Greedy,
                "greedy (RGA, randomized greedy, approximated by greedy)",
            ),
        ),
        ("RANDOM", random),
        ("RANDOM_P", random),
        ("RANDOM_PP", random),
        ("FIFO", (VictimPolicy::Fifo, "fifo")),
    ];
    if let Some((policy, (victim, how))) = p.choice("GC_Block_Selection_Policy", &policies)? {
        c.gc.victim = victim;
        notes.mapped(
            format!("GC_Block_Selection_Policy = {policy}"),
            format!("gc.victim = {how}"),
        );
    }
    if let Some(copyback) = p.flag("Use_Copyback_for_GC")? {
        // MQSim's GC moves are transactions like the host's: without
        // copy-back a read (its data out) and a write (its data in), the
        // channel busy for those transfers only, never for tR, tPROG or an
        // erase, which `pipeline = false` would hold it for.
        c.gc.pipeline = true;
        let how = match copyback {
            true => "copy-back: GC moves stay off the channel",
            false => "GC moves hold only their die; MQSim's also move each page out and in over the channel, not charged here",
        };
        notes.mapped(
            format!("Use_Copyback_for_GC = {copyback}"),
            format!("gc.pipeline = true ({how})"),
        );
    }
    if let Some(preemptible) = p.flag("Preemptible_GC_Enabled")? {
        c.gc.mode = if preemptible {
            GcMode::SemiPreemptive
        } else {
            GcMode::Blocking
        };
        notes.mapped(
            format!("Preemptible_GC_Enabled = {preemptible}"),
            format!("gc.mode = {}", c.gc.mode.name()),
        );
    }
    if let Some(hard) = blocks_fraction(p, "GC_Hard_Threshold", "0.005 for 0.5%")? {
        // At least one: a die with no erased block cannot take a host write.
        let blocks = blocks_for_fraction(hard, blocks_per_die)
            .min(c.gc.low_watermark)
            .max(1);
        c.gc.state2_below = blocks;
        c.gc.state3_below = blocks;
        notes.mapped(
            format!("GC_Hard_Threshold = {hard} of a plane's blocks"),
            format!("gc.state2_below = gc.state3_below = {blocks} (preemption stops below it)"),
        );
    }
    suspension(p, c, notes)
}

/// `name`, a fraction of a plane's blocks: below 1 (a percentage typed as
/// one is refused, `example` showing the form).
fn blocks_fraction(p: &mut Params, name: &str, example: &str) -> Result<Option<f64>, ImportError> {
    match p.number(name)? {
        Some(v) if !(0.0..1.0).contains(&v) => {
            let expected = format!("a fraction of a plane's blocks, 0 to below 1 ({example})");
            Err(p.bad(name, &v.to_string(), &expected))
        }
        v => Ok(v),
    }
}

fn suspension(p: &mut Params, c: &mut DeviceConfig, notes: &mut Notes) -> Result<(), ImportError> {
    let supports = [
        ("NONE", false),
        ("PROGRAM", true),
        ("ERASE", true),
        ("PROGRAM_ERASE", true),
    ];
    if let Some((support, suspend)) = p.choice("CMD_Suspension_Support", &supports)? {
        c.gc.suspend = suspend;
        let inert = match suspend && c.gc.mode == GcMode::Blocking {
            true => "; no effect with gc.mode = blocking, where MQSim still suspends an erase for a read",
            false => "",
        };
        notes.mapped(
            format!("CMD_Suspension_Support = {support}"),
            format!("gc.suspend = {suspend} (GC operations only{inert})"),
        );
    }
    if let Some(ns) = p.number("Suspend_Erase_Time")? {
        c.gc.suspend_us = ns / 1e3;
        notes.mapped(
            format!("Suspend_Erase_Time = {ns} ns"),
            format!("gc.suspend_us = {}", c.gc.suspend_us),
        );
    }
    Ok(())
}

fn cache_and_mapping(
    p: &mut Params,
    c: &mut DeviceConfig,
    notes: &mut Notes,
) -> Result<(), ImportError> {
    if let Some(mapping) = p.text("Address_Mapping") {
        if !mapping.eq_ignore_ascii_case("PAGE_LEVEL") {
            return Err(p.bad(
                "Address_Mapping",
                &mapping,
                "PAGE_LEVEL (HYBRID is not modelled)",
            ));
        }
        c.ftl.mapping_unit = c.geometry.page_size;
        notes.mapped(
            format!("Address_Mapping = {mapping}"),
            format!("ftl.mapping_unit = {} (page-mapped; MQSim's per-page bitmaps of written sectors are not kept)", c.ftl.mapping_unit),
        );
    }
    c.multi_plane.enabled = c.geometry.planes_per_die > 1;
    c.multi_plane.same_page_offset = true;
    notes.mapped(
        "(MQSim always issues multi-plane operations when it can)",
        format!(
            "multi_plane.enabled = {}, same_page_offset = true",
            c.multi_plane.enabled
        ),
    );
    let mechanisms = [("SIMPLE", ()), ("ADVANCED", ())];
    let mechanism = (p.choice("Caching_Mechanism", &mechanisms)?)
        .map_or_else(|| "ADVANCED".to_string(), |(given, ())| given);
    let capacity = p.number("Data_Cache_Capacity")?.unwrap_or(0.0);
    c.cache.size_mib = destage_buffer_mib(&c.geometry);
    c.cache.policy = CachePolicy::WriteBack;
    c.cache.power_protected = false;
    notes.mapped(
        format!("Caching_Mechanism = {mechanism}, Data_Cache_Capacity = {capacity} B"),
        format!(
            "cache.size_mib = {}, policy = write_back (MQSim writes data not written in the last \
             second to flash at once and holds writes while one page per plane is in flight: \
             its cache is, for such data, a destage buffer of that size; rewrites it keeps are not modelled)",
            c.cache.size_mib
        ),
    );
    Ok(())
}

/// MQSim's back-pressure limit on data being written to flash from its
/// cache (Data_Cache_Manager_Flash_Advanced, built in SSD_Device.cpp): one
/// page per plane of the drive, in MiB rounded up.
fn destage_buffer_mib(g: &crate::config::Geometry) -> u64 {
    let planes =
        u64::from(g.channels) * u64::from(g.dies_per_channel) * u64::from(g.planes_per_die);
    (planes * u64::from(g.page_size)).div_ceil(1 << 20)
}
