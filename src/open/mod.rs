//! `perf_event_open(2)`: who and where to measure, the flags, and errors
//! that explain themselves.

mod error;
mod group;

pub use error::{Access, AccessCause, FailureContext, OpenError, PreSyscall};
pub use group::GroupOpen;

use crate::attr::{Attr, Diagnosis};
use crate::fd::EventFd;
use crate::linux::fields::ATTR_SIZE;
use crate::linux::types::pid_t;
use crate::sys;

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

    /// Flags from the raw word exactly as given (`PERF_FLAG_*`; nothing
    /// added, so `PERF_FLAG_FD_CLOEXEC` only if set). Bits the running
    /// kernel does not know make it answer EINVAL. `PERF_FLAG_PID_CGROUP`
    /// is better set through [`Scope::cgroup`], which also makes `pid` a
    /// cgroup fd.
    pub const fn from_bits(bits: u64) -> OpenFlags {
        OpenFlags(bits)
    }

    /// The raw flags word.
    pub const fn bits(self) -> u64 {
        self.0
    }
}

/// Opens `attr` for `scope`, as a member of `group` when given.
///
/// The attr is validated first ([`Attr::check`]); its size is the smallest
/// that covers what is set. On E2BIG and EINVAL the error carries the attr
/// diagnosis (which fields the kernel lacks and which version adds them);
/// on EACCES / EPERM the `perf_event_paranoid` level and on EMFILE the
/// open-files limit, read when the call failed.
pub fn open(
    attr: &Attr,
    scope: Scope,
    group: Option<&EventFd>,
    flags: OpenFlags,
) -> Result<EventFd, OpenError> {
    open_sized(attr, attr.size().bytes(), scope, group, flags)
}

/// [`open`] with `attr.size` set to exactly `size` instead of the smallest
/// size that covers the attr: for libraries that let their users choose it
/// (and provoke E2BIG on purpose, or test an older kernel's view with a
/// smaller size: the kernel then reads only the first `size` bytes, 0
/// meaning `PERF_ATTR_SIZE_VER0`).
///
/// The attr is still validated. A size above this crate's
/// `perf_event_attr` ([`crate::linux::fields::ATTR_SIZE`]) is refused
/// before the call ([`PreSyscall::SizeBeyondStruct`]): the kernel would
/// read past the struct. For that, use the raw
/// [`crate::linux::perf_event_open`] with a larger buffer.
pub fn open_with_size(
    attr: &Attr,
    size: u32,
    scope: Scope,
    group: Option<&EventFd>,
    flags: OpenFlags,
) -> Result<EventFd, OpenError> {
    if size as usize > ATTR_SIZE {
        return Err(OpenError::pre(PreSyscall::SizeBeyondStruct {
            size,
            max: ATTR_SIZE as u32,
        }));
    }
    open_sized(attr, size, scope, group, flags)
}

fn open_sized(
    attr: &Attr,
    size: u32,
    scope: Scope,
    group: Option<&EventFd>,
    flags: OpenFlags,
) -> Result<EventFd, OpenError> {
    attr.check()
        .map_err(|e| OpenError::pre(PreSyscall::Attr(e)))?;
    let mut raw = attr.to_raw();
    raw.size = size;
    let mut bits = flags.bits();
    if scope.cgroup {
        bits |= sys::PERF_FLAG_PID_CGROUP as u64;
    }
    match crate::linux::fd::open_raw(&mut raw, scope.pid, scope.cpu, group, bits) {
        Ok(fd) => Ok(fd),
        Err(errno) => {
            let diagnosis =
                attr.diagnose(errno.0, raw.size, crate::linux::system::kernel_version());
            Err(OpenError::from_kernel(
                errno,
                diagnosis,
                attr.needs_hardware_pmu(),
                scope,
            ))
        }
    }
}

impl Attr {
    /// Opens this attr on the calling thread (any CPU) and closes it again:
    /// whether the running kernel accepts it, and if not, why.
    pub fn try_open(&self) -> Result<(), Diagnosis> {
        self.check().map_err(Diagnosis::Invalid)?;
        self.try_open_unchecked()
    }

    /// [`Attr::try_open`] without the crate's validation: the kernel decides
    /// (feature probing; tests of the kernel's own checks).
    pub fn try_open_unchecked(&self) -> Result<(), Diagnosis> {
        let mut raw = self.to_raw();
        let flags = sys::PERF_FLAG_FD_CLOEXEC as u64;
        match crate::linux::fd::open_raw(&mut raw, 0, -1, None, flags) {
            // Dropping the fd closes it.
            Ok(_fd) => Ok(()),
            Err(errno) => {
                Err(self.diagnose(errno.0, raw.size, crate::linux::system::kernel_version()))
            }
        }
    }
}
