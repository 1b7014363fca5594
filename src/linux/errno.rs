//! The errno values this crate names, the one reader of the calling
//! thread's `errno`, and [`Errno`], the value every error of the crate
//! carries (with its name, for messages without std).

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::types::c_int;
use core::fmt;

pub use libc::{
    E2BIG, EACCES, EAGAIN, EBADF, EBUSY, ECHILD, EFAULT, EINTR, EINVAL, EMFILE, ENFILE, ENOBUFS,
    ENODEV, ENOENT, ENOMEM, ENOSPC, ENOSYS, ENOTTY, ENXIO, EOPNOTSUPP, EOVERFLOW, EPERM, ESRCH,
};

/// The calling thread's `errno`: read right after a call that returned
/// its failure value (`-1`, `MAP_FAILED`), before any other call.
#[inline]
pub fn last() -> c_int {
    // SAFETY: on Linux C libraries (glibc, musl, bionic) __errno_location
    // returns the calling thread's errno slot, valid for the thread's
    // lifetime and only written by this thread.
    unsafe { *libc::__errno_location() }
}

/// A raw `errno` from a failed system call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Errno(pub i32);

impl Errno {
    /// The calling thread's current `errno`.
    pub fn last() -> Errno {
        Errno(last())
    }

    /// The symbolic name (`EINVAL`), or `None` for values not listed here.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            E2BIG => "E2BIG",
            EACCES => "EACCES",
            EAGAIN => "EAGAIN",
            EBADF => "EBADF",
            EBUSY => "EBUSY",
            ECHILD => "ECHILD",
            EFAULT => "EFAULT",
            EINTR => "EINTR",
            EINVAL => "EINVAL",
            EMFILE => "EMFILE",
            ENFILE => "ENFILE",
            ENODEV => "ENODEV",
            ENOENT => "ENOENT",
            ENOMEM => "ENOMEM",
            ENOSPC => "ENOSPC",
            ENOSYS => "ENOSYS",
            ENOTTY => "ENOTTY",
            ENXIO => "ENXIO",
            EOPNOTSUPP => "EOPNOTSUPP",
            EOVERFLOW => "EOVERFLOW",
            EPERM => "EPERM",
            ESRCH => "ESRCH",
            ENOBUFS => "ENOBUFS",
            _ => return None,
        })
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} ({})", self.0),
            None => write!(f, "errno {}", self.0),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Errno {}

#[cfg(feature = "std")]
impl From<Errno> for std::io::Error {
    fn from(e: Errno) -> std::io::Error {
        std::io::Error::from_raw_os_error(e.0)
    }
}
