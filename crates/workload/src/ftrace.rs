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

use crate::blkparse::{push_request, rwbs, Stacked};
use crate::trace::{DeviceKey, Event, LineFormat, LineParser, Place, Sink, TraceError};

pub(crate) struct Ftrace {
    event: Event,
    stacked: Stacked,
}

impl Ftrace {
    pub(crate) fn new(event: Event) -> Ftrace {
        Ftrace {
            event,
            stacked: Stacked::default(),
        }
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
        if text.starts_with("#####") || text.starts_with("=>") {
            // `##### CPU 2 buffer started ####`: where a CPU's buffer begins;
            // `=> submit_bio`: a frame of a stack trace (`options/stacktrace`).
            return Ok(());
        }
        if text.ends_with("stack trace>") {
            // `<stack trace>` or `<user stack trace>`: its frames follow.
            sink.tally.skip("<stack trace>");
            return Ok(());
        }
        let tokens: Vec<&str> = text.split_whitespace().collect();
        let Some(i) = event_at(&tokens) else {
            return Err(p.bad_line("no `seconds: event:` pair"));
        };
        // `perf script` names the tracepoints `block:block_bio_queue`.
        let event = tokens[i + 1].trim_end_matches(':');
        let event = event.strip_prefix("block:").unwrap_or(event);
        if event != self.arrival_event() {
            if let ("block_bio_remap", [_, _, fields @ ..]) = (event, &tokens[i + 2..]) {
                self.stacked.remapped(fields, sink);
            }
            sink.tally.skip(event);
            return Ok(());
        }
        let time = tokens[i].trim_end_matches(':');
        // The kernel prints `secs.usecs` for its nanosecond clocks; a count
        // without a point is a counter clock's (x86-tsc, counter, uptime),
        // of cycles, events or jiffies: 10,000 cycles read as 10,000 s.
        if !time.contains('.') {
            return Err(p.bad(
                "time",
                time,
                "seconds with a point (secs.usecs); a count without one is of a counter trace_clock (x86-tsc, counter, uptime), which has no time unit: record with trace_clock=local, global, mono or boot",
            ));
        }
        let at = p.seconds("time", time)?;
        let fields = &tokens[i + 2..];
        request(p, at, fields, (sink, &mut self.stacked))
    }
}

/// `maj,min RWBS ... sector + count ...`: the request's fields after the
/// event's name (block_rq_issue has the byte count and command between).
fn request(
    p: &LineParser,
    at: u128,
    fields: &[&str],
    (sink, stacked): (&mut Sink, &mut Stacked),
) -> Result<(), TraceError> {
    let Some(plus) = fields.iter().position(|f| *f == "+").filter(|&j| j >= 2) else {
        return Err(p.bad_line("no `sector + count` after the event"));
    };
    if fields.len() <= plus + 1 {
        return Err(p.bad_line("no count after `sector +`"));
    }
    let rwbs = rwbs(p, "RWBS", fields[1])?;
    let offset = p.sectors("sector", fields[plus - 1], "a sector number")?;
    let len = p.sectors("count", fields[plus + 1], "a sector count")?;
    let span = (offset, len);
    stacked.replays(fields[0]);
    let device = DeviceKey::Name(fields[0].to_string());
    push_request(sink, rwbs, (at, device, span), Place::Line(p.line))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blkparse::tests::{assert_second_lines_refused, by_op, read_event};
    use crate::trace::{fit_counted, read_path, Fit, Options, Trace, TraceFormat};
    use iosteer_sched::Op;

    const SAMPLE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../traces/vda-ftrace-sample.txt"
    );

    fn ftrace(text: &str, event: Event) -> Result<Trace, TraceError> {
        read_event(text, "f.txt", TraceFormat::Ftrace, event)
    }

    #[test]
    fn the_sample_recorded_on_this_machine_replays_by_queue_or_issue() {
        let options = Options::default();
        let mut queue = read_path(SAMPLE, TraceFormat::Ftrace, &options).unwrap();
        // 942 block_bio_queue lines: 413 reads, 460 writes, 20 discards and
        // 49 empty preflush bios (fsync), which are the flushes.
        assert_eq!(by_op(&queue.records), [413, 460, 20, 49]);
        assert!(queue.notes.iter().any(|n| n
            == "1968 events other than the queue event skipped: block_rq_complete 1003, \
                block_rq_issue 965"));
        let end = queue.records.last().unwrap().at;
        assert!(
            end.as_secs_f64() > 1.5 && end.as_secs_f64() < 3.0,
            "{end:?}"
        );
        // vda is 256 GiB: a small drive needs the addresses remapped.
        let remap = fit_counted(&mut queue.records, 8 << 30, 4096, Fit::Wrap, SAMPLE).unwrap();
        assert!(remap.is_some_and(|r| r.moved > 0 && r.cut == 0));

        let issue = Options {
            event: Event::Issue,
            ..options
        };
        let issue = read_path(SAMPLE, TraceFormat::Ftrace, &issue).unwrap();
        assert_eq!(by_op(&issue.records), [413, 483, 20, 49]);
    }

    /// A counter clock's timestamps (`trace_clock=x86-tsc`) have no
    /// point and no unit: 10,000 cycles were read as 10,000 s.
    #[test]
    fn a_counter_clocks_timestamps_are_refused() {
        let text =
            " fio-27585 [000] ..... 5578989120000: block_bio_queue: 254,0 RM 39059456 + 8 [fio]\n";
        let err = ftrace(text, Event::Queue).unwrap_err().to_string();
        assert!(
            err.starts_with("f.txt:1:") && err.contains("trace_clock"),
            "{err}"
        );
    }

    #[test]
    fn task_names_with_spaces_lost_events_and_other_events_are_read_or_counted() {
        let text = "\
# tracer: nop
##### CPU 1 buffer started ####
 lto 2ses7vd2hch-27250   [001] ..s..  2781.176011: block_rq_complete: 254,0 RA () 20915840 + 32 be,0,4 [0]
 my task-1 [000] .....  2781.000001: block_bio_queue: 254,0 WS 8 + 8 [my task]
CPU:1 [LOST 17 EVENTS]
 kworker/0:1H-58 [000] ..... 2781.5: block_rq_issue: 254,0 FF 0 () 0 + 0 none,0,0 [kworker/0:1H]
 kworker/0:1H-58 [000] ..... 2781.6: block_bio_queue: 254,0 FWS 0 + 0 [kworker/0:1H]
 sh-5 [000] ..... 2781.7: sched_switch: prev_comm=sh
";
        let t = ftrace(text, Event::Queue).unwrap();
        assert_eq!(by_op(&t.records), [0, 1, 0, 1]);
        assert_eq!(t.records[1].at.0, 600_000_000 - 1_000);
        assert!(t
            .notes
            .iter()
            .any(|n| n.starts_with("17 events the kernel lost")));
        assert!(t.notes.iter().any(|n| n.contains(
            "3 events other than the queue event skipped: block_rq_complete 1, \
             block_rq_issue 1, sched_switch 1"
        )));
        let t = ftrace(text, Event::Issue).unwrap();
        assert_eq!(
            t.records.iter().map(|r| r.op).collect::<Vec<_>>(),
            [Op::Flush]
        );
    }

    #[test]
    fn a_bio_queued_on_dm_and_again_below_is_noted() {
        let text = "\
 app-7 [004] .... 100.000001: block_bio_queue: 253,1 R 1000 + 8 [app]
 app-7 [004] .... 100.000002: block_bio_remap: 8,3 R 3000 + 8 <- (253,1) 1000
 app-7 [004] .... 100.000002: block_bio_remap: 8,0 R 5000 + 8 <- (8,3) 3000
 app-7 [004] .... 100.000003: block_bio_queue: 8,0 R 5000 + 8 [app]
 app-7 [004] d... 100.000004: block_rq_issue: 8,0 R 0 () 5000 + 8 [app]
";
        let t = ftrace(text, Event::Queue).unwrap();
        assert_eq!(t.records.len(), 2);
        assert!(
            t.notes
                .iter()
                .any(|n| n.starts_with("1 remaps from a device")),
            "{:?}",
            t.notes
        );
        assert_eq!(ftrace(text, Event::Issue).unwrap().records.len(), 1);
    }

    #[test]
    fn stack_traces_and_perf_scripts_event_names_are_read() {
        let text = "\
 kthrotld/8-323 [008] 10929769.540355: block_bio_queue: 8,0 WS 1260299776 + 1024 [kthrotld/8]
 kthrotld/8-323 [008] 10929769.540355: <stack trace>
 => generic_make_request
 => kthread
 dd 12345 [001] 10929769.640390: block:block_bio_queue: 8,0 WSU 2048 + 2048 [dd]
 dd 12345 [001] 10929769.640391: block:block_rq_issue: 8,0 W 2048 + 2048 [dd]
";
        let t = ftrace(text, Event::Queue).unwrap();
        assert_eq!(by_op(&t.records), [0, 2, 0, 0]);
        assert_eq!(t.records[1].len, 2048 * 512);
        assert!(
            t.notes.iter().any(|n| n.contains(
                "2 events other than the queue event skipped: <stack trace> 1, block_rq_issue 1"
            )),
            "{:?}",
            t.notes
        );
    }

    #[test]
    fn a_malformed_ftrace_line_is_an_error_naming_file_and_line() {
        let good = "fio-1 [001] ..... 2781.175579: block_bio_queue: 254,0 RA 20915840 + 32 [fio]\n";
        assert_second_lines_refused(
            ftrace,
            good,
            &[
                (
                    "fio-1 [001] ..... 2781.2: block_bio_queue: 254,0 RA 209 32 [fio]",
                    "f.txt:2: no `sector + count`",
                ),
                (
                    "fio-1 [001] ..... 2781.2: block_bio_queue: 254,0 RQ 209 + 32 [fio]",
                    "f.txt:2: field RWBS `RQ`",
                ),
                (
                    "fio-1 [001] ..... 2781.2: block_bio_queue: 254,0 R x + 32 [fio]",
                    "f.txt:2: field sector `x`",
                ),
                (
                    "fio-1 [001] ..... 2781.2: block_bio_queue: 254,0 R 1 + 36028797018963968 [fio]",
                    "f.txt:2: field count `36028797018963968`: expected a sector count below 2^55",
                ),
                (
                    "fio-1 [001] ..... 2781.2.3: block_bio_queue: 254,0 R 1 + 32 [fio]",
                    "f.txt:2: field time `2781.2.3`",
                ),
                (
                    "just some words",
                    "f.txt:2: no `seconds: event:` pair; expected a line of ftrace",
                ),
            ],
        );
    }
}
