//! 64-bit MIPS (n64), either byte order.

use super::{Arch, CpuIdSource, Encoding, RegsArch, UserCounter};

/// 64-bit MIPS's facts.
pub const ARCH: Arch = Arch {
    name: "mips64",
    ioctl: Encoding::Mips,
    // n64 numbers start at 5000.
    perf_event_open: 5000 + 292,
    regs: Some(RegsArch::Mips),
    user_regs_mask: None,
    cpuid: CpuIdSource::Unknown,
    user_counter: UserCounter::None,
};
