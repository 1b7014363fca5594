//! The stat example as a perf user meets it: counts against the library's
//! own direct measurement of the same command, perf's option syntax, the
//! report on stderr (or `-o`), perf's CSV columns, exit statuses, failed
//! commands and group leaders, and the signal cases (a child that ignores
//! SIGINT, one killed by SIGTERM, SIGTERM to the tool, Ctrl-C to the
//! process group).

use crate::lab_support;
use crate::stat_support;

use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Software};
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_host::workload::Workload;
use stat_support::*;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::stat_support::DD_FIXED_BUFFER as WORKLOAD;

/// page-faults of one run of the workload, measured directly: the
/// command held before exec by the workload launcher, opened with
/// enable_on_exec + inherit, released, reaped.
fn direct_page_faults() -> u64 {
    let attr = Attr::new(Event::Software(Software::PageFaults))
        .disabled(true)
        .enable_on_exec(true)
        .inherit(true);
    let mut child = Workload::hold(&WORKLOAD).unwrap();
    let fd = open(&attr, Scope::thread(child.pid()), None, OpenFlags::new()).unwrap();
    child.release().unwrap();
    let exit = child.reap().unwrap();
    assert_eq!(exit.code(), Some(0), "{WORKLOAD:?}: {exit:?}");
    fd.read_counts().unwrap().value
}

/// How far one run's page faults may be from another's: the workload
/// first-touches one fixed 4 MiB buffer (1024 pages, the same in every
/// run), and the program's own faults around it (loader, libc) vary by a
/// few pages run to run, not with load or time: 1099-1103 in twelve runs
/// of perf stat here, 16 x 4 MiB or 64 x 4 MiB alike.
const FAULT_SPREAD: u64 = 8;

#[test]
fn software_counts_agree_with_a_direct_measurement() {
    let direct: Vec<u64> = (0..3).map(|_| direct_page_faults()).collect();
    let (lo, hi) = (*direct.iter().min().unwrap(), *direct.iter().max().unwrap());
    let mut args = vec!["-x", ",", "-e", "page-faults,task-clock,cycles", "--"];
    args.extend(WORKLOAD);
    for _ in 0..3 {
        let out = stat(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "the report belongs on stderr");
        let text = String::from_utf8(out.stderr).unwrap();
        let line = |event: &str| {
            text.lines()
                .find(|l| l.split(',').nth(2) == Some(event))
                .unwrap_or_else(|| panic!("{event} in {text}"))
                .to_owned()
        };
        let faults = line("page-faults")
            .split(',')
            .next()
            .unwrap()
            .parse::<u64>()
            .unwrap();
        // 16 x 4 MiB through one 4 MiB buffer: 1024 faults plus the
        // program's own; both sides measure the same program the same way.
        assert!(
            faults >= 1024 && lo >= 1024,
            "stat {faults}, direct {direct:?}"
        );
        assert!(
            faults + FAULT_SPREAD >= lo && faults <= hi + FAULT_SPREAD,
            "stat counted {faults} page faults, the direct count {direct:?}: more than \
             {FAULT_SPREAD} pages apart"
        );
        let clock: f64 = line("task-clock")
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(clock > 0.1, "task-clock {clock} ms");
        assert!(
            line("cycles").starts_with("<not supported>")
                || line("cycles")
                    .split(',')
                    .next()
                    .unwrap()
                    .parse::<u64>()
                    .is_ok()
        );
    }
}

#[test]
fn the_commands_exit_status_and_stdout_are_its_own() {
    let out = stat(&["-e", "task-clock", "--", "sh", "-c", "echo hi; exit 3"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(out.stdout, b"hi\n", "only the command writes to stdout");
    let text = String::from_utf8(out.stderr).unwrap();
    assert!(
        text.starts_with("\n Performance counter stats for 'sh -c echo hi; exit 3':\n\n"),
        "{text}"
    );
    assert!(text.contains(" seconds time elapsed\n\n"), "{text}");
    assert!(text.contains(" seconds user\n") && text.ends_with(" seconds sys\n\n\n"));
    // Without `--` the first non-option word starts the command.
    let out = stat(&["-e", "cs", "sh", "-c", "exit 4"]);
    assert_eq!(out.status.code(), Some(4));
}

#[test]
fn a_command_that_cannot_run_gets_perfs_message_and_no_table() {
    for (command, why) in [
        ("/nonexistent/command", "No such file or directory"),
        ("/etc/passwd", "Permission denied"),
    ] {
        let out = stat(&["-e", "task-clock", command]);
        assert_eq!(out.status.code(), Some(255), "{command}");
        let text = String::from_utf8(out.stderr).unwrap();
        assert_eq!(text, format!("Workload failed: {why}\n"));
    }
}

#[test]
fn the_table_uses_perfs_column_layout() {
    let out = stat(&["-e", "task-clock,page-faults,99:0", "true"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stderr).unwrap();
    let line = |event: &str| {
        text.lines()
            .find(|l| l.get(24..).is_some_and(|r| r.starts_with(event)))
            .unwrap_or_else(|| panic!("{event} in {text}"))
            .to_owned()
    };
    let clock = line("task-clock");
    // value %18, ' ', unit %-4s, ' ', name %-32s, ' # %8.3f %-23s'.
    assert_eq!(&clock[18..24], " msec ", "{clock:?}");
    assert!(clock[..18].trim().parse::<f64>().is_ok(), "{clock:?}");
    assert_eq!(&clock[56..59], " # ", "{clock:?}");
    assert_eq!(clock[68..].trim_end(), "CPUs utilized");
    assert_eq!(clock.len(), 91, "{clock:?}");
    let faults = line("page-faults");
    assert_eq!(&faults[18..24], "      ");
    assert!(faults[..18].trim().parse::<u64>().unwrap() > 0);
    assert!(faults[68..].trim_end().ends_with("/sec"), "{faults:?}");
    let missing = line("99:0");
    assert_eq!(
        missing,
        format!("{:>18}      {:<32}{:28}", "<not supported>", "99:0", "")
    );
}

#[test]
fn csv_has_perfs_columns_and_r_adds_the_variance() {
    let events = "task-clock,page-faults,cs,99:0";
    for args in [
        vec!["-x,", "-e", events, "true"],
        vec!["-x", ",", "-e", events, "--", "true"],
        vec!["--field-separator=,", "--event", events, "true"],
        vec!["-x,", "-r3", "-e", events, "true"],
        vec!["-x,", "-r", "3", "-e", events, "true"],
        vec![
            "--repeat=3",
            "-x,",
            "-e",
            "task-clock",
            "-e",
            "page-faults,cs,99:0",
            "true",
        ],
    ] {
        let out = stat(&args);
        assert!(out.status.success(), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let text = String::from_utf8(out.stderr).unwrap();
        let lines = csv_lines(&text);
        assert_eq!(lines.len(), 4, "{args:?}: {text}");
        let repeated =
            args.iter().any(|a| a.contains('r') && a.contains('3')) || args.contains(&"3");
        let width = if repeated { 8 } else { 7 };
        let shift = usize::from(repeated);
        for line in &lines {
            let f = fields(line, ',');
            assert_eq!(f.len(), width, "{args:?}: {line}");
            if repeated {
                assert!(f[3].ends_with('%'), "variance column: {line}");
            }
            assert!(f[3 + shift].parse::<u64>().is_ok(), "run column: {line}");
            assert_eq!(f[4 + shift], "100.00", "pct column: {line}");
        }
        let task = fields(&lines[0], ',');
        assert_eq!((task[1].as_str(), task[2].as_str()), ("msec", "task-clock"));
        assert!(task[0].parse::<f64>().unwrap() > 0.0);
        assert_eq!(task[6 + shift], "CPUs utilized");
        let faults = fields(&lines[1], ',');
        assert_eq!(
            (faults[1].as_str(), faults[2].as_str()),
            ("", "page-faults")
        );
        assert!(faults[6 + shift].ends_with("/sec"), "{faults:?}");
        let missing = fields(&lines[3], ',');
        assert_eq!(missing[0], "<not supported>");
        assert_eq!(missing[3 + shift], "0");
        assert_eq!(
            (missing[5 + shift].as_str(), missing[6 + shift].as_str()),
            ("", "")
        );
    }
    let out = stat(&["-x;", "-e", "cs", "true"]);
    let text = String::from_utf8(out.stderr).unwrap();
    assert_eq!(fields(text.trim_end(), ';').len(), 7, "{text}");
}

#[test]
fn output_goes_to_a_file_with_o() {
    let path = std::env::temp_dir().join(format!("stat-o-{}.txt", std::process::id()));
    let p = path.to_str().unwrap();
    let out = stat(&["-o", p, "-x,", "-e", "cs", "true"]);
    assert!(out.status.success());
    assert!(out.stderr.is_empty() && out.stdout.is_empty());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# started on "), "{text}");
    assert_eq!(csv_lines(&text).len(), 1, "{text}");
    let out = stat(&["--output", p, "--append", "-e", "cs", "true"]);
    assert!(out.status.success());
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches("# started on ").count(), 2, "{text}");
    assert!(text.contains("Performance counter stats for 'true'"));
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn unknown_options_and_bad_values_get_perfs_usage() {
    for (args, message) in [
        (
            vec!["--bogus", "true"],
            "  Error: unknown option `bogus'\n\n Usage: perf stat",
        ),
        (
            vec!["-z", "true"],
            "  Error: unknown switch `z'\n\n Usage: perf stat",
        ),
        (
            vec!["-r"],
            " Error: switch `r' requires a value\n Usage: perf stat",
        ),
        (
            vec!["-rx", "true"],
            " Error: switch `r' expects a numerical value",
        ),
        (vec!["-e"], " Error: switch `e' requires a value"),
        // The event-set options (tests/perf_oracle/stat_set_example.rs) check values too.
        (
            vec!["-I", "x", "true"],
            " Error: switch `I' expects a numerical value",
        ),
        (vec!["-e", "cycles:x", "true"], "unknown modifier `x`"),
    ] {
        let out = stat(&args);
        assert_eq!(out.status.code(), Some(129), "{args:?}");
        let text = String::from_utf8(out.stderr).unwrap();
        assert!(text.contains(message), "{args:?}: {text}");
    }
    let out = stat(&["--bogus"]);
    let text = String::from_utf8(out.stderr).unwrap();
    assert!(
        text.contains("    -e, --event <event>   event selector"),
        "{text}"
    );
}

#[test]
fn groups_whose_leader_or_member_fails_are_handled_as_perf() {
    // Type 99 is no PMU: ENOENT, as for hardware events in a VM.
    let out = stat(&["-e", "{99:0,cs}", "sh", "-c", "echo ran"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(out.stdout.is_empty(), "the command must not run");
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "Error:\nThe 99:0 event is not supported.\n"
    );
    let out = stat(&["-x,", "-e", "{cs,99:0,faults},task-clock", "true"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stderr).unwrap();
    let lines = csv_lines(&text);
    let first: Vec<String> = lines.iter().map(|l| fields(l, ',')[0].clone()).collect();
    assert_eq!(
        first[..3],
        ["<not counted>", "<not supported>", "<not counted>"],
        "{text}"
    );
    assert!(first[3].parse::<f64>().is_ok(), "{text}");
    // A whole group that opens counts together from exec.
    let out = stat(&["-x,", "-e", "{cs,faults}", "true"]);
    let text = String::from_utf8(out.stderr).unwrap();
    let faults: u64 = fields(&csv_lines(&text)[1], ',')[0].parse().unwrap();
    assert!(faults > 0, "{text}");
}

/// Starts the example on `command`, optionally in a new process group.
fn spawn(args: &[&str], new_group: bool) -> std::process::Child {
    let mut cmd = Command::new(stat_binary());
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    if new_group {
        cmd.process_group(0);
    }
    cmd.spawn().unwrap()
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: kill on our own child (or its group).
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
}

#[test]
fn sigint_to_the_tool_waits_for_a_child_that_ignores_it() {
    use std::io::BufRead;
    let mut child = spawn(
        &[
            "-e",
            "cs",
            "sh",
            "-c",
            "trap '' INT; echo ready; sleep 1; echo done",
        ],
        false,
    );
    // Signal only once the command ignores SIGINT.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    let start = Instant::now();
    signal(child.id() as i32, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "done\n", "the command ran to its end");
    assert!(start.elapsed() >= Duration::from_millis(500));
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stderr).unwrap();
    assert!(text.contains("Performance counter stats for"), "{text}");
}

#[test]
fn a_child_killed_by_a_signal_is_reported_as_perf_does() {
    let out = stat(&["-e", "cs", "sh", "-c", "kill -TERM $$"]);
    assert_eq!(out.status.code(), Some(0), "perf exits 0 here");
    let text = String::from_utf8(out.stderr).unwrap();
    assert!(
        text.starts_with("sh: Terminated\n\n Performance counter stats"),
        "{text}"
    );
}

/// Waits for `child`; a guard against a hang (120 s, then its process
/// group is killed and the test fails), not a time bound.
fn wait_or_hang(child: &mut std::process::Child) -> std::process::ExitStatus {
    let hung = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= hung {
            // SAFETY: signalling the process group of our own child.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            panic!("hung: the tool did not end");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn sigterm_to_the_tool_ends_it_at_once_as_perf() {
    // perf 6.1 does not catch SIGTERM: it dies of it, printing nothing,
    // without waiting for its command (here one that never ends by itself:
    // waiting for it would hang the test).
    let mut child = spawn(&["-x,", "-e", "task-clock", "sleep", "1000"], true);
    // Once it counts (asleep in its poll), not after a fixed time.
    crate::stat_support::wait_until_running(child.id(), "sleep");
    signal(child.id() as i32, libc::SIGTERM);
    // Not wait_with_output: the orphaned `sleep` keeps stderr open.
    let status = wait_or_hang(&mut child);
    // The orphaned `sleep` is still in the tool's process group.
    signal(-(child.id() as i32), libc::SIGKILL);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
}

#[test]
fn sigint_to_the_tool_alone_lets_every_run_finish_as_perf() {
    // perf 6.1 with -r 3: SIGINT to perf alone is not passed on; the
    // three runs complete and are reported together, status 0.
    let start = Instant::now();
    let child = spawn(
        &["-x,", "-e", "task-clock", "-r", "3", "sleep", "0.3"],
        false,
    );
    // Once it counts the first run (asleep in its poll, its SIGINT
    // handler in place), not after a fixed time that a loaded machine can
    // outlast before the tool is set up.
    crate::stat_support::wait_until_running(child.id(), "sleep");
    signal(child.id() as i32, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    // A lower bound (three runs of `sleep 0.3`): no load breaks it.
    assert!(start.elapsed() >= Duration::from_millis(850));
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stderr).unwrap();
    let lines = csv_lines(&text);
    assert_eq!(lines.len(), 1, "{text}");
    // -r adds the variance column: 8 fields.
    assert_eq!(fields(&lines[0], ',').len(), 8, "{text}");
}

#[test]
fn ctrl_c_to_the_process_group_stops_the_command_and_prints_the_counts() {
    let child = spawn(&["-e", "task-clock,cs", "sleep", "5"], true);
    crate::stat_support::wait_until_running(child.id(), "sleep");
    // As the terminal does: SIGINT to every process of the group. That the
    // command was stopped, not waited for, is the report's first line.
    signal(-(child.id() as i32), libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stderr).unwrap();
    assert!(
        text.starts_with("sleep: Interrupt\n\n Performance counter stats for 'sleep 5':"),
        "{text}"
    );
    assert!(text.contains(" msec task-clock "), "{text}");
}

#[test]
fn tracepoints_and_wildcards_count_what_the_command_does() {
    if !tracefs_usable() {
        lab_support::skip(
            "needs tracefs",
            "tracefs is not mounted or not readable here",
        );
        return;
    }
    // Three execs after the shell's own: exactly 4 sched_process_exec.
    let out = stat(&[
        "-x,",
        "-e",
        "sched:sched_process_exec,syscalls:sys_enter_exec*",
        "sh",
        "-c",
        "/bin/true; /bin/true; /bin/true",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stderr).unwrap();
    let count = |event: &str| -> u64 {
        csv_lines(&text)
            .iter()
            .map(|l| fields(l, ','))
            .find(|f| f[2] == event)
            .unwrap_or_else(|| panic!("{event} in {text}"))[0]
            .parse()
            .unwrap()
    };
    assert_eq!(count("sched:sched_process_exec"), 4, "{text}");
    assert_eq!(count("syscalls:sys_enter_execve"), 3, "{text}");
    assert!(text.contains(",syscalls:sys_enter_execveat,"), "{text}");
}

/// The children of `pid` now (`/proc/PID/task/PID/children`).
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// `-r0` runs the command until interrupted, then reports every run. The
/// interrupt comes once the tool has started its third command (so at
/// least two runs completed: seen in /proc, not assumed from a sleep).
#[test]
fn repeat_zero_runs_until_interrupted_then_reports_every_run() {
    let mut child = spawn(&["-r0", "-e", "task-clock", "sleep", "0.05"], false);
    let mut seen = std::collections::BTreeSet::new();
    let hung = Instant::now() + Duration::from_secs(120);
    while seen.len() < 3 {
        assert!(Instant::now() < hung, "hung: runs seen {seen:?}");
        seen.extend(children(child.id()));
        std::thread::sleep(Duration::from_millis(5));
    }
    signal(child.id() as i32, libc::SIGINT);
    let status = wait_or_hang(&mut child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(0));
    let text = String::from_utf8(out.stderr).unwrap();
    let runs: usize = text
        .split(" Performance counter stats for 'sleep 0.05' (")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no run count in {text}"));
    assert!(
        runs >= 2,
        "{runs} runs reported, the third had started: {text}"
    );
    assert!(text.contains(" seconds time elapsed  ( +-"), "{text}");
}
