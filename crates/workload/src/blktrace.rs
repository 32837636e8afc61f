//! blktrace's binary per-CPU files (`DEV.blktrace.N`): a stream of
//! `struct blk_io_trace` records (include/uapi/linux/blktrace_api.h), each
//! followed by `pdu_len` bytes of payload:
//!
//! | bytes | field |
//! |---|---|
//! | 0-3 | magic 0x65617400, low byte the version (7) |
//! | 4-7 | sequence (per CPU) |
//! | 8-15 | time, ns |
//! | 16-23 | sector (512 bytes) |
//! | 24-27 | bytes |
//! | 28-31 | action: category bits << 16, action code in the low bits |
//! | 32-35 | pid |
//! | 36-39 | device (the kernel's dev_t: major << 20, minor) |
//! | 40-43 | cpu |
//! | 44-45 | error |
//! | 46-47 | pdu_len |
//!
//! Records are in the recording machine's byte order, told by the magic.
//! Which action is a request's arrival is chosen as for blkparse (`Q` or
//! `D`); the others, and notes (messages, process names), are skipped and
//! counted, as blkparse's are ([`crate::blkparse`]: passthrough commands,
//! requeues). The categories give the RWBS: discard, write, flush, FUA.

use std::io::{BufRead, Read};
use std::path::Path;

use iosteer_sched::Op;

use crate::blkparse::{push_request, skip, Rwbs, PASSTHROUGH};
use crate::trace::{io_error, DeviceKey, Event, Place, Sink, TraceError};

pub const MAGIC: u32 = 0x6561_7400;
pub const VERSION: u32 = 0x07;
pub const RECORD_BYTES: usize = 48;

/// Category bits (the action's high 16 bits).
pub mod category {
    pub const READ: u32 = 1 << 0;
    pub const WRITE: u32 = 1 << 1;
    /// Flush (REQ_PREFLUSH, or a flush request).
    pub const FLUSH: u32 = 1 << 2;
    pub const SYNC: u32 = 1 << 3;
    pub const QUEUE: u32 = 1 << 4;
    pub const ISSUE: u32 = 1 << 6;
    pub const COMPLETE: u32 = 1 << 7;
    pub const FS: u32 = 1 << 8;
    /// A passthrough command (SCSI or NVMe, around the block layer).
    pub const PC: u32 = 1 << 9;
    pub const NOTIFY: u32 = 1 << 10;
    pub const AHEAD: u32 = 1 << 11;
    pub const META: u32 = 1 << 12;
    pub const DISCARD: u32 = 1 << 13;
    pub const FUA: u32 = 1 << 15;
}

/// Action codes (the action's low bits) and blkparse's letter for each.
const ACTIONS: [(u32, &str); 17] = [
    (1, "Q"),
    (2, "M"),
    (3, "F"),
    (4, "G"),
    (5, "S"),
    (6, "R"),
    (7, "D"),
    (8, "C"),
    (9, "P"),
    (10, "U"),
    (11, "UT"),
    (12, "I"),
    (13, "X"),
    (14, "B"),
    (15, "A"),
    (16, "abort"),
    (17, "drv_data"),
];
/// Codes of the two arrival actions, `Q` and `D`.
pub const QUEUE_ACTION: u32 = 1;
pub const ISSUE_ACTION: u32 = 7;
/// Set in the action when a cgroup id leads the payload.
const CGROUP: u32 = 1 << 8;

/// One `struct blk_io_trace`, decoded.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct BlkIoTrace {
    pub sequence: u32,
    pub time: u64,
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    pub pid: u32,
    pub device: u32,
    pub cpu: u32,
    pub error: u16,
    pub pdu_len: u16,
}

impl BlkIoTrace {
    /// The record's 48 bytes in the given byte order (for tests and
    /// synthetic samples: the same layout the reader reads).
    pub fn encode(&self, big_endian: bool) -> [u8; RECORD_BYTES] {
        let mut out = [0u8; RECORD_BYTES];
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            out[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        macro_rules! field {
            ($v:expr) => {
                put(&if big_endian {
                    $v.to_be_bytes()
                } else {
                    $v.to_le_bytes()
                })
            };
        }
        field!(MAGIC | VERSION);
        field!(self.sequence);
        field!(self.time);
        field!(self.sector);
        field!(self.bytes);
        field!(self.action);
        field!(self.pid);
        field!(self.device);
        field!(self.cpu);
        field!(self.error);
        field!(self.pdu_len);
        out
    }

    fn decode(raw: &[u8; RECORD_BYTES], big_endian: bool) -> (u32, BlkIoTrace) {
        let u32_at = |i: usize| {
            let b = [raw[i], raw[i + 1], raw[i + 2], raw[i + 3]];
            if big_endian {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        };
        let u64_at = |i: usize| {
            let (a, b) = (u64::from(u32_at(i)), u64::from(u32_at(i + 4)));
            if big_endian {
                (a << 32) | b
            } else {
                (b << 32) | a
            }
        };
        let u16_at = |i: usize| {
            let b = [raw[i], raw[i + 1]];
            if big_endian {
                u16::from_be_bytes(b)
            } else {
                u16::from_le_bytes(b)
            }
        };
        let t = BlkIoTrace {
            sequence: u32_at(4),
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            pid: u32_at(32),
            device: u32_at(36),
            cpu: u32_at(40),
            error: u16_at(44),
            pdu_len: u16_at(46),
        };
        (u32_at(0), t)
    }

    /// blkparse's RWBS from the category bits.
    fn rwbs(&self) -> Rwbs {
        let cat = self.action >> 16;
        let op = if cat & category::DISCARD != 0 {
            Some(Op::Trim)
        } else if cat & category::WRITE != 0 {
            Some(Op::Write)
        } else if self.bytes > 0 {
            Some(Op::Read)
        } else {
            None
        };
        Rwbs {
            preflush: cat & category::FLUSH != 0,
            op,
            fua: cat & category::FUA != 0,
        }
    }

    /// blkparse's letter for the action, if it is one blktrace writes.
    fn letter(&self) -> Option<&'static str> {
        let code = self.action & 0xffff & !CGROUP;
        ACTIONS.iter().find(|(c, _)| *c == code).map(|(_, l)| *l)
    }
}

/// Fills `buf` from `source`; false at a clean end (no byte left).
fn fill(source: &mut impl Read, buf: &mut [u8]) -> std::io::Result<Option<usize>> {
    let mut got = 0;
    while got < buf.len() {
        match source.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((got > 0).then_some(got))
}

/// Whether the file at `path` starts with a blktrace record's magic.
pub fn is_blktrace(path: &str) -> bool {
    let mut head = [0u8; 4];
    let read = std::fs::File::open(path).and_then(|mut f| {
        use std::io::Read;
        f.read_exact(&mut head)
    });
    read.is_ok() && magic_order(head).is_some()
}

/// The byte order told by a record's magic, if it is one.
fn byte_order(raw: &[u8; RECORD_BYTES]) -> Option<bool> {
    magic_order([raw[0], raw[1], raw[2], raw[3]])
}

/// The byte order (`true`: big-endian) of a record's first four bytes, if
/// they are blktrace's magic.
fn magic_order(head: [u8; 4]) -> Option<bool> {
    let (le, be) = (u32::from_le_bytes(head), u32::from_be_bytes(head));
    if le & !0xff == MAGIC {
        Some(false)
    } else if be & !0xff == MAGIC {
        Some(true)
    } else {
        None
    }
}

/// Reads one file's records into `sink`.
pub(crate) fn read(source: impl BufRead, file: &str, sink: &mut Sink) -> Result<(), TraceError> {
    let mut reader = RecordReader::new(source, file);
    while reader.step(sink)? {}
    Ok(())
}

/// A blktrace file read one record at a time.
pub(crate) struct RecordReader<R> {
    source: R,
    file: String,
    big_endian: Option<bool>,
    record: u64,
    byte: u64,
}

impl<R: BufRead> RecordReader<R> {
    pub(crate) fn new(source: R, file: &str) -> Self {
        RecordReader {
            source,
            file: file.to_string(),
            big_endian: None,
            record: 0,
            byte: 0,
        }
    }

    /// Reads the next record into `sink`; `false` at the end of the file.
    pub(crate) fn step(&mut self, sink: &mut Sink) -> Result<bool, TraceError> {
        let (record, byte, file) = (self.record, self.byte, self.file.as_str());
        let bad = |problem: String| TraceError::Record {
            file: file.to_string(),
            record,
            byte,
            problem,
        };
        let mut raw = [0u8; RECORD_BYTES];
        match fill(&mut self.source, &mut raw).map_err(|e| io_error(file, &e))? {
            None => return Ok(false),
            Some(n) if n < RECORD_BYTES => {
                return Err(bad(format!("cut short: {n} of {RECORD_BYTES} bytes")))
            }
            Some(_) => {}
        }
        let order = byte_order(&raw).ok_or_else(|| {
            bad(format!(
                "magic {:02x?}: expected 0x{MAGIC:08x} in either byte order (is it a blktrace file?)",
                &raw[..4]
            ))
        })?;
        if *self.big_endian.get_or_insert(order) != order {
            return Err(bad("byte order changes within the file".into()));
        }
        let (magic, t) = BlkIoTrace::decode(&raw, order);
        if magic & 0xff != VERSION {
            return Err(bad(format!("version {}: expected {VERSION}", magic & 0xff)));
        }
        let pdu = u64::from(t.pdu_len);
        let skipped = std::io::copy(&mut self.source.by_ref().take(pdu), &mut std::io::sink())
            .map_err(|e| io_error(file, &e))?;
        if skipped < pdu {
            return Err(bad(format!("payload cut short: {skipped} of {pdu} bytes")));
        }
        if (t.action >> 16) & category::NOTIFY != 0 {
            // Messages and process names, not I/O (blkparse's `m`).
            sink.tally.skip("m");
        } else {
            let Some(letter) = t.letter() else {
                let code = t.action & 0xffff;
                return Err(bad(format!("action code {code}: not one blktrace writes")));
            };
            one(&t, letter, record, sink, &bad)?;
        }
        self.record += 1;
        self.byte += RECORD_BYTES as u64 + pdu;
        Ok(true)
    }
}

/// Keeps one record if it is an arrival, else counts it; `bad` makes the
/// error of an arrival whose sector's bytes pass 2^64.
fn one(
    t: &BlkIoTrace,
    letter: &str,
    record: u64,
    sink: &mut Sink,
    bad: &dyn Fn(String) -> TraceError,
) -> Result<(), TraceError> {
    let arrival = match sink.event {
        Event::Queue => QUEUE_ACTION,
        Event::Issue => ISSUE_ACTION,
    };
    if t.action & 0xff != arrival {
        skip(sink, letter);
        return Ok(());
    }
    if (t.action >> 16) & category::PC != 0 {
        sink.tally.add(PASSTHROUGH, 1);
        return Ok(());
    }
    let device = DeviceKey::Name(format!("{},{}", t.device >> 20, t.device & 0xf_ffff));
    let Some(offset) = t.sector.checked_mul(512) else {
        return Err(bad(format!(
            "sector {}: expected a sector number below 2^55 (512-byte sectors: 2^64 bytes)",
            t.sector
        )));
    };
    let span = (offset, u64::from(t.bytes));
    push_request(
        sink,
        t.rwbs(),
        (u128::from(t.time), device, span),
        Place::Record(record),
    )
}

/// The per-CPU files of the trace `path` names: `DEV.blktrace.N` or its
/// prefix `DEV` gives every `DEV.blktrace.N`, by CPU; any other existing
/// file (blktrace's `-o -` output saved) is read alone.
pub(crate) fn cpu_files(path: &str) -> Result<Vec<String>, TraceError> {
    let prefix = match path.rsplit_once(".blktrace.") {
        Some((prefix, n)) if cpu_number(n).is_some() => prefix,
        _ if Path::new(path).exists() => return Ok(vec![path.to_string()]),
        _ => path,
    };
    let dir = Path::new(prefix)
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let base = Path::new(prefix)
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default();
    let entries = std::fs::read_dir(dir).map_err(|e| io_error(path, &e))?;
    let mut cpus: Vec<(u64, String)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let n = name.strip_prefix(&base)?.strip_prefix(".blktrace.")?;
            let cpu = cpu_number(n)?;
            Some((cpu, entry.path().to_string_lossy().into_owned()))
        })
        .collect();
    if cpus.is_empty() {
        return Err(TraceError::Io {
            file: path.to_string(),
            message: format!("no per-CPU files {prefix}.blktrace.N"),
        });
    }
    cpus.sort();
    if let Some(pair) = cpus.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(TraceError::Io {
            file: path.to_string(),
            message: format!(
                "two files for CPU {}: {} and {} (keep one)",
                pair[0].0, pair[0].1, pair[1].1
            ),
        });
    }
    Ok(cpus.into_iter().map(|(_, file)| file).collect())
}

/// The CPU of a per-CPU file's name after `.blktrace.`: its digits, and a
/// compression's suffix if it is compressed (`0`, `0.gz`, `12.zst`).
fn cpu_number(n: &str) -> Option<u64> {
    let digits = [".gz", ".bz2", ".zst"]
        .into_iter()
        .find_map(|suffix| n.strip_suffix(suffix))
        .unwrap_or(n);
    let all_digits = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    all_digits.then(|| digits.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blkparse::tests::by_op;
    use crate::trace::replay::streamed;
    use crate::trace::{read, read_path, Options, Trace, TraceFormat};

    const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/synthetic");

    fn act(code: u32, categories: u32) -> u32 {
        (categories << 16) | code
    }

    /// One CPU's records: requests through Q, G, I, D and C, a process-name
    /// note with its payload, a discard, a flush and a FUA write.
    fn cpu_records(cpu: u32) -> Vec<(BlkIoTrace, Vec<u8>)> {
        use category::*;
        let dev = (8 << 20) | (16 * cpu); // 8,0 and 8,16
        let base = BlkIoTrace {
            pid: 100 + cpu,
            device: dev,
            cpu,
            ..BlkIoTrace::default()
        };
        let t0 = 1_000_000 + u64::from(cpu) * 500;
        let rec = |seq: u32, dt: u64, sector: u64, bytes: u32, action: u32| BlkIoTrace {
            sequence: seq,
            time: t0 + dt,
            sector,
            bytes,
            action,
            ..base
        };
        let name = b"fio\0".to_vec();
        let mut note = rec(0, 0, 0, 0, act(0, NOTIFY));
        note.pdu_len = name.len() as u16;
        vec![
            (note, name),
            (
                rec(1, 0, 2048, 4096, act(QUEUE_ACTION, QUEUE | READ | SYNC)),
                vec![],
            ),
            (rec(2, 10, 2048, 4096, act(4, QUEUE | READ | SYNC)), vec![]),
            (rec(3, 20, 2048, 4096, act(12, QUEUE | READ | SYNC)), vec![]),
            (
                rec(4, 30, 2048, 4096, act(ISSUE_ACTION, ISSUE | READ | SYNC)),
                vec![],
            ),
            (
                rec(5, 1000, 8192, 8192, act(QUEUE_ACTION, QUEUE | WRITE | FUA)),
                vec![],
            ),
            (
                rec(
                    6,
                    2000,
                    65536,
                    1 << 20,
                    act(QUEUE_ACTION, QUEUE | WRITE | DISCARD),
                ),
                vec![],
            ),
            (
                rec(
                    7,
                    3000,
                    0,
                    0,
                    act(QUEUE_ACTION, QUEUE | WRITE | FLUSH | SYNC),
                ),
                vec![],
            ),
            (
                rec(
                    8,
                    3010,
                    4096,
                    4096,
                    act(QUEUE_ACTION, QUEUE | WRITE | FLUSH),
                ),
                vec![],
            ),
            (rec(9, 9000, 2048, 4096, act(8, COMPLETE | READ)), vec![]),
        ]
    }

    fn encode(records: &[(BlkIoTrace, Vec<u8>)], big_endian: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for (t, pdu) in records {
            out.extend_from_slice(&t.encode(big_endian));
            out.extend_from_slice(pdu);
        }
        out
    }

    fn binary(bytes: &[u8]) -> Result<Trace, TraceError> {
        read(
            bytes,
            "x.blktrace.0",
            TraceFormat::Blktrace,
            &Options::default(),
        )
    }

    #[test]
    fn records_round_trip_in_both_byte_orders() {
        let records = cpu_records(0);
        let (le, be) = (encode(&records, false), encode(&records, true));
        assert_ne!(le, be);
        let t = binary(&le).unwrap();
        assert_eq!(t, binary(&be).unwrap());
        // Q read, FUA write, discard, flush, flush + write.
        assert_eq!(by_op(&t.records), [1, 2, 1, 2]);
        assert_eq!(
            t.records.iter().filter(|r| r.fua).count(),
            1,
            "the FUA write"
        );
        let first = t.records[0];
        assert_eq!((first.at.0, first.offset, first.len), (0, 2048 * 512, 4096));
        let trim = t.records.iter().find(|r| r.op == Op::Trim).unwrap();
        assert_eq!((trim.at.0, trim.len), (2000, 1 << 20));
        assert!(t
            .notes
            .iter()
            .any(|n| n == "5 events other than the queue event skipped: C 1, D 1, G 1, I 1, m 1"));
        let issue = Options {
            event: Event::Issue,
            ..Options::default()
        };
        let t = read(&le[..], "x", TraceFormat::Blktrace, &issue).unwrap();
        assert_eq!(by_op(&t.records), [1, 0, 0, 0]);
    }

    #[test]
    fn per_cpu_files_are_found_from_either_name_and_merged_by_time() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("sdb").to_string_lossy().into_owned();
        for cpu in 0..3 {
            let bytes = encode(&cpu_records(cpu), cpu == 1);
            std::fs::write(format!("{prefix}.blktrace.{cpu}"), bytes).unwrap();
        }
        let options = Options::default();
        let by_prefix = read_path(&prefix, TraceFormat::Blktrace, &options).unwrap();
        let by_first = read_path(
            &format!("{prefix}.blktrace.0"),
            TraceFormat::Blktrace,
            &options,
        );
        assert_eq!(Ok(&by_prefix), by_first.as_ref());
        assert_eq!(by_op(&by_prefix.records), [3, 6, 3, 6]);
        // CPU 1 starts 500 ns after CPU 0: its read comes second.
        let reads: Vec<u64> = (by_prefix.records.iter())
            .filter(|r| r.op == Op::Read)
            .map(|r| r.at.0)
            .collect();
        assert_eq!(reads, [0, 500, 1000]);
        assert!(!by_prefix.notes.iter().any(|n| n.contains("sorted")));
        // Streamed, the files are merged as the sort above orders them.
        let (records, replay) = streamed(&prefix, TraceFormat::Blktrace, &options, 1 << 40);
        assert_eq!(records, by_prefix.records);
        assert_eq!(replay.notes, by_prefix.notes);
        let none = read_path(&format!("{prefix}x"), TraceFormat::Blktrace, &options);
        assert!(none.unwrap_err().to_string().contains("no per-CPU files"));
        // CPU 1's file gzip-compressed: found from the prefix or its own name.
        let plain = format!("{prefix}.blktrace.1");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, &std::fs::read(&plain).unwrap()).unwrap();
        std::fs::write(format!("{plain}.gz"), e.finish().unwrap()).unwrap();
        let both = read_path(&prefix, TraceFormat::Blktrace, &options).unwrap_err();
        assert!(both.to_string().contains("two files for CPU 1"), "{both}");
        std::fs::remove_file(&plain).unwrap();
        for name in [prefix.clone(), format!("{plain}.gz")] {
            let packed = read_path(&name, TraceFormat::Blktrace, &options).unwrap();
            assert_eq!(packed.records, by_prefix.records);
        }
    }

    #[test]
    fn a_bad_magic_a_cut_record_or_an_unknown_action_names_the_record() {
        let mut le = encode(&cpu_records(0), false);
        let cut = binary(&le[..le.len() - 8]).unwrap_err().to_string();
        assert_eq!(
            cut,
            "x.blktrace.0: record 9 at byte 436: cut short: 40 of 48 bytes"
        );
        // The second record, after 4 bytes of payload: its version, then
        // its magic (little-endian: the version is the first byte).
        le[52] = 6;
        let version = binary(&le).unwrap_err().to_string();
        assert_eq!(
            version,
            "x.blktrace.0: record 1 at byte 52: version 6: expected 7"
        );
        le[55] = 0x99;
        let magic = binary(&le).unwrap_err().to_string();
        assert!(
            magic.starts_with("x.blktrace.0: record 1 at byte 52: magic"),
            "{magic}"
        );
        let mut odd = cpu_records(0);
        odd[1].0.action = act(99, category::QUEUE);
        let err = binary(&encode(&odd, false)).unwrap_err().to_string();
        assert!(err.contains("record 1 at byte 52: action code 99"), "{err}");
        let text = binary(b"0 0 1 8 0\n").unwrap_err().to_string();
        assert!(text.contains("cut short"), "{text}");
    }

    #[test]
    fn passthrough_commands_are_skipped_not_replayed_at_sector_0() {
        use category::*;
        // A SMART read (512 bytes in) and a passthrough write: the kernel
        // records sector 0 for both.
        let rec = |seq, time, sector, bytes, cats| BlkIoTrace {
            sequence: seq,
            time,
            sector,
            bytes,
            action: act(ISSUE_ACTION, ISSUE | cats),
            ..BlkIoTrace::default()
        };
        let records = [
            (rec(0, 1000, 2048, 4096, WRITE | FS), vec![]),
            (rec(1, 2000, 0, 512, READ | PC), vec![]),
            (rec(2, 3000, 0, 4096, WRITE | PC), vec![]),
        ];
        let options = Options {
            event: Event::Issue,
            ..Options::default()
        };
        let bytes = encode(&records, false);
        let t = read(&bytes[..], "x.blktrace.0", TraceFormat::Blktrace, &options).unwrap();
        assert_eq!(t.records.len(), 1);
        assert_eq!(
            (t.records[0].op, t.records[0].offset),
            (Op::Write, 2048 * 512)
        );
        assert!(
            t.notes
                .iter()
                .any(|n| n.starts_with("2 passthrough commands skipped")),
            "{:?}",
            t.notes
        );
    }

    #[test]
    fn a_sector_past_2_to_the_64_bytes_names_the_record() {
        let mut far = cpu_records(0);
        far[1].0.sector = 1 << 55;
        let err = binary(&encode(&far, false)).unwrap_err().to_string();
        assert_eq!(
            err,
            "x.blktrace.0: record 1 at byte 52: sector 36028797018963968: expected a sector \
             number below 2^55 (512-byte sectors: 2^64 bytes)"
        );
        // The last whole sector is read, and its request ends past 2^64.
        far[1].0.sector = (1 << 55) - 1;
        let err = binary(&encode(&far, false)).unwrap_err().to_string();
        assert!(
            err.ends_with(":record 1: 4096 bytes at byte 18446744073709551104 end past 2^64 bytes"),
            "{err}"
        );
    }

    /// traces/synthetic.blktrace.{0,1} are this helper's output: regenerate
    /// them with `IOSTEER_WRITE_SAMPLES=1 cargo test -p iosteer-sim`.
    #[test]
    fn the_committed_synthetic_sample_is_the_documented_layout() {
        for cpu in 0..2 {
            let path = format!("{SAMPLE}.blktrace.{cpu}");
            let bytes = encode(&cpu_records(cpu), false);
            if std::env::var_os("IOSTEER_WRITE_SAMPLES").is_some() {
                std::fs::write(&path, &bytes).unwrap();
            }
            assert_eq!(std::fs::read(&path).unwrap(), bytes, "{path}");
        }
        let t = read_path(SAMPLE, TraceFormat::Blktrace, &Options::default()).unwrap();
        assert_eq!(by_op(&t.records), [2, 4, 2, 4]);
    }
}
