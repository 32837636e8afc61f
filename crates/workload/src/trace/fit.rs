//! Fitting a trace to a smaller drive: refused with the size it needs, or
//! its addresses wrapped or scaled onto the drive, counted ([`Remap`]).

use super::*;

/// How to make a trace fit a smaller drive.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Fit {
    /// Refuse, saying how large a drive the trace needs.
    Refuse,
    /// Offsets past the end modulo the capacity (in whole pages); a
    /// request that fits stays where it is.
    Wrap,
    /// Offsets scaled by capacity / span (keeps the layout, coarser).
    Scale,
}

impl Fit {
    pub const NAMES: &'static str = "wrap, scale";

    /// A remapping by name (`Refuse` is the absence of one).
    pub fn parse(name: &str) -> Option<Fit> {
        match name {
            "wrap" => Some(Fit::Wrap),
            "scale" => Some(Fit::Scale),
            _ => None,
        }
    }
}

impl fmt::Display for Fit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fit::Refuse => "none",
            Fit::Wrap => "wrap",
            Fit::Scale => "scale",
        })
    }
}

/// What [`fit_counted`] did to a trace.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Remap {
    pub how: Fit,
    /// Requests whose offset changed.
    pub moved: u64,
    /// Requests longer than the drive, cut to its size.
    pub cut: u64,
    pub requests: u64,
}

impl fmt::Display for Remap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} requests moved by {}, {} longer than the drive cut to its size",
            self.moved, self.requests, self.how, self.cut
        )
    }
}

/// Makes `records` fit a drive of `capacity` bytes with `page` bytes
/// pages; says whether it remapped them.
pub fn fit(
    records: &mut [TraceRecord],
    capacity: u64,
    page: u64,
    how: Fit,
    file: &str,
) -> Result<bool, TraceError> {
    fit_counted(records, capacity, page, how, file).map(|remap| remap.is_some())
}

/// As [`fit`], counting what it moved and cut.
pub fn fit_counted(
    records: &mut [TraceRecord],
    capacity: u64,
    page: u64,
    how: Fit,
    file: &str,
) -> Result<Option<Remap>, TraceError> {
    let needed = records
        .iter()
        .map(|r| r.offset.saturating_add(r.len))
        .max()
        .unwrap_or(0);
    if needed <= capacity {
        return Ok(None);
    }
    if how == Fit::Refuse {
        return Err(TraceError::TooLarge {
            file: file.to_string(),
            needed,
            capacity,
        });
    }
    let page = page.max(512);
    let mut remap = Remap {
        how,
        moved: 0,
        cut: 0,
        requests: records.len() as u64,
    };
    for r in records.iter_mut() {
        let before = *r;
        remap_one(r, capacity, page, needed, how);
        remap.cut += u64::from(r.len < before.len);
        remap.moved += u64::from(r.offset != before.offset);
    }
    Ok(Some(remap))
}

pub(crate) fn remap_one(r: &mut TraceRecord, capacity: u64, page: u64, needed: u64, how: Fit) {
    r.len = r.len.min(capacity);
    let room = capacity - r.len;
    r.offset = match how {
        // A request that fits stays; one past the end wraps modulo the
        // capacity in whole pages, so an address lands in one place
        // whatever the request's length and keeps its alignment (it was
        // modulo the room left for the request, and rounded to 512 bytes:
        // a 4 KiB and an 8 KiB write to one address landed 4 KiB apart).
        Fit::Wrap
            if r.offset
                .checked_add(r.len)
                .is_some_and(|end| end <= capacity) =>
        {
            r.offset
        }
        Fit::Wrap => r.offset % (capacity / page * page).max(page),
        _ => ((r.offset as u128 * room as u128) / needed as u128) as u64 / 512 * 512,
    };
    if r.offset > room {
        r.offset = room / page * page;
    }
}
