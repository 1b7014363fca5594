//! s390x (64-bit IBM Z, big-endian).

use super::{Arch, CpuIdSource, Encoding, RegsArch, UserCounter};

/// s390x's facts.
pub const ARCH: Arch = Arch {
    name: "s390x",
    ioctl: Encoding::Generic,
    perf_event_open: 331,
    regs: Some(RegsArch::S390),
    user_regs_mask: None,
    cpuid: CpuIdSource::Unknown,
    user_counter: UserCounter::None,
};
