//! LoongArch64.

use super::{Arch, CpuIdSource, Encoding, RegsArch, UserCounter};

/// LoongArch64's facts.
pub const ARCH: Arch = Arch {
    name: "loongarch64",
    ioctl: Encoding::Generic,
    perf_event_open: 241,
    regs: Some(RegsArch::Loongarch),
    user_regs_mask: None,
    cpuid: CpuIdSource::Unknown,
    user_counter: UserCounter::None,
};
