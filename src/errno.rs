//! An errno value with its name, for error messages without std.

use crate::linux::errno as e;
use core::fmt;

/// A raw `errno` from a failed system call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Errno(pub i32);

impl Errno {
    /// The calling thread's current `errno`.
    pub fn last() -> Errno {
        Errno(crate::linux::errno::last())
    }

    /// The symbolic name (`EINVAL`), or `None` for values not listed here.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            e::E2BIG => "E2BIG",
            e::EACCES => "EACCES",
            e::EAGAIN => "EAGAIN",
            e::EBADF => "EBADF",
            e::EBUSY => "EBUSY",
            e::EFAULT => "EFAULT",
            e::EINTR => "EINTR",
            e::EINVAL => "EINVAL",
            e::EMFILE => "EMFILE",
            e::ENFILE => "ENFILE",
            e::ENODEV => "ENODEV",
            e::ENOENT => "ENOENT",
            e::ENOMEM => "ENOMEM",
            e::ENOSPC => "ENOSPC",
            e::ENOSYS => "ENOSYS",
            e::ENOTTY => "ENOTTY",
            e::EOPNOTSUPP => "EOPNOTSUPP",
            e::EOVERFLOW => "EOVERFLOW",
            e::EPERM => "EPERM",
            e::ESRCH => "ESRCH",
            e::ENOBUFS => "ENOBUFS",
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
