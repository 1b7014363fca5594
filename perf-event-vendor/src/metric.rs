//! [`Metric`]: one metric of a model's table.

/// How perf aggregates a metric (`enum aggr_mode_class`, the JSON
/// `AggregationMode`; powerpc's hv_24x7 metrics).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MetricAggrMode {
    /// `PerChip`: once per chip.
    PerChip,
    /// `PerCore`: once per core.
    PerCore,
}

/// How perf may group a metric's events (`enum metric_event_groups`, the
/// JSON `MetricConstraint`); no value means in one group, perf's default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventGrouping {
    /// `NO_GROUP_EVENTS`: never in a group.
    NoGroupEvents,
    /// `NO_GROUP_EVENTS_NMI` (and its alias `NO_NMI_WATCHDOG`): not in a
    /// group while the NMI watchdog is on.
    NoGroupEventsNmi,
    /// `NO_GROUP_EVENTS_SMT`: not in a group while SMT is on.
    NoGroupEventsSmt,
}

/// One metric of a model (`struct pmu_metric`, Linux 6.12; in Linux 6.1 an
/// entry of `struct pmu_event` with a metric name). Strings are the JSON's
/// as written; unset values are `None`, as are the fields Linux 6.1's
/// tables do not have (`threshold`, `no_group_groups`, `default_groups`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Metric {
    /// `MetricName`, with its case (`IPC`, `tma_backend_bound`).
    pub name: &'static str,
    /// The PMU whose events it counts (`default_core`, `cpu_core`, ...: as
    /// [`VendorEvent::pmu`](crate::VendorEvent::pmu)).
    pub pmu: &'static str,
    /// `MetricExpr` as the JSON writes it (`INST_RETIRED.ANY / CPU_CLK_UNHALTED.THREAD`).
    /// perf 6.12's jevents also parses and simplifies it (`metric.py`)
    /// before compiling it in; the two read the same. perf 6.1 compiles in
    /// the string.
    pub expr: &'static str,
    /// `MetricGroup`: the groups it is in, separated by `;`
    /// ([`Metric::group_names`]).
    pub groups: Option<&'static str>,
    /// `MetricThreshold`: the expression that tells when the value is bad
    /// (not in Linux 6.1).
    pub threshold: Option<&'static str>,
    /// `ScaleUnit` (`100%`, `1GHz`): the scale and unit of the value.
    pub unit: Option<&'static str>,
    /// `BriefDescription`, fixed as for events.
    pub desc: Option<&'static str>,
    /// `Compat`: for the metrics of a sys table, the PMU identifier.
    pub compat: Option<&'static str>,
    /// `AggregationMode`.
    pub aggr_mode: Option<MetricAggrMode>,
    /// `MetricConstraint` (perf 6.1 knows only `NO_NMI_WATCHDOG`).
    pub event_grouping: Option<EventGrouping>,
    /// `MetricgroupNoGroup`: the groups in which its events are not grouped
    /// (not in Linux 6.1).
    pub no_group_groups: Option<&'static str>,
    /// `DefaultMetricgroupName`: the group perf shows it under when it is
    /// shown by default (`perf stat` with no events; not in Linux 6.1).
    pub default_groups: Option<&'static str>,
}

impl Metric {
    /// The names of [`Metric::groups`] (`;`-separated, empty ones skipped).
    pub fn group_names(&self) -> impl Iterator<Item = &'static str> {
        self.groups
            .unwrap_or("")
            .split(';')
            .filter(|g| !g.is_empty())
    }
}
