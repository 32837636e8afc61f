//! Ages a drive and measures the state it is left in, for
//! `scripts/fast-aging-check.sh`: the wall time of aging, the free-block
//! pool, and the write amplification of the next `--next-gib` GiB of uniform
//! random single-unit overwrites (untimed, in the map, round-robin over the
//! dies, the same draws for every start state).
//!
//! `cargo run --release -p iosteer-device --example aging_check -- PRESET
//! STATE [BLOCKS_PER_PLANE] [NEXT_GIB]` prints one JSON line.
//! With `AGING_CHECK_HISTOGRAM=1` it also prints (on stderr) how many blocks
//! hold each tenth of valid units, die 0's valid units and the erases.

use std::time::Instant;

use iosteer_device::{Device, DeviceConfig, Precondition, StartState};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: aging_check PRESET STATE [BLOCKS_PER_PLANE] [NEXT_GIB]";
    let (Some(preset), Some(state)) = (args.first(), args.get(1)) else {
        return Err(usage.into());
    };
    let mut config = DeviceConfig::preset(preset).map_err(|e| e.to_string())?;
    if let Some(blocks) = args.get(2).filter(|b| *b != "-") {
        config.geometry.blocks_per_plane = blocks.parse().map_err(|_| usage.to_string())?;
    }
    let next_gib: f64 = match args.get(3) {
        Some(g) => g.parse().map_err(|_| usage.to_string())?,
        None => 10.0,
    };
    let state: StartState = state.parse().map_err(|e| format!("{e}"))?;
    let unit = u64::from(config.ftl.mapping_unit.min(config.geometry.page_size));
    let nand_gib = config.geometry.physical_bytes() as f64 / f64::from(1u32 << 30);
    let mut device = Device::new(config).map_err(|e| e.to_string())?;
    let started = Instant::now();
    device
        .precondition(Precondition { state, seed: 1 })
        .map_err(|e| e.to_string())?;
    let aging_s = started.elapsed().as_secs_f64();
    let free_blocks = device.ftl().total_free_blocks();
    if std::env::var_os("AGING_CHECK_HISTOGRAM").is_some() {
        let ftl = device.ftl();
        let upb = u64::from(ftl.pages_per_block() * ftl.units_per_page());
        let blocks = ftl.erase_counts().count();
        let mut valid = vec![0u64; blocks];
        for lpn in 0..ftl.logical_units() {
            if let Some(p) = ftl.lookup(lpn) {
                valid[(u64::from(p) / upb) as usize] += 1;
            }
        }
        let mut hist = [0u32; 11];
        valid
            .iter()
            .for_each(|v| hist[(v * 10 / upb) as usize] += 1);
        let per_die_die0: u64 = valid[..blocks / ftl.dies() as usize].iter().sum();
        let erases: u64 = ftl.erase_counts().map(u64::from).sum();
        eprintln!("valid-fraction deciles {hist:?} die0 valid {per_die_die0} erases {erases}");
    }
    let next_waf = if next_gib > 0.0 {
        let mut ftl = device.ftl().clone();
        let count = (next_gib * f64::from(1u32 << 30) / unit as f64) as u64;
        let logical = u64::from(ftl.logical_units());
        let dies = u64::from(ftl.dies());
        let mut rng = SmallRng::seed_from_u64(7);
        for i in 0..count {
            let lpn = rng.random_range(0..logical);
            ftl.write(lpn, (i % dies) as u32, 0)
                .map_err(|e| e.to_string())?;
        }
        format!("{:.4}", ftl.counters.write_amplification())
    } else {
        "null".into()
    };
    println!(
        "{{\"device\":\"{preset}\",\"nand_gib\":{nand_gib:.1},\"state\":\"{state}\",\"aging_s\":{aging_s:.3},\"free_blocks\":{free_blocks},\"next_waf\":{next_waf}}}"
    );
    Ok(())
}
