//! A job file's text as fio reads it, before options mean anything:
//! `include FILE` replaced by that file's lines ([`with_includes`]: a
//! relative name is found beside the file that includes it, as fio finds
//! it), comments (`#` or `;` at a line's start or after a value), `${VAR}`
//! from the environment (an undefined one is an error naming it), fio's own
//! `$ncpus`, `$pagesize` and `$mb_memory`. A text given without its files
//! ([`lines`] alone) refuses `include`, naming the line.

use std::io::{self, Read};
use std::path::Path;

use thiserror::Error;

use crate::fio::FioError;

/// Deepest nesting of included files: deeper is taken for a loop.
pub const MAX_INCLUDE_DEPTH: usize = 16;

/// Longest job file read: fio's are a few KiB, and a file given by mistake
/// (a trace, `/dev/zero`) must not fill memory.
pub const MAX_JOB_FILE_BYTES: u64 = 16 << 20;

/// Why a file is not a job file's text: held by the
/// [`io::ErrorKind::InvalidData`] error of [`read_text`].
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotText {
    #[error("is {what}, and a job file is read as plain text: unpack it first ({unpack})")]
    Packed { what: &'static str, unpack: String },
    #[error("is UTF-16 text (a byte-order mark FF FE or FE FF): save it as UTF-8")]
    Utf16,
    #[error("is not UTF-8 text (at byte {byte}): is it a job file?")]
    Binary { byte: usize },
    #[error("is longer than {limit} bytes: not a job file")]
    TooLong { limit: u64 },
}

/// Reads the text of the job file at `path` (or of a file it includes),
/// at most [`MAX_JOB_FILE_BYTES`]; a compressed or archived file, UTF-16,
/// binary or endless input is refused with a [`NotText`] saying which.
pub fn read_text(path: impl AsRef<Path>) -> io::Result<String> {
    let path = path.as_ref();
    let mut bytes = Vec::new();
    let file = std::fs::File::open(path)?;
    file.take(MAX_JOB_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    let refuse = |why: NotText| Err(io::Error::new(io::ErrorKind::InvalidData, why));
    if let Some((what, unpack)) = crate::trace::packed(&bytes) {
        let unpack = unpack.replace("FILE", &path.to_string_lossy());
        return refuse(NotText::Packed { what, unpack });
    }
    if bytes.len() as u64 > MAX_JOB_FILE_BYTES {
        let limit = MAX_JOB_FILE_BYTES;
        return refuse(NotText::TooLong { limit });
    }
    if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
        return refuse(NotText::Utf16);
    }
    String::from_utf8(bytes).or_else(|e| {
        let byte = e.utf8_error().valid_up_to();
        refuse(NotText::Binary { byte })
    })
}

/// A job file's text with its includes in place, and where each of its
/// lines came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Included {
    pub text: String,
    /// Per line of `text` (the first at index 0): its file and line there.
    pub origins: Vec<(String, usize)>,
}

impl Included {
    /// `error`, naming the included file and line it came from rather than
    /// the line of the joined text.
    pub fn locate(&self, mut error: FioError) -> FioError {
        if let Some((file, line)) = error.line.checked_sub(1).and_then(|i| self.origins.get(i)) {
            error.file.clone_from(file);
            error.line = *line;
        }
        error
    }
}

/// `text` (of `file`) with every `include NAME` line replaced by the lines
/// of that file, read by `read`, recursively.
pub fn with_includes(
    text: &str,
    file: &str,
    read: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Result<Included, FioError> {
    let mut out = Included {
        text: String::with_capacity(text.len()),
        origins: Vec::new(),
    };
    include_into(text, file, read, 0, &mut out)?;
    Ok(out)
}

fn include_into(
    text: &str,
    file: &str,
    read: &dyn Fn(&Path) -> std::io::Result<String>,
    depth: usize,
    out: &mut Included,
) -> Result<(), FioError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (index, raw) in text.lines().enumerate() {
        let err = |message: String| FioError {
            file: file.to_string(),
            line: index + 1,
            message,
        };
        let code = raw.find(['#', ';']).map_or(raw, |at| &raw[..at]).trim();
        if depth > 0 && code.starts_with('[') {
            return Err(err(format!(
                "`{code}`: an included file holds options only, no [section] (as fio says: no new sections in included files)"
            )));
        }
        let directive = code.split_whitespace().next() == Some("include");
        let Some(name) = directive.then(|| code["include".len()..].trim()) else {
            out.text.push_str(raw);
            out.text.push('\n');
            out.origins.push((file.to_string(), index + 1));
            continue;
        };
        if name.is_empty() {
            return Err(err("`include` needs a file name: include FILE".into()));
        }
        if depth == MAX_INCLUDE_DEPTH {
            return Err(err(format!(
                "`include {name}`: includes nest deeper than {MAX_INCLUDE_DEPTH} (does a file include itself?)"
            )));
        }
        let path = Path::new(file).parent().unwrap_or(Path::new("")).join(name);
        let included =
            read(&path).map_err(|e| err(format!("`include {name}`: {}: {e}", path.display())))?;
        include_into(&included, &path.to_string_lossy(), read, depth + 1, out)?;
    }
    Ok(())
}

/// One meaningful line: its number in the file and its text, trimmed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub number: usize,
    pub text: String,
}

/// Lines of `text` with comments dropped and variables expanded; `env`
/// looks a variable up (the process environment in [`environment`]).
pub fn lines(
    text: &str,
    file: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Line>, FioError> {
    let mut out = Vec::new();
    // A byte-order mark (editors on Windows write one) is not part of the
    // first line.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let err = |message: String| FioError {
            file: file.to_string(),
            line: number,
            message,
        };
        let code = raw.find(['#', ';']).map_or(raw, |at| &raw[..at]).trim();
        if code.is_empty() {
            continue;
        }
        if code == "include" || code.starts_with("include ") {
            return Err(err(format!(
                "`{code}`: include directives are not read here; paste the included file's options in"
            )));
        }
        let expanded = expand(code, env).map_err(err)?;
        if let Some(expression) = arithmetic(code, &expanded) {
            return Err(err(format!(
                "`{code}`: fio 3.33 works out the arithmetic in `{expression}` (its expression parser); iosteer does not: write the value it comes to"
            )));
        }
        out.push(Line {
            number,
            text: expanded.trim().to_string(),
        });
    }
    Ok(out)
}

/// The process environment, with fio's built-in variables when unset.
pub fn environment(name: &str) -> Option<String> {
    if let Ok(value) = std::env::var(name) {
        return Some(value);
    }
    match name {
        "ncpus" => Some(
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .to_string(),
        ),
        // The simulator's page; fio asks the system, 4 KiB on the machines
        // that run it.
        "pagesize" => Some("4096".into()),
        "mb_memory" => memory_mb().map(|mb| mb.to_string()),
        _ => None,
    }
}

fn memory_mb() -> Option<u64> {
    meminfo_bytes("MemTotal").map(|bytes| bytes >> 20)
}

/// A field of Linux's `/proc/meminfo` (`MemTotal`, `MemAvailable`), bytes;
/// `None` elsewhere.
pub fn meminfo_bytes(field: &str) -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo
        .lines()
        .find(|l| l.split(':').next() == Some(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `${NAME}` from `env`, and fio's `$ncpus`, `$pagesize`, `$mb_memory`.
/// The value of an option line that fio would evaluate as arithmetic: one
/// that starts with `(`, or one with an operator after fio's own variables
/// (`$pagesize`, `$mb_memory`, `$ncpus`) were put in (`size=8*$mb_memory`).
fn arithmetic<'a>(code: &str, expanded: &'a str) -> Option<&'a str> {
    let (_, value) = expanded.split_once('=')?;
    let value = value.trim();
    let builtin = ["$ncpus", "$pagesize", "$mb_memory"]
        .iter()
        .any(|b| code.contains(b));
    let operator = value.contains(['+', '-', '*', '/', '%', '^', '(']);
    (value.starts_with('(') || (builtin && operator)).then_some(value)
}

fn expand(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, consumed) = if let Some(braced) = after.strip_prefix('{') {
            let end = braced
                .find('}')
                .ok_or_else(|| format!("`${{` without a closing `}}` in `{text}`"))?;
            (&braced[..end], end + 2)
        } else if let Some(builtin) = ["ncpus", "pagesize", "mb_memory"]
            .into_iter()
            .find(|b| after.starts_with(b))
        {
            (builtin, builtin.len())
        } else {
            out.push('$');
            rest = after;
            continue;
        };
        let value = env(name).ok_or_else(|| {
            format!("environment variable `{name}` is not set (the job file uses ${{{name}}})")
        })?;
        out.push_str(&value);
        rest = &after[consumed..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "SIZE" => Some("64m".into()),
            "ncpus" => Some("8".into()),
            _ => None,
        }
    }

    #[test]
    fn a_job_file_that_is_not_text_says_what_it_is() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        let job = b"[r]\nrw=randread\nsize=1m\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(job).unwrap();
        let gz = write("j.fio.gz", &gz.finish().unwrap());
        let utf16: Vec<u8> = "\u{feff}[r]\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let cases = [
            (gz.clone(), format!("is gzip-compressed, and a job file is read as plain text: unpack it first (gunzip -k {})", gz.display())),
            (write("u.fio", &utf16), "is UTF-16 text".to_string()),
            (write("b.fio", b"[r]\n\xff\xfe\x00"), "is not UTF-8 text (at byte 4)".to_string()),
            ("/dev/zero".into(), format!("is longer than {MAX_JOB_FILE_BYTES} bytes")),
        ];
        for (path, expected) in cases {
            let err = read_text(&path).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData);
            assert!(err.to_string().starts_with(&expected), "{err}");
        }
        // Plain text reads as it is, and an included file goes through the same.
        let plain = write("j.fio", job);
        assert_eq!(read_text(&plain).unwrap().as_bytes(), job);
        let including = write("i.fio", b"[g]\ninclude j.fio.gz\n");
        let text = read_text(&including).unwrap();
        let err = crate::fio::parse_file(&text, &including.to_string_lossy(), 1 << 30).unwrap_err();
        assert!(err.to_string().contains("is gzip-compressed"), "{err}");
    }

    #[test]
    fn comments_and_variables_as_fio_reads_them() {
        let text =
            "# a comment\n; another\n[job] ; trailing\nsize=${SIZE} # why\nnumjobs=$ncpus\n\n";
        let lines = lines(text, "t.fio", &env).unwrap();
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["[job]", "size=64m", "numjobs=8"]);
        assert_eq!(lines[1].number, 4);
    }

    /// fio 3.33 works out `size=8*$mb_memory` and `bs=(4096*2)`; iosteer
    /// refused them as if the unit were wrong ("expected a size or a
    /// percentage"). A range and a plain variable are no arithmetic.
    #[test]
    fn arithmetic_is_refused_by_name() {
        for (text, expression) in [
            ("[a]\nbs=$ncpus*4k\n", "8*4k"),
            ("[a]\nsize=(4096*2)\n", "(4096*2)"),
        ] {
            let err = lines(text, "t.fio", &env).unwrap_err().to_string();
            assert!(
                err.starts_with("t.fio:2:") && err.contains(&format!("`{expression}`")),
                "{err}"
            );
            assert!(err.contains("works out the arithmetic"), "{err}");
        }
        assert!(lines("[a]\nbsrange=4k-16k\nnumjobs=$ncpus\n", "t.fio", &env).is_ok());
    }

    #[test]
    fn an_unset_variable_and_include_name_the_line() {
        let err = lines("[a]\nsize=${NOPE}\n", "t.fio", &env).unwrap_err();
        assert!(
            err.to_string().starts_with("t.fio:2:") && err.to_string().contains("`NOPE`"),
            "{err}"
        );
        let err = lines("[a]\ninclude other.fio\n", "t.fio", &env).unwrap_err();
        assert!(
            err.to_string().starts_with("t.fio:2:") && err.to_string().contains("include"),
            "{err}"
        );
    }
}
