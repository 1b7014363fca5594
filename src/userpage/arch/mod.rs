//! The counter and timestamp instructions: the only inline assembly in the
//! crate.
//!
//! | architecture   | counter (page `index`)                               | timestamp     |
//! |----------------|------------------------------------------------------|---------------|
//! | x86, x86_64    | `rdpmc` with ECX = `index - 1` (bit 30: fixed counter) | `rdtsc`       |
//! | aarch64        | `mrs PMEVCNTR<index-1>_EL0` (1..=31), `mrs PMCCNTR_EL0` (32) | `mrs CNTVCT_EL0` |
//! | riscv64        | `csrr` of CSR `0xC00 + index - 1` (1..=32)           | `rdtime`      |
//! | anything else  | none: the reader always uses `read(2)`               | none          |
//!
//! The register tables are generated from one list per architecture and
//! compiled on every target, so the host's tests check them.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

pub(crate) mod aarch64;
pub(crate) mod riscv64;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod x86;

/// Reads the hardware counter the page names by `index` (the page's value,
/// not yet minus one), or `None` where this architecture has no instruction
/// for it (the caller then falls back to `read(2)`).
///
/// # Safety
///
/// The instruction faults (SIGSEGV / SIGILL) unless the kernel enabled user
/// access to this counter for the calling thread. The caller must have read,
/// in the current seqlock section of the event's page, `cap_user_rdpmc == 1`
/// and this nonzero `index`, and the event must monitor the calling thread
/// (pid 0 or its tid, cpu -1).
#[inline(always)]
pub(crate) unsafe fn read_counter(index: u32) -> Option<u64> {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    // SAFETY: the caller's contract is this function's.
    return unsafe { x86::read_counter(index) };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as above.
    return unsafe { aarch64::read_counter(index) };
    #[cfg(target_arch = "riscv64")]
    // SAFETY: as above.
    return unsafe { riscv64::read_counter(index) };
    #[cfg(not(any(
        target_arch = "x86",
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64"
    )))]
    {
        let _ = index;
        None
    }
}

/// Reads the timestamp counter the page's `time_*` fields convert (TSC,
/// CNTVCT_EL0, `time`), or `None` where this architecture has none.
///
/// # Safety
///
/// The caller must have read `cap_user_time == 1` in the current seqlock
/// section: the kernel sets it only where user space may read the counter.
/// (A process that forbade itself `rdtsc` with `prctl(PR_SET_TSC)` gets
/// SIGSEGV on x86.)
#[inline(always)]
pub(crate) unsafe fn read_timestamp() -> Option<u64> {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    // SAFETY: the caller's contract is this function's.
    return unsafe { x86::read_timestamp() };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as above.
    return unsafe { aarch64::read_timestamp() };
    #[cfg(target_arch = "riscv64")]
    // SAFETY: as above.
    return unsafe { riscv64::read_timestamp() };
    #[cfg(not(any(
        target_arch = "x86",
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64"
    )))]
    None
}

/// Whether this architecture has a counter instruction the reader uses.
pub const HAS_COUNTER_INSTRUCTION: bool = cfg!(any(
    target_arch = "x86",
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
));
