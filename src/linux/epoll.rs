//! epoll(7): one wait over many perf fds (a perf fd reports EPOLLIN when
//! its ring passed `wakeup_events` / `wakeup_watermark`, EPOLLHUP when the
//! task it measures has exited, since Linux 2.6.31).

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::fd::EventFd;
use super::types::c_int;
use crate::linux::errno::Errno;

/// Readable (`EPOLLIN`).
pub const IN: u32 = libc::EPOLLIN as u32;
/// Hang-up (`EPOLLHUP`): for a perf fd, the measured task exited.
pub const HUP: u32 = libc::EPOLLHUP as u32;
/// Error condition (`EPOLLERR`).
pub const ERR: u32 = libc::EPOLLERR as u32;

/// One ready fd as `epoll_wait(2)` reports it: the event bits and the
/// caller's 64-bit token given to [`add`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ready {
    /// `EPOLLIN` / `EPOLLHUP` / `EPOLLERR` bits.
    pub events: u32,
    /// The token given when the fd was added.
    pub token: u64,
}

/// An epoll instance (closed on drop).
#[derive(Debug)]
pub struct Epoll {
    fd: c_int,
}

impl Epoll {
    /// The raw fd.
    pub fn raw(&self) -> c_int {
        self.fd
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        // SAFETY: closing the fd this value owns, once.
        unsafe { super::io::close(self.fd) };
    }
}

#[cfg(feature = "std")]
impl std::os::fd::AsFd for Epoll {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        // SAFETY: the fd is open for as long as `self` lives.
        unsafe { std::os::fd::BorrowedFd::borrow_raw(self.fd) }
    }
}

/// `epoll_create1(EPOLL_CLOEXEC)`: a new epoll instance.
pub fn create() -> Result<Epoll, Errno> {
    // SAFETY: epoll_create1 takes only flags.
    let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if fd < 0 {
        Err(Errno::last())
    } else {
        Ok(Epoll { fd })
    }
}

/// `epoll_ctl(EPOLL_CTL_ADD)`: watch the perf event `fd` for `events`,
/// reporting `token` (since Linux 2.6.31 for perf fds). The kernel drops
/// the watch by itself when the event's last fd closes.
pub fn add(ep: &Epoll, fd: &EventFd, events: u32, token: u64) -> Result<(), Errno> {
    let mut ev = libc::epoll_event { events, u64: token };
    // SAFETY: a valid epoll_event for the duration of the call; `fd` is
    // borrowed open.
    let r = unsafe { libc::epoll_ctl(ep.fd, libc::EPOLL_CTL_ADD, fd.raw(), &mut ev) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// `epoll_ctl(EPOLL_CTL_DEL)`: stop watching the perf event `fd`.
pub fn remove(ep: &Epoll, fd: &EventFd) -> Result<(), Errno> {
    let mut ev = libc::epoll_event { events: 0, u64: 0 };
    // SAFETY: a valid (ignored since 2.6.9) epoll_event pointer; `fd` is
    // borrowed open.
    let r = unsafe { libc::epoll_ctl(ep.fd, libc::EPOLL_CTL_DEL, fd.raw(), &mut ev) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// `epoll_wait(2)`: waits up to `timeout_ms` (-1: forever, 0: poll) and
/// fills `out` with up to `out.len()` ready fds; returns how many. EINTR is
/// returned as an error for the caller to retry.
pub fn wait(ep: &Epoll, out: &mut [Ready], timeout_ms: i32) -> Result<usize, Errno> {
    const CHUNK: usize = 64;
    let mut raw = [libc::epoll_event { events: 0, u64: 0 }; CHUNK];
    let max = out.len().min(CHUNK) as c_int;
    if max == 0 {
        return Ok(0);
    }
    // SAFETY: `raw` holds at least `max` epoll_events.
    let n = unsafe { libc::epoll_wait(ep.fd, raw.as_mut_ptr(), max, timeout_ms) };
    if n < 0 {
        return Err(Errno::last());
    }
    let n = n as usize;
    for (o, r) in out.iter_mut().zip(&raw[..n]) {
        // Copies out of the (on x86-64 packed) kernel struct.
        let (events, token) = (r.events, r.u64);
        *o = Ready { events, token };
    }
    Ok(n)
}
