//! Event sets on fixture trees of machines this one is not (simulated: no
//! syscall): an Intel hybrid (Alder Lake: `cpu_core` + `cpu_atom`) and an
//! arm64 big.LITTLE (`armv8_cortex_a53` + `armv8_cortex_a76`, two CPUs
//! offline). Generalized hardware events expand to one attr per core PMU
//! with the PMU type in config bits 32-63 and that PMU's CPUs, and the
//! aggregation prints them as `perf stat` does.

use crate::sysfs_support;

use perf_event_core::attr::Attr;
use perf_event_core::event::{Cache, CacheOp, CacheResult, Event, Hardware, Software};
use perf_event_core::read_format::{Counts, Scaled};
use perf_event_core::sys;
use perf_event_host::set::{
    aggregate, AggrKey, AggrMode, AggrValue, CorePmus, CpuProblem, Cpus, EventInfo, EventSpec,
    HybridNames, PlacedCounts, Placement, RejectedCpu, PMU_TYPE_SHIFT,
};
use perf_event_host::sysfs::{CpuList, Pmus};
use sysfs_support::Tree;

/// A 16 P-core-thread + 8 E-core machine (i9-12900K): types as the kernel
/// numbers them there (cpu_core 4, cpu_atom 10).
fn intel_hybrid(tree: &Tree) {
    tree.pmu("cpu_core", 4)
        .file("cpus", "0-15")
        .format("event", "config:0-7")
        .format("umask", "config:8-15")
        .event("cycles", "event=0x3c");
    tree.pmu("cpu_atom", 10)
        .file("cpus", "16-23")
        .format("event", "config:0-7")
        .format("umask", "config:8-15")
        .event("cycles", "event=0x3c");
    tree.pmu("uncore_imc_free_running_0", 17)
        .file("cpumask", "0")
        .format("event", "config:0-7");
    tree.pmu("software", 1);
    tree.pmu("tracepoint", 2);
    tree.pmu("msr", 11).format("event", "config:0-63");
    tree.file("cpu/online", "0-23");
    tree.file("cpu/possible", "0-23");
}

/// A Cortex-A53 x4 + Cortex-A76 x4 phone SoC with CPUs 6-7 offline.
fn arm_big_little(tree: &Tree) {
    tree.pmu("armv8_cortex_a53", 8)
        .file("cpus", "0-3")
        .format("event", "config:0-15")
        .event("cpu_cycles", "event=0x0011");
    tree.pmu("armv8_cortex_a76", 9)
        .file("cpus", "4-7")
        .format("event", "config:0-15")
        .event("cpu_cycles", "event=0x0011");
    tree.pmu("software", 1);
    tree.pmu("tracepoint", 2);
    tree.file("cpu/online", "0-5");
    tree.file("cpu/possible", "0-7");
}

fn core_pmus(tree: &Tree) -> (CorePmus, Cpus) {
    let pmus = Pmus::read_from(&tree.devices()).unwrap();
    let cpus = Cpus::read_from(&tree.root().join("cpu")).unwrap();
    (CorePmus::find(&pmus, &cpus), cpus)
}

fn cycles() -> EventSpec {
    EventSpec::new("cycles", Attr::new(Event::Hardware(Hardware::CpuCycles)))
}

/// (pmu, type, config, cpus) of each expanded event.
fn shape(specs: &[EventSpec]) -> Vec<(String, u32, u64, String)> {
    specs
        .iter()
        .map(|s| {
            let raw = s.attr.to_raw();
            (
                s.pmu.clone().unwrap_or_default(),
                raw.type_,
                raw.config,
                s.cpus.as_ref().map(|c| c.to_string()).unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn intel_hybrid_cycles_is_one_attr_per_core_pmu() {
    let tree = Tree::new("set-intel-hybrid");
    intel_hybrid(&tree);
    let (core, _) = core_pmus(&tree);
    assert!(core.is_hybrid());
    let names: Vec<&str> = core.all().iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["cpu_core", "cpu_atom"],
        "ordered by type; uncore is no core PMU"
    );
    let hw = sys::PERF_TYPE_HARDWARE;
    assert_eq!(
        shape(&core.expand(&cycles())),
        [
            ("cpu_core".into(), hw, 4 << 32, "0-15".into()),
            ("cpu_atom".into(), hw, 10 << 32, "16-23".into()),
        ]
    );
    assert_eq!(PMU_TYPE_SHIFT, 32);
    // Cache events too: L1D read miss is 0x10000 in the low bits.
    let l1 = EventSpec::new(
        "L1-dcache-load-misses",
        Attr::new(Event::HwCache(Cache::L1d, CacheOp::Read, CacheResult::Miss)),
    );
    let cache = sys::PERF_TYPE_HW_CACHE;
    assert_eq!(
        shape(&core.expand(&l1)),
        [
            ("cpu_core".into(), cache, 4 << 32 | 0x10000, "0-15".into()),
            ("cpu_atom".into(), cache, 10 << 32 | 0x10000, "16-23".into()),
        ]
    );
    // The fallback is the plain generalized event on the same CPUs.
    for e in core.expand(&cycles()) {
        let f = e.fallback.unwrap().to_raw();
        assert_eq!((f.type_, f.config), (hw, 0));
        assert_eq!(e.display_name(), format!("{}/cycles/", e.pmu.unwrap()));
    }
    // Software and tracepoint events are not expanded.
    let tc = EventSpec::new(
        "task-clock",
        Attr::new(Event::Software(Software::TaskClock)),
    );
    assert_eq!(
        shape(&core.expand(&tc)),
        [(String::new(), 1, 1, String::new())]
    );
    // A group with cycles becomes one group per core PMU; its software
    // member follows the group onto that PMU's CPUs.
    let groups = core.expand_group(&[cycles(), tc]);
    assert_eq!(groups.len(), 2);
    assert_eq!(
        shape(&groups[1]),
        [
            ("cpu_atom".into(), hw, 10 << 32, "16-23".into()),
            ("cpu_atom".into(), 1, 1, "16-23".into()),
        ]
    );
}

#[test]
fn arm_big_little_cycles_per_cluster_offline_cpus_reported() {
    let tree = Tree::new("set-arm-big-little");
    arm_big_little(&tree);
    let (core, cpus) = core_pmus(&tree);
    let hw = sys::PERF_TYPE_HARDWARE;
    assert_eq!(
        shape(&core.expand(&cycles())),
        [
            ("armv8_cortex_a53".into(), hw, 8 << 32, "0-3".into()),
            ("armv8_cortex_a76".into(), hw, 9 << 32, "4-5".into()),
        ]
    );
    // The big cluster's offline CPUs are reported, not dropped silently.
    let pmus = Pmus::read_from(&tree.devices()).unwrap();
    let big = cpus.of_pmu(pmus.get("armv8_cortex_a76").unwrap());
    assert_eq!(big.cpus.to_string(), "4-5");
    assert_eq!(
        big.rejected,
        [
            RejectedCpu {
                cpu: 6,
                problem: CpuProblem::Offline
            },
            RejectedCpu {
                cpu: 7,
                problem: CpuProblem::Offline
            }
        ]
    );
    // A user list past the machine: 9 does not exist.
    let sel = cpus.select(&CpuList::parse("3-4,7,9").unwrap());
    assert_eq!(sel.cpus.to_string(), "3-4");
    let why: Vec<String> = sel.rejected.iter().map(|r| r.to_string()).collect();
    assert!(why[0].contains("CPU 7 is offline"), "{why:?}");
    assert!(why[1].contains("CPU 9 does not exist"), "{why:?}");
}

#[test]
fn single_core_type_is_not_expanded() {
    let tree = Tree::new("set-intel-plain");
    tree.pmu("cpu", 4).format("event", "config:0-7");
    tree.file("cpu/online", "0-3");
    let (core, _) = core_pmus(&tree);
    assert!(!core.is_hybrid());
    assert_eq!(core.all()[0].cpus.to_string(), "0-3");
    let out = core.expand(&cycles());
    assert_eq!(shape(&out), [(String::new(), 0, 0, String::new())]);
}

/// What an opened set would hold: each expanded event open on its CPUs.
fn opened(specs: Vec<EventSpec>) -> Vec<EventInfo> {
    specs
        .into_iter()
        .enumerate()
        .map(|(i, spec)| EventInfo {
            spec,
            group: i,
            leader: true,
            opened: 1,
            unsupported: None,
            leader_failed: 0,
            fallback_used: false,
            fallbacks: Default::default(),
        })
        .collect()
}

#[test]
fn hybrid_aggregation_as_perf_stat_prints_it() {
    let tree = Tree::new("set-intel-agg");
    intel_hybrid(&tree);
    let (core, _) = core_pmus(&tree);
    let events = opened(core.expand(&cycles()));
    // Simulated readings: P-cores count 1000 each over 2 ms; E-cores 500
    // each, multiplexed (on the PMU half of the time).
    let mut counts = Vec::new();
    for (i, e) in events.iter().enumerate() {
        for &cpu in e.spec.cpus.as_ref().unwrap().as_slice() {
            let (value, running) = if i == 0 {
                (1000, 2_000_000)
            } else {
                (500, 1_000_000)
            };
            counts.push(PlacedCounts {
                placement: Placement {
                    event: i,
                    cpu: cpu as i32,
                    tid: -1,
                },
                counts: Counts {
                    value,
                    enabled: Some(2_000_000),
                    running: Some(running),
                },
            });
        }
    }
    // perf stat -a: `cpu_core/cycles/` and `cpu_atom/cycles/` lines.
    let keep = aggregate(&events, &counts, AggrMode::Total, HybridNames::Keep);
    let lines: Vec<(&str, AggrValue)> = keep
        .iter()
        .map(|l| (l.event.as_str(), l.value.clone()))
        .collect();
    assert_eq!(
        lines,
        [
            (
                "cpu_core/cycles/",
                AggrValue::Counted(Scaled::Exact(16_000))
            ),
            (
                "cpu_atom/cycles/",
                AggrValue::Counted(Scaled::Estimated {
                    value: 8_000,
                    percent_running: 50
                })
            ),
        ]
    );
    // perf stat --per-core-type keys by PMU; --hybrid-merge sums under `cycles`
    // (values, enabled and running summed, then scaled once, as perf does).
    let per_type = aggregate(&events, &counts, AggrMode::PerCoreType, HybridNames::Keep);
    assert_eq!(per_type[1].key, AggrKey::CoreType("cpu_atom".into()));
    let merged = aggregate(&events, &counts, AggrMode::Total, HybridNames::Merge);
    assert_eq!(merged.len(), 1);
    assert_eq!(merged[0].event, "cycles");
    assert_eq!(merged[0].counts.value, 20_000);
    assert_eq!(
        merged[0].value,
        AggrValue::Counted(Scaled::Estimated {
            value: 20_000 * 48 / 40,
            percent_running: 83
        })
    );
    // -A: one line per CPU, CPU 16 on the atom line.
    let per_cpu = aggregate(&events, &counts, AggrMode::PerCpu, HybridNames::Keep);
    assert_eq!(per_cpu.len(), 24);
    assert_eq!(
        (per_cpu[16].event.as_str(), &per_cpu[16].key),
        ("cpu_atom/cycles/", &AggrKey::Cpu(16))
    );
}

/// Writes `cpu/cpuN/topology/*` for each (cpu, socket, die, core); `die`
/// `None` leaves `die_id` out (kernels before 5.2).
fn topology_tree(tree: &Tree, cpus: &[(u32, i32, Option<i32>, i32)]) {
    for &(cpu, socket, die, core) in cpus {
        let dir = format!("cpu/cpu{cpu}/topology");
        tree.file(&format!("{dir}/physical_package_id"), &socket.to_string());
        tree.file(&format!("{dir}/core_id"), &core.to_string());
        if let Some(die) = die {
            tree.file(&format!("{dir}/die_id"), &die.to_string());
        }
    }
}

fn task_clock_events() -> Vec<EventInfo> {
    opened(vec![EventSpec::new(
        "task-clock",
        Attr::new(Event::Software(Software::TaskClock)),
    )])
}

/// One CPU-wide reading per CPU: value `10 * (cpu + 1)`, never multiplexed.
fn per_cpu_counts(cpus: impl Iterator<Item = u32>) -> Vec<PlacedCounts> {
    cpus.map(|cpu| PlacedCounts {
        placement: Placement {
            event: 0,
            cpu: cpu as i32,
            tid: -1,
        },
        counts: Counts {
            value: 10 * (u64::from(cpu) + 1),
            enabled: Some(1000),
            running: Some(1000),
        },
    })
    .collect()
}

fn keyed(lines: &[perf_event_host::set::Aggregate]) -> Vec<(AggrKey, u64)> {
    lines
        .iter()
        .map(|l| (l.key.clone(), l.counts.value))
        .collect()
}

#[test]
fn two_sockets_smt_per_core_die_socket_node() {
    use perf_event_host::set::{aggregate_topology, TopologyLevel};
    use perf_event_host::sysfs::Topology;
    let tree = Tree::new("set-topo-2s");
    // 2 sockets x 2 cores x 2 SMT threads; siblings numbered as Intel
    // does (cpu N and N+4 share a core); one die per socket; 2 nodes.
    let mut cpus = Vec::new();
    for cpu in 0..8u32 {
        let socket = ((cpu % 4) / 2) as i32;
        cpus.push((cpu, socket, Some(0), (cpu % 2) as i32));
    }
    topology_tree(&tree, &cpus);
    tree.file("node/node0/cpulist", "0-1,4-5");
    tree.file("node/node1/cpulist", "2-3,6-7");
    let topo = Topology::read_from(tree.root()).unwrap();
    assert_eq!(topo.iter().count(), 8);
    let events = task_clock_events();
    let counts = per_cpu_counts(0..8);
    let at = |level| aggregate_topology(&events, &counts, level, &topo, HybridNames::Keep);
    let core = |socket, core| AggrKey::Core {
        socket,
        die: 0,
        core,
    };
    // Core (0,0): cpus 0 and 4 -> 10 + 50.
    assert_eq!(
        keyed(&at(TopologyLevel::Core)),
        [
            (core(0, 0), 60),
            (core(0, 1), 80),
            (core(1, 0), 100),
            (core(1, 1), 120)
        ]
    );
    assert_eq!(
        keyed(&at(TopologyLevel::Socket)),
        [(AggrKey::Socket(0), 140), (AggrKey::Socket(1), 220)]
    );
    assert_eq!(
        keyed(&at(TopologyLevel::Die)),
        [
            (AggrKey::Die { socket: 0, die: 0 }, 140),
            (AggrKey::Die { socket: 1, die: 0 }, 220)
        ]
    );
    assert_eq!(
        keyed(&at(TopologyLevel::Node)),
        [(AggrKey::Node(0), 140), (AggrKey::Node(1), 220)]
    );
    assert_eq!(TopologyLevel::Core.cpus_in(&topo, &core(1, 1)), 2);
    assert_eq!(TopologyLevel::Socket.cpus_in(&topo, &AggrKey::Socket(0)), 4);
    // Times are summed then scaled once: never multiplexed.
    for l in at(TopologyLevel::Core) {
        assert!(
            matches!(l.value, AggrValue::Counted(Scaled::Exact(_))),
            "{l:?}"
        );
    }
}

#[test]
fn hybrid_without_die_id_and_numa_is_one_die_one_node() {
    use perf_event_host::set::{aggregate_topology, TopologyLevel};
    use perf_event_host::sysfs::Topology;
    let tree = Tree::new("set-topo-hybrid");
    // Alder-Lake-like: P-cores 0-3 with SMT (core ids 0, 4), E-cores 4-7
    // each its own core (ids 8-11); no die_id (before 5.2), no node/.
    topology_tree(
        &tree,
        &[
            (0, 0, None, 0),
            (1, 0, None, 0),
            (2, 0, None, 4),
            (3, 0, None, 4),
            (4, 0, None, 8),
            (5, 0, None, 9),
            (6, 0, None, 10),
            (7, 0, None, 11),
        ],
    );
    let topo = Topology::read_from(tree.root()).unwrap();
    let events = task_clock_events();
    let counts = per_cpu_counts(0..8);
    let at = |level| aggregate_topology(&events, &counts, level, &topo, HybridNames::Keep);
    let cores: Vec<(i32, u64)> = at(TopologyLevel::Core)
        .iter()
        .map(|l| match l.key {
            AggrKey::Core {
                socket: 0,
                die: 0,
                core,
            } => (core, l.counts.value),
            ref k => panic!("{k:?}"),
        })
        .collect();
    assert_eq!(
        cores,
        [(0, 30), (4, 70), (8, 50), (9, 60), (10, 70), (11, 80)]
    );
    assert_eq!(keyed(&at(TopologyLevel::Node)), [(AggrKey::Node(0), 360)]);
    assert_eq!(
        keyed(&at(TopologyLevel::Die)),
        [(AggrKey::Die { socket: 0, die: 0 }, 360)]
    );
    // A CPU the topology does not know stays apart, keyed by CPU.
    let mut more = counts.clone();
    more.extend(per_cpu_counts(9..10));
    let lines = aggregate_topology(
        &events,
        &more,
        TopologyLevel::Socket,
        &topo,
        HybridNames::Keep,
    );
    assert_eq!(
        keyed(&lines),
        [(AggrKey::Cpu(9), 100), (AggrKey::Socket(0), 360)]
    );
}
