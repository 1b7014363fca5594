//! Being woken by a process's exit: a pidfd (Linux 5.3), or for a child on
//! older kernels a helper thread blocked in `waitid(WNOWAIT)`.

use perf_event_core::linux::errno::Errno;
use perf_event_core::linux::errno::ENOSYS;
use perf_event_core::linux::io::Fd;
use perf_event_core::linux::io::{poll, PollFd, POLLIN};
use perf_event_core::linux::process;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::time::Duration;

/// An fd that becomes readable (`POLLIN`) when a process exits: no
/// polling period, the exit itself wakes the waiter.
///
/// - Linux 5.3+: a pidfd (`pidfd_open(2)`), for any process the caller may
///   see, child or not.
/// - Older kernels, for a child only: a pipe written by a helper thread
///   blocked in `waitid(P_PID, pid, WEXITED | WNOWAIT)`, which leaves the
///   child unreaped (its pid stays valid until the caller reaps it).
#[derive(Debug)]
pub struct ExitWatch {
    fd: Fd,
    pid: i32,
}

impl ExitWatch {
    /// Watches a child of this process (pidfd, else the helper thread).
    pub fn child(pid: i32) -> Result<ExitWatch, Errno> {
        match process::pidfd_open(pid) {
            Ok(fd) => Ok(ExitWatch { fd, pid }),
            Err(e) if e.0 == ENOSYS => {
                let (read, write) = process::pipe()?;
                std::thread::Builder::new()
                    .name(format!("exit-watch-{pid}"))
                    .spawn(move || {
                        let _ = process::exited_unreaped(pid, true);
                        let _ = process::write(&write, &[1]);
                    })
                    .map_err(|e| Errno(e.raw_os_error().unwrap_or(ENOSYS)))?;
                Ok(ExitWatch { fd: read, pid })
            }
            Err(e) => Err(e),
        }
    }

    /// Watches any process (not only a child): needs `pidfd_open(2)`
    /// (Linux 5.3; `ENOSYS` before). `ESRCH`: no such process.
    pub fn process(pid: i32) -> Result<ExitWatch, Errno> {
        Ok(ExitWatch {
            fd: process::pidfd_open(pid)?,
            pid,
        })
    }

    /// Watches one thread, by its tid, leader or not: needs
    /// `pidfd_open(2)` with `PIDFD_THREAD` (Linux 6.9; `EINVAL` before, so
    /// the caller can fall back to checking `/proc`). `ESRCH`: no such
    /// thread.
    pub fn thread(tid: i32) -> Result<ExitWatch, Errno> {
        Ok(ExitWatch {
            fd: process::pidfd_open_thread(tid)?,
            pid: tid,
        })
    }

    /// The watched pid (or tid, for [`ExitWatch::thread`]).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The fd to poll (for `POLLIN`) beside the caller's own fds.
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Whether the process has exited, waiting up to `timeout` (`None`:
    /// until it does). `Err(EINTR)` when a signal arrived first, so the
    /// caller can look at what its handler recorded.
    pub fn wait(&self, timeout: Option<Duration>) -> Result<bool, Errno> {
        Ok(wait_any(std::slice::from_ref(self), timeout)?.is_some())
    }
}

/// Waits up to `timeout` (`None`: forever) for one of `watches` to exit:
/// the index of one that has, or `None` on timeout (and at once for an
/// empty list). `Err(EINTR)` when a signal arrived first.
pub fn wait_any(watches: &[ExitWatch], timeout: Option<Duration>) -> Result<Option<usize>, Errno> {
    if watches.is_empty() {
        return Ok(None);
    }
    let mut fds: Vec<_> = watches
        .iter()
        .map(|w| PollFd::from_fd(w.fd.as_fd(), POLLIN))
        .collect();
    let ms = match timeout {
        None => -1,
        // Rounded up: a wake-up before the deadline would be a lost turn.
        Some(t) => t.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32,
    };
    match poll(&mut fds, ms)? {
        0 => Ok(None),
        _ => Ok(fds.iter().position(|p| p.revents() != 0)),
    }
}
