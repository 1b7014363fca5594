//! The perf tool's generalized event names: hardware and software symbols
//! and `cache-op-result` cache events (tools/perf/util/parse-events.l and
//! evsel.c's alias tables).

use perf_event_core::event::{Cache, CacheOp, CacheResult, Event, Hardware, Software};

/// Symbolic names, as the perf tool spells them (aliases share a row).
const SYMBOLS: &[(&str, Event)] = &[
    ("cpu-cycles", Event::Hardware(Hardware::CpuCycles)),
    ("cycles", Event::Hardware(Hardware::CpuCycles)),
    ("instructions", Event::Hardware(Hardware::Instructions)),
    (
        "cache-references",
        Event::Hardware(Hardware::CacheReferences),
    ),
    ("cache-misses", Event::Hardware(Hardware::CacheMisses)),
    (
        "branch-instructions",
        Event::Hardware(Hardware::BranchInstructions),
    ),
    ("branches", Event::Hardware(Hardware::BranchInstructions)),
    ("branch-misses", Event::Hardware(Hardware::BranchMisses)),
    ("bus-cycles", Event::Hardware(Hardware::BusCycles)),
    (
        "stalled-cycles-frontend",
        Event::Hardware(Hardware::StalledCyclesFrontend),
    ),
    (
        "idle-cycles-frontend",
        Event::Hardware(Hardware::StalledCyclesFrontend),
    ),
    (
        "stalled-cycles-backend",
        Event::Hardware(Hardware::StalledCyclesBackend),
    ),
    (
        "idle-cycles-backend",
        Event::Hardware(Hardware::StalledCyclesBackend),
    ),
    ("ref-cycles", Event::Hardware(Hardware::RefCpuCycles)),
    ("cpu-clock", Event::Software(Software::CpuClock)),
    ("task-clock", Event::Software(Software::TaskClock)),
    ("page-faults", Event::Software(Software::PageFaults)),
    ("faults", Event::Software(Software::PageFaults)),
    ("minor-faults", Event::Software(Software::PageFaultsMin)),
    ("major-faults", Event::Software(Software::PageFaultsMaj)),
    (
        "context-switches",
        Event::Software(Software::ContextSwitches),
    ),
    ("cs", Event::Software(Software::ContextSwitches)),
    ("cpu-migrations", Event::Software(Software::CpuMigrations)),
    ("migrations", Event::Software(Software::CpuMigrations)),
    (
        "alignment-faults",
        Event::Software(Software::AlignmentFaults),
    ),
    (
        "emulation-faults",
        Event::Software(Software::EmulationFaults),
    ),
    ("dummy", Event::Software(Software::Dummy)),
    ("bpf-output", Event::Software(Software::BpfOutput)),
    ("cgroup-switches", Event::Software(Software::CgroupSwitches)),
];

/// Events the perf tool measures itself (no kernel event behind them).
pub(crate) const TOOL_EVENTS: &[&str] = &[
    "duration_time",
    "user_time",
    "system_time",
    "num_cpus",
    "num_cpus_online",
    "num_dies",
    "num_cores",
    "num_packages",
    "slots",
    "smt_on",
    "system_tsc_freq",
    "core_wide",
    "target_cpu",
];

/// The generalized hardware or software event `name`.
pub(crate) fn symbol(name: &str) -> Option<Event> {
    SYMBOLS.iter().find(|(n, _)| *n == name).map(|(_, e)| *e)
}

const CACHES: &[(Cache, &[&str])] = &[
    (Cache::L1d, &["L1-dcache", "l1-d", "l1d", "L1-data"]),
    (Cache::L1i, &["L1-icache", "l1-i", "l1i", "L1-instruction"]),
    (Cache::Ll, &["LLC", "L2"]),
    (Cache::Dtlb, &["dTLB", "d-tlb", "Data-TLB"]),
    (Cache::Itlb, &["iTLB", "i-tlb", "Instruction-TLB"]),
    (Cache::Bpu, &["branch", "branches", "bpu", "btb", "bpc"]),
    (Cache::Node, &["node"]),
];

const OPS: &[(CacheOp, &[&str])] = &[
    (CacheOp::Read, &["load", "loads", "read"]),
    (CacheOp::Write, &["store", "stores", "write"]),
    (
        CacheOp::Prefetch,
        &[
            "prefetch",
            "prefetches",
            "speculative-read",
            "speculative-load",
        ],
    ),
];

const RESULTS: &[(CacheResult, &[&str])] = &[
    (CacheResult::Access, &["refs", "Reference", "ops", "access"]),
    (CacheResult::Miss, &["misses", "miss"]),
];

/// The operations each cache supports (evsel.c `evsel__hw_cache_stat`).
fn op_valid(cache: Cache, op: CacheOp) -> bool {
    match cache {
        Cache::L1i => matches!(op, CacheOp::Read | CacheOp::Prefetch),
        Cache::Itlb | Cache::Bpu => op == CacheOp::Read,
        _ => true,
    }
}

/// The longest table entry that `text` starts with (ASCII case-insensitive)
/// and that ends at a `-` or the end of `text`; returns its value and length.
fn longest<T: Copy>(text: &str, table: &[(T, &[&str])]) -> Option<(T, usize)> {
    let mut best: Option<(T, usize)> = None;
    for (value, names) in table {
        for name in names.iter() {
            let n = name.len();
            let matches = text
                .get(..n)
                .is_some_and(|head| head.eq_ignore_ascii_case(name))
                && matches!(text.as_bytes().get(n), None | Some(b'-'));
            if matches && best.is_none_or(|(_, len)| n > len) {
                best = Some((*value, n));
            }
        }
    }
    best
}

/// A cache name that starts like a cache event but is not one: the byte
/// offset of the bad part and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CacheNameError {
    pub at: usize,
    pub why: &'static str,
}

/// Decodes `L1-dcache-load-misses`-style names: a cache, then an operation
/// and / or a result in either order (operation defaults to `load`, result
/// to `refs`). `Ok(None)`: not a cache name at all.
pub(crate) fn cache(name: &str) -> Result<Option<Event>, CacheNameError> {
    let Some((cache, len)) = longest(name, CACHES) else {
        return Ok(None);
    };
    let (mut op, mut result) = (None, None);
    let mut at = len;
    while at < name.len() {
        at += 1; // the '-'
        let rest = &name[at..];
        if let Some((o, n)) = longest(rest, OPS) {
            if op.is_some() {
                return Err(CacheNameError {
                    at,
                    why: "a second cache operation (one of load, store, prefetch)",
                });
            }
            if !op_valid(cache, o) {
                return Err(CacheNameError {
                    at,
                    why: "an operation this cache does not have (L1-icache: load, prefetch; \
                          iTLB and branch: load only)",
                });
            }
            op = Some(o);
            at += n;
        } else if let Some((r, n)) = longest(rest, RESULTS) {
            if result.is_some() {
                return Err(CacheNameError {
                    at,
                    why: "a second cache result (one of refs, misses)",
                });
            }
            result = Some(r);
            at += n;
        } else {
            return Err(CacheNameError {
                at,
                why: "not a cache operation (load, store, prefetch) or result (refs, misses)",
            });
        }
    }
    Ok(Some(Event::HwCache(
        cache,
        op.unwrap_or(CacheOp::Read),
        result.unwrap_or(CacheResult::Access),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_names_decode_like_perf() {
        let ev = |c, o, r| Ok(Some(Event::HwCache(c, o, r)));
        use Cache::*;
        use CacheOp::*;
        use CacheResult::*;
        assert_eq!(cache("L1-dcache-load-misses"), ev(L1d, Read, Miss));
        assert_eq!(cache("l1d-misses"), ev(L1d, Read, Miss));
        assert_eq!(cache("LLC"), ev(Ll, Read, Access));
        assert_eq!(cache("dTLB-misses-stores"), ev(Dtlb, Write, Miss));
        assert_eq!(
            cache("L1-dcache-speculative-read-miss"),
            ev(L1d, Prefetch, Miss)
        );
        assert_eq!(cache("branch-loads"), ev(Bpu, Read, Access));
        assert_eq!(cache("llc-LOADS"), ev(Ll, Read, Access));
        assert_eq!(cache("L2_rqsts"), Ok(None));
        assert_eq!(cache("cycles"), Ok(None));
        assert_eq!(cache("iTLB-stores").unwrap_err().at, 5);
        assert_eq!(cache("LLC-load-store").unwrap_err().at, 9);
        assert_eq!(cache("LLC-miss-misses").unwrap_err().at, 9);
        assert_eq!(cache("LLC-loadz").unwrap_err().at, 4);
        assert_eq!(cache("LLC-").unwrap_err().at, 4);
        assert_eq!(
            symbol("cs"),
            Some(Event::Software(Software::ContextSwitches))
        );
    }
}
