//! 64-bit PowerPC, either byte order.

use super::{Arch, CpuIdSource, Encoding, RegsArch, UserCounter};

/// 64-bit PowerPC's facts.
pub const ARCH: Arch = Arch {
    name: "powerpc64",
    ioctl: Encoding::Powerpc,
    perf_event_open: 319,
    regs: Some(RegsArch::Powerpc),
    user_regs_mask: None,
    cpuid: CpuIdSource::Unknown,
    user_counter: UserCounter::None,
};
