//! A workload: a command started held before `exec`, released when the
//! caller's counters are ready, and waited for without a polling period —
//! what `perf stat -- CMD` and `perf record -- CMD` do with their command
//! (perf's `evlist__prepare_workload` / `evlist__start_workload`).
//!
//! The protocol, and why each step:
//!
//! 1. [`Workload::hold`] forks; the child blocks reading a pipe before
//!    `execvp(3)`. Its pid exists, so per-task events can be opened on it
//!    with `disabled` + `enable_on_exec` (Linux 2.6.31): the kernel enables
//!    them at the `exec`, so nothing of this tool's fork is counted.
//! 2. The caller opens its events: per-task on [`Workload::pid`], or
//!    CPU-wide / attached to other processes; it enables the latter right
//!    before the release (`PERF_EVENT_IOC_ENABLE`).
//! 3. [`Workload::release`] writes the byte; the child execs. A
//!    close-on-exec pipe tells the parent whether the exec succeeded (end
//!    of file) or failed (the errno): [`WorkloadError::Exec`], shown as
//!    perf 6.1 shows it.
//! 4. [`Workload::wait_exit`] sleeps in `poll(2)` on an [`ExitWatch`]
//!    (a pidfd, Linux 5.3; a helper thread in `waitid(WNOWAIT)` before),
//!    so the caller wakes at the exit itself, disables its CPU-wide events
//!    then, and only afterwards [`Workload::reap`]s the child.
//!
//! A workload dropped before it is reaped is killed (`SIGKILL`) and reaped.
//!
//! ```no_run
//! use perf_event_host::workload::Workload;
//! let mut w = Workload::hold(&["sleep", "0.1"])?;
//! // ... open per-task events on w.pid() with enable_on_exec ...
//! w.release()?;
//! w.wait_exit(None)?; // woken by the exit
//! // ... disable CPU-wide events, read the counts ...
//! let exit = w.reap()?;
//! assert_eq!(exit.code(), Some(0));
//! # Ok::<(), perf_event_host::workload::WorkloadError>(())
//! ```

mod error;
mod exit_watch;

pub use error::WorkloadError;
pub use exit_watch::{wait_any, ExitWatch};

use perf_event_core::linux::errno::Errno;
use perf_event_core::linux::io::Fd;
use perf_event_core::linux::process;
use std::ffi::{CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::time::Duration;

/// How a reaped workload ended, and the CPU time it used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exit {
    /// The raw wait status (`wait4(2)`).
    pub status: i32,
    /// User CPU time of the workload and its waited-for children.
    pub user: Duration,
    /// System CPU time.
    pub sys: Duration,
}

impl Exit {
    /// The exit code, if it exited (`WIFEXITED`).
    pub fn code(&self) -> Option<i32> {
        process::exit_code(self.status)
    }

    /// The signal that killed it, if one did (`WIFSIGNALED`).
    pub fn signal(&self) -> Option<i32> {
        process::term_signal(self.status)
    }
}

/// A command held before `exec` (see the [module docs](self)).
#[derive(Debug)]
pub struct Workload {
    pid: i32,
    program: String,
    go: Option<Fd>,
    exec_errno: Option<Fd>,
    watch: ExitWatch,
    exited: bool,
    reaped: Option<Exit>,
}

impl Workload {
    /// Forks `argv` (argv\[0\] searched on `PATH`) held before `exec`.
    pub fn hold<S: AsRef<OsStr>>(argv: &[S]) -> Result<Workload, WorkloadError> {
        if argv.is_empty() {
            return Err(WorkloadError::Argument { index: 0 });
        }
        let args = argv
            .iter()
            .enumerate()
            .map(|(index, a)| {
                CString::new(a.as_ref().as_bytes()).map_err(|_| WorkloadError::Argument { index })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let argv: Vec<&CStr> = args.iter().map(|a| a.as_c_str()).collect();
        let mut slots = vec![std::ptr::null(); argv.len() + 1];
        let child = process::fork_held(&argv, &mut slots).map_err(WorkloadError::Fork)?;
        let watch = match ExitWatch::child(child.pid) {
            Ok(w) => w,
            Err(e) => {
                drop(child.go); // the child exits unexecuted
                let _ = process::wait4(child.pid);
                return Err(WorkloadError::Wait(e));
            }
        };
        Ok(Workload {
            pid: child.pid,
            program: argv[0].as_ref().to_string_lossy().into_owned(),
            go: Some(child.go),
            exec_errno: Some(child.exec_errno),
            watch,
            exited: false,
            reaped: None,
        })
    }

    /// The child's pid (a thread-group leader): open per-task events on it.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The watch that wakes at the child's exit, to poll beside other fds.
    pub fn exit_watch(&self) -> &ExitWatch {
        &self.watch
    }

    /// Lets the child exec, and returns once the exec has happened
    /// (`Ok`) or failed ([`WorkloadError::Exec`], the child then reaped).
    /// A second call does nothing.
    pub fn release(&mut self) -> Result<(), WorkloadError> {
        let Some(go) = self.go.take() else {
            return Ok(());
        };
        process::write(&go, &[1]).map_err(WorkloadError::Wait)?;
        drop(go);
        let failed = match self.exec_errno.take() {
            Some(fd) => process::read_exec_errno(&fd).map_err(WorkloadError::Wait)?,
            None => None,
        };
        match failed {
            None => Ok(()),
            Some(errno) => {
                self.reap()?;
                Err(WorkloadError::Exec {
                    program: self.program.clone(),
                    errno: Errno(errno),
                })
            }
        }
    }

    /// Waits up to `timeout` (`None`: until it happens) for the child to
    /// exit, without reaping it: `true` once it has. `Err(Wait(EINTR))`
    /// when a signal arrived first.
    pub fn wait_exit(&mut self, timeout: Option<Duration>) -> Result<bool, WorkloadError> {
        if !self.exited {
            self.exited =
                self.reaped.is_some() || self.watch.wait(timeout).map_err(WorkloadError::Wait)?;
        }
        Ok(self.exited)
    }

    /// Sends `sig` to the child (unless it has been reaped: its pid may
    /// belong to another process by then).
    pub fn signal(&self, sig: i32) -> Result<(), WorkloadError> {
        if self.reaped.is_some() {
            return Ok(());
        }
        process::kill(self.pid, sig).map_err(WorkloadError::Wait)
    }

    /// Reaps the child (waiting for its exit if need be): its status and
    /// CPU times. Later calls return the same [`Exit`].
    pub fn reap(&mut self) -> Result<Exit, WorkloadError> {
        if let Some(exit) = self.reaped {
            return Ok(exit);
        }
        // Never released: closing the pipe lets the child exit unexecuted.
        self.go = None;
        let r = process::wait4(self.pid).map_err(WorkloadError::Wait)?;
        let exit = Exit {
            status: r.status,
            user: Duration::from_micros(r.user_us),
            sys: Duration::from_micros(r.sys_us),
        };
        self.exited = true;
        self.reaped = Some(exit);
        Ok(exit)
    }
}

impl Drop for Workload {
    fn drop(&mut self) {
        if self.reaped.is_none() {
            if self.go.is_none() {
                let _ = process::kill(self.pid, process::SIGKILL);
            }
            let _ = self.reap();
        }
    }
}
