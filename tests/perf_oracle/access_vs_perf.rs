//! perf and the stat example under a seccomp filter that answers
//! `perf_event_open` with EPERM (what Docker's default profile does in a
//! container without CAP_PERFMON): both fail; ours names the filter and
//! the remedy. perf's text is printed beside ours (`--nocapture`).

use crate::seccomp_support;
use crate::stat_support::stat_binary;
use crate::stat_vs_perf::perf;

use std::process::Command;

fn run_filtered(program: &str, args: &[&str]) -> (bool, String) {
    let mut cmd = Command::new(program);
    cmd.args(args);
    let out = seccomp_support::deny_in(&mut cmd, libc::EPERM)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn under_a_seccomp_filter_stat_names_it_where_perf_guesses() {
    if let Some(why) = seccomp_support::unsupported() {
        crate::lab_support::skip(
            "under_a_seccomp_filter_stat_names_it_where_perf_guesses",
            &why,
        );
        return;
    }
    let Some(perf) = perf() else { return };
    let (perf_ok, perf_text) = run_filtered(&perf, &["stat", "-e", "task-clock", "--", "true"]);
    let stat = stat_binary();
    let (ours_ok, ours) = run_filtered(stat.to_str().unwrap(), &["-e", "task-clock", "true"]);
    println!("perf stat -e task-clock -- true under the filter:\n{perf_text}");
    println!("stat -e task-clock true under the filter:\n{ours}");
    assert!(!perf_ok, "perf counted under the filter: {perf_text}");
    assert!(!ours_ok, "stat counted under the filter: {ours}");
    assert!(ours.contains("EPERM"), "{ours}");
    assert!(
        ours.contains("a seccomp filter denies perf_event_open"),
        "{ours}"
    );
    assert!(ours.contains("--cap-add PERFMON"), "{ours}");
    // Without the filter the same command counts: the filter was the cause.
    let out = Command::new(&stat)
        .args(["-e", "task-clock", "true"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("seccomp"), "{text}");
}
