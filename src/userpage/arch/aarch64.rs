//! aarch64: `mrs` of the PMUv3 counter registers and of `CNTVCT_EL0`.
//!
//! The arm64 perf driver (Linux 5.17+, `perf_user_access = 1`, event
//! `config1` bit 1) gives user space `index = hw.idx + 1`: event counters
//! 0..=30 appear as index 1..=31 (`PMEVCNTR<index-1>_EL0`), the cycle
//! counter (hardware index 31) as index 32 (`PMCCNTR_EL0`). Any other index
//! (e.g. 33, the FEAT_PMUv3_ICNTR instruction counter of newer kernels) has
//! no entry here and the reader falls back to `read(2)`.
//!
//! `mrs` takes the register as an immediate, so there is one instruction
//! per counter. Each arm of the generated `match` and its register name
//! come from the same token of one list, so no entry can be swapped; the
//! list itself is checked by the tests of [`PMEVCNTR`] on every host.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

/// The page index of the cycle counter, `PMCCNTR_EL0`.
pub const CYCLE_COUNTER_INDEX: u32 = 32;

macro_rules! event_counters {
    ($($n:literal)*) => {
        /// The register each event counter `n` (page index `n + 1`) is read
        /// from, in order: `PMEVCNTR<n>_EL0`.
        pub const PMEVCNTR: [&str; 31] = [$(concat!("pmevcntr", stringify!($n), "_el0")),*];

        /// `mrs` of `PMEVCNTR<n>_EL0`.
        ///
        /// # Safety
        ///
        /// Traps (SIGILL) unless PMUSERENR_EL0 lets EL0 read it: see
        /// [`super::read_counter`].
        #[cfg(target_arch = "aarch64")]
        #[inline(always)]
        unsafe fn read_event_counter(n: u32) -> Option<u64> {
            match n {
                $($n => {
                    let v: u64;
                    // SAFETY: the kernel enabled EL0 reads of this event's
                    // counter (cap_user_rdpmc and this index, own thread).
                    // No `nomem`: it must stay inside the seqlock section.
                    unsafe {
                        core::arch::asm!(
                            concat!("mrs {v}, pmevcntr", stringify!($n), "_el0"),
                            v = out(reg) v,
                            options(nostack, preserves_flags)
                        );
                    }
                    Some(v)
                })*
                _ => None,
            }
        }
    };
}

event_counters!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30);

/// The register the reader reads for page index `index`, or `None` when
/// there is none (the reader falls back to `read(2)`).
pub const fn register_for_index(index: u32) -> Option<&'static str> {
    match index {
        CYCLE_COUNTER_INDEX => Some("pmccntr_el0"),
        1..=31 => Some(PMEVCNTR[(index - 1) as usize]),
        _ => None,
    }
}

/// Reads the counter of page index `index`.
///
/// # Safety
///
/// See [`super::read_counter`].
#[cfg(target_arch = "aarch64")]
#[inline(always)]
pub(super) unsafe fn read_counter(index: u32) -> Option<u64> {
    if index == CYCLE_COUNTER_INDEX {
        let v: u64;
        // SAFETY: as for the event counters: EL0 access was enabled by the
        // kernel for this thread's cycle counter.
        unsafe {
            core::arch::asm!("mrs {v}, pmccntr_el0", v = out(reg) v,
                             options(nostack, preserves_flags));
        }
        return Some(v);
    }
    // SAFETY: the caller's contract is this function's.
    unsafe { read_event_counter(index.wrapping_sub(1)) }
}

/// `mrs CNTVCT_EL0`: the virtual count the arm64 kernel converts with
/// `time_mult` / `time_shift` (`cap_user_time_short`: it is narrower than
/// 64 bits, `time_mask` says how wide).
///
/// # Safety
///
/// See [`super::read_timestamp`]; Linux lets EL0 read CNTVCT_EL0 (or traps
/// and emulates it on CPUs with timer errata).
#[cfg(target_arch = "aarch64")]
#[inline(always)]
pub(super) unsafe fn read_timestamp() -> Option<u64> {
    let v: u64;
    // SAFETY: CNTKCTL_EL1.EL0VCTEN is set by Linux for user space.
    unsafe {
        core::arch::asm!("mrs {v}, cntvct_el0", v = out(reg) v,
                         options(nostack, preserves_flags));
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::format;

    #[test]
    fn every_event_counter_reads_its_own_register() {
        for (n, name) in PMEVCNTR.iter().enumerate() {
            assert_eq!(*name, format!("pmevcntr{n}_el0"));
        }
    }

    #[test]
    fn page_indices_map_to_the_arm64_driver_registers() {
        assert_eq!(register_for_index(0), None);
        assert_eq!(register_for_index(1), Some("pmevcntr0_el0"));
        assert_eq!(register_for_index(12), Some("pmevcntr11_el0"));
        assert_eq!(register_for_index(13), Some("pmevcntr12_el0"));
        assert_eq!(register_for_index(14), Some("pmevcntr13_el0"));
        assert_eq!(register_for_index(31), Some("pmevcntr30_el0"));
        assert_eq!(register_for_index(32), Some("pmccntr_el0"));
        assert_eq!(register_for_index(33), None);
        assert_eq!(register_for_index(u32::MAX), None);
    }
}
