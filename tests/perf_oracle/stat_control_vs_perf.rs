//! perf's control protocol (`--control`, `-D -1`) served by the stat
//! example against perf stat 6.1 itself: a workload of phases with known
//! numbers of getpid calls counted exactly in the enabled phases through
//! both, over pipes, a socket pair and FIFOs (the byte sequences:
//! `control_bytes_vs_perf.rs`). Every wait has a deadline
//! (`control_support::STEP`): a tool that does not answer fails the test
//! instead of hanging it.
//!
//! Skipped, saying so, without perf or tracefs.

use crate::control_support::{csv_value, workload_argv, Driven};
use crate::lab_support;
use crate::stat_support::{stat_binary, tracefs_usable};
use crate::stat_vs_perf::perf;
use perf_event_host::control::{Channel, Tool};
use std::path::PathBuf;

pub(crate) const EVENT: &str = "syscalls:sys_enter_getpid";

/// perf stat's and the example's command lines up to `--`, the control
/// value left as `CONTROL`; `None` (the test skips, saying why) without
/// perf or tracefs. A re-run of this binary as the phases workload runs
/// the workload instead and exits.
pub(crate) fn tools() -> Option<[(&'static str, Vec<String>); 2]> {
    tools_with(&["-x,", "-e", EVENT, "-D", "-1", "--control", "CONTROL"])
}

/// [`tools`] with the options `opts`.
pub(crate) fn tools_with(opts: &[&str]) -> Option<[(&'static str, Vec<String>); 2]> {
    crate::control_support::run_role();
    let perf = perf()?;
    if !tracefs_usable() {
        lab_support::skip("needs tracefs", "tracefs is not mounted or not readable");
        return None;
    }
    let opts: Vec<String> = opts.iter().map(|o| o.to_string()).collect();
    let mut theirs = vec![perf, "stat".into()];
    theirs.extend(opts.iter().cloned());
    let mut ours = vec![stat_binary().to_str().unwrap().to_owned()];
    ours.extend(opts.iter().cloned());
    Some([("perf stat", theirs), ("stat example", ours)])
}

pub(crate) fn argv(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// A path for a FIFO of this test process.
pub(crate) fn fifo_path(name: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    std::env::temp_dir().join(format!("control-{}-{n}-{name}", std::process::id()))
}

/// The perf messages of a stat log: every line but the CSV counts.
pub(crate) fn messages(log: &[String]) -> Vec<String> {
    log.iter()
        .filter(|l| !l.contains(&format!(",{EVENT},")))
        .cloned()
        .collect()
}

#[test]
fn enabled_phases_count_exactly_through_perf_stat_and_ours() {
    let Some(tools) = tools() else { return };
    let workload = workload_argv(
        module_path!(),
        "enabled_phases_count_exactly_through_perf_stat_and_ours",
    );
    for (label, tool) in &tools {
        for way in ["pipes", "socket pair", "fifos"] {
            let channel = match way {
                "pipes" => Channel::pipes(),
                "socket pair" => Channel::socket_pair(),
                _ => Channel::fifos(&fifo_path("ctl"), &fifo_path("ack")),
            }
            .unwrap();
            let mut d = Driven::start(&argv(tool), &workload, channel, Tool::Stat);
            d.phase(100);
            d.client().enable().unwrap();
            d.phase(1000);
            d.client().disable().unwrap();
            d.phase(50);
            d.client().enable().unwrap();
            d.phase(7);
            d.client().disable().unwrap();
            d.phase(3);
            let (status, log) = d.end();
            println!("{label} over {way}: {log:?}");
            assert!(status.success(), "{label} over {way}: {status}: {log:?}");
            assert_eq!(
                csv_value(&log, EVENT),
                "1007",
                "{label} over {way}: {log:?}"
            );
            assert_eq!(
                messages(&log),
                [
                    "Events disabled",
                    "Events enabled",
                    "Events disabled",
                    "Events enabled",
                    "Events disabled"
                ],
                "{label} over {way}"
            );
        }
    }
}
