//! The workload and the signals. The command is started with the
//! library's [`Workload`]: forked and held before exec until the events
//! are open, then released; an exec failure comes back as its errno and is
//! reported as perf 6.1 reports it (`Failed to collect '<event>' for the
//! '<cmd>' workload: <error>`, exit status 255, no report). SIGCHLD
//! interrupts the wait for the rings, so the recording ends at the
//! command's exit. Ctrl-C: SIGINT / SIGTERM end the recording, the report
//! is printed, then the signal is raised again, as perf record's
//! `record__sig_exit` does; a command that died of a signal (the SIGTERM
//! the tool sends it when the recording ends first) is the signal the
//! tool dies of.
//!
//! With `-o -` the command's standard output is our standard error: stdout
//! carries the perf.data stream, and perf 6.1 does the same in pipe mode
//! (`evlist__prepare_workload` with `pipe_output`: `dup2(2, 1)` in the
//! child), so `sample -o - -- CMD | perf report -i -` reads a stream
//! that CMD's output did not break.

use perf_event_host::workload::{Workload, WorkloadError};
use std::sync::atomic::{AtomicI32, Ordering};

/// Forks `command`, held before exec; with `stdout_to_stderr` (`-o -`)
/// the command's fd 1 is a copy of our fd 2.
pub fn spawn(command: &[String], stdout_to_stderr: bool) -> Workload {
    // The child inherits our fd 1 at the fork, so fd 1 is stderr while
    // Workload::hold forks and ours again right after (this runs before
    // the tool starts any thread or writes to stdout).
    let saved = stdout_to_stderr.then(stdout_on_stderr).flatten();
    let held = Workload::hold(command);
    if let Some(fd) = saved {
        // SAFETY: `fd` is our copy of the original fd 1, put back and closed.
        unsafe {
            libc::dup2(fd, 1);
            libc::close(fd);
        }
    }
    held.unwrap_or_else(|e| {
        eprintln!("sample: {e}");
        std::process::exit(255)
    })
}

/// Makes fd 1 a copy of fd 2; returns a close-on-exec copy of the old fd 1
/// (`None`, nothing changed, if either call fails).
fn stdout_on_stderr() -> Option<libc::c_int> {
    // SAFETY: fcntl and dup2 on fd numbers; no memory is passed.
    unsafe {
        let saved = libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3);
        if saved < 0 {
            return None;
        }
        if libc::dup2(2, 1) < 0 {
            libc::close(saved);
            return None;
        }
        Some(saved)
    }
}

/// Lets the command exec; on failure prints perf's message (naming the
/// first event as perf does) and exits 255.
pub fn release(w: &mut Workload, event: &str, command: &str) {
    match w.release() {
        Ok(()) => {}
        Err(WorkloadError::Exec { errno, .. }) => {
            eprintln!(
                "Failed to collect '{event}' for the '{command}' workload: {}",
                strerror(errno.0)
            );
            std::process::exit(255)
        }
        Err(e) => {
            eprintln!("sample: {e}");
            std::process::exit(255)
        }
    }
}

/// The C library's text for an errno, without Rust's " (os error N)".
fn strerror(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    text.split(" (os error").next().unwrap_or(&text).to_string()
}

/// The signal that asked us to stop (0: none yet).
static STOP: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    if sig != libc::SIGCHLD {
        STOP.store(sig, Ordering::Relaxed);
    }
}

/// SIGINT and SIGTERM only set [`stopped`] from now on; SIGCHLD only
/// interrupts the wait. SIGPIPE ends the tool quietly, as it ends perf
/// (`sample ... | head`), instead of Rust's "failed printing" panic.
pub fn catch_stop_signals() {
    // SAFETY: restoring the default action of a signal.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGCHLD] {
        // SAFETY: a zeroed sigaction with a handler that only stores to an
        // atomic (async-signal-safe); no SA_RESTART, so a wait is interrupted.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(sig, &act, std::ptr::null_mut());
        }
    }
}

/// The signal that asked us to stop, if one did.
pub fn stopped() -> Option<i32> {
    Some(STOP.load(Ordering::Relaxed)).filter(|&s| s != 0)
}

/// Dies of the stop signal (after the report), as perf record does.
pub fn raise_stop_signal() {
    if let Some(sig) = stopped() {
        die_of(sig);
    }
}

/// Dies of `sig`: its default action restored, then raised (perf's
/// `record__sig_exit`); returns only for a signal whose default action
/// does not end the process.
pub fn die_of(sig: i32) {
    // SAFETY: restoring the default action and raising a signal.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}
