//! Every per-architecture fact of the crate, one file per architecture:
//! the ioctl encoding, the `perf_event_open` syscall number, the register
//! ABI and perf's mask of every user register, where perf reads the CPU's
//! id, and the instruction that reads a counter from user space.
//!
//! The files are plain constants compiled on every target (the host's tests
//! check them all); [`TARGET`] is the one of the compilation target, and the
//! rest of the crate asks it instead of testing `target_arch` itself.
//! Adding an architecture: ARCHITECTURE.md, "Adding an architecture".

mod aarch64;
mod arm;
mod loongarch64;
mod mips;
mod mips64;
mod powerpc;
mod powerpc64;
mod riscv64;
mod s390x;
mod sparc64;
mod x86;
mod x86_64;

use super::ioctl_numbers::Encoding;
use core::ffi::c_long;

/// An architecture with a perf register ABI (the kernel's
/// `arch/*/include/uapi/asm/perf_regs.h`, since Linux 3.7 on x86 and Arm).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RegsArch {
    /// x86 and x86_64 (`perf_event_x86_regs`; ABI_32 tasks have the first 16).
    X86,
    /// 32-bit Arm (`perf_event_arm_regs`).
    Arm,
    /// AArch64 (`perf_event_arm64_regs`).
    Arm64,
    /// RISC-V (`perf_event_riscv_regs`).
    Riscv,
    /// s390x (`perf_event_s390_regs`).
    S390,
    /// PowerPC (`perf_event_powerpc_regs`).
    Powerpc,
    /// LoongArch (`perf_event_loongarch_regs`).
    Loongarch,
    /// MIPS (`perf_event_mips_regs`).
    Mips,
}

/// Where perf takes the CPU's id for perf.data's `HEADER_CPUID`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CpuIdSource {
    /// `/proc/cpuinfo`'s vendor, family, model and stepping, as
    /// `vendor,family,model,stepping`.
    X86Cpuinfo,
    /// `MIDR_EL1` of CPU 0 from sysfs
    /// (`cpu0/regs/identification/midr_el1`, since Linux 4.7).
    ArmMidr,
    /// None that this crate reads.
    Unknown,
}

/// The instruction that reads a hardware counter from user space, once the
/// event's mmap page says `cap_user_rdpmc` (the crate's `userpage` reader).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UserCounter {
    /// None: counters are read with `read(2)`.
    None,
    /// `rdpmc` (x86, allowed by `/sys/devices/cpu/rdpmc`, since Linux 3.4).
    Rdpmc,
    /// `mrs PMEVCNTR<n>_EL0` (arm64, since Linux 5.17): allowed by
    /// `kernel.perf_user_access=1` for events opened with config1 bit 1
    /// (the PMU's `rdpmc` format bit).
    Mrs,
    /// `csrr` of the counter CSRs (riscv64, since Linux 6.6; allowed by
    /// `kernel.perf_user_access`, 1 by default).
    Csrr,
}

impl UserCounter {
    /// The config1 bits a hardware event needs for its counter to be read
    /// this way (arm64's `rdpmc` format bit; 0 elsewhere).
    pub const fn config1(self) -> u64 {
        match self {
            UserCounter::Mrs => 0x2,
            _ => 0,
        }
    }
}

/// The facts of one architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arch {
    /// Rust's `target_arch` name.
    pub name: &'static str,
    /// How its ioctl request numbers are encoded.
    pub ioctl: Encoding,
    /// `__NR_perf_event_open` in its syscall table (since Linux 2.6.31;
    /// checked against the generated bindings for the target).
    pub perf_event_open: c_long,
    /// Its register ABI (sparc64 has none).
    pub regs: Option<RegsArch>,
    /// perf's `PERF_REGS_MASK`: every user register, as
    /// `--user-regs` / `call-graph=dwarf` ask for them; `None` where the
    /// crate does not know it.
    pub user_regs_mask: Option<u64>,
    /// Where perf takes the CPU's id.
    pub cpuid: CpuIdSource,
    /// How user space reads a counter.
    pub user_counter: UserCounter,
}

/// Every architecture the crate has bindings for (one entry per family;
/// 32- and 64-bit variants that share a file are told apart inside it).
pub const ALL: [Arch; 12] = [
    aarch64::ARCH,
    arm::ARCH,
    loongarch64::ARCH,
    mips::ARCH,
    mips64::ARCH,
    powerpc::ARCH,
    powerpc64::ARCH,
    riscv64::ARCH,
    s390x::ARCH,
    sparc64::ARCH,
    x86::ARCH,
    x86_64::ARCH,
];

/// The compilation target's facts.
pub const TARGET: Arch = {
    #[cfg(target_arch = "aarch64")]
    let arch = aarch64::ARCH;
    #[cfg(target_arch = "arm")]
    let arch = arm::ARCH;
    #[cfg(target_arch = "loongarch64")]
    let arch = loongarch64::ARCH;
    #[cfg(any(target_arch = "mips", target_arch = "mips32r6"))]
    let arch = mips::ARCH;
    #[cfg(any(target_arch = "mips64", target_arch = "mips64r6"))]
    let arch = mips64::ARCH;
    #[cfg(target_arch = "powerpc")]
    let arch = powerpc::ARCH;
    #[cfg(target_arch = "powerpc64")]
    let arch = powerpc64::ARCH;
    #[cfg(target_arch = "riscv64")]
    let arch = riscv64::ARCH;
    #[cfg(target_arch = "s390x")]
    let arch = s390x::ARCH;
    #[cfg(target_arch = "sparc64")]
    let arch = sparc64::ARCH;
    #[cfg(target_arch = "x86")]
    let arch = x86::ARCH;
    #[cfg(target_arch = "x86_64")]
    let arch = x86_64::ARCH;
    arch
};

// The syscall number each file states is the one the target's generated
// bindings carry.
static_assertions::const_assert_eq!(TARGET.perf_event_open, crate::sys::__NR_perf_event_open);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_architecture_is_listed_once_with_its_own_facts() {
        for (i, a) in ALL.iter().enumerate() {
            assert!(ALL[..i].iter().all(|b| b.name != a.name), "{}", a.name);
        }
        assert!(ALL.contains(&TARGET));
        // The encodings the kernel's asm/ioctl.h picks.
        let encoding = |n: &str| ALL.iter().find(|a| a.name == n).unwrap().ioctl;
        assert_eq!(encoding("powerpc64"), Encoding::Powerpc);
        assert_eq!(encoding("mips"), Encoding::Mips);
        assert_eq!(encoding("sparc64"), Encoding::Sparc);
        assert_eq!(encoding("x86_64"), Encoding::Generic);
    }
}
