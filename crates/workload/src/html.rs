//! One self-contained HTML page per `--out`: `report.html`, readable offline,
//! on a phone and on paper. Charts are inline SVG drawn by [`crate::chart`],
//! the style sheet is inline, and nothing is fetched: no scripts, fonts or
//! images from elsewhere.
//!
//! [`Page`] is the frame every report shares (summary, charts, tables,
//! notes); [`run::run_page`] fills it with the runs of `sim` and `run`, and
//! the study crate fills it with a sweep or a probe.

pub mod run;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::chart::{svg_string, Canvas, DrawResult, OutputError};

/// The file name of the page in an `--out` directory.
pub const FILE_NAME: &str = "report.html";

/// A chart of a page that could not be drawn.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum HtmlError {
    #[error("chart `{chart}`: {message}")]
    Chart { chart: String, message: String },
}

/// What a report was asked, said at its top.
#[derive(Clone, Debug, Default)]
pub struct Context {
    /// The command that reproduces the run: the binary's arguments.
    pub command: Vec<String>,
    /// What the run served: a scenario, a job file, a trace.
    pub workload: String,
    /// The drive's configuration (TOML), when it is known.
    pub drive_config: Option<String>,
    /// Warnings about the whole page (an error that ended the run early).
    pub warnings: Vec<String>,
}

impl Context {
    /// The head of a report made by the command `argv` (its binary named
    /// without its directory: the page says what to type, not where this
    /// build lived), serving `workload` on the drive `drive_config`.
    pub fn new(
        argv: impl IntoIterator<Item = String>,
        workload: String,
        drive_config: Option<String>,
    ) -> Context {
        let mut command: Vec<String> = argv.into_iter().collect();
        if let Some(name) = command.first().and_then(|a| Path::new(a).file_name()) {
            command[0] = name.to_string_lossy().into_owned();
        }
        Context {
            command,
            workload,
            drive_config,
            warnings: Vec::new(),
        }
    }
}

/// `text` safe to place in HTML text and in quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `argv` as a shell would need it typed: arguments with spaces or shell
/// characters single-quoted.
pub fn shell_words(argv: &[String]) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./:=,@%+-".contains(c);
    argv.iter()
        .map(|a| {
            if !a.is_empty() && a.chars().all(plain) {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A chart of `size` drawn to inline SVG; `name` names it in an error.
pub fn chart(
    name: &str,
    size: (u32, u32),
    draw: impl FnOnce(&Canvas) -> DrawResult,
) -> Result<String, HtmlError> {
    let svg = svg_string(size, draw).map_err(|e| HtmlError::Chart {
        chart: name.to_string(),
        message: e.to_string(),
    })?;
    // Inline SVG needs no namespace, and the page then names no address.
    Ok(svg.replacen(r#" xmlns="http://www.w3.org/2000/svg""#, "", 1))
}

/// Writes `page` as report.html into `dir`; the path written.
pub fn write(dir: &Path, page: &str) -> Result<PathBuf, OutputError> {
    let path = dir.join(FILE_NAME);
    crate::output::write_whole(&path, page.as_bytes()).map_err(|source| OutputError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

const STYLE: &str = "\
body{font:15px/1.45 system-ui,sans-serif;color:#222;max-width:960px;margin:0 auto;padding:0 12px 40px}\
h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:1.6em}h3{font-size:1.05em}\
svg{display:block;max-width:100%;height:auto}figure{margin:10px 0;break-inside:avoid}\
.scroll{overflow-x:auto}table{border-collapse:collapse;font-size:13px;font-variant-numeric:tabular-nums}\
th,td{padding:2px 7px;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}\
th{background:#f3f3f3}td.l,th.l{text-align:left}\
pre,code{font:13px/1.35 ui-monospace,monospace}pre{background:#f6f6f6;padding:8px;white-space:pre-wrap;word-break:break-all}\
.summary{background:#f4f8fb;border-left:4px solid #1f77b4;padding:4px 14px}\
.warn{background:#fff3cd;border-left:4px solid #d62728;padding:6px 12px}\
.notes li{margin:2px 0}\
@media print{body{max-width:none;font-size:12px}.scroll{overflow:visible}h2{break-before:auto;break-after:avoid}}";

/// A page being written, part by part; [`Page::finish`] closes it.
#[derive(Debug)]
pub struct Page {
    title: String,
    body: String,
    charts: usize,
}

impl Page {
    pub fn new(title: &str) -> Page {
        Page {
            title: title.to_string(),
            body: format!("<h1>{}</h1>\n", escape(title)),
            charts: 0,
        }
    }

    /// Charts placed so far.
    pub fn charts(&self) -> usize {
        self.charts
    }

    pub fn heading(&mut self, text: &str) {
        let _ = writeln!(self.body, "<h2>{}</h2>", escape(text));
    }

    pub fn subheading(&mut self, text: &str) {
        let _ = writeln!(self.body, "<h3>{}</h3>", escape(text));
    }

    pub fn paragraph(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p>{}</p>", escape(text));
    }

    /// A note that must not be missed (a run that stopped early).
    pub fn warning(&mut self, text: &str) {
        let _ = writeln!(
            self.body,
            "<p class=\"warn\"><b>Note:</b> {}</p>",
            escape(text)
        );
    }

    /// The summary: the question, one answer a line, and the command.
    pub fn summary(&mut self, question: &str, answers: &[String], command: &[String]) {
        self.body += "<section class=\"summary\">\n";
        let _ = writeln!(self.body, "<p><b>Question:</b> {}</p>", escape(question));
        self.body += "<p><b>Answer:</b></p>\n";
        self.list(answers, "answers");
        if !command.is_empty() {
            let _ = writeln!(
                self.body,
                "<p><b>Reproduce:</b></p><pre><code>{}</code></pre>",
                escape(&shell_words(command))
            );
        }
        self.body += "</section>\n";
    }

    fn list(&mut self, items: &[String], class: &str) {
        let _ = writeln!(self.body, "<ul class=\"{class}\">");
        for item in items {
            let _ = writeln!(self.body, "<li>{}</li>", escape(item));
        }
        self.body += "</ul>\n";
    }

    /// Notes and warnings a report carries, under a small heading.
    pub fn notes(&mut self, notes: &[String]) {
        if notes.is_empty() {
            return;
        }
        self.body += "<p><b>Notes:</b></p>\n";
        self.list(notes, "notes");
    }

    /// An inline SVG chart from [`chart`].
    pub fn chart(&mut self, svg: &str) {
        self.charts += 1;
        let _ = writeln!(self.body, "<figure>{svg}</figure>");
    }

    /// A table; the first `left` columns are text, the rest numbers.
    pub fn table(&mut self, head: &[&str], rows: &[Vec<String>], left: usize) {
        let class = |i: usize| if i < left { " class=\"l\"" } else { "" };
        self.body += "<div class=\"scroll\"><table>\n<tr>";
        for (i, h) in head.iter().enumerate() {
            let _ = write!(self.body, "<th{}>{}</th>", class(i), escape(h));
        }
        self.body += "</tr>\n";
        for row in rows {
            self.body += "<tr>";
            for (i, cell) in row.iter().enumerate() {
                let _ = write!(self.body, "<td{}>{}</td>", class(i), escape(cell));
            }
            self.body += "</tr>\n";
        }
        self.body += "</table></div>\n";
    }

    /// Text kept as laid out: a terminal table, a configuration file.
    pub fn preformatted(&mut self, text: &str) {
        let _ = writeln!(
            self.body,
            "<div class=\"scroll\"><pre>{}</pre></div>",
            escape(text)
        );
    }

    /// The whole document.
    pub fn finish(self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{}</body>\n</html>\n",
            escape(&self.title),
            self.body
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape(r#"<job "a"> & 'b'"#),
            "&lt;job &quot;a&quot;&gt; &amp; &#39;b&#39;"
        );
    }

    #[test]
    fn quotes_shell_words_that_need_it() {
        let argv = [
            "iosteer",
            "sim",
            "--job",
            "my job's.fio",
            "--sched",
            "netflix:read_bias=100",
        ];
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            shell_words(&argv),
            r"iosteer sim --job 'my job'\''s.fio' --sched netflix:read_bias=100"
        );
    }
}
