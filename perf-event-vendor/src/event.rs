//! [`VendorEvent`]: one named event of a model's table.

/// One event of a model, as perf's compiled tables hold it (`struct
/// pmu_event` of `tools/perf/pmu-events/pmu-events.h`, Linux 6.12) and
/// `perf list` shows it. An unset value is `None` (perf: `NULL`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct VendorEvent {
    /// The event name, lower-cased as jevents writes it
    /// (`inst_retired.any`).
    pub name: &'static str,
    /// The PMU it belongs to, from the JSON `Unit` by jevents'
    /// `unit_to_pmu` (`cpu_core`, `uncore_imc`, `cpum_cf`); `default_core`
    /// when the JSON names none: the CPU's core PMU (`cpu` on most
    /// machines).
    pub pmu: &'static str,
    /// The perf terms jevents builds (`event=0xc0,period=2000003`,
    /// `event=0xd1,period=100003,umask=1`, `config=0x10`): the event code
    /// first, then the fields of `EventCode`'s neighbours that are not zero,
    /// `Filter` and the MSR term, as perf's PMU format parses them.
    pub terms: &'static str,
    /// The topic: the JSON file's name without `.json`, `-` as space
    /// (`cache`, `floating point`), `metrics` for `*metrics.json`.
    pub topic: &'static str,
    /// `BriefDescription` as jevents fixes it (a final `.`, `. ` or `.  `
    /// removed) with its notes (`Supports address when precise`, `Spec
    /// update: ...`, `(Precise event)`, `(Must be precise)`).
    pub desc: Option<&'static str>,
    /// `ScaleUnit` (`64Bytes`, `1MB`): the scale and unit perf applies to
    /// the count.
    pub unit: Option<&'static str>,
    /// `Compat`: for the events of a sys table, the PMU identifier they
    /// belong to.
    pub compat: Option<&'static str>,
    /// `Deprecated`: perf hides it from `perf list` unless asked.
    pub deprecated: bool,
    /// `PerPkg`: counted once per package (socket), not per CPU.
    pub perpkg: bool,
}
