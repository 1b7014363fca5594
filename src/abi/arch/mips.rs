//! 32-bit MIPS (o32), either byte order.

use super::{Arch, CpuIdSource, Encoding, RegsArch, UserCounter};

/// 32-bit MIPS's facts.
pub const ARCH: Arch = Arch {
    name: "mips",
    ioctl: Encoding::Mips,
    // o32 numbers start at 4000.
    perf_event_open: 4000 + 333,
    regs: Some(RegsArch::Mips),
    user_regs_mask: None,
    cpuid: CpuIdSource::Unknown,
    user_counter: UserCounter::None,
};
