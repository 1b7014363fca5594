//! AArch64 (arm64).

use super::{Arch, CpuIdSource, Encoding, RegsArch, UserCounter};

/// AArch64's facts.
pub const ARCH: Arch = Arch {
    name: "aarch64",
    ioctl: Encoding::Generic,
    perf_event_open: 241,
    regs: Some(RegsArch::Arm64),
    // X0..X30, SP, PC.
    user_regs_mask: Some((1 << 33) - 1),
    cpuid: CpuIdSource::ArmMidr,
    user_counter: UserCounter::Mrs,
};
