//! `sample -a -- ./hot` against `perf record -a -- ./hot` (cpu-clock every
//! 50 us of CPU time, about 40,000 samples of the workload per run, three
//! runs of each interleaved, medians compared): the tool's own share of
//! all samples is no larger than perf record's own share, and the hot
//! functions' shares of the workload's samples are within 1 point of
//! perf report's. Shares of the workload's samples, not of all: the rest
//! of the machine (other builds on a shared 2-CPU host) differs between
//! two runs by far more than a point.

use crate::sample_support::{
    build_sample, hot, median, ok, one_busy_test_at_a_time, perf_report, rows, sample, scratch,
    share_within, tools_here,
};
use std::process::Command;

const PERIOD: &str = "50000";
const N: &str = "300000000";

/// perf record -a: (perf's own share in percent, hot_twice's and
/// hot_once's shares of the workload's samples).
fn perf_run(dir: &std::path::Path, exe: &std::path::Path) -> Option<(f64, f64, f64)> {
    let data = dir.join("a.data");
    let rec = Command::new("perf")
        .args(["record", "-q", "-a", "-e", "cpu-clock", "-c", PERIOD, "-o"])
        .arg(&data)
        .arg("--")
        .arg(exe)
        .arg(N)
        .spawn()
        .unwrap();
    let pid = rec.id();
    if !rec.wait_with_output().unwrap().status.success() {
        return None;
    }
    // Lines `    0.09%     9831:perf`.
    let own = perf_report(&data, &["--sort", "pid"])
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let pct: f64 = f.next()?.strip_suffix('%')?.parse().ok()?;
            let who = f.next()?;
            who.starts_with(&format!("{pid}:")).then_some(pct)
        })
        .sum();
    let r = rows(&perf_report(&data, &["--sort", "dso,sym"]));
    Some((
        own,
        share_within(&r, "hot", "hot_twice"),
        share_within(&r, "hot", "hot_once"),
    ))
}

/// sample -a: the same three numbers.
fn sample_run(exe: &std::path::Path) -> (f64, f64, f64) {
    let out = sample()
        .args(["-a", &format!("-c{PERIOD}"), "-ecpu-clock", "--"])
        .arg(exe)
        .arg(N)
        .output()
        .unwrap();
    let text = ok(out, "sample -a");
    // `# Samples of this tool (pid N): X (P%)`.
    let own = text
        .lines()
        .find_map(|l| l.strip_prefix("# Samples of this tool"))
        .and_then(|l| l.rsplit_once('(')?.1.strip_suffix("%)")?.parse().ok())
        .unwrap_or_else(|| panic!("no line with the tool's own samples:\n{text}"));
    let r = rows(&text);
    (
        own,
        share_within(&r, "hot", "hot_twice"),
        share_within(&r, "hot", "hot_once"),
    )
}

#[test]
fn own_share_and_hot_shares_match_perf_record_a() {
    if !tools_here() {
        return;
    }
    let dir = scratch("system-wide");
    let exe = hot(&dir);
    build_sample();
    let _busy = one_busy_test_at_a_time();
    let (mut perf, mut ours) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let Some(p) = perf_run(&dir, &exe) else {
            crate::lab_support::skip("needs perf", "perf record -a cannot sample here");
            return;
        };
        perf.push(p);
        ours.push(sample_run(&exe));
    }
    println!("perf (own %, hot_twice %, hot_once %): {perf:?}\nsample: {ours:?}");
    let col =
        |v: &[(f64, f64, f64)], i: usize| median(v.iter().map(|t| [t.0, t.1, t.2][i]).collect());
    // Own shares are tenths of a percent and move by several hundredths
    // from run to run (CI saw perf's at 0.14, 0.15 and 0.19 % in one run,
    // and on a slower day perf's 0.17-0.28 % against ours 0.11-0.44 %):
    // ours is no larger than perf's median plus perf's own run-to-run
    // spread, or 0.15 points when perf's five runs happened to spread less.
    let perf_own: Vec<f64> = perf.iter().map(|t| t.0).collect();
    let spread = (perf_own.iter().copied().fold(f64::MIN, f64::max)
        - perf_own.iter().copied().fold(f64::MAX, f64::min))
    .max(0.15);
    assert!(
        col(&ours, 0) <= col(&perf, 0) + spread,
        "the tool's own share {:.2} % > perf record's {:.2} % (+ its spread {spread:.2})\n\
         perf: {perf:?}\nours: {ours:?}",
        col(&ours, 0),
        col(&perf, 0)
    );
    for (i, name) in [(1, "hot_twice"), (2, "hot_once")] {
        let (p, o) = (col(&perf, i), col(&ours, i));
        assert!(
            (p - o).abs() <= 1.0,
            "{name}: perf {p:.2} %, sample {o:.2} % of the workload's samples\nperf: \
             {perf:?}\nours: {ours:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
