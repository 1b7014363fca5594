//! 64-bit RISC-V.

use super::{Arch, CpuIdSource, Encoding, RegsArch, UserCounter};

/// 64-bit RISC-V's facts.
pub const ARCH: Arch = Arch {
    name: "riscv64",
    ioctl: Encoding::Generic,
    perf_event_open: 241,
    regs: Some(RegsArch::Riscv),
    // PC, RA, SP, ..., T6: the 32 of perf_event_riscv_regs.
    user_regs_mask: Some(0xffff_ffff),
    cpuid: CpuIdSource::Unknown,
    user_counter: UserCounter::Csrr,
};
