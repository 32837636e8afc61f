//! fio job files: the subset that describes a workload's shape.
//!
//! Sections are `[global]` (defaults for every job) and one section per job.
//! Options, with fio's meaning and units:
//!
//! | option | values |
//! |---|---|
//! | `rw`, `readwrite` | `read`, `write`, `randread`, `randwrite`, `rw`/`readwrite` (sequential mix), `randrw`, `trim`, `randtrim` |
//! | `rwmixread`, `rwmixwrite` | percent of reads / writes in mixes (default 50) |
//! | `bs`, `blocksize` | a size (default 4k) |
//! | `bsrange`, `blocksize_range` | `min-max` |
//! | `size`, `filesize` | a size, or a percentage of the drive (default: the whole drive) |
//! | `offset` | a size, or a percentage of the drive |
//! | `iodepth` | requests outstanding (default 1) |
//! | `rate` | bytes per second (`30m`: 30 MiB/s) |
//! | `rate_iops` | requests per second |
//! | `rate_process` | `linear` (default) or `poisson` |
//! | `startdelay`, `runtime` | times, seconds unless suffixed (`us`, `ms`, `s`, `m`, `h`) |
//! | `time_based` | accepted (jobs here always run for their runtime) |
//! | `thinktime` | microseconds unless suffixed |
//! | `numjobs` | copies of the job |
//! | `write_hint` | `none`, `short`, `medium`, `long`, `extreme` |
//! | `name`, `description` | labels |
//! | `iosteer_backpressure` | not fio's: a time, microseconds unless suffixed (as fio's `latency_target`); the job listens to the scheduler's back-pressure and holds a write or trim while it would wait longer than this ([`Synthetic::backpressure`](crate::workload::Synthetic::backpressure)) |
//! | `ioengine`, `direct`, `filename`, `group_reporting`, `buffered` | accepted and ignored: they name how fio does I/O, not what it issues |
//!
//! Sizes take fio's suffixes, powers of 1024 (`k`, `m`, `g`, `t`, with or
//! without `b`/`ib`). Any other option is an error naming the file, the line
//! and the option, not a silent default. A job without `runtime` runs until
//! the longest timed job stops (or 60 s when none is timed).

use iosteer_sched::{LifetimeHint, Nanos};
use thiserror::Error;

use crate::workload::{Arrival, Job, JobKind, Synthetic};

#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("{file}:{line}: {message}")]
pub struct FioError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

const IGNORED: &[&str] = &[
    "ioengine",
    "direct",
    "filename",
    "group_reporting",
    "buffered",
    "description",
];

/// Most requests a job may keep outstanding.
const MAX_IODEPTH: u32 = 65_536;

/// Default length of untimed jobs when no job is timed.
const UNTIMED_RUNTIME: Nanos = Nanos::from_secs(60);

#[derive(Clone, Debug)]
struct Section {
    name: String,
    options: Vec<(String, String, usize)>,
}

/// Parses `text` into jobs for a drive of `capacity` bytes.
pub fn parse(text: &str, file: &str, capacity: u64) -> Result<Vec<Job>, FioError> {
    let sections = sections(text, file)?;
    let global = sections.iter().find(|s| s.name == "global");
    let mut jobs = Vec::new();
    let mut untimed = Vec::new();
    for section in sections.iter().filter(|s| s.name != "global") {
        let mut options: Vec<(String, String, usize)> =
            global.map(|g| g.options.clone()).unwrap_or_default();
        options.extend(section.options.iter().cloned());
        let spec = JobSpec::from_options(&section.name, &options, file, capacity)?;
        for copy in 0..spec.numjobs {
            let name = if spec.numjobs > 1 {
                format!("{}.{copy}", section.name)
            } else {
                section.name.clone()
            };
            if spec.runtime.is_none() {
                untimed.push(jobs.len());
            }
            jobs.push(spec.job(name));
        }
    }
    if jobs.is_empty() {
        return Err(FioError {
            file: file.to_string(),
            line: 1,
            message: "no job section (only [global], or nothing)".into(),
        });
    }
    let end = jobs
        .iter()
        .filter_map(|j| j.stop)
        .max()
        .unwrap_or(UNTIMED_RUNTIME);
    for i in untimed {
        jobs[i].stop = Some(end.max(jobs[i].start + Nanos::from_secs(1)));
    }
    Ok(jobs)
}

fn sections(text: &str, file: &str) -> Result<Vec<Section>, FioError> {
    let mut sections: Vec<Section> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            sections.push(Section {
                name: name.trim().to_string(),
                options: Vec::new(),
            });
            continue;
        }
        let Some(section) = sections.last_mut() else {
            return Err(FioError {
                file: file.to_string(),
                line,
                message: format!("`{trimmed}` comes before any [section]"),
            });
        };
        let (key, value) = trimmed.split_once('=').unwrap_or((trimmed, ""));
        section
            .options
            .push((key.trim().to_string(), value.trim().to_string(), line));
    }
    Ok(sections)
}

#[derive(Clone, Debug)]
struct JobSpec {
    synthetic: Synthetic,
    start: Nanos,
    runtime: Option<Nanos>,
    numjobs: u32,
}

impl JobSpec {
    fn job(&self, name: String) -> Job {
        Job {
            name,
            kind: JobKind::Synthetic(self.synthetic.clone()),
            start: self.start,
            stop: self.runtime.map(|r| self.start + r),
        }
    }

    fn from_options(
        name: &str,
        options: &[(String, String, usize)],
        file: &str,
        capacity: u64,
    ) -> Result<JobSpec, FioError> {
        let mut rw = "read".to_string();
        let mut mix_read: Option<u32> = None;
        let (mut bs_min, mut bs_max) = (4096u64, 4096u64);
        let mut size: Option<u64> = None;
        let mut offset = 0u64;
        let mut arrival = Arrival {
            iops: None,
            bytes_per_s: None,
            poisson: false,
            iodepth: 1,
            thinktime: Nanos::ZERO,
        };
        let (mut start, mut runtime, mut numjobs, mut hint) =
            (Nanos::ZERO, None, 1u32, LifetimeHint::None);
        let mut backpressure = None;
        for (key, value, line) in options {
            let err = |message: String| FioError {
                file: file.to_string(),
                line: *line,
                message,
            };
            let bad = |expected: &str| err(format!("option `{key}={value}`: expected {expected}"));
            match key.as_str() {
                "rw" | "readwrite" => {
                    const MODES: &[&str] = &["read", "write", "randread", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim"];
                    if !MODES.contains(&value.as_str()) {
                        return Err(bad(&MODES.join(", ")));
                    }
                    rw = value.clone();
                }
                "rwmixread" => mix_read = Some(percent(value).ok_or_else(|| bad("a percentage 0-100"))?),
                "rwmixwrite" => mix_read = Some(100 - percent(value).ok_or_else(|| bad("a percentage 0-100"))?),
                "bs" | "blocksize" => {
                    let b = size_value(value).filter(|b| *b > 0).ok_or_else(|| bad("a size such as 4k or 128k"))?;
                    (bs_min, bs_max) = (b, b);
                }
                "bsrange" | "blocksize_range" => {
                    let (lo, hi) = value.split_once('-').ok_or_else(|| bad("min-max, such as 4k-64k"))?;
                    let lo = size_value(lo).filter(|b| *b > 0).ok_or_else(|| bad("min-max, such as 4k-64k"))?;
                    let hi = size_value(hi).filter(|b| *b >= lo).ok_or_else(|| bad("min-max with max >= min"))?;
                    (bs_min, bs_max) = (lo, hi);
                }
                "size" | "filesize" => size = Some(size_or_percent(value, capacity).ok_or_else(|| bad("a size or a percentage"))?),
                "offset" => offset = size_or_percent(value, capacity).ok_or_else(|| bad("a size or a percentage"))?,
                "iodepth" => {
                    arrival.iodepth = value
                        .parse()
                        .ok()
                        .filter(|d| (1..=MAX_IODEPTH).contains(d))
                        .ok_or_else(|| bad("an integer from 1 to 65536"))?
                }
                "rate" => arrival.bytes_per_s = Some(size_value(value).filter(|b| *b > 0).ok_or_else(|| bad("bytes per second, such as 30m"))? as f64),
                "rate_iops" => arrival.iops = Some(value.parse::<f64>().ok().filter(|r| *r > 0.0 && r.is_finite()).ok_or_else(|| bad("requests per second"))?),
                "rate_process" => {
                    arrival.poisson = match value.as_str() {
                        "linear" => false,
                        "poisson" => true,
                        _ => return Err(bad("linear or poisson")),
                    }
                }
                "startdelay" => start = time_value(value, 1_000_000_000).ok_or_else(|| bad("a time such as 10s or 500ms"))?,
                "runtime" => runtime = Some(time_value(value, 1_000_000_000).ok_or_else(|| bad("a time such as 60s"))?),
                "time_based" => {}
                "thinktime" => arrival.thinktime = time_value(value, 1_000).ok_or_else(|| bad("a time, microseconds unless suffixed"))?,
                "numjobs" => numjobs = value.parse().ok().filter(|n| (1..=1024).contains(n)).ok_or_else(|| bad("an integer from 1 to 1024"))?,
                "write_hint" => {
                    hint = LifetimeHint::ALL
                        .into_iter()
                        .find(|h| h.name() == value)
                        .ok_or_else(|| bad("none, short, medium, long or extreme"))?
                }
                "iosteer_backpressure" => backpressure = Some(time_value(value, 1_000).ok_or_else(|| bad("a time, microseconds unless suffixed, such as 50ms"))?),
                "name" => {}
                k if IGNORED.contains(&k) => {}
                _ => {
                    return Err(err(format!(
                        "job [{name}]: fio option `{key}` is not supported here; supported: rw, rwmixread, rwmixwrite, bs, \
                         bsrange, size, filesize, offset, iodepth, rate, rate_iops, rate_process, startdelay, runtime, \
                         time_based, thinktime, numjobs, write_hint, name, iosteer_backpressure (ignored: {})",
                        IGNORED.join(", ")
                    )))
                }
            }
        }
        let sequential = matches!(rw.as_str(), "read" | "write" | "rw" | "readwrite" | "trim");
        let read_percent = match rw.as_str() {
            "read" | "randread" => 100,
            "write" | "randwrite" | "trim" | "randtrim" => 0,
            _ => mix_read.unwrap_or(50),
        };
        let size = size.unwrap_or_else(|| capacity.saturating_sub(offset));
        let align = gcd(bs_min, bs_max).max(512);
        if offset.saturating_add(size) > capacity || size < bs_max {
            return Err(FioError {
                file: file.to_string(),
                line: options.last().map_or(1, |o| o.2),
                message: format!(
                    "job [{name}]: offset {offset} + size {size} must fit the drive ({capacity} bytes) and hold a block of {bs_max}"
                ),
            });
        }
        Ok(JobSpec {
            synthetic: Synthetic {
                read_percent,
                trim: rw.contains("trim"),
                sequential,
                block_min: bs_min,
                block_max: bs_max,
                align,
                offset,
                size,
                arrival,
                trim_ahead: None,
                hint,
                backpressure,
            },
            start,
            runtime,
            numjobs,
        })
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn percent(value: &str) -> Option<u32> {
    value
        .trim_end_matches('%')
        .parse()
        .ok()
        .filter(|p| *p <= 100)
}

/// A size with fio's suffixes, powers of 1024.
pub fn size_value(value: &str) -> Option<u64> {
    let v = value.trim().to_ascii_lowercase();
    let digits = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (number, suffix) = v.split_at(digits);
    let n: f64 = number.parse().ok()?;
    let scale: u64 = match suffix.trim_end_matches("ib").trim_end_matches('b') {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return None,
    };
    let bytes = n * scale as f64;
    (bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64).then_some(bytes.round() as u64)
}

fn size_or_percent(value: &str, capacity: u64) -> Option<u64> {
    match value.strip_suffix('%') {
        Some(p) => {
            let p: f64 = p.parse().ok()?;
            (0.0..=100.0)
                .contains(&p)
                .then(|| (capacity as f64 * p / 100.0) as u64 / 4096 * 4096)
        }
        None => size_value(value),
    }
}

/// A time; a bare number is in units of `default_ns`.
pub fn time_value(value: &str, default_ns: u64) -> Option<Nanos> {
    let v = value.trim();
    let digits = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (number, suffix) = v.split_at(digits);
    let n: f64 = number.parse().ok()?;
    let scale = match suffix {
        "" => default_ns as f64,
        "ns" => 1.0,
        "us" | "usec" => 1e3,
        "ms" | "msec" => 1e6,
        "s" | "sec" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        _ => return None,
    };
    let ns = n * scale;
    (ns.is_finite() && ns >= 0.0 && ns < u64::MAX as f64).then_some(Nanos(ns.round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn a_job_file_becomes_jobs_with_fio_meanings() {
        let text = "\
; the fill of the paper
[global]
ioengine=libaio
direct=1
size=10%

[readers]
rw=randread
bs=128k
rate=200m
rate_process=poisson
iodepth=64
runtime=2m

[fill]
rw=write
bsrange=64k-256k
rate_iops=250
startdelay=10s
runtime=90
write_hint=long
numjobs=2
";
        let jobs = parse(text, "fill.fio", 100 * GIB).unwrap();
        assert_eq!(jobs.len(), 3);
        let JobKind::Synthetic(r) = &jobs[0].kind else {
            panic!()
        };
        assert_eq!(
            (r.read_percent, r.sequential, r.block_min),
            (100, false, 128 << 10)
        );
        assert_eq!(r.arrival.bytes_per_s, Some(200.0 * (1 << 20) as f64));
        assert!(r.arrival.poisson && r.arrival.iodepth == 64);
        assert_eq!(r.size, 10 * GIB / 4096 * 4096);
        assert_eq!(jobs[0].stop, Some(Nanos::from_secs(120)));
        let JobKind::Synthetic(w) = &jobs[1].kind else {
            panic!()
        };
        assert_eq!(
            (w.read_percent, w.sequential, w.block_min, w.block_max),
            (0, true, 64 << 10, 256 << 10)
        );
        assert_eq!(w.hint, LifetimeHint::Long);
        assert_eq!(
            (jobs[1].start, jobs[1].stop),
            (Nanos::from_secs(10), Some(Nanos::from_secs(100)))
        );
        assert_eq!(
            (jobs[1].name.as_str(), jobs[2].name.as_str()),
            ("fill.0", "fill.1")
        );
    }

    #[test]
    fn mixes_and_untimed_jobs() {
        let jobs = parse(
            "[a]\nrw=randrw\nrwmixwrite=30\n[b]\nrw=read\nruntime=5s\n",
            "m.fio",
            GIB,
        )
        .unwrap();
        let JobKind::Synthetic(a) = &jobs[0].kind else {
            panic!()
        };
        assert_eq!(a.read_percent, 70);
        assert_eq!(
            jobs[0].stop,
            Some(Nanos::from_secs(5)),
            "untimed jobs run as long as the timed ones"
        );
    }

    #[test]
    fn unsupported_options_and_bad_values_name_file_line_and_option() {
        let err = parse("[a]\nrw=randread\nverify=md5\n", "v.fio", GIB)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("v.fio:3:")
                && err.contains("`verify`")
                && err.contains("not supported"),
            "{err}"
        );
        let err = parse("[a]\nrw=sideways\n", "v.fio", GIB)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("v.fio:2:") && err.contains("randread"),
            "{err}"
        );
        let err = parse("[a]\nbs=4q\n", "v.fio", GIB).unwrap_err().to_string();
        assert!(err.contains("`bs=4q`"), "{err}");
        let err = parse("rw=read\n", "v.fio", GIB).unwrap_err().to_string();
        assert!(err.contains("before any [section]"), "{err}");
        let err = parse("[global]\nbs=4k\n", "v.fio", GIB)
            .unwrap_err()
            .to_string();
        assert!(err.contains("no job section"), "{err}");
        let err = parse("[a]\nsize=2g\n", "v.fio", GIB)
            .unwrap_err()
            .to_string();
        assert!(err.contains("must fit the drive"), "{err}");
    }

    #[test]
    fn iosteer_backpressure_makes_a_job_listen() {
        let jobs = parse(
            "[global]\niosteer_backpressure=50ms\n[fill]\nrw=write\n[slow]\nrw=write\niosteer_backpressure=200\n[deaf]\nrw=write\niosteer_backpressure=0\n[r]\nrw=read\n",
            "b.fio",
            GIB,
        )
        .unwrap();
        let bounds: Vec<Option<Nanos>> = jobs
            .iter()
            .map(|j| match &j.kind {
                JobKind::Synthetic(s) => s.backpressure,
                JobKind::Trace(_) => None,
            })
            .collect();
        assert_eq!(
            bounds,
            [
                Some(Nanos::from_millis(50)),
                Some(Nanos::from_micros(200)),
                Some(Nanos::ZERO),
                Some(Nanos::from_millis(50)),
            ]
        );
        let none = parse("[a]\nrw=write\n", "b.fio", GIB).unwrap();
        let JobKind::Synthetic(a) = &none[0].kind else {
            panic!()
        };
        assert_eq!(a.backpressure, None, "deaf unless asked");
        let err = parse("[a]\niosteer_backpressure=soon\n", "b.fio", GIB)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("b.fio:2:") && err.contains("microseconds unless suffixed"),
            "{err}"
        );
        let err = parse("[a]\nbackpressure=50ms\n", "b.fio", GIB)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("not supported") && err.contains("iosteer_backpressure"),
            "{err}"
        );
    }

    #[test]
    fn suffixes_follow_fio() {
        assert_eq!(size_value("4k"), Some(4096));
        assert_eq!(size_value("1MiB"), Some(1 << 20));
        assert_eq!(size_value("2g"), Some(2 << 30));
        assert_eq!(size_value("x"), None);
        assert_eq!(time_value("90", 1_000_000_000), Some(Nanos::from_secs(90)));
        assert_eq!(
            time_value("500ms", 1_000_000_000),
            Some(Nanos::from_millis(500))
        );
        assert_eq!(time_value("2m", 1_000_000_000), Some(Nanos::from_secs(120)));
        assert_eq!(time_value("100", 1_000), Some(Nanos::from_micros(100)));
    }
}
