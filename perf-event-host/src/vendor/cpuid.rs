//! The CPU id perf chooses a vendor table by: `perf_pmu__getcpuid` of
//! Linux 6.12's `tools/perf/util/pmu.c` (the `PERF_CPUID` environment
//! variable, else the architecture's `get_cpuid_str`).

use crate::sysfs::{self, CpuList, Pmu, SysfsError};
use core::fmt;

/// The environment variable perf reads a CPU id from before asking the
/// machine (`perf_pmu__getcpuid`, since the vendor tables came in Linux
/// 4.7; still so in 6.12): with it, perf uses another CPU's tables
/// (`PERF_CPUID=GenuineIntel-6-55-4`).
pub const PERF_CPUID: &str = "PERF_CPUID";

/// Why the running CPU's id could not be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum CpuIdError {
    /// A file could not be read.
    Sysfs(SysfsError),
    /// `/proc/cpuinfo` lacks a line perf reads (x86: `vendor_id`, `cpu
    /// family`, `model`, `stepping`; riscv: `mvendorid`, `marchid`,
    /// `mimpid`), or it is not a number.
    Cpuinfo {
        /// The key of the line.
        key: &'static str,
    },
    /// perf has no vendor tables for this architecture (its
    /// `get_cpuid_str` is x86's, arm64's, powerpc's, s390's and riscv's;
    /// this package reads the x86, arm64 and riscv ids).
    Unsupported {
        /// The architecture (`target_arch`).
        arch: &'static str,
    },
}

impl fmt::Display for CpuIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpuIdError::Sysfs(e) => write!(f, "reading the CPU id: {e}"),
            CpuIdError::Cpuinfo { key } => write!(
                f,
                "the CPUs' description (/proc/cpuinfo) has no usable `{key}` line, which perf's \
                 CPU id is built from; \
                 set {PERF_CPUID} to the id of the CPU whose events you want"
            ),
            CpuIdError::Unsupported { arch } => write!(
                f,
                "no CPU id rule for {arch}: perf has vendor events for x86, arm64, powerpc, s390 \
                 and riscv, and this package reads the ids of x86, arm64 and riscv; set \
                 {PERF_CPUID} to choose a table"
            ),
        }
    }
}

impl std::error::Error for CpuIdError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CpuIdError::Sysfs(e) => Some(e),
            _ => None,
        }
    }
}

/// The value of the first `key : value` line of `cpuinfo` whose key is
/// `key` (the first CPU's).
fn field<'a>(cpuinfo: &'a str, key: &'static str) -> Result<&'a str, CpuIdError> {
    cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim())
        })
        .ok_or(CpuIdError::Cpuinfo { key })
}

/// x86's CPU id from `/proc/cpuinfo`'s text: `vendor-family-model-stepping`,
/// the family decimal, model and stepping upper-case hex
/// (`GenuineIntel-6-55-4`, `AuthenticAMD-25-11-1`), what perf's
/// `get_cpuid_str` (`tools/perf/arch/x86/util/header.c`, `"%s-%u-%X-%X"`)
/// builds from the `cpuid` instruction: the kernel's `cpu family` and
/// `model` fold in the extended family and model as perf does.
pub fn x86_cpuid(cpuinfo: &str) -> Result<String, CpuIdError> {
    let number = |key| {
        field(cpuinfo, key)?
            .parse::<u32>()
            .map_err(|_| CpuIdError::Cpuinfo { key })
    };
    let vendor = field(cpuinfo, "vendor_id")?;
    let (family, model, stepping) = (number("cpu family")?, number("model")?, number("stepping")?);
    Ok(format!("{vendor}-{family}-{model:X}-{stepping:X}"))
}

/// riscv's CPU id from `/proc/cpuinfo`'s text: `mvendorid-marchid-mimpid`
/// as printed there (`0x489-0x8000000000000007-0x20181004`), perf's
/// `tools/perf/arch/riscv/util/header.c` (since perf 6.4): each value is
/// the text after the line's last space, of the first line starting with
/// the key.
pub fn riscv_cpuid(cpuinfo: &str) -> Result<String, CpuIdError> {
    let value = |key: &'static str| {
        cpuinfo
            .lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.rsplit_once(' '))
            .map(|(_, v)| v.to_owned())
            .ok_or(CpuIdError::Cpuinfo { key })
    };
    Ok(format!(
        "{}-{}-{}",
        value("mvendorid")?,
        value("marchid")?,
        value("mimpid")?
    ))
}

/// arm64's CPU id of `pmu`: the `midr_el1` of the first of its CPUs
/// (`cpumask`, else `cpus`, else every online CPU for a core PMU) whose
/// file can be read, its first 18 characters as perf's `fgets` keeps them
/// (`0x00000000410fd080`): perf's `tools/perf/arch/arm64/util/header.c`
/// (per PMU in Linux 6.12's `get_cpuid_str(pmu)`, so that big.LITTLE core
/// PMUs get their own tables). `None` for a PMU without CPUs, or when no CPU's file can be
/// read (kernels before 4.8): perf then gives the PMU no table ("failed to
/// get cpuid string").
pub fn arm64_cpuid(pmu: &Pmu) -> Result<Option<String>, CpuIdError> {
    let cpus = match (pmu.cpumask(), pmu.cpus()) {
        (Some(c), _) | (None, Some(c)) => c.clone(),
        (None, None) if is_core(pmu) => CpuList::online().map_err(CpuIdError::Sysfs)?,
        (None, None) => return Ok(None),
    };
    let midr = cpus
        .iter()
        .find_map(|cpu| sysfs::midr_el1(cpu).ok().filter(|m| !m.is_empty()));
    Ok(midr.map(|midr| midr.chars().take(18).collect()))
}

/// perf 6.12's `is_pmu_core`: `cpu`, `cpum_cf` (s390), or a PMU with a
/// `cpus` file (`cpu_core`, `cpu_atom`, `armv8_pmuv3_0`).
pub(super) fn is_core(pmu: &Pmu) -> bool {
    pmu.name() == "cpu" || pmu.name() == "cpum_cf" || pmu.cpus().is_some()
}

/// The CPU id perf uses for `pmu` on this machine: [`PERF_CPUID`] when
/// set, else the architecture's (x86 and riscv: one id from
/// `/proc/cpuinfo`, the same for every PMU; arm64: [`arm64_cpuid`]).
/// `None` where perf has none for the PMU.
pub fn running_cpuid(pmu: &Pmu) -> Result<Option<String>, CpuIdError> {
    if let Some(id) = std::env::var_os(PERF_CPUID) {
        return Ok(Some(id.to_string_lossy().into_owned()));
    }
    if cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
        x86_cpuid(&sysfs::cpuinfo().map_err(CpuIdError::Sysfs)?).map(Some)
    } else if cfg!(target_arch = "aarch64") {
        arm64_cpuid(pmu)
    } else if cfg!(target_arch = "riscv64") {
        riscv_cpuid(&sysfs::cpuinfo().map_err(CpuIdError::Sysfs)?).map(Some)
    } else {
        Err(CpuIdError::Unsupported {
            arch: std::env::consts::ARCH,
        })
    }
}
