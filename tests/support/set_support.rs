//! Child processes of the kernel tests that run Rust code in a child: the
//! test binary re-runs itself (`--exact <test>`, the test's libtest name:
//! [`libtest_name`]) and the named test plays a role instead of the test.
//! Two ways to say the role:
//!
//! - [`RoleChild`]: [`ROLE_VAR`] set in the environment; parent and child
//!   talk over stdin/stdout in lines, the child's lines carry a `CHILD `
//!   prefix (a child that must report or wait for cues).
//! - [`child_argv`]: the role in the arguments (`--skip ROLE:...` words,
//!   [`role_value`]), for a command started by the workload launcher
//!   (`perf_event_host::workload`), held before its exec.
//!
//! libtest runs every test on a thread of its own, even with
//! `--test-threads=1`: a re-run child never runs the role on its main
//! thread.
#![allow(dead_code)] // each test binary uses part of it

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};

/// Set in the child: the role to play.
pub const ROLE_VAR: &str = "PERF_EVENT_CORE_SET_ROLE";

/// The name libtest gives test function `test` of module `module` (pass
/// `module_path!()`): its path in the test binary without the crate name,
/// `set_kernel::NAME` for a test of `tests/set/set_kernel.rs`. `--exact`
/// needs this full name.
pub fn libtest_name(module: &str, test: &str) -> String {
    match module.split_once("::") {
        Some((_crate, path)) => format!("{path}::{test}"),
        None => test.to_owned(),
    }
}

/// The value of `ROLE:NAME=VALUE` among this process's arguments (`--skip`
/// values, which libtest accepts and ignores), in a child.
pub fn role_value(name: &str) -> Option<String> {
    let prefix = format!("ROLE:{name}=");
    std::env::args().find_map(|a| a.strip_prefix(&prefix).map(str::to_owned))
}

/// The command line that re-runs this test binary as a child playing test
/// `test` of `module` (pass `module_path!()`), with `roles` (`ROLE:...`
/// words) passed as `--skip` values.
pub fn child_argv(module: &str, test: &str, roles: &[String]) -> Vec<String> {
    let exe = std::env::current_exe().unwrap();
    let mut argv = vec![
        exe.to_str().unwrap().to_owned(),
        "--exact".into(),
        libtest_name(module, test),
        "--nocapture".into(),
        "--test-threads=1".into(),
    ];
    for role in roles {
        argv.push("--skip".into());
        argv.push(role.clone());
    }
    argv
}

/// The calling thread's id.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// `n` getpid system calls (raw, so no libc caching can hide one).
pub fn getpids(n: u64) {
    for _ in 0..n {
        // SAFETY: getpid has no arguments.
        unsafe { libc::syscall(libc::SYS_getpid) };
    }
}

/// `n` prctl(PR_GET_DUMPABLE) system calls.
pub fn prctls(n: u64) {
    for _ in 0..n {
        // SAFETY: PR_GET_DUMPABLE reads a flag and takes no pointer.
        unsafe { libc::syscall(libc::SYS_prctl, libc::PR_GET_DUMPABLE, 0, 0, 0, 0) };
    }
}

/// A child process playing a role, with its lines.
pub struct RoleChild {
    pub child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl RoleChild {
    /// Starts this test binary as `test` (its [`libtest_name`]) playing
    /// `role`; `setup` runs in the child before exec (async-signal-safe
    /// calls only).
    pub fn spawn(test: &str, role: &str, setup: Option<fn() -> std::io::Result<()>>) -> RoleChild {
        RoleChild::spawn_exe(&std::env::current_exe().unwrap(), test, role, setup)
    }

    /// As [`RoleChild::spawn`], running the test binary found at `exe`.
    pub fn spawn_exe(
        exe: &std::path::Path,
        test: &str,
        role: &str,
        setup: Option<fn() -> std::io::Result<()>>,
    ) -> RoleChild {
        let mut cmd = Command::new(exe);
        cmd.args(["--exact", test, "--nocapture", "--test-threads=1"])
            .env(ROLE_VAR, role)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        if let Some(setup) = setup {
            use std::os::unix::process::CommandExt;
            // SAFETY: `setup` only makes async-signal-safe system calls.
            unsafe { cmd.pre_exec(setup) };
        }
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        RoleChild {
            child,
            stdin,
            stdout,
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The next `CHILD ` line, without the prefix.
    pub fn line(&mut self) -> String {
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "the child exited early: {:?}", self.child.try_wait());
            // libtest may have printed "test NAME ... " on the same line.
            if let Some(at) = line.find("CHILD ") {
                return line[at + 6..].trim_end().to_owned();
            }
        }
    }

    /// The `tids ...` line a worker child prints first.
    pub fn tids(&mut self) -> Vec<i32> {
        let line = self.line();
        let tids = line
            .strip_prefix("tids ")
            .unwrap_or_else(|| panic!("{line}"));
        tids.split(' ').map(|t| t.parse().unwrap()).collect()
    }

    pub fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The child's whole stdout.
    pub fn stdout(&mut self) -> &mut BufReader<ChildStdout> {
        &mut self.stdout
    }

    /// Tells the child to exit and waits for it.
    pub fn finish(mut self) -> std::process::ExitStatus {
        let _ = writeln!(self.stdin, "exit");
        drop(self.stdin);
        self.child.wait().unwrap()
    }
}

/// The role asked for, when this process is a child.
pub fn role() -> Option<String> {
    std::env::var(ROLE_VAR).ok()
}

fn say(text: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "CHILD {text}").unwrap();
    out.flush().unwrap();
}

/// `workers N`: N threads that, on `go G P`, each make G getpid and P prctl
/// calls; on `spawn G` the main thread starts a new thread that makes G
/// getpid calls. The child prints the workers' tids, then `done` after
/// each command.
pub fn run_workers(n: usize) -> ! {
    let (tid_tx, tid_rx) = mpsc::channel();
    let mut work = Vec::new();
    let done = Arc::new(Barrier::new(n + 1));
    for _ in 0..n {
        let (tx, rx) = mpsc::channel::<(u64, u64)>();
        work.push(tx);
        let tid_tx = tid_tx.clone();
        let done = done.clone();
        std::thread::spawn(move || {
            tid_tx.send(gettid()).unwrap();
            for (g, p) in rx {
                getpids(g);
                prctls(p);
                done.wait();
            }
        });
    }
    let tids: Vec<String> = (0..n).map(|_| tid_rx.recv().unwrap().to_string()).collect();
    say(&format!("tids {}", tids.join(" ")));
    let stdin = std::io::stdin();
    for line in stdin.lock().lines().map_while(Result::ok) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["spawn", g] => {
                // A thread created now, by the main thread.
                let g: u64 = g.parse().unwrap();
                std::thread::spawn(move || getpids(g)).join().unwrap();
                say("done");
            }
            ["go", g, p] => {
                let (g, p) = (g.parse().unwrap(), p.parse().unwrap());
                for tx in &work {
                    tx.send((g, p)).unwrap();
                }
                done.wait();
                say("done");
            }
            _ => break,
        }
    }
    std::process::exit(0)
}

/// `churn`: `stable` threads that on `go G` make G getpid calls, and two
/// threads that start and end short-lived threads (which also call getpid)
/// all the time. In a lab guest they rest 2 ms after each thread: there
/// all vCPUs share one host thread (`-icount`), and two churners that
/// never rest took most of it from the attaching thread (an attach took 1
/// s to 12 s on a loaded host), while a thread still starts and ends
/// every millisecond, many times per attach.
pub fn run_churn(stable: usize) -> ! {
    let rest = crate::lab_support::lab_guest().then(|| std::time::Duration::from_millis(2));
    for _ in 0..2 {
        std::thread::spawn(move || loop {
            let t = std::thread::spawn(|| getpids(3));
            let _ = t.join();
            if let Some(rest) = rest {
                std::thread::sleep(rest);
            }
        });
    }
    run_workers(stable)
}
