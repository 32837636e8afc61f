//! Write bursts against a drive: how fast a run of sequential writes
//! completes, overall and past a point (the write cache's size), for the
//! cache's tests and the README's table (`cargo run --release -p
//! iosteer-device --example cache_burst`).

use iosteer_sched::{Command, Nanos, Op, Request};

use crate::config::{ConfigError, DeviceConfig};
use crate::device::{Device, Finished};

/// How fast a burst completed.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct BurstRates {
    pub burst_bytes: u64,
    /// MB/s (10^6 bytes) from the first submission to the last completion.
    pub overall_mb_per_s: f64,
    /// MB/s of the writes that completed after the first `split_bytes`.
    pub after_split_mb_per_s: f64,
}

/// Writes `burst_bytes` sequentially from offset 0 on a fresh drive of
/// `config`, `request_bytes` at a time with `queue_depth` in flight (at most
/// the drive's slots), and measures the rates (the rate after `split_bytes`
/// is 0 when the burst is no longer than that).
pub fn write_burst(
    config: &DeviceConfig,
    burst_bytes: u64,
    request_bytes: u64,
    queue_depth: u32,
    split_bytes: u64,
) -> Result<BurstRates, ConfigError> {
    let mut drive = Device::new(config.clone())?;
    let requests = burst_bytes.min(drive.capacity()) / request_bytes.max(1);
    let depth = queue_depth.clamp(1, config.interface.queue_depth);
    let (mut now, mut next, mut finished) = (Nanos::ZERO, 0u64, Vec::<Finished>::new());
    let mut completions = Vec::with_capacity(requests as usize);
    while (completions.len() as u64) < requests {
        while next < requests && drive.view().in_flight < depth {
            let request = Request::new(next, Op::Write, next * request_bytes, request_bytes, now);
            drive
                .submit(Command::single(request, now), now)
                .expect("the drive has a free slot");
            next += 1;
        }
        let Some(t) = drive.next_event() else { break };
        now = now.max(t);
        finished.clear();
        drive.advance(now, &mut finished);
        completions.extend(finished.iter().map(|f| f.at));
    }
    let rate = |bytes: u64, from: Nanos, to: Nanos| {
        let seconds = (to.0.saturating_sub(from.0)) as f64 / 1e9;
        if seconds > 0.0 {
            bytes as f64 / seconds / 1e6
        } else {
            0.0
        }
    };
    let last = completions.last().copied().unwrap_or(Nanos::ZERO);
    let split = (split_bytes / request_bytes.max(1)) as usize;
    let after_split = match completions.get(split) {
        Some(&from) if split > 0 => rate((requests - split as u64) * request_bytes, from, last),
        _ => 0.0,
    };
    Ok(BurstRates {
        burst_bytes: requests * request_bytes,
        overall_mb_per_s: rate(requests * request_bytes, Nanos::ZERO, last),
        after_split_mb_per_s: after_split,
    })
}

/// The same burst on `cached` and on that drive without its write cache,
/// each split at the cache's size: what the cache buys.
pub fn with_and_without_cache(
    cached: &DeviceConfig,
    burst_bytes: u64,
    request_bytes: u64,
    queue_depth: u32,
) -> Result<(BurstRates, BurstRates), ConfigError> {
    let mut plain = cached.clone();
    plain.cache.size_mib = 0;
    let split = cached.cache.bytes();
    Ok((
        write_burst(cached, burst_bytes, request_bytes, queue_depth, split)?,
        write_burst(&plain, burst_bytes, request_bytes, queue_depth, split)?,
    ))
}

/// MB/s the dies sustain programming pages (each die: a page crosses its
/// channel, then programs), assuming one die per channel or a channel fast
/// enough: the rate a long write burst falls to.
pub fn nand_sustained_mb_per_s(config: &DeviceConfig) -> f64 {
    let t = &config.timing;
    let page = f64::from(config.geometry.page_size);
    let per_page_us = t.page_program_us + page / t.channel_mb_per_s;
    f64::from(config.geometry.dies()) * page / per_page_us
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CachePolicy;

    /// consumer-sata (8 dies, a 550 MB/s link) with a power-protected
    /// write-back cache of 1 GiB.
    fn cached_sata() -> DeviceConfig {
        let mut c = DeviceConfig::preset("consumer-sata").unwrap();
        c.cache.size_mib = 1024;
        c.cache.policy = CachePolicy::WriteBack;
        c.cache.power_protected = true;
        c
    }

    #[test]
    fn a_burst_within_the_cache_runs_at_link_speed_a_longer_one_at_nand_speed() {
        let c = cached_sata();
        let cache = c.cache.bytes();
        let short = write_burst(&c, cache / 2, 128 << 10, 32, 0).unwrap();
        let link = c.timing.host_link_mb_per_s;
        assert!(
            (short.overall_mb_per_s / link - 1.0).abs() < 0.1,
            "{short:?} vs link {link} MB/s"
        );
        let long = write_burst(&c, 4 * cache, 128 << 10, 32, 2 * cache).unwrap();
        let nand = nand_sustained_mb_per_s(&c);
        assert!(
            (long.after_split_mb_per_s / nand - 1.0).abs() < 0.1,
            "{long:?} vs NAND {nand} MB/s"
        );
        // Without the cache the short burst is NAND-bound too.
        let mut uncached = c.clone();
        uncached.cache.size_mib = 0;
        let plain = write_burst(&uncached, cache / 2, 128 << 10, 32, 0).unwrap();
        assert!(plain.overall_mb_per_s < 1.1 * nand, "{plain:?}");
    }

    #[test]
    fn with_and_without_cache_runs_the_burst_on_the_drive_and_on_it_uncached() {
        let c = cached_sata();
        let cache = c.cache.bytes();
        let (with, without) = with_and_without_cache(&c, cache / 4, 128 << 10, 32).unwrap();
        assert_eq!(
            with,
            write_burst(&c, cache / 4, 128 << 10, 32, cache).unwrap()
        );
        assert!(
            with.overall_mb_per_s > 1.5 * without.overall_mb_per_s,
            "a burst within the cache is faster with it: {with:?} vs {without:?}"
        );
        assert_eq!(c.cache.size_mib, 1024, "the given drive is left as it was");
    }
}
