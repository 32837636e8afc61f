//! The built-in drives (`consumer-sata`, `enterprise-nvme`,
//! `diskSim-slc`), each with where its numbers come from.

use super::*;

pub(super) type PresetFn = fn() -> DeviceConfig;

/// Every preset, by name. Each is page-mapped (`ftl.mapping_unit` = page
/// size) and leaves multi-plane operations off: the studies built on them
/// rely on that model, and their per-page timings fold the planes in.
pub const PRESETS: &[(&str, PresetFn)] = &[
    ("consumer-sata", consumer_sata),
    ("enterprise-nvme", enterprise_nvme),
    ("diskSim-slc", disksim_slc),
];

pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The preset that holds the most, and its logical bytes: where to start
/// a drive file for a job larger than every preset.
pub fn largest_preset() -> (&'static str, u64) {
    PRESETS
        .iter()
        .map(|(name, make)| (*name, make().logical_bytes()))
        .max_by_key(|(_, bytes)| *bytes)
        .expect("presets exist")
}

/// GC as every preset has it but for the mode and the idle refill (watermark
/// and idle time): greedy victims, foreground GC below 4 free blocks per die,
/// seed 002's state thresholds and its merge and pipeline techniques (the
/// pipeline only with semi-preemptive GC: NPGC, as seed 002 draws it, holds
/// the channel), no suspend, GC's own open block, no hint streams.
fn preset_gc(mode: GcMode, high_watermark: u32, background_idle_ms: f64) -> GcConfig {
    GcConfig {
        victim: VictimPolicy::Greedy,
        mode,
        low_watermark: 4,
        state2_below: state2_default(),
        state3_below: state3_default(),
        pipeline: mode == GcMode::SemiPreemptive,
        merge: true,
        suspend: false,
        suspend_us: suspend_us_default(),
        high_watermark,
        background_idle_ms,
        separate_frontier: true,
        hint_streams: false,
    }
}

/// A 2015-era consumer MLC SATA drive of the kind in the Netflix paper (seed
/// 003), scaled down about 30x in capacity so that aging takes about a second.
///
/// - 8 dies, one per channel: the paper's "our vendor has 8 banks".
/// - 16 KiB pages, 256 pages (4 MiB) per block, 2 planes: 1x-nm MLC of 2014-15
///   (Micron/Toshiba/Samsung MLC data sheets).
/// - tR 60 us, tBERS 5 ms: MLC data-sheet class (tR 50-90 us, tBERS 3-5 ms;
///   the paper bounds a read's wait "to approximately the erase time for a
///   block (or about 5-10ms)").
/// - tPROG 650 us per page: a two-plane 32 KiB program takes about 1.3 ms on
///   such MLC; folded to one page, since planes are not modelled separately.
///   8 dies then sustain about 200 MB/s of NAND writes, below the 400 MB/s
///   data-sheet burst, as the paper says sustained writes collapse.
/// - Channels 400 MB/s (ONFI 3 / Toggle 2 at 400 MT/s); SATA 6 Gb/s carries
///   about 550 MB/s of data; 20 us of controller time per command.
/// - 7% over-provisioning (GB versus GiB, the usual consumer spare area; the
///   paper cites ~10%).
/// - NCQ with 32 tags; TRIM and FLUSH are non-queued (FreeBSD's ada sent only
///   non-NCQ TRIM). TRIM costs 2 ms + 0.1 ms per range + 0.3 ms per MiB, so a
///   large TRIM takes tens to a couple of hundred ms (the paper saw 10-200 ms).
/// - Background GC only after 100 ms of idle link (the paper: "only after the
///   interface had been idle 100ms").
/// - Semi-preemptive foreground GC (see [`GcMode::SemiPreemptive`]): the
///   paper bounds a read's wait behind cleaning near one erase, which a drive
///   that cleaned whole blocks at once could not do.
/// - Free-block pool: foreground GC below 4 free blocks per die (16 MiB); idle
///   GC refills to 48 per die, about 1.5 GiB in all: the reserve a fill
///   consumes before foreground GC starts (the paper's 5-10 GB on a drive ~30x
///   larger).
pub fn consumer_sata() -> DeviceConfig {
    let geometry = Geometry {
        channels: 8,
        dies_per_channel: 1,
        planes_per_die: 2,
        blocks_per_plane: 544,
        pages_per_block: 256,
        page_size: 16384,
    };
    DeviceConfig {
        name: "consumer-sata".into(),
        geometry: geometry.clone(),
        timing: Timing {
            page_read_us: 60.0,
            page_program_us: 650.0,
            block_erase_us: 5000.0,
            channel_mb_per_s: 400.0,
            host_link_mb_per_s: 550.0,
            command_overhead_us: 20.0,
        },
        over_provisioning: 0.07,
        interface: Interface {
            kind: InterfaceKind::Sata,
            queue_depth: 32,
            queued_trim: false,
            queued_flush: false,
        },
        gc: preset_gc(GcMode::SemiPreemptive, 48, 100.0),
        trim_cost: TrimCost {
            fixed_us: 2000.0,
            per_range_us: 100.0,
            per_mib_us: 300.0,
            size_exponent: 1.0,
        },
        flush_us: 200.0,
        ftl: FtlConfig::page_mapped(&geometry),
        multi_plane: MultiPlane::off(),
        cache: CacheConfig::none(),
        precondition: None,
    }
}

/// An enterprise NVMe drive of the 2016-18 class (Intel P3700 / Samsung
/// PM1725 data sheets), scaled to 64 GiB of NAND.
///
/// - 32 dies on 16 channels, 16 KiB pages, 256 pages per block.
/// - Faster NAND and bus than the consumer preset: tR 50 us, tPROG 500 us per
///   page (two-plane folded), tBERS 3 ms, channels 533 MB/s (ONFI 4).
/// - PCIe 3.0 x4 carries about 3.2 GB/s; 5 us per command.
/// - 28% over-provisioning (a 400 GB P3700 has 512 GiB of NAND).
/// - One queue of 256 commands; deallocate and flush are queued; deallocate
///   costs 50 us + 10 us per range + 20 us per MiB.
/// - Background GC after 20 ms idle; watermarks 4 and 16 blocks per die;
///   semi-preemptive foreground GC.
pub fn enterprise_nvme() -> DeviceConfig {
    let geometry = Geometry {
        channels: 16,
        dies_per_channel: 2,
        planes_per_die: 2,
        blocks_per_plane: 256,
        pages_per_block: 256,
        page_size: 16384,
    };
    DeviceConfig {
        name: "enterprise-nvme".into(),
        geometry: geometry.clone(),
        timing: Timing {
            page_read_us: 50.0,
            page_program_us: 500.0,
            block_erase_us: 3000.0,
            channel_mb_per_s: 533.0,
            host_link_mb_per_s: 3200.0,
            command_overhead_us: 5.0,
        },
        over_provisioning: 0.28,
        interface: Interface {
            kind: InterfaceKind::Nvme,
            queue_depth: 256,
            queued_trim: true,
            queued_flush: true,
        },
        gc: preset_gc(GcMode::SemiPreemptive, 16, 20.0),
        trim_cost: TrimCost {
            fixed_us: 50.0,
            per_range_us: 10.0,
            per_mib_us: 20.0,
            size_exponent: 1.0,
        },
        flush_us: 20.0,
        ftl: FtlConfig::page_mapped(&geometry),
        multi_plane: MultiPlane::off(),
        cache: CacheConfig::none(),
        precondition: None,
    }
}

/// The SLC drive of the semi-preemptive GC paper (seed 002: Lee et al.,
/// ISPASS 2011), which used the DiskSim SSD extension's defaults.
///
/// - Page read 25 us, program 200 us, block erase 1.5 ms; 64 pages per block;
///   2048 blocks per plane; 4 planes per die; 2 dies per package (one package
///   here: 4 GiB of NAND).
/// - 4 KiB pages and a 40 MB/s bus (DiskSim's 25 ns per byte): assumptions of
///   ours where the slides are silent.
/// - 15% over-provisioning (DiskSim's default reserve); greedy victims;
///   blocking (non-preemptive) GC, the paper's baseline.
/// - The paper's traces know no NCQ; a 32-deep queue with queued TRIM stands
///   in for it.
pub fn disksim_slc() -> DeviceConfig {
    let geometry = Geometry {
        channels: 1,
        dies_per_channel: 2,
        planes_per_die: 4,
        blocks_per_plane: 2048,
        pages_per_block: 64,
        page_size: 4096,
    };
    DeviceConfig {
        name: "diskSim-slc".into(),
        geometry: geometry.clone(),
        timing: Timing {
            page_read_us: 25.0,
            page_program_us: 200.0,
            block_erase_us: 1500.0,
            channel_mb_per_s: 40.0,
            host_link_mb_per_s: 300.0,
            command_overhead_us: 10.0,
        },
        over_provisioning: 0.15,
        interface: Interface {
            kind: InterfaceKind::Nvme,
            queue_depth: 32,
            queued_trim: true,
            queued_flush: true,
        },
        gc: preset_gc(GcMode::Blocking, 8, 100.0),
        trim_cost: TrimCost {
            fixed_us: 100.0,
            per_range_us: 10.0,
            per_mib_us: 50.0,
            size_exponent: 1.0,
        },
        flush_us: 50.0,
        ftl: FtlConfig::page_mapped(&geometry),
        multi_plane: MultiPlane::off(),
        cache: CacheConfig::none(),
        precondition: None,
    }
}
