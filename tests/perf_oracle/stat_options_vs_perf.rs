//! The stat example's `-n`, `--interval-count`, `--timeout`, `--all-user`
//! / `--all-kernel` and `-B` against perf 6.1 on this machine: the same
//! lines (numbers masked), the same status. Skipped, saying so, without
//! perf.

use crate::stat_support::stat_binary;
use crate::stat_vs_perf::perf;

use std::process::Command;
use std::time::{Duration, Instant};

/// (status, stderr with every digit as `N`, how long it took).
fn run(perf: Option<&str>, args: &[&str]) -> (Option<i32>, String, Duration) {
    let (code, text, took) = run_raw(perf, args);
    (code, mask(&text), took)
}

/// Every digit as `N`.
fn mask(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_digit() { 'N' } else { c })
        .collect()
}

/// (status, stderr as printed, how long it took) of `perf stat ARGS`
/// (`perf`: its path) or of the example.
fn run_raw(perf: Option<&str>, args: &[&str]) -> (Option<i32>, String, Duration) {
    let mut cmd = match perf {
        Some(p) => {
            let mut c = Command::new(p);
            c.arg("stat");
            c
        }
        None => Command::new(stat_binary()),
    };
    let start = Instant::now();
    let out = cmd.args(args).output().unwrap();
    let took = start.elapsed();
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), text, took)
}

/// Collapses runs of `N` and `.` (widths of numbers vary run to run), and
/// drops the scale of a rate's unit (`K/sec`, `M/sec`, `G/sec`: perf picks
/// it from the value, a count over the run's time, which varies run to run:
/// one page fault in a 1.5 ms run is 666.7 /sec, in a 0.9 ms one 1.1 K/sec).
fn shape(text: &str) -> String {
    let text = ["K/sec", "M/sec", "G/sec"]
        .iter()
        .fold(text.to_owned(), |t, scaled| t.replace(scaled, "/sec"));
    let mut out = String::new();
    for c in text.chars() {
        if (c == 'N' || c == '.') && out.ends_with(['N', '.']) {
            continue;
        }
        out.push(c);
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn null_run_prints_only_the_times_as_perf() {
    let Some(perf) = perf() else { return };
    for args in [
        &["-n", "--", "sleep", "0.1"][..],
        &["-n", "-x,", "--", "sleep", "0.1"][..],
    ] {
        let (oc, ours, _) = run(None, args);
        let (pc, theirs, _) = run(Some(&perf), args);
        assert_eq!(oc, pc, "{args:?}");
        assert_eq!(ours, theirs, "{args:?}");
    }
}

#[test]
fn interval_count_stops_after_n_intervals_as_perf() {
    let Some(perf) = perf() else { return };
    let args = [
        "-x,",
        "-I",
        "100",
        "--interval-count",
        "2",
        "-e",
        "task-clock",
        "--",
        "sleep",
        "2",
    ];
    let (oc, ours, took) = run(None, &args);
    let (pc, theirs, _) = run(Some(&perf), &args);
    assert_eq!(oc, pc);
    assert!(
        took < Duration::from_secs(1),
        "the command was not ended: {took:?}"
    );
    assert_eq!(
        ours.lines().count(),
        theirs.lines().count(),
        "{ours}\n---\n{theirs}"
    );
    assert_eq!(ours.lines().count(), 2, "{ours}");
}

#[test]
fn timeout_ends_the_command_and_reports_as_perf() {
    let Some(perf) = perf() else { return };
    let args = [
        "-x,",
        "--timeout",
        "200",
        "-e",
        "task-clock",
        "--",
        "sleep",
        "2",
    ];
    let (oc, ours, took) = run(None, &args);
    let (pc, theirs, _) = run(Some(&perf), &args);
    assert_eq!(oc, pc);
    assert!(took < Duration::from_secs(1), "{took:?}");
    assert!(ours.starts_with("sleep: Terminated\n"), "{ours}");
    assert_eq!(shape(&ours), shape(&theirs));
}

/// The `seconds time elapsed` of a table report (CSV prints none).
fn elapsed(text: &str) -> f64 {
    text.lines()
        .find_map(|l| l.trim().strip_suffix("seconds time elapsed"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no elapsed time in {text}"))
}

#[test]
fn timeout_ends_system_wide_and_attached_counting_as_perf() {
    let Some(perf) = perf() else { return };
    let _busy = crate::one_busy_test_at_a_time();
    let mut sleeper = Command::new("sleep").arg("5").spawn().unwrap();
    let pid = sleeper.id().to_string();
    let runs: [&[&str]; 3] = [
        &["-a", "--timeout", "300", "-e", "task-clock"],
        &[
            "-a",
            "--timeout",
            "300",
            "-e",
            "task-clock",
            "--",
            "sleep",
            "2",
        ],
        &["-p", &pid, "--timeout", "300", "-e", "task-clock"],
    ];
    for args in runs {
        // A late wake-up of either tool on a loaded machine only adds to
        // its elapsed time: up to three tries, one of them must agree.
        let mut seen = Vec::new();
        for _ in 0..3 {
            let (oc, ours, took) = run_raw(None, args);
            let (pc, theirs, _) = run_raw(Some(&perf), args);
            assert_eq!(oc, pc, "{args:?}: {ours}");
            assert!(took < Duration::from_secs(1), "{args:?} took {took:?}");
            assert_eq!(shape(&mask(&ours)), shape(&mask(&theirs)), "{args:?}");
            let (e_ours, e_perf) = (elapsed(&ours), elapsed(&theirs));
            seen.push((e_ours, e_perf));
            if (e_ours - e_perf).abs() <= 0.005 {
                break;
            }
        }
        println!("{args:?}: elapsed (ours, perf) {seen:?}");
        assert!(
            seen.iter().any(|(o, p)| (o - p).abs() <= 0.005),
            "{args:?}: elapsed (ours, perf) in seconds, never within 5 ms: {seen:?}"
        );
    }
    let _ = sleeper.kill();
    let _ = sleeper.wait();
}

#[test]
fn all_user_all_kernel_and_big_num_behave_as_perf() {
    let Some(perf) = perf() else { return };
    for opt in ["--all-user", "--all-kernel", "-B"] {
        let args = [opt, "-x,", "-e", "task-clock,page-faults", "--", "true"];
        let (oc, ours, _) = run(None, &args);
        let (pc, theirs, _) = run(Some(&perf), &args);
        assert_eq!(oc, pc, "{opt}");
        assert_eq!(shape(&ours), shape(&theirs), "{opt}");
    }
}
