//! `perf_event_open(2)`: who and where to measure, the flags, and errors
//! that explain themselves.

use crate::attr::{Attr, AttrError, Diagnosis};
use crate::errno::Errno;
use crate::fd::EventFd;
use crate::linux::errno as e;
use crate::linux::system::{getrlimit, Resource};
use crate::linux::types::pid_t;
use crate::sys;
use core::fmt;

/// Which tasks and CPUs an event measures (the `pid` / `cpu` arguments).
/// "Any task on any CPU" (`pid == -1, cpu == -1`) is not representable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scope {
    pid: i32,
    cpu: i32,
    cgroup: bool,
}

impl Scope {
    /// The calling thread, on any CPU (`pid 0, cpu -1`).
    pub const fn this_thread() -> Scope {
        Scope {
            pid: 0,
            cpu: -1,
            cgroup: false,
        }
    }

    /// The calling thread, only while it runs on `cpu`.
    pub const fn this_thread_on(cpu: u32) -> Scope {
        Scope {
            pid: 0,
            cpu: cpu as i32,
            cgroup: false,
        }
    }

    /// Thread (or process) `tid`, on any CPU. Needs ptrace access to it
    /// (and CAP_PERFMON or a permissive perf_event_paranoid for others' tasks).
    pub const fn thread(tid: pid_t) -> Scope {
        Scope {
            pid: tid,
            cpu: -1,
            cgroup: false,
        }
    }

    /// Thread `tid` while it runs on `cpu`.
    pub const fn thread_on(tid: pid_t, cpu: u32) -> Scope {
        Scope {
            pid: tid,
            cpu: cpu as i32,
            cgroup: false,
        }
    }

    /// Every task on `cpu` (`pid -1`); needs CAP_PERFMON or paranoid <= 0.
    pub const fn all_tasks_on(cpu: u32) -> Scope {
        Scope {
            pid: -1,
            cpu: cpu as i32,
            cgroup: false,
        }
    }

    /// The tasks of the cgroup whose directory is open as `cgroup_fd`, on
    /// `cpu` (`PERF_FLAG_PID_CGROUP`, since Linux 2.6.39; a CPU is required).
    pub const fn cgroup(cgroup_fd: i32, cpu: u32) -> Scope {
        Scope {
            pid: cgroup_fd,
            cpu: cpu as i32,
            cgroup: true,
        }
    }

    /// Raw `pid` / `cpu` arguments, checked: `pid == -1 && cpu == -1` and
    /// other negative values the kernel refuses are rejected here.
    pub const fn raw(pid: i32, cpu: i32) -> Result<Scope, OpenError> {
        if pid == -1 && cpu == -1 {
            return Err(OpenError::pre(PreSyscall::AnyTaskAnyCpu));
        }
        if pid < -1 || cpu < -1 {
            return Err(OpenError::pre(PreSyscall::NegativeArgument { pid, cpu }));
        }
        Ok(Scope {
            pid,
            cpu,
            cgroup: false,
        })
    }

    /// The `pid` argument.
    pub const fn pid(&self) -> i32 {
        self.pid
    }

    /// The `cpu` argument (-1: any).
    pub const fn cpu(&self) -> i32 {
        self.cpu
    }

    /// Whether the event measures the calling thread on any CPU (the only
    /// case where user-space counter reads are allowed).
    pub const fn is_self_any_cpu(&self) -> bool {
        self.pid == 0 && self.cpu == -1 && !self.cgroup
    }
}

/// `perf_event_open` flags. `PERF_FLAG_FD_CLOEXEC` is on by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenFlags(u64);

impl Default for OpenFlags {
    fn default() -> Self {
        OpenFlags::new()
    }
}

impl OpenFlags {
    /// `PERF_FLAG_FD_CLOEXEC` (since Linux 3.14).
    pub const fn new() -> OpenFlags {
        OpenFlags(sys::PERF_FLAG_FD_CLOEXEC as u64)
    }

    /// Keep the fd open across exec (clears `PERF_FLAG_FD_CLOEXEC`).
    pub const fn inherit_across_exec(self) -> OpenFlags {
        OpenFlags(self.0 & !(sys::PERF_FLAG_FD_CLOEXEC as u64))
    }

    /// `PERF_FLAG_FD_NO_GROUP`: create the event as a group member without
    /// grouping it (for `PERF_FLAG_FD_OUTPUT` / SET_OUTPUT users).
    pub const fn no_group(self) -> OpenFlags {
        OpenFlags(self.0 | sys::PERF_FLAG_FD_NO_GROUP as u64)
    }

    /// `PERF_FLAG_FD_OUTPUT`: route samples to the group leader's buffer
    /// (broken since Linux 2.6.35; use [`EventFd::set_output`] instead).
    pub const fn fd_output(self) -> OpenFlags {
        OpenFlags(self.0 | sys::PERF_FLAG_FD_OUTPUT as u64)
    }

    /// The raw flags word.
    pub const fn bits(self) -> u64 {
        self.0
    }
}

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
    /// Whether the event needs a hardware PMU.
    pub hardware: bool,
    /// The scope of the call.
    pub scope: Option<Scope>,
}

impl OpenError {
    const fn pre(pre: PreSyscall) -> OpenError {
        OpenError {
            errno: None,
            pre: Some(pre),
            diagnosis: None,
            hardware: false,
            scope: None,
        }
    }
}

#[cfg(feature = "std")]
fn read_sysctl(name: &str) -> Option<String> {
    std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
        .ok()
        .map(|s| s.trim().to_owned())
}

fn open_files_limit() -> Option<u64> {
    getrlimit(Resource::OpenFiles).ok().and_then(|l| l.soft)
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
                #[cfg(feature = "std")]
                if let Some(p) = read_sysctl("perf_event_paranoid") {
                    write!(f, "kernel.perf_event_paranoid = {p} (")?;
                    f.write_str(match p.as_str() {
                        "-1" => "no restrictions",
                        "0" => "no raw tracepoint access without CAP_PERFMON",
                        "1" => "no CPU-wide events without CAP_PERFMON",
                        "2" => "per-thread user-space measurement only without CAP_PERFMON",
                        _ => "perf restricted to CAP_PERFMON",
                    })?;
                    f.write_str("); ")?;
                }
                f.write_str(
                    "grant CAP_PERFMON (Linux 5.8+) or CAP_SYS_ADMIN, lower \
                     kernel.perf_event_paranoid, use exclude_kernel/exclude_hv, or measure only \
                     your own threads",
                )
            }
            e::ENOENT | e::EOPNOTSUPP if self.hardware => f.write_str(
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
            e::EMFILE => match open_files_limit() {
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
                self.scope.map_or(0, |s| s.pid())
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

/// Opens `attr` for `scope`, as a member of `group` when given.
///
/// The attr is validated first ([`Attr::check`]); its size is the smallest
/// that covers what is set. On E2BIG and EINVAL the error carries the attr
/// diagnosis (which fields the kernel lacks and which version adds them).
pub fn open(
    attr: &Attr,
    scope: Scope,
    group: Option<&EventFd>,
    flags: OpenFlags,
) -> Result<EventFd, OpenError> {
    let hardware = attr.needs_hardware_pmu();
    let fail = |errno, diagnosis| OpenError {
        errno,
        pre: None,
        diagnosis,
        hardware,
        scope: Some(scope),
    };
    attr.check()
        .map_err(|e| OpenError::pre(PreSyscall::Attr(e)))?;
    let mut raw = attr.to_raw();
    let mut bits = flags.bits();
    if scope.cgroup {
        bits |= sys::PERF_FLAG_PID_CGROUP as u64;
    }
    let group_fd = group.map_or(-1, |g| g.raw());
    match crate::linux::fd::open(&mut raw, scope.pid, scope.cpu, group_fd, bits) {
        Ok(fd) => Ok(EventFd::new(fd, attr.read_format_word())),
        Err(errno) => {
            let diagnosis = attr.diagnose(errno.0, raw.size, crate::abi::KernelVersion::running());
            Err(fail(Some(errno), Some(diagnosis)))
        }
    }
}
