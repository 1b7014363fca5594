//! [`OpenError`]: why `perf_event_open` failed, with the context that
//! explains it captured when it failed.

use super::Scope;
use crate::abi::Paranoid;
use crate::attr::{AttrError, Diagnosis};
use crate::linux::access::{Caller, Seccomp};
use crate::linux::errno as e;
use crate::linux::errno::Errno;
use crate::linux::system::{getrlimit, Resource};
use core::fmt;

/// Errors found before the syscall.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
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
#[non_exhaustive]
pub enum FailureContext {
    /// EACCES / EPERM / ENOSYS: what decides who may call
    /// `perf_event_open` (the paranoid level, the caller's capabilities, a
    /// seccomp filter), read when the call failed.
    Access(Access),
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

/// Everything that decides whether this caller may call `perf_event_open`,
/// read when a call failed with EACCES, EPERM or ENOSYS (no std, no
/// allocation): [`Access::cause`] says which one refused it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// `kernel.perf_event_paranoid` (`None`: unreadable).
    pub paranoid: Option<Paranoid>,
    /// The caller's capabilities (CAP_PERFMON / CAP_SYS_ADMIN, CAP_IPC_LOCK).
    pub caller: Caller,
    /// The caller's seccomp mode and whether a filter answers
    /// `perf_event_open` in place of the kernel (the probe of
    /// [`perf_event_open_intercepted`](crate::linux::access::perf_event_open_intercepted)).
    pub seccomp: Seccomp,
}

/// Which of the [`Access`] facts refused the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AccessCause {
    /// A seccomp filter answered in place of the kernel (the errno of the
    /// error is the filter's): the default profile of Docker and podman
    /// containers returns EPERM for `perf_event_open` unless the container
    /// has CAP_PERFMON / CAP_SYS_ADMIN.
    SeccompFilter,
    /// The caller lacks CAP_PERFMON and CAP_SYS_ADMIN, and the paranoid
    /// level (when readable) forbids what the attr asks for.
    Paranoid(Option<Paranoid>),
    /// The caller has CAP_PERFMON or CAP_SYS_ADMIN and no seccomp filter
    /// intercepts the call: a Linux security module (SELinux, AppArmor
    /// `perf_event` rules, a BPF LSM) refused it, or the capabilities are
    /// those of a user namespace (a container's root), which the kernel
    /// does not count for perf.
    SecurityModule,
}

impl Access {
    /// The facts now, for the calling thread (runs the seccomp probe when
    /// the thread has a filter: call it only after `perf_event_open`
    /// failed, see
    /// [`perf_event_open_intercepted`](crate::linux::access::perf_event_open_intercepted)).
    pub fn now() -> Access {
        Access {
            paranoid: crate::linux::system::perf_event_paranoid(),
            caller: Caller::current(),
            seccomp: Seccomp::current(),
        }
    }

    /// Which fact refused the call: a seccomp filter first (it answers
    /// before the kernel looks at anything), then missing capabilities
    /// (the paranoid level), else a security module.
    pub const fn cause(&self) -> AccessCause {
        if self.seccomp.denies() {
            AccessCause::SeccompFilter
        } else if !self.caller.perfmon {
            AccessCause::Paranoid(self.paranoid)
        } else {
            AccessCause::SecurityModule
        }
    }
}

impl fmt::Display for Access {
    /// The cause and the remedy, one sentence each.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cause() {
            AccessCause::SeccompFilter => {
                f.write_str(
                    "a seccomp filter denies perf_event_open (Seccomp: 2 in /proc/self/status; \
                     the filter, not the kernel, answered a probe call the kernel refuses with \
                     EINVAL before any check): the default profile of Docker/podman containers does this; run the \
                     container with --cap-add PERFMON (or SYS_ADMIN), or with a seccomp profile \
                     that allows perf_event_open (--security-opt seccomp=PROFILE)",
                )
            }
            AccessCause::Paranoid(p) => {
                if let Some(p) = p {
                    write!(
                        f,
                        "kernel.perf_event_paranoid = {} ({}), and you have neither CAP_PERFMON \
                         nor CAP_SYS_ADMIN",
                        p.0,
                        p.meaning()
                    )?;
                } else {
                    f.write_str("you have neither CAP_PERFMON nor CAP_SYS_ADMIN")?;
                }
                match p {
                    Some(p) if !p.allows_kernel() => f.write_str(
                        ": set exclude_kernel and exclude_hv (perf's :u) and measure only your \
                         own tasks (no CPU-wide events), ",
                    )?,
                    Some(p) if !p.allows_cpu_wide() => {
                        f.write_str(": measure your own tasks instead of whole CPUs, ")?
                    }
                    _ => f.write_str(": ")?,
                }
                f.write_str(
                    "or grant CAP_PERFMON (Linux 5.8+) or CAP_SYS_ADMIN, or lower the level \
                     (sysctl kernel.perf_event_paranoid=1 lets users count the kernel, -1 \
                     lifts every limit)",
                )
            }
            AccessCause::SecurityModule => f.write_str(
                "you have CAP_PERFMON or CAP_SYS_ADMIN and no seccomp filter intercepts \
                 perf_event_open: a Linux security module (SELinux, AppArmor, BPF LSM) refused \
                 it (see the audit log), or the capabilities are a user namespace's (a \
                 container's root), which the kernel does not count for perf",
            ),
        }
    }
}

impl OpenError {
    /// `perf_event_paranoid` at the time of an EACCES / EPERM failure.
    pub fn paranoid(&self) -> Option<Paranoid> {
        self.access().and_then(|a| a.paranoid)
    }

    /// What decides access, read at the time of an EACCES / EPERM / ENOSYS
    /// failure ([`Access::cause`] tells which refused the call).
    pub fn access(&self) -> Option<Access> {
        match self.context {
            Some(FailureContext::Access(a)) => Some(a),
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
            e::EACCES | e::EPERM | e::ENOSYS => Some(FailureContext::Access(Access::now())),
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
                match self.access() {
                    Some(a) => write!(f, "{a}"),
                    None => f.write_str(
                        "grant CAP_PERFMON (Linux 5.8+) or CAP_SYS_ADMIN, lower \
                         kernel.perf_event_paranoid, use exclude_kernel/exclude_hv, or measure \
                         only your own threads",
                    ),
                }
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
            e::ENOSYS => match self.access() {
                Some(a) if a.seccomp.denies() => write!(f, "{a}"),
                Some(a) if a.paranoid.is_none() => f.write_str(
                    "the kernel has no perf_event_open (built without CONFIG_PERF_EVENTS: no \
                     /proc/sys/kernel/perf_event_paranoid)",
                ),
                _ => f.write_str(
                    "the kernel has no perf_event_open (CONFIG_PERF_EVENTS off) or a seccomp \
                     filter blocks it",
                ),
            },
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
        match eperm.paranoid() {
            // The one table's meaning, not a second copy (when the level is
            // the cause: without CAP_PERFMON).
            Some(p) if !Caller::current().perfmon => {
                assert!(eperm.to_string().contains(p.meaning()), "{eperm}")
            }
            _ => {}
        }
        // Here no filter: the probe says so, and the cause is never seccomp.
        let access = eperm.access().expect("EPERM carries the access facts");
        assert!(!access.seccomp.denies());
        assert_eq!(access.caller, Caller::current());
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

    #[test]
    fn each_access_cause_names_itself_and_its_remedy() {
        let unprivileged = Caller::default();
        let root = Caller::from_effective(u64::MAX);
        let no_filter = Seccomp::Disabled;
        let docker = Seccomp::FilterDenies;
        let at = |paranoid, caller, seccomp| Access {
            paranoid,
            caller,
            seccomp,
        };
        let filtered = at(Some(Paranoid(2)), root, docker);
        assert_eq!(filtered.cause(), AccessCause::SeccompFilter);
        let text = filtered.to_string();
        assert!(
            text.contains("a seccomp filter denies perf_event_open"),
            "{text}"
        );
        assert!(text.contains("Seccomp: 2"), "{text}");
        assert!(text.contains("--cap-add PERFMON"), "{text}");
        let paranoid = at(Some(Paranoid(2)), unprivileged, no_filter);
        assert_eq!(paranoid.cause(), AccessCause::Paranoid(Some(Paranoid(2))));
        let text = paranoid.to_string();
        assert!(text.contains("kernel.perf_event_paranoid = 2"), "{text}");
        assert!(
            text.contains("neither CAP_PERFMON nor CAP_SYS_ADMIN"),
            "{text}"
        );
        assert!(text.contains("exclude_kernel"), "{text}");
        assert!(!text.contains("seccomp"), "{text}");
        let cpu_wide = at(Some(Paranoid(1)), unprivileged, no_filter).to_string();
        assert!(cpu_wide.contains("instead of whole CPUs"), "{cpu_wide}");
        let lsm = at(Some(Paranoid(2)), root, no_filter);
        assert_eq!(lsm.cause(), AccessCause::SecurityModule);
        assert!(lsm.to_string().contains("security module"), "{lsm}");
        // In the open error: the cause after the errno.
        let err = OpenError {
            errno: Some(Errno(e::EPERM)),
            pre: None,
            diagnosis: Some(Diagnosis::Errno(e::EPERM)),
            context: Some(FailureContext::Access(filtered)),
        };
        assert!(
            err.to_string()
                .contains("not permitted: a seccomp filter denies perf_event_open"),
            "{err}"
        );
        let enosys = OpenError {
            errno: Some(Errno(e::ENOSYS)),
            context: Some(FailureContext::Access(at(None, root, no_filter))),
            ..err
        };
        assert!(
            enosys.to_string().contains("CONFIG_PERF_EVENTS"),
            "{enosys}"
        );
    }
}
