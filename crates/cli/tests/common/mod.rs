//! What the end-to-end tests share: running the binary and reading what it
//! printed. Each test file uses a part of it.
#![allow(dead_code)]

use std::ffi::OsStr;

use assert_cmd::Command;
use tempfile::TempDir;

#[path = "../../../sim/src/example_job_files.rs"]
pub mod example_job_files;

pub fn iosteer() -> Command {
    Command::cargo_bin("iosteer").expect("the binary is built")
}

/// What one run of the binary printed, and whether it succeeded.
pub struct Outcome {
    pub ok: bool,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Outcome {
    /// Stdout as the JSON report (Null when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.stdout).unwrap_or(serde_json::Value::Null)
    }

    /// Panics with stderr unless the run succeeded.
    pub fn succeeded(self) -> Self {
        assert!(self.ok, "{}", self.stderr);
        self
    }
}

/// Runs `iosteer ARGS`.
pub fn outcome<I, S>(args: I) -> Outcome
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = iosteer().args(args).output().unwrap();
    Outcome {
        ok: out.status.success(),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `iosteer ARGS` and sends it a Ctrl-C (SIGINT) after `wait`, long
/// after the binary has installed its handler; what it then printed.
pub fn interrupted_after(args: &[&str], wait: std::time::Duration) -> Outcome {
    signalled_after("INT", 130, args, wait)
}

/// [`interrupted_after`] with `signal` (a name `kill` takes); the run must
/// exit 0 (it reported) or `status` (it stopped with nothing to report).
pub fn signalled_after(
    signal: &str,
    status: i32,
    args: &[&str],
    wait: std::time::Duration,
) -> Outcome {
    use std::process::{Command, Stdio};
    let child = Command::new(assert_cmd::cargo::cargo_bin("iosteer"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(wait);
    let pid = child.id().to_string();
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &pid])
        .status();
    assert!(sent.unwrap().success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code().map(|c| c == 0 || c == status),
        Some(true),
        "{out:?}"
    );
    Outcome {
        ok: out.status.success(),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// [`interrupted_after`], the wait doubling from `first` (five tries at
/// most) until `landed` holds of what the run printed: on a machine loaded
/// by other work, what the Ctrl-C should land in (a run under way after
/// the drive's aging) starts later. The last try's outcome otherwise.
pub fn interrupted_when_landed(
    args: &[&str],
    first: std::time::Duration,
    landed: impl Fn(&Outcome) -> bool,
) -> Outcome {
    let mut wait = first;
    for _ in 1..5 {
        let out = interrupted_after(args, wait);
        if landed(&out) {
            return out;
        }
        wait *= 2;
    }
    interrupted_after(args, wait)
}

/// Stdout of `iosteer ARGS`, which must succeed.
pub fn stdout_of(args: &[&str]) -> String {
    String::from_utf8(outcome(args).succeeded().stdout).unwrap()
}

/// The JSON report of `iosteer ARGS`, which must succeed.
pub fn json_of(args: &[&str]) -> serde_json::Value {
    outcome(args).succeeded().json()
}

/// Stderr of `iosteer ARGS`, which must fail without a panic.
pub fn stderr_of_failure(args: &[&str]) -> String {
    let out = outcome(args);
    assert!(!out.ok, "{args:?} succeeded: {}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{args:?}: {}", out.stderr);
    out.stderr
}

/// Runs the binary with `args`, which must fail (without a panic) with a
/// message holding each of `needles`.
pub fn assert_refused_saying(args: &[&str], needles: &[&str]) {
    let err = stderr_of_failure(args);
    for needle in needles {
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// A fresh directory under the temp directory, its name starting
/// `iosteer-{name}-`; removed, with all in it, when dropped.
pub fn temp_dir(name: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("iosteer-{name}-"))
        .tempdir()
        .unwrap()
}

/// A file of the repository, by its path from the root.
pub fn repo_file(path: &str) -> String {
    format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))
}

/// A file in a temporary directory of its own, which reads as its path;
/// removed with the directory when dropped.
pub struct ScratchFile {
    path: String,
    _dir: TempDir,
}

impl std::ops::Deref for ScratchFile {
    type Target = str;

    fn deref(&self) -> &str {
        &self.path
    }
}

/// Writes `text` to a file named `name` in a fresh scratch directory.
pub fn scratch_file(name: &str, text: &str) -> ScratchFile {
    let dir = temp_dir("scratch");
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    ScratchFile {
        path: path.to_str().unwrap().to_string(),
        _dir: dir,
    }
}

/// The `key` string of each element of the JSON array `array`.
pub fn each_str<'a>(array: &'a serde_json::Value, key: &str) -> Vec<&'a str> {
    array
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item[key].as_str().unwrap())
        .collect()
}

/// The last phase of `run` (a run of a JSON report): `all`, the whole run.
pub fn last_phase(run: &serde_json::Value) -> &serde_json::Value {
    run["phases"].as_array().unwrap().last().unwrap()
}

/// A tmpfs of `size` mounted on a fresh directory, unmounted when dropped;
/// `None` where mounting is not permitted.
pub struct Tmpfs(pub TempDir);

impl Tmpfs {
    /// A sparse file of `len` bytes in it.
    pub fn sparse_file(&self, name: &str, len: u64) -> std::path::PathBuf {
        let path = self.0.path().join(name);
        std::fs::File::create(&path).unwrap().set_len(len).unwrap();
        path
    }

    pub fn mount(name: &str, size: &str) -> Option<Tmpfs> {
        let dir = temp_dir(name);
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        mounted.then_some(Tmpfs(dir))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

/// What `cmd` printed, and its stderr; `None`, after a SKIPPED line that
/// shows in the test output, where io_uring is not permitted.
pub fn output_unless_no_uring(cmd: &mut Command) -> Option<(std::process::Output, String)> {
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if stderr.contains("io_uring is not available") {
        eprintln!("SKIPPED (counted): {stderr}");
        return None;
    }
    Some((out, stderr))
}
