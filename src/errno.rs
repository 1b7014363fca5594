//! An errno value with its name, for error messages without std.

use core::fmt;

/// A raw `errno` from a failed system call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Errno(pub i32);

impl Errno {
    /// The calling thread's current `errno`.
    pub fn last() -> Errno {
        // SAFETY: __errno_location returns this thread's errno slot, valid
        // for the thread's lifetime.
        Errno(unsafe { *libc::__errno_location() })
    }

    /// The symbolic name (`EINVAL`), or `None` for values not listed here.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            libc::E2BIG => "E2BIG",
            libc::EACCES => "EACCES",
            libc::EAGAIN => "EAGAIN",
            libc::EBADF => "EBADF",
            libc::EBUSY => "EBUSY",
            libc::EFAULT => "EFAULT",
            libc::EINTR => "EINTR",
            libc::EINVAL => "EINVAL",
            libc::EMFILE => "EMFILE",
            libc::ENFILE => "ENFILE",
            libc::ENODEV => "ENODEV",
            libc::ENOENT => "ENOENT",
            libc::ENOMEM => "ENOMEM",
            libc::ENOSPC => "ENOSPC",
            libc::ENOSYS => "ENOSYS",
            libc::ENOTTY => "ENOTTY",
            libc::EOPNOTSUPP => "EOPNOTSUPP",
            libc::EOVERFLOW => "EOVERFLOW",
            libc::EPERM => "EPERM",
            libc::ESRCH => "ESRCH",
            libc::ENOBUFS => "ENOBUFS",
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
