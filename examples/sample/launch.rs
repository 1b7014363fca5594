//! The workload and the signals. The command is started with the
//! library's [`Workload`]: forked and held before exec until the events
//! are open, then released; an exec failure comes back as its errno and is
//! reported as perf 6.1 reports it (`Failed to collect '<event>' for the
//! '<cmd>' workload: <error>`, exit status 255, no report). SIGCHLD
//! interrupts the wait for the rings, so the recording ends at the
//! command's exit. Ctrl-C: SIGINT / SIGTERM end the recording, the report
//! is printed, then the signal is raised again, as perf record's
//! `record__sig_exit` does.

use perf_event_core::workload::{Workload, WorkloadError};
use std::sync::atomic::{AtomicI32, Ordering};

/// Forks `command`, held before exec.
pub fn spawn(command: &[String]) -> Workload {
    Workload::hold(command).unwrap_or_else(|e| {
        eprintln!("sample: {e}");
        std::process::exit(255)
    })
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
        // SAFETY: restoring the default action and raising a signal.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
}
