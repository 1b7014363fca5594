//! [`VendorEvent`]: one named event of a model's table.

/// One event of a model, as perf's compiled tables hold it (`struct
/// pmu_event` of `tools/perf/pmu-events/pmu-events.h`, Linux 6.12; in Linux
/// 6.1 the same struct also holds the metrics, and an entry with a name is
/// an event) and `perf list` shows it. An unset value is `None` (perf:
/// `NULL`). Where the kernels' jevents.py differ, the field says so.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct VendorEvent {
    /// The event name, lower-cased as jevents writes it
    /// (`inst_retired.any`).
    pub name: &'static str,
    /// The PMU it belongs to, from the JSON `Unit` by jevents'
    /// `unit_to_pmu` (`cpu_core`, `uncore_imc`, `cpum_cf`); `default_core`
    /// when the JSON names none: the CPU's core PMU (`cpu` on most
    /// machines; perf 6.1's table holds `NULL` there, which perf 6.1 reads
    /// the same way). 6.1's mapping knows fewer units (no `PAI-EXT`,
    /// `UMCPMC`, `imx9_ddr`, `ali_drw`, `arm_cmn`: those are
    /// `uncore_<unit>`).
    pub pmu: &'static str,
    /// The perf terms jevents builds (`event=0xc0,period=2000003`,
    /// `event=0xd1,period=100003,umask=1`, `config=0x10`): the event code
    /// first, then the fields of `EventCode`'s neighbours that are not zero,
    /// `Filter` and the MSR term, as perf's PMU format parses them.
    /// Linux 6.1 writes the number `0` or in hex (`event=0x5`), and its
    /// 8 fields (`any` .. `umask`, no `eventid`) as the JSON spells them
    /// unless the string is `0` (`umask=0x01`, `cmask=0x0`), where 6.12
    /// drops zeros and canonicalizes (`umask=1`).
    pub terms: &'static str,
    /// The topic: the JSON file's name without `.json`, `-` as space
    /// (`cache`, `floating point`), `metrics` for `*metrics.json`.
    pub topic: &'static str,
    /// `BriefDescription` as jevents fixes it (a final `.`, `. ` or `.  `
    /// removed) with its notes (`Supports address when precise`, `Spec
    /// update: ...`, `(Precise event)`, `(Must be precise)`); in Linux 6.1
    /// an event of a named PMU also ends in `Unit: <pmu> ` (after `. `).
    pub desc: Option<&'static str>,
    /// `ScaleUnit` (`64Bytes`, `1MB`): the scale and unit perf applies to
    /// the count.
    pub unit: Option<&'static str>,
    /// `Compat`: for the events of a sys table, the PMU identifier they
    /// belong to.
    pub compat: Option<&'static str>,
    /// `Deprecated`: perf hides it from `perf list` unless asked (6.12:
    /// the value `1`; 6.1: any value).
    pub deprecated: bool,
    /// `PerPkg`: counted once per package (socket), not per CPU (the
    /// value `1`).
    pub perpkg: bool,
}
