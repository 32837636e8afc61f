//! End-to-end tests of the `iosteer` binary, by topic.

use assert_cmd::Command;

fn iosteer() -> Command {
    Command::cargo_bin("iosteer").expect("the binary is built")
}

fn stdout_of(args: &[&str]) -> String {
    let out = iosteer().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

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
        let out = iosteer().arg("benchmark").output().unwrap();
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("unrecognized subcommand"));
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
        let text = stdout_of(&[
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
        let results: serde_json::Value = serde_json::from_str(&text).unwrap();
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
        let out = iosteer()
            .args([
                "bench",
                "sched",
                "--requests",
                "10",
                "--policy",
                "netflix:write.limiter=tokens",
            ])
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("write.limiter") && err.contains("queue_depth, iops, bandwidth"),
            "{err}"
        );
        let out = iosteer()
            .args(["bench", "sched", "--policy", "bfq"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("fifo, netflix"),
            "{err}"
        );
        assert!(!err.contains("panicked"));
    }
}

mod device {
    use super::*;

    #[test]
    fn waf_json_has_the_measured_and_the_closed_form() {
        let text = stdout_of(&[
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
        let r: serde_json::Value = serde_json::from_str(&text).unwrap();
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
        let out = iosteer()
            .args(["device", "waf", "--victim", "lru"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("greedy, fifo, cost_benefit"),
            "{err}"
        );
        let out = iosteer()
            .args(["device", "waf", "--alpha", "0.8"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("alpha"), "{err}");
        let dir = std::env::temp_dir().join("iosteer-cli-test");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("broken.toml");
        std::fs::write(&file, "name = \"x\"\n[geometry]\nchannels = \"eight\"\n").unwrap();
        let out = iosteer()
            .args(["device", "show", file.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("broken.toml") && err.contains("channels"),
            "{err}"
        );
        assert!(!err.contains("panicked"));
    }
}
