//! [`Model`] (one table of perf's) and [`MapRow`] (a mapfile row).

use crate::{Metric, VendorEvent};

/// One table of perf's: a model directory of
/// `tools/perf/pmu-events/arch/<arch>/` and what its JSON files hold.
#[derive(Debug)]
#[non_exhaustive]
pub struct Model {
    /// The directory, relative to the architecture's: the mapfile's
    /// `Filename` (`skylake`, `arm/cortex-a53`, `freescale/imx8mm/sys`).
    pub name: &'static str,
    /// Its events, in the order jevents reads them (files by name, then the
    /// order within each file; perf's C table sorts them after).
    pub events: Vec<&'static VendorEvent>,
    /// Its metrics, in the same order.
    pub metrics: Vec<&'static Metric>,
}

impl Model {
    /// Whether this is a sys table (its directory is `sys` or ends in
    /// `_sys`/`-sys`; Linux 6.1: is `sys`, and no 6.1 directory ends so
    /// otherwise): perf matches its events to a PMU by their
    /// [`Compat`](VendorEvent::compat) and the PMU's identifier, never to a CPU
    /// by the mapfile.
    pub fn is_sys(&self) -> bool {
        format!("_{}", self.name.replace(['/', '-'], "_")).ends_with("_sys")
    }

    /// The events named `name` (perf compares names ignoring ASCII case),
    /// one per PMU that has it (hybrid models have `cpu_core` and
    /// `cpu_atom` events of one name).
    pub fn events_named<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = &'static VendorEvent> + 'a {
        self.events
            .iter()
            .copied()
            .filter(move |e| e.name.eq_ignore_ascii_case(name))
    }

    /// The metrics named `name`, ignoring ASCII case, one per PMU.
    pub fn metrics_named<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = &'static Metric> + 'a {
        self.metrics
            .iter()
            .copied()
            .filter(move |m| m.name.eq_ignore_ascii_case(name))
    }
}

/// One row of the architecture's `mapfile.csv` that perf keeps (rows whose
/// model has no table are dropped, as jevents 6.12 drops them; 6.1 keeps
/// every row), in the file's order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct MapRow {
    /// The CPU id or pattern (first column): compared with a CPU's id by
    /// the target's [`CpuidRule`](crate::CpuidRule).
    pub cpuid: &'static str,
    /// The JSON files' version (second column; perf does not use it).
    pub version: &'static str,
    /// The model's [`Model::name`] (third column).
    pub model: &'static str,
    /// The row's type (fourth column, `core`).
    pub kind: &'static str,
}

/// The kernel source the tables were generated from (the Debian package
/// `cargo xtask vendor-events` reads).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Origin {
    /// The Debian source package (`linux-source-6.12`, `linux-source-6.1`).
    pub package: &'static str,
    /// Its version (`6.12.117-1~deb12u1`, `6.1.172-1`).
    pub version: &'static str,
    /// The SHA-256 of the `.deb`, as pinned.
    pub sha256: &'static str,
}
