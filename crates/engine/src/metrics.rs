//! Prometheus metrics of a run (`iosteer run --metrics ADDR`), so a policy
//! steering a real or emulated drive can be watched on a dashboard while it
//! runs, not only read in the report afterwards.
//!
//! [`render`] writes what the scheduler's [`Stats`] and [`Pressure`] hold, the
//! write limit in force, and the drive model's gauges when the backend has
//! them, in the Prometheus text exposition format 0.0.4, by hand: the format is
//! a few lines of `name{labels} value`, and a client library would want its
//! own registry of metrics updated on the I/O path, where [`Stats`] already
//! counts everything.
//!
//! Every per-class metric has a `class` label (`read`, `write`, `trim`,
//! `flush`, the [`Op`] names) and all four classes are always present, so
//! series do not appear and vanish. Device latency is a histogram with
//! FreeBSD cam_iosched's buckets (20 us doubling to about 5.2 s, then
//! open-ended); upstream's buckets exclude their upper bound, so a latency of
//! exactly a bound counts one bucket higher than `le` says, a 1 ns
//! difference. The percentiles the policies steer by, over the last complete
//! stats window, are a summary (its `_sum` and `_count` over the run, as a
//! Prometheus client's summary keeps them); the time requests wait in the
//! scheduler has percentiles but no sum, so its percentiles are gauges with a
//! `percentile` label (`quantile` is reserved to summaries). Percentiles of
//! nothing are NaN, not zero.
//!
//! [`MetricsServer`] serves the latest rendered text on `GET /metrics` from a
//! thread of its own. It never sees the scheduler, which belongs to the run
//! loop's thread: the loop renders about once a second and
//! [`MetricsServer::publish`]es the text.
//!
//! [`Stats`]: iosteer_sched::Stats
//! [`Pressure`]: iosteer_sched::Pressure

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use iosteer_sched::stats::Log2Histogram;
use iosteer_sched::{ClassStats, LatencySummary, Nanos, Op, Scheduler};

use crate::runner::Backend;

/// What the run loop knows that neither the scheduler nor the backend does.
#[derive(Copy, Clone, Debug)]
pub struct RunGauges<'a> {
    /// The loop's clock, time since the run began (the `now` of
    /// [`crate::runner::Observer::second`]): pressure and busy times are read
    /// at it.
    pub now: Nanos,
    /// The scheduler spec the run was given, for the info metric.
    pub spec: &'a str,
}

/// The run's metrics in the Prometheus text format 0.0.4.
pub fn render(sched: &dyn Scheduler, backend: &dyn Backend, run: &RunGauges) -> String {
    let mut out = Exposition(String::new());
    run_metrics(&mut out, sched, run);
    class_counters(&mut out, sched);
    class_gauges(&mut out, sched, run.now);
    latency_metrics(&mut out, sched);
    device_metrics(&mut out, sched, backend, run.now);
    out.0
}

fn run_metrics(out: &mut Exposition, sched: &dyn Scheduler, run: &RunGauges) {
    out.family(
        "iosteer_scheduler_info",
        Kind::Gauge,
        "The scheduler policy and the spec it was built from (always 1).",
    );
    let labels = [("policy", sched.name()), ("spec", run.spec)];
    out.sample("iosteer_scheduler_info", &labels, Value::Int(1));
    out.scalar(
        "iosteer_run_elapsed_seconds",
        Kind::Gauge,
        "Time since the run began.",
        seconds(run.now),
    );
}

/// A per-class counter: its name, help, and where [`ClassStats`] keeps it.
type ClassCounter = (&'static str, &'static str, fn(&ClassStats) -> u64);

const CLASS_COUNTERS: [ClassCounter; 9] = [
    (
        "iosteer_requests_enqueued_total",
        "Requests handed to the scheduler.",
        |c| c.enqueued,
    ),
    (
        "iosteer_requests_dispatched_total",
        "Requests sent to the device.",
        |c| c.dispatched,
    ),
    (
        "iosteer_device_commands_total",
        "Commands sent to the device; fewer than requests when trims are coalesced.",
        |c| c.commands,
    ),
    (
        "iosteer_requests_completed_total",
        "Requests finished, by the device or by the scheduler (elided trims, reads answered from queued writes).",
        |c| c.completed,
    ),
    (
        "iosteer_requests_elided_total",
        "Requests the scheduler completed without sending them (advisory or sped-up trims, reads answered from queued writes).",
        |c| c.elided,
    ),
    (
        "iosteer_requests_failed_total",
        "Requests whose device command failed.",
        |c| c.errors,
    ),
    (
        "iosteer_enqueued_bytes_total",
        "Bytes of the requests handed to the scheduler.",
        |c| c.bytes_enqueued.0,
    ),
    (
        "iosteer_completed_bytes_total",
        "Bytes of the requests finished.",
        |c| c.bytes_completed.0,
    ),
    (
        "iosteer_slow_commands_total",
        "Device commands slower than the policy's bad_latency (upstream's too_long).",
        |c| c.too_long,
    ),
];

fn class_counters(out: &mut Exposition, sched: &dyn Scheduler) {
    for (name, help, value) in CLASS_COUNTERS {
        out.per_class(name, Kind::Counter, help, |op| {
            Value::Int(value(sched.stats().class(op)))
        });
    }
}

fn class_gauges(out: &mut Exposition, sched: &dyn Scheduler, now: Nanos) {
    let stats = sched.stats();
    let pressure = sched.pressure(now);
    let class = |op| stats.class(op);
    out.per_class(
        "iosteer_queued_requests",
        Kind::Gauge,
        "Requests waiting in the scheduler.",
        |op| Value::Int(class(op).queued.into()),
    );
    out.per_class(
        "iosteer_queued_bytes",
        Kind::Gauge,
        "Bytes of the requests waiting in the scheduler.",
        |op| Value::Int(class(op).queued_bytes.0),
    );
    out.per_class(
        "iosteer_in_flight_commands",
        Kind::Gauge,
        "Commands in the device.",
        |op| Value::Int(class(op).in_flight.into()),
    );
    out.per_class(
        "iosteer_limited",
        Kind::Gauge,
        "1 while a limiter or the policy's throttle holds the class back.",
        |op| Value::Int(pressure.class(op).limited.into()),
    );
    out.per_class(
        "iosteer_expected_wait_seconds",
        Kind::Gauge,
        "Estimated time a request queued now would wait before it is sent.",
        |op| seconds(pressure.class(op).expected_wait),
    );
    out.per_class(
        "iosteer_oldest_wait_seconds",
        Kind::Gauge,
        "How long the oldest queued request has waited so far.",
        |op| seconds(pressure.class(op).oldest_wait),
    );
}

fn latency_metrics(out: &mut Exposition, sched: &dyn Scheduler) {
    let stats = sched.stats();
    out.family(
        "iosteer_device_latency_seconds",
        Kind::Histogram,
        "Device latency of commands (dispatch to completion), in FreeBSD cam_iosched's buckets.",
    );
    for op in Op::ALL {
        out.histogram(
            "iosteer_device_latency_seconds",
            op,
            &stats.class(op).device_log2,
        );
    }
    out.per_class(
        "iosteer_device_latency_ema_seconds",
        Kind::Gauge,
        "Moving average of device latency, weight 2^-9 per command as upstream's.",
        |op| seconds(stats.class(op).device_ema.mean()),
    );
    out.summary(
        "iosteer_device_latency_window_seconds",
        "Device latency of commands: quantiles over the policy's last complete \
         stats_window (what steering policies read), sum and count over the run.",
        |op| stats.class(op).device_latency.last_window(),
        |op| &stats.class(op).device_log2,
    );
    out.percentiles(
        "iosteer_queue_wait_seconds",
        "Time requests waited in the scheduler (enqueue to dispatch), percentiles over the run.",
        |op| stats.class(op).queue_wait.run(),
    );
}

fn device_metrics(out: &mut Exposition, sched: &dyn Scheduler, backend: &dyn Backend, now: Nanos) {
    let stats = sched.stats();
    out.scalar(
        "iosteer_device_busy_seconds_total",
        Kind::Counter,
        "Time with at least one command in the device.",
        seconds(stats.device_busy.total(now)),
    );
    out.scalar(
        "iosteer_backlog_seconds_total",
        Kind::Counter,
        "Time with at least one request queued in the scheduler.",
        seconds(stats.scheduler_backlog.total(now)),
    );
    out.scalar(
        "iosteer_load_ratio",
        Kind::Gauge,
        "Upstream's load average: moving average of (commands in flight + requests \
         a limiter holds back) over device slots; 1 is saturated.",
        Value::Float(stats.load()),
    );
    out.scalar(
        "iosteer_device_slots",
        Kind::Gauge,
        "Commands the device accepts at once.",
        Value::Int(backend.view().slots.into()),
    );
    if let Some(limit) = sched.write_limit() {
        let name = "iosteer_write_limit";
        out.family(
            name,
            Kind::Gauge,
            "The limit the policy puts on writes now, of the kind and in the unit its tunables name.",
        );
        let labels = [("kind", limit.kind), ("unit", limit.unit)];
        out.sample(name, &labels, Value::Float(limit.value));
    }
    if let Some(target) = sched.read_target() {
        out.scalar(
            "iosteer_read_target_seconds",
            Kind::Gauge,
            "The read latency the policy steers to now (steer: its objective's bound).",
            Value::Float(target.0 as f64 / 1e9),
        );
    }
    if let Some((free_blocks, gc_pages_moved)) = backend.drive_gauges() {
        out.scalar(
            "iosteer_drive_free_blocks",
            Kind::Gauge,
            "Free erase blocks in the drive model's FTL.",
            Value::Int(free_blocks),
        );
        out.scalar(
            "iosteer_drive_gc_pages_moved_total",
            Kind::Counter,
            "Pages the drive model's garbage collection has copied.",
            Value::Int(gc_pages_moved),
        );
    }
}

/// The exposition text being written.
struct Exposition(String);

#[derive(Copy, Clone)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
    Summary,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
            Kind::Summary => "summary",
        }
    }
}

/// A sample value: counts print as integers, the rest as Go's `%g` prints
/// floats, the form Prometheus' own clients write (`2e-05`, `+Inf`).
#[derive(Copy, Clone)]
enum Value {
    Int(u64),
    Float(f64),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::Int(n) => write!(f, "{n}"),
            Value::Float(x) => write!(f, "{}", go_float(x)),
        }
    }
}

fn seconds(t: Nanos) -> Value {
    Value::Float(t.as_secs_f64())
}

/// `x` as Go's `strconv.FormatFloat(x, 'g', -1, 64)`: the shortest digits
/// that read back as `x`, in exponent form below 1e-4 and from 1e6 up.
fn go_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    let exponent_form = format!("{x:e}");
    let Some((mantissa, exponent)) = exponent_form.split_once('e') else {
        return format!("{x}");
    };
    match exponent.parse::<i32>() {
        Ok(e) if !(-4..6).contains(&e) => {
            let sign = if e < 0 { '-' } else { '+' };
            format!("{mantissa}e{sign}{:02}", e.abs())
        }
        _ => format!("{x}"),
    }
}

impl Exposition {
    fn family(&mut self, name: &str, kind: Kind, help: &str) {
        let help = help.replace('\\', "\\\\").replace('\n', "\\n");
        self.0 += &format!("# HELP {name} {help}\n# TYPE {name} {}\n", kind.name());
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: Value) {
        self.0 += name;
        if !labels.is_empty() {
            let labels: Vec<String> = labels
                .iter()
                .map(|(key, value)| format!("{key}=\"{}\"", escape_label(value)))
                .collect();
            self.0 += &format!("{{{}}}", labels.join(","));
        }
        self.0 += &format!(" {value}\n");
    }

    /// A family of one unlabelled sample.
    fn scalar(&mut self, name: &str, kind: Kind, help: &str, value: Value) {
        self.family(name, kind, help);
        self.sample(name, &[], value);
    }

    /// A family with one sample per class.
    fn per_class(&mut self, name: &str, kind: Kind, help: &str, value: impl Fn(Op) -> Value) {
        self.family(name, kind, help);
        for op in Op::ALL {
            self.sample(name, &[("class", op.name())], value(op));
        }
    }

    /// A summary family by class: quantiles over a window (the last complete
    /// one, as a Prometheus client's summary ages its quantiles), `_sum` and
    /// `_count` over the run from `total`.
    fn summary<'s>(
        &mut self,
        name: &str,
        help: &str,
        window: impl Fn(Op) -> LatencySummary,
        total: impl Fn(Op) -> &'s Log2Histogram,
    ) {
        self.family(name, Kind::Summary, help);
        for op in Op::ALL {
            for (quantile, value) in at_quantiles(&window(op)) {
                let labels = [("class", op.name()), ("quantile", &go_float(quantile))];
                self.sample(name, &labels, value);
            }
            let (h, class) = (total(op), [("class", op.name())]);
            self.sample(&format!("{name}_sum"), &class, seconds(h.sum()));
            let count = h.counts().iter().sum();
            self.sample(&format!("{name}_count"), &class, Value::Int(count));
        }
    }

    /// A gauge family of percentiles by class and `percentile` (`99.9`), for
    /// a distribution without the sum a summary needs (the `quantile` label
    /// is a summary's own).
    fn percentiles(&mut self, name: &str, help: &str, summary: impl Fn(Op) -> LatencySummary) {
        self.family(name, Kind::Gauge, help);
        for op in Op::ALL {
            for (quantile, value) in at_quantiles(&summary(op)) {
                let labels = [
                    ("class", op.name()),
                    ("percentile", &go_float(quantile * 100.0)),
                ];
                self.sample(name, &labels, value);
            }
        }
    }

    /// The samples of one class's histogram: cumulative buckets, `_sum` and
    /// `_count`.
    fn histogram(&mut self, name: &str, op: Op, h: &Log2Histogram) {
        let bucket = format!("{name}_bucket");
        let mut cumulative = 0;
        for (k, count) in h.counts().iter().enumerate() {
            cumulative += count;
            let le = match Log2Histogram::upper_bound(k) {
                Some(bound) => go_float(bound.as_secs_f64()),
                None => "+Inf".into(),
            };
            self.sample(
                &bucket,
                &[("class", op.name()), ("le", &le)],
                Value::Int(cumulative),
            );
        }
        let class = [("class", op.name())];
        self.sample(&format!("{name}_sum"), &class, seconds(h.sum()));
        self.sample(&format!("{name}_count"), &class, Value::Int(cumulative));
    }
}

/// The percentiles shown of a distribution, by quantile; NaN when nothing
/// was measured, since zero would read as "instant".
fn at_quantiles(s: &LatencySummary) -> [(f64, Value); 4] {
    let value = |t| match s.count {
        0 => Value::Float(f64::NAN),
        _ => seconds(t),
    };
    [
        (0.5, value(s.p50)),
        (0.9, value(s.p90)),
        (0.99, value(s.p99)),
        (0.999, value(s.p999)),
    ]
}

/// A label value escaped as the format wants: backslash, quote, newline.
fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Content type of the text exposition format.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// How long one client may take in all, to send its request and to read
/// the answer: a read and a write deadline on every connection, so a client
/// that stalls holds only its own thread, and only this long.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(2);

/// Connections answered at once; past this a new one is closed at once, so
/// a flood of idle clients costs bounded threads and memory (each is gone
/// within [`CLIENT_TIMEOUT`]).
const MAX_CONNECTIONS: usize = 32;

/// How often the listening thread looks at the stop flag while no client
/// connects: what dropping the server waits at most.
const ACCEPT_POLL: Duration = Duration::from_millis(50);

/// A request head longer than this is refused: a scrape's is a few hundred
/// bytes.
const MAX_HEAD: usize = 8192;

/// An HTTP server answering `GET /metrics` with the last published text.
///
/// Each connection is answered on a thread of its own with read and write
/// deadlines (`CLIENT_TIMEOUT`), at most `MAX_CONNECTIONS` at once, so
/// one slow client delays no other scrape. The run loop only swaps the
/// published text under a lock held for a pointer's copy, so no client can
/// slow the I/O. Dropping the server stops the listening thread within
/// `ACCEPT_POLL` and waits for no connection: those threads hold nothing
/// but the text, end by their deadline, and never keep the process alive.
pub struct MetricsServer {
    addr: SocketAddr,
    text: Arc<Mutex<Arc<str>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Listens on `addr` (`127.0.0.1:9100`, `[::1]:9100`, `0.0.0.0:9100`; a
    /// bare port, `9100` or `:9100`, listens on loopback only; port 0
    /// picks a free one) and serves from a background thread until dropped.
    /// Until the first [`publish`](MetricsServer::publish), `/metrics` is
    /// empty.
    pub fn start(addr: &str) -> Result<MetricsServer, io::Error> {
        let named =
            |e: io::Error| io::Error::new(e.kind(), format!("cannot listen on {addr}: {e}"));
        let listener = TcpListener::bind(loopback_unless_told(addr)).map_err(named)?;
        listener.set_nonblocking(true).map_err(named)?;
        let bound = listener.local_addr().map_err(named)?;
        let text: Arc<Mutex<Arc<str>>> = Arc::new(Mutex::new(Arc::from("")));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = thread::Builder::new()
            .name("iosteer-metrics".into())
            .spawn({
                let (text, stop) = (text.clone(), stop.clone());
                move || serve(&listener, &text, &stop)
            })?;
        Ok(MetricsServer {
            addr: bound,
            text,
            stop,
            thread: Some(thread),
        })
    }

    /// The address listened on (with the port chosen when asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves `text` from now on.
    pub fn publish(&self, text: String) {
        let text: Arc<str> = Arc::from(text);
        *self.text.lock().unwrap_or_else(PoisonError::into_inner) = text;
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `addr`, with a bare port (`9100`, `:9100`) on loopback.
fn loopback_unless_told(addr: &str) -> String {
    let port = addr.strip_prefix(':').unwrap_or(addr);
    if port.parse::<u16>().is_ok() {
        format!("127.0.0.1:{port}")
    } else {
        addr.to_string()
    }
}

/// Accepts connections until `stop`, handing each to a thread of its own.
fn serve(listener: &TcpListener, text: &Arc<Mutex<Arc<str>>>, stop: &AtomicBool) {
    let active = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                if active.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
                    // Too many at once: close this one rather than queue it.
                    continue;
                }
                let connection = Connection::new(&active);
                let text = text.clone();
                // Out of threads, this client goes unanswered; the next may not.
                let _ = thread::Builder::new()
                    .name("iosteer-metrics-client".into())
                    .spawn(move || {
                        let _connection = connection;
                        // A client that breaks off concerns only its own
                        // connection.
                        let _ = answer(stream, &text);
                    });
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => wait_readable(listener, ACCEPT_POLL),
            // Out of descriptors, say: retry, but without spinning.
            Err(_) => thread::sleep(ACCEPT_POLL),
        }
    }
}

/// One connection being answered, counted in `active` while it lives.
struct Connection(Arc<AtomicUsize>);

impl Connection {
    fn new(active: &Arc<AtomicUsize>) -> Connection {
        active.fetch_add(1, Ordering::SeqCst);
        Connection(active.clone())
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Sleeps until `listener` has a connection to accept or `timeout` passes.
fn wait_readable(listener: &TcpListener, timeout: Duration) {
    let mut fd = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll reads and writes the one pollfd, valid for the call.
    unsafe { libc::poll(&mut fd, 1, timeout.as_millis() as libc::c_int) };
}

/// Reads one request and writes its answer, all within [`CLIENT_TIMEOUT`].
fn answer(mut stream: TcpStream, text: &Mutex<Arc<str>>) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    let deadline = Instant::now() + CLIENT_TIMEOUT;
    let head = read_head(&mut stream, deadline)?;
    write_before(&mut stream, &respond(&head, text), deadline)
}

/// Writes all of `bytes`, giving up at `deadline` however slowly the client
/// reads.
fn write_before(stream: &mut TcpStream, mut bytes: &[u8], deadline: Instant) -> io::Result<()> {
    while !bytes.is_empty() {
        stream.set_write_timeout(Some(time_left(deadline)?))?;
        let n = stream.write(bytes)?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        bytes = &bytes[n..];
    }
    Ok(())
}

/// Time until `deadline`, or a time-out error once it has passed.
fn time_left(deadline: Instant) -> io::Result<Duration> {
    match deadline.saturating_duration_since(Instant::now()) {
        left if left.is_zero() => Err(io::ErrorKind::TimedOut.into()),
        left => Ok(left),
    }
}

/// Reads the request line and headers, until `deadline`. They are read to
/// the end even though only the request line matters: closing with unread
/// data would reset the connection and could lose the answer.
fn read_head(stream: &mut TcpStream, deadline: Instant) -> io::Result<Vec<u8>> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head_complete(&head) && head.len() < MAX_HEAD {
        stream.set_read_timeout(Some(time_left(deadline)?))?;
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    Ok(head)
}

/// The head ends at the first empty line (a body may follow in the same read).
fn head_complete(head: &[u8]) -> bool {
    head.windows(4).any(|w| w == b"\r\n\r\n") || head.windows(2).any(|w| w == b"\n\n")
}

/// The whole response to a request head.
fn respond(head: &[u8], text: &Mutex<Arc<str>>) -> Vec<u8> {
    let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    let (method, target, version) = (words.next(), words.next(), words.next());
    let too_long = head.len() >= MAX_HEAD && !head_complete(head);
    if too_long || !version.is_some_and(|v| v.starts_with("HTTP/")) {
        return response("400 Bad Request", "", "bad request\n", true);
    }
    let path = target
        .unwrap_or_default()
        .split('?')
        .next()
        .unwrap_or_default();
    let with_body = method != Some("HEAD");
    match (method, path) {
        (Some("GET" | "HEAD"), "/metrics") => {
            let body = text.lock().unwrap_or_else(PoisonError::into_inner).clone();
            response("200 OK", CONTENT_TYPE, &body, with_body)
        }
        (_, "/metrics") => response("405 Method Not Allowed", "", "use GET\n", true),
        _ => response("404 Not Found", "", "metrics are at /metrics\n", with_body),
    }
}

/// An HTTP/1.1 response that closes the connection; `content_type` empty for
/// plain text.
fn response(status: &str, content_type: &str, body: &str, with_body: bool) -> Vec<u8> {
    let content_type = if content_type.is_empty() {
        "text/plain; charset=utf-8"
    } else {
        content_type
    };
    let allow = if status.starts_with("405") {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    let length = body.len();
    let mut out = format!("HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n").into_bytes();
    out.extend_from_slice(format!("Content-Length: {length}\r\n{allow}").as_bytes());
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    if with_body {
        out.extend_from_slice(body.as_bytes());
    }
    out
}

#[cfg(test)]
mod tests;
