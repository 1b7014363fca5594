//! perf's choice of a mapfile row for a CPU: `strcmp_cpuid_str` of Linux
//! 6.12's `tools/perf`, one rule per architecture. perf walks the mapfile
//! rows in order and takes the first that matches (`map_for_cpu` in the
//! generated pmu-events.c).
//!
//! The CPU id strings are perf's `get_cpuid_str` (the `PERF_CPUID`
//! environment variable overrides it in perf):
//!
//! - x86: `vendor-family-model-stepping`, family decimal, model and stepping
//!   upper-case hex (`GenuineIntel-6-55-4`, `AuthenticAMD-25-61-2`);
//! - arm64: the MIDR as sysfs prints it (`0x00000000410fd0c1`; perf 6.1
//!   clears variant and revision: `0x00000000410fd0c0`);
//! - powerpc: the PVR as `0x%.8lx` (`0x004e1202`);
//! - s390: `manufacturer,type,model-capacity[,model],version,authorization`
//!   from /proc/sysinfo and /proc/service_levels (`IBM,8561,703,T01,3.6,002f`);
//! - riscv: `mvendorid-marchid-mimpid` as /proc/cpuinfo prints them
//!   (`0x489-0x8000000000000007-0x20181004`).

mod midr;
pub(crate) mod regex;

/// How perf compares a mapfile row's CPU id (its first column) with a CPU's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CpuidRule {
    /// `tools/perf/arch/x86/util/header.c`: the row is a POSIX extended
    /// regular expression; a row with four `-`-separated parts (stepping
    /// included) needs a CPU id with four, and a row with fewer ignores the
    /// CPU's stepping; the leftmost-longest match must cover the whole
    /// (compared part of the) CPU id.
    X86,
    /// `tools/perf/arch/arm64/util/header.c` of 6.12 (perf 6.1 has no
    /// arm64 rule of its own: [`CpuidRule::Regex`]): both are MIDRs read as hex
    /// (`strtoull`); the implementer, architecture and part number must be
    /// equal, and the CPU's variant and revision (`rNpM`) at least the row's.
    Arm64,
    /// `tools/perf/util/header.c` (powerpc, s390, riscv): the row is a POSIX
    /// extended regular expression whose leftmost-longest match must cover
    /// the whole CPU id.
    Regex,
}

impl CpuidRule {
    /// The rule perf 6.12 uses on the target architecture, where this
    /// package has tables (`None` elsewhere); perf 6.1's is
    /// [`Tables::cpuid_rule`](crate::Tables::cpuid_rule).
    pub const TARGET: Option<CpuidRule> = if cfg!(any(target_arch = "x86", target_arch = "x86_64"))
    {
        Some(CpuidRule::X86)
    } else if cfg!(target_arch = "aarch64") {
        Some(CpuidRule::Arm64)
    } else if cfg!(any(
        target_arch = "powerpc64",
        target_arch = "s390x",
        target_arch = "riscv64"
    )) {
        Some(CpuidRule::Regex)
    } else {
        None
    };

    /// Whether the mapfile row's id `map_cpuid` matches the CPU id `cpuid`,
    /// as perf's `strcmp_cpuid_str(map_cpuid, cpuid) == 0`. Both are read
    /// as C strings: up to a NUL. A pattern glibc's `regcomp` would refuse,
    /// or one using more than the mapfiles' part of the syntax (see the
    /// crate docs), matches nothing, as in perf.
    pub fn matches(self, map_cpuid: &str, cpuid: &str) -> bool {
        let c_string = |s: &str| s.split('\0').next().unwrap_or("").to_owned();
        let (map_cpuid, cpuid) = (c_string(map_cpuid), c_string(cpuid));
        match self {
            CpuidRule::X86 => x86(&map_cpuid, &cpuid),
            CpuidRule::Arm64 => midr::matches(&map_cpuid, &cpuid),
            CpuidRule::Regex => whole_match(&map_cpuid, &cpuid, cpuid.len()),
        }
    }
}

/// Whether the leftmost-longest match of `pattern` in `cpuid` is `len`
/// bytes long (perf compares lengths only).
fn whole_match(pattern: &str, cpuid: &str, len: usize) -> bool {
    let Ok(regex) = regex::Regex::new(pattern) else {
        return false;
    };
    regex
        .find(cpuid)
        .is_some_and(|(start, end)| end - start == len)
}

/// x86's `is_full_cpuid`: exactly three `-`.
fn is_full(id: &str) -> bool {
    id.matches('-').count() == 3
}

/// x86's `strcmp_cpuid_str`.
fn x86(map_cpuid: &str, cpuid: &str) -> bool {
    let full_map = is_full(map_cpuid);
    let full_cpuid = is_full(cpuid);
    if full_map && !full_cpuid {
        return false;
    }
    let len = match cpuid.rfind('-') {
        Some(last) if !full_map && full_cpuid => last,
        _ => cpuid.len(),
    };
    whole_match(map_cpuid, cpuid, len)
}

#[cfg(test)]
mod tests;
