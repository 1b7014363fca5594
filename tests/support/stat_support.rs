//! Running the stat example's binary directly (signals must reach it, not
//! cargo) and reading its CSV.
#![allow(dead_code)] // each test binary uses part of it

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Example `example` of `package` built for this test binary's profile,
/// with `features` if any, in `target/<target_dir>/` if given (a build
/// with other features must not replace the binary other tests run), else
/// in the test's own target directory; its path.
pub fn example_binary(
    package: &str,
    example: &str,
    features: Option<&str>,
    target_dir: Option<&str>,
) -> PathBuf {
    // target/<profile>/deps/<test> -> target/<profile>/examples/<example>
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
    let release = profile_dir.ends_with("release");
    let mut build = Command::new(env!("CARGO"));
    build.args(["build", "--quiet", "-p", package, "--example", example]);
    if let Some(features) = features {
        build.args(["--features", features]);
    }
    let out_dir = match target_dir {
        Some(dir) => {
            let target = profile_dir.parent().unwrap().join(dir);
            build.arg("--target-dir").arg(&target);
            target.join(if release { "release" } else { "debug" })
        }
        None => profile_dir,
    };
    if release {
        build.arg("--release");
    }
    let status = build
        .status()
        .unwrap_or_else(|e| panic!("cargo build --example {example}: {e}"));
    assert!(status.success(), "building the {example} example failed");
    out_dir.join("examples").join(example)
}

/// The stat example, built once for this test binary's profile.
pub fn stat_binary() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| example_binary("perf-event-host", "stat", None, None))
        .clone()
}

/// Runs the example with `args`; its output.
pub fn stat(args: &[&str]) -> Output {
    Command::new(stat_binary())
        .args(args)
        .output()
        .expect("run the stat example")
}

/// One CSV line split on `sep`.
pub fn fields(line: &str, sep: char) -> Vec<String> {
    line.split(sep).map(str::to_owned).collect()
}

/// The CSV lines of a report (comment and empty lines skipped).
pub fn csv_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// Whether tracepoints can be opened here: tracefs mounted and readable.
pub fn tracefs_usable() -> bool {
    [
        "/sys/kernel/tracing/events",
        "/sys/kernel/debug/tracing/events",
    ]
    .iter()
    .any(|p| std::fs::read_dir(p).is_ok_and(|mut d| d.next().is_some()))
}

/// The voluntary context switches of every thread of `pid` (the sum of
/// `voluntary_ctxt_switches` in `/proc/PID/task/*/status`): how often the
/// process went to sleep, so how often something woke it.
pub fn voluntary_switches(pid: u32) -> u64 {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
    tasks
        .filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("status")).ok())
        .filter_map(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .and_then(|v| v.trim().parse::<u64>().ok())
        })
        .sum()
}

/// Whether the main thread of `pid` is blocked in `poll(2)` / `ppoll(2)`
/// or `epoll_wait(2)` and its kin (`/proc/PID/syscall` names the system
/// call a sleeping task is in).
pub fn in_poll(pid: u32) -> bool {
    blocked_in(pid, &POLLS)
}

/// Whether the main thread of `pid` sleeps in one of `calls`
/// (`/proc/PID/syscall`'s first field).
fn blocked_in(pid: u32, calls: &[libc::c_long]) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/syscall")).is_ok_and(|s| {
        s.split_whitespace()
            .next()
            .is_some_and(|n| n.parse::<libc::c_long>().is_ok_and(|n| calls.contains(&n)))
    })
}

#[cfg(target_arch = "x86_64")]
const POLLS: [libc::c_long; 5] = [
    libc::SYS_poll,
    libc::SYS_ppoll,
    libc::SYS_epoll_wait,
    libc::SYS_epoll_pwait,
    libc::SYS_epoll_pwait2,
];
#[cfg(not(target_arch = "x86_64"))]
const POLLS: [libc::c_long; 3] = [
    libc::SYS_ppoll,
    libc::SYS_epoll_pwait,
    libc::SYS_epoll_pwait2,
];

/// Waits until the tool `pid` (the stat or sample example, perf) sleeps in
/// its poll: it has opened and enabled its events and waits for data, an
/// exit or a signal. Panics only when it never gets there (a hang guard,
/// not a time bound).
pub fn wait_until_in_poll(pid: u32) {
    let hung = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !in_poll(pid) {
        assert!(
            std::time::Instant::now() < hung,
            "hung: {pid} never reached its poll"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Waits until the tool `pid` sleeps waiting for its command (in a poll,
/// see [`in_poll`], or in `wait4(2)` / `waitid(2)`) and its child has
/// executed `comm` (the child's /proc/PID/comm): the tool counts, and a
/// signal sent then reaches the command itself, not the tool's fork
/// before its exec. A hang guard, not a time bound.
pub fn wait_until_running(pid: u32, comm: &str) {
    let waits = || in_poll(pid) || blocked_in(pid, &[libc::SYS_wait4, libc::SYS_waitid]);
    let hung = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let runs = || {
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .unwrap_or_default()
            .split_whitespace()
            .any(|c| {
                std::fs::read_to_string(format!("/proc/{c}/comm")).is_ok_and(|n| n.trim() == comm)
            })
    };
    while !(runs() && waits()) {
        assert!(
            std::time::Instant::now() < hung,
            "hung: {pid} never waited for its command `{comm}`"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// `dd` through one 4 MiB buffer, 16 times: a workload of fixed page faults
/// (the buffer's 1024 and dd's own), shared by the stat tests that count them.
pub const DD_FIXED_BUFFER: [&str; 6] = [
    "dd",
    "if=/dev/zero",
    "of=/dev/null",
    "bs=4M",
    "count=16",
    "status=none",
];
