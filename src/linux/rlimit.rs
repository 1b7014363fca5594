//! `getrlimit(2)` / `setrlimit(2)` for `RLIMIT_NOFILE`, the limit on open
//! file descriptors every perf event fd counts against.

use crate::errno::Errno;

/// A resource limit: the soft limit the kernel enforces and the hard
/// ceiling an unprivileged process may raise it to (`RLIM_INFINITY` is
/// `u64::MAX`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// `rlim_cur`: what `open` checks (EMFILE beyond it).
    pub soft: u64,
    /// `rlim_max`: how far the soft limit may be raised without
    /// CAP_SYS_RESOURCE.
    pub hard: u64,
}

/// `RLIM_INFINITY` as a `u64` (no limit).
// rlim_t is 32 bits on some 32-bit targets: the cast is not always a no-op.
#[allow(clippy::unnecessary_cast)]
pub const INFINITY: u64 = libc::RLIM_INFINITY as u64;

/// `getrlimit(RLIMIT_NOFILE)`.
pub fn open_files() -> Result<Limit, Errno> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit for the call's duration.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(Errno::last());
    }
    #[allow(clippy::unnecessary_cast)] // rlim_t is u32 on some 32-bit targets
    Ok(Limit {
        soft: lim.rlim_cur as u64,
        hard: lim.rlim_max as u64,
    })
}

/// `setrlimit(RLIMIT_NOFILE)`: EPERM when raising `hard` without
/// CAP_SYS_RESOURCE, EINVAL when `soft > hard` or above `fs.nr_open`.
pub fn set_open_files(limit: Limit) -> Result<(), Errno> {
    let lim = libc::rlimit {
        rlim_cur: limit.soft as libc::rlim_t,
        rlim_max: limit.hard as libc::rlim_t,
    };
    // SAFETY: `lim` is a valid rlimit read by the call.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
        return Err(Errno::last());
    }
    Ok(())
}
