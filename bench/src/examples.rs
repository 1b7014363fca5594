//! The workspace's example tools, built in release for the benches that
//! run them against perf.

use std::path::PathBuf;
use std::process::Command;

/// The stat example (`perf-event-host`'s), built in release beside the
/// running bench binary: its path.
pub fn stat_example() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "--release",
            "-p",
            "perf-event-host",
            "--example",
            "stat",
        ])
        .status()
        .expect("cargo build --example stat");
    assert!(status.success(), "building the stat example failed");
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().join("examples").join("stat")
}
