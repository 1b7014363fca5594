//! The stat example's `-n`, `--interval-count`, `--timeout`, `--all-user`
//! / `--all-kernel` and `-B` against perf 6.1 on this machine: the same
//! lines (numbers masked), the same status. Skipped, saying so, without
//! perf.

use crate::stat_support::stat_binary;
use crate::stat_vs_perf::perf;

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

/// (status, stderr with every digit as `N`).
fn run(perf: Option<&str>, args: &[&str]) -> (Option<i32>, String) {
    let (code, text) = run_raw(perf, args);
    (code, mask(&text))
}

/// Every digit as `N`.
fn mask(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_digit() { 'N' } else { c })
        .collect()
}

/// A command that only ends when something ends it: a tool that does not
/// would hang the test ([`HUNG`] guards against that).
const ENDLESS: [&str; 3] = ["--", "sleep", "1000"];

/// How long a run may take before the test calls it hung: a guard against
/// a hang, not a time bound (the runs here take 0.1-0.3 s).
const HUNG: Duration = Duration::from_secs(120);

/// (status, stderr as printed) of `perf stat ARGS` (`perf`: its path) or
/// of the example, in a process group of its own. A run that has not ended
/// after [`HUNG`] has its group killed and fails the test.
fn run_raw(perf: Option<&str>, args: &[&str]) -> (Option<i32>, String) {
    let mut cmd = match perf {
        Some(p) => {
            let mut c = Command::new(p);
            c.arg("stat");
            c
        }
        None => Command::new(stat_binary()),
    };
    let child = cmd
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let group = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output().unwrap()));
    let out = rx.recv_timeout(HUNG).unwrap_or_else(|_| {
        // SAFETY: signalling the process group of our own child.
        unsafe { libc::kill(-group, libc::SIGKILL) };
        panic!("hung: {perf:?} stat {args:?} did not end in {HUNG:?}")
    });
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), text)
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
        let (oc, ours) = run(None, args);
        let (pc, theirs) = run(Some(&perf), args);
        assert_eq!(oc, pc, "{args:?}");
        assert_eq!(ours, theirs, "{args:?}");
    }
}

/// `--interval-count 2`: both tools print 2 intervals; ours ends a
/// command that never ends by itself (else the run hangs: [`HUNG`]). perf
/// 6.1 exits there but leaves its command running, holding the pipes, so
/// its command here is a 1 s sleep.
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
    ];
    let (oc, ours) = run(None, &[&args[..], &ENDLESS].concat());
    let (pc, theirs) = run(Some(&perf), &[&args[..], &["--", "sleep", "1"]].concat());
    assert_eq!(oc, pc);
    assert_eq!(
        ours.lines().count(),
        theirs.lines().count(),
        "{ours}\n---\n{theirs}"
    );
    assert_eq!(ours.lines().count(), 2, "{ours}");
}

/// `--timeout 200` on a command that never ends by itself: the timeout
/// ends it (SIGTERM, reported as perf reports it); not ending it would
/// hang ([`HUNG`]).
#[test]
fn timeout_ends_the_command_and_reports_as_perf() {
    let Some(perf) = perf() else { return };
    let mut args = vec!["-x,", "--timeout", "200", "-e", "task-clock"];
    args.extend(ENDLESS);
    let (oc, ours) = run(None, &args);
    let (pc, theirs) = run(Some(&perf), &args);
    assert_eq!(oc, pc);
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

/// `--timeout 300` with no command, with a command and attached to a
/// process, none of which ends by itself: the timeout ends each run (else
/// [`HUNG`]), the report has perf's lines, and counting stopped no earlier
/// than the timeout (elapsed >= 300 ms: a lower bound, which load cannot
/// break). How close our elapsed is to perf's is measured in the bench
/// `stat_vs_perf_timing`.
#[test]
fn timeout_ends_system_wide_and_attached_counting_as_perf() {
    let Some(perf) = perf() else { return };
    let sleeper = Killed(
        Command::new("sleep")
            .arg("1000")
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = sleeper.0.id().to_string();
    let timed = ["--timeout", "300", "-e", "task-clock"];
    let runs: [Vec<&str>; 3] = [
        [&["-a"][..], &timed].concat(),
        [&["-a"][..], &timed, &ENDLESS].concat(),
        [&["-p", &pid][..], &timed].concat(),
    ];
    for args in &runs {
        let (oc, ours) = run_raw(None, args);
        let (pc, theirs) = run_raw(Some(&perf), args);
        assert_eq!(oc, pc, "{args:?}: {ours}");
        assert_eq!(shape(&mask(&ours)), shape(&mask(&theirs)), "{args:?}");
        for (who, text) in [("ours", &ours), ("perf", &theirs)] {
            assert!(
                elapsed(text) >= 0.3,
                "{args:?}: {who} stopped counting before the 300 ms timeout: {text}"
            );
        }
    }
}

/// A child killed and reaped when dropped (also when an assertion fails).
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn all_user_all_kernel_and_big_num_behave_as_perf() {
    let Some(perf) = perf() else { return };
    for opt in ["--all-user", "--all-kernel", "-B"] {
        let args = [opt, "-x,", "-e", "task-clock,page-faults", "--", "true"];
        let (oc, ours) = run(None, &args);
        let (pc, theirs) = run(Some(&perf), &args);
        assert_eq!(oc, pc, "{opt}");
        assert_eq!(shape(&ours), shape(&theirs), "{opt}");
    }
}
