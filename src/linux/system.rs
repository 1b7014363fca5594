//! The few facts about the system the crate asks the kernel for:
//! `uname(2)`, `getrlimit(2)`, `gettid(2)`, the perf sysctls of
//! `/proc/sys/kernel` (read without std or allocation), the online CPU
//! count, and the clock ids of `use_clockid`.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::types::{c_int, pid_t};
use crate::linux::errno::Errno;

/// The `release` field of `uname(2)` (`"6.18.0-1-amd64"`), up to its NUL.
#[derive(Clone, Copy)]
pub struct Release {
    bytes: [u8; 65],
    len: usize,
}

impl Release {
    /// The release string's bytes, without the NUL.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl core::fmt::Debug for Release {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("Release")
            .field(&core::str::from_utf8(self.as_bytes()).unwrap_or("<not UTF-8>"))
            .finish()
    }
}

/// The running kernel's release, from `uname(2)`.
pub fn kernel_release() -> Result<Release, Errno> {
    // SAFETY: utsname is plain C data; all-zero is a valid value.
    let mut uts: libc::utsname = unsafe { core::mem::zeroed() };
    // SAFETY: `uts` is a valid, writable utsname; uname fills it
    // (NUL-terminated strings) or fails without writing.
    if unsafe { libc::uname(&mut uts) } != 0 {
        return Err(Errno::last());
    }
    let mut bytes = [0u8; 65];
    let mut len = 0;
    for (dst, src) in bytes.iter_mut().zip(uts.release.iter()) {
        if *src == 0 {
            break;
        }
        *dst = *src as u8;
        len += 1;
    }
    Ok(Release { bytes, len })
}

/// A resource limit `getrlimit(2)` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Resource {
    /// `RLIMIT_NOFILE`: open fds (every perf event is one).
    OpenFiles,
    /// `RLIMIT_MEMLOCK`: locked memory beyond `perf_event_mlock_kb` that
    /// ring buffers may charge.
    LockedMemory,
}

/// A soft and hard limit; `None` is `RLIM_INFINITY`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// The soft limit, which the kernel enforces.
    pub soft: Option<u64>,
    /// The hard limit, the ceiling for raising the soft one.
    pub hard: Option<u64>,
}

/// The running kernel's version, parsed from `uname(2)`'s release (a
/// distribution suffix such as `-amd64` is ignored); `None` when the
/// release does not start with a version.
pub fn kernel_version() -> Option<crate::abi::KernelVersion> {
    let release = kernel_release().ok()?;
    crate::abi::KernelVersion::parse(release.as_bytes())
}

/// The system's `perf_event_paranoid` level
/// (`/proc/sys/kernel/perf_event_paranoid`, since Linux 2.6.31), or `None`
/// when the file is absent or unreadable. No allocation.
pub fn perf_event_paranoid() -> Option<crate::abi::Paranoid> {
    proc_sys_kernel(c"/proc/sys/kernel/perf_event_paranoid").map(|n| crate::abi::Paranoid(n as i32))
}

/// `kernel.perf_event_max_sample_rate` (since Linux 2.6.32): the highest
/// `sample_freq` the kernel accepts, or `None` when the file is absent or
/// unreadable.
pub fn perf_event_max_sample_rate() -> Option<u64> {
    proc_sys_kernel(c"/proc/sys/kernel/perf_event_max_sample_rate")
        .and_then(|n| u64::try_from(n).ok())
}

/// `kernel.perf_event_mlock_kb` (since Linux 2.6.32): KiB of ring buffer
/// per online CPU that each user may lock without CAP_IPC_LOCK, beyond
/// which rings are charged to `RLIMIT_MEMLOCK`; `None` when the file is
/// absent or unreadable.
pub fn perf_event_mlock_kb() -> Option<u64> {
    proc_sys_kernel(c"/proc/sys/kernel/perf_event_mlock_kb").and_then(|n| u64::try_from(n).ok())
}

/// The number of online CPUs, `sysconf(_SC_NPROCESSORS_ONLN)` (the
/// kernel's `num_online_cpus()`, which multiplies `perf_event_mlock_kb`);
/// `None` if the C library cannot tell.
pub fn online_cpus() -> Option<u32> {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    u32::try_from(n).ok().filter(|n| *n > 0)
}

/// The one number in a `/proc/sys` file (a sysctl), read with
/// open/read/close into a stack buffer: no std, no allocation.
fn proc_sys_kernel(path: &core::ffi::CStr) -> Option<i64> {
    // SAFETY: `path` is NUL-terminated; the flags ask for nothing unusual.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    let mut buf = [0u8; 32];
    // SAFETY: `buf` is writable for its length; `fd` was opened above.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    // SAFETY: `fd` was opened above and is closed once.
    unsafe { libc::close(fd) };
    let text = buf.get(..usize::try_from(n).ok()?)?;
    parse_sysctl_number(text)
}

/// A sysctl's text (`"2\n"`, `"-1\n"`) as a number.
fn parse_sysctl_number(text: &[u8]) -> Option<i64> {
    core::str::from_utf8(text).ok()?.trim().parse().ok()
}

/// `getrlimit(resource)` for the calling process.
pub fn getrlimit(resource: Resource) -> Result<Limit, Errno> {
    let which = match resource {
        Resource::OpenFiles => libc::RLIMIT_NOFILE,
        Resource::LockedMemory => libc::RLIMIT_MEMLOCK,
    };
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(which, &mut lim) } != 0 {
        return Err(Errno::last());
    }
    // rlim_t is 32 bits on some 32-bit C libraries.
    #[allow(clippy::unnecessary_cast)]
    let value = |v: libc::rlim_t| (v != libc::RLIM_INFINITY).then_some(v as u64);
    Ok(Limit {
        soft: value(lim.rlim_cur),
        hard: value(lim.rlim_max),
    })
}

/// The calling thread's id, `gettid(2)` (which `pid == 0` means in
/// `perf_event_open`).
#[inline]
pub fn gettid() -> pid_t {
    // SAFETY: gettid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as pid_t }
}

/// The clocks `use_clockid` accepts (kernel/events/core.c,
/// `perf_event_set_clock`, since Linux 4.1): `CLOCK_MONOTONIC`,
/// `CLOCK_MONOTONIC_RAW`, `CLOCK_REALTIME`, `CLOCK_BOOTTIME`, `CLOCK_TAI`.
pub const PERF_CLOCKS: [c_int; 5] = [
    CLOCK_MONOTONIC,
    CLOCK_MONOTONIC_RAW,
    CLOCK_REALTIME,
    CLOCK_BOOTTIME,
    CLOCK_TAI,
];

pub use libc::{CLOCK_BOOTTIME, CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, CLOCK_REALTIME, CLOCK_TAI};

/// `clock_gettime(2)`: the clock's time in nanoseconds.
pub fn clock_gettime_ns(clock: c_int) -> Result<u64, Errno> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return Err(Errno::last());
    }
    Ok((ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64))
}

/// `clock_getres(2)`: the clock's resolution in nanoseconds.
pub fn clock_getres_ns(clock: c_int) -> Result<u64, Errno> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    if unsafe { libc::clock_getres(clock, &mut ts) } != 0 {
        return Err(Errno::last());
    }
    Ok((ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64))
}

/// The CPUs a thread may run on, as a bit mask of the first 1024 CPU
/// numbers (bit `n % 64` of word `n / 64`: the kernel's `cpu_set_t`).
pub type CpuMask = [u64; 16];

/// The calling thread's CPU affinity (`sched_getaffinity(2)`, since Linux
/// 2.5.8).
pub fn thread_affinity() -> Result<CpuMask, Errno> {
    let mut mask: CpuMask = [0; 16];
    // SAFETY: the kernel writes at most the size given into the mask we own.
    let rc = unsafe {
        libc::sched_getaffinity(
            0,
            core::mem::size_of::<CpuMask>(),
            mask.as_mut_ptr().cast::<libc::cpu_set_t>(),
        )
    };
    if rc != 0 {
        return Err(Errno::last());
    }
    Ok(mask)
}

/// Restricts the calling thread to the CPUs of `mask`
/// (`sched_setaffinity(2)`, since Linux 2.5.8); EINVAL when none of them
/// is online.
pub fn set_thread_affinity(mask: &CpuMask) -> Result<(), Errno> {
    // SAFETY: the kernel reads the size given from the mask we lend.
    let rc = unsafe {
        libc::sched_setaffinity(
            0,
            core::mem::size_of::<CpuMask>(),
            mask.as_ptr().cast::<libc::cpu_set_t>(),
        )
    };
    if rc != 0 {
        return Err(Errno::last());
    }
    Ok(())
}
