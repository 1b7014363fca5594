//! x86 and x86_64: `rdpmc` and `rdtsc`.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use core::arch::asm;

/// `rdpmc` with ECX = `index - 1`, exactly as the page gives it: general
/// counters are 0..n, fixed counters carry bit 30 (`INTEL_PMC_FIXED_RDPMC_BASE`),
/// perf-metrics bit 29; the kernel computes the value, the reader never
/// masks it.
///
/// # Safety
///
/// See [`super::read_counter`]: `rdpmc` raises #GP (SIGSEGV) unless CR4.PCE
/// allows it for this thread's events.
#[inline(always)]
pub(super) unsafe fn read_counter(index: u32) -> Option<u64> {
    let (lo, hi): (u32, u32);
    // SAFETY: the caller saw cap_user_rdpmc and this index for an event of
    // the calling thread, so the kernel enabled rdpmc. No `nomem`: the
    // instruction must stay between the seqlock's loads.
    unsafe {
        asm!(
            "rdpmc",
            in("ecx") index.wrapping_sub(1),
            out("eax") lo,
            out("edx") hi,
            options(nostack, preserves_flags)
        );
    }
    Some((u64::from(hi) << 32) | u64::from(lo))
}

/// `rdtsc`.
///
/// # Safety
///
/// See [`super::read_timestamp`].
#[inline(always)]
pub(super) unsafe fn read_timestamp() -> Option<u64> {
    let (lo, hi): (u32, u32);
    // SAFETY: rdtsc is allowed in user space unless the process disabled it
    // (PR_SET_TSC); the caller saw cap_user_time.
    unsafe {
        asm!(
            "rdtsc",
            out("eax") lo,
            out("edx") hi,
            options(nostack, preserves_flags)
        );
    }
    Some((u64::from(hi) << 32) | u64::from(lo))
}
