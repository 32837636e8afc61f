use super::*;
use crate::report::{DeviceReport, PhaseReport, RunReport};
use crate::series::{ClassSecond, Gauges, Second};
use crate::test_reports::{self, class};

fn phase(name: &str, start_s: f64, end_s: f64, read_p99_us: f64, write_mbps: f64) -> PhaseReport {
    let write = class(if write_mbps > 0.0 { 50 } else { 0 }, write_mbps, 900.0);
    let all = class(150, 2.0 + write_mbps, read_p99_us);
    let classes = [class(100, 2.0, read_p99_us), write, all];
    test_reports::phase(name, (start_s, end_s), classes)
}

fn series(seconds: u64, spike_ms: f64) -> Vec<Second> {
    (0..seconds)
        .map(|second| {
            let read = ClassSecond {
                mbps: 2.0,
                iops: 500,
                mean_ms: 0.3,
                p99_ms: if second == 5 { spike_ms } else { 1.0 },
                max_ms: if second == 5 { spike_ms * 2.0 } else { 2.0 },
            };
            let write = ClassSecond {
                mbps: 20.0,
                iops: 80,
                ..Default::default()
            };
            Second {
                second,
                classes: [read, write, ClassSecond::default()],
                gauges: Gauges {
                    free_blocks: 1000u64.saturating_sub(second * 10),
                    ..Gauges::default()
                },
                gc_pages_moved: second * 3,
            }
        })
        .collect()
}

fn run(scheduler: &str, fill_p99_us: f64) -> RunReport {
    let phases = vec![
        phase("before", 0.0, 2.0, 1_000.0, 0.0),
        phase("fill", 2.0, 8.0, fill_p99_us, 27.0),
        phase("after", 8.0, 10.0, 1_200.0, 0.0),
        phase("all", 0.0, 10.0, fill_p99_us, 16.0),
    ];
    RunReport {
        device_stats: Some(DeviceReport {
            waf: 1.5,
            gc_pages_moved: 30,
            erases: 4,
            foreground_gc_blocks: 1,
            background_gc_blocks: 2,
            read_wait_behind_gc_s: 0.1,
            read_wait_behind_program_s: 0.2,
            merged_writes: 0,
            merged_reads: 0,
            wear_erases_min: 0,
            wear_erases_mean: 0.5,
            wear_erases_max: 2,
            precondition: Some("aged=2".into()),
            precondition_waf: None,
        }),
        notes: vec!["seed 1 <of> \"the\" run & more".into()],
        series: series(10, fill_p99_us / 1e3),
        ..test_reports::run(scheduler, phases)
    }
}

fn context() -> Context {
    Context {
        command: ["iosteer", "sim", "quick", "--out", "my dir"]
            .map(String::from)
            .to_vec(),
        workload: "scenario quick".into(),
        drive_config: Some("name = \"consumer-sata\"\n[geometry]\n".into()),
        warnings: Vec::new(),
    }
}

fn svg_count(page: &str) -> usize {
    page.matches("<svg").count()
}

#[test]
fn a_page_stands_alone_and_answers_its_question() {
    let runs = [
        run("fifo", 436_000.0),
        run("netflix:read_bias=100", 3_000.0),
    ];
    let page = run_page(&context(), &runs).unwrap();
    for outside in [
        "http://", "https://", "<script", "@import", "url(", "<link", "<img",
    ] {
        assert!(!page.contains(outside), "the page names {outside}");
    }
    assert!(page
        .contains("fifo missed p99&lt;=2x by 218x (436 ms against 2.00 ms) and wrote 27.0 MB/s"));
    assert!(page.contains("netflix:read_bias=100 missed p99&lt;=2x by 1.5x"));
    assert!(page.contains(
        "Judged by p99&lt;=2x (read p99 in the fill at most 2x the lowest before it: 2.00 ms)"
    ));
    assert!(page.contains("iosteer sim quick --out &#39;my dir&#39;"));
    assert!(page.contains("with fifo, netflix:read_bias=100 on consumer-sata under scenario quick"));
    // Compared: read p99, read MB/s, write MB/s, free blocks, GC pages;
    // each run: latency, throughput, drive state.
    assert_eq!(svg_count(&page), 5 + 2 * 3);
    for title in [
        "read p99 latency per second, by scheduler",
        "read MB/s per second, by scheduler",
        "write MB/s per second, by scheduler",
        "free blocks, by scheduler",
        "GC pages moved per second, by scheduler",
        "read latency per second: fifo",
        "throughput per second: fifo",
        "drive state per second: fifo",
    ] {
        assert_eq!(page.matches(title).count(), 1, "{title}");
    }
    assert_eq!(page.matches("<th class=\"l\">phase</th>").count(), 2);
    assert!(page.contains("<td class=\"l\">fill</td><td class=\"l\">read</td><td>2.0</td>"));
    assert!(page.contains("<td class=\"l\">write amplification</td><td>1.50</td>"));
    assert!(page.contains("seed 1 &lt;of&gt; &quot;the&quot; run &amp; more"));
    assert!(page.contains("[geometry]"));
    assert!(
        !page.contains("class=\"warn\""),
        "a whole run has no warning"
    );
}

#[test]
fn a_stopped_run_renders_what_it_measured_with_a_note() {
    let mut stopped = run("fifo", 50_000.0);
    stopped.interrupted = true;
    stopped.phases.truncate(2);
    stopped.phases[1].end_s = 4.5;
    stopped.series.truncate(4);
    stopped.notes = vec!["interrupted at 4.5 s".into()];
    let mut context = context();
    context.warnings = vec!["--job x.fio: the drive went away".into()];
    let page = run_page(&context, &[stopped]).unwrap();
    assert!(page.contains("class=\"warn\"><b>Note:</b> --job x.fio: the drive went away"));
    assert!(page.contains("a run stopped before its end"));
    assert!(page.contains("this run stopped early, at 4.5 s"));
    assert!(page.contains("fifo: fill read p99 50 ms; wrote 27.0 MB/s (stopped early, at 4.5 s)"));
    assert!(page.contains("interrupted at 4.5 s"));
    assert_eq!(
        svg_count(&page),
        3,
        "one run: no comparison, its own three charts"
    );
}

#[test]
fn a_run_with_nothing_measured_still_renders() {
    let mut empty = run("fifo", 1_000.0);
    (empty.phases, empty.series, empty.device_stats) = (Vec::new(), Vec::new(), None);
    empty.interrupted = true;
    let page = run_page(&Context::default(), &[empty]).unwrap();
    assert!(page.contains("fifo: nothing was measured"));
    assert_eq!(svg_count(&page), 2);
}

#[test]
fn long_series_are_thinned_keeping_their_spikes() {
    let mut long = run("fifo", 900_000.0);
    long.series = series(4000, 900.0);
    let thin = thinned(&long);
    assert!(thin.series.len() <= MAX_POINTS);
    let worst = thin
        .series
        .iter()
        .map(|s| s.classes[0].max_ms)
        .fold(0.0, f64::max);
    assert_eq!(worst, 1800.0);
    let written: f64 = thin.series.iter().map(|s| s.classes[1].mbps).sum();
    assert!((written * 3.0 - 4000.0 * 20.0).abs() < 1e-6 * 4000.0 * 20.0 + 200.0);
}
