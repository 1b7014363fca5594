//! [`EventFd`]: the crate's one owned perf event fd, closed on drop (with or
//! without std), with every ioctl as a safe method; [`open`] returns it.
//! The raw, `c_int`-fd forms of the ioctls are in [`super::ioctl`].
//!
//! `EventFd` is defined here, at the OS boundary, so that every layer can
//! name it; the typed layer re-exports it as [`crate::fd::EventFd`] and adds
//! the methods that need its types ([`EventFd::read_format`],
//! [`EventFd::read_into`], [`EventFd::read_counts`],
//! [`EventFd::modify_attributes`]) in `src/fd.rs`.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::errno::EINVAL;
use super::fields::ATTR_SIZE;
use super::types::{c_int, c_uint};
use super::{io, ioctl};
use crate::linux::errno::Errno;
use crate::sys;
use core::ffi::CStr;

/// An open perf event: the fd, owned by its holder and closed exactly once
/// on drop, and the `read_format` its attr was opened with (what
/// `read(2)` on it returns, parsed by [`EventFd::read_into`]).
///
/// Made by [`open_raw`] (the kernel's `perf_event_open`, since Linux 2.6.31),
/// by the typed [`open::open`](crate::open::open), or from a raw fd with
/// [`EventFd::from_raw`].
/// Every ioctl method returns the errno the kernel set on failure.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct EventFd {
    fd: c_int,
    read_format: u64,
}

/// The result of `PERF_EVENT_IOC_QUERY_BPF` ([`EventFd::query_bpf`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BpfPrograms<'a> {
    /// How many programs are attached (may exceed `ids.len()`).
    pub attached: u32,
    /// The ids that fit in the caller's buffer.
    pub ids: &'a [u32],
}

#[inline]
fn check(r: c_int) -> Result<c_int, Errno> {
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(r)
    }
}

#[inline]
fn done(r: c_int) -> Result<(), Errno> {
    check(r).map(drop)
}

#[inline]
fn group_flag(group: bool) -> c_uint {
    if group {
        sys::PERF_IOC_FLAG_GROUP as c_uint
    } else {
        0
    }
}

/// `perf_event_open(attr, pid, cpu, group_fd, flags)` (since Linux 2.6.31)
/// returning an owned [`EventFd`] that remembers `attr.read_format`: the
/// raw [`perf_event_open`](super::perf_event_open) with the memory rule
/// checked instead of promised, and the group leader borrowed instead of
/// named by number (`None`: `group_fd` -1). `attr.size` and `flags` go to
/// the kernel untouched (E2BIG writes the kernel's size back into
/// `attr.size`); only a size larger than this `perf_event_attr` is refused
/// here with `EINVAL`, as the kernel would read past the struct (use the
/// unsafe raw call with a larger buffer for that).
pub fn open_raw(
    attr: &mut sys::perf_event_attr,
    pid: super::types::pid_t,
    cpu: c_int,
    group: Option<&EventFd>,
    flags: u64,
) -> Result<EventFd, Errno> {
    if attr.size as usize > ATTR_SIZE {
        return Err(Errno(EINVAL));
    }
    let group_fd = group.map_or(-1, EventFd::raw);
    // SAFETY: `attr` is a writable perf_event_attr and the kernel reads at
    // most `max(attr.size, 64)` <= ATTR_SIZE bytes of it; `group_fd` is -1
    // or an fd `group` keeps open for the call.
    let fd = unsafe { super::perf_event_open(attr, pid, cpu, group_fd, flags as _) };
    let fd = check(fd)?;
    // SAFETY: the kernel just returned this perf event fd; nothing else owns it.
    Ok(unsafe { EventFd::from_raw(fd, attr.read_format) })
}

impl EventFd {
    /// Takes ownership of `fd`, a perf event fd whose attr had
    /// `read_format` (how `read(2)` on it is parsed; a wrong value makes
    /// reads fail with a size or format error, nothing worse).
    ///
    /// # Safety
    ///
    /// `fd` must be an open perf event fd (the ioctl methods send perf
    /// request numbers to it, and the kernel writes through pointers some
    /// of them pass), and nothing else may close it or use the number
    /// after this value is dropped.
    #[inline]
    pub unsafe fn from_raw(fd: c_int, read_format: u64) -> EventFd {
        EventFd { fd, read_format }
    }

    /// The fd number (still owned here).
    #[inline]
    pub fn raw(&self) -> c_int {
        self.fd
    }

    /// The `read_format` bits given at open.
    #[inline]
    pub(crate) fn read_format_bits(&self) -> u64 {
        self.read_format
    }

    /// A second fd for the same event (`fcntl(F_DUPFD_CLOEXEC)`, the
    /// same `read_format`): mapping, polling, reading and every ioctl
    /// through it act on the same event.
    pub fn try_clone(&self) -> Result<EventFd, Errno> {
        // SAFETY: F_DUPFD_CLOEXEC on an fd this value owns; no pointers.
        let fd = unsafe { libc::fcntl(self.fd, libc::F_DUPFD_CLOEXEC, 0) };
        if fd < 0 {
            Err(Errno::last())
        } else {
            Ok(EventFd {
                fd,
                read_format: self.read_format,
            })
        }
    }

    /// Gives up ownership: the caller closes the returned fd.
    #[inline]
    pub fn into_raw(self) -> c_int {
        let fd = self.fd;
        core::mem::forget(self);
        fd
    }

    /// `PERF_EVENT_IOC_ENABLE` (since Linux 2.6.31); with `group`
    /// (`PERF_IOC_FLAG_GROUP`), the leader's whole group.
    #[inline]
    pub fn enable(&self, group: bool) -> Result<(), Errno> {
        // SAFETY: a perf event fd (type invariant), an integer argument.
        done(unsafe { ioctl::enable(self.fd, group_flag(group)) })
    }

    /// `PERF_EVENT_IOC_DISABLE` (since Linux 2.6.31); with `group`, the
    /// leader's whole group.
    #[inline]
    pub fn disable(&self, group: bool) -> Result<(), Errno> {
        // SAFETY: a perf event fd (type invariant), an integer argument.
        done(unsafe { ioctl::disable(self.fd, group_flag(group)) })
    }

    /// `PERF_EVENT_IOC_RESET` (since Linux 2.6.31): zero the count (not the
    /// times); with `group`, the leader's whole group.
    #[inline]
    pub fn reset(&self, group: bool) -> Result<(), Errno> {
        // SAFETY: a perf event fd (type invariant), an integer argument.
        done(unsafe { ioctl::reset(self.fd, group_flag(group)) })
    }

    /// `PERF_EVENT_IOC_REFRESH` (since Linux 2.6.31; 0 refused since 3.7):
    /// enable for `overflows` more overflows, then disable (a signal is
    /// sent on each overflow when the fd has O_ASYNC). Counts above
    /// `i32::MAX` are refused here with EINVAL (the kernel reads an int).
    #[inline]
    pub fn refresh(&self, overflows: u32) -> Result<(), Errno> {
        let n = c_int::try_from(overflows).map_err(|_| Errno(EINVAL))?;
        // SAFETY: a perf event fd (type invariant), an integer argument.
        done(unsafe { ioctl::refresh(self.fd, n) })
    }

    /// `PERF_EVENT_IOC_PERIOD`: the new sample period (or frequency), passed
    /// by pointer to a u64 as the kernel reads it (since Linux 2.6.36).
    #[inline]
    pub fn period(&self, period: u64) -> Result<(), Errno> {
        // SAFETY: a perf event fd; `period` is a live, readable u64.
        done(unsafe { ioctl::period(self.fd, &period) })
    }

    /// `PERF_EVENT_IOC_SET_OUTPUT` (since Linux 2.6.31): send this event's
    /// records to `target`'s ring buffer (same CPU / task rules apply), or
    /// stop with `None` (-1).
    #[inline]
    pub fn set_output(&self, target: Option<&EventFd>) -> Result<(), Errno> {
        let target = target.map_or(-1, EventFd::raw);
        // SAFETY: a perf event fd; an integer argument the kernel checks
        // (-1, or an fd `target` keeps open for the call).
        done(unsafe { ioctl::set_output(self.fd, target) })
    }

    /// `PERF_EVENT_IOC_SET_FILTER`: a tracepoint filter (ftrace syntax) or
    /// an address filter for AUX PMUs (since Linux 2.6.33).
    #[inline]
    pub fn set_filter(&self, filter: &CStr) -> Result<(), Errno> {
        // SAFETY: a perf event fd; `filter` is NUL-terminated.
        done(unsafe { ioctl::set_filter(self.fd, filter.as_ptr()) })
    }

    /// `PERF_EVENT_IOC_ID`: the event id the kernel writes, as in
    /// PERF_FORMAT_ID (since Linux 3.12).
    #[inline]
    pub fn id(&self) -> Result<u64, Errno> {
        let mut id = 0u64;
        // SAFETY: a perf event fd; `id` is a live, writable u64.
        check(unsafe { ioctl::id(self.fd, &mut id) })?;
        Ok(id)
    }

    /// `PERF_EVENT_IOC_SET_BPF`: attach the BPF program `prog_fd` to this
    /// tracepoint / kprobe / uprobe event (since Linux 4.1). The kernel
    /// checks that `prog_fd` is a BPF program (EBADF / EINVAL otherwise).
    #[inline]
    pub fn set_bpf(&self, prog_fd: c_int) -> Result<(), Errno> {
        // SAFETY: a perf event fd; an integer argument the kernel checks.
        done(unsafe { ioctl::set_bpf(self.fd, prog_fd) })
    }

    /// `PERF_EVENT_IOC_PAUSE_OUTPUT`: stop (true) or resume (false) writing
    /// to the ring buffer (since Linux 4.7).
    #[inline]
    pub fn pause_output(&self, pause: bool) -> Result<(), Errno> {
        // SAFETY: a perf event fd, an integer argument.
        done(unsafe { ioctl::pause_output(self.fd, pause as c_uint) })
    }

    /// `PERF_EVENT_IOC_QUERY_BPF`: the BPF programs attached to this event
    /// (since Linux 4.16). `buf` holds `struct perf_event_query_bpf`:
    /// `buf[0..2]` the kernel's header (`ids_len`, set here to
    /// `buf.len() - 2`, and `prog_cnt`); ids are written from `buf[2]` on.
    /// A buffer shorter than the header is refused with EINVAL.
    pub fn query_bpf<'a>(&self, buf: &'a mut [u32]) -> Result<BpfPrograms<'a>, Errno> {
        if buf.len() < 2 {
            return Err(Errno(EINVAL));
        }
        buf[0] = (buf.len() - 2) as u32;
        buf[1] = 0;
        // SAFETY: a perf event fd; `buf` is writable and holds the header
        // plus `ids_len` ids, aligned for u32 like the struct
        // ({ u32 ids_len; u32 prog_cnt; u32 ids[]; }).
        check(unsafe { ioctl::query_bpf(self.fd, buf.as_mut_ptr().cast()) })?;
        let attached = buf[1];
        let n = (attached as usize).min(buf.len() - 2);
        Ok(BpfPrograms {
            attached,
            ids: &buf[2..2 + n],
        })
    }

    /// `PERF_EVENT_IOC_MODIFY_ATTRIBUTES` with a raw attr: the typed
    /// `EventFd::modify_attributes` is built on it. A size larger than this
    /// struct is refused here with `EINVAL`, as in [`open`].
    pub(crate) fn modify_attributes_raw(
        &self,
        attr: &mut sys::perf_event_attr,
    ) -> Result<(), Errno> {
        if attr.size as usize > ATTR_SIZE {
            return Err(Errno(EINVAL));
        }
        // SAFETY: a perf event fd; `attr` is writable and the kernel reads at
        // most ATTR_SIZE bytes of it.
        done(unsafe { ioctl::modify_attributes(self.fd, attr) })
    }

    /// `read(2)` into `buf`: the bytes read (0: end of file, e.g. a pinned
    /// event in error state), unparsed; ENOSPC when `buf` is smaller than
    /// the event's read size. [`EventFd::read_into`] parses them.
    #[inline(always)]
    pub fn read(&self, buf: &mut [u8]) -> Result<usize, Errno> {
        // SAFETY: the fd is open for as long as `self` lives.
        unsafe { io::read(self.fd, buf) }
    }
}

impl Drop for EventFd {
    fn drop(&mut self) {
        // SAFETY: the fd is owned by this value and closed exactly once.
        unsafe { io::close(self.fd) };
    }
}

#[cfg(feature = "std")]
mod std_traits {
    use super::EventFd;
    use std::os::fd::{self, AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, RawFd};

    impl AsRawFd for EventFd {
        fn as_raw_fd(&self) -> RawFd {
            self.fd
        }
    }

    impl AsFd for EventFd {
        fn as_fd(&self) -> BorrowedFd<'_> {
            // SAFETY: the fd is open for as long as `self` lives.
            unsafe { BorrowedFd::borrow_raw(self.fd) }
        }
    }

    impl IntoRawFd for EventFd {
        fn into_raw_fd(self) -> RawFd {
            self.into_raw()
        }
    }

    impl From<EventFd> for fd::OwnedFd {
        fn from(fd: EventFd) -> fd::OwnedFd {
            // SAFETY: ownership moves from ours to std's.
            unsafe { fd::OwnedFd::from_raw_fd(fd.into_raw()) }
        }
    }
}
