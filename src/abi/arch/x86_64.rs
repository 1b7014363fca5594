//! x86_64, and its x32 ABI (32-bit pointers, the same instructions).

use super::{Arch, CpuIdSource, Encoding, RegsArch, UserCounter};

/// `__X32_SYSCALL_BIT`: x32 calls are the 64-bit numbers with this bit set.
const X32: core::ffi::c_long = if cfg!(target_pointer_width = "32") {
    0x4000_0000
} else {
    0
};

/// x86_64's facts.
pub const ARCH: Arch = Arch {
    name: "x86_64",
    ioctl: Encoding::Generic,
    perf_event_open: X32 + 298,
    regs: Some(RegsArch::X86),
    // AX..R15 without DS/ES/FS/GS (asm/perf_regs.h).
    user_regs_mask: Some(0xff0fff),
    cpuid: CpuIdSource::X86Cpuinfo,
    user_counter: UserCounter::Rdpmc,
};
