//! Hybrid CPUs: generalized hardware events expanded to one event per core
//! PMU (Intel `cpu_core` / `cpu_atom` since Linux 5.13, arm64 big.LITTLE
//! PMUs such as `armv8_cortex_a53` + `armv8_cortex_a76`), each opened only
//! on that PMU's CPUs.

use super::cpus::{CpuSet, Cpus};
use super::spec::EventSpec;
use crate::sysfs::Pmus;
use perf_event_core::attr::Attr;
use perf_event_core::sys;

/// `PERF_PMU_TYPE_SHIFT`: for `PERF_TYPE_HARDWARE` and `PERF_TYPE_HW_CACHE`
/// events, `config` bits 32-63 name the core PMU that must count the event
/// (the "extended type", Linux 5.13 on Intel hybrid, 6.6 on arm64); zero
/// means "the PMU of the CPU the event is opened on".
pub const PMU_TYPE_SHIFT: u32 = 32;

/// A core PMU: one kind of CPU core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorePmu {
    /// The PMU's name (`cpu_core`, `armv8_cortex_a76`, or `cpu`).
    pub name: String,
    /// Its `type` number.
    pub type_id: u32,
    /// The online CPUs it covers.
    pub cpus: CpuSet,
}

/// The core PMUs of a machine, as perf finds them: `cpu` (one core type),
/// or every PMU with a `cpus` file (`cpu_core` / `cpu_atom`, arm64 PMUs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CorePmus {
    pmus: Vec<CorePmu>,
}

impl CorePmus {
    /// Finds the core PMUs among `pmus`, their CPUs limited to those online.
    pub fn find(pmus: &Pmus, cpus: &Cpus) -> CorePmus {
        let mut found: Vec<CorePmu> = pmus
            .all()
            .iter()
            .filter(|p| p.name() == "cpu" || p.cpus().is_some())
            .map(|p| CorePmu {
                name: p.name().to_owned(),
                type_id: p.type_id(),
                cpus: cpus.of_pmu(p).cpus,
            })
            .collect();
        found.sort_by_key(|p| p.type_id);
        CorePmus { pmus: found }
    }

    /// The core PMUs, by type number.
    pub fn all(&self) -> &[CorePmu] {
        &self.pmus
    }

    /// Whether the machine has more than one core type.
    pub fn is_hybrid(&self) -> bool {
        self.pmus.len() > 1
    }

    /// Expands `spec`: a generalized hardware or cache event on a hybrid
    /// machine becomes one event per core PMU, named `pmu/name/`, with the
    /// PMU type in config bits 32-63, restricted to that PMU's CPUs. Its
    /// fallback (for kernels that refuse the extended type with ENOENT or
    /// EINVAL) is the plain generalized event opened per CPU on the same
    /// CPUs: the kernel then picks the PMU of the CPU. (Opening with
    /// `type` = the PMU's own type would make `config` a raw, model-specific
    /// encoding on both x86 and arm64, so it is not a fallback.)
    /// Anything else, or a machine with one core type, is returned as is.
    pub fn expand(&self, spec: &EventSpec) -> Vec<EventSpec> {
        let raw = spec.attr.to_raw();
        let generalized = matches!(raw.type_, sys::PERF_TYPE_HARDWARE | sys::PERF_TYPE_HW_CACHE);
        if !self.is_hybrid() || !generalized || raw.config >> PMU_TYPE_SHIFT != 0 {
            return vec![spec.clone()];
        }
        self.pmus
            .iter()
            .map(|pmu| {
                let mut ext = raw;
                ext.config = raw.config | (pmu.type_id as u64) << PMU_TYPE_SHIFT;
                let cpus = match &spec.cpus {
                    Some(c) => c.intersection(&pmu.cpus),
                    None => pmu.cpus.clone(),
                };
                EventSpec {
                    name: spec.name.clone(),
                    attr: Attr::from_raw(ext),
                    pmu: Some(pmu.name.clone()),
                    cpus: Some(cpus),
                    fallback: Some(spec.attr),
                    ..spec.clone()
                }
            })
            .collect()
    }

    /// Expands a group: a group holding a generalized hardware event becomes
    /// one group per core PMU (a group's events must share one PMU), every
    /// member restricted to that PMU's CPUs; other groups are unchanged.
    pub fn expand_group(&self, group: &[EventSpec]) -> Vec<Vec<EventSpec>> {
        let expanded: Vec<Vec<EventSpec>> = group.iter().map(|e| self.expand(e)).collect();
        if expanded.iter().all(|e| e.len() == 1) {
            return vec![group.to_vec()];
        }
        self.pmus
            .iter()
            .enumerate()
            .map(|(i, pmu)| {
                expanded
                    .iter()
                    .map(|copies| {
                        if copies.len() > 1 {
                            copies[i].clone()
                        } else {
                            let mut e = copies[0].clone();
                            e.cpus = Some(match &e.cpus {
                                Some(c) => c.intersection(&pmu.cpus),
                                None => pmu.cpus.clone(),
                            });
                            e.pmu = Some(pmu.name.clone());
                            e
                        }
                    })
                    .collect()
            })
            .collect()
    }
}
