//! Who may call `perf_event_open`: the caller's capabilities
//! (`capget(2)`), its seccomp mode (`prctl(PR_GET_SECCOMP)`) and a probe
//! that tells whether a seccomp filter intercepts `perf_event_open`. All
//! without std or allocation, so the typed open can explain an EACCES /
//! EPERM when it happens.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::types::c_int;
use crate::linux::errno::{self, Errno};

/// The caller's privileges that bypass the perf limits: its effective
/// capabilities (`CapEff` of `/proc/self/status`, `capget(2)`).
///
/// The kernel checks them in the initial user namespace: a container's
/// root in a user namespace of its own shows these capabilities here but
/// the kernel does not count them for perf (`perfmon_capable()`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Caller {
    /// CAP_PERFMON (38, Linux 5.8) or CAP_SYS_ADMIN (21): the paranoid
    /// level does not apply.
    pub perfmon: bool,
    /// CAP_IPC_LOCK (14): ring buffers are not limited by perf_event_mlock_kb.
    pub ipc_lock: bool,
}

impl Caller {
    /// The calling thread, from `capget(2)` (since Linux 2.2; version 3
    /// of the header, 64 capability bits, since 2.6.26); unprivileged
    /// ([`Caller::default`]) if the call fails.
    pub fn current() -> Caller {
        effective_capabilities().map_or_else(|_| Caller::default(), Caller::from_effective)
    }

    /// From an effective capability mask (bit n = capability n, as
    /// `CapEff` prints it).
    pub const fn from_effective(caps: u64) -> Caller {
        const fn has(caps: u64, bit: u32) -> bool {
            caps >> bit & 1 == 1
        }
        Caller {
            perfmon: has(caps, CAP_PERFMON) || has(caps, CAP_SYS_ADMIN),
            ipc_lock: has(caps, CAP_IPC_LOCK),
        }
    }

    /// From a `/proc/<pid>/status` text (its `CapEff:` line; unprivileged
    /// when the line is missing or malformed).
    pub fn from_status(status: &str) -> Caller {
        let caps = status
            .lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .unwrap_or(0);
        Caller::from_effective(caps)
    }
}

/// `CAP_IPC_LOCK`.
pub const CAP_IPC_LOCK: u32 = 14;
/// `CAP_SYS_ADMIN`.
pub const CAP_SYS_ADMIN: u32 = 21;
/// `CAP_PERFMON` (Linux 5.8).
pub const CAP_PERFMON: u32 = 38;

/// `struct __user_cap_header_struct` (linux/capability.h).
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: c_int,
}

/// `struct __user_cap_data_struct` (linux/capability.h).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// `_LINUX_CAPABILITY_VERSION_3` (Linux 2.6.26): two `CapData`, 64 bits.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// The calling thread's effective capability set, `capget(2)`: bit n is
/// capability n.
pub fn effective_capabilities() -> Result<u64, Errno> {
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: a version-3 header with room for the two data structs that
    // version writes; both live for the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_capget,
            &mut header as *mut CapHeader,
            data.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(Errno::last());
    }
    Ok(u64::from(data[0].effective) | u64::from(data[1].effective) << 32)
}

/// The calling thread's seccomp mode (`Seccomp:` of `/proc/self/status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SeccompMode {
    /// `SECCOMP_MODE_DISABLED` (0): no filter.
    Disabled,
    /// `SECCOMP_MODE_STRICT` (1): only read, write, exit and sigreturn.
    Strict,
    /// `SECCOMP_MODE_FILTER` (2, Linux 3.5): one or more BPF filters decide
    /// each system call (containers: Docker's and podman's default profile).
    Filter,
}

/// `prctl(PR_GET_SECCOMP)` (since Linux 2.6.23): the calling thread's
/// seccomp mode; `None` when the kernel has no seccomp (EINVAL) or the
/// mode is one this crate does not know.
pub fn seccomp_mode() -> Option<SeccompMode> {
    // SAFETY: prctl with integer arguments only. (In strict mode this call
    // would kill the thread, but a strict thread cannot have made the
    // perf_event_open call that leads here.)
    let rc = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    match rc {
        0 => Some(SeccompMode::Disabled),
        1 => Some(SeccompMode::Strict),
        2 => Some(SeccompMode::Filter),
        _ => None,
    }
}

/// An unknown `perf_event_open` flag: the kernel refuses it with EINVAL as
/// its first check, before it reads the attr or checks any permission
/// (kernel/events/core.c: `if (flags & ~PERF_FLAG_ALL) return -EINVAL;`,
/// the first statement since Linux 2.6.31).
/// Bit 30 fits every target's `unsigned long`.
const PROBE_FLAG: super::types::c_ulong = 1 << 30;

/// Whether a seccomp filter intercepts `perf_event_open` for the calling
/// thread: calls it with a null attr and an unknown flag, which the
/// kernel always answers with EINVAL before anything else. Any other
/// answer (EPERM, EACCES, ENOSYS, ...) came from a filter, not from the
/// kernel's perf code: that errno is returned. `None`: the kernel itself
/// answered (EINVAL, or ENOSYS from a kernel without perf events, known by
/// its missing `/proc/sys/kernel/perf_event_paranoid`).
///
/// A filter that kills (`SECCOMP_RET_KILL`) or traps (`SECCOMP_RET_TRAP`)
/// instead of returning an errno would do so here: call this only after
/// `perf_event_open` has already returned an error (the filter then
/// answers with an errno).
pub fn perf_event_open_intercepted() -> Option<Errno> {
    // SAFETY: a null attr is never read: the flag check comes first, and a
    // kernel that reached the attr would answer EFAULT. No fd is created.
    let fd = unsafe { super::perf_event_open(core::ptr::null_mut(), 0, -1, -1, PROBE_FLAG) };
    if fd >= 0 {
        // Impossible for a kernel that checks its flags; never leak it.
        // SAFETY: the fd was just returned to us and is owned by nobody.
        unsafe { libc::close(fd) };
        return None;
    }
    match Errno::last() {
        Errno(errno::EINVAL) => None,
        // A kernel without perf_event_open answers ENOSYS itself; its sign
        // is a missing /proc/sys/kernel/perf_event_paranoid.
        Errno(errno::ENOSYS) if super::system::perf_event_paranoid().is_none() => None,
        other => Some(other),
    }
}

/// What the seccomp checks found for the calling thread: its mode
/// ([`seccomp_mode`], supporting evidence) and, under a filter, whether
/// the filter answers `perf_event_open` itself ([`perf_event_open_intercepted`],
/// the definitive sign).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Seccomp {
    /// No seccomp (mode 0): nothing can intercept the call.
    Disabled,
    /// Strict mode (1): only read, write, exit and sigreturn are allowed.
    Strict,
    /// A filter is installed (mode 2) and lets `perf_event_open` reach the
    /// kernel: the kernel's perf code answered.
    FilterAllows,
    /// A filter answers `perf_event_open` itself with an errno instead of
    /// the kernel (the default profile of Docker and podman containers
    /// returns EPERM unless the container has CAP_PERFMON / CAP_SYS_ADMIN).
    FilterDenies,
    /// The mode is unknown (no `PR_GET_SECCOMP`) and the probe found no
    /// filter answering.
    Unknown,
}

impl Seccomp {
    /// Both checks, now, for the calling thread (the probe only when a
    /// filter may be installed).
    pub fn current() -> Seccomp {
        match seccomp_mode() {
            Some(SeccompMode::Disabled) => Seccomp::Disabled,
            Some(SeccompMode::Strict) => Seccomp::Strict,
            mode => match (perf_event_open_intercepted(), mode) {
                (Some(_), _) => Seccomp::FilterDenies,
                (None, Some(SeccompMode::Filter)) => Seccomp::FilterAllows,
                (None, _) => Seccomp::Unknown,
            },
        }
    }

    /// Whether a filter answers `perf_event_open` in place of the kernel.
    pub const fn denies(self) -> bool {
        matches!(self, Seccomp::FilterDenies)
    }
}
