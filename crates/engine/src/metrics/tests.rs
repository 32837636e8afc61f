use super::*;
use crate::emulate::Emulated;
use iosteer_device::{Device, DeviceConfig};
use iosteer_sched::{policy, Command, DeviceView, Dispatch, Outcome, Request};

const SPEC: &str = "netflix:write.limiter=bandwidth,write.current=5000";
const STEP: Nanos = Nanos::from_micros(50);
const READ_LATENCY: Nanos = Nanos::from_micros(100);

/// A 16 KiB read and write every millisecond (16 MB/s of writes, over the
/// limit) and one trim through `sched` for `until`, on a device of four
/// slots that answers reads in 100 us and the rest in 3 ms, in 50 us
/// steps so every latency is exact.
fn drive(sched: &mut dyn Scheduler, until: Nanos) {
    let mut device: Vec<(Nanos, Command)> = Vec::new();
    sched.enqueue(
        Request::new(0, Op::Trim, 0, 1 << 20, Nanos::ZERO),
        Nanos::ZERO,
    );
    let mut now = Nanos::ZERO;
    for step in 1..until.0 / STEP.0 {
        if step % 20 == 1 {
            for (i, op) in [Op::Read, Op::Write].into_iter().enumerate() {
                let id = 2 * step + i as u64;
                sched.enqueue(Request::new(id, op, id << 14, 1 << 14, now), now);
            }
        }
        let (done, busy) = device.into_iter().partition(|(done, _)| *done <= now);
        device = busy;
        for (_, command) in done {
            let _ = sched.complete(&command.completion(Outcome::Ok), now);
        }
        if sched.next_timer().is_some_and(|t| t <= now) {
            let _ = sched.tick(now);
        }
        while let Some(d) = sched.dispatch(now, DeviceView::new(4, device.len() as u32)) {
            if let Dispatch::ToDevice(command) = d {
                let latency = match command.op {
                    Op::Read => READ_LATENCY,
                    _ => Nanos::from_millis(3),
                };
                device.push((now + latency, command));
            }
        }
        now += STEP;
    }
}

fn emulated() -> Emulated {
    Emulated::new(Device::new(DeviceConfig::preset("consumer-sata").unwrap()).unwrap())
}

fn rendered(spec: &str) -> String {
    let mut sched = policy::build(SPEC).unwrap();
    // Past the first stats window, so there is a last complete one.
    let until = Nanos::from_millis(1500);
    drive(sched.as_mut(), until);
    render(sched.as_ref(), &emulated(), &RunGauges { now: until, spec })
}

/// The metric name of a sample line.
fn metric(line: &str) -> &str {
    line.split(['{', ' ']).next().unwrap()
}

/// The value of the one sample line starting with `prefix`.
fn value(text: &str, prefix: &str) -> f64 {
    let mut lines = text.lines().filter(|l| l.starts_with(prefix));
    let line = lines
        .next()
        .unwrap_or_else(|| panic!("no {prefix} in\n{text}"));
    assert!(lines.next().is_none(), "{prefix} twice");
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn every_sample_follows_its_help_and_type_and_counters_end_in_total() {
    let text = rendered(SPEC);
    let mut families: Vec<(&str, &str)> = Vec::new();
    let mut last_help = None;
    for line in text.lines() {
        if let Some(help) = line.strip_prefix("# HELP ") {
            last_help = help.split(' ').next();
        } else if let Some(typed) = line.strip_prefix("# TYPE ") {
            let (name, kind) = typed.split_once(' ').unwrap();
            assert_eq!(last_help, Some(name), "TYPE {name} without HELP");
            assert!(families.iter().all(|(n, _)| *n != name), "{name} twice");
            assert_eq!(kind == "counter", name.ends_with("_total"), "{line}");
            families.push((name, kind));
        } else {
            let name = metric(line);
            let (family, kind) = *families.last().expect("a sample before any TYPE");
            let suffix = name
                .strip_prefix(family)
                .unwrap_or_else(|| panic!("{name} is not in the family above it, {family}"));
            match kind {
                "histogram" => assert!(["_bucket", "_sum", "_count"].contains(&suffix)),
                "summary" => assert!(["", "_sum", "_count"].contains(&suffix)),
                _ => assert_eq!(suffix, "", "{line}"),
            }
        }
    }
    let names: Vec<&str> = families.iter().map(|(n, _)| *n).collect();
    for name in [
        "iosteer_write_limit",
        "iosteer_drive_free_blocks",
        "iosteer_load_ratio",
    ] {
        assert!(names.contains(&name), "{name} missing");
    }
}

#[test]
fn histogram_buckets_are_cumulative_and_end_at_the_count() {
    let text = rendered(SPEC);
    let name = "iosteer_device_latency_seconds";
    let buckets: Vec<(&str, f64)> = text
        .lines()
        .filter(|l| l.starts_with(&format!("{name}_bucket{{class=\"read\"")))
        .map(|l| {
            let le = l.split("le=\"").nth(1).unwrap().split('"').next().unwrap();
            (le, l.rsplit(' ').next().unwrap().parse().unwrap())
        })
        .collect();
    assert_eq!(buckets.len(), 20);
    assert_eq!(buckets[0].0, "2e-05");
    assert_eq!(buckets[19].0, "+Inf");
    for pair in buckets.windows(2) {
        let bound = |le: &str| le.parse::<f64>().unwrap_or(f64::INFINITY);
        assert!(bound(pair[0].0) < bound(pair[1].0), "{pair:?}");
        assert!(pair[0].1 <= pair[1].1, "not cumulative: {pair:?}");
    }
    let count = value(&text, &format!("{name}_count{{class=\"read\"}}"));
    assert!(count > 100.0, "{count} reads");
    assert_eq!(buckets[19].1, count);
    // Every read took 100 us: all of them in the bucket ending at 160 us.
    assert_eq!(buckets[2], ("8e-05", 0.0));
    assert_eq!(buckets[3], ("0.00016", count));
    let sum = value(&text, &format!("{name}_sum{{class=\"read\"}}"));
    assert!(
        (sum - count * READ_LATENCY.as_secs_f64()).abs() < 1e-9,
        "{sum}"
    );
}

#[test]
fn gauges_read_the_scheduler_and_the_drive() {
    let text = rendered(SPEC);
    let limit = "iosteer_write_limit{kind=\"bandwidth\",unit=\"kB/s\"}";
    assert_eq!(value(&text, limit), 5000.0);
    assert!(value(&text, "iosteer_queued_requests{class=\"write\"}") > 0.0);
    assert_eq!(value(&text, "iosteer_limited{class=\"write\"}"), 1.0);
    assert!(value(&text, "iosteer_drive_free_blocks ") > 0.0);
    assert_eq!(
        value(&text, "iosteer_requests_elided_total{class=\"read\"}"),
        0.0
    );
    let p99 = "iosteer_device_latency_window_seconds{class=\"read\",quantile=\"0.99\"}";
    assert!((value(&text, p99) - 1e-4).abs() < 2e-6, "within 1%");
    let flush = "iosteer_device_latency_window_seconds{class=\"flush\",quantile=\"0.5\"}";
    assert!(value(&text, flush).is_nan(), "nothing measured is not zero");
    let summary_count = "iosteer_device_latency_window_seconds_count{class=\"read\"}";
    let histogram_count = "iosteer_device_latency_seconds_count{class=\"read\"}";
    assert_eq!(value(&text, summary_count), value(&text, histogram_count));
    let held = "iosteer_queue_wait_seconds{class=\"write\",percentile=\"99.9\"}";
    assert!(value(&text, held) > 0.01, "writes wait for the limiter");
    assert_eq!(value(&text, "iosteer_run_elapsed_seconds"), 1.5);
}

#[test]
fn label_values_are_escaped() {
    let text = rendered("netflix:\"odd\\spec\nhere\"");
    let info =
        "iosteer_scheduler_info{policy=\"netflix\",spec=\"netflix:\\\"odd\\\\spec\\nhere\\\"\"} 1";
    assert!(text.lines().any(|l| l == info), "{text}");
}

#[test]
fn floats_print_as_gos_shortest_g() {
    let cases = [
        (2e-5, "2e-05"),
        (1.6e-4, "0.00016"),
        (1e-4, "0.0001"),
        (5.24288, "5.24288"),
        (0.0, "0"),
        (123456.0, "123456"),
        (1234567.0, "1.234567e+06"),
        (1e21, "1e+21"),
        (-3e-7, "-3e-07"),
        (f64::INFINITY, "+Inf"),
        (f64::NAN, "NaN"),
    ];
    for (x, want) in cases {
        assert_eq!(go_float(x), want);
    }
}

/// Sends `request` and reads the whole response.
fn fetch(addr: SocketAddr, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

#[test]
fn serves_the_published_text_over_tcp() {
    let server = MetricsServer::start("127.0.0.1:0").unwrap();
    let addr = server.local_addr();
    let text = rendered(SPEC);
    server.publish(text.clone());
    let response = fetch(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let mut head = head.lines();
    assert_eq!(head.next(), Some("HTTP/1.1 200 OK"));
    assert!(head.any(|h| h == "Content-Type: text/plain; version=0.0.4; charset=utf-8"));
    assert_eq!(body, text);
    let status = |request: &str| fetch(addr, request).lines().next().unwrap().to_string();
    assert_eq!(
        status("GET /other HTTP/1.1\r\n\r\n"),
        "HTTP/1.1 404 Not Found"
    );
    assert_eq!(
        status("POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi"),
        "HTTP/1.1 405 Method Not Allowed"
    );
    assert_eq!(status("\u{0}\u{ff}garbage\n\n"), "HTTP/1.1 400 Bad Request");
    let head_only = fetch(addr, "HEAD /metrics?x=1 HTTP/1.0\r\n\r\n");
    assert!(head_only.starts_with("HTTP/1.1 200 OK") && head_only.ends_with("\r\n\r\n"));
}

#[test]
fn a_silent_client_blocks_neither_another_scrape_nor_shutdown() {
    let server = MetricsServer::start("127.0.0.1:0").unwrap();
    server.publish("up 1\n".into());
    let addr = server.local_addr();
    let silent: Vec<TcpStream> = (0..4).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let started = Instant::now();
    let response = fetch(addr, "GET /metrics HTTP/1.1\r\n\r\n");
    assert!(response.ends_with("\r\n\r\nup 1\n"), "{response}");
    assert!(
        started.elapsed() < CLIENT_TIMEOUT / 2,
        "a scrape waited {:?} behind silent clients",
        started.elapsed()
    );
    let started = Instant::now();
    drop(server);
    assert!(
        started.elapsed() < ACCEPT_POLL * 10,
        "shutdown waited {:?} for silent clients",
        started.elapsed()
    );
    assert!(TcpStream::connect(addr).is_err(), "still listening");
    drop(silent);
}

#[test]
fn a_client_that_never_reads_is_cut_off_at_the_deadline() {
    let server = MetricsServer::start("127.0.0.1:0").unwrap();
    // More than the socket buffers hold, so writing it blocks.
    server.publish("x".repeat(64 << 20));
    let mut greedy = TcpStream::connect(server.local_addr()).unwrap();
    greedy.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
    std::thread::sleep(CLIENT_TIMEOUT + Duration::from_millis(500));
    greedy
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut got = Vec::new();
    // The server gave up on it: what is left ends (or is reset) short.
    let _ = greedy.read_to_end(&mut got);
    assert!(got.len() < 64 << 20, "{} bytes", got.len());
    server.publish("up 1\n".into());
    let response = fetch(server.local_addr(), "GET /metrics HTTP/1.1\r\n\r\n");
    assert!(response.ends_with("up 1\n"));
}

#[test]
fn a_bare_port_listens_on_loopback_only() {
    assert_eq!(loopback_unless_told("9100"), "127.0.0.1:9100");
    assert_eq!(loopback_unless_told(":9100"), "127.0.0.1:9100");
    assert_eq!(loopback_unless_told("0.0.0.0:9100"), "0.0.0.0:9100");
    assert_eq!(loopback_unless_told("[::1]:9100"), "[::1]:9100");
    let server = MetricsServer::start(":0").unwrap();
    assert!(server.local_addr().ip().is_loopback());
}

#[test]
fn a_bad_or_busy_address_is_named_and_dropping_closes_the_port() {
    let bad = MetricsServer::start("not-an-address").err().unwrap();
    assert!(bad.to_string().contains("not-an-address"), "{bad}");
    let server = MetricsServer::start("127.0.0.1:0").unwrap();
    let addr = server.local_addr().to_string();
    let busy = MetricsServer::start(&addr).err().unwrap();
    assert!(busy.to_string().contains(&addr), "{busy}");
    drop(server);
    assert!(TcpStream::connect(&addr).is_err(), "still listening");
}

/// Reads take 100 us here and writes never leave the device quiet, so
/// steer has no measured baseline and its target for `p99<=3x` is 3x its
/// estimate, twice the lowest read median: 600 us, in seconds.
#[test]
fn steers_read_target_is_a_gauge_and_a_policy_without_one_has_none() {
    let spec = "steer:objective=p99<=3x";
    let mut sched = policy::build(spec).unwrap();
    let until = Nanos::from_millis(1500);
    drive(sched.as_mut(), until);
    let text = render(sched.as_ref(), &emulated(), &RunGauges { now: until, spec });
    let target = value(&text, "iosteer_read_target_seconds ");
    assert!((0.000_59..=0.000_61).contains(&target), "{target}");
    assert!(!rendered(SPEC).contains("iosteer_read_target_seconds"));
}
