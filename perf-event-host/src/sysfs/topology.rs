//! CPU topology from sysfs, for `perf stat --per-core`, `--per-die`,
//! `--per-socket` and `--per-node`: where each CPU sits.
//!
//! Files (Documentation/ABI/stable/sysfs-devices-system-cpu):
//! `cpu/cpuN/topology/physical_package_id` (the socket), `die_id` (since
//! Linux 5.3; absent before: die 0, as perf reads it), `core_id`; NUMA
//! nodes from `node/nodeN/cpulist` (absent without CONFIG_NUMA: node 0).
//! Beside them, each CPU's sibling lists ([`Siblings`]): the CPUs of its
//! package, die and core.

use super::{CpuList, Problem, SysfsError};
use std::collections::BTreeMap;
use std::path::Path;

/// Where one CPU sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CpuPlace {
    /// `physical_package_id`: the socket.
    pub socket: i32,
    /// `die_id` within the socket (0 before Linux 5.3).
    pub die: i32,
    /// `core_id` within the die (SMT siblings share it).
    pub core: i32,
    /// The NUMA node (0 without `node/`).
    pub node: i32,
}

/// The places of the CPUs that have a `topology/` directory (online ones;
/// an offline CPU's directory is absent on most architectures).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Topology {
    places: BTreeMap<u32, CpuPlace>,
}

impl Topology {
    /// Reads `/sys/devices/system`.
    pub fn read() -> Result<Topology, SysfsError> {
        Topology::read_from(Path::new("/sys/devices/system"))
    }

    /// Reads a tree laid out as `/sys/devices/system` (`cpu/cpuN/topology`,
    /// `node/nodeN/cpulist`) under `system`: fixtures, containers.
    pub fn read_from(system: &Path) -> Result<Topology, SysfsError> {
        let cpu_dir = system.join("cpu");
        let entries =
            std::fs::read_dir(&cpu_dir).map_err(|e| SysfsError::new(&cpu_dir, Problem::Io(e)))?;
        let mut places = BTreeMap::new();
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name();
            let Some(cpu) = name
                .to_str()
                .and_then(|n| n.strip_prefix("cpu"))
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let topo = entry.path().join("topology");
            if !topo.is_dir() {
                continue;
            }
            let number = |file: &str, absent: i32| -> Result<i32, SysfsError> {
                let path = topo.join(file);
                match std::fs::read_to_string(&path) {
                    Ok(text) => text.trim().parse().map_err(|_| {
                        SysfsError::new(
                            &path,
                            Problem::Number {
                                text: text.trim().to_owned(),
                            },
                        )
                    }),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(absent),
                    Err(e) => Err(SysfsError::new(&path, Problem::Io(e))),
                }
            };
            places.insert(
                cpu,
                CpuPlace {
                    socket: number("physical_package_id", 0)?,
                    die: number("die_id", 0)?,
                    core: number("core_id", cpu as i32)?,
                    node: 0,
                },
            );
        }
        let node_dir = system.join("node");
        if let Ok(nodes) = std::fs::read_dir(&node_dir) {
            for entry in nodes.filter_map(Result::ok) {
                let name = entry.file_name();
                let Some(node) = name
                    .to_str()
                    .and_then(|n| n.strip_prefix("node"))
                    .and_then(|n| n.parse::<i32>().ok())
                else {
                    continue;
                };
                let list = CpuList::read_required(&entry.path().join("cpulist"))?;
                for cpu in list.iter() {
                    if let Some(p) = places.get_mut(&cpu) {
                        p.node = node;
                    }
                }
            }
        }
        Ok(Topology { places })
    }

    /// Builds a topology from known places (tests, other sources).
    pub fn from_places(places: impl IntoIterator<Item = (u32, CpuPlace)>) -> Topology {
        Topology {
            places: places.into_iter().collect(),
        }
    }

    /// Where `cpu` sits, if known.
    pub fn place(&self, cpu: u32) -> Option<CpuPlace> {
        self.places.get(&cpu).copied()
    }

    /// Every known CPU and its place, by CPU number.
    pub fn iter(&self) -> impl Iterator<Item = (u32, CpuPlace)> + '_ {
        self.places.iter().map(|(c, p)| (*c, *p))
    }
}

/// The CPUs that share one CPU's package, die and core, as the kernel
/// lists them in `cpu/cpuN/topology/` (what perf writes into
/// HEADER_CPU_TOPOLOGY). Each is `None` where the file is absent or
/// unreadable (an offline CPU has no `topology/` on most architectures),
/// or does not hold a CPU list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Siblings {
    /// The CPUs of its package: `package_cpus_list` (since Linux 5.3), else
    /// `core_siblings_list`, its older name.
    pub package: Option<CpuList>,
    /// The CPUs of its die: `die_cpus_list` (since Linux 5.3; `None`
    /// before).
    pub die: Option<CpuList>,
    /// The CPUs of its core (SMT threads): `core_cpus_list` (since Linux
    /// 5.3), else `thread_siblings_list`, its older name.
    pub core: Option<CpuList>,
}

impl Siblings {
    /// The sibling lists of `cpu` under [`CpuList::DIR`].
    pub fn read(cpu: u32) -> Siblings {
        Siblings::read_from(Path::new(CpuList::DIR), cpu)
    }

    /// The sibling lists of `cpu` in a tree laid out as
    /// `/sys/devices/system/cpu` (`cpuN/topology/*_list`) under `dir`:
    /// fixtures, containers.
    pub fn read_from(dir: &Path, cpu: u32) -> Siblings {
        let topology = dir.join(format!("cpu{cpu}/topology"));
        let list = |name: &str| CpuList::read(&topology.join(name)).ok().flatten();
        Siblings {
            package: list("package_cpus_list").or_else(|| list("core_siblings_list")),
            die: list("die_cpus_list"),
            core: list("core_cpus_list").or_else(|| list("thread_siblings_list")),
        }
    }
}

/// Where sysfs is mounted: the root of every `/sys` path perf reads
/// (perf's `sysfs__mountpoint`, which finds it in `/proc/mounts`; `/sys`
/// on every distribution).
pub const SYSFS: &str = "/sys";

/// `smt/active` in a tree laid out as `/sys/devices/system/cpu` (since
/// Linux 4.19): `Some(true)` when it holds 1 (SMT threads are active),
/// `Some(false)` for any other number, `None` when the file is absent or
/// holds no number (perf then looks at the sibling lists: its
/// `smt_on`, Linux 5.19 to 6.12).
pub fn smt_active(cpu_dir: &Path) -> Option<bool> {
    let path = cpu_dir.join("smt/active");
    let text = super::read_optional(&path).ok().flatten()?;
    let value: i64 = text.trim().parse().ok()?;
    Some(value == 1)
}

/// Whether the ACPI firmware describes persistent memory: the NFIT table
/// `firmware/acpi/tables/NFIT` exists under the sysfs mount `sysfs`
/// (`/sys`), as perf 6.12's `has_pmem` asks (`access(F_OK)`).
pub fn has_acpi_nfit(sysfs: &Path) -> bool {
    sysfs.join("firmware/acpi/tables/NFIT").exists()
}
