//! The raw `perf_event_open(2)` system call.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::types::{c_int, c_ulong, pid_t};
use crate::sys;

// The syscall number agrees with the libc crate, an independent source.
static_assertions::const_assert_eq!(sys::__NR_perf_event_open, libc::SYS_perf_event_open);

/// `perf_event_open(attr, pid, cpu, group_fd, flags)`, exactly as the kernel
/// defines it (since Linux 2.6.31): returns the new fd, or `-1` with the
/// cause in [`errno::last`](super::errno::last).
///
/// Nothing is added or checked: `attr.size` goes to the kernel as the
/// caller set it (0 means `PERF_ATTR_SIZE_VER0`, 64 bytes; a size the
/// kernel does not know with non-zero bytes beyond its own gives `E2BIG`
/// and the kernel writes its own size back into `(*attr).size`, visible to
/// the caller), and `flags` is passed unchanged (no `PERF_FLAG_FD_CLOEXEC`
/// unless the caller sets it). The typed, explained version is
/// [`open::open`](crate::open::open).
///
/// # Safety
///
/// `attr` must point to a writable `perf_event_attr` whose memory is at
/// least `max((*attr).size, 64)` bytes long (the kernel reads `size` bytes,
/// and may write `size` back). `group_fd` must be `-1` or an fd the
/// caller may use (with `PERF_FLAG_PID_CGROUP`, `pid` is a cgroup fd).
#[inline]
pub unsafe fn perf_event_open(
    attr: *mut sys::perf_event_attr,
    pid: pid_t,
    cpu: c_int,
    group_fd: c_int,
    flags: c_ulong,
) -> c_int {
    // SAFETY: the caller's contract covers the attr pointer; the other
    // arguments are integers the kernel checks.
    let r = unsafe {
        libc::syscall(
            sys::__NR_perf_event_open as libc::c_long,
            attr,
            pid,
            cpu,
            group_fd,
            flags,
        )
    };
    // The kernel returns an int: an fd or -1.
    r as c_int
}
