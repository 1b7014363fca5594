//! `setrlimit(2)`: raising `RLIMIT_NOFILE` (every perf event fd counts
//! against it) toward its hard limit. Reading is [`system::getrlimit`].
//!
//! [`system::getrlimit`]: super::system::getrlimit

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::system::{Limit, Resource};
use crate::linux::errno::Errno;

/// `setrlimit(resource, limit)`; `None` is `RLIM_INFINITY`. EPERM when
/// raising the hard limit without CAP_SYS_RESOURCE, EINVAL when soft > hard
/// or (RLIMIT_NOFILE) above `fs.nr_open`.
pub fn setrlimit(resource: Resource, limit: Limit) -> Result<(), Errno> {
    let which = match resource {
        Resource::OpenFiles => libc::RLIMIT_NOFILE,
        Resource::LockedMemory => libc::RLIMIT_MEMLOCK,
    };
    let value = |v: Option<u64>| v.map_or(libc::RLIM_INFINITY, |v| v as libc::rlim_t);
    let lim = libc::rlimit {
        rlim_cur: value(limit.soft),
        rlim_max: value(limit.hard),
    };
    // SAFETY: `lim` is a valid rlimit, only read by the call.
    if unsafe { libc::setrlimit(which, &lim) } != 0 {
        return Err(Errno::last());
    }
    Ok(())
}
