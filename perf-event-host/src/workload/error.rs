//! What can go wrong starting or waiting for a workload.

use core::fmt;
use perf_event_core::linux::errno::Errno;

/// Why a [`Workload`](super::Workload) could not be started, released or
/// waited for.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WorkloadError {
    /// The command line was empty, or an argument holds a NUL byte (C
    /// strings cannot): `index` is its position in argv.
    Argument {
        /// The position in argv (0 for an empty argv).
        index: usize,
    },
    /// `pipe2(2)` or `fork(2)` failed (`EAGAIN`: the process limit
    /// `RLIMIT_NPROC`; `ENOMEM`; `EMFILE`: out of fds).
    Fork(Errno),
    /// `execvp(3)` failed in the child (`ENOENT`: no such program on
    /// `PATH`; `EACCES`: not executable; `ENOEXEC`: not a known format).
    /// The child has been reaped. Displayed as perf 6.1 prints it
    /// (`Workload failed: No such file or directory`; perf then exits 255).
    Exec {
        /// argv\[0\] as given.
        program: String,
        /// The errno `execvp` returned.
        errno: Errno,
    },
    /// Releasing, watching or reaping the child failed (`ECHILD`: it was
    /// reaped by someone else, e.g. a `SIGCHLD` set to `SIG_IGN`).
    Wait(Errno),
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorkloadError::Argument { index } => write!(
                f,
                "workload argument {index} is empty or holds a NUL byte (argv must be non-empty C strings)"
            ),
            WorkloadError::Fork(e) => write!(f, "cannot start the workload: fork/pipe2 failed: {e}"),
            WorkloadError::Exec { errno, .. } => write!(
                f,
                "Workload failed: {}",
                perf_event_core::linux::process::strerror(errno.0)
            ),
            WorkloadError::Wait(e) => write!(f, "cannot wait for the workload: {e}"),
        }
    }
}

impl std::error::Error for WorkloadError {}
