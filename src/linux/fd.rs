//! [`PerfFd`]: an owned perf event fd, closed on drop (with or without
//! std), with every ioctl as a safe method taking the kernel's argument
//! type by reference. The raw, `c_int`-fd forms are in [`super::ioctl`].

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::errno::EINVAL;
use super::fields::ATTR_SIZE;
use super::types::{c_int, c_uint};
use super::{io, ioctl};
use crate::linux::errno::Errno;
use crate::sys;
use core::ffi::CStr;

/// An open perf event fd owned by its holder: closed exactly once, on drop.
///
/// Every method returns the kernel's non-negative result, or the errno.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct PerfFd {
    fd: c_int,
}

fn check(r: c_int) -> Result<c_int, Errno> {
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(r)
    }
}

/// `perf_event_open(attr, pid, cpu, group_fd, flags)` returning an owned
/// fd: the raw [`perf_event_open`](super::perf_event_open) with the
/// memory rule checked instead of promised. `attr.size` and `flags` go to
/// the kernel untouched (E2BIG writes the kernel's size back into
/// `attr.size`); only a size larger than this `perf_event_attr` is refused
/// here with `EINVAL`, as the kernel would read past the struct (use the
/// unsafe raw call with a larger buffer for that).
pub fn open(
    attr: &mut sys::perf_event_attr,
    pid: super::types::pid_t,
    cpu: c_int,
    group_fd: c_int,
    flags: u64,
) -> Result<PerfFd, Errno> {
    if attr.size as usize > ATTR_SIZE {
        return Err(Errno(EINVAL));
    }
    // SAFETY: `attr` is a writable perf_event_attr and the kernel reads at
    // most `max(attr.size, 64)` <= ATTR_SIZE bytes of it.
    let fd = unsafe { super::perf_event_open(attr, pid, cpu, group_fd, flags as _) };
    let fd = check(fd)?;
    // SAFETY: the kernel just returned this perf event fd; nothing else owns it.
    Ok(unsafe { PerfFd::from_raw(fd) })
}

impl PerfFd {
    /// Takes ownership of `fd`.
    ///
    /// # Safety
    ///
    /// `fd` must be an open perf event fd (the ioctl methods send perf
    /// request numbers to it), and nothing else may close it or use the
    /// number after this value is dropped.
    #[inline]
    pub unsafe fn from_raw(fd: c_int) -> PerfFd {
        PerfFd { fd }
    }

    /// The fd number (still owned here).
    #[inline]
    pub fn raw(&self) -> c_int {
        self.fd
    }

    /// A second fd for the same event (`fcntl(F_DUPFD_CLOEXEC)`): mapping,
    /// polling and every ioctl through it act on the same event.
    pub fn try_clone(&self) -> Result<PerfFd, crate::linux::errno::Errno> {
        // SAFETY: F_DUPFD_CLOEXEC on an fd this value owns; no pointers.
        let fd = unsafe { libc::fcntl(self.fd, libc::F_DUPFD_CLOEXEC, 0) };
        if fd < 0 {
            Err(crate::linux::errno::Errno::last())
        } else {
            Ok(PerfFd { fd })
        }
    }

    /// Gives up ownership: the caller closes the returned fd.
    #[inline]
    pub fn into_raw(self) -> c_int {
        let fd = self.fd;
        core::mem::forget(self);
        fd
    }

    /// `PERF_EVENT_IOC_ENABLE` with `flags` (0 or `PERF_IOC_FLAG_GROUP`).
    #[inline]
    pub fn enable(&self, flags: c_uint) -> Result<c_int, Errno> {
        // SAFETY: a perf event fd (type invariant), an integer argument.
        check(unsafe { ioctl::enable(self.fd, flags) })
    }

    /// `PERF_EVENT_IOC_DISABLE` with `flags` (0 or `PERF_IOC_FLAG_GROUP`).
    #[inline]
    pub fn disable(&self, flags: c_uint) -> Result<c_int, Errno> {
        // SAFETY: a perf event fd (type invariant), an integer argument.
        check(unsafe { ioctl::disable(self.fd, flags) })
    }

    /// `PERF_EVENT_IOC_RESET` with `flags` (0 or `PERF_IOC_FLAG_GROUP`).
    #[inline]
    pub fn reset(&self, flags: c_uint) -> Result<c_int, Errno> {
        // SAFETY: a perf event fd (type invariant), an integer argument.
        check(unsafe { ioctl::reset(self.fd, flags) })
    }

    /// `PERF_EVENT_IOC_REFRESH`: `overflows` more overflows, then disable.
    #[inline]
    pub fn refresh(&self, overflows: c_int) -> Result<c_int, Errno> {
        // SAFETY: a perf event fd (type invariant), an integer argument.
        check(unsafe { ioctl::refresh(self.fd, overflows) })
    }

    /// `PERF_EVENT_IOC_PERIOD`: the kernel reads the new period from `*period`.
    #[inline]
    pub fn period(&self, period: &u64) -> Result<c_int, Errno> {
        // SAFETY: a perf event fd; `period` is a live, readable u64.
        check(unsafe { ioctl::period(self.fd, period) })
    }

    /// `PERF_EVENT_IOC_SET_OUTPUT` to fd `target` (-1: stop redirecting).
    #[inline]
    pub fn set_output(&self, target: c_int) -> Result<c_int, Errno> {
        // SAFETY: a perf event fd; an integer argument the kernel checks.
        check(unsafe { ioctl::set_output(self.fd, target) })
    }

    /// `PERF_EVENT_IOC_SET_FILTER` with a NUL-terminated filter.
    #[inline]
    pub fn set_filter(&self, filter: &CStr) -> Result<c_int, Errno> {
        // SAFETY: a perf event fd; `filter` is NUL-terminated.
        check(unsafe { ioctl::set_filter(self.fd, filter.as_ptr()) })
    }

    /// `PERF_EVENT_IOC_ID`: the event id the kernel writes.
    #[inline]
    pub fn id(&self) -> Result<u64, Errno> {
        let mut id = 0u64;
        // SAFETY: a perf event fd; `id` is a live, writable u64.
        check(unsafe { ioctl::id(self.fd, &mut id) })?;
        Ok(id)
    }

    /// `PERF_EVENT_IOC_SET_BPF` with program fd `prog_fd`.
    #[inline]
    pub fn set_bpf(&self, prog_fd: c_int) -> Result<c_int, Errno> {
        // SAFETY: a perf event fd; an integer argument the kernel checks.
        check(unsafe { ioctl::set_bpf(self.fd, prog_fd) })
    }

    /// `PERF_EVENT_IOC_PAUSE_OUTPUT`: 1 pauses, 0 resumes.
    #[inline]
    pub fn pause_output(&self, pause: c_uint) -> Result<c_int, Errno> {
        // SAFETY: a perf event fd, an integer argument.
        check(unsafe { ioctl::pause_output(self.fd, pause) })
    }

    /// `PERF_EVENT_IOC_QUERY_BPF` on `struct perf_event_query_bpf` laid out
    /// in `buf`: `buf[0]` is `ids_len` (set by the caller, at most
    /// `buf.len() - 2`, else `EINVAL` here), the kernel writes `prog_cnt`
    /// to `buf[1]` and the ids from `buf[2]` on.
    pub fn query_bpf(&self, buf: &mut [u32]) -> Result<c_int, Errno> {
        if buf.len() < 2 || buf[0] as usize > buf.len() - 2 {
            return Err(Errno(EINVAL));
        }
        // SAFETY: a perf event fd; `buf` is writable and holds the header
        // plus `ids_len` ids (checked above), aligned for u32 like the struct.
        check(unsafe { ioctl::query_bpf(self.fd, buf.as_mut_ptr().cast()) })
    }

    /// `PERF_EVENT_IOC_MODIFY_ATTRIBUTES` with `attr` (the kernel writes its
    /// size back into `attr.size` on E2BIG). A size larger than this struct
    /// is refused here with `EINVAL`, as in [`open`].
    pub fn modify_attributes(&self, attr: &mut sys::perf_event_attr) -> Result<c_int, Errno> {
        if attr.size as usize > ATTR_SIZE {
            return Err(Errno(EINVAL));
        }
        // SAFETY: a perf event fd; `attr` is writable and the kernel reads at
        // most ATTR_SIZE bytes of it.
        check(unsafe { ioctl::modify_attributes(self.fd, attr) })
    }

    /// `read(2)` into `buf`: the bytes read (0: end of file).
    #[inline(always)]
    pub fn read(&self, buf: &mut [u8]) -> Result<usize, Errno> {
        io::read(self.fd, buf)
    }
}

impl Drop for PerfFd {
    fn drop(&mut self) {
        // SAFETY: the fd is owned by this value and closed exactly once.
        unsafe { io::close(self.fd) };
    }
}

#[cfg(feature = "std")]
mod std_traits {
    use super::PerfFd;
    use std::os::fd::{self, AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, RawFd};

    impl AsRawFd for PerfFd {
        fn as_raw_fd(&self) -> RawFd {
            self.fd
        }
    }

    impl AsFd for PerfFd {
        fn as_fd(&self) -> BorrowedFd<'_> {
            // SAFETY: the fd is open for as long as `self` lives.
            unsafe { BorrowedFd::borrow_raw(self.fd) }
        }
    }

    impl IntoRawFd for PerfFd {
        fn into_raw_fd(self) -> RawFd {
            self.into_raw()
        }
    }

    impl FromRawFd for PerfFd {
        /// # Safety
        /// As [`PerfFd::from_raw`]: an owned perf event fd.
        unsafe fn from_raw_fd(fd: RawFd) -> PerfFd {
            // SAFETY: the caller's contract.
            unsafe { PerfFd::from_raw(fd) }
        }
    }

    impl From<PerfFd> for fd::OwnedFd {
        fn from(fd: PerfFd) -> fd::OwnedFd {
            // SAFETY: ownership moves from ours to std's.
            unsafe { fd::OwnedFd::from_raw_fd(fd.into_raw()) }
        }
    }
}
