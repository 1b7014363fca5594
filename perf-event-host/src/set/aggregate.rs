//! Aggregation of a set's counts per CPU, per thread, per core type or in
//! total, scaled for multiplexing the way `perf stat` does it: values,
//! enabled and running times are summed first, then scaled once.

use super::event_set::EventInfo;
use super::{EventStatus, PlacedCounts, Placement};
use crate::sysfs::Topology;
use perf_event_core::read_format::{Counts, Scaled};

/// How counts are grouped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AggrMode {
    /// One figure per event (`perf stat`).
    Total,
    /// Per CPU (`perf stat -A` / `--no-aggr`).
    PerCpu,
    /// Per thread (`perf stat --per-thread`).
    PerThread,
    /// Per core PMU (hybrid machines).
    PerCoreType,
}

/// Whether the copies of one event on several core PMUs stay apart
/// (`cpu_core/cycles/` and `cpu_atom/cycles/`, perf stat's default) or are
/// summed under the plain name (`perf stat --hybrid-merge`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HybridNames {
    /// One line per core PMU.
    Keep,
    /// One line, the sum.
    Merge,
}

/// What an aggregate is keyed by.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum AggrKey {
    /// Everything.
    Total,
    /// A CPU (-1: the per-thread placements that run on any CPU).
    Cpu(i32),
    /// A thread (-1: CPU-wide placements).
    Thread(i32),
    /// A core PMU (`cpu_core`); "" for events on no particular PMU.
    CoreType(String),
    /// A socket (`perf stat --per-socket`, `S0`).
    Socket(i32),
    /// A die of a socket (`--per-die`, `S0-D0`).
    Die {
        /// The socket.
        socket: i32,
        /// The die within it.
        die: i32,
    },
    /// A core (`--per-core`, `S0-D0-C0`): its SMT siblings together.
    Core {
        /// The socket.
        socket: i32,
        /// The die.
        die: i32,
        /// The core id.
        core: i32,
    },
    /// A NUMA node (`--per-node`, `N0`).
    Node(i32),
}

/// The topology level of [`aggregate_topology`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TopologyLevel {
    /// Per core (`--per-core`).
    Core,
    /// Per die (`--per-die`).
    Die,
    /// Per socket (`--per-socket`).
    Socket,
    /// Per NUMA node (`--per-node`).
    Node,
}

impl TopologyLevel {
    /// The key of a CPU at this level (`None`: the CPU's place is unknown,
    /// or the placement is on any CPU).
    pub fn key(self, topology: &Topology, cpu: i32) -> Option<AggrKey> {
        let p = topology.place(u32::try_from(cpu).ok()?)?;
        Some(match self {
            TopologyLevel::Core => AggrKey::Core {
                socket: p.socket,
                die: p.die,
                core: p.core,
            },
            TopologyLevel::Die => AggrKey::Die {
                socket: p.socket,
                die: p.die,
            },
            TopologyLevel::Socket => AggrKey::Socket(p.socket),
            TopologyLevel::Node => AggrKey::Node(p.node),
        })
    }

    /// How many CPUs of `topology` share `key` (perf's second column).
    pub fn cpus_in(self, topology: &Topology, key: &AggrKey) -> usize {
        topology
            .iter()
            .filter(|(cpu, _)| self.key(topology, *cpu as i32).as_ref() == Some(key))
            .count()
    }
}

/// Aggregates CPU-wide counts per core, die, socket or NUMA node of
/// `topology` (`perf stat -a --per-core` ...): values and times summed
/// over the CPUs of each key, then scaled once, as [`aggregate`] does.
/// Counts on a CPU the topology does not know (or on any CPU) fall under
/// [`AggrKey::Cpu`]. Output in event order, then key order.
pub fn aggregate_topology(
    events: &[EventInfo],
    counts: &[PlacedCounts],
    level: TopologyLevel,
    topology: &Topology,
    names: HybridNames,
) -> Vec<Aggregate> {
    aggregate_keyed(events, counts, names, false, &|c, _| {
        level.key(topology, c.cpu).unwrap_or(AggrKey::Cpu(c.cpu))
    })
}

/// One line of `perf stat` output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aggregate {
    /// Index into the events of the line's event (the first copy, when
    /// hybrid copies are merged).
    pub index: usize,
    /// The event's name (`cpu_atom/cycles/`, or `cycles` when merged).
    pub event: String,
    /// What it sums over.
    pub key: AggrKey,
    /// Summed value, enabled and running times.
    pub counts: Counts,
    /// The figure to print.
    pub value: AggrValue,
}

/// The figure of an aggregate.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AggrValue {
    /// Counted (maybe estimated from a multiplexed share).
    Counted(Scaled),
    /// `<not counted>`: opened but never on the PMU (or no fd here).
    NotCounted,
    /// `<not supported>`, with the reason.
    NotSupported(String),
}

/// Aggregates `counts` (from [`EventSet::read_all`](super::EventSet::read_all))
/// of `events` (from [`EventSet::events`](super::EventSet::events)). Output is
/// in event order, then key order (one event per line, or per hybrid
/// event with [`HybridNames::Merge`]); every event has at least one line, so an
/// event that never opened still shows `<not supported>`.
pub fn aggregate(
    events: &[EventInfo],
    counts: &[PlacedCounts],
    mode: AggrMode,
    names: HybridNames,
) -> Vec<Aggregate> {
    let fold = mode != AggrMode::PerCpu;
    aggregate_keyed(events, counts, names, fold, &|c, e| match mode {
        AggrMode::Total => AggrKey::Total,
        AggrMode::PerCpu => AggrKey::Cpu(c.cpu),
        AggrMode::PerThread => AggrKey::Thread(c.tid),
        AggrMode::PerCoreType => AggrKey::CoreType(e.spec.pmu.clone().unwrap_or_default()),
    })
}

/// [`aggregate`] with the key of each count given by `key_of`; `fold`
/// folds a thread's per-CPU fds first.
fn aggregate_keyed(
    events: &[EventInfo],
    counts: &[PlacedCounts],
    names: HybridNames,
    fold: bool,
    key_of: &dyn Fn(&Placement, &EventInfo) -> AggrKey,
) -> Vec<Aggregate> {
    // One line per event; with Merge, the copies of a hybrid event (same
    // name, each bound to a core PMU) share the line of the first copy.
    let line_of = |i: usize| -> usize {
        let e = &events[i];
        if names == HybridNames::Merge && e.spec.pmu.is_some() {
            let first = events
                .iter()
                .position(|o| o.spec.pmu.is_some() && o.spec.name == e.spec.name);
            first.unwrap_or(i)
        } else {
            i
        }
    };
    let folded;
    let counts = if !fold {
        counts
    } else {
        folded = fold_task_cpus(counts);
        &folded[..]
    };
    let mut lines = Lines::default();
    for (i, e) in events.iter().enumerate() {
        let n = line_of(i);
        let reason = match e.status() {
            EventStatus::NotSupported(r) => Some(r),
            EventStatus::Open => None,
        };
        let mut any = false;
        for c in counts.iter().filter(|c| c.placement.event == i) {
            any = true;
            let key = key_of(&c.placement, e);
            add(&mut lines, n, key, c.counts, None);
        }
        if !any {
            let none = Placement {
                event: i,
                cpu: -1,
                tid: -1,
            };
            let key = match key_of(&none, e) {
                k @ AggrKey::CoreType(_) => k,
                _ => AggrKey::Total,
            };
            // Only a placeholder when the name has no line at all yet.
            if !lines.names.contains(&n) || reason.is_some() {
                add(&mut lines, n, key, Counts::default(), reason);
            }
        }
    }
    let mut lines = lines.lines;
    lines.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    lines
        .into_iter()
        .map(|(n, key, counts, reason)| {
            let value = match reason {
                Some(r) if counts.enabled.is_none() => AggrValue::NotSupported(r),
                _ => match counts.scaled() {
                    Scaled::NotCounted | Scaled::NoTimes(_) if counts.enabled.is_none() => {
                        AggrValue::NotCounted
                    }
                    Scaled::NotCounted => AggrValue::NotCounted,
                    s => AggrValue::Counted(s),
                },
            };
            let e = &events[n].spec;
            Aggregate {
                index: n,
                event: match names {
                    HybridNames::Keep => e.display_name(),
                    HybridNames::Merge => e.name.clone(),
                },
                key,
                counts,
                value,
            }
        })
        .collect()
}

/// Folds the per-CPU fds of one thread's event into one count. A task
/// event bound to a CPU is enabled whenever its task runs but on the PMU
/// only while the task runs on that CPU, so its CPUs share one enabled
/// time: the values and running times add up, the enabled time is the
/// longest (summing it would report a thread on 2 CPUs as 50 % multiplexed).
fn fold_task_cpus(counts: &[PlacedCounts]) -> Vec<PlacedCounts> {
    let mut out: Vec<PlacedCounts> = Vec::with_capacity(counts.len());
    let mut at: std::collections::HashMap<(usize, i32), usize> = Default::default();
    for c in counts {
        let p = c.placement;
        if p.tid < 0 || p.cpu < 0 {
            out.push(*c);
            continue;
        }
        match at.get(&(p.event, p.tid)) {
            Some(&i) => {
                let o = &mut out[i].counts;
                o.value = o.value.saturating_add(c.counts.value);
                o.enabled = o.enabled.max(c.counts.enabled);
                o.running = match (o.running, c.counts.running) {
                    (Some(a), Some(b)) => {
                        Some(a.saturating_add(b).min(o.enabled.unwrap_or(u64::MAX)))
                    }
                    (a, b) => a.or(b),
                };
            }
            None => {
                at.insert((p.event, p.tid), out.len());
                out.push(PlacedCounts {
                    placement: Placement { cpu: -1, ..p },
                    counts: c.counts,
                });
            }
        }
    }
    out
}

type Line = (usize, AggrKey, Counts, Option<String>);

/// The lines being summed, found by (name, key) in O(1).
#[derive(Default)]
struct Lines {
    lines: Vec<Line>,
    index: std::collections::HashMap<(usize, AggrKey), usize>,
    names: std::collections::HashSet<usize>,
}

fn add(lines: &mut Lines, n: usize, key: AggrKey, c: Counts, reason: Option<String>) {
    let at = *lines.index.entry((n, key.clone())).or_insert_with(|| {
        lines.lines.push((n, key, Counts::default(), None));
        lines.lines.len() - 1
    });
    lines.names.insert(n);
    let line = &mut lines.lines[at];
    if reason.is_some() && line.3.is_none() {
        line.3 = reason;
    }
    if c.enabled.is_some() || c.running.is_some() || c.value != 0 {
        line.2.value = line.2.value.saturating_add(c.value);
        line.2.enabled = Some(
            line.2
                .enabled
                .unwrap_or(0)
                .saturating_add(c.enabled.unwrap_or(0)),
        );
        line.2.running = Some(
            line.2
                .running
                .unwrap_or(0)
                .saturating_add(c.running.unwrap_or(0)),
        );
    }
}
