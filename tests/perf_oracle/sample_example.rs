//! The sample example against `perf record` + `perf report --sort dso,sym`
//! on the same workload: a C program spending two thirds of its time in
//! `hot_twice` and one third in `hot_once`. Both reports name hot_twice
//! then hot_once as the workload's rows above 20 % of its samples
//! (sampled by cpu-clock every 1 ms of CPU time). Until issue 37 every
//! row of 5 % or more also had to be within 8 points of the other
//! report's: how close the shares of two runs are is measured by the bench
//! `sample_vs_perf_shares` (BENCHMARKS.md section 13), not asserted.
//! Kernel rows are not compared: their share depends on how often other
//! load preempted the run.

use crate::lab_support;
use std::path::{Path, PathBuf};
use std::process::Command;

const WORKLOAD: &str = r#"
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
int main(int argc, char **argv) {
    uint64_t n = argc > 1 ? strtoull(argv[1], 0, 10) : 100000000ULL;
    for (int r = 0; r < 10; r++) { hot_twice(2 * n / 10); hot_once(n / 10); }
    return 0;
}
"#;

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn workload(dir: &Path) -> PathBuf {
    let src = dir.join("work.c");
    let exe = dir.join("work");
    std::fs::write(&src, WORKLOAD).unwrap();
    let st = Command::new("cc")
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success(), "cc failed");
    exe
}

/// `(dso, mode, symbol) -> percent` from lines `  12.34%  dso  [.] sym`.
fn rows(text: &str) -> Rows {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let pct: f64 = f.next()?.strip_suffix('%')?.parse().ok()?;
            let dso = f.next()?.to_string();
            let mode = f.next()?.to_string();
            let sym = f.collect::<Vec<_>>().join(" ");
            Some(((dso, mode, sym), pct))
        })
        .collect()
}

type Rows = Vec<((String, String, String), f64)>;

/// The workload's own rows (dso `work`) as shares of its own samples, and
/// the percentage of all samples they hold. Kernel rows are left out: the
/// return-to-user paths (`irqentry_exit_to_user_mode`) grow with how often
/// other load preempts the workload, which differs between two runs on a
/// shared machine (once 11.8 % in one run, 1.5 % in the other, with the
/// workload's rows scaled down alike).
fn workload_rows(r: &Rows) -> (Rows, f64) {
    let own: Rows = r.iter().filter(|x| x.0 .0 == "work").cloned().collect();
    let total: f64 = own.iter().map(|x| x.1).sum();
    let shares = own
        .into_iter()
        .map(|(key, pct)| (key, pct * 100.0 / total.max(1e-9)))
        .collect();
    (shares, total)
}

/// The workload's code is sampled by both, and both name hot_twice then
/// hot_once as its rows above 20 % (two thirds and one third of the
/// workload's own work: its instructions, not the load, decide that).
/// How close the two shares are is measured, not asserted (`cargo run
/// --release -p bench --bin sample_vs_perf_shares`, BENCHMARKS.md section
/// 13): two runs on a loaded machine differ by what else ran.
fn agree(perf_all: &Rows, ours_all: &Rows) {
    let ((perf, perf_total), (ours, ours_total)) =
        (workload_rows(perf_all), workload_rows(ours_all));
    assert!(
        perf_total > 0.0 && ours_total > 0.0,
        "the workload's own code has {perf_total:.1} % of perf's samples, {ours_total:.1} % of \
         ours\nperf: {perf_all:?}\nours: {ours_all:?}"
    );
    let (perf, ours) = (&perf, &ours);
    let top = |r: &Rows| {
        r.iter()
            .filter(|x| x.1 >= 20.0)
            .map(|x| x.0 .2.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(top(perf), ["hot_twice", "hot_once"]);
    assert_eq!(top(ours), ["hot_twice", "hot_once"]);
}

fn perf_report(data: &Path) -> Rows {
    let rep = Command::new("perf")
        .args(["report", "--stdio", "--sort", "dso,sym", "-i"])
        .arg(data)
        .output()
        .unwrap();
    rows(&String::from_utf8_lossy(&rep.stdout))
}

fn sample_example() -> Command {
    let mut c = Command::new(env!("CARGO"));
    c.args([
        "run",
        "--quiet",
        "-p",
        "perf-data-file",
        "--example",
        "sample",
        "--",
    ]);
    c
}

#[test]
fn attached_to_the_same_running_process_both_reports_agree() {
    if !have("perf") {
        lab_support::skip(
            "needs perf",
            "perf is not installed (apt-get install linux-perf)",
        );
        return;
    }
    if !have("cc") {
        lab_support::skip("needs cc", "no C compiler (cc) for the workload");
        return;
    }
    let dir = std::env::temp_dir().join(format!("sample-example-p-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = workload(&dir);
    // Build the example first, so both samplers attach at about the same time.
    let built = sample_example().arg("--help").output().unwrap();
    assert!(
        !built.stderr.is_empty(),
        "the example builds and prints its usage"
    );
    let mut work = Command::new(&exe).arg("300000000").spawn().unwrap();
    let pid = work.id().to_string();
    let data = dir.join("perf.data");
    let perf = Command::new("perf")
        .args([
            "record",
            "-q",
            "-e",
            "cpu-clock",
            "-c",
            "1000000",
            "-p",
            &pid,
            "-o",
        ])
        .arg(&data)
        .spawn()
        .unwrap();
    let ours = sample_example()
        .args(["-e", "cpu-clock", "-c", "1000000", "-p", &pid])
        .output()
        .unwrap();
    work.wait().unwrap();
    let perf_ok = perf.wait_with_output().unwrap().status.success();
    if !perf_ok || !data.exists() {
        lab_support::skip("needs perf", "perf record -p cannot sample here");
        return;
    }
    let text = String::from_utf8_lossy(&ours.stdout);
    assert!(
        ours.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    let (perf, ours) = (perf_report(&data), rows(&text));
    println!("perf: {perf:?}\nours: {ours:?}");
    agree(&perf, &ours);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_per_symbol_report_agrees_with_perf_report() {
    if !have("perf") {
        lab_support::skip(
            "needs perf",
            "perf is not installed (apt-get install linux-perf)",
        );
        return;
    }
    if !have("cc") {
        lab_support::skip("needs cc", "no C compiler (cc) for the workload");
        return;
    }
    let dir = std::env::temp_dir().join(format!("sample-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = workload(&dir);
    let n = "100000000";

    let data = dir.join("perf.data");
    let rec = Command::new("perf")
        .args(["record", "-q", "-e", "cpu-clock", "-c", "1000000", "-o"])
        .arg(&data)
        .arg("--")
        .arg(&exe)
        .arg(n)
        .output()
        .unwrap();
    if !rec.status.success() {
        let err = String::from_utf8_lossy(&rec.stderr);
        lab_support::skip(
            "needs perf",
            &format!("perf record cannot sample here: {err}"),
        );
        return;
    }
    let perf = perf_report(&data);

    let ours = sample_example()
        .args(["-e", "cpu-clock", "-c", "1000000", "--"])
        .arg(&exe)
        .arg(n)
        .output()
        .expect("cargo run --example sample");
    let text = String::from_utf8_lossy(&ours.stdout);
    assert!(
        ours.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    let ours = rows(&text);
    println!("perf: {perf:?}\nours: {ours:?}");

    agree(&perf, &ours);
    let _ = std::fs::remove_dir_all(&dir);
}
