//! `read(2)`, `close(2)` and `poll(2)` on raw fds.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::types::c_int;
use crate::linux::errno::Errno;

/// `read(fd, buf, buf.len())`: the number of bytes read (0 at end of
/// file), or the errno. Safe code reads a perf event through
/// [`EventFd::read`](super::fd::EventFd::read).
///
/// # Safety
///
/// `fd` must be open for the duration of the call, owned or borrowed by
/// the caller (I/O safety: a number that something else has closed and
/// reused reads, and consumes, that other file's data). Whatever `fd` is,
/// no memory outside `buf` is written.
#[inline(always)]
pub unsafe fn read(fd: c_int, buf: &mut [u8]) -> Result<usize, Errno> {
    // SAFETY: `buf` is writable for its whole length; the caller's
    // contract for `fd`.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(Errno::last())
    } else {
        Ok(n as usize)
    }
}

/// `close(fd)`. Errors are not reported: Linux frees the fd even when
/// close fails (close(2), "Dealing with error returns").
///
/// # Safety
///
/// The caller owns `fd` and nothing uses the number afterwards (it may be
/// reused at once by another open).
#[inline]
pub unsafe fn close(fd: c_int) {
    // SAFETY: the caller owns `fd` and gives it up.
    unsafe { libc::close(fd) };
}

/// One entry of a [`poll`] set: `struct pollfd`.
pub type PollFd = libc::pollfd;

/// `POLLIN`: there is data to read (for a perf fd: the ring reached its
/// wakeup_events / wakeup_watermark).
pub const POLLIN: i16 = libc::POLLIN;
/// `POLLHUP`: the monitored task exited (perf fds since Linux 4.7 for
/// per-task events) or the fd hung up.
pub const POLLHUP: i16 = libc::POLLHUP;
/// `POLLERR`: an error condition.
pub const POLLERR: i16 = libc::POLLERR;

/// A [`PollFd`] asking for `events` on `fd`, with `revents` cleared.
#[inline]
pub const fn poll_fd(fd: c_int, events: i16) -> PollFd {
    PollFd {
        fd,
        events,
        revents: 0,
    }
}

/// `poll(fds, fds.len(), timeout_ms)` (-1: wait forever; 0: do not wait):
/// how many entries have `revents` set, or the errno (`EINTR` when a
/// signal arrived first).
pub fn poll(fds: &mut [PollFd], timeout_ms: c_int) -> Result<usize, Errno> {
    // SAFETY: `fds` is a valid, writable array of pollfd of this length.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
    if n < 0 {
        Err(Errno::last())
    } else {
        Ok(n as usize)
    }
}
