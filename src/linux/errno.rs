//! The errno values this crate names, and the one reader of the calling
//! thread's `errno`. The typed wrapper is [`crate::errno::Errno`].

use super::types::c_int;

pub use libc::{
    E2BIG, EACCES, EAGAIN, EBADF, EBUSY, EFAULT, EINTR, EINVAL, EMFILE, ENFILE, ENOBUFS, ENODEV,
    ENOENT, ENOMEM, ENOSPC, ENOSYS, ENOTTY, EOPNOTSUPP, EOVERFLOW, EPERM, ESRCH,
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
