//! Block I/O traces.
//!
//! Formats:
//! - `ascii`: five columns separated by spaces, `arrival_time device lba size
//!   type`, with `lba` and `size` in 512-byte sectors and `type` 1 for a read,
//!   0 for a write (DiskSim, SSDsim, MQSim). The time unit is chosen by the
//!   caller (nanoseconds in the traces shipped here; DiskSim uses ms).
//! - `spc`: `ASU,LBA,Size(bytes),Opcode(r|w),Timestamp(s)` (UMass Financial,
//!   WebSearch); the LBA is in 512-byte sectors.
//! - `msr`: `Timestamp,Hostname,DiskNumber,Type(Read|Write),Offset(bytes),
//!   Size(bytes),ResponseTime` (MSR Cambridge), timestamps in 100 ns ticks.
//!
//! Times are shifted so the first request arrives at zero, then divided by the
//! replay speed. The device column (ASU, disk number) is ignored by default,
//! as SSDsim and DiskSim's single-disk setups do: every device's addresses
//! land on the one drive and overlap. [`Devices::Separate`] lays the devices
//! side by side instead (each after the one numbered below it, at a 1 MiB
//! boundary), so requests to different devices never touch the same data. Traces address more space than a small simulated drive
//! holds: [`fit`] checks, and on request wraps or scales addresses.

use std::collections::BTreeMap;
use std::fmt;

use iosteer_sched::{Nanos, Op};
use thiserror::Error;

use crate::workload::TraceRecord;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    Ascii,
    Spc,
    Msr,
}

impl TraceFormat {
    pub const NAMES: &'static str = "ascii, spc, msr";

    pub fn parse(name: &str) -> Option<TraceFormat> {
        match name {
            "ascii" => Some(TraceFormat::Ascii),
            "spc" => Some(TraceFormat::Spc),
            "msr" => Some(TraceFormat::Msr),
            _ => None,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    Ns,
    Us,
    Ms,
    S,
}

impl TimeUnit {
    pub const NAMES: &'static str = "ns, us, ms, s";

    pub fn parse(name: &str) -> Option<TimeUnit> {
        match name {
            "ns" => Some(TimeUnit::Ns),
            "us" => Some(TimeUnit::Us),
            "ms" => Some(TimeUnit::Ms),
            "s" => Some(TimeUnit::S),
            _ => None,
        }
    }

    fn nanos(self) -> u64 {
        match self {
            TimeUnit::Ns => 1,
            TimeUnit::Us => 1_000,
            TimeUnit::Ms => 1_000_000,
            TimeUnit::S => 1_000_000_000,
        }
    }
}

/// How the trace's devices map onto the one simulated drive.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Devices {
    /// Every device's addresses as they are: devices overlap.
    Merge,
    /// Each device in a range of its own, in device order.
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

/// Devices are laid out at this boundary with [`Devices::Separate`].
const DEVICE_ALIGN: u64 = 1 << 20;

/// A device's name in a trace, ordered as numbers when it is one.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum DeviceKey {
    Number(u64),
    Name(String),
}

impl DeviceKey {
    fn of(field: &str) -> DeviceKey {
        let field = field.trim();
        field
            .parse()
            .map_or_else(|_| DeviceKey::Name(field.to_string()), DeviceKey::Number)
    }
}

/// Start of each device's range when devices are laid side by side: each
/// after the end of the highest address of the one before, aligned.
fn device_bases(raw: &[RawRecord]) -> BTreeMap<DeviceKey, u64> {
    let mut ends: BTreeMap<DeviceKey, u64> = BTreeMap::new();
    for r in raw {
        let end = ends.entry(r.device.clone()).or_default();
        *end = (*end).max(r.offset.saturating_add(r.len));
    }
    let mut next = 0u64;
    ends.into_iter()
        .map(|(key, end)| {
            let base = next;
            next = next.saturating_add(end.div_ceil(DEVICE_ALIGN) * DEVICE_ALIGN);
            (key, base)
        })
        .collect()
}

struct RawRecord {
    at: u128,
    op: Op,
    device: DeviceKey,
    offset: u64,
    len: u64,
}

/// How to make a trace fit a smaller drive.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Fit {
    /// Refuse, saying how large a drive the trace needs.
    Refuse,
    /// Offsets modulo the capacity.
    Wrap,
    /// Offsets scaled by capacity / span (keeps the layout, coarser).
    Scale,
}

impl Fit {
    pub const NAMES: &'static str = "wrap, scale";
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

#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum TraceError {
    #[error("{file}:{line}: field {field} `{value}`: expected {expected}")]
    Field {
        file: String,
        line: usize,
        field: String,
        value: String,
        expected: String,
    },
    #[error("{file}:{line}: expected {expected} fields, found {found}")]
    Fields {
        file: String,
        line: usize,
        expected: usize,
        found: usize,
    },
    #[error("{file}: holds no request")]
    Empty { file: String },
    #[error(
        "{file} addresses {needed} bytes ({needed_gib:.1} GiB) but the drive holds {capacity} bytes \
         ({capacity_gib:.1} GiB); use a drive that large, or remap the addresses"
    )]
    TooLarge {
        file: String,
        needed: u64,
        needed_gib: f64,
        capacity: u64,
        capacity_gib: f64,
    },
}

struct LineParser<'a> {
    file: &'a str,
    line: usize,
}

impl LineParser<'_> {
    /// A time in `unit_ns` nanoseconds per unit: exact for integers (MSR's
    /// 100 ns ticks since 1601 overflow an f64's precision), else decimal.
    fn time(&self, field: &str, value: &str, unit_ns: u64) -> Result<u128, TraceError> {
        let value = value.trim();
        if let Ok(n) = value.parse::<u64>() {
            return Ok(u128::from(n) * u128::from(unit_ns));
        }
        let x: f64 = self.number(field, value, "a time")?;
        if !(x.is_finite() && x >= 0.0) {
            return Err(self.bad(field, value, "a time of zero or more"));
        }
        Ok((x * unit_ns as f64).round() as u128)
    }

    fn number<T: std::str::FromStr>(
        &self,
        field: &str,
        value: &str,
        expected: &str,
    ) -> Result<T, TraceError> {
        value.trim().parse().map_err(|_| TraceError::Field {
            file: self.file.to_string(),
            line: self.line,
            field: field.to_string(),
            value: value.to_string(),
            expected: expected.to_string(),
        })
    }

    fn bad(&self, field: &str, value: &str, expected: &str) -> TraceError {
        TraceError::Field {
            file: self.file.to_string(),
            line: self.line,
            field: field.to_string(),
            value: value.to_string(),
            expected: expected.to_string(),
        }
    }

    fn fields<'t>(
        &self,
        text: &'t str,
        sep: Option<char>,
        at_least: usize,
    ) -> Result<Vec<&'t str>, TraceError> {
        let fields: Vec<&str> = match sep {
            Some(c) => text.split(c).collect(),
            None => text.split_whitespace().collect(),
        };
        if fields.len() < at_least {
            return Err(TraceError::Fields {
                file: self.file.to_string(),
                line: self.line,
                expected: at_least,
                found: fields.len(),
            });
        }
        Ok(fields)
    }
}

/// Parses a trace; `file` names it in errors; `speed` > 1 replays faster;
/// `devices` says where each device's addresses go.
pub fn parse(
    text: &str,
    file: &str,
    format: TraceFormat,
    unit: TimeUnit,
    speed: f64,
    devices: Devices,
) -> Result<Vec<TraceRecord>, TraceError> {
    let mut raw: Vec<RawRecord> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let p = LineParser {
            file,
            line: index + 1,
        };
        raw.push(match format {
            TraceFormat::Ascii => {
                let f = p.fields(trimmed, None, 5)?;
                let time = p.time("1 (arrival time)", f[0], unit.nanos())?;
                let lba: u64 = p.number("3 (lba)", f[2], "a sector number")?;
                let sectors: u64 = p.number("4 (size)", f[3], "a sector count")?;
                let op = match f[4] {
                    "1" => Op::Read,
                    "0" => Op::Write,
                    other => return Err(p.bad("5 (type)", other, "1 (read) or 0 (write)")),
                };
                RawRecord {
                    at: time,
                    op,
                    device: DeviceKey::of(f[1]),
                    offset: lba.saturating_mul(512),
                    len: sectors.saturating_mul(512),
                }
            }
            TraceFormat::Spc => {
                let f = p.fields(trimmed, Some(','), 5)?;
                let lba: u64 = p.number("2 (LBA)", f[1], "a sector number")?;
                let bytes: u64 = p.number("3 (size)", f[2], "a byte count")?;
                let op = match f[3].trim() {
                    "r" | "R" => Op::Read,
                    "w" | "W" => Op::Write,
                    other => return Err(p.bad("4 (opcode)", other, "r or w")),
                };
                let at = p.time("5 (timestamp)", f[4], 1_000_000_000)?;
                RawRecord {
                    at,
                    op,
                    device: DeviceKey::of(f[0]),
                    offset: lba.saturating_mul(512),
                    len: bytes,
                }
            }
            TraceFormat::Msr => {
                let f = p.fields(trimmed, Some(','), 6)?;
                let at = p.time("1 (timestamp)", f[0], 100)?;
                let op = match f[3].trim() {
                    "Read" | "read" => Op::Read,
                    "Write" | "write" => Op::Write,
                    other => return Err(p.bad("4 (type)", other, "Read or Write")),
                };
                let offset: u64 = p.number("5 (offset)", f[4], "a byte offset")?;
                let bytes: u64 = p.number("6 (size)", f[5], "a byte count")?;
                let device = format!("{}/{}", f[1].trim(), f[2].trim());
                RawRecord {
                    at,
                    op,
                    device: DeviceKey::Name(device),
                    offset,
                    len: bytes,
                }
            }
        });
    }
    let Some(first) = raw.iter().map(|r| r.at).min() else {
        return Err(TraceError::Empty {
            file: file.to_string(),
        });
    };
    let speed = if speed.is_finite() && speed > 0.0 {
        speed
    } else {
        1.0
    };
    let bases = match devices {
        Devices::Merge => BTreeMap::new(),
        Devices::Separate => device_bases(&raw),
    };
    let mut records: Vec<TraceRecord> = raw
        .into_iter()
        .map(|r| TraceRecord {
            at: Nanos(
                (((r.at - first) as f64) / speed)
                    .round()
                    .min(u64::MAX as f64) as u64,
            ),
            op: r.op,
            offset: r
                .offset
                .saturating_add(bases.get(&r.device).copied().unwrap_or(0)),
            len: r.len,
        })
        .collect();
    records.sort_by_key(|r| r.at);
    Ok(records)
}

/// Makes `records` fit a drive of `capacity` bytes with `page` bytes pages.
pub fn fit(
    records: &mut [TraceRecord],
    capacity: u64,
    page: u64,
    how: Fit,
    file: &str,
) -> Result<bool, TraceError> {
    let needed = records
        .iter()
        .map(|r| r.offset.saturating_add(r.len))
        .max()
        .unwrap_or(0);
    if needed <= capacity {
        return Ok(false);
    }
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let page = page.max(512);
    match how {
        Fit::Refuse => Err(TraceError::TooLarge {
            file: file.to_string(),
            needed,
            needed_gib: gib(needed),
            capacity,
            capacity_gib: gib(capacity),
        }),
        Fit::Wrap | Fit::Scale => {
            for r in records.iter_mut() {
                r.len = r.len.min(capacity);
                let room = capacity - r.len;
                let moved = match how {
                    Fit::Wrap => r.offset % (room + 1),
                    _ => ((r.offset as u128 * room as u128) / needed as u128) as u64,
                };
                r.offset = moved / 512 * 512;
                if r.offset + r.len > capacity {
                    r.offset = room / page * page;
                }
            }
            Ok(true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ascii trace in nanoseconds, replayed at its own speed.
    fn ascii(text: &str, file: &str, devices: Devices) -> Result<Vec<TraceRecord>, TraceError> {
        parse(text, file, TraceFormat::Ascii, TimeUnit::Ns, 1.0, devices)
    }

    fn spc(text: &str, devices: Devices) -> Result<Vec<TraceRecord>, TraceError> {
        parse(text, "f.spc", TraceFormat::Spc, TimeUnit::S, 1.0, devices)
    }

    #[test]
    fn ascii_lines_become_requests_in_sectors() {
        let text = "0 0 303567 7 0\n26214000 1 240840 6 1\n";
        let r = ascii(text, "t.ascii", Devices::Merge).unwrap();
        assert_eq!(
            r[0],
            TraceRecord {
                at: Nanos(0),
                op: Op::Write,
                offset: 303567 * 512,
                len: 7 * 512
            }
        );
        assert_eq!((r[1].at, r[1].op), (Nanos(26_214_000), Op::Read));
        let fast = parse(
            text,
            "t.ascii",
            TraceFormat::Ascii,
            TimeUnit::Ms,
            2.0,
            Devices::Merge,
        )
        .unwrap();
        assert_eq!(fast[1].at, Nanos(13_107_000_000_000));
    }

    #[test]
    fn spc_and_msr_samples_parse() {
        let text = "0,303567,3584,w,0.000000\n1,55590,3072,R,0.026214\n";
        let r = spc(text, Devices::Merge).unwrap();
        assert_eq!((r[0].op, r[0].len, r[1].op), (Op::Write, 3584, Op::Read));
        assert_eq!(r[1].at, Nanos(26_214_000));
        let msr = "128166372003061629,hm,0,Read,3325952,4096,1000\n128166372003071629,hm,0,Write,0,8192,500\n";
        let r = parse(
            msr,
            "m.csv",
            TraceFormat::Msr,
            TimeUnit::Ns,
            1.0,
            Devices::Merge,
        )
        .unwrap();
        assert_eq!(
            (r[0].offset, r[1].at, r[1].op),
            (3_325_952, Nanos(1_000_000), Op::Write)
        );
    }

    #[test]
    fn separate_devices_get_ranges_of_their_own_in_device_order() {
        // Devices in numeric order 0, 2, 10: device 0 ends at 1 MiB; device
        // 2 starts there and ends 3 MiB and 4 KiB later, rounded up to 4 MiB;
        // device 10 starts at 5 MiB.
        let text = "0 10 0 8 0\n1 2 6144 8 0\n2 0 2040 8 1\n3 2 0 8 1\n";
        let merged = ascii(text, "d.ascii", Devices::Merge).unwrap();
        let offsets = |r: &[TraceRecord]| r.iter().map(|x| x.offset).collect::<Vec<_>>();
        assert_eq!(offsets(&merged), [0, 6144 * 512, 2040 * 512, 0]);
        let apart = ascii(text, "d.ascii", Devices::Separate).unwrap();
        let mib = 1 << 20;
        assert_eq!(
            offsets(&apart),
            [mib + 4 * mib, mib + 6144 * 512, 2040 * 512, mib]
        );
        let r = spc("1,0,4096,w,0.0\n0,0,4096,w,0.1\n", Devices::Separate).unwrap();
        assert_eq!(offsets(&r), [mib, 0]);
        assert_eq!(Devices::parse("separate"), Some(Devices::Separate));
        assert_eq!(Devices::parse("apart"), None);
    }

    #[test]
    fn errors_name_the_file_line_and_field() {
        let err = ascii("0 0 1 8 0\n5 0 x 8 1\n", "a.ascii", Devices::Merge).unwrap_err();
        assert_eq!(
            err.to_string(),
            "a.ascii:2: field 3 (lba) `x`: expected a sector number"
        );
        let err = ascii("0 0 1 8 2\n", "a.ascii", Devices::Merge).unwrap_err();
        assert!(err.to_string().contains("1 (read) or 0 (write)"));
        let err = ascii("0 0 1\n", "a.ascii", Devices::Merge).unwrap_err();
        assert!(err
            .to_string()
            .contains("a.ascii:1: expected 5 fields, found 3"));
        let err = ascii("# nothing\n", "e.ascii", Devices::Merge).unwrap_err();
        assert!(err.to_string().contains("holds no request"));
    }

    #[test]
    fn a_trace_too_large_says_how_large_a_drive_it_needs_or_is_remapped() {
        let mut r = ascii(
            "0 0 2000000000 16 1\n1 0 10 16 0\n",
            "big.ascii",
            Devices::Merge,
        )
        .unwrap();
        let err = fit(&mut r.clone(), 1 << 30, 4096, Fit::Refuse, "big.ascii")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("953.7 GiB") && err.contains("remap the addresses"),
            "{err}"
        );
        for how in [Fit::Wrap, Fit::Scale] {
            let mut moved = r.clone();
            assert!(fit(&mut moved, 1 << 30, 4096, how, "big.ascii").unwrap());
            assert!(moved
                .iter()
                .all(|x| x.offset + x.len <= 1 << 30 && x.offset % 512 == 0));
        }
        assert!(!fit(&mut r[1..], 1 << 30, 4096, Fit::Refuse, "x").unwrap());
    }
}
