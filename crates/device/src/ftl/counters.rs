//! What the FTL counts since its last reset, and the write amplification
//! those counts give.

/// Totals since the last [`Ftl::reset_counters`](super::Ftl::reset_counters).
/// The `*_pages_*` counts but `pages_programmed` are in mapping units, which
/// are pages on a page-mapped drive.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FtlCounters {
    pub host_pages_written: u64,
    pub gc_pages_moved: u64,
    pub blocks_erased: u64,
    pub gc_victims: u64,
    pub pages_trimmed: u64,
    /// NAND pages programmed, host and GC, padded ones included.
    pub pages_programmed: u64,
    /// Unit slots programmed empty by flushes of partly filled pages.
    pub units_padded: u64,
}

impl FtlCounters {
    /// NAND unit slots programmed (GC moves and the padding of partly filled
    /// pages included) over host unit writes (1.0 before any write). Without
    /// the padding, a sector-mapped drive's flushed pages went unseen (a fill
    /// said 1.00 where the NAND wrote 4 bytes for each byte written).
    pub fn write_amplification(&self) -> f64 {
        if self.host_pages_written == 0 {
            return 1.0;
        }
        (self.host_pages_written + self.nand_units_beyond_host()) as f64
            / self.host_pages_written as f64
    }

    /// Unit slots programmed beyond the host's: GC moves and padding.
    pub fn nand_units_beyond_host(&self) -> u64 {
        self.gc_pages_moved + self.units_padded
    }

    /// NAND bytes programmed (whole pages, padding included) over the bytes
    /// of the mapping units the host wrote (1.0 before any write).
    pub fn write_amplification_bytes(&self, page_size: u32, mapping_unit: u32) -> f64 {
        if self.host_pages_written == 0 {
            return 1.0;
        }
        let nand = self.pages_programmed as f64 * f64::from(page_size);
        nand / (self.host_pages_written as f64 * f64::from(mapping_unit))
    }
}
