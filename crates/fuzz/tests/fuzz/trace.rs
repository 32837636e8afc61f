use iosteer_fuzz::{fuzz, head, repo_file, Outcome};
use iosteer_sched::Nanos;
use iosteer_workload::iolog::{IologOptions, Skip};
use iosteer_workload::trace::{self, Devices, Event, Options, TimeUnit, TraceFormat, Window};

/// Lines kept of a sample trace for a seed.
const SEED_LINES: usize = 40;

fn text_seed(path: &str) -> Vec<u8> {
    head(&repo_file(path), SEED_LINES)
}

/// The samples of `format`, then one of them with a line of every other
/// format's sample spliced in: a reader that meets another format's lines
/// must refuse them or skip them, not fall over.
fn seeds(format: TraceFormat) -> Vec<Vec<u8>> {
    let samples: Vec<(TraceFormat, Vec<u8>)> =
        vec![
        (TraceFormat::Ascii, text_seed("traces/financial1-excerpt.ascii")),
        (TraceFormat::Ascii, text_seed("traces/tpcc-small.trace")),
        (TraceFormat::Blkparse, text_seed("traces/blkparse-sample.txt")),
        (TraceFormat::Ftrace, text_seed("traces/vda-ftrace-sample.txt")),
        (TraceFormat::Blktrace, repo_file("traces/synthetic.blktrace.0")),
        (TraceFormat::Blktrace, repo_file("traces/synthetic.blktrace.1")),
        (TraceFormat::Iolog, text_seed("traces/fio-iolog-sample.log")),
        // spc, msr, alibaba, tencent and fiu have no sample in the repository:
    // their documented layouts.
        (
            TraceFormat::Spc,
            b"0,20941264,8192,W,0.551706\n0,20939840,8192,W,0.554041\n1,3436288,4096,R,0.556231\n"
                .to_vec(),
        ),
        (
            TraceFormat::Msr,
            b"128166372003061629,hm,1,Read,3154152448,4096,41286\n\
              128166372016382155,hm,1,Write,3154152448,4096,1963\n\
              128166372026382245,prxy,0,Read,1024,512,100\n"
                .to_vec(),
        ),
        (
            TraceFormat::Alibaba,
            b"device_id,opcode,offset,length,timestamp\n\
              3,W,126703644672,4096,1577808000000626\n\
              0,R,8192,16384,1577808000001626\n"
                .to_vec(),
        ),
        (
            TraceFormat::Tencent,
            b"1538323200,1024,8,0,1063\n1538323200,2048,16,1,1063\n1538323201,0,8,1,7\n".to_vec(),
        ),
        (
            TraceFormat::Systor,
            b"Timestamp,Response,IOType,LUN,Offset,Size\n\
              1456135200.013118000,0.001,W,0,4096,4096\n\
              1456135202.013118000,0.001,,3,8192,131072\n"
                .to_vec(),
        ),
        (
            TraceFormat::Fiu,
            b"89968195792462 20782 gzip 283193184 8 R 6 0 56f11b711d91a065a2b6458eca924523\n\
              89968195892462 1432 kworker/u8:2 fs 100 16 W 6 1 0123456789abcdef\n"
                .to_vec(),
        ),
    ];
    let mut seeds: Vec<Vec<u8>> = samples
        .iter()
        .filter(|(f, _)| *f == format)
        .map(|(_, s)| s.clone())
        .collect();
    let mut mixed = seeds[0].clone();
    for (_, other) in samples.iter().filter(|(f, _)| *f != format) {
        mixed.extend_from_slice(&head(other, 1));
    }
    seeds.push(mixed);
    seeds
}

/// Options drawn from the input's length, so each case also varies them.
fn options(bytes: &[u8]) -> Options {
    let n = bytes.len();
    let units = [TimeUnit::Ns, TimeUnit::Us, TimeUnit::Ms, TimeUnit::S];
    // Mostly real speeds; the extremes push arrivals past the clock's range.
    let speeds = [1.0, 1.0, 1.0, 2.0, 0.5, 1e-300, 1e300];
    Options {
        unit: units[n % units.len()],
        speed: speeds[n / 4 % speeds.len()],
        devices: if n / 20 % 2 == 0 {
            Devices::Merge
        } else {
            Devices::Separate
        },
        event: [Event::Queue, Event::Issue][n / 40 % 2],
        // fio's replay options, for iologs: each now and then.
        iolog: IologOptions {
            no_stall: n / 80 % 2 == 1,
            time_scale: [100, 100, 1, 50, 200, u32::MAX][n / 7 % 6],
            skip: Skip {
                read: n % 11 == 0,
                write: n % 13 == 0,
                trim: n % 17 == 0,
                sync: n % 19 == 0,
            },
            scale: [1, 1, 0, 2, 4096][n / 3 % 5],
            align: [0, 0, 512, 4096][n / 5 % 4],
            redirect: n % 23 == 0,
        },
        // Now and then a window, some reaching past the trace's end.
        window: [
            None,
            None,
            Some(Window {
                start: Nanos::from_micros(1),
                end: Some(Nanos::from_secs(1)),
            }),
            Some(Window {
                start: Nanos::ZERO,
                end: None,
            }),
        ][n / 9 % 4],
    }
}

fn check(bytes: &[u8], format: TraceFormat) -> Outcome {
    let options = options(bytes);
    let Ok(read) = trace::read(bytes, "fuzz.trace", format, &options) else {
        return Outcome::Refused;
    };
    if read.records.is_empty() {
        return Outcome::Violation("an accepted trace has no records".into());
    }
    if read.records.windows(2).any(|w| w[0].at > w[1].at) {
        return Outcome::Violation("records out of arrival order".into());
    }
    if let Some(problem) = replayed_otherwise(bytes, format, &options, &read) {
        return Outcome::Violation(problem);
    }
    Outcome::Accepted
}

/// The same bytes replayed from a file (streamed when in time order)
/// differ from what was read in memory: how, if they do.
fn replayed_otherwise(
    bytes: &[u8],
    format: TraceFormat,
    options: &Options,
    read: &trace::Trace,
) -> Option<String> {
    static CASE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let case = CASE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("iosteer-fuzz-{}-{case}", std::process::id()));
    let path = dir.join(format!("{format}.trace"));
    let written = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&path, bytes));
    let problem = match written {
        Ok(()) => differs(&path.to_string_lossy(), format, options, read),
        Err(e) => Some(format!(
            "{}: {e} (the comparison needs a file)",
            path.display()
        )),
    };
    // A directory of its own for each case: removed whole, whatever is in it.
    let _ = std::fs::remove_dir_all(&dir);
    problem
}

fn differs(
    path: &str,
    format: TraceFormat,
    options: &Options,
    read: &trace::Trace,
) -> Option<String> {
    let drive = (u64::MAX, 4096);
    let replay = match trace::open_replay(path, format, options, trace::Fit::Refuse, drive) {
        Ok(replay) => replay,
        Err(e) => return Some(format!("read in memory, refused from a file: {e}")),
    };
    let records: Result<Vec<_>, _> = replay.records.cursor().collect();
    match records {
        Ok(records) if records == read.records && replay.notes == read.notes => None,
        Ok(records) => Some(format!(
            "from a file (streamed: {}): {} records, notes {:?}; in memory: {} records, notes {:?}",
            replay.records.is_streamed(),
            records.len(),
            replay.notes,
            read.records.len(),
            read.notes
        )),
        Err(e) => Some(format!("read in memory, failed from a file: {e}")),
    }
}

fn target(format: TraceFormat) {
    let seeds = seeds(format);
    fuzz(&format!("trace-{format}"), &seeds, |bytes| {
        check(bytes, format)
    });
}

/// One fuzz test a trace format, each with its own name and budget.
macro_rules! trace_targets {
    ($($name:ident: $format:ident,)*) => {$(
        #[test]
        fn $name() {
            target(TraceFormat::$format);
        }
    )*};
}

trace_targets! {
    ascii_traces: Ascii,
    spc_traces: Spc,
    msr_traces: Msr,
    alibaba_traces: Alibaba,
    tencent_traces: Tencent,
    fiu_traces: Fiu,
    systor_traces: Systor,
    blkparse_traces: Blkparse,
    ftrace_traces: Ftrace,
    blktrace_traces: Blktrace,
    iolog_traces: Iolog,
}
