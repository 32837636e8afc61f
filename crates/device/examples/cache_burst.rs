//! The write cache's burst table for the README: consumer-sata with a
//! power-protected 1 GiB write-back cache, sequential 128 KiB writes at queue
//! depth 32, bursts from a quarter of the cache to four times it; each row
//! the burst's overall rate, its rate past the cache's size, and the same
//! burst without the cache.
//!
//!     cargo run --release -p iosteer-device --example cache_burst

use iosteer_device::burst::{nand_sustained_mb_per_s, with_and_without_cache};
use iosteer_device::config::CachePolicy;
use iosteer_device::DeviceConfig;

/// 128 KiB writes: a typical large sequential I/O.
const REQUEST_BYTES: u64 = 128 << 10;
/// Queue depth 32: SATA NCQ's full depth.
const QUEUE_DEPTH: u32 = 32;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut cached = DeviceConfig::preset("consumer-sata")?;
    cached.cache.size_mib = 1024;
    cached.cache.policy = CachePolicy::WriteBack;
    cached.cache.power_protected = true;
    let cache = cached.cache.bytes();
    println!(
        "consumer-sata, 1 GiB power-protected write-back cache; host link {} MB/s, NAND sustained {:.0} MB/s",
        cached.timing.host_link_mb_per_s,
        nand_sustained_mb_per_s(&cached)
    );
    println!("| burst (MiB) | cached MB/s | past the cache MB/s | no cache MB/s |");
    println!("|---|---|---|---|");
    for quarters in [1u64, 2, 3, 4, 6, 8, 12, 16] {
        let burst = cache * quarters / 4;
        let (with, without) = with_and_without_cache(&cached, burst, REQUEST_BYTES, QUEUE_DEPTH)?;
        let past = if with.after_split_mb_per_s > 0.0 {
            format!("{:.0}", with.after_split_mb_per_s)
        } else {
            "-".to_string()
        };
        println!(
            "| {} | {:.0} | {} | {:.0} |",
            with.burst_bytes >> 20,
            with.overall_mb_per_s,
            past,
            without.overall_mb_per_s
        );
    }
    Ok(())
}
