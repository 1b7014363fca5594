//! `membarrier(2)` with `MEMBARRIER_CMD_GLOBAL` (Linux 4.3, first named
//! `MEMBARRIER_CMD_SHARED`): returns once every CPU has passed through a
//! quiescent state (an RCU grace period), so every section that ran with
//! preemption or interrupts disabled when the call began has finished.
//!
//! The kernel writes a perf record (takes its time, reserves its space,
//! copies it and publishes `data_head`) inside such a section, so after
//! this call every record whose time was taken before the call began is
//! visible in its ring: the time-ordered merge uses that as its round
//! barrier (see perf-event-host's ring set merge).

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use crate::linux::errno::Errno;

/// `MEMBARRIER_CMD_GLOBAL` from `<linux/membarrier.h>`.
const MEMBARRIER_CMD_GLOBAL: libc::c_int = 1;

/// `membarrier(MEMBARRIER_CMD_GLOBAL, 0)`. Takes one grace period (8-20 ms
/// measured on a 2-CPU VM; a single-CPU system returns at once).
///
/// # Errors
///
/// EINVAL when the kernel runs with `nohz_full` CPUs (it refuses the
/// command then), ENOSYS without `CONFIG_MEMBARRIER` (or before 4.3), EPERM
/// when a seccomp filter forbids the call.
pub fn global() -> Result<(), Errno> {
    // SAFETY: membarrier takes two integers and reads no memory of ours.
    let r = unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}
