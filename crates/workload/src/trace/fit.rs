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
    /// Offsets scaled by about capacity / span, each kept aligned as it
    /// was up to the page, in the order they were (the layout shrunk:
    /// addresses a page apart may share a page).
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
    let longest = records.iter().map(|r| r.len).max().unwrap_or(0);
    let Some(placement) = Placement::of(how, (capacity, page), needed, longest, file)? else {
        return Ok(None);
    };
    let mut remap = placement.remap(records.len() as u64);
    for r in records.iter_mut() {
        let before = *r;
        placement.place(r);
        remap.count(&before, r);
    }
    Ok(Some(remap))
}

impl Remap {
    /// Counts `after`, the request `before` became.
    pub(crate) fn count(&mut self, before: &TraceRecord, after: &TraceRecord) {
        self.cut += u64::from(after.len < before.len);
        self.moved += u64::from(after.offset != before.offset);
    }
}

/// Where a remap puts each request, worked out once from what the trace
/// needs; the in-memory fit and the streamed replay both place requests
/// with it, so they agree.
#[derive(Clone, Debug)]
pub(crate) struct Placement {
    how: Fit,
    /// Bytes a page (at least 512): wrapping and scaling keep whole pages.
    page: u64,
    /// The drive's bytes, and the end of the trace's highest request.
    capacity: u64,
    needed: u64,
    /// The longest request: scaling leaves room for it at the drive's end
    /// (up to half the drive), so that no request placed in order need be
    /// pulled back from the end.
    longest: u64,
}

impl Placement {
    /// The placement of a trace reaching `needed` bytes, whose longest
    /// request is `longest` bytes, on `drive` (capacity, page bytes); `None`
    /// when it fits; an error naming `file` when it does not and `how`
    /// refuses.
    pub(crate) fn of(
        how: Fit,
        drive: (u64, u64),
        needed: u64,
        longest: u64,
        file: &str,
    ) -> Result<Option<Placement>, TraceError> {
        let (capacity, page) = drive;
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
        Ok(Some(Placement {
            how,
            page: page.max(512),
            capacity,
            needed,
            longest,
        }))
    }

    /// Nothing counted yet, of `requests` requests.
    pub(crate) fn remap(&self, requests: u64) -> Remap {
        Remap {
            how: self.how,
            moved: 0,
            cut: 0,
            requests,
        }
    }

    /// Moves `r` (and cuts it, if longer than the drive) onto the drive.
    pub(crate) fn place(&self, r: &mut TraceRecord) {
        let (capacity, page) = (self.capacity, self.page);
        r.len = r.len.min(capacity);
        let room = capacity - r.len;
        r.offset = match self.how {
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
            // Scaled by (capacity - longest) / (needed - longest), so that
            // a request up to `longest` bytes still ends on the drive; the
            // same for every length, so an address lands in one place (it
            // was scaled by the room left for each request, and rounded to
            // 512 bytes, which put aligned 4 KiB writes across two pages).
            _ => {
                let longest = self.longest.min(capacity / 2);
                let scale = (capacity - longest, self.needed - longest);
                scaled(r.offset, scale, page)
            }
        };
        if r.offset > room {
            r.offset = room / page * page;
        }
    }
}

/// `x` times `num / den` (at most 1: `num <= den`), rounded down so that
/// an address keeps its alignment up to the page (a page-aligned one stays
/// page-aligned, one aligned to 4 KiB within a page stays aligned to 4
/// KiB), and so that no two addresses change order.
///
/// Rounding each address down to its own alignment would reorder them (at
/// 0.9, 3584 goes to 3072 and 4096 to 0), so an address is placed between
/// the places of the two coarser-aligned addresses around it: the pages
/// first, then halving within a page down to the address's own alignment.
/// Within a page of a size that is not a power of two (12 KiB), the
/// alignment kept is at most the largest power of two dividing it.
fn scaled(x: u64, (num, den): (u64, u64), page: u64) -> u64 {
    let scale = |v: u128| v * u128::from(num) / u128::from(den);
    let down = |v: u128, to: u128| v / to * to;
    let (x, page) = (u128::from(x), u128::from(page));
    let page_lo = down(x, page);
    let to_page_lo = down(scale(page_lo), page);
    if x == page_lo {
        return to_page_lo as u64;
    }
    let page_hi = page_lo + page;
    let to_page_hi = down(scale(page_hi), page);
    // Within the page: its grid of the largest power of two dividing it,
    // then halves of that.
    let grid = 1u128 << page.trailing_zeros();
    let on_grid = |v: u128| match v == page_lo || v == page_hi {
        true => down(scale(v), page),
        false => down(scale(v), grid).min(to_page_hi),
    };
    // `x` lies in [lo, lo + 2 * step], whose ends go to `to_lo`, `to_hi`.
    let mut lo = down(x, grid);
    let (mut to_lo, mut to_hi) = (on_grid(lo), on_grid(lo + grid));
    let mut step = grid / 2;
    while x != lo && step > 0 {
        let mid = lo + step;
        // Never below `to_lo`: that is a multiple of `step` at most
        // `scale(lo)`, so rounding `scale(mid)` down to `step` cannot pass it.
        let to_mid = down(scale(mid), step).min(to_hi);
        match x < mid {
            true => to_hi = to_mid,
            false => (lo, to_lo) = (mid, to_mid),
        }
        step /= 2;
    }
    to_lo as u64
}

#[cfg(test)]
mod tests;
