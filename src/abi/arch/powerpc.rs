//! 32-bit PowerPC.

use super::{Arch, CpuIdSource, Encoding, RegsArch, UserCounter};

/// 32-bit PowerPC's facts.
pub const ARCH: Arch = Arch {
    name: "powerpc",
    ioctl: Encoding::Powerpc,
    perf_event_open: 319,
    regs: Some(RegsArch::Powerpc),
    user_regs_mask: None,
    cpuid: CpuIdSource::Unknown,
    user_counter: UserCounter::None,
};
