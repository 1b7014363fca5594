//! perf's vendor event names (feature `vendor`): the running CPU's own
//! events (`inst_retired.any`, `l2_rqsts.miss`, `cpu_cycles`), from perf's
//! JSON tables in the GPL-2.0-only package
//! [perf-event-vendor](perf_event_vendor), as aliases of the PMUs they
//! belong to, so that the event-string parser resolves them as perf does:
//! `inst_retired.any`, `cpu/inst_retired.any/`, `cpu/event=inst_retired.any/`,
//! with modifiers and the user's terms after them.
//!
//! perf (since Linux 4.7; 6.12's `tools/perf/util/pmu.c` followed
//! here) chooses a table per PMU by the CPU id ([`running_cpuid`], or the
//! `PERF_CPUID` environment variable) and adds its events to the PMUs:
//!
//! - events without a PMU (`default_core`) on every core PMU (`cpu`,
//!   `cpum_cf`, or a PMU with a `cpus` file: `cpu_core` and `cpu_atom` of
//!   hybrid Intel, `armv8_pmuv3_0`, `armv8_cortex_a53`);
//! - events of a named PMU (`cpu_core`, `cpu_atom`, `uncore_imc`) on the PMU
//!   of that name, or, for an uncore PMU (one with a `cpumask` file), on the
//!   PMUs named so with a numeric suffix (`uncore_imc_0`, `uncore_imc0`;
//!   `socket,pmu` names match `socket0_pmu1`: perf's
//!   `pmu_uncore_alias_match`);
//! - the events of sys tables on an uncore PMU whose `identifier` file
//!   matches the event's `Compat` regular expression as a whole
//!   (`pmu_add_sys_aliases`);
//! - an event named as one of the PMU's sysfs `events/` files replaces
//!   that alias's terms and per-package flag, and its scale and unit when
//!   it has a `ScaleUnit` (perf's `update_alias`); otherwise the first
//!   event of a name wins (names compared ignoring ASCII case);
//! - `ScaleUnit` (`64Bytes`, `6.103515625e-5MiB`) is a scale factor (the
//!   longest number at its start, as `strtod` reads it) and the rest as the
//!   unit; `PerPkg` the per-package flag; the JSON's `period=` becomes the
//!   event's `sample_period`, which the user's own `period=` overrides.
//!
//! ```no_run
//! use perf_event_host::parse::parse;
//! use perf_event_host::vendor::VendorSystem;
//!
//! let system = VendorSystem::discover()?;
//! let list = parse("{inst_retired.any,cpu_clk_unhalted.thread}:u", &system)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The tables are Linux 6.12's unless a constructor is given another
//! kernel's ([`VendorSystem::with_kernel_tables`]: 6.1's with feature
//! `vendor-6-1`), so that a tool matches the perf it is compared with; for
//! perf stat's `-M`, [`VendorSystem::core_model`] is the table whose
//! metrics are selected and [`VendorSystem::set_literals`] gives the
//! machine's values of the expressions' literals.
//!
//! Every use of perf-event-vendor's API in this package is in this module.

mod cpuid;
mod literals;

pub use cpuid::{arm64_cpuid, riscv_cpuid, running_cpuid, x86_cpuid, CpuIdError, PERF_CPUID};
pub use literals::LiteralMachine;

use crate::parse::{Resolver, System, TracepointName};
use crate::sysfs::{Alias, Pmu, Scale, SysfsError, TracepointError};
use core::fmt;
use perf_event_vendor::{Model, Tables, VendorEvent};

/// The version of the kernel source whose `tools/perf/pmu-events` the
/// tables were generated from (`6.12.117-1~deb12u1`, the Debian
/// `linux-source` package's); `None` on a target without tables.
pub fn tables_version() -> Option<&'static str> {
    perf_event_vendor::origin().map(|o| o.version)
}

/// The table perf uses for one PMU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PmuTable {
    /// The PMU's name.
    pub pmu: String,
    /// The CPU id perf compares with its mapfile for this PMU; `None` where
    /// perf has none (an arm64 PMU without CPUs).
    pub cpuid: Option<String>,
    /// The table's name (`skylakex`, `arm/cortex-a72`); `None` when no
    /// mapfile row matches the id.
    pub model: Option<&'static str>,
}

/// One vendor event as an alias of one PMU, with what `perf list` shows
/// of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VendorAlias {
    /// The PMU the alias was added to (`cpu`, `cpu_atom`, `uncore_imc_0`).
    pub pmu: String,
    /// The table it comes from (`skylakex`, `freescale/imx8mm/sys`).
    pub model: &'static str,
    /// The event as perf's table holds it: name, terms, topic,
    /// description, `Deprecated`, ...
    pub event: &'static VendorEvent,
    /// Whether it replaced the terms of a sysfs `events/` alias of that
    /// name (perf's `update_alias`).
    pub replaced_sysfs: bool,
}

/// Why the vendor events could not be added.
#[derive(Debug)]
#[non_exhaustive]
pub enum VendorError {
    /// Reading the PMUs or tracefs.
    Sysfs(SysfsError),
    /// Building the running CPU's id.
    CpuId(CpuIdError),
    /// A table's event whose terms are not perf's term syntax (a damaged
    /// table: perf refuses the alias too, "Cannot parse alias").
    Terms {
        /// The event.
        event: &'static str,
        /// Its terms.
        terms: &'static str,
    },
}

impl fmt::Display for VendorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VendorError::Sysfs(e) => e.fmt(f),
            VendorError::CpuId(e) => e.fmt(f),
            VendorError::Terms { event, terms } => write!(
                f,
                "vendor event {event}: its terms {terms:?} are not perf's term syntax"
            ),
        }
    }
}

impl std::error::Error for VendorError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            VendorError::Sysfs(e) => Some(e),
            VendorError::CpuId(e) => Some(e),
            VendorError::Terms { .. } => None,
        }
    }
}

/// A [`System`] whose PMUs hold the vendor events of their CPU's table as
/// aliases (see the module docs): a [`Resolver`] for
/// [`parse`](crate::parse::parse), and the events for a `perf list`.
#[derive(Debug)]
pub struct VendorSystem {
    system: System,
    kernel: &'static Tables,
    tables: Vec<PmuTable>,
    aliases: Vec<VendorAlias>,
}

impl VendorSystem {
    /// This machine: [`System::discover`], each PMU's table by
    /// [`running_cpuid`] (`PERF_CPUID` honoured as perf does).
    pub fn discover() -> Result<VendorSystem, VendorError> {
        VendorSystem::with_running_cpuid(System::discover().map_err(VendorError::Sysfs)?)
    }

    /// `system`'s PMUs with the tables [`running_cpuid`] chooses for them.
    pub fn with_running_cpuid(system: System) -> Result<VendorSystem, VendorError> {
        VendorSystem::with_kernel_tables(system, newest(), None)
    }

    /// `system`'s PMUs with the table of the CPU id `cpuid` for every PMU,
    /// as perf with `PERF_CPUID=cpuid` (fixture trees, other machines'
    /// tables). The id is compared by the rule of the target's
    /// architecture: this package has only the target's tables.
    pub fn with_cpuid(system: System, cpuid: &str) -> Result<VendorSystem, VendorError> {
        VendorSystem::with_kernel_tables(system, newest(), Some(cpuid))
    }

    /// `system`'s PMUs with the tables of one kernel's perf
    /// ([`perf_event_vendor::kernels`]: Linux 6.12's always, 6.1's with
    /// perf-event-vendor's feature `linux-6-1`, which this package's
    /// feature `vendor-6-1` turns on), chosen by that perf's CPU id rule
    /// ([`Tables::model_for_cpuid`]) for `cpuid`, or for each PMU's
    /// [`running_cpuid`] when `None`: what a tool compared with that perf
    /// uses. The PMUs get their events by perf 6.12's rules (module docs)
    /// whichever the tables. The other constructors use the newest tables.
    pub fn with_kernel_tables(
        system: System,
        tables: &'static Tables,
        cpuid: Option<&str>,
    ) -> Result<VendorSystem, VendorError> {
        if let Some(cpuid) = cpuid {
            return VendorSystem::build(system, tables, |_| Some(cpuid.to_owned()));
        }
        // One id for every PMU but on arm64 (each PMU's CPUs' MIDR).
        let per_pmu = cfg!(target_arch = "aarch64") && std::env::var_os(PERF_CPUID).is_none();
        let mut shared = None;
        let mut ids = Vec::new();
        for pmu in system.pmus.all() {
            let id = match &shared {
                Some(id) => Clone::clone(id),
                None => running_cpuid(pmu).map_err(VendorError::CpuId)?,
            };
            if !per_pmu {
                shared = Some(id.clone());
            }
            ids.push(id);
        }
        let mut ids = ids.into_iter();
        VendorSystem::build(system, tables, |_| ids.next().flatten())
    }

    /// The tables this system's vendor events come from (their
    /// [`Tables::kernel`] names the perf).
    pub fn kernel_tables(&self) -> &'static Tables {
        self.kernel
    }

    /// The table `perf stat -M` takes its metrics from: the first core
    /// PMU's ([`PmuTable::model`]; `cpu` on x86), else (no core PMU: a
    /// machine without a hardware PMU, whose CPU perf still finds a table
    /// for by its id) the first PMU's that has one.
    pub fn core_model(&self) -> Option<&'static Model> {
        let core = self.system.pmus().iter().position(cpuid::is_core);
        let name = core
            .and_then(|i| self.tables.get(i))
            .and_then(|t| t.model)
            .or_else(|| self.tables.iter().find_map(|t| t.model))?;
        self.kernel.model(name)
    }

    fn build(
        mut system: System,
        kernel: &'static Tables,
        mut cpuid: impl FnMut(&Pmu) -> Option<String>,
    ) -> Result<VendorSystem, VendorError> {
        let mut tables = Vec::new();
        let mut aliases = Vec::new();
        for pmu in system.pmus.all_mut() {
            let id = cpuid(pmu);
            let model = id.as_deref().and_then(|id| kernel.model_for_cpuid(id));
            tables.push(PmuTable {
                pmu: pmu.name().to_owned(),
                cpuid: id,
                model: model.map(|m| m.name),
            });
            let (name, core, uncore) = (pmu.name().to_owned(), cpuid::is_core(pmu), is_uncore(pmu));
            let mut added = Vec::new();
            if let Some(model) = model {
                add_events(pmu, model, &mut added, |e| {
                    name == e.pmu
                        || uncore && uncore_alias_match(e.pmu, &name)
                        || core && e.pmu == "default_core"
                })?;
            }
            if let Some(id) = pmu.identifier().filter(|_| uncore).map(str::to_owned) {
                for model in kernel.models().iter().filter(|m| m.is_sys()) {
                    add_events(pmu, model, &mut added, |e| {
                        e.compat.is_some_and(|c| {
                            uncore_alias_match(e.pmu, &name)
                                && perf_event_vendor::CpuidRule::Regex.matches(c, &id)
                        })
                    })?;
                }
            }
            aliases.extend(added);
        }
        Ok(VendorSystem {
            system,
            kernel,
            tables,
            aliases,
        })
    }

    /// The PMUs (with the vendor aliases) and the tracefs.
    pub fn system(&self) -> &System {
        &self.system
    }

    /// The table chosen for each PMU, in the PMUs' order.
    pub fn tables(&self) -> &[PmuTable] {
        &self.tables
    }

    /// Every vendor event added, per PMU in the PMUs' order, then in the
    /// table's order.
    pub fn aliases(&self) -> &[VendorAlias] {
        &self.aliases
    }
}

impl Resolver for VendorSystem {
    fn pmus(&self) -> &[Pmu] {
        self.system.pmus()
    }
    fn tracepoint_id(&self, system: &str, event: &str) -> Result<u64, TracepointError> {
        self.system.tracepoint_id(system, event)
    }
    fn tracepoints(&self) -> Result<&[TracepointName], TracepointError> {
        self.system.tracepoints()
    }
}

/// The newest embedded tables (Linux 6.12's).
fn newest() -> &'static Tables {
    &perf_event_vendor::kernels()[0]
}

/// perf 6.12's `pmu_is_uncore`: the PMU has a `cpumask` file.
fn is_uncore(pmu: &Pmu) -> bool {
    pmu.cpumask().is_some()
}

/// perf 6.12's `perf_pmu__match_ignoring_suffix`: `pmu_name` is `tok`, or
/// `tok` followed by an optional `_` and a suffix of hex digits (more than
/// two when one is not a decimal digit).
fn match_ignoring_suffix(pmu_name: &str, tok: &str) -> bool {
    let Some(rest) = pmu_name.strip_prefix(tok) else {
        return false;
    };
    if rest.is_empty() {
        return true;
    }
    let suffix = rest.strip_prefix('_').unwrap_or(rest);
    if suffix.is_empty() || !suffix.bytes().all(|b| b.is_ascii_hexdigit()) {
        return false;
    }
    let has_hex = suffix.bytes().any(|b| !b.is_ascii_digit());
    !has_hex || suffix.len() > 2
}

/// perf 6.12's `pmu_uncore_alias_match`: the table's PMU `events_pmu`
/// (`uncore_imc`, or `socket,pmu` tokens found in order in the name) names
/// the sysfs PMU `name`.
fn uncore_alias_match(events_pmu: &str, name: &str) -> bool {
    if !events_pmu.contains(',') {
        return match_ignoring_suffix(name, events_pmu);
    }
    let mut tokens = events_pmu.split(',').filter(|t| !t.is_empty()).peekable();
    let mut name = name;
    while let Some(tok) = tokens.next() {
        let Some(at) = name.find(tok) else {
            return false;
        };
        name = &name[at..];
        match tokens.peek() {
            None => return match_ignoring_suffix(name, tok),
            // perf advances by the next token's length (its own quirk).
            Some(next) => name = name.get(next.len()..).unwrap_or(""),
        }
    }
    true
}

/// Adds `model`'s events that `belongs` to `pmu` by perf's rules (module
/// docs), recording each in `added`.
fn add_events(
    pmu: &mut Pmu,
    model: &'static Model,
    added: &mut Vec<VendorAlias>,
    mut belongs: impl FnMut(&VendorEvent) -> bool,
) -> Result<(), VendorError> {
    let mut new = Vec::new();
    let mut names: std::collections::HashSet<String> = added
        .iter()
        .map(|a| a.event.name.to_ascii_lowercase())
        .collect();
    for &event in &model.events {
        if !belongs(event) {
            continue;
        }
        if !names.insert(event.name.to_ascii_lowercase()) {
            continue; // perf_pmu__new_alias: the first of a name wins.
        }
        let taken = |n: &str| n.eq_ignore_ascii_case(event.name);
        let sysfs = pmu.aliases().iter().find(|a| taken(a.name())).cloned();
        let bad = || VendorError::Terms {
            event: event.name,
            terms: event.terms,
        };
        let alias = match &sysfs {
            // update_alias: the sysfs alias keeps its name, scale and unit
            // unless the event has a ScaleUnit.
            Some(old) => {
                let mut alias = Alias::new(old.name(), event.terms).map_err(|_| bad())?;
                alias.scale = old.scale().cloned();
                alias.unit = old.unit().map(str::to_owned);
                alias.snapshot = old.snapshot();
                alias
            }
            None => Alias::new(event.name, event.terms).map_err(|_| bad())?,
        };
        let mut alias = alias.with_per_pkg(event.perpkg);
        if let Some(unit) = event.unit {
            let (scale, unit) = scale_unit(unit);
            alias.scale = Some(scale);
            alias.unit = Some(unit.to_owned());
        }
        new.push(alias);
        added.push(VendorAlias {
            pmu: pmu.name().to_owned(),
            model: model.name,
            event,
            replaced_sysfs: sysfs.is_some(),
        });
    }
    pmu.add_aliases(new);
    Ok(())
}

/// A JSON `ScaleUnit` as perf's `perf_pmu__convert_scale` reads it
/// (perf-event-vendor's [`ScaleUnit`](perf_event_vendor::metricgroup::ScaleUnit),
/// C's `strtod`): the longest number at the start (0 when there is none)
/// and the rest as the unit.
fn scale_unit(text: &str) -> (Scale, &str) {
    let parsed = perf_event_vendor::metricgroup::ScaleUnit::parse(text);
    let number = &text[..text.len() - parsed.unit.len()];
    (
        Scale {
            text: number.trim().to_owned(),
            factor: parsed.scale,
        },
        &text[number.len()..],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_units_as_strtod_reads_them() {
        let cases = [
            ("64Bytes", 64.0, "Bytes"),
            ("6.103515625e-5MiB", 6.103515625e-5, "MiB"),
            ("1MB", 1.0, "MB"),
            ("MB", 0.0, "MB"),
            ("100%", 100.0, "%"),
            ("1e3Events", 1000.0, "Events"),
        ];
        for (text, factor, unit) in cases {
            let (scale, rest) = scale_unit(text);
            assert_eq!((scale.factor, rest), (factor, unit), "{text}");
        }
    }

    #[test]
    fn uncore_names_as_perf_matches_them() {
        assert!(uncore_alias_match("uncore_imc", "uncore_imc_0"));
        assert!(uncore_alias_match("uncore_imc", "uncore_imc"));
        assert!(uncore_alias_match("uncore_cha", "uncore_cha_12"));
        assert!(!uncore_alias_match(
            "uncore_imc",
            "uncore_imc_free_running_0"
        ));
        assert!(!uncore_alias_match("uncore_imc", "uncore_imcx_0"));
        // hex suffixes need more than two digits when one is a letter
        assert!(uncore_alias_match("hisi_sccl,ddrc", "hisi_sccl1_ddrc0"));
        assert!(match_ignoring_suffix("arm_cmn_1ab", "arm_cmn"));
        assert!(!match_ignoring_suffix("arm_cmn_ab", "arm_cmn"));
        assert!(match_ignoring_suffix("imx8_ddr0", "imx8_ddr"));
    }
}
