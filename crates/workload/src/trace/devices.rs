//! `--trace-devices`: how a trace's devices (disks, volumes, ASUs, the files
//! an iolog names) map onto the one simulated drive, and where each lies
//! when they are laid side by side.

use super::*;

/// How the trace's devices map onto the one simulated drive.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Devices {
    /// Every device's addresses as they are: devices overlap.
    Merge,
    /// Each device in a range of its own, in device order; fitted onto a
    /// smaller drive, each in a share of it of its own.
    Separate,
}

impl Devices {
    pub const NAMES: &'static str = "merge, separate";

    pub fn parse(name: &str) -> Option<Devices> {
        match name {
            "merge" => Some(Devices::Merge),
            "separate" => Some(Devices::Separate),
            _ => None,
        }
    }
}

/// Where one device of a trace lies in the replay's addresses when the
/// devices are laid side by side ([`Devices::Separate`]); an iolog's
/// devices are the files it names, which `iosteer run` opens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceRange {
    /// The device as the trace names it (a file name, a disk number).
    pub name: String,
    /// Its first byte in the replay's addresses.
    pub base: u64,
    /// The end of its highest request, counted from `base`.
    pub reach: u64,
}

/// Devices are laid out at this boundary with [`Devices::Separate`].
const DEVICE_ALIGN: u64 = 1 << 20;
// A base is given in whole MiB in [`TraceError::DevicePastEnd`].
const _: () = assert!(DEVICE_ALIGN % (1 << 20) == 0);

/// A device's name in a trace, ordered as numbers when it is one.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum DeviceKey {
    Number(u64),
    Name(String),
}

impl fmt::Display for DeviceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceKey::Number(n) => write!(f, "{n}"),
            DeviceKey::Name(name) => f.write_str(name),
        }
    }
}

impl DeviceKey {
    pub(crate) fn of(field: &str) -> DeviceKey {
        let field = field.trim();
        field
            .parse()
            .map_or_else(|_| DeviceKey::Name(field.to_string()), DeviceKey::Number)
    }
}

/// Each device's base when devices are laid side by side (each after the
/// end of the highest address of the one before, aligned), and its range.
pub(crate) fn device_layout(
    raw: &[RawRecord],
    file: &str,
) -> Result<(BTreeMap<DeviceKey, u64>, Vec<DeviceRange>), TraceError> {
    let mut ends = DeviceEnds::new();
    for r in raw {
        note_end(&mut ends, r);
    }
    let bases = bases_after(ends.clone(), file)?;
    let ranges = device_ranges(&ends, &bases);
    Ok((bases, ranges))
}

/// The devices of `ends`, at `bases`, in address order.
pub(crate) fn device_ranges(
    ends: &DeviceEnds,
    bases: &BTreeMap<DeviceKey, u64>,
) -> Vec<DeviceRange> {
    ends.iter()
        .map(|(key, &reach)| DeviceRange {
            name: key.to_string(),
            base: bases.get(key).copied().unwrap_or(0),
            reach,
        })
        .collect()
}

/// The highest address each device reaches.
pub(crate) type DeviceEnds = BTreeMap<DeviceKey, u64>;

pub(crate) fn note_end(ends: &mut DeviceEnds, r: &RawRecord) {
    note_end_as(ends, &r.device, r);
}

/// Notes `r`'s end as `device`'s.
pub(crate) fn note_end_as(ends: &mut DeviceEnds, device: &DeviceKey, r: &RawRecord) {
    let end = r.offset.saturating_add(r.len);
    match ends.get_mut(device) {
        Some(e) => *e = (*e).max(end),
        None => {
            ends.insert(device.clone(), end);
        }
    }
}

/// Each device's base, from the ends of the devices before it; an error
/// naming the first device that would end past 2^64 bytes (`file` names
/// the trace).
pub(crate) fn bases_after(
    ends: DeviceEnds,
    file: &str,
) -> Result<BTreeMap<DeviceKey, u64>, TraceError> {
    // Wide: near the top of u64 the aligned end of one device passes 2^64,
    // and a saturated or wrapped base would lay two devices over each other.
    let mut next = 0u128;
    let mut bases = BTreeMap::new();
    for (key, end) in ends {
        let base = next;
        if base + u128::from(end) > u128::from(u64::MAX) {
            return Err(TraceError::DevicePastEnd {
                file: file.to_string(),
                device: key.to_string(),
                base_mib: (base / (1 << 20)) as u64,
                reach: end,
            });
        }
        let align = u128::from(DEVICE_ALIGN);
        next = base + u128::from(end).div_ceil(align) * align;
        bases.insert(key, base as u64);
    }
    Ok(bases)
}

/// The note on where `devices`, laid side by side, start.
pub(crate) fn layout_note(devices: &[DeviceRange]) -> String {
    let bases = (devices.iter()).map(|d| format!("{} at {}", d.name, exact_size(d.base)));
    format!(
        "--trace-devices separate: {} devices laid side by side, each from the first {} boundary \
         past the end of the one before: {}",
        devices.len(),
        exact_size(DEVICE_ALIGN),
        listed(bases)
    )
}

/// `bytes` exactly, in the largest binary unit that divides it, and about
/// in a larger one past 10,000 of it: "5 MiB", "2688 MiB", "4 KiB", "1536
/// bytes", "0", "3145720 KiB (3.0 GiB)".
pub fn exact_size(bytes: u64) -> String {
    if bytes == 0 {
        return "0".to_string();
    }
    const UNITS: [(&str, u32); 5] = [
        ("PiB", 50),
        ("TiB", 40),
        ("GiB", 30),
        ("MiB", 20),
        ("KiB", 10),
    ];
    let unit = UNITS
        .iter()
        .find(|(_, shift)| bytes.trailing_zeros() >= *shift);
    let (count, name) = match unit {
        Some((name, shift)) => (bytes >> shift, *name),
        None => (bytes, "bytes"),
    };
    match approximate_size(bytes) {
        Some(about) if count >= 10_000 => format!("{count} {name} ({about})"),
        _ => format!("{count} {name}"),
    }
}

/// `items` joined by "; ", the middle left out past eight ("..., 14
/// more, ..."): a note names every device of a short list.
pub(crate) fn listed(items: impl ExactSizeIterator<Item = String>) -> String {
    const SHOWN: usize = 8;
    let count = items.len();
    let mut shown: Vec<String> = Vec::with_capacity(SHOWN.min(count) + 1);
    for (i, item) in items.enumerate() {
        if count <= SHOWN || i < SHOWN - 2 || i + 2 >= count {
            shown.push(item);
        } else if i == SHOWN - 2 {
            shown.push(format!("{} more", count - SHOWN));
        }
    }
    shown.join("; ")
}

#[cfg(test)]
mod tests;
