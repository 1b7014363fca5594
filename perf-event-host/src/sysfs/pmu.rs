//! One PMU directory, and all of them.

use super::alias::{Alias, Scale};
use super::cpus::CpuList;
use super::format::Format;
use super::{
    dir_names, parse_int, read_optional, read_optional_int, read_text, Problem, SysfsError,
};
use std::path::{Path, PathBuf};

/// A PMU as `/sys/bus/event_source/devices/<name>/` describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Pmu {
    name: String,
    dir: PathBuf,
    type_: u32,
    formats: Vec<(String, Format)>,
    aliases: Vec<Alias>,
    cpumask: Option<CpuList>,
    cpus: Option<CpuList>,
    caps: Vec<(String, String)>,
    rdpmc: Option<i64>,
    mux_interval_ms: Option<u32>,
    nr_addr_filters: Option<u32>,
    identifier: Option<String>,
}

/// Suffixes of the per-event attribute files in `events/`.
const EVENT_ATTRS: [&str; 4] = [".scale", ".unit", ".per-pkg", ".snapshot"];

impl Pmu {
    /// Reads the PMU in `dir` (its name is the directory's name). `type` is
    /// required; every other file is optional. A malformed file is an error
    /// naming it, its text and the position.
    pub fn read(dir: &Path) -> Result<Pmu, SysfsError> {
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| SysfsError::new(dir, Problem::NotUtf8))?
            .to_owned();
        let type_path = dir.join("type");
        let type_ = parse_int(&type_path, &read_text(&type_path)?)?;
        let mut pmu = Pmu::new(&name, type_);
        pmu.dir = dir.to_path_buf();
        let format_dir = dir.join("format");
        for file in dir_names(&format_dir)? {
            let path = format_dir.join(&file);
            let text = read_text(&path)?;
            let format = Format::parse(&text).map_err(|error| {
                SysfsError::new(
                    &path,
                    Problem::Format {
                        text: text.clone(),
                        error,
                    },
                )
            })?;
            pmu.formats.push((file, format));
        }
        pmu.read_events(&dir.join("events"))?;
        pmu.cpumask = CpuList::read(&dir.join("cpumask"))?;
        pmu.cpus = CpuList::read(&dir.join("cpus"))?;
        let caps_dir = dir.join("caps");
        for file in dir_names(&caps_dir)? {
            let text = read_text(&caps_dir.join(&file))?;
            pmu.caps.push((file, text.trim().to_owned()));
        }
        pmu.rdpmc = read_optional_int(&dir.join("rdpmc"))?;
        pmu.mux_interval_ms = read_optional_int(&dir.join("perf_event_mux_interval_ms"))?;
        pmu.nr_addr_filters = read_optional_int(&dir.join("nr_addr_filters"))?;
        pmu.identifier = read_optional(&dir.join("identifier"))?.map(|t| t.trim().to_owned());
        Ok(pmu)
    }

    fn read_events(&mut self, events: &Path) -> Result<(), SysfsError> {
        let names = dir_names(events)?;
        for file in names
            .iter()
            .filter(|f| !EVENT_ATTRS.iter().any(|s| f.ends_with(s)))
        {
            let path = events.join(file);
            let text = read_text(&path)?;
            let alias = Alias::new(file, &text).map_err(|error| {
                SysfsError::new(
                    &path,
                    Problem::Terms {
                        text: text.trim_end().to_owned(),
                        error,
                    },
                )
            })?;
            self.aliases.push(alias);
        }
        for file in &names {
            let Some((event, suffix)) = EVENT_ATTRS
                .iter()
                .find_map(|s| file.strip_suffix(s).map(|e| (e, *s)))
            else {
                continue;
            };
            let path = events.join(file);
            let text = read_text(&path)?;
            let Some(alias) = self.aliases.iter_mut().find(|a| a.name == event) else {
                return Err(SysfsError::new(&path, Problem::Orphan));
            };
            match suffix {
                ".scale" => {
                    alias.scale = Some(Scale::parse(&text).ok_or_else(|| {
                        SysfsError::new(
                            &path,
                            Problem::Scale {
                                text: text.trim().to_owned(),
                            },
                        )
                    })?)
                }
                ".unit" => alias.unit = Some(text.trim().to_owned()),
                ".per-pkg" => alias.per_pkg = parse_int::<i64>(&path, &text)? != 0,
                _ => alias.snapshot = parse_int::<i64>(&path, &text)? != 0,
            }
        }
        Ok(())
    }

    /// A PMU built in memory (no directory): for tests and for PMUs known
    /// by other means. Add formats and aliases with the `with_` methods.
    pub fn new(name: &str, type_: u32) -> Pmu {
        Pmu {
            name: name.to_owned(),
            dir: PathBuf::new(),
            type_,
            formats: Vec::new(),
            aliases: Vec::new(),
            cpumask: None,
            cpus: None,
            caps: Vec::new(),
            rdpmc: None,
            mux_interval_ms: None,
            nr_addr_filters: None,
            identifier: None,
        }
    }

    /// Adds (or replaces) a format term.
    pub fn with_format(mut self, name: &str, format: Format) -> Pmu {
        self.formats.retain(|(n, _)| n != name);
        self.formats.push((name.to_owned(), format));
        self.formats.sort_by(|a, b| a.0.cmp(&b.0));
        self
    }

    /// Adds (or replaces) an event alias.
    pub fn with_alias(mut self, alias: Alias) -> Pmu {
        self.aliases.retain(|a| a.name != alias.name);
        self.aliases.push(alias);
        self.aliases.sort_by(|a, b| a.name.cmp(&b.name));
        self
    }

    /// With an `identifier` (what [`Pmu::identifier`] reads from sysfs).
    pub fn with_identifier(mut self, identifier: &str) -> Pmu {
        self.identifier = Some(identifier.to_owned());
        self
    }

    /// Adds many aliases at once, sorted once; an alias of a name the PMU
    /// has already is replaced.
    #[cfg_attr(not(feature = "vendor"), allow(dead_code))]
    pub(crate) fn add_aliases(&mut self, aliases: Vec<Alias>) {
        let names: std::collections::HashSet<String> =
            aliases.iter().map(|a| a.name.clone()).collect();
        self.aliases.retain(|a| !names.contains(&a.name));
        self.aliases.extend(aliases);
        self.aliases.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// The PMU's name (`cpu`, `msr`, `uncore_imc_0`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The directory it was read from (empty for [`Pmu::new`]).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `type` (since Linux 2.6.38): the value for `perf_event_attr.type`.
    pub fn type_id(&self) -> u32 {
        self.type_
    }

    /// `format/*` (since Linux 3.4), sorted by name.
    pub fn formats(&self) -> impl Iterator<Item = (&str, Format)> + '_ {
        self.formats.iter().map(|(n, f)| (n.as_str(), *f))
    }

    /// The format term `name`.
    pub fn format(&self, name: &str) -> Option<Format> {
        self.format_index(name).map(|i| self.formats[i].1)
    }

    pub(crate) fn format_index(&self, name: &str) -> Option<usize> {
        self.formats
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .ok()
    }

    pub(crate) fn format_at(&self, index: usize) -> (&str, Format) {
        let (n, f) = &self.formats[index];
        (n, *f)
    }

    pub(crate) fn format_count(&self) -> usize {
        self.formats.len()
    }

    /// `events/*` (since Linux 3.4), sorted by name.
    pub fn aliases(&self) -> &[Alias] {
        &self.aliases
    }

    /// The event alias `name`, compared ignoring ASCII case as perf compares
    /// alias names (`strcasecmp` in `perf_pmu__find_alias`, perf 6.1 and
    /// 6.12: `INST_RETIRED.ANY` is `inst_retired.any`); an exact match
    /// first.
    pub fn alias(&self, name: &str) -> Option<&Alias> {
        match self.aliases.binary_search_by(|a| a.name.as_str().cmp(name)) {
            Ok(i) => Some(&self.aliases[i]),
            Err(_) => self
                .aliases
                .iter()
                .find(|a| a.name.eq_ignore_ascii_case(name)),
        }
    }

    /// `cpumask` (since Linux 3.7): the CPUs to open this PMU's events on
    /// (one per socket for uncore PMUs); `None` when absent (any CPU, or
    /// per-task).
    pub fn cpumask(&self) -> Option<&CpuList> {
        self.cpumask.as_ref()
    }

    /// `cpus`: the CPUs a core PMU covers on heterogeneous systems (ARM
    /// big.LITTLE, Intel hybrid since Linux 5.13).
    pub fn cpus(&self) -> Option<&CpuList> {
        self.cpus.as_ref()
    }

    /// `caps/*` (since Linux 4.1 for intel_pt, later for core PMUs):
    /// capability name and trimmed text (`max_precise` = `3`, `branches` = `32`).
    pub fn caps(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.caps.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// One capability's text.
    pub fn cap(&self, name: &str) -> Option<&str> {
        self.caps().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// `rdpmc` (x86 `cpu`, since Linux 3.4): 0 = the counter instruction is
    /// disabled in user space; 1 = allowed while the task has a perf event
    /// mapped (since Linux 4.0); 2 = allowed for every task (the pre-4.0
    /// meaning of 1).
    pub fn rdpmc(&self) -> Option<i64> {
        self.rdpmc
    }

    /// `perf_event_mux_interval_ms` (since Linux 3.11): how often the PMU
    /// rotates events that do not all fit on its counters.
    pub fn mux_interval_ms(&self) -> Option<u32> {
        self.mux_interval_ms
    }

    /// `nr_addr_filters` (since Linux 4.7): how many address filters
    /// `PERF_EVENT_IOC_SET_FILTER` may give (intel_pt, cs_etm); absent means 0.
    pub fn nr_addr_filters(&self) -> Option<u32> {
        self.nr_addr_filters
    }

    /// `identifier` (since Linux 5.10 for arm64's SMMUv3 PMCG and DDR PMUs,
    /// later for others: CMN, ...): the implementation's id, which perf
    /// compares with the `Compat` of a sys table's events (perf 5.10's
    /// `pmu_add_sys_aliases`), trimmed; `None` when absent.
    pub fn identifier(&self) -> Option<&str> {
        self.identifier.as_deref()
    }

    /// The format names, comma-separated (for messages).
    pub(crate) fn format_names(&self) -> String {
        let names: Vec<&str> = self.formats.iter().map(|(n, _)| n.as_str()).collect();
        names.join(", ")
    }
}

/// Every PMU of a devices directory.
#[derive(Debug)]
pub struct Pmus {
    root: PathBuf,
    pmus: Vec<Pmu>,
    skipped: Vec<SysfsError>,
}

impl Pmus {
    /// Where the kernel lists PMUs (since Linux 2.6.34; `type` since 2.6.38).
    pub const ROOT: &'static str = "/sys/bus/event_source/devices";

    /// Reads every PMU under [`Pmus::ROOT`].
    pub fn read() -> Result<Pmus, SysfsError> {
        Pmus::read_from(Path::new(Pmus::ROOT))
    }

    /// Reads every PMU under `root` (a fixture tree, or another sysfs mount).
    /// A PMU that cannot be read is kept in [`Pmus::skipped`] with its
    /// error, so one broken driver does not hide the others; a missing or
    /// unreadable `root` is an error.
    pub fn read_from(root: &Path) -> Result<Pmus, SysfsError> {
        std::fs::metadata(root).map_err(|e| SysfsError::new(root, Problem::Io(e)))?;
        let mut pmus = Pmus {
            root: root.to_path_buf(),
            pmus: Vec::new(),
            skipped: Vec::new(),
        };
        for name in dir_names(root)? {
            match Pmu::read(&root.join(&name)) {
                Ok(pmu) => pmus.pmus.push(pmu),
                Err(e) => pmus.skipped.push(e),
            }
        }
        Ok(pmus)
    }

    /// PMUs built in memory.
    pub fn from_pmus(mut pmus: Vec<Pmu>) -> Pmus {
        pmus.sort_by(|a, b| a.name.cmp(&b.name));
        Pmus {
            root: PathBuf::new(),
            pmus,
            skipped: Vec::new(),
        }
    }

    /// The directory read.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The PMUs, sorted by name.
    pub fn all(&self) -> &[Pmu] {
        &self.pmus
    }

    /// The PMU named `name`.
    pub fn get(&self, name: &str) -> Option<&Pmu> {
        self.pmus
            .binary_search_by(|p| p.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.pmus[i])
    }

    /// The PMUs named `name` or `name_<digits>` (perf's wildcard for
    /// numbered uncore instances: `uncore_imc` matches `uncore_imc_0`,
    /// `uncore_imc_1`, ...). An exact match wins alone.
    pub fn matching<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Pmu> + 'a {
        let exact = self.get(name);
        self.pmus.iter().filter(move |p| match exact {
            Some(e) => std::ptr::eq(e, *p),
            None => p
                .name
                .strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('_'))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
        })
    }

    /// The PMUs, to change in place (their names, and so the order, stay).
    #[cfg_attr(not(feature = "vendor"), allow(dead_code))]
    pub(crate) fn all_mut(&mut self) -> &mut [Pmu] {
        &mut self.pmus
    }

    /// PMUs that could not be read, with why.
    pub fn skipped(&self) -> &[SysfsError] {
        &self.skipped
    }
}
