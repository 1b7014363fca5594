//! Shared by the kernel-facing integration tests: tracefs, a raw ring-buffer
//! mapping (until the ring module exists), signal counting.
#![allow(dead_code)] // each test binary uses part of it

use std::sync::atomic::{AtomicU64, Ordering};

/// The tracefs mount, mounting it at /sys/kernel/tracing when needed.
/// Returns the reason when it cannot be had.
pub fn tracefs() -> Result<std::path::PathBuf, String> {
    for dir in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        if std::path::Path::new(dir).join("events").is_dir() {
            return Ok(dir.into());
        }
    }
    let target = c"/sys/kernel/tracing";
    // SAFETY: mount(2) with valid C strings and no data.
    let r = unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            target.as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if r == 0 && std::path::Path::new("/sys/kernel/tracing/events").is_dir() {
        Ok("/sys/kernel/tracing".into())
    } else {
        Err(format!(
            "tracefs is not mounted and mounting it failed: {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// tracefs, and per-syscall tracepoints that fire for this code's system
/// calls: `syscalls:sys_enter_getppid` must count a getppid(2). Not on
/// 64-bit MIPS kernels: their syscall metadata is mapped to the n32
/// numbers only, so an n64 program's calls never match (`raw_syscalls`
/// tracepoints do fire). Returns the reason when not (for the lab's need
/// `syscall-tracepoints`).
pub fn syscall_tracepoints() -> Result<std::path::PathBuf, String> {
    static FIRES: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    let root = tracefs()?;
    FIRES
        .get_or_init(|| {
            let mut attr = perf_event_core::sys::perf_event_attr {
                type_: perf_event_core::sys::PERF_TYPE_TRACEPOINT,
                size: core::mem::size_of::<perf_event_core::sys::perf_event_attr>() as u32,
                config: tracepoint_id("syscalls", "sys_enter_getppid"),
                ..Default::default()
            };
            attr.set_exclude_hv(1);
            // SAFETY: a whole perf_event_attr whose size is its own size.
            let fd = unsafe {
                libc::syscall(
                    libc::c_long::from(perf_event_core::sys::__NR_perf_event_open),
                    &attr as *const perf_event_core::sys::perf_event_attr,
                    0 as libc::pid_t,
                    -1 as libc::c_int,
                    -1 as libc::c_int,
                    libc::c_ulong::from(perf_event_core::sys::PERF_FLAG_FD_CLOEXEC),
                )
            };
            if fd < 0 {
                return Err(format!(
                    "syscalls:sys_enter_getppid does not open: {}",
                    std::io::Error::last_os_error()
                ));
            }
            let fd = fd as libc::c_int;
            // SAFETY: getppid has no arguments and cannot fail.
            unsafe { libc::getppid() };
            let mut count = 0u64;
            // SAFETY: read_format 0: the kernel writes one u64 into `count`.
            unsafe { libc::read(fd, (&mut count as *mut u64).cast(), 8) };
            // SAFETY: the fd just opened, not used again.
            unsafe { libc::close(fd) };
            if count == 0 {
                Err(format!(
                    "syscalls:sys_enter_getppid counted 0 getppid calls: this {} kernel's \
                     per-syscall tracepoints do not fire for this code's system calls \
                     (64-bit MIPS maps them to the n32 numbers only)",
                    std::env::consts::ARCH
                ))
            } else {
                Ok(())
            }
        })
        .clone()
        .map(|()| root)
}

/// A tracepoint's id from tracefs (`events/<group>/<name>/id`).
pub fn tracepoint_id(group: &str, name: &str) -> u64 {
    let root = tracefs().unwrap_or_else(|e| panic!("{e}"));
    let path = root.join("events").join(group).join(name).join("id");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .trim()
        .parse()
        .unwrap()
}

/// A raw mapping of an event's ring buffer: the metadata page plus
/// `2^order` data pages.
pub struct RawRing {
    base: *mut libc::c_void,
    len: usize,
}

impl RawRing {
    pub fn map(fd: libc::c_int, order: u32) -> RawRing {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let len = page * (1 + (1 << order));
        // SAFETY: a shared read-write mapping of a perf fd, as the man page describes.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        assert_ne!(
            base,
            libc::MAP_FAILED,
            "mmap: {}",
            std::io::Error::last_os_error()
        );
        RawRing { base, len }
    }

    /// `data_head`, read with Acquire ordering as the kernel requires.
    pub fn data_head(&self) -> u64 {
        let off = std::mem::offset_of!(perf_event_core::sys::perf_event_mmap_page, data_head);
        // SAFETY: the metadata page is mapped; data_head is an aligned u64
        // the kernel writes concurrently, read atomically.
        let head =
            unsafe { &*((self.base as *const u8).add(off) as *const std::sync::atomic::AtomicU64) };
        head.load(Ordering::Acquire)
    }
}

impl RawRing {
    /// (type, size) of each record header in the data area up to data_head
    /// (the tests keep well inside the buffer: no wrap handling).
    pub fn headers(&self) -> Vec<(u32, u16)> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let head = self.data_head() as usize;
        assert!(head <= self.len - page, "the test overran the ring");
        let mut out = Vec::new();
        let mut at = 0;
        while at + 8 <= head {
            // SAFETY: within the mapped data area, below data_head (Acquire above).
            let (ty, size) = unsafe {
                let p = (self.base as *const u8).add(page + at);
                (
                    std::ptr::read_volatile(p as *const u32),
                    std::ptr::read_volatile(p.add(6) as *const u16),
                )
            };
            out.push((ty, size));
            if size == 0 {
                break;
            }
            at += size as usize;
        }
        out
    }
}

impl Drop for RawRing {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what `map` mapped.
        unsafe { libc::munmap(self.base, self.len) };
    }
}

/// Signals counted by [`count_signal`]'s handler.
pub static SIGNALS: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_signal(_: libc::c_int) {
    SIGNALS.fetch_add(1, Ordering::SeqCst);
}

/// Installs a counting handler for `sig`.
pub fn count_signal(sig: libc::c_int) {
    // SAFETY: a plain sigaction with an async-signal-safe handler.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(libc::sigaction(sig, &sa, std::ptr::null_mut()), 0);
    }
}

/// `struct f_owner_ex` of fcntl(2) (not in the libc crate for every target).
#[repr(C)]
struct OwnerEx {
    kind: libc::c_int,
    pid: libc::pid_t,
}
/// fcntl(2) constants (asm-generic/fcntl.h; the same on every Linux arch).
const F_SETSIG: libc::c_int = 10;
const F_SETOWN_EX: libc::c_int = 15;
const F_OWNER_TID: libc::c_int = 0;

/// Routes an fd's overflow notifications to this thread as `sig`.
pub fn signal_this_thread_on_overflow(fd: libc::c_int, sig: libc::c_int) {
    // SAFETY: fcntl calls on an open fd; F_SETOWN_EX reads an OwnerEx.
    unsafe {
        let owner = OwnerEx {
            kind: F_OWNER_TID,
            pid: libc::gettid(),
        };
        assert_eq!(libc::fcntl(fd, F_SETOWN_EX, &owner as *const OwnerEx), 0);
        assert_eq!(libc::fcntl(fd, F_SETSIG, sig), 0);
        let fl = libc::fcntl(fd, libc::F_GETFL);
        assert_eq!(libc::fcntl(fd, libc::F_SETFL, fl | libc::O_ASYNC), 0);
    }
}

/// `n` prctl(PR_GET_DUMPABLE) calls (option 3).
pub fn prctls(n: u32) {
    for _ in 0..n {
        // SAFETY: PR_GET_DUMPABLE has no pointer arguments.
        unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) };
    }
}

/// The length of the tests' write breakpoints (`bp_len`): a machine word.
/// 32-bit x86 watches 1, 2 or 4 bytes (8 only with AMD's breakpoint
/// extension: EOPNOTSUPP), and its `u64` is only 4-aligned (EINVAL for an
/// 8-byte watch); the tests' 8-byte cells written whole still count once
/// per write.
pub const WATCH_LEN: u64 = core::mem::size_of::<usize>() as u64;

/// Whether the kernel can give this thread a hardware write breakpoint
/// that fires: the `breakpoint` PMU exists (not on riscv64 under QEMU, nor
/// s390x, nor mips64el), has slots (32-bit Arm under QEMU answers ENODEV:
/// no debug architecture it supports), and a watched write counts (QEMU's
/// pseries TCG accepts the breakpoint but never fires it: 0 writes
/// counted). When not, reports the calling test as not applicable here
/// (`lab_support::not_applicable`, need `hw-breakpoint`, which the x86_64,
/// aarch64 and i386 guests provide): a line in the skip report and in the
/// binary's summary. The test returns right after `false`.
pub fn hw_breakpoints() -> bool {
    match hw_breakpoint_problem() {
        None => true,
        Some(why) => {
            crate::lab_support::not_applicable(
                crate::lab_support::Need::HwBreakpoint,
                &format!(
                    "this {} kernel gives no hardware write breakpoint that fires ({why})",
                    std::env::consts::ARCH
                ),
            );
            false
        }
    }
}

/// Why this thread cannot have a hardware write breakpoint that fires, or
/// `None` when it can (see [`hw_breakpoints`]); prints nothing.
pub fn hw_breakpoint_problem() -> Option<String> {
    let watched = Box::into_raw(Box::new(0u64));
    let mut attr = perf_event_core::sys::perf_event_attr {
        type_: perf_event_core::sys::PERF_TYPE_BREAKPOINT,
        size: core::mem::size_of::<perf_event_core::sys::perf_event_attr>() as u32,
        bp_type: perf_event_core::sys::HW_BREAKPOINT_W,
        ..Default::default()
    };
    attr.__bindgen_anon_3.bp_addr = watched as u64;
    attr.__bindgen_anon_4.bp_len = WATCH_LEN;
    attr.set_exclude_kernel(1);
    attr.set_exclude_hv(1);
    // SAFETY: a whole perf_event_attr whose size is its own size.
    let fd = unsafe {
        libc::syscall(
            libc::c_long::from(perf_event_core::sys::__NR_perf_event_open),
            &attr as *const perf_event_core::sys::perf_event_attr,
            0 as libc::pid_t,
            -1 as libc::c_int,
            -1 as libc::c_int,
            libc::c_ulong::from(perf_event_core::sys::PERF_FLAG_FD_CLOEXEC),
        )
    };
    let err = std::io::Error::last_os_error();
    let mut count = None;
    if fd >= 0 {
        let fd = fd as libc::c_int;
        // SAFETY: `watched` is the live, writable box above.
        unsafe { std::ptr::write_volatile(watched, 1) };
        let mut value = 0u64;
        // SAFETY: read_format 0: the kernel writes one u64 into `value`.
        let n = unsafe { libc::read(fd, (&mut value as *mut u64).cast(), 8) };
        // SAFETY: the fd just opened, not used again.
        unsafe { libc::close(fd) };
        count = (n == 8).then_some(value);
    }
    // SAFETY: from Box::into_raw above, freed once.
    drop(unsafe { Box::from_raw(watched) });
    if fd >= 0 {
        return match count {
            Some(0) => Some(
                "it opens, but a watched write counted 0: the machine does not deliver \
                 the watchpoint"
                    .to_owned(),
            ),
            // Anything else is for the test itself to report.
            _ => None,
        };
    }
    match err.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ENODEV) => Some(err.to_string()),
        // Anything else is for the test itself to report.
        _ => None,
    }
}

/// `n` (at least 1) iterations of `add; subs; b.ne`: exactly `3 * n`
/// user-space instructions on aarch64, the loop whose static count the
/// monitor tests compare with. Elsewhere an ordinary loop (no hardware
/// counter to check it against there).
#[inline(never)]
pub fn additions(n: u64) -> u64 {
    let mut acc = 0u64;
    let mut left = n.max(1);
    #[cfg(target_arch = "aarch64")]
    // SAFETY: register arithmetic and a local branch only.
    unsafe {
        core::arch::asm!(
            "2:",
            "add {acc}, {acc}, #1",
            "subs {left}, {left}, #1",
            "b.ne 2b",
            acc = inout(reg) acc,
            left = inout(reg) left,
            options(nomem, nostack),
        );
    }
    #[cfg(not(target_arch = "aarch64"))]
    while left > 0 {
        acc = std::hint::black_box(acc + 1);
        left -= 1;
    }
    acc + left
}

/// Returns once the kernel has reaped each thread of `tids` (its
/// `/proc/self/task/TID` is gone, which `release_task` does after the
/// thread's perf exit has added its inherited counts back to the parent
/// events). `pthread_join` is not enough: musl wakes the joiner before the
/// thread makes its exit system call, and a group read while the kernel
/// tears a child's group down (leader first, then each member) misses the
/// member not yet added back. A wait for an event, not for a time.
pub fn wait_until_reaped(tids: &[libc::pid_t]) {
    for tid in tids {
        let task = format!("/proc/self/task/{tid}");
        while std::path::Path::new(&task).exists() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}
