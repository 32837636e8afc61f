//! A job file's sections: `[global]` options carried into each job section
//! that follows them, each option with its line.

use super::{FioError, MAX_SECTION_OPTIONS};
use crate::fio_text::Line;

#[derive(Clone, Debug)]
pub(super) struct Section {
    pub(super) name: String,
    /// The name in its `[header]`, which `name=` does not change.
    pub(super) header: String,
    pub(super) line: usize,
    /// `[global]` options in force where the section starts, then its own.
    pub(super) options: Vec<(String, String, usize)>,
    /// Where each `[global]` section's options start in `options`, then
    /// where the section's own start: fio reads each section's sizes with
    /// the `kb_base` in force in it.
    pub(super) scopes: Vec<usize>,
}

/// The job sections of a job file, each with the `[global]` options in
/// force where it starts, then its own (bounded: a section takes at most
/// [`MAX_SECTION_OPTIONS`]).
pub(super) fn sections(lines: &[Line], file: &str) -> Result<Vec<Section>, FioError> {
    let mut global: Vec<(String, String, usize)> = Vec::new();
    let mut global_starts: Vec<usize> = Vec::new();
    let mut sections: Vec<Section> = Vec::new();
    let mut in_global = false;
    for line in lines {
        let text = line.text.as_str();
        if let Some(name) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            let name = name.trim().to_string();
            in_global = name == "global";
            if in_global {
                global_starts.push(global.len());
            } else {
                let mut scopes = global_starts.clone();
                scopes.push(global.len());
                sections.push(Section {
                    header: name.clone(),
                    name,
                    line: line.number,
                    options: global.clone(),
                    scopes,
                });
            }
            continue;
        }
        if text.starts_with('[') {
            return Err(FioError {
                file: file.to_string(),
                line: line.number,
                message: format!(
                    "`{text}`: a section header is `[name]` alone on its line (a comment may follow)"
                ),
            });
        }
        let (key, value) = text.split_once('=').unwrap_or((text, ""));
        let empty = text.contains('=') && value.trim().is_empty();
        if empty && key.trim() == "bssplit" {
            // fio 3.33 runs such a job with its `bs`.
            continue;
        }
        if empty && !TAKE_EMPTY.contains(&key.trim()) {
            return Err(FioError {
                file: file.to_string(),
                line: line.number,
                message: format!(
                    "`{text}`: an empty value, which fio 3.33 refuses (it drops the job): give `{}` a value",
                    key.trim()
                ),
            });
        }
        if spaced_value(value) {
            return Err(FioError {
                file: file.to_string(),
                line: line.number,
                message: format!(
                    "`{text}`: no space after `=` (fio 3.33 keeps the space: it reads `bs= 8k` as 8 bytes, refuses `size = 4M` as 4 bytes and drops the job of `rw = randread`); write `{}={}`",
                    key.trim(),
                    value.trim()
                ),
            });
        }
        let option = (
            key.trim().to_string(),
            value.trim().to_string(),
            line.number,
        );
        let in_force = match sections.last_mut() {
            _ if in_global => {
                global.push(option);
                global.len()
            }
            Some(section) => {
                section.options.push(option);
                section.options.len()
            }
            None => {
                return Err(FioError {
                    file: file.to_string(),
                    line: line.number,
                    message: format!("`{text}` comes before any [section]"),
                })
            }
        };
        if in_force > MAX_SECTION_OPTIONS {
            return Err(FioError {
                file: file.to_string(),
                line: line.number,
                message: format!(
                    "more than {MAX_SECTION_OPTIONS} options in force in one section ([global]'s included); at most {MAX_SECTION_OPTIONS}"
                ),
            });
        }
    }
    Ok(sections)
}

/// Options fio 3.33 takes with an empty value (`write_bw_log=`), where it
/// refuses one for every other (`bssplit=` too: it keeps `bs`).
const TAKE_EMPTY: &[&str] = &[
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
    "ignore_error",
    "cpus_allowed",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "log_compression_cpus",
    "verify_async_cpus",
    "replay_skip",
];

/// Whether an option's value starts with a space fio keeps and that
/// changes what it reads: anything but a plain number (`iodepth = 32` reads
/// as 32 to fio too).
fn spaced_value(value: &str) -> bool {
    let trimmed = value.trim();
    value.starts_with(char::is_whitespace)
        && !trimmed.is_empty()
        && !trimmed.bytes().all(|b| b.is_ascii_digit())
}
