//! The stat example against the perf tool itself (Debian's `linux-perf`):
//! both run the same commands with the same `-x,` options and their CSV is
//! compared field by field — the layout (column count, unit, event name,
//! pct, metric unit, the `<not supported>` / `<not counted>` lines) exactly,
//! deterministic counts (tracepoints fired a known number of times, system
//! calls of a fixed workload) exactly, page faults of a fixed mapping
//! within a few pages. Timing-dependent counts (task-clock) are compared
//! in the bench `stat_vs_perf_timing`, not here.
//!
//! Skipped, saying so, when `perf` is not installed or cannot count here.

use crate::lab_support;
use crate::stat_support;

use stat_support::*;
use std::collections::BTreeMap;
use std::process::Command;

/// `perf`, if installed and able to count a software event.
pub(crate) fn perf() -> Option<String> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("perf"))
            .find(|p| p.is_file())
    });
    let Some(perf) = found else {
        lab_support::skip(
            "needs perf",
            "perf is not installed (apt-get install linux-perf)",
        );
        return None;
    };
    let perf = perf.to_str().unwrap().to_owned();
    let probe = Command::new(&perf)
        .args(["stat", "-x,", "-e", "task-clock", "true"])
        .output();
    match probe {
        Ok(out) if out.status.success() => Some(perf),
        Ok(out) => {
            lab_support::skip(
                "needs perf",
                &format!(
                    "perf is installed but cannot count here: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            );
            None
        }
        Err(e) => {
            lab_support::skip("needs perf", &format!("perf does not run: {e}"));
            None
        }
    }
}

/// The CSV lines of `perf stat ARGS` (perf writes them to stderr).
fn perf_csv(perf: &str, args: &[&str]) -> Vec<Vec<String>> {
    let out = Command::new(perf).arg("stat").args(args).output().unwrap();
    assert!(out.status.success(), "perf stat {args:?}: {:?}", out);
    let text = String::from_utf8(out.stderr).unwrap();
    csv_lines(&text).iter().map(|l| fields(l, ',')).collect()
}

/// The CSV lines of the stat example with the same arguments.
fn ours_csv(args: &[&str]) -> Vec<Vec<String>> {
    let out = stat(args);
    assert!(out.status.success(), "stat {args:?}: {:?}", out);
    let text = String::from_utf8(out.stderr).unwrap();
    csv_lines(&text).iter().map(|l| fields(l, ',')).collect()
}

/// Lines by event name (wildcard expansions come in directory order in
/// perf and sorted here).
fn by_event(lines: &[Vec<String>]) -> BTreeMap<String, Vec<String>> {
    lines.iter().map(|f| (f[2].clone(), f.clone())).collect()
}

/// The layout fields of a line: all but the value, run and metric value
/// (and variance), which are measurements.
fn layout(f: &[String], repeated: bool) -> Vec<String> {
    let s = usize::from(repeated);
    let mut out = vec![
        f.len().to_string(),
        f[1].clone(),
        f[2].clone(),
        f[4 + s].clone(),
    ];
    // A rate's prefix (K/sec, M/sec) follows the measured value.
    let unit = &f[6 + s];
    out.push(if unit.ends_with("/sec") {
        "/sec".to_owned()
    } else {
        unit.clone()
    });
    if f[0].starts_with('<') {
        out.push(f[0].clone());
        out.push(f[3 + s].clone());
    }
    if repeated {
        out.push(f[3].ends_with('%').to_string());
    }
    out
}

#[test]
fn csv_layout_matches_perf_field_by_field() {
    let Some(perf) = perf() else { return };
    for args in [
        vec![
            "-x,",
            "-e",
            "task-clock,page-faults,cs,cpu-migrations,99:0",
            "true",
        ],
        vec!["-x,", "-e", "{cs,99:0},faults,task-clock", "true"],
        vec!["-x,", "-r3", "-e", "task-clock,faults,99:0", "true"],
        vec!["-x,", "-e", "cpu-clock,minor-faults,major-faults", "true"],
    ] {
        let repeated = args.contains(&"-r3");
        let theirs = perf_csv(&perf, &args);
        let ours = ours_csv(&args);
        let theirs: Vec<Vec<String>> = theirs.iter().map(|f| layout(f, repeated)).collect();
        let ours: Vec<Vec<String>> = ours.iter().map(|f| layout(f, repeated)).collect();
        assert_eq!(ours, theirs, "{args:?}");
    }
}

#[test]
fn tracepoint_counts_match_perf_exactly() {
    let Some(perf) = perf() else { return };
    if !tracefs_usable() {
        lab_support::skip(
            "needs tracefs",
            "tracefs is not mounted or not readable here",
        );
        return;
    }
    let events = "sched:sched_process_exec,sched:sched_process_fork,syscalls:sys_enter_exec*,\
                  syscalls:sys_enter_exit_group";
    let args = [
        "-x,",
        "-e",
        events,
        "sh",
        "-c",
        "/bin/true; /bin/true; (/bin/true); /bin/true",
    ];
    let theirs = by_event(&perf_csv(&perf, &args));
    let ours = by_event(&ours_csv(&args));
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "the same events, wildcard expanded the same"
    );
    for (event, f) in &ours {
        let t = &theirs[event];
        assert_eq!(f[0], t[0], "{event}: ours {f:?}, perf {t:?}");
        assert_eq!(layout(f, false), layout(t, false), "{event}");
    }
    assert_eq!(ours["sched:sched_process_exec"][0], "5");
}

/// `dd bs=1 count=1000`: exactly 1000 one-byte writes to /dev/null (and
/// 1000 reads of /dev/zero after the loader's own): the same system call
/// counts for both tools, to the call.
#[test]
fn syscall_counts_of_a_fixed_workload_match_perf_exactly() {
    let Some(perf) = perf() else { return };
    if !tracefs_usable() {
        lab_support::skip(
            "needs tracefs",
            "tracefs is not mounted or not readable here",
        );
        return;
    }
    let args = [
        "-x,",
        "-e",
        "syscalls:sys_enter_read,syscalls:sys_enter_write",
        "dd",
        "if=/dev/zero",
        "of=/dev/null",
        "bs=1",
        "count=1000",
        "status=none",
    ];
    let theirs = by_event(&perf_csv(&perf, &args));
    let ours = by_event(&ours_csv(&args));
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>()
    );
    for (event, f) in &ours {
        assert_eq!(
            f[0], theirs[event][0],
            "{event}: ours {f:?}, perf {:?}",
            theirs[event]
        );
    }
    assert_eq!(ours["syscalls:sys_enter_write"][0], "1000");
    let reads: u64 = ours["syscalls:sys_enter_read"][0].parse().unwrap();
    assert!(reads >= 1000, "{reads} reads");
}

/// How far one run's page faults may be from another's: dd first-touches
/// one fixed 4 MiB buffer (1024 pages, every run), and its own faults
/// around it (loader, libc) vary by a few pages run to run, not with load
/// or time: 1099-1103 in twelve runs of perf stat here. So no two runs
/// agree exactly, whichever tool counts.
const FAULT_SPREAD: f64 = 8.0;

/// Page faults of a fixed mapping: `dd bs=4M count=16` through one 4 MiB
/// buffer, ours and perf's within [`FAULT_SPREAD`] pages, run by run. The
/// task-clock comparison (a time) is in the bench `stat_vs_perf_timing`.
#[test]
fn page_faults_of_a_fixed_mapping_match_perf() {
    let Some(perf) = perf() else { return };
    let mut args = vec!["-x,", "-e", "page-faults,minor-faults"];
    args.extend(crate::stat_support::DD_FIXED_BUFFER);
    for _ in 0..3 {
        let theirs = by_event(&perf_csv(&perf, &args));
        let ours = by_event(&ours_csv(&args));
        assert_eq!(
            ours.keys().collect::<Vec<_>>(),
            theirs.keys().collect::<Vec<_>>()
        );
        let count = |lines: &BTreeMap<String, Vec<String>>, e: &str| -> f64 {
            lines[e][0].parse().unwrap()
        };
        for event in ["page-faults", "minor-faults"] {
            let (o, t) = (count(&ours, event), count(&theirs, event));
            assert!(o >= 1024.0 && t >= 1024.0, "{event}: ours {o}, perf {t}");
            assert!(
                (o - t).abs() <= FAULT_SPREAD,
                "{event}: ours {o}, perf {t}: more than {FAULT_SPREAD} pages apart"
            );
        }
    }
}
