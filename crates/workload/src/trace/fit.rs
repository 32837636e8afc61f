//! Fitting a trace to a smaller drive: refused with the size it needs, or
//! its addresses wrapped or scaled onto the drive, counted ([`Remap`]).
//!
//! Devices laid apart ([`Devices::Separate`]) stay apart: each gets a share
//! of the drive of its own, in whole pages and in proportion to its reach
//! (at least a page; every device its whole reach when they all fit laid
//! end to end), and its addresses are wrapped or scaled within its share.
//! Folding the whole laid-out span onto the drive instead put devices back
//! on top of each other, which is what laying them apart is to prevent.

use super::*;

/// How to make a trace fit a smaller drive.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Fit {
    /// Refuse, saying how large a drive the trace needs.
    Refuse,
    /// Offsets past the end modulo the capacity (in whole pages); a
    /// request that fits stays where it is. Devices laid apart wrap within
    /// their shares.
    Wrap,
    /// Offsets scaled by about capacity / span, each kept aligned as it
    /// was up to the page, in the order they were (the layout shrunk:
    /// addresses a page apart may share a page). Only a request longer than
    /// half the drive may be pulled back from its end, out of that order.
    /// Devices laid apart are scaled within their shares.
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remap {
    pub how: Fit,
    /// Requests whose offset changed.
    pub moved: u64,
    /// Requests longer than the drive (or their device's share), cut to
    /// its size.
    pub cut: u64,
    pub requests: u64,
    /// With devices laid apart, each one's share of the drive, in address
    /// order (else empty: the trace had the whole drive).
    pub shares: Vec<DeviceShare>,
}

/// The part of the drive a device laid apart is fitted into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceShare {
    /// The device as the trace names it.
    pub name: String,
    /// Its first byte on the drive, and its bytes (whole pages).
    pub start: u64,
    pub bytes: u64,
}

impl fmt::Display for Remap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (moved, requests, how, cut) = (self.moved, self.requests, self.how, self.cut);
        if self.shares.is_empty() {
            return write!(
                f,
                "{moved} of {requests} requests moved by {how}, {cut} longer than the drive cut \
                 to its size"
            );
        }
        let shares = self.shares.iter().map(|s| {
            format!(
                "{} {} from {}",
                s.name,
                exact_size(s.bytes),
                exact_size(s.start)
            )
        });
        write!(
            f,
            "{moved} of {requests} requests moved by {how}, each of the {} devices laid apart \
             within a share of the drive of its own, in whole pages in proportion to its reach \
             ({}), {cut} longer than their device's share cut to its size",
            self.shares.len(),
            listed(shares)
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
    fit_devices(records, &[], (capacity, page), how, file)
}

/// As [`fit_counted`], for a trace whose devices lie at `devices` (as
/// [`Trace::devices`] says, empty when merged): each fitted in a share of
/// the drive (`capacity`, `page` bytes) of its own.
pub fn fit_devices(
    records: &mut [TraceRecord],
    devices: &[DeviceRange],
    drive: (u64, u64),
    how: Fit,
    file: &str,
) -> Result<Option<Remap>, TraceError> {
    let needed = records
        .iter()
        .map(|r| r.offset.saturating_add(r.len))
        .max()
        .unwrap_or(0);
    let longest = records.iter().map(|r| r.len).max().unwrap_or(0);
    let trace = Needs {
        needed,
        longest,
        devices,
    };
    let Some(placement) = Placement::of(how, drive, &trace, file)? else {
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

/// What a trace needs of a drive.
pub(crate) struct Needs<'a> {
    /// The end of its highest request.
    pub(crate) needed: u64,
    /// Its longest request.
    pub(crate) longest: u64,
    /// Where its devices lie when laid apart (else empty).
    pub(crate) devices: &'a [DeviceRange],
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
    /// The longest request: scaling leaves room for it at the end of a
    /// share (up to half the share), so that no request placed in order
    /// need be pulled back from the end.
    longest: u64,
    /// Each device's share, in address order: one, the whole drive, when
    /// devices are merged.
    shares: Vec<Share>,
    names: Vec<String>,
}

/// The part of the drive one device is fitted into.
#[derive(Copy, Clone, Debug)]
struct Share {
    /// The device's first byte and its reach, as laid out before the fit.
    base: u64,
    reach: u64,
    /// Where its share starts on the drive, and its bytes.
    start: u64,
    bytes: u64,
}

impl Placement {
    /// The placement of `trace` on `drive` (capacity, page bytes); `None`
    /// when it fits; an error naming `file` when it does not and `how`
    /// refuses, or when its devices are more than the drive's pages.
    pub(crate) fn of(
        how: Fit,
        drive: (u64, u64),
        trace: &Needs,
        file: &str,
    ) -> Result<Option<Placement>, TraceError> {
        let (capacity, page) = (drive.0, drive.1.max(512));
        let needed = trace.needed;
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
        let (shares, names) = match trace.devices {
            [] => {
                let whole = Share {
                    base: 0,
                    reach: needed,
                    start: 0,
                    bytes: capacity,
                };
                (vec![whole], Vec::new())
            }
            devices => {
                let shares = shares(devices, capacity, page, file)?;
                (shares, devices.iter().map(|d| d.name.clone()).collect())
            }
        };
        Ok(Some(Placement {
            how,
            page,
            longest: trace.longest,
            shares,
            names,
        }))
    }

    /// Nothing counted yet, of `requests` requests.
    pub(crate) fn remap(&self, requests: u64) -> Remap {
        Remap {
            how: self.how,
            moved: 0,
            cut: 0,
            requests,
            shares: (self.names.iter().zip(&self.shares))
                .map(|(name, s)| DeviceShare {
                    name: name.clone(),
                    start: s.start,
                    bytes: s.bytes,
                })
                .collect(),
        }
    }

    /// Moves `r` (and cuts it, if longer than its share) into its device's
    /// share of the drive.
    pub(crate) fn place(&self, r: &mut TraceRecord) {
        // The device whose range holds the offset (the last of equal
        // bases: only a device reaching no byte shares its base).
        let i = self.shares.partition_point(|s| s.base <= r.offset);
        let share = self.shares[i.saturating_sub(1)];
        let mut within = TraceRecord {
            offset: r.offset - share.base.min(r.offset),
            ..*r
        };
        self.place_within(&mut within, share);
        r.len = within.len;
        r.offset = share.start + within.offset;
    }

    /// Moves `r`, an offset from its device's base, into `share`'s bytes.
    fn place_within(&self, r: &mut TraceRecord, share: Share) {
        let (capacity, page) = (share.bytes, self.page);
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
            // A device that fits its share keeps its layout.
            _ if share.reach <= capacity => r.offset,
            // Scaled by (capacity - longest) / (reach - longest), so that
            // a request up to `longest` bytes still ends on the drive; the
            // same for every length, so an address lands in one place (it
            // was scaled by the room left for each request, and rounded to
            // 512 bytes, which put aligned 4 KiB writes across two pages).
            _ => {
                let longest = self.longest.min(capacity / 2);
                let scale = (capacity - longest, share.reach - longest);
                scaled(r.offset, scale, page)
            }
        };
        if r.offset > room {
            r.offset = room / page * page;
        }
    }
}

/// Each device's share of a drive of `capacity` bytes, in `page`-byte
/// pages: a page, and of the pages left over, a part in proportion to the
/// pages it reaches past its first. When the devices fit the drive laid end
/// to end in whole pages, each share holds its device's whole reach.
fn shares(
    devices: &[DeviceRange],
    capacity: u64,
    page: u64,
    file: &str,
) -> Result<Vec<Share>, TraceError> {
    let pages = capacity / page;
    let count = devices.len() as u64;
    if pages < count {
        return Err(TraceError::DevicesPastPages {
            file: file.to_string(),
            devices: count,
            pages,
            page,
        });
    }
    let past_first = |d: &DeviceRange| u128::from(d.reach.div_ceil(page).max(1) - 1);
    let wanted: u128 = devices.iter().map(past_first).sum();
    let spare = u128::from(pages - count);
    // Each share's end in pages, cumulative (so the shares add up to the
    // drive, and a rounding lost in one is not lost to all).
    let spare_before = |cumulative: u128| match wanted {
        0 => 0,
        _ => (spare * cumulative / wanted) as u64,
    };
    let mut cumulative = 0;
    let mut shares = Vec::with_capacity(devices.len());
    for (i, d) in devices.iter().enumerate() {
        let first = i as u64 + spare_before(cumulative);
        cumulative += past_first(d);
        let end = i as u64 + 1 + spare_before(cumulative);
        shares.push(Share {
            base: d.base,
            reach: d.reach,
            start: first * page,
            bytes: (end - first) * page,
        });
    }
    Ok(shares)
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
    // A power of two by mask: u128 division is slow, and a replay scales
    // every request.
    let down = |v: u128, to: u128| match to.is_power_of_two() {
        true => v & !(to - 1),
        false => v / to * to,
    };
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
    let on_grid = |v: u128| match v {
        _ if v == page_lo => to_page_lo,
        _ if v == page_hi => to_page_hi,
        _ => down(scale(v), grid).min(to_page_hi),
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
