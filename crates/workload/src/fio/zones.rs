//! fio's strided zones: `zonemode=strided` with `zonesize`, `zonerange`
//! and `zoneskip`. The job works in one zone of `zonerange` bytes until it
//! has moved `zonesize` bytes there (going round the zone again when that
//! is more), then moves on `zonerange + zoneskip` bytes, back to its file's
//! start once past its end ([`crate::job_shape::StridedZones`]). As in fio,
//! `zonerange` defaults to `zonesize`, zones serve only a job of one file,
//! and `zonecapacity` (a zoned drive's) is ignored; zoned drives
//! (`zonemode=zbd`) are not modelled.

use super::*;
use crate::job_shape::StridedZones;

/// What a section's zone options said.
#[derive(Default)]
pub(super) struct Zones {
    mode: Option<String>,
    size: Option<u64>,
    range: Option<u64>,
    skip: u64,
    /// The line of the last zone option, for errors.
    line: usize,
}

impl Zones {
    /// Reads `key` if it is a zone option (`Ok(false)` if it is not); an
    /// error is the message.
    pub(super) fn option(&mut self, setting: &Setting) -> Result<bool, String> {
        let bad = |expected: &str| setting.bad(expected);
        let size = |value: &str| {
            size_in(value, setting.kb_base).ok_or_else(|| bad("a size, such as 256m"))
        };
        match setting.key {
            "zonemode" => match setting.value {
                "none" | "strided" => self.mode = Some(setting.value.to_string()),
                "zbd" => {
                    return Err("zonemode=zbd: zoned drives are not modelled; none and strided (fio's strided zones) are".into())
                }
                _ => return Err(bad("none, strided or zbd")),
            },
            "zonesize" => self.size = Some(size(setting.value)?),
            "zonerange" => self.range = Some(size(setting.value)?),
            "zoneskip" => self.skip = size(setting.value)?,
            "zonecapacity" => {
                size(setting.value)?;
            }
            _ => return Ok(false),
        }
        self.line = setting.line;
        Ok(true)
    }

    /// The zones of a job of `files` files of `file_size` bytes, sequential
    /// or not, of blocks of `smallest_block` bytes at least, checked as fio
    /// checks them; an error is the line it is about and the message.
    pub(super) fn finish(
        self,
        job: &str,
        (files, file_size): (u64, u64),
        (sequential, smallest_block): (bool, u64),
        notes: &mut Vec<String>,
    ) -> Result<Option<StridedZones>, (usize, String)> {
        let refuse = |message: &str| Err((self.line, format!("job [{job}]: {message}")));
        let size = self.size.filter(|&s| s > 0);
        let Some(size) = size else {
            return match self.mode.as_deref() {
                Some("strided") => refuse("zonemode=strided needs a zonesize, as fio says (\"--zonesize must be specified\")"),
                _ => Ok(None),
            };
        };
        match self.mode.as_deref() {
            Some("none") => return refuse("zonemode=none and a zonesize do not go together, as fio says (\"not compatible\"): give zonemode=strided"),
            None => notes.push(format!(
                "job {job}: zonesize without zonemode: strided zones, as later fio releases take it (fio 3.33 refuses it: \"zonemode=none and zonesize are not compatible\")"
            )),
            Some(_) => {}
        }
        if files > 1 {
            notes.push(format!(
                "job {job}: fio uses strided zones only in a job of one file: its {files} files are served without zones, as fio serves them"
            ));
            return Ok(None);
        }
        let zones = StridedZones {
            size,
            range: self.range.filter(|&r| r > 0).unwrap_or(size),
            skip: self.skip,
        };
        if !sequential && zones.range < smallest_block {
            return refuse(&format!(
                "zonerange {} holds no block of {smallest_block} bytes: fio issues no I/O for such a random job",
                zones.range
            ));
        }
        if let Some(start) = zones.cut_by_the_end(file_size, sequential) {
            notes.push(format!(
                "job {job}: its zone at {start} runs past its file's end ({file_size} bytes): fio ends the pass at its first request past the end (and the job, unless it has more to move: io_size, loops or time_based start it again at the file's start); here its requests stay in the file"
            ));
        }
        Ok(Some(zones))
    }
}
