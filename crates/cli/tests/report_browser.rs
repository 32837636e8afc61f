//! report.html in a real browser: runs scripts/report-browser-test.sh when
//! `IOSTEER_BROWSER_TEST=1` (it needs Chromium, or root to install it).

use std::process::Command;

#[test]
fn the_report_loads_in_a_headless_browser() {
    if std::env::var("IOSTEER_BROWSER_TEST").as_deref() != Ok("1") {
        eprintln!("skipped: set IOSTEER_BROWSER_TEST=1 to run the browser test");
        return;
    }
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let screenshot = std::env::temp_dir().join("iosteer-report-quick.png");
    let out = Command::new("bash")
        .arg(format!("{root}/scripts/report-browser-test.sh"))
        .env("IOSTEER", env!("CARGO_BIN_EXE_iosteer"))
        .env("SCREENSHOT", &screenshot)
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("PASSED") || stdout.contains("SKIPPED"),
        "{stdout}"
    );
}
