//! [`OpenError`]: why `perf_event_open` failed, with the context that
//! explains it captured when it failed.

use super::Scope;
use crate::abi::Paranoid;
use crate::attr::{AttrError, Diagnosis};
use crate::linux::errno as e;
use crate::linux::errno::Errno;
use crate::linux::system::{getrlimit, Resource};
use core::fmt;

/// Errors found before the syscall.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreSyscall {
    /// `pid == -1` with `cpu == -1`: "any task on any CPU" does not exist.
    AnyTaskAnyCpu,
    /// `pid` or `cpu` below -1.
    NegativeArgument {
        /// The pid given.
        pid: i32,
        /// The cpu given.
        cpu: i32,
    },
    /// The attr itself is invalid.
    Attr(AttrError),
    /// [`open_with_size`](super::open_with_size) with a size above this
    /// crate's `perf_event_attr`: the kernel would read past the struct.
    SizeBeyondStruct {
        /// The size asked for.
        size: u32,
        /// `sizeof(struct perf_event_attr)` of these bindings.
        max: u32,
    },
}

/// A failed `perf_event_open`, with the likely cause for this call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenError {
    /// The errno, or `None` when the call never reached the kernel.
    pub errno: Option<Errno>,
    /// A check that failed before the syscall.
    pub pre: Option<PreSyscall>,
    /// The attr diagnosis for E2BIG / EINVAL.
    pub diagnosis: Option<Diagnosis>,
    /// What explains `errno` for this call (a system setting read when
    /// the call failed, or a fact of the call itself).
    pub context: Option<FailureContext>,
}

/// What explains a failed open, captured when it failed (a system
/// setting may change later: the message must tell what was true then).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureContext {
    /// EACCES / EPERM: `kernel.perf_event_paranoid` (std only).
    Paranoid(Paranoid),
    /// EMFILE: the `RLIMIT_NOFILE` soft limit (saturated at `u32::MAX`,
    /// above the kernel's own `nr_open` ceiling; absent when unlimited).
    OpenFilesLimit(u32),
    /// ENOENT / EOPNOTSUPP for an event that needs a hardware PMU
    /// (hardware, cache and raw events): usually no PMU at all, as in most
    /// virtual machines.
    HardwarePmu,
    /// ESRCH: the `pid` argument of the call, a task that does not exist.
    Process {
        /// The pid given.
        pid: i32,
    },
}

impl OpenError {
    /// `perf_event_paranoid` at the time of an EACCES / EPERM failure.
    pub fn paranoid(&self) -> Option<Paranoid> {
        match self.context {
            Some(FailureContext::Paranoid(p)) => Some(p),
            _ => None,
        }
    }

    /// The open-files limit at the time of an EMFILE failure.
    pub fn open_files_limit(&self) -> Option<u32> {
        match self.context {
            Some(FailureContext::OpenFilesLimit(n)) => Some(n),
            _ => None,
        }
    }
}

impl OpenError {
    pub(super) const fn pre(pre: PreSyscall) -> OpenError {
        OpenError {
            errno: None,
            pre: Some(pre),
            diagnosis: None,
            context: None,
        }
    }

    /// The error of a call the kernel refused, with the context that
    /// explains `errno` captured now, while it is still true.
    pub(super) fn from_kernel(
        errno: Errno,
        diagnosis: Diagnosis,
        hardware: bool,
        scope: Scope,
    ) -> OpenError {
        let context = match errno.0 {
            #[cfg(feature = "std")]
            e::EACCES | e::EPERM => {
                crate::linux::system::perf_event_paranoid().map(FailureContext::Paranoid)
            }
            e::EMFILE => getrlimit(Resource::OpenFiles)
                .ok()
                .and_then(|l| l.soft)
                .map(|n| FailureContext::OpenFilesLimit(u32::try_from(n).unwrap_or(u32::MAX))),
            e::ENOENT | e::EOPNOTSUPP if hardware => Some(FailureContext::HardwarePmu),
            e::ESRCH => Some(FailureContext::Process { pid: scope.pid() }),
            _ => None,
        };
        OpenError {
            errno: Some(errno),
            pre: None,
            diagnosis: Some(diagnosis),
            context,
        }
    }
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.pre, self.errno) {
            (Some(PreSyscall::AnyTaskAnyCpu), _) => {
                return f.write_str(
                    "pid == -1 with cpu == -1 (any task on any CPU) is not a valid \
                     perf_event_open target: give a CPU, or measure a task",
                )
            }
            (Some(PreSyscall::NegativeArgument { pid, cpu }), _) => {
                return write!(f, "pid {pid} / cpu {cpu}: only -1 may be negative")
            }
            (Some(PreSyscall::Attr(e)), _) => return write!(f, "invalid attr: {e}"),
            (Some(PreSyscall::SizeBeyondStruct { size, max }), _) => {
                return write!(
                    f,
                    "attr.size {size} is above this crate's perf_event_attr ({max} bytes): the \
                     kernel would read past it; use linux::perf_event_open with a larger buffer"
                )
            }
            (None, None) => return f.write_str("perf_event_open failed"),
            (None, Some(_)) => {}
        }
        let errno = self.errno.unwrap_or(Errno(0));
        write!(f, "perf_event_open: {errno}: ")?;
        if let Some(d) = &self.diagnosis {
            if !matches!(d, Diagnosis::Errno(_)) {
                return write!(f, "{d}");
            }
        }
        match errno.0 {
            e::EACCES | e::EPERM => {
                f.write_str("not permitted: ")?;
                if let Some(p) = self.paranoid() {
                    write!(f, "kernel.perf_event_paranoid = {} ({}); ", p.0, p.meaning())?;
                }
                f.write_str(
                    "grant CAP_PERFMON (Linux 5.8+) or CAP_SYS_ADMIN, lower \
                     kernel.perf_event_paranoid, use exclude_kernel/exclude_hv, or measure only \
                     your own threads",
                )
            }
            e::ENOENT | e::EOPNOTSUPP if self.context == Some(FailureContext::HardwarePmu) => f.write_str(
                "no hardware PMU for this event (usual in virtual machines): use a software \
                 event such as task-clock, or run on bare metal",
            ),
            e::ENOENT => f.write_str(
                "no such event: the type/config pair is unknown to this kernel or PMU \
                 (check /sys/bus/event_source/devices)",
            ),
            e::EOPNOTSUPP => f.write_str(
                "the PMU cannot do what the attr asks (sampling, a branch stack, \
                 exclude_* bits, precise_ip, or an AUX feature it lacks)",
            ),
            e::E2BIG => f.write_str("the attr is larger than this kernel's and uses the extra bytes"),
            e::EINVAL => f.write_str(
                "the kernel rejected the attr or arguments: a field value out of range, a \
                 flag combination, a frequency above kernel.perf_event_max_sample_rate, or a \
                 CPU that does not exist",
            ),
            e::EMFILE => match self.open_files_limit() {
                Some(n) => write!(f, "too many open files: the limit is {n} (RLIMIT_NOFILE; raise it with ulimit -n)"),
                None => f.write_str("too many open files (RLIMIT_NOFILE)"),
            },
            e::EBUSY => f.write_str(
                "the PMU is in exclusive use (another exclusive or pinned event, or a tool such as \
                 the NMI watchdog): retry later or drop `exclusive`",
            ),
            e::ESRCH => write!(
                f,
                "no such process: pid {} does not exist (or exited)",
                match self.context {
                    Some(FailureContext::Process { pid }) => pid,
                    _ => 0,
                }
            ),
            e::EBADF => f.write_str("the group fd is not a valid perf event fd (or the cgroup fd is bad)"),
            e::EFAULT => f.write_str("the attr pointer is invalid"),
            e::EINTR => f.write_str("interrupted while setting up the event: retry"),
            e::ENODEV => f.write_str("the CPU does not support this feature (e.g. branch stacks)"),
            e::ENOSPC => f.write_str(
                "no free hardware breakpoint slots (usually 4 per CPU) or too many events in a group",
            ),
            e::ENOSYS => f.write_str(
                "the kernel has no perf_event_open (CONFIG_PERF_EVENTS off) or a seccomp filter \
                 blocks it",
            ),
            e::EOVERFLOW => f.write_str(
                "sample_max_stack is above kernel.perf_event_max_stack: lower it or raise the sysctl",
            ),
            _ => f.write_str("unexpected error from perf_event_open"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for OpenError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::Diagnosis;

    #[test]
    fn context_is_captured_when_the_error_is_made() {
        let scope = Scope::this_thread();
        let emfile =
            OpenError::from_kernel(Errno(e::EMFILE), Diagnosis::Errno(e::EMFILE), false, scope);
        let now = getrlimit(Resource::OpenFiles)
            .unwrap()
            .soft
            .map(|n| u32::try_from(n).unwrap_or(u32::MAX));
        assert_eq!(emfile.open_files_limit(), now);
        if let Some(n) = now {
            assert!(
                emfile.to_string().contains(&format!("the limit is {n}")),
                "{emfile}"
            );
        }
        let eperm =
            OpenError::from_kernel(Errno(e::EPERM), Diagnosis::Errno(e::EPERM), false, scope);
        assert_eq!(
            eperm.paranoid(),
            crate::linux::system::perf_event_paranoid()
        );
        if let Some(p) = eperm.paranoid() {
            // The one table's meaning, not a second copy.
            assert!(eperm.to_string().contains(p.meaning()), "{eperm}");
        }
        let einval =
            OpenError::from_kernel(Errno(e::EINVAL), Diagnosis::Errno(e::EINVAL), false, scope);
        assert_eq!(einval.context, None);
        let enoent =
            OpenError::from_kernel(Errno(e::ENOENT), Diagnosis::Errno(e::ENOENT), true, scope);
        assert_eq!(enoent.context, Some(FailureContext::HardwarePmu));
        assert!(enoent.to_string().contains("no hardware PMU"), "{enoent}");
        let esrch = OpenError::from_kernel(
            Errno(e::ESRCH),
            Diagnosis::Errno(e::ESRCH),
            false,
            Scope::thread(4_000_000),
        );
        assert!(esrch.to_string().contains("pid 4000000"), "{esrch}");
    }
}
