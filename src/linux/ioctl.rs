//! One raw function per `PERF_EVENT_IOC_*` request (perf_event_open(2),
//! "perf_event ioctl calls"), with this target's request numbers
//! ([`crate::abi::ioctl_numbers`], proven against the C compiler for every
//! architecture).
//!
//! Each takes the argument the kernel reads, in the type it reads: a
//! pointer where the kernel dereferences one (`PERIOD`, `ID`,
//! `SET_FILTER`, `QUERY_BPF`, `MODIFY_ATTRIBUTES`), a sign-extended fd for
//! `SET_OUTPUT` (so `-1` reaches the kernel as `-1`, not `0xffffffff`).
//! Each returns the kernel's result unchanged: `0` (or a non-negative
//! value), or `-1` with the cause in [`errno::last`](super::errno::last).
//! The typed methods are on [`EventFd`](crate::fd::EventFd).
//!
//! # Safety (every function)
//!
//! `fd` must be a perf event fd: another driver may give the same request
//! number another meaning, with other memory accesses. Pointer arguments
//! must be valid as each function says.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::types::{c_char, c_int, c_uint, c_ulong};
use crate::abi::ioctl_numbers as ioc;
use crate::sys;

#[inline]
unsafe fn ioctl(fd: c_int, request: u32, arg: c_ulong) -> c_int {
    // SAFETY: the callers' contract: `fd` is a perf event fd and `arg` is
    // what `request` takes.
    unsafe { libc::ioctl(fd, request as _, arg) }
}

/// `PERF_EVENT_IOC_ENABLE`: `flags` 0, or `PERF_IOC_FLAG_GROUP` for the
/// leader's whole group (since Linux 2.6.31).
///
/// # Safety
/// `fd` is a perf event fd.
#[inline]
pub unsafe fn enable(fd: c_int, flags: c_uint) -> c_int {
    // SAFETY: an integer argument; the caller's contract for `fd`.
    unsafe { ioctl(fd, ioc::PERF_EVENT_IOC_ENABLE, flags as c_ulong) }
}

/// `PERF_EVENT_IOC_DISABLE`: `flags` 0 or `PERF_IOC_FLAG_GROUP` (since
/// Linux 2.6.31).
///
/// # Safety
/// `fd` is a perf event fd.
#[inline]
pub unsafe fn disable(fd: c_int, flags: c_uint) -> c_int {
    // SAFETY: an integer argument; the caller's contract for `fd`.
    unsafe { ioctl(fd, ioc::PERF_EVENT_IOC_DISABLE, flags as c_ulong) }
}

/// `PERF_EVENT_IOC_REFRESH`: enable for `overflows` more overflows, then
/// disable (since Linux 2.6.31; 0 is refused since 3.7).
///
/// # Safety
/// `fd` is a perf event fd.
#[inline]
pub unsafe fn refresh(fd: c_int, overflows: c_int) -> c_int {
    // SAFETY: an integer argument (the kernel reads it as int).
    unsafe { ioctl(fd, ioc::PERF_EVENT_IOC_REFRESH, overflows as c_ulong) }
}

/// `PERF_EVENT_IOC_RESET`: zero the count, not the times; `flags` 0 or
/// `PERF_IOC_FLAG_GROUP` (since Linux 2.6.31).
///
/// # Safety
/// `fd` is a perf event fd.
#[inline]
pub unsafe fn reset(fd: c_int, flags: c_uint) -> c_int {
    // SAFETY: an integer argument; the caller's contract for `fd`.
    unsafe { ioctl(fd, ioc::PERF_EVENT_IOC_RESET, flags as c_ulong) }
}

/// `PERF_EVENT_IOC_PERIOD`: the new sample period (or frequency, for a
/// `freq` event), which the kernel reads through the pointer (since Linux
/// 2.6.36; applied at once since 3.7).
///
/// # Safety
/// `fd` is a perf event fd; `period` points to a readable `u64`.
#[inline]
pub unsafe fn period(fd: c_int, period: *const u64) -> c_int {
    // SAFETY: the kernel reads one u64 at `period`: the caller's contract.
    unsafe { ioctl(fd, ioc::PERF_EVENT_IOC_PERIOD, period as c_ulong) }
}

/// `PERF_EVENT_IOC_SET_OUTPUT`: send `fd`'s records to `target`'s ring
/// buffer, or stop with `target == -1` (since Linux 2.6.31). `target` is
/// sign-extended to `unsigned long`, as the kernel compares it with `-1`.
///
/// # Safety
/// `fd` is a perf event fd.
#[inline]
pub unsafe fn set_output(fd: c_int, target: c_int) -> c_int {
    // SAFETY: an integer argument, sign-extended as the kernel expects.
    unsafe {
        ioctl(
            fd,
            ioc::PERF_EVENT_IOC_SET_OUTPUT,
            target as libc::c_long as c_ulong,
        )
    }
}

/// `PERF_EVENT_IOC_SET_FILTER`: a tracepoint filter (ftrace syntax) or an
/// AUX PMU's address filter, NUL-terminated (since Linux 2.6.33).
///
/// # Safety
/// `fd` is a perf event fd; `filter` points to a NUL-terminated string.
#[inline]
pub unsafe fn set_filter(fd: c_int, filter: *const c_char) -> c_int {
    // SAFETY: the kernel copies the string at `filter`: the caller's contract.
    unsafe { ioctl(fd, ioc::PERF_EVENT_IOC_SET_FILTER, filter as c_ulong) }
}

/// `PERF_EVENT_IOC_ID`: the kernel writes the event id (as in
/// `PERF_FORMAT_ID`) to `*id` (since Linux 3.12).
///
/// # Safety
/// `fd` is a perf event fd; `id` points to a writable `u64`.
#[inline]
pub unsafe fn id(fd: c_int, id: *mut u64) -> c_int {
    // SAFETY: the kernel writes one u64 at `id`: the caller's contract.
    unsafe { ioctl(fd, ioc::PERF_EVENT_IOC_ID, id as c_ulong) }
}

/// `PERF_EVENT_IOC_SET_BPF`: attach BPF program `prog_fd` to this
/// tracepoint / kprobe / uprobe event (since Linux 4.1).
///
/// # Safety
/// `fd` is a perf event fd.
#[inline]
pub unsafe fn set_bpf(fd: c_int, prog_fd: c_int) -> c_int {
    // SAFETY: an integer argument (the kernel reads a u32 fd).
    unsafe {
        ioctl(
            fd,
            ioc::PERF_EVENT_IOC_SET_BPF,
            prog_fd as c_uint as c_ulong,
        )
    }
}

/// `PERF_EVENT_IOC_PAUSE_OUTPUT`: `1` stops writing to the ring buffer,
/// `0` resumes (since Linux 4.7).
///
/// # Safety
/// `fd` is a perf event fd.
#[inline]
pub unsafe fn pause_output(fd: c_int, pause: c_uint) -> c_int {
    // SAFETY: an integer argument.
    unsafe { ioctl(fd, ioc::PERF_EVENT_IOC_PAUSE_OUTPUT, pause as c_ulong) }
}

/// `PERF_EVENT_IOC_QUERY_BPF`: the kernel reads `ids_len`, then writes
/// `prog_cnt` and up to `ids_len` program ids after the header (since
/// Linux 4.16).
///
/// # Safety
/// `fd` is a perf event fd; `query` points to a writable
/// `perf_event_query_bpf` followed by room for `ids_len` `u32`s.
#[inline]
pub unsafe fn query_bpf(fd: c_int, query: *mut sys::perf_event_query_bpf) -> c_int {
    // SAFETY: the caller's contract covers the header and the ids after it.
    unsafe { ioctl(fd, ioc::PERF_EVENT_IOC_QUERY_BPF, query as c_ulong) }
}

/// `PERF_EVENT_IOC_MODIFY_ATTRIBUTES`: change a breakpoint event's address,
/// length or type from a new attr (since Linux 4.17). Like
/// `perf_event_open`, the kernel reads `(*attr).size` bytes and writes its
/// own size back on `E2BIG`.
///
/// # Safety
/// `fd` is a perf event fd; `attr` points to a writable `perf_event_attr`
/// at least `max((*attr).size, 64)` bytes long.
#[inline]
pub unsafe fn modify_attributes(fd: c_int, attr: *mut sys::perf_event_attr) -> c_int {
    // SAFETY: the caller's contract covers the attr memory.
    unsafe { ioctl(fd, ioc::PERF_EVENT_IOC_MODIFY_ATTRIBUTES, attr as c_ulong) }
}
