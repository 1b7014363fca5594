//! The workload: forked and held before exec until the events are open,
//! then released; an exec failure comes back through a close-on-exec pipe
//! as its errno (perf 6.1 sends it with SIGUSR1 from the child and prints
//! `Failed to collect '<event>' for the '<cmd>' workload: <error>`, exit
//! status 255, no report). And Ctrl-C: SIGINT / SIGTERM end the recording,
//! the report is printed, then the signal is raised again, as perf record's
//! `record__sig_exit` does.

use std::ffi::CString;
use std::sync::atomic::{AtomicI32, Ordering};

/// A child held before exec.
pub struct Workload {
    pub pid: i32,
    release: i32,
    exec_error: i32,
}

/// Forks `command`, held before exec until [`Workload::release`].
pub fn spawn(command: &[String]) -> Workload {
    let argv: Vec<CString> = command
        .iter()
        .map(|a| {
            CString::new(a.as_str()).unwrap_or_else(|_| super::args::usage("NUL in an argument"))
        })
        .collect();
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    let (mut go, mut err) = ([0; 2], [0; 2]);
    // SAFETY: pipe2 fills two fds each.
    let rc = unsafe {
        libc::pipe2(go.as_mut_ptr(), libc::O_CLOEXEC)
            | libc::pipe2(err.as_mut_ptr(), libc::O_CLOEXEC)
    };
    assert_eq!(rc, 0, "pipe2");
    // SAFETY: the child makes only async-signal-safe calls before exec.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: as above; the buffers are the child's own copies.
        unsafe {
            let mut b = 0u8;
            libc::read(go[0], (&mut b as *mut u8).cast(), 1);
            libc::execvp(ptrs[0], ptrs.as_ptr());
            let e = *libc::__errno_location();
            libc::write(err[1], (&e as *const i32).cast(), 4);
            libc::_exit(127);
        }
    }
    // SAFETY: closing our copies of the child's ends.
    unsafe {
        libc::close(go[0]);
        libc::close(err[1]);
    }
    Workload {
        pid,
        release: go[1],
        exec_error: err[0],
    }
}

impl Workload {
    /// Lets the child exec; `Err(errno)` when the exec failed (the child
    /// has then exited and is reaped here).
    pub fn release(&self) -> Result<(), i32> {
        let mut e = 0i32;
        // SAFETY: one byte from a local buffer; then a read into a local i32
        // that returns 0 (EOF) once the exec closed the pipe's write end.
        let n = unsafe {
            libc::write(self.release, [1u8].as_ptr().cast(), 1);
            libc::close(self.release);
            let n = libc::read(self.exec_error, (&mut e as *mut i32).cast(), 4);
            libc::close(self.exec_error);
            n
        };
        if n == 4 {
            // SAFETY: reaping our own child.
            unsafe { libc::waitpid(self.pid, std::ptr::null_mut(), 0) };
            return Err(e);
        }
        Ok(())
    }
}

/// perf's message for a workload that could not be executed.
pub fn exec_failed(event: &str, command: &str, errno: i32) -> ! {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    let text = text.split(" (os error").next().unwrap_or(&text);
    eprintln!("Failed to collect '{event}' for the '{command}' workload: {text}");
    std::process::exit(255)
}

/// The signal that asked us to stop (0: none yet).
static STOP: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    STOP.store(sig, Ordering::Relaxed);
}

/// SIGINT and SIGTERM only set [`stopped`] from now on.
pub fn catch_stop_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
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
