//! Running the stat example's binary directly (signals must reach it, not
//! cargo) and reading its CSV.
#![allow(dead_code)] // each test binary uses part of it

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The stat example, built once for this test binary's profile.
pub fn stat_binary() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            // target/<profile>/deps/<test> -> target/<profile>/examples/stat
            let exe = std::env::current_exe().unwrap();
            let profile_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
            let mut build = Command::new(env!("CARGO"));
            build.args(["build", "--quiet", "--example", "stat"]);
            if profile_dir.ends_with("release") {
                build.arg("--release");
            }
            let status = build.status().expect("cargo build --example stat");
            assert!(status.success(), "building the stat example failed");
            profile_dir.join("examples").join("stat")
        })
        .clone()
}

/// Runs the example with `args`; its output.
pub fn stat(args: &[&str]) -> Output {
    Command::new(stat_binary())
        .args(args)
        .output()
        .expect("run the stat example")
}

/// One CSV line split on `sep`.
pub fn fields(line: &str, sep: char) -> Vec<String> {
    line.split(sep).map(str::to_owned).collect()
}

/// The CSV lines of a report (comment and empty lines skipped).
pub fn csv_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// Whether tracepoints can be opened here: tracefs mounted and readable.
pub fn tracefs_usable() -> bool {
    [
        "/sys/kernel/tracing/events",
        "/sys/kernel/debug/tracing/events",
    ]
    .iter()
    .any(|p| std::fs::read_dir(p).is_ok_and(|mut d| d.next().is_some()))
}
