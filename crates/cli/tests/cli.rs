//! End-to-end tests of the `iosteer` binary, by topic.

mod common;
use common::{
    assert_refused_saying, json_of, scratch_file, stderr_of_failure, stdout_of, temp_dir,
};

mod help {
    use super::*;

    #[test]
    fn help_names_every_subcommand() {
        let text = stdout_of(&["--help"]);
        for word in ["schedulers", "bench", "Usage"] {
            assert!(text.contains(word), "{word} missing from:\n{text}");
        }
        assert!(stdout_of(&["bench", "sched", "--help"]).contains("--json"));
    }

    #[test]
    fn a_wrong_subcommand_fails_with_a_message() {
        assert_refused_saying(&["benchmark"], &["unrecognized subcommand"]);
    }
}

mod schedulers {
    use super::*;

    #[test]
    fn lists_policies_with_tunables_and_defaults() {
        let text = stdout_of(&["schedulers"]);
        for word in [
            "fifo",
            "netflix",
            "read_bias",
            "control.lolat",
            "default 5ms",
            "trim_advisory",
        ] {
            assert!(text.contains(word), "{word} missing from:\n{text}");
        }
    }
}

mod bench {
    use super::*;

    #[test]
    fn json_has_one_entry_per_policy_with_its_cost() {
        let results = json_of(&[
            "bench",
            "sched",
            "--json",
            "--requests",
            "20000",
            "--repeat",
            "1",
            "--policy",
            "fifo",
            "--policy",
            "netflix:read_bias=100,write.limiter=queue_depth,write.current=1",
        ]);
        let results = results.as_array().unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results[0]["policy"], "fifo");
        for r in results {
            assert!(r["ns_per_request"].as_f64().unwrap() > 0.0, "{r}");
            assert_eq!(r["requests"], 20000);
        }
    }

    #[test]
    fn a_bad_spec_is_an_error_naming_what_exists() {
        assert_refused_saying(
            &[
                "bench",
                "sched",
                "--requests",
                "10",
                "--policy",
                "netflix:write.limiter=tokens",
            ],
            &["write.limiter", "queue_depth, iops, bandwidth"],
        );
        // cfq: a Linux scheduler removed in 5.0, never one of ours.
        assert_refused_saying(&["bench", "sched", "--policy", "cfq"], &["fifo, netflix"]);
    }
}

mod device {
    use super::*;

    #[test]
    fn waf_json_has_the_measured_and_the_closed_form() {
        let r = json_of(&[
            "device",
            "waf",
            "--victim",
            "fifo",
            "--alpha",
            "1.5",
            "--blocks",
            "512",
            "--pages-per-block",
            "32",
            "--json",
        ]);
        assert_eq!(r["victim"], "fifo");
        assert_eq!(r["alpha"], 1.5);
        let (waf, analytic) = (r["waf"].as_f64().unwrap(), r["analytic"].as_f64().unwrap());
        assert!((waf / analytic - 1.0).abs() < 0.05, "{waf} vs {analytic}");
    }

    #[test]
    fn presets_list_and_show_as_toml() {
        let list = stdout_of(&["device", "list"]);
        for name in ["consumer-sata", "enterprise-nvme", "diskSim-slc"] {
            assert!(list.contains(name), "{list}");
        }
        let toml = stdout_of(&["device", "show", "consumer-sata"]);
        assert!(
            toml.contains("page_program_us") && toml.contains("queue_depth = 32"),
            "{toml}"
        );
    }

    #[test]
    fn bad_device_input_is_a_clear_error() {
        assert_refused_saying(
            &["device", "waf", "--victim", "lru"],
            &["greedy, fifo, cost_benefit"],
        );
        assert_refused_saying(&["device", "waf", "--alpha", "0.8"], &["alpha"]);
        let file = scratch_file(
            "broken.toml",
            "name = \"x\"\n[geometry]\nchannels = \"eight\"\n",
        );
        assert_refused_saying(&["device", "show", &file], &["broken.toml", "channels"]);
    }
}

mod sim {
    use super::*;

    /// Found by a review: stdout on a full disk (or a closed pipe) made
    /// `print!` panic (exit 101) before the `--out` files were written.
    #[test]
    fn a_report_that_cannot_be_printed_still_writes_its_out_files() {
        let dir = temp_dir("stdout-full");
        let out = dir.path().join("out");
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let run = std::process::Command::new(assert_cmd::cargo::cargo_bin("iosteer"))
            .args(["sim", "quick", "--sched", "fifo", "--out"])
            .arg(&out)
            .stdout(full)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("standard output"), "{stderr}");
        assert!(out.join("report.html").exists(), "{stderr}");
    }

    fn phase<'a>(run: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
        run["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap()
    }

    fn p99(run: &serde_json::Value, phase_name: &str, class: &str) -> f64 {
        phase(run, phase_name)[class]["lat_us"]["p99"]
            .as_f64()
            .unwrap()
    }

    #[test]
    fn a_report_whose_out_files_cannot_be_written_is_still_printed() {
        let dir = temp_dir("sim-out-fails");
        // Passes the check before the run (the directory takes files), fails
        // the write after it.
        std::os::unix::fs::symlink("/nonexistent/iosteer/x", dir.path().join("report.json"))
            .unwrap();
        let out = common::outcome([
            "sim",
            "quick",
            "--sched",
            "fifo",
            "--json",
            "--out",
            dir.path().to_str().unwrap(),
        ]);
        assert!(
            !out.ok && out.stderr.contains("report.json"),
            "{}",
            out.stderr
        );
        assert!(out.json()["sim"]["requests"].as_u64().unwrap() > 0);
    }

    /// The seed's headline on the quick scenario, in simulated time: stock
    /// FIFO's read tail explodes during the fill; one write in flight cuts
    /// the read latency it costs; steer cuts the tail further, still writing. (The paper's tighter bounds for queue depth
    /// 1, a p99 within 5x of before, do not hold on this model yet.)
    #[test]
    fn the_quick_scenario_shows_the_fill_pathology_and_the_write_limit_helping() {
        let dir = temp_dir("quick");
        let out = dir.path();
        let report = json_of(&[
            "sim",
            "quick",
            "--seed",
            "1",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ]);
        let csv = std::fs::read_to_string(out.join("run1-fifo.csv")).unwrap();
        assert!(
            csv.starts_with("second,read_mbps") && csv.lines().count() > 25,
            "one line a second"
        );
        let overlay = std::fs::read_to_string(out.join("overlay-read-p99.svg")).unwrap();
        assert!(overlay.starts_with("<svg") && overlay.contains("35 ms"));
        let page = std::fs::read_to_string(out.join("report.html")).unwrap();
        assert_eq!(
            page.matches("<svg").count(),
            5 + 3 * 4,
            "charts of report.html"
        );
        assert!(
            page.contains("<li>fifo missed p99&lt;=2x by "),
            "the summary"
        );
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap())
                .unwrap();
        assert_eq!(saved["runs"], report["runs"]);
        assert!(report["sim"]["requests"].as_u64().unwrap() > 100_000);
        let runs = report["runs"].as_array().unwrap();
        let labels: Vec<&str> = runs
            .iter()
            .map(|r| r["scheduler"].as_str().unwrap())
            .collect();
        assert_eq!(
            labels,
            [
                "fifo",
                "netflix:read_bias=100",
                "netflix:write.limiter=queue_depth,write.current=1",
                "steer"
            ]
        );
        for run in runs {
            assert_eq!(run["unfinished"], 0, "{}", run["scheduler"]);
            assert!(run["device"]["waf"].as_f64().unwrap() > 1.5, "GC ran");
            for name in ["before", "fill", "after", "all"] {
                assert!(phase(run, name)["read"]["ops"].as_u64().unwrap() > 0);
            }
        }
        let (fifo, qd1, steer) = (&runs[0], &runs[2], &runs[3]);
        assert!(p99(steer, "fill", "read") < p99(qd1, "fill", "read") / 10.0);
        assert!(phase(steer, "fill")["write"]["mbps"].as_f64().unwrap() > 1.0);
        assert!(p99(fifo, "fill", "read") >= 10.0 * p99(fifo, "before", "read"));
        let mean = |run: &serde_json::Value| {
            phase(run, "fill")["read"]["lat_us"]["mean"]
                .as_f64()
                .unwrap()
        };
        assert!(
            mean(qd1) * 5.0 < mean(fifo),
            "qd1 {} vs fifo {}",
            mean(qd1),
            mean(fifo)
        );
        assert!(
            phase(fifo, "fill")["read"]["slo_violations"]
                .as_u64()
                .unwrap()
                > 0
        );
    }

    #[test]
    fn precondition_sets_the_drive_start_and_the_report_and_table_say_it() {
        let fin = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../traces/financial1-excerpt.ascii"
        );
        let report = json_of(&[
            "sim",
            "--trace",
            fin,
            "--precondition",
            "fill=100",
            "--json",
        ]);
        assert_eq!(report["runs"][0]["device"]["precondition"], "fill=100");
        let table = stdout_of(&["sim", "--trace", fin, "--precondition", "empty"]);
        assert!(table.contains("started empty, WAF 1.00"), "{table}");
        assert!(
            table.contains("\nAnswers:\n  fifo: read p99 "),
            "the terminal ends with the report's summary: {table}"
        );
        assert_refused_saying(
            &["sim", "--trace", fin, "--precondition", "fill=200"],
            &["--precondition `fill=200`: expected one of empty, fill[=PCT]"],
        );
    }

    #[test]
    fn traces_replay_every_request_or_say_what_drive_they_need() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/");
        let fin = format!("{root}financial1-excerpt.ascii");
        let report = json_of(&["sim", "--trace", &fin, "--json"]);
        let run = &report["runs"][0];
        let all = phase(run, "all");
        let ops = all["read"]["ops"].as_u64().unwrap() + all["write"]["ops"].as_u64().unwrap();
        assert_eq!(ops, 10_000);
        assert_eq!(run["unfinished"], 0);

        let tpcc = format!("{root}tpcc-small.trace");
        assert_refused_saying(&["sim", "--trace", &tpcc], &["216.7 GiB", "--trace-fit"]);
        let report = json_of(&["sim", "--trace", &tpcc, "--trace-fit", "wrap", "--json"]);
        let all = phase(&report["runs"][0], "all");
        assert_eq!(
            all["read"]["ops"].as_u64().unwrap() + all["write"]["ops"].as_u64().unwrap(),
            6_999
        );
        assert!(report["runs"][0]["notes"][0]
            .as_str()
            .unwrap()
            .contains("remapped"));

        let report = json_of(&[
            "sim",
            "--trace",
            &fin,
            "--trace-devices",
            "separate",
            "--json",
        ]);
        let all = phase(&report["runs"][0], "all");
        let ops = all["read"]["ops"].as_u64().unwrap() + all["write"]["ops"].as_u64().unwrap();
        assert_eq!(ops, 10_000, "separate devices replay every request too");
        assert_refused_saying(
            &["sim", "--trace", &fin, "--trace-devices", "apart"],
            &["'apart' for '--trace-devices <HOW>': expected one of merge"],
        );
    }

    #[test]
    fn bad_sim_input_is_a_clear_error() {
        for (args, expect) in [
            (vec!["sim", "nightly"], "fill-while-serving, quick"),
            (vec!["sim", "quick", "--sched", "cfq"], "fifo, netflix"),
            (vec!["sim", "quick", "--device", "hdd"], "consumer-sata"),
            (
                vec!["sim", "--trace", "/nonexistent.ascii"],
                "/nonexistent.ascii",
            ),
            (
                vec!["sim", "--trace", "x", "--trace-format", "blk"],
                "ascii, spc, msr",
            ),
        ] {
            let err = stderr_of_failure(&args);
            assert!(err.contains(expect), "{args:?}: {err}");
        }
    }

    /// Ctrl-C while the drive ages stops the aging (50 capacities of
    /// overwrites would take a minute or more) and says so, with the
    /// shell's exit status for an interrupted command (130, not 0).
    #[test]
    fn ctrl_c_stops_aging_at_once() {
        let args = ["sim", "--precondition", "aged=50", "--sched", "fifo"];
        let out = common::interrupted_after(&args, std::time::Duration::from_secs(2));
        assert!(!out.ok, "{}", out.stderr);
        assert!(out.stderr.contains("aging was stopped"), "{}", out.stderr);
    }

    /// SIGTERM (a service stopped, `timeout`, `kill`) stops a run as Ctrl-C
    /// does, as fio takes it: the hour simulated so far is reported, not
    /// thrown away (it ended the process, exit 143, nothing printed). A
    /// sweep's aging stops too: it used to age on and only then stop.
    #[test]
    fn sigterm_reports_what_was_measured_and_stops_a_sweeps_aging() {
        let job = scratch_file(
            "an-hour.fio",
            "[r]\nrw=randread\nbs=4k\niodepth=8\nruntime=1h\ntime_based\n",
        );
        let args = ["sim", "--job", &job, "--precondition", "empty", "--json"];
        let out = common::signalled_after("TERM", 143, &args, std::time::Duration::from_secs(2));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect(&out.stderr);
        assert_eq!(report["runs"][0]["interrupted"], true, "{}", out.stderr);
        let vary = "netflix:write.limiter=bandwidth,write.current=5000,20000";
        let args = [
            "sweep",
            "--precondition",
            "aged=50",
            "--vary",
            vary,
            "--chart",
            "-",
        ];
        let out = common::signalled_after("TERM", 143, &args, std::time::Duration::from_secs(2));
        assert!(
            !out.ok && out.stderr.contains("aging was stopped"),
            "{}",
            out.stderr
        );
    }
}

mod job_files {
    use super::*;

    #[test]
    fn a_fio_job_file_runs_and_its_errors_name_the_line() {
        // examples/fill-while-serving.fio, shorter and on a smaller region
        // (the example is sized for consumer-sata).
        let example = scratch_file(
            "serve-fill.fio",
            "[global]\ntime_based\n[readers]\nrw=randread\nbs=128k\nrate=200m\nrate_process=poisson\niodepth=1024\nruntime=40s\n\
             [fill]\nrw=write\nbs=128k\noffset=25%\nsize=10%\nrate=30m\niodepth=32\nstartdelay=10s\nruntime=20s\n",
        );
        let report = json_of(&[
            "sim",
            "--job",
            &example,
            "--device",
            "diskSim-slc",
            "--json",
        ]);
        let run = &report["runs"][0];
        assert_eq!(run["scheduler"], "fifo");
        let job = &run["phases"][0];
        assert_eq!(job["name"], "job");
        assert!(
            job["read"]["ops"].as_u64().unwrap() > 1000
                && job["write"]["ops"].as_u64().unwrap() > 100
        );

        let file = scratch_file("iolog.fio", "[check]\nrw=randread\nread_iolog=trace.log\n");
        assert_refused_saying(
            &["sim", "--job", &file],
            &["iolog.fio:3", "read_iolog=trace.log", "no such file"],
        );
        let file = scratch_file(
            "net.fio",
            "[global]\nioengine=netsplice\n[check]\nrw=read\n",
        );
        assert_refused_saying(&["sim", "--job", &file], &["net.fio:2", "`netsplice`"]);
    }

    /// fio's job end: `examples/prefill.fio` writes its 256 MiB once, in
    /// 1 MiB writes, and stops; its phase is named after it.
    #[test]
    fn prefill_writes_the_target_once() {
        let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/prefill.fio");
        let report = json_of(&["sim", "--job", example, "--device", "diskSim-slc", "--json"]);
        let phases = report["runs"][0]["phases"].as_array().unwrap();
        let names: Vec<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["job", "prefill", "all"]);
        assert_eq!(phases[1]["write"]["ops"], 256, "{}", phases[1]);
        assert_eq!(
            phases[2]["write"]["ops"], 256,
            "all counts each request once"
        );
    }
}

mod block_traces {
    use super::*;

    const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/");

    /// Requests the run completed: reads, writes and trims (`all`), and
    /// flushes, which the report counts apart.
    fn all_ops(report: &serde_json::Value) -> u64 {
        let all = report["runs"][0]["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "all")
            .unwrap();
        all["all"]["ops"].as_u64().unwrap() + all["flush"]["ops"].as_u64().unwrap_or(0)
    }

    /// The JSON report of `iosteer sim` replaying the trace file `name` of
    /// traces/ with `options`.
    fn replayed(name: &str, options: &[&str]) -> serde_json::Value {
        let trace = format!("{ROOT}{name}");
        let mut args = vec!["sim", "--trace", &trace];
        args.extend(options);
        args.push("--json");
        json_of(&args)
    }

    #[test]
    fn the_ftrace_sample_recorded_here_replays_with_its_notes() {
        let sample = "vda-ftrace-sample.txt";
        let report = replayed(sample, &["--trace-format", "ftrace", "--trace-fit", "wrap"]);
        assert_eq!(all_ops(&report), 942);
        let notes = report["runs"][0]["notes"].to_string();
        assert!(
            notes.contains("remapped") && notes.contains("block_rq_complete 1003"),
            "{notes}"
        );
        let issued = [
            "--trace-format",
            "ftrace",
            "--trace-event",
            "issue",
            "--trace-fit",
            "scale",
        ];
        assert_eq!(all_ops(&replayed(sample, &issued)), 965);
    }

    #[test]
    fn blkparse_and_binary_blktrace_samples_replay() {
        let report = replayed("blkparse-sample.txt", &["--trace-format", "blkparse"]);
        assert_eq!(all_ops(&report), 11);
        let report = replayed("synthetic.blktrace.0", &["--trace-format", "blktrace"]);
        assert_eq!(all_ops(&report), 12);
    }

    #[test]
    fn a_gzip_compressed_or_archived_trace_replays_as_the_plain_one() {
        use std::io::Write;
        let plain = std::fs::read(format!("{ROOT}financial1-excerpt.ascii")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let packed = dir.path().join("financial1.ascii.gz");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&plain).unwrap();
        std::fs::write(&packed, e.finish().unwrap()).unwrap();
        let report = json_of(&["sim", "--trace", packed.to_str().unwrap(), "--json"]);
        let want = replayed("financial1-excerpt.ascii", &[]);
        assert_eq!(report["runs"][0]["phases"], want["runs"][0]["phases"]);
        assert_eq!(all_ops(&report), 10_000);
        // The same trace as the one file of a .tgz.
        let mut archive = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_size(plain.len() as u64);
        header.set_cksum();
        archive
            .append_data(&mut header, "fin1.ascii", &plain[..])
            .unwrap();
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&archive.into_inner().unwrap()).unwrap();
        let tgz = dir.path().join("fin1.tgz");
        std::fs::write(&tgz, e.finish().unwrap()).unwrap();
        let report = json_of(&["sim", "--trace", tgz.to_str().unwrap(), "--json"]);
        assert_eq!(report["runs"][0]["phases"], want["runs"][0]["phases"]);
        let cut = dir.path().join("cut.gz");
        let bytes = std::fs::read(&packed).unwrap();
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let cut = cut.to_str().unwrap();
        assert_refused_saying(
            &["sim", "--trace", cut],
            &["cut.gz: gzip data: cut short: the file ends before the stream does"],
        );
    }

    #[test]
    fn a_window_of_a_trace_replays_the_requests_arriving_in_it() {
        let fin = format!("{ROOT}financial1-excerpt.ascii");
        let text = std::fs::read_to_string(&fin).unwrap();
        let times: Vec<f64> = text
            .lines()
            .filter_map(|l| l.split_whitespace().next()?.parse().ok())
            .collect();
        let in_window = times
            .iter()
            .filter(|t| (100e9..200e9).contains(&(**t - times[0])))
            .count() as u64;
        let report = replayed(
            "financial1-excerpt.ascii",
            &["--trace-window", "100s..200s"],
        );
        assert_eq!(all_ops(&report), in_window);
        let notes = report["runs"][0]["notes"].to_string();
        let before = times.iter().filter(|t| **t - times[0] < 100e9).count();
        assert!(
            notes.contains(&format!(
                "--trace-window 100s..200s: {before} requests arrived before it"
            )),
            "{notes}"
        );
        assert_refused_saying(
            &["sim", "--trace", &fin, "--trace-window", "2h.."],
            &["no request arrives in --trace-window 7200s.."],
        );
        assert_refused_saying(
            &["sim", "--trace", &fin, "--trace-window", "5m..1m"],
            &["--trace-window", "`5m..1m`: the window is empty"],
        );
    }

    #[test]
    fn a_trace_past_the_clock_or_unbounded_is_an_error_not_a_short_replay() {
        let fin = format!("{ROOT}financial1-excerpt.ascii");
        for (args, expected) in [
            (
                vec!["--trace-unit", "s"],
                "financial1-excerpt.ascii:110: arrives",
            ),
            (
                vec!["--trace-speed", "1e-300"],
                "financial1-excerpt.ascii:3: arrives",
            ),
            (
                vec!["--trace-format", "spc"],
                "it looks like a line of ascii",
            ),
            (
                vec!["--trace-event", "complete"],
                "'complete' for '--trace-event <EVENT>': expected one of queue, issue",
            ),
        ] {
            let mut all = vec!["sim", "--trace", &fin];
            all.extend(args);
            let err = stderr_of_failure(&all);
            assert!(err.contains(expected), "{all:?}: {err}");
        }
        let blk = format!("{ROOT}blkparse-sample.txt");
        assert_refused_saying(
            &[
                "sim",
                "--trace",
                &blk,
                "--trace-format",
                "blkparse",
                "--trace-unit",
                "s",
            ],
            &["--trace-unit s: blkparse traces give their own time unit; a unit applies to ascii only"],
        );
        assert_refused_saying(
            &["sim", "--trace", "/dev/zero"],
            &["/dev/zero: is a character device"],
        );
    }
}
