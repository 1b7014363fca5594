//! riscv64: `csrr` of the unprivileged counter CSRs and `rdtime`.
//!
//! The RISC-V perf drivers (legacy and SBI PMU, Linux 6.6+ with
//! `perf_user_access`) give user space `index = counter + 1`, and counter
//! `n` is CSR `0xC00 + n`: `cycle` (0xC00), `time` (0xC01), `instret`
//! (0xC02), `hpmcounter3..31` (0xC03..=0xC1F). `csrr` takes the CSR as an
//! immediate: one instruction per counter, generated with its number from
//! one list that the tests check.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

macro_rules! counter_csrs {
    ($($n:literal $csr:literal)*) => {
        /// The CSR each counter `n` (page index `n + 1`) is read from.
        pub const COUNTER_CSR: [&str; 32] = [$($csr),*];

        /// `csrr` of counter `n`.
        ///
        /// # Safety
        ///
        /// Traps (SIGILL) unless `scounteren` lets user space read it: see
        /// [`super::read_counter`].
        #[cfg(target_arch = "riscv64")]
        #[inline(always)]
        unsafe fn read_csr_counter(n: u32) -> Option<u64> {
            match n {
                $($n => {
                    let v: u64;
                    // SAFETY: the kernel enabled user reads of this counter
                    // (cap_user_rdpmc and this index, own thread). No
                    // `nomem`: it must stay inside the seqlock section.
                    unsafe {
                        core::arch::asm!(concat!("csrr {v}, ", $csr), v = out(reg) v,
                                         options(nostack, preserves_flags));
                    }
                    Some(v)
                })*
                _ => None,
            }
        }
    };
}

counter_csrs! {
    0 "0xc00" 1 "0xc01" 2 "0xc02" 3 "0xc03" 4 "0xc04" 5 "0xc05" 6 "0xc06" 7 "0xc07"
    8 "0xc08" 9 "0xc09" 10 "0xc0a" 11 "0xc0b" 12 "0xc0c" 13 "0xc0d" 14 "0xc0e" 15 "0xc0f"
    16 "0xc10" 17 "0xc11" 18 "0xc12" 19 "0xc13" 20 "0xc14" 21 "0xc15" 22 "0xc16" 23 "0xc17"
    24 "0xc18" 25 "0xc19" 26 "0xc1a" 27 "0xc1b" 28 "0xc1c" 29 "0xc1d" 30 "0xc1e" 31 "0xc1f"
}

/// The CSR the reader reads for page index `index`, or `None`.
pub const fn csr_for_index(index: u32) -> Option<&'static str> {
    match index {
        1..=32 => Some(COUNTER_CSR[(index - 1) as usize]),
        _ => None,
    }
}

/// Reads the counter of page index `index`.
///
/// # Safety
///
/// See [`super::read_counter`].
#[cfg(target_arch = "riscv64")]
#[inline(always)]
pub(super) unsafe fn read_counter(index: u32) -> Option<u64> {
    // SAFETY: the caller's contract is this function's.
    unsafe { read_csr_counter(index.wrapping_sub(1)) }
}

/// `rdtime`.
///
/// # Safety
///
/// See [`super::read_timestamp`]; Linux lets user space read `time` (or
/// traps and emulates it).
#[cfg(target_arch = "riscv64")]
#[inline(always)]
pub(super) unsafe fn read_timestamp() -> Option<u64> {
    let v: u64;
    // SAFETY: `time` is readable by user space on Linux.
    unsafe {
        core::arch::asm!("rdtime {v}", v = out(reg) v, options(nostack, preserves_flags));
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::format;

    #[test]
    fn every_counter_reads_csr_0xc00_plus_n() {
        for (n, csr) in COUNTER_CSR.iter().enumerate() {
            assert_eq!(*csr, format!("{:#x}", 0xc00 + n));
        }
        assert_eq!(csr_for_index(0), None);
        assert_eq!(csr_for_index(1), Some("0xc00"));
        assert_eq!(csr_for_index(3), Some("0xc02"));
        assert_eq!(csr_for_index(32), Some("0xc1f"));
        assert_eq!(csr_for_index(33), None);
    }
}
