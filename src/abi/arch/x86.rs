//! 32-bit x86 (i386).

use super::{Arch, CpuIdSource, Encoding, RegsArch, UserCounter};

/// 32-bit x86's facts.
pub const ARCH: Arch = Arch {
    name: "x86",
    ioctl: Encoding::Generic,
    perf_event_open: 336,
    regs: Some(RegsArch::X86),
    // AX..GS: the 16 of the 32-bit ABI.
    user_regs_mask: Some(0xffff),
    cpuid: CpuIdSource::X86Cpuinfo,
    user_counter: UserCounter::Rdpmc,
};
