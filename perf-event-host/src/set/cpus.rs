//! CPU sets: the online CPUs, a PMU's CPUs, and user lists checked against
//! the machine, with every CPU that cannot be used reported and why.

use crate::sysfs::{CpuList, Pmu, SysfsError};
use std::fmt;
use std::path::Path;

/// A set of CPU numbers, ascending and without duplicates.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CpuSet {
    cpus: Vec<u32>,
}

impl CpuSet {
    /// The CPUs of `list`, sorted and deduplicated.
    pub fn from_list(list: &CpuList) -> CpuSet {
        CpuSet::from_cpus(list.iter())
    }

    /// The given CPUs, sorted and deduplicated.
    pub fn from_cpus(cpus: impl IntoIterator<Item = u32>) -> CpuSet {
        let mut cpus: Vec<u32> = cpus.into_iter().collect();
        cpus.sort_unstable();
        cpus.dedup();
        CpuSet { cpus }
    }

    /// The CPUs, ascending.
    pub fn as_slice(&self) -> &[u32] {
        &self.cpus
    }

    /// Whether `cpu` is in the set.
    pub fn contains(&self, cpu: u32) -> bool {
        self.cpus.binary_search(&cpu).is_ok()
    }

    /// How many CPUs.
    pub fn len(&self) -> usize {
        self.cpus.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.cpus.is_empty()
    }

    /// The CPUs in both sets.
    pub fn intersection(&self, other: &CpuSet) -> CpuSet {
        CpuSet {
            cpus: self
                .cpus
                .iter()
                .copied()
                .filter(|&c| other.contains(c))
                .collect(),
        }
    }
}

/// Renders the set in the kernel's list format (`0-3,8`).
impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut i = 0;
        while i < self.cpus.len() {
            let first = self.cpus[i];
            let mut last = first;
            while i + 1 < self.cpus.len() && self.cpus[i + 1] == last + 1 {
                i += 1;
                last = self.cpus[i];
            }
            let sep = if first == self.cpus[0] { "" } else { "," };
            if first == last {
                write!(f, "{sep}{first}")?;
            } else {
                write!(f, "{sep}{first}-{last}")?;
            }
            i += 1;
        }
        Ok(())
    }
}

/// Why a requested CPU is left out of a selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CpuProblem {
    /// The CPU exists (`possible`) but is offline: perf_event_open on it
    /// fails with ENODEV. Bring it up with
    /// `echo 1 > /sys/devices/system/cpu/cpuN/online`.
    Offline,
    /// The CPU is not in `possible`: this machine has no such CPU
    /// (perf_event_open fails with EINVAL).
    Nonexistent,
    /// The CPU is online but the PMU does not cover it (its `cpus` or
    /// `cpumask` file leaves it out).
    NotOnPmu,
}

/// A CPU left out of a selection, with the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RejectedCpu {
    /// The CPU number.
    pub cpu: u32,
    /// Why it is left out.
    pub problem: CpuProblem,
}

impl fmt::Display for RejectedCpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cpu = self.cpu;
        match self.problem {
            CpuProblem::Offline => write!(
                f,
                "CPU {cpu} is offline (bring it up with `echo 1 > \
                 /sys/devices/system/cpu/cpu{cpu}/online`)"
            ),
            CpuProblem::Nonexistent => write!(
                f,
                "CPU {cpu} does not exist on this machine (see /sys/devices/system/cpu/possible)"
            ),
            CpuProblem::NotOnPmu => write!(f, "CPU {cpu} is not covered by this PMU"),
        }
    }
}

/// The CPUs a selection keeps, and those it had to leave out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuSelection {
    /// The usable CPUs.
    pub cpus: CpuSet,
    /// The CPUs asked for that cannot be used, each with its reason.
    pub rejected: Vec<RejectedCpu>,
}

/// The machine's CPUs: the kernel's `possible` and `online` lists (under
/// [`CpuList::DIR`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cpus {
    possible: CpuSet,
    online: CpuSet,
}

impl Cpus {
    /// Reads the running system's CPUs.
    pub fn read() -> Result<Cpus, SysfsError> {
        Cpus::read_from(Path::new(CpuList::DIR))
    }

    /// Reads `possible` and `online` under `dir` (a fixture tree). A
    /// missing `possible` is taken to equal `online`.
    pub fn read_from(dir: &Path) -> Result<Cpus, SysfsError> {
        let online = CpuSet::from_list(&CpuList::read_required(&dir.join("online"))?);
        let possible = CpuList::read(&dir.join("possible"))?
            .map_or_else(|| online.clone(), |l| CpuSet::from_list(&l));
        Ok(Cpus { possible, online })
    }

    /// From known sets (for callers that already know the topology).
    pub fn from_sets(possible: CpuSet, online: CpuSet) -> Cpus {
        Cpus { possible, online }
    }

    /// The online CPUs.
    pub fn online(&self) -> &CpuSet {
        &self.online
    }

    /// The possible CPUs (online or not).
    pub fn possible(&self) -> &CpuSet {
        &self.possible
    }

    /// Checks a user's list (`-C 0-3,8`): online CPUs are kept, offline and
    /// nonexistent ones are reported, never dropped silently.
    pub fn select(&self, list: &CpuList) -> CpuSelection {
        let mut sel = CpuSelection::default();
        let mut keep = Vec::new();
        for cpu in CpuSet::from_list(list).cpus {
            if self.online.contains(cpu) {
                keep.push(cpu);
            } else {
                let problem = if self.possible.contains(cpu) {
                    CpuProblem::Offline
                } else {
                    CpuProblem::Nonexistent
                };
                sel.rejected.push(RejectedCpu { cpu, problem });
            }
        }
        sel.cpus = CpuSet { cpus: keep };
        sel
    }

    /// The CPUs events of `pmu` open on: its `cpus` file (core PMUs of
    /// hybrid machines), else its `cpumask` (uncore: one CPU per socket),
    /// else every online CPU. Listed CPUs that are offline are reported.
    pub fn of_pmu(&self, pmu: &Pmu) -> CpuSelection {
        match pmu.cpus().or(pmu.cpumask()) {
            Some(list) => self.select(list),
            None => CpuSelection {
                cpus: self.online.clone(),
                rejected: Vec::new(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_lists_report_offline_and_nonexistent() {
        let cpus = Cpus::from_sets(CpuSet::from_cpus(0..8), CpuSet::from_cpus([0, 1, 2, 3, 5]));
        let sel = cpus.select(&CpuList::parse("0-1,3-5,9").unwrap());
        assert_eq!(sel.cpus.as_slice(), [0, 1, 3, 5]);
        assert_eq!(
            sel.rejected,
            [
                RejectedCpu {
                    cpu: 4,
                    problem: CpuProblem::Offline
                },
                RejectedCpu {
                    cpu: 9,
                    problem: CpuProblem::Nonexistent
                }
            ]
        );
        assert!(sel.rejected[0].to_string().contains("offline"));
        assert_eq!(CpuSet::from_cpus([5, 0, 1, 2, 8, 1]).to_string(), "0-2,5,8");
        assert_eq!(CpuSet::default().to_string(), "");
    }
}
