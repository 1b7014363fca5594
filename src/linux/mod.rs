//! THE OS boundary: every call this crate makes into the C library or the
//! kernel, and nothing else. Library authors may use it directly: each call
//! is exactly what the kernel defines, with nothing added.
//!
//! This is one of the few modules allowed `unsafe` code (see the crate
//! docs); everything above it is `#![deny(unsafe_code)]` except the
//! counter-instruction and shared-memory readers.
//!
//! # Two conventions
//!
//! - **The perf calls** ([`perf_event_open`], [`ioctl`], [`prctl`]) are raw:
//!   they return the kernel's `c_int` result unchanged (`-1` on failure, the
//!   cause in [`errno::last`]), take the argument type the kernel reads
//!   (a pointer where it dereferences one) and add nothing (no flag, no
//!   `attr.size` fix-up). They have the shape of `perf-event-open-sys`'s
//!   functions, so a library ports onto them with a dependency change.
//! - **The plain OS calls** ([`io`], [`mmap`], [`system`]) are small safe
//!   wrappers returning `Result<_, Errno>`: they are what the rest of the
//!   crate needs, not part of the perf ABI. Those that act on an fd number
//!   the caller must keep open (`io::read`, `io::close`) are `unsafe fn`
//!   (I/O safety); safe code reads a perf event through
//!   [`EventFd`](crate::fd::EventFd).
//!
//! # Modules
//!
//! - [`perf_event_open`]: the raw syscall (since Linux 2.6.31).
//! - [`ioctl`]: one function per `PERF_EVENT_IOC_*`, with this target's numbers.
//! - [`prctl`]: `PR_TASK_PERF_EVENTS_ENABLE` / `_DISABLE`.
//! - [`errno`]: the errno constants and the one reader of the thread's errno.
//! - `fd` (private): [`EventFd`](crate::fd::EventFd), the crate's one owned
//!   perf event fd (closed on drop, with or without std) with every ioctl as
//!   a safe method, and [`open_raw`](crate::fd::open_raw); both public at
//!   [`crate::fd`] only.
//! - [`fields`]: `perf_event_attr`'s union members and flag word by their
//!   kernel names, and the struct as bytes.
//! - [`io`]: `read(2)`, `close(2)`, `poll(2)`, and [`io::Fd`], an owned fd
//!   that is not a perf event (a pipe end, a pidfd, a FIFO); `mkfifo(3)`,
//!   FIFOs opened as perf opens its control FIFOs, and fds duplicated
//!   across `exec` (perf's control protocol).
//! - [`epoll`]: `epoll_create1(2)`, `epoll_ctl(2)`, `epoll_wait(2)` (the ring set's one wait).
//! - [`membarrier`]: `membarrier(2)`'s global barrier (the merge's round
//!   barrier).
//! - [`mmap`]: [`mmap::Mapping`], the one mapping type (user page, ring,
//!   AUX area), and [`mmap::page_size`], the one page-size function.
//! - [`system`]: `uname(2)`, `getrlimit(2)`, `gettid(2)`, the perf sysctls
//!   (`perf_event_paranoid`, `perf_event_mlock_kb`, ...), online CPUs, clock ids.
//! - [`access`]: who may call `perf_event_open`: the caller's capabilities
//!   ([`access::Caller`], `capget(2)`), its seccomp mode and the probe that
//!   tells whether a seccomp filter intercepts `perf_event_open`.
//! - [`process`]: a child held before `exec`, pipes,
//!   `pidfd_open(2)`, `waitid(2)`, `wait4(2)`, `kill(2)` (the workload launcher's calls).
//! - [`rlimit`]: `setrlimit(2)` (raising RLIMIT_NOFILE for event sets).

pub mod access;
mod debug;
pub mod epoll;
pub mod errno;
pub(crate) mod fd;
pub mod fields;
pub mod io;
pub mod ioctl;
pub mod membarrier;
pub mod mmap;
pub mod prctl;
pub mod process;
pub mod rlimit;
mod syscall;
pub mod system;

pub use syscall::perf_event_open;

/// The C types the boundary's signatures use (Linux: `pid_t` is `i32`).
pub mod types {
    pub use core::ffi::{c_char, c_int, c_long, c_uint, c_ulong, c_void};

    /// A process or thread id, `pid_t`.
    #[allow(non_camel_case_types)]
    pub type pid_t = libc::pid_t;
}
