//! `--trace-window`: the span of a trace's own time that is replayed, and
//! what the replay says of the requests left out.

use super::*;

/// A span of a trace's own time (`1h..2h`, `..10m`, `30m..`), counted from
/// its first request (an iolog's from the run's start), before the replay
/// speed: only requests arriving in it are replayed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Window {
    pub start: Nanos,
    /// `None`: to the trace's end.
    pub end: Option<Nanos>,
}

impl Window {
    /// `START..END`, either end left out, times as fio writes them (`90s`,
    /// `1h`, `500ms`; a bare number is seconds).
    pub fn parse(text: &str) -> Result<Window, WindowError> {
        let syntax = |detail: String| WindowError::Syntax {
            text: text.to_string(),
            detail,
        };
        let (start, end) = match text.split_once("..") {
            Some((_, end)) if end.starts_with('.') => return Err(syntax(String::new())),
            Some(ends) => ends,
            None => return Err(syntax(String::new())),
        };
        let at = |t: &str| {
            iosteer_sched::units::parse_duration(t.trim(), Some(Nanos::from_secs(1)))
                .map_err(|e| syntax(format!(": {e}")))
        };
        let start = match start.trim() {
            "" => Nanos::ZERO,
            t => at(t)?,
        };
        let end = match end.trim() {
            "" => None,
            t => Some(at(t)?),
        };
        if end.is_some_and(|end| end <= start) {
            return Err(WindowError::Empty {
                text: text.to_string(),
            });
        }
        Ok(Window { start, end })
    }

    /// The absolute bounds `[lo, hi)` of the window in a trace whose time
    /// zero is `origin`.
    pub(crate) fn bounds(&self, origin: u128) -> (u128, u128) {
        let lo = origin.saturating_add(u128::from(self.start.0));
        let hi = self
            .end
            .map_or(u128::MAX, |e| origin.saturating_add(u128::from(e.0)));
        (lo, hi)
    }
}

impl fmt::Display for Window {
    /// In seconds, to the nanosecond and no further (`0.5s..90s`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = |n: Nanos| {
            let text = format!("{}.{:09}", n.0 / 1_000_000_000, n.0 % 1_000_000_000);
            format!("{}s", text.trim_end_matches('0').trim_end_matches('.'))
        };
        let end = self.end.map(secs).unwrap_or_default();
        write!(f, "{}..{end}", secs(self.start))
    }
}

/// A time window that does not parse, or holds no time.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum WindowError {
    #[error("`{text}`: expected START..END, such as 1h..2h (either end may be left out){detail}")]
    Syntax { text: String, detail: String },
    #[error("`{text}`: the window is empty: it ends where or before it starts")]
    Empty { text: String },
}

/// What `--trace-window` left out.
pub(crate) fn window_note(window: &Window, before: u64, after: u64) -> String {
    format!(
        "--trace-window {window}: {before} requests arrived before it and {after} after it, \
         not replayed (the notes on reading the trace count all of it; the other notes, only \
         the requests replayed)"
    )
}

pub(crate) fn empty_window(file: &str, window: &Window) -> TraceError {
    TraceError::EmptyWindow {
        file: file.to_string(),
        window: window.to_string(),
    }
}
