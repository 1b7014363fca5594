//! The stat example's event-set options against the running kernel: `-a -A`
//! (one line per CPU), `-p PID --per-thread` (a running process's threads,
//! counted exactly), `-C` with a CPU that does not exist, `-I` intervals.

use crate::lab_support;
use crate::set_support;
use crate::stat_support;

use set_support::{role, RoleChild};
use stat_support::{csv_lines, fields, stat, stat_binary, tracefs_usable};
use std::process::{Command, Stdio};
use std::time::Duration;

fn online_cpus() -> usize {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    perf_event_host::sysfs::CpuList::parse(&text).unwrap().len()
}

#[test]
fn all_cpus_no_aggr_prints_one_line_per_cpu() {
    let out = stat(&["-a", "-A", "-x,", "-e", "task-clock", "sleep", "0.3"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let lines = csv_lines(&err);
    assert_eq!(lines.len(), online_cpus(), "{err}");
    for (i, line) in lines.iter().enumerate() {
        let f = fields(line, ',');
        assert_eq!(
            (f[0].as_str(), f[2].as_str(), f[3].as_str()),
            (&*format!("CPU{i}"), "msec", "task-clock"),
            "{line}"
        );
        let ms: f64 = f[1].parse().unwrap();
        // CPU-wide task-clock counts the whole window on each CPU, which
        // contains the 0.3 s sleep (a lower bound: load only lengthens it).
        assert!(ms >= 250.0, "{line}");
    }
}

/// Perf event fds the process `pid` holds.
fn perf_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| {
        d.filter_map(Result::ok)
            .filter(|e| {
                std::fs::read_link(e.path())
                    .is_ok_and(|l| l.to_string_lossy().contains("perf_event"))
            })
            .count()
    })
}

const PID_TEST: &str = "pid_per_thread_counts_each_thread_exactly";

#[test]
fn pid_per_thread_counts_each_thread_exactly() {
    if role().is_some() {
        set_support::run_workers(4);
    }
    if !tracefs_usable() {
        lab_support::skip(
            "needs tracefs",
            "tracefs is not mounted or not readable here",
        );
        return;
    }
    let mut child = RoleChild::spawn(
        &set_support::libtest_name(module_path!(), PID_TEST),
        "workers",
        None,
    );
    let tids = child.tids();
    let pid = child.pid().to_string();
    let stat = Command::new(stat_binary())
        .args([
            "-p",
            &pid,
            "--per-thread",
            "-x,",
            "-e",
            "syscalls:sys_enter_getpid",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Attached to every thread (one fd each: 4 workers and at least the
    // main thread), enabled, and asleep until the process exits.
    stat_support::wait_until_in_poll(stat.id());
    assert!(perf_fds(stat.id()) >= 5, "stat attached to too few threads");
    child.send("go 700 0");
    assert_eq!(child.line(), "done");
    assert!(child.finish().success());
    // The process is gone: stat prints and exits.
    let out = stat.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for tid in tids {
        let line = csv_lines(&err)
            .into_iter()
            .find(|l| {
                l.split(',')
                    .next()
                    .is_some_and(|k| k.ends_with(&format!("-{tid}")))
            })
            .unwrap_or_else(|| panic!("no line for thread {tid}:\n{err}"));
        let f = fields(&line, ',');
        assert_eq!(
            (f[1].as_str(), f[3].as_str()),
            ("700", "syscalls:sys_enter_getpid"),
            "{line}"
        );
    }
}

#[test]
fn cpu_list_reports_a_cpu_that_does_not_exist() {
    let out = stat(&["-C", "0,4096", "-e", "task-clock", "sleep", "0.1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("CPU 4096 does not exist"), "{err}");
    assert!(
        err.contains("Performance counter stats for 'CPU(s) 0,4096'"),
        "{err}"
    );
    assert!(err.contains("task-clock"), "{err}");
}

#[test]
fn interval_prints_timestamped_counts() {
    let out = stat(&[
        "-a",
        "-I",
        "100",
        "-x,",
        "-e",
        "task-clock",
        "sleep",
        "0.45",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let lines = csv_lines(&err);
    assert!(lines.len() >= 4, "{err}");
    let mut last = 0.0;
    for line in &lines {
        let f = fields(line.trim_start(), ',');
        let t: f64 = f[0].trim().parse().unwrap_or_else(|_| panic!("{line}"));
        assert!(t > last, "{err}");
        last = t;
        assert_eq!(f[3], "task-clock", "{line}");
    }
}

/// `pidfd_open(tid, PIDFD_THREAD)` works here (Linux 6.9+).
fn thread_pidfds() -> bool {
    // SAFETY: gettid takes no arguments.
    let tid = unsafe { libc::gettid() };
    // SAFETY: pidfd_open takes two integers; a new fd is closed at once.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, tid, libc::O_EXCL) };
    if fd < 0 {
        return false;
    }
    lab_support::close(fd as libc::c_int);
    true
}

/// How long the attached thread is held while the tool waits.
const HOLD: Duration = Duration::from_secs(2);

/// The most wake-ups of the tool allowed in [`HOLD`]: a wait that only the
/// exit (or a signal) ends makes none (it went to sleep before the first
/// sample); any polling period of 500 ms or shorter makes at least 4, the
/// 50 ms `/proc` fallback about 40.
const MAX_WAKES: u64 = 2;

/// `-t TID` of a thread that is not its process's leader: counting ends
/// when that thread exits (a thread pidfd wakes the tool), not at the next
/// turn of a polling loop (perf 6.1 looks in /proc once a second). Proven
/// by counting the tool's wake-ups, not by timing its end: while the thread
/// is held for [`HOLD`], the tool, asleep in its poll, must not wake more
/// than [`MAX_WAKES`] times (`voluntary_ctxt_switches` of all its threads,
/// sampled once it sleeps in poll and again just before the exit); then
/// the exit alone must end it, with its one line.
#[test]
fn attached_thread_exit_ends_counting_at_once() {
    if !thread_pidfds() {
        lab_support::skip(
            "stat_set_example::attached_thread_exit",
            "pidfd_open(PIDFD_THREAD) needs Linux 6.9",
        );
        return;
    }
    let (tx, rx) = std::sync::mpsc::channel::<i32>();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        // SAFETY: gettid takes no arguments.
        tx.send(unsafe { libc::gettid() }).unwrap();
        go_rx.recv().unwrap();
    });
    let tid = rx.recv().unwrap().to_string();
    let child = Command::new(stat_binary())
        .args(["-t", &tid, "-x,", "-e", "task-clock"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Opened, enabled, asleep: the tool prints nothing before its report.
    stat_support::wait_until_in_poll(child.id());
    let before = stat_support::voluntary_switches(child.id());
    std::thread::sleep(HOLD);
    let wakes = stat_support::voluntary_switches(child.id()) - before;
    eprintln!("stat -t woke {wakes} times in {HOLD:?}");
    go_tx.send(()).unwrap();
    thread.join().unwrap();
    // Only the exit can end it now (a hang here is the failure).
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(csv_lines(&err).len(), 1, "{err}");
    assert!(
        wakes <= MAX_WAKES,
        "the tool woke {wakes} times in {HOLD:?} while the thread lived (at most {MAX_WAKES} \
         without a polling period)"
    );
}
