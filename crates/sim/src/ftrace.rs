//! The kernel's block tracepoints as ftrace prints them (`trace_pipe` or
//! `trace` with `events/block/...` enabled), the events blktrace records:
//!
//! ```text
//! bash-9440 [001] ..... 2477.517899: block_rq_issue: 254,0 W 4096 () 193046600 + 8 be,0,4 [bash]
//! fio-27260 [001] ..... 2781.175579: block_bio_queue: 254,0 RA 20915840 + 32 [fio]
//! ```
//!
//! task-pid (the task's name may hold spaces), CPU, flags, seconds, event,
//! then the event's fields: device, RWBS ([`crate::blkparse`]), and
//! `sector + count` in 512-byte sectors. `block_bio_queue` or
//! `block_rq_issue` is a request's arrival ([`Event`]); every other event is
//! skipped and counted, and the kernel's `[LOST n EVENTS]` markers are
//! counted too: those requests are missing from the trace.

use crate::blkparse::{push_request, rwbs};
use crate::trace::{DeviceKey, Event, LineFormat, LineParser, Place, Sink, TraceError};

pub(crate) struct Ftrace {
    event: Event,
}

impl Ftrace {
    pub(crate) fn new(event: Event) -> Ftrace {
        Ftrace { event }
    }

    fn arrival_event(&self) -> &'static str {
        match self.event {
            Event::Queue => "block_bio_queue",
            Event::Issue => "block_rq_issue",
        }
    }
}

/// `seconds:` then `event:`: where the header ends, found from the left
/// past the task name (which may hold spaces but not such a pair).
fn event_at(tokens: &[&str]) -> Option<usize> {
    tokens.windows(2).position(|pair| {
        let time = pair[0].strip_suffix(':').unwrap_or("");
        let decimal = !time.is_empty() && time.bytes().all(|b| b.is_ascii_digit() || b == b'.');
        decimal && pair[1].len() > 1 && pair[1].ends_with(':')
    })
}

/// `CPU:2 [LOST 123 EVENTS]`: how many events the kernel dropped.
fn lost_events(text: &str) -> Option<u64> {
    let rest = text.split_once("[LOST ")?.1;
    rest.split_whitespace().next()?.parse().ok()
}

impl LineFormat for Ftrace {
    fn line(&mut self, p: &LineParser, text: &str, sink: &mut Sink) -> Result<(), TraceError> {
        if let Some(n) = lost_events(text) {
            sink.tally.add(
                "events the kernel lost (its buffer overflowed; those requests are missing)",
                n,
            );
            return Ok(());
        }
        if text.starts_with("#####") {
            // `##### CPU 2 buffer started ####`: where a CPU's buffer begins.
            return Ok(());
        }
        let tokens: Vec<&str> = text.split_whitespace().collect();
        let Some(i) = event_at(&tokens) else {
            return Err(p.bad_line("no `seconds: event:` pair"));
        };
        let event = tokens[i + 1].trim_end_matches(':');
        if event != self.arrival_event() {
            sink.tally.skip(event);
            return Ok(());
        }
        let at = p.seconds("time", tokens[i].trim_end_matches(':'))?;
        let fields = &tokens[i + 2..];
        request(p, at, fields, sink)
    }
}

/// `maj,min RWBS ... sector + count ...`: the request's fields after the
/// event's name (block_rq_issue has the byte count and command between).
fn request(p: &LineParser, at: u128, fields: &[&str], sink: &mut Sink) -> Result<(), TraceError> {
    let Some(plus) = fields.iter().position(|f| *f == "+").filter(|&j| j >= 2) else {
        return Err(p.bad_line("no `sector + count` after the event"));
    };
    if fields.len() <= plus + 1 {
        return Err(p.bad_line("no count after `sector +`"));
    }
    let rwbs = rwbs(p, "RWBS", fields[1])?;
    let sector: u64 = p.number("sector", fields[plus - 1], "a sector number")?;
    let sectors: u64 = p.number("count", fields[plus + 1], "a sector count")?;
    let device = DeviceKey::Name(fields[0].to_string());
    let span = (sector.saturating_mul(512), sectors.saturating_mul(512));
    push_request(sink, rwbs, (at, device, span), Place::Line(p.line))
}
