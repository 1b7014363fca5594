//! The machine's values of the metric expressions' literals (`#smt_on`,
//! `#num_cpus`, `#system_tsc_freq`, ...), as perf's `expr__get_literal`
//! (`tools/perf/util/expr.c`, with `smt.c`, `cputopo.c` and x86's `tsc.c`)
//! computes them.

use super::VendorSystem;
use crate::sysfs::{self, CpuList, Siblings};
use perf_event_vendor::expr::{ExprInputs, ExprLiteral};
use std::path::{Path, PathBuf};

/// Where perf's metric literals are read from, and the run they are for
/// (perf stat's `-a` and `-C`, which `#core_wide` depends on).
#[derive(Clone, Debug)]
pub struct LiteralMachine {
    /// The sysfs mount ([`sysfs::SYSFS`]): `devices/system/cpu/{present,online,smt/active}`,
    /// each CPU's `topology/*_list`, `firmware/acpi/tables/NFIT`.
    pub sysfs: PathBuf,
    /// `/proc/cpuinfo`'s text (x86's `#system_tsc_freq`: `vendor_id` and
    /// the `model name`'s `@ N.NNGHz`).
    pub cpuinfo: String,
    /// perf stat `-a`: counting system-wide.
    pub system_wide: bool,
    /// perf stat `-C LIST`: the CPUs the user asked for.
    pub cpus: Option<CpuList>,
}

impl LiteralMachine {
    /// This machine (`/sys`, `/proc/cpuinfo`), for a run that counts a
    /// command (not system-wide, no CPU list).
    pub fn running() -> Result<LiteralMachine, sysfs::SysfsError> {
        Ok(LiteralMachine {
            sysfs: PathBuf::from(sysfs::SYSFS),
            cpuinfo: sysfs::cpuinfo()?,
            system_wide: false,
            cpus: None,
        })
    }
}

/// The distinct sibling lists of the online CPUs (perf's `cpu_topology`:
/// CPUs 0 to the highest present one that are online, each list counted
/// once, compared as written).
struct SiblingCounts {
    packages: usize,
    dies: usize,
    cores: Vec<CpuList>,
}

fn distinct(lists: &mut Vec<CpuList>, list: Option<CpuList>) {
    if let Some(list) = list {
        if !lists.contains(&list) {
            lists.push(list);
        }
    }
}

fn sibling_counts(cpu_dir: &Path, max_present: u32, online: &CpuList, dies: bool) -> SiblingCounts {
    let (mut packages, mut die_lists, mut cores) = (Vec::new(), Vec::new(), Vec::new());
    for cpu in (0..max_present).filter(|&c| online.contains(c)) {
        let siblings = Siblings::read_from(cpu_dir, cpu);
        distinct(&mut packages, siblings.package);
        if dies {
            distinct(&mut die_lists, siblings.die);
        }
        distinct(&mut cores, siblings.core);
    }
    SiblingCounts {
        packages: packages.len(),
        dies: die_lists.len(),
        cores,
    }
}

/// perf's `cpu_topology__core_wide`: every requested CPU's core is
/// requested whole (no list: every CPU).
fn every_core_whole(cores: &[CpuList], requested: Option<&CpuList>) -> bool {
    let Some(requested) = requested else {
        return true;
    };
    cores.iter().all(|core| {
        let mut cpus = core.iter();
        let Some(first) = cpus.next() else {
            return true;
        };
        let has_first = requested.contains(first);
        cpus.all(|c| requested.contains(c) == has_first)
    })
}

/// x86's `arch_get_tsc_freq` as far as `/proc/cpuinfo` tells it: 0 when
/// the vendor is not Intel; else the `model name`'s `@ N.NNGHz` in Hz (0
/// when it has none).
fn tsc_freq(cpuinfo: &str) -> f64 {
    let field = |key: &str| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim())
        })
    };
    if !field("vendor_id").is_some_and(|v| v.contains("Intel")) {
        return 0.0;
    }
    cpuinfo
        .lines()
        .filter(|l| l.starts_with("model name"))
        .find_map(|l| {
            let at = l.get(11..)?.find(" @ ")?;
            let rest = &l[11 + at + 3..];
            let number = rest.strip_suffix("GHz").or_else(|| {
                let end = rest.find("GHz")?;
                Some(&rest[..end])
            })?;
            number.trim().parse::<f64>().ok().map(|g| g * 1e9)
        })
        .unwrap_or(0.0)
}

impl VendorSystem {
    /// Sets every literal perf's metric expressions read on `machine` in
    /// `inputs`, by the rules of the perf whose tables this system uses
    /// ([`VendorSystem::kernel_tables`]):
    ///
    /// - `#num_cpus`: the highest CPU of `devices/system/cpu/present` plus
    ///   one (perf's `cpu__max_present_cpu`; 4096 without the file);
    /// - `#smt_on`: `devices/system/cpu/smt/active` is 1; without that
    ///   file, some online CPU's `core_cpus_list` names more than one CPU;
    /// - `#core_wide`: system-wide (`-a`) and either SMT off or every core
    ///   of the `-C` list requested whole (perf's `core_wide`, since 6.0);
    /// - `#num_packages`, `#num_dies`, `#num_cores`: the distinct
    ///   `package_cpus_list`s, `die_cpus_list`s and `core_cpus_list`s of
    ///   the online CPUs up to the highest present one (perf compares the
    ///   lists as written; die lists only on x86_64 and s390x where CPU 0
    ///   has one: 0 elsewhere);
    /// - `#system_tsc_freq`: x86 only, 0 unless the CPU's vendor is Intel,
    ///   else the TSC frequency in Hz. perf takes it from CPUID leaf 0x15
    ///   where the CPU enumerates it and otherwise from the `model name`'s
    ///   `@ N.NNGHz`; this package runs no CPUID instruction and always
    ///   reads `/proc/cpuinfo` (the same on CPUs without leaf 0x15). 0 on
    ///   other architectures, as perf;
    /// - perf 6.12 only (6.1 does not know them and answers NaN, which is
    ///   set here for its tables): `#num_cpus_online` (the CPUs of
    ///   `online`), `#slots` (arm64: the core PMU's `caps/slots`, NaN when
    ///   absent or 0; NaN on every other architecture), `#has_pmem` (the
    ///   ACPI NFIT table exists: [`sysfs::has_acpi_nfit`]).
    pub fn set_literals(
        &self,
        inputs: &mut ExprInputs,
        machine: &LiteralMachine,
    ) -> Result<(), sysfs::SysfsError> {
        let cpu_dir = machine.sysfs.join("devices/system/cpu");
        let present = CpuList::read(&cpu_dir.join("present"))?;
        let max_present = present.map_or(4096, |p| p.iter().max().map_or(0, |m| m + 1));
        let online = CpuList::read(&cpu_dir.join("online"))?.unwrap_or_default();
        let dies = cfg!(any(target_arch = "x86_64", target_arch = "s390x"))
            && Siblings::read_from(&cpu_dir, 0).die.is_some();
        let counts = sibling_counts(&cpu_dir, max_present, &online, dies);
        let smt_on =
            sysfs::smt_active(&cpu_dir).unwrap_or_else(|| counts.cores.iter().any(|c| c.len() > 1));
        let core_wide = machine.system_wide
            && (!smt_on || every_core_whole(&counts.cores, machine.cpus.as_ref()));
        let tsc = if cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
            tsc_freq(&machine.cpuinfo)
        } else {
            0.0
        };
        let perf_6_1 = self.kernel_tables().kernel() == "6.1";
        let slots = self
            .system
            .pmus
            .all()
            .iter()
            .find(|p| super::cpuid::is_core(p))
            .and_then(|p| p.cap("slots"))
            .and_then(parse_ull)
            .filter(|&s| s != 0 && cfg!(target_arch = "aarch64") && !perf_6_1)
            .map_or(f64::NAN, |s| s as f64);
        let (online_count, has_pmem) = if perf_6_1 {
            (f64::NAN, f64::NAN)
        } else {
            let pmem = sysfs::has_acpi_nfit(&machine.sysfs);
            (online.len() as f64, if pmem { 1.0 } else { 0.0 })
        };
        let bool_value = |b: bool| if b { 1.0 } else { 0.0 };
        for (literal, value) in [
            (ExprLiteral::NumCpus, f64::from(max_present)),
            (ExprLiteral::NumCpusOnline, online_count),
            (ExprLiteral::SystemTscFreq, tsc),
            (ExprLiteral::SmtOn, bool_value(smt_on)),
            (ExprLiteral::CoreWide, bool_value(core_wide)),
            (ExprLiteral::NumPackages, counts.packages as f64),
            (ExprLiteral::NumDies, counts.dies as f64),
            (ExprLiteral::NumCores, counts.cores.len() as f64),
            (ExprLiteral::Slots, slots),
            (ExprLiteral::HasPmem, has_pmem),
        ] {
            inputs.set_literal(literal, value);
        }
        Ok(())
    }
}

/// `filename__read_ull`: decimal, or hex with `0x`.
fn parse_ull(text: &str) -> Option<u64> {
    let text = text.trim();
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsc_from_the_model_name_of_intel_cpus_only() {
        let intel =
            "vendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6154 CPU @ 3.00GHz\n";
        let amd = "vendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13 @ 2.45GHz\n";
        let no_at = "vendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Core(TM) i9\n";
        assert_eq!(tsc_freq(intel), 3e9);
        assert_eq!(tsc_freq(amd), 0.0);
        assert_eq!(tsc_freq(no_at), 0.0);
    }

    #[test]
    fn core_wide_needs_whole_cores() {
        let cores = [
            CpuList::parse("0,2").unwrap(),
            CpuList::parse("1,3").unwrap(),
        ];
        assert!(every_core_whole(&cores, None));
        assert!(every_core_whole(
            &cores,
            Some(&CpuList::parse("0,2").unwrap())
        ));
        assert!(!every_core_whole(
            &cores,
            Some(&CpuList::parse("0-1").unwrap())
        ));
        assert_eq!(parse_ull("0x10"), Some(16));
        assert_eq!(parse_ull("5\n"), Some(5));
    }
}
