//! `read(2)` and `close(2)` on raw fds (`unsafe fn`: the caller keeps the
//! number open), [`Fd`] (an owned fd of any other kind: a pipe end, a
//! pidfd, a FIFO), `poll(2)` on borrowed ones ([`PollFd`]), and the calls
//! of perf's control channel: [`mkfifo`], [`open_fifo`] and the two
//! duplicates of an fd handed across `exec` ([`dup_inherited`], and
//! `dup_inheritable` with feature `std`).

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::fd::EventFd;
use super::types::c_int;
use crate::linux::errno::Errno;
use core::marker::PhantomData;

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

/// An owned fd that is not a perf event (a pipe end, a pidfd: see
/// `linux::process`), closed on drop, with or without std. Perf events
/// have their own, [`EventFd`]. With feature `std` it is `AsFd`,
/// `AsRawFd` and converts into `OwnedFd`.
#[derive(Debug)]
pub struct Fd {
    fd: c_int,
}

impl Fd {
    /// Takes ownership of `fd`.
    ///
    /// # Safety
    ///
    /// `fd` must be open, and nothing else may close it or use the number
    /// after this value is dropped.
    #[inline]
    pub unsafe fn from_raw(fd: c_int) -> Fd {
        Fd { fd }
    }

    /// The fd number, borrowed: valid while `self` lives.
    #[inline]
    pub fn raw(&self) -> c_int {
        self.fd
    }

    /// Gives up ownership: the caller closes the returned number.
    #[inline]
    pub fn into_raw(self) -> c_int {
        let fd = self.fd;
        core::mem::forget(self);
        fd
    }
}

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: `self` owns the fd, and it is not used after this.
        unsafe { close(self.fd) };
    }
}

#[cfg(feature = "std")]
impl std::os::fd::AsRawFd for Fd {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.fd
    }
}

#[cfg(feature = "std")]
impl std::os::fd::AsFd for Fd {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        // SAFETY: the fd is open for as long as `self` is borrowed.
        unsafe { std::os::fd::BorrowedFd::borrow_raw(self.fd) }
    }
}

#[cfg(feature = "std")]
impl From<Fd> for std::os::fd::OwnedFd {
    fn from(fd: Fd) -> std::os::fd::OwnedFd {
        use std::os::fd::FromRawFd;
        // SAFETY: `into_raw` gives up the only owner of an open fd.
        unsafe { std::os::fd::OwnedFd::from_raw_fd(fd.into_raw()) }
    }
}

/// One entry of a [`poll`] set: `struct pollfd` (same layout), holding a
/// borrow of its fd for `'fd`, so that the number polled is open for as
/// long as the entry exists.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct PollFd<'fd> {
    raw: libc::pollfd,
    fd: PhantomData<&'fd ()>,
}

impl<'fd> PollFd<'fd> {
    /// Asks for `events` on the perf event `fd` (`POLLIN`: the ring reached
    /// its wakeup_events / wakeup_watermark; `POLLHUP`: the monitored task
    /// exited, since Linux 4.7), with `revents` cleared.
    #[inline]
    pub fn new(fd: &'fd EventFd, events: i16) -> Self {
        // SAFETY: `fd` is borrowed open for 'fd.
        unsafe { Self::from_raw(fd.raw(), events) }
    }

    /// Asks for `events` on any fd borrowed for `'fd` (a pidfd, a pipe, ...),
    /// with `revents` cleared.
    #[cfg(feature = "std")]
    #[inline]
    pub fn from_fd(fd: std::os::fd::BorrowedFd<'fd>, events: i16) -> Self {
        use std::os::fd::AsRawFd;
        // SAFETY: `fd` is borrowed open for 'fd.
        unsafe { Self::from_raw(fd.as_raw_fd(), events) }
    }

    /// Asks for `events` on fd number `fd`, with `revents` cleared.
    ///
    /// # Safety
    ///
    /// `fd` must stay open (not closed, its number not reused) for `'fd`,
    /// or be negative (poll(2) ignores such an entry); otherwise the poll
    /// reports, and waits for, another file.
    #[inline]
    pub const unsafe fn from_raw(fd: c_int, events: i16) -> Self {
        PollFd {
            raw: libc::pollfd {
                fd,
                events,
                revents: 0,
            },
            fd: PhantomData,
        }
    }

    /// The events the kernel reported by the last [`poll`] (0 before one).
    #[inline]
    pub fn revents(&self) -> i16 {
        self.raw.revents
    }
}

/// `POLLIN`: there is data to read (for a perf fd: the ring reached its
/// wakeup_events / wakeup_watermark).
pub const POLLIN: i16 = libc::POLLIN;
/// `POLLHUP`: the monitored task exited (perf fds since Linux 4.7 for
/// per-task events) or the fd hung up.
pub const POLLHUP: i16 = libc::POLLHUP;
/// `POLLERR`: an error condition.
pub const POLLERR: i16 = libc::POLLERR;

/// `poll(fds, fds.len(), timeout_ms)` (-1: wait forever; 0: do not wait):
/// how many entries have `revents` set, or the errno (`EINTR` when a
/// signal arrived first).
pub fn poll(fds: &mut [PollFd<'_>], timeout_ms: c_int) -> Result<usize, Errno> {
    // SAFETY: `fds` is a valid, writable array of pollfd of this length
    // (PollFd is a transparent pollfd); each fd is borrowed open.
    let n = unsafe {
        libc::poll(
            fds.as_mut_ptr().cast::<libc::pollfd>(),
            fds.len() as libc::nfds_t,
            timeout_ms,
        )
    };
    if n < 0 {
        Err(Errno::last())
    } else {
        Ok(n as usize)
    }
}

/// `mkfifo(path, mode)` (mode before the umask): a named pipe, as perf's
/// control users make them for `--control fifo:CTL,ACK`. `EEXIST` if
/// `path` exists.
pub fn mkfifo(path: &core::ffi::CStr, mode: u32) -> Result<(), Errno> {
    // SAFETY: `path` is a NUL-terminated string, read for the call only.
    if unsafe { libc::mkfifo(path.as_ptr(), mode as libc::mode_t) } != 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// Opens the FIFO at `path` as perf opens its control FIFOs:
/// `O_RDWR | O_NONBLOCK | O_CLOEXEC`. Read-write, so the open never waits
/// for the other end and the FIFO never hangs up while this fd is open;
/// non-blocking, so a read with nothing buffered fails with `EAGAIN`.
pub fn open_fifo(path: &core::ffi::CStr) -> Result<Fd, Errno> {
    // SAFETY: `path` is a NUL-terminated string, read for the call only.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(Errno::last());
    }
    // SAFETY: a new fd, owned by nobody else.
    Ok(unsafe { Fd::from_raw(fd) })
}

/// A close-on-exec duplicate (`fcntl(F_DUPFD_CLOEXEC)`) of fd number `fd`,
/// one this process inherited and was told about (`perf stat --control
/// fd:CTL,ACK`, an environment variable such as `PERF_CTL_FD`). `fd`
/// itself stays open and untouched; the duplicate shares its file (and
/// its offset and `O_NONBLOCK` flag). `EBADF` when no such fd is open.
pub fn dup_inherited(fd: c_int) -> Result<Fd, Errno> {
    // SAFETY: F_DUPFD_CLOEXEC reads no memory; on a number that is not
    // open it fails with EBADF, and it never closes or changes `fd`.
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if dup < 0 {
        return Err(Errno::last());
    }
    // SAFETY: a new fd, owned by nobody else.
    Ok(unsafe { Fd::from_raw(dup) })
}

/// A duplicate of `fd` that is *not* close-on-exec (`fcntl(F_DUPFD)`): a
/// child started while it is open inherits it under its number (to be
/// named on the child's command line, `--control fd:N,M`). Drop it once
/// the child has started: every process started meanwhile, by any thread,
/// inherits it too.
#[cfg(feature = "std")]
pub fn dup_inheritable(fd: std::os::fd::BorrowedFd<'_>) -> Result<Fd, Errno> {
    use std::os::fd::AsRawFd;
    // SAFETY: `fd` is borrowed open; F_DUPFD reads no memory.
    let dup = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD, 0) };
    if dup < 0 {
        return Err(Errno::last());
    }
    // SAFETY: a new fd, owned by nobody else.
    Ok(unsafe { Fd::from_raw(dup) })
}
