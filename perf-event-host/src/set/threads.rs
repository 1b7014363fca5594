//! Thread sets: the threads of a running process (sysfs's
//! [`tasks`](crate::sysfs::tasks), `/proc/PID/task`), and why attaching to
//! them may be refused.

use crate::sysfs::{self, Problem, SysfsError};
use perf_event_core::linux::access::Caller;
use perf_event_core::linux::errno as os;
use perf_event_core::linux::errno::Errno;
use std::fmt;

/// Thread ids (`pid_t`), ascending, without duplicates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadSet {
    tids: Vec<i32>,
}

impl ThreadSet {
    /// The given thread ids, sorted and deduplicated.
    pub fn from_tids(tids: impl IntoIterator<Item = i32>) -> ThreadSet {
        let mut tids: Vec<i32> = tids.into_iter().collect();
        tids.sort_unstable();
        tids.dedup();
        ThreadSet { tids }
    }

    /// The threads of process `pid` now (`/proc/PID/task`, since Linux
    /// 2.6.0). Threads may start or exit right after: [`EventSet`] open
    /// re-scans until the list is stable.
    ///
    /// [`EventSet`]: super::EventSet
    pub fn of_process(pid: i32) -> Result<ThreadSet, AttachError> {
        let tids = sysfs::tasks(pid).map_err(|err| AttachError::from_listing(pid, &err))?;
        if tids.is_empty() {
            // An exited process whose /proc entry lingers as a zombie.
            return Err(AttachError::new(pid, Errno(os::ESRCH)));
        }
        Ok(ThreadSet::from_tids(tids))
    }

    /// The thread ids, ascending.
    pub fn as_slice(&self) -> &[i32] {
        &self.tids
    }

    /// How many threads.
    pub fn len(&self) -> usize {
        self.tids.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.tids.is_empty()
    }

    /// Whether `tid` is in the set.
    pub fn contains(&self, tid: i32) -> bool {
        self.tids.binary_search(&tid).is_ok()
    }
}

/// Attaching to another process was refused or it is gone.
///
/// Counting another process's threads needs ptrace read access to them
/// (`PTRACE_MODE_READ_REALCREDS`: same user and not setuid, or
/// CAP_SYS_PTRACE) and, for a process that is not the caller's,
/// `kernel.perf_event_paranoid` <= 2 or CAP_PERFMON (perf_event_open(2)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttachError {
    /// The process or thread.
    pub pid: i32,
    /// The errno: ESRCH, EACCES or EPERM (others passed on).
    pub errno: Errno,
    /// `kernel.perf_event_paranoid`, when readable.
    pub paranoid: Option<i32>,
    /// Whether the caller has CAP_PERFMON or CAP_SYS_ADMIN.
    pub perfmon: bool,
}

impl AttachError {
    /// An error for `pid`, with the paranoid level and capabilities read now.
    pub fn new(pid: i32, errno: Errno) -> AttachError {
        AttachError {
            pid,
            errno,
            paranoid: perf_event_core::linux::system::perf_event_paranoid().map(|p| p.0),
            perfmon: Caller::current().perfmon,
        }
    }

    /// The error of listing `/proc/PID/task`: its errno.
    fn from_listing(pid: i32, err: &SysfsError) -> AttachError {
        let raw = match &err.problem {
            Problem::Io(e) => e.raw_os_error(),
            _ => None,
        };
        let errno = Errno(raw.unwrap_or(os::ENOENT));
        // /proc/PID/task missing means the process does not exist.
        let errno = if errno.0 == os::ENOENT {
            Errno(os::ESRCH)
        } else {
            errno
        };
        AttachError::new(pid, errno)
    }
}

impl fmt::Display for AttachError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pid = self.pid;
        match self.errno.0 {
            os::ESRCH => write!(f, "process {pid} does not exist (or has exited)"),
            os::EACCES | os::EPERM => {
                write!(f, "not permitted to attach to {pid} ({}): ", self.errno)?;
                if self.perfmon {
                    f.write_str(
                        "the caller has CAP_PERFMON/CAP_SYS_ADMIN, so ptrace access was refused: ",
                    )?;
                } else if let Some(p) = self.paranoid {
                    write!(
                        f,
                        "kernel.perf_event_paranoid = {p} ({}) and the caller lacks CAP_PERFMON; ",
                        perf_event_core::abi::Paranoid(p).meaning()
                    )?;
                }
                f.write_str(
                    "attaching needs ptrace read access (same user and not setuid, \
                     kernel.yama.ptrace_scope permitting, or CAP_SYS_PTRACE); run as the \
                     process's owner, grant CAP_PERFMON and CAP_SYS_PTRACE, or lower \
                     kernel.perf_event_paranoid",
                )
            }
            _ => write!(f, "cannot attach to {pid}: {}", self.errno),
        }
    }
}

impl std::error::Error for AttachError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_and_missing_process() {
        let me = ThreadSet::of_process(std::process::id() as i32).unwrap();
        assert!(me.contains(std::process::id() as i32));
        let gone = ThreadSet::of_process(i32::MAX).unwrap_err();
        assert_eq!(gone.errno, Errno(os::ESRCH));
        let denied = AttachError {
            pid: 1,
            errno: Errno(os::EACCES),
            paranoid: Some(2),
            perfmon: false,
        };
        let text = denied.to_string();
        assert!(text.contains("perf_event_paranoid = 2"), "{text}");
        assert!(text.contains("CAP_SYS_PTRACE"), "{text}");
    }
}
