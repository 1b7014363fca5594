//! 64-bit SPARC (no asm/perf_regs.h: no register ABI).

use super::{Arch, CpuIdSource, Encoding, UserCounter};

/// 64-bit SPARC's facts.
pub const ARCH: Arch = Arch {
    name: "sparc64",
    ioctl: Encoding::Sparc,
    perf_event_open: 327,
    regs: None,
    user_regs_mask: None,
    cpuid: CpuIdSource::Unknown,
    user_counter: UserCounter::None,
};
