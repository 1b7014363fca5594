//! 32-bit Arm.

use super::{Arch, CpuIdSource, Encoding, RegsArch, UserCounter};

/// 32-bit Arm's facts.
pub const ARCH: Arch = Arch {
    name: "arm",
    ioctl: Encoding::Generic,
    perf_event_open: 364,
    regs: Some(RegsArch::Arm),
    // R0..R15.
    user_regs_mask: Some(0xffff),
    cpuid: CpuIdSource::Unknown,
    user_counter: UserCounter::None,
};
