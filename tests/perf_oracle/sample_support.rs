//! What the sample example's tests against perf share: the hot workload
//! (a C program built with frame pointers, so perf and the example walk
//! the same callchains), the optimized example (the release build users
//! run, whose `-a` samples of itself the bench `sample_vs_perf_shares`
//! measures: a debug build copies records several times slower), and the
//! checks that perf and cc are here.

use crate::lab_support;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub use crate::one_busy_test_at_a_time;

/// `hot_twice` then `hot_once`, ten times: two thirds and one third of the
/// time, both called from `work`, called from `main`.
const HOT: &str = r#"
#include <stdint.h>
#include <stdlib.h>
volatile uint64_t sink;
__attribute__((noinline)) void hot_twice(uint64_t n) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < n; i++) x = x * 6364136223846793005ULL + i;
    sink = x;
}
__attribute__((noinline)) void hot_once(uint64_t n) {
    uint64_t x = 3;
    for (uint64_t i = 0; i < n; i++) x = x * 2862933555777941757ULL + i;
    sink = x;
}
__attribute__((noinline)) void work(uint64_t n) {
    for (int r = 0; r < 10; r++) { hot_twice(2 * n / 10); hot_once(n / 10); }
}
int main(int argc, char **argv) {
    work(argc > 1 ? strtoull(argv[1], 0, 10) : 100000000ULL);
    return 0;
}
"#;

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether perf and cc are here (else the test is reported as skipped).
pub fn tools_here() -> bool {
    if !have("perf") {
        lab_support::skip(
            "needs perf",
            "perf is not installed (apt-get install linux-perf)",
        );
        return false;
    }
    if !have("cc") {
        lab_support::skip("needs cc", "no C compiler (cc) for the workload");
        return false;
    }
    true
}

/// A scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sample-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Builds the hot workload in `dir`; returns its path (its file name is `hot`).
pub fn hot(dir: &Path) -> PathBuf {
    build_hot(dir, "hot", &[])
}

/// The hot workload built as a position-dependent executable (`hot-fixed`
/// in `dir`): its global `sink` is at the address `nm` prints, for a
/// hardware breakpoint (`mem:ADDR`); returns its path and that address.
pub fn hot_fixed(dir: &Path) -> (PathBuf, u64) {
    let exe = build_hot(dir, "hot-fixed", &["-no-pie"]);
    let out = Command::new("nm").arg(&exe).output().unwrap();
    let syms = ok(out, "nm");
    let sink = syms
        .lines()
        .find_map(|l| l.strip_suffix(" B sink"))
        .unwrap_or_else(|| panic!("no sink in\n{syms}"));
    (exe, u64::from_str_radix(sink, 16).unwrap())
}

fn build_hot(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let src = dir.join("hot.c");
    let exe = dir.join(name);
    std::fs::write(&src, HOT).unwrap();
    let st = Command::new("cc")
        .args([
            "-O1",
            "-fno-omit-frame-pointer",
            "-mno-omit-leaf-frame-pointer",
        ])
        .args(extra)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success(), "cc failed");
    exe
}

/// The optimized sample example, after cargo's `run` or `build`.
const SAMPLE_EXAMPLE: [&str; 6] = [
    "--quiet",
    "--release",
    "-p",
    "perf-data-file",
    "--example",
    "sample",
];

/// `cargo run --release -p perf-data-file --example sample -- ARGS`.
pub fn sample() -> Command {
    let mut c = Command::new(env!("CARGO"));
    c.arg("run").args(SAMPLE_EXAMPLE).arg("--");
    c
}

/// Builds the optimized example (so that timing starts with the tool).
pub fn build_sample() {
    let st = Command::new(env!("CARGO"))
        .arg("build")
        .args(SAMPLE_EXAMPLE)
        .status()
        .unwrap();
    assert!(st.success(), "cargo build --release --example sample");
}

/// The optimized example's binary (built by [`build_sample`]), run
/// directly so that a signal reaches it and not cargo.
pub fn sample_binary() -> PathBuf {
    // target/debug/deps/perf_oracle-HASH -> target/release/examples/sample
    let exe = std::env::current_exe().unwrap();
    let target = exe
        .parent()
        .and_then(|d| d.parent())
        .and_then(|d| d.parent())
        .unwrap();
    target.join("release/examples/sample")
}

/// The output, asserted successful.
pub fn ok(out: Output, what: &str) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what}: {:?}\n{text}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// `(dso, symbol, percent)` from report lines `  12.34%  dso  [.] sym`.
pub fn rows(text: &str) -> Vec<(String, String, f64)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let pct: f64 = f.next()?.strip_suffix('%')?.parse().ok()?;
            let dso = f.next()?.to_string();
            let _mode = f.next()?;
            Some((dso, f.collect::<Vec<_>>().join(" "), pct))
        })
        .collect()
}

/// `perf report --stdio ARGS -i DATA`.
pub fn perf_report(data: &Path, args: &[&str]) -> String {
    perf_on(data, &[&["report", "--stdio"][..], args].concat())
}

/// `perf ARGS -i DATA`'s output, asserted successful.
pub fn perf_on(data: &Path, args: &[&str]) -> String {
    let out = Command::new("perf")
        .args(args)
        .arg("-i")
        .arg(data)
        .output()
        .unwrap();
    ok(out, &format!("perf {args:?}"))
}
