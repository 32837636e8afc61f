//! The analytical check of the FTL: steady-state write amplification under
//! uniform random single-page overwrites, measured against Desnoyers' closed
//! forms ("Analytic modeling of SSD write performance", SYSTOR 2012).
//!
//! - FIFO victims (Eq. 4): `A = 1 / (1 - x)` with `x = exp(-alpha (1 - x))`,
//!   `x` the valid fraction of the victim, which is the Lambert-W form
//!   `A = alpha / (alpha + W0(-alpha exp(-alpha)))`.
//! - Greedy victims (Eq. 12, approximate): `A_greedy = A_fifo(k alpha) / k`
//!   with `k = 1 + 1 / (2 Np)`, `Np` pages per block.
//!
//! `alpha = T / U`: `T` counts the physical pages that take part in cleaning
//! and `U` the logical pages. The drive of the experiment has one die, one
//! shared write frontier and `blocks` blocks of `pages_per_block` pages; GC
//! runs while fewer than [`RESERVE_BLOCKS`] blocks are free. Those free
//! blocks, and on average half of the open block, hold no data and take no
//! part in cleaning, so `T = (blocks - RESERVE_BLOCKS - 1/2) * Np` and the
//! drive exposes `U = T / alpha` logical pages.
//!
//! With a mapping unit smaller than the page (`mapping_unit` < `page_size`)
//! the same holds counted in units: writes are single-unit overwrites, `T`
//! and `U` count units, `Np` is the units of a block, and the measure is
//! write amplification in bytes (NAND bytes programmed per host byte), which
//! on a page-mapped drive is the page count's ratio.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::config::{DeviceConfig, VictimPolicy};
use crate::ftl::{Ftl, HOST_STREAM};

/// Free blocks GC keeps back (it runs while fewer are free).
pub const RESERVE_BLOCKS: u32 = 2;

/// FIFO write amplification for `alpha > 1` (Desnoyers Eq. 4).
pub fn analytic_fifo(alpha: f64) -> f64 {
    // x = exp(-alpha (1 - x)) has the root 1 and one root in (0, 1); f
    // changes sign between 0 and just below 1, so bisect there.
    let f = |x: f64| x - (-alpha * (1.0 - x)).exp();
    let (mut lo, mut hi) = (0.0f64, 1.0 - 1e-12);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    1.0 / (1.0 - 0.5 * (lo + hi))
}

/// Greedy write amplification, approximately (Desnoyers Eq. 12).
pub fn analytic_greedy(alpha: f64, pages_per_block: u32) -> f64 {
    let k = 1.0 + 1.0 / (2.0 * f64::from(pages_per_block));
    analytic_fifo(k * alpha) / k
}

/// The closed form for a victim policy, where one exists.
pub fn analytic(victim: VictimPolicy, alpha: f64, pages_per_block: u32) -> Option<f64> {
    match victim {
        VictimPolicy::Fifo => Some(analytic_fifo(alpha)),
        VictimPolicy::Greedy => Some(analytic_greedy(alpha, pages_per_block)),
        VictimPolicy::CostBenefit => None,
    }
}

/// One steady-state experiment.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct WafExperiment {
    pub victim: VictimPolicy,
    pub alpha: f64,
    pub blocks: u32,
    pub pages_per_block: u32,
    /// Bytes per page and per mapping unit (equal: page-mapped).
    pub page_size: u32,
    pub mapping_unit: u32,
    /// Random overwrites before measuring, in multiples of the logical pages.
    pub warmup_drive_writes: f64,
    /// Random overwrites measured, in multiples of the logical pages.
    pub measured_drive_writes: f64,
    pub seed: u64,
}

impl WafExperiment {
    /// 4096 blocks of 64 page-mapped 4 KiB pages, 6 drive writes of warm-up
    /// and 4 measured.
    pub fn new(victim: VictimPolicy, alpha: f64) -> WafExperiment {
        WafExperiment {
            victim,
            alpha,
            blocks: 4096,
            pages_per_block: 64,
            page_size: 4096,
            mapping_unit: 4096,
            warmup_drive_writes: 6.0,
            measured_drive_writes: 4.0,
            seed: 1,
        }
    }

    /// Mapping units per page (1 when the unit does not divide the page,
    /// which the drive's validation then refuses).
    pub fn units_per_page(&self) -> u32 {
        (self.page_size / self.mapping_unit.max(1)).max(1)
    }

    /// Units (pages, when page-mapped) that take part in cleaning.
    pub fn cleaning_pages(&self) -> f64 {
        let units_per_block = self.pages_per_block * self.units_per_page();
        (f64::from(self.blocks) - f64::from(RESERVE_BLOCKS) - 0.5) * f64::from(units_per_block)
    }

    /// Logical units (pages, when page-mapped): a whole number of pages.
    pub fn logical_pages(&self) -> u64 {
        let upp = u64::from(self.units_per_page());
        (self.cleaning_pages() / self.alpha).floor() as u64 / upp * upp
    }

    /// Desnoyers' closed form for this experiment, counted in units.
    pub fn analytic(&self) -> Option<f64> {
        analytic(
            self.victim,
            self.alpha,
            self.pages_per_block * self.units_per_page(),
        )
    }

    /// The single-die drive of the experiment.
    pub fn drive(&self) -> DeviceConfig {
        let mut config = DeviceConfig::preset("diskSim-slc").expect("preset exists");
        let g = &mut config.geometry;
        g.channels = 1;
        g.dies_per_channel = 1;
        g.planes_per_die = 1;
        g.blocks_per_plane = self.blocks;
        g.pages_per_block = self.pages_per_block;
        g.page_size = self.page_size;
        config.ftl.mapping_unit = self.mapping_unit;
        config.gc.victim = self.victim;
        config.gc.low_watermark = RESERVE_BLOCKS;
        config.gc.high_watermark = RESERVE_BLOCKS;
        config.gc.separate_frontier = false;
        let physical = config.geometry.physical_pages() as f64;
        // Hide exactly the pages that make U = T / alpha.
        let logical_pages = self.logical_pages() / u64::from(self.units_per_page());
        config.over_provisioning = 1.0 - (logical_pages as f64 + 0.5) / physical;
        config
    }

    /// Measured write amplification in bytes, or an error when alpha leaves
    /// no room.
    pub fn run(&self) -> Result<f64, String> {
        if !(self.alpha.is_finite() && self.alpha > 1.0 && self.alpha <= 10.0) {
            return Err(format!(
                "alpha must be above 1 and at most 10, got {}",
                self.alpha
            ));
        }
        let config = self.drive();
        config.validate().map_err(|e| e.to_string())?;
        let mut ftl = Ftl::new(&config);
        let pages = u64::from(ftl.logical_units());
        for lpn in 0..pages {
            ftl.write(lpn, 0, HOST_STREAM).map_err(|e| e.to_string())?;
        }
        let mut rng = SmallRng::seed_from_u64(self.seed);
        let mut overwrite = |ftl: &mut Ftl, drive_writes: f64| -> Result<(), String> {
            for _ in 0..(drive_writes * pages as f64) as u64 {
                ftl.write(rng.random_range(0..pages), 0, HOST_STREAM)
                    .map_err(|e| e.to_string())?;
            }
            Ok(())
        };
        overwrite(&mut ftl, self.warmup_drive_writes)?;
        ftl.reset_counters();
        overwrite(&mut ftl, self.measured_drive_writes)?;
        Ok(ftl
            .counters
            .write_amplification_bytes(self.page_size, self.mapping_unit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closed_forms_match_the_reference_table() {
        // reference.md section 6: alpha, FIFO, greedy at 64 pages per block.
        for (alpha, fifo, greedy64) in [
            (1.05, 10.67, 9.19),
            (1.10, 5.68, 5.24),
            (1.28, 2.48, 2.40),
            (1.50, 1.72, 1.68),
        ] {
            assert!(
                (analytic_fifo(alpha) - fifo).abs() < 0.01,
                "{alpha}: {}",
                analytic_fifo(alpha)
            );
            assert!(
                (analytic_greedy(alpha, 64) - greedy64).abs() < 0.01,
                "{alpha}: {}",
                analytic_greedy(alpha, 64)
            );
        }
    }

    #[test]
    fn the_drive_is_sized_from_alpha() {
        let e = WafExperiment::new(VictimPolicy::Fifo, 1.28);
        let drive = e.drive();
        assert_eq!(drive.logical_units(), e.logical_pages());
        let alpha = e.cleaning_pages() / drive.logical_pages() as f64;
        assert!((alpha - 1.28).abs() < 1e-4);
    }

    #[test]
    fn a_small_fifo_drive_lands_near_the_curve() {
        // A quick version of `iosteer device waf` (the README's full runs use
        // 4096 blocks): 1024 blocks of 32 pages.
        let e = WafExperiment {
            blocks: 1024,
            pages_per_block: 32,
            warmup_drive_writes: 4.0,
            measured_drive_writes: 2.0,
            ..WafExperiment::new(VictimPolicy::Fifo, 1.28)
        };
        let measured = e.run().unwrap();
        let expected = analytic_fifo(1.28);
        assert!(
            (measured / expected - 1.0).abs() < 0.05,
            "{measured} vs {expected}"
        );
        let greedy = WafExperiment {
            victim: VictimPolicy::Greedy,
            ..e
        }
        .run()
        .unwrap();
        assert!(greedy < measured, "greedy {greedy} vs fifo {measured}");
    }

    #[test]
    fn four_kib_units_on_sixteen_kib_pages_land_near_the_curve() {
        // 4 units a page: the closed form counted in units, measured in bytes.
        for victim in [VictimPolicy::Fifo, VictimPolicy::Greedy] {
            let e = WafExperiment {
                blocks: 512,
                pages_per_block: 16,
                page_size: 16384,
                mapping_unit: 4096,
                warmup_drive_writes: 4.0,
                measured_drive_writes: 2.0,
                ..WafExperiment::new(victim, 1.28)
            };
            assert_eq!(e.drive().logical_units(), e.logical_pages());
            let measured = e.run().unwrap();
            let expected = e.analytic().unwrap();
            assert!(
                (measured / expected - 1.0).abs() < 0.05,
                "{victim}: {measured} vs {expected}"
            );
        }
    }

    #[test]
    fn alpha_at_or_below_one_is_refused() {
        assert!(WafExperiment::new(VictimPolicy::Fifo, 1.0).run().is_err());
        assert!(WafExperiment::new(VictimPolicy::Fifo, f64::NAN)
            .run()
            .is_err());
    }
}
