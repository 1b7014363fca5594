//! Typed event sources: what `perf_event_attr.type` and the config words
//! select (perf_event_open(2), "type" and "config").

use crate::sys;

/// Generalized hardware events (`PERF_TYPE_HARDWARE`, since Linux 2.6.31).
/// Virtual machines often have no PMU: opening these then fails with
/// ENOENT or EOPNOTSUPP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
#[non_exhaustive]
pub enum Hardware {
    /// `PERF_COUNT_HW_CPU_CYCLES`.
    CpuCycles = sys::PERF_COUNT_HW_CPU_CYCLES,
    /// `PERF_COUNT_HW_INSTRUCTIONS`: retired instructions.
    Instructions = sys::PERF_COUNT_HW_INSTRUCTIONS,
    /// `PERF_COUNT_HW_CACHE_REFERENCES`: usually last-level cache accesses.
    CacheReferences = sys::PERF_COUNT_HW_CACHE_REFERENCES,
    /// `PERF_COUNT_HW_CACHE_MISSES`: usually last-level cache misses.
    CacheMisses = sys::PERF_COUNT_HW_CACHE_MISSES,
    /// `PERF_COUNT_HW_BRANCH_INSTRUCTIONS`: retired branches.
    BranchInstructions = sys::PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
    /// `PERF_COUNT_HW_BRANCH_MISSES`: mispredicted branches.
    BranchMisses = sys::PERF_COUNT_HW_BRANCH_MISSES,
    /// `PERF_COUNT_HW_BUS_CYCLES`.
    BusCycles = sys::PERF_COUNT_HW_BUS_CYCLES,
    /// `PERF_COUNT_HW_STALLED_CYCLES_FRONTEND` (since Linux 3.0).
    StalledCyclesFrontend = sys::PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
    /// `PERF_COUNT_HW_STALLED_CYCLES_BACKEND` (since Linux 3.0).
    StalledCyclesBackend = sys::PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
    /// `PERF_COUNT_HW_REF_CPU_CYCLES`: cycles not affected by frequency scaling (since Linux 3.3).
    RefCpuCycles = sys::PERF_COUNT_HW_REF_CPU_CYCLES,
}

/// Software events counted by the kernel (`PERF_TYPE_SOFTWARE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
#[non_exhaustive]
pub enum Software {
    /// `PERF_COUNT_SW_CPU_CLOCK`: high-resolution per-CPU timer, ns.
    CpuClock = sys::PERF_COUNT_SW_CPU_CLOCK,
    /// `PERF_COUNT_SW_TASK_CLOCK`: clock of the running task, ns.
    TaskClock = sys::PERF_COUNT_SW_TASK_CLOCK,
    /// `PERF_COUNT_SW_PAGE_FAULTS`.
    PageFaults = sys::PERF_COUNT_SW_PAGE_FAULTS,
    /// `PERF_COUNT_SW_CONTEXT_SWITCHES`.
    ContextSwitches = sys::PERF_COUNT_SW_CONTEXT_SWITCHES,
    /// `PERF_COUNT_SW_CPU_MIGRATIONS`.
    CpuMigrations = sys::PERF_COUNT_SW_CPU_MIGRATIONS,
    /// `PERF_COUNT_SW_PAGE_FAULTS_MIN`: minor faults.
    PageFaultsMin = sys::PERF_COUNT_SW_PAGE_FAULTS_MIN,
    /// `PERF_COUNT_SW_PAGE_FAULTS_MAJ`: major faults (I/O).
    PageFaultsMaj = sys::PERF_COUNT_SW_PAGE_FAULTS_MAJ,
    /// `PERF_COUNT_SW_ALIGNMENT_FAULTS` (since Linux 2.6.33).
    AlignmentFaults = sys::PERF_COUNT_SW_ALIGNMENT_FAULTS,
    /// `PERF_COUNT_SW_EMULATION_FAULTS` (since Linux 2.6.33).
    EmulationFaults = sys::PERF_COUNT_SW_EMULATION_FAULTS,
    /// `PERF_COUNT_SW_DUMMY`: counts nothing; for side-band records (since Linux 3.12).
    Dummy = sys::PERF_COUNT_SW_DUMMY,
    /// `PERF_COUNT_SW_BPF_OUTPUT`: BPF output channel (since Linux 4.4).
    BpfOutput = sys::PERF_COUNT_SW_BPF_OUTPUT,
    /// `PERF_COUNT_SW_CGROUP_SWITCHES`: context switches to another cgroup (since Linux 5.13).
    CgroupSwitches = sys::PERF_COUNT_SW_CGROUP_SWITCHES,
}

/// Hardware caches of `PERF_TYPE_HW_CACHE` events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
#[non_exhaustive]
pub enum Cache {
    /// `PERF_COUNT_HW_CACHE_L1D`: level-1 data cache.
    L1d = sys::PERF_COUNT_HW_CACHE_L1D,
    /// `PERF_COUNT_HW_CACHE_L1I`: level-1 instruction cache.
    L1i = sys::PERF_COUNT_HW_CACHE_L1I,
    /// `PERF_COUNT_HW_CACHE_LL`: last-level cache.
    Ll = sys::PERF_COUNT_HW_CACHE_LL,
    /// `PERF_COUNT_HW_CACHE_DTLB`: data TLB.
    Dtlb = sys::PERF_COUNT_HW_CACHE_DTLB,
    /// `PERF_COUNT_HW_CACHE_ITLB`: instruction TLB.
    Itlb = sys::PERF_COUNT_HW_CACHE_ITLB,
    /// `PERF_COUNT_HW_CACHE_BPU`: branch prediction unit.
    Bpu = sys::PERF_COUNT_HW_CACHE_BPU,
    /// `PERF_COUNT_HW_CACHE_NODE`: local memory accesses (since Linux 3.1).
    Node = sys::PERF_COUNT_HW_CACHE_NODE,
}

/// Cache operations of `PERF_TYPE_HW_CACHE` events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
#[non_exhaustive]
pub enum CacheOp {
    /// `PERF_COUNT_HW_CACHE_OP_READ`.
    Read = sys::PERF_COUNT_HW_CACHE_OP_READ,
    /// `PERF_COUNT_HW_CACHE_OP_WRITE`.
    Write = sys::PERF_COUNT_HW_CACHE_OP_WRITE,
    /// `PERF_COUNT_HW_CACHE_OP_PREFETCH`.
    Prefetch = sys::PERF_COUNT_HW_CACHE_OP_PREFETCH,
}

/// Cache operation results of `PERF_TYPE_HW_CACHE` events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
#[non_exhaustive]
pub enum CacheResult {
    /// `PERF_COUNT_HW_CACHE_RESULT_ACCESS`.
    Access = sys::PERF_COUNT_HW_CACHE_RESULT_ACCESS,
    /// `PERF_COUNT_HW_CACHE_RESULT_MISS`.
    Miss = sys::PERF_COUNT_HW_CACHE_RESULT_MISS,
}

/// What a hardware breakpoint triggers on (`bp_type`, since Linux 2.6.33).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
#[non_exhaustive]
pub enum BreakpointType {
    /// `HW_BREAKPOINT_R`: data reads (not supported by x86).
    Read = sys::HW_BREAKPOINT_R,
    /// `HW_BREAKPOINT_W`: data writes.
    Write = sys::HW_BREAKPOINT_W,
    /// `HW_BREAKPOINT_RW`: data reads or writes.
    ReadWrite = sys::HW_BREAKPOINT_RW,
    /// `HW_BREAKPOINT_X`: instruction execution (bp_len must be `sizeof(long)`).
    Execute = sys::HW_BREAKPOINT_X,
}

/// An event source: `attr.type` and the config words it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Event {
    /// A generalized hardware event.
    Hardware(Hardware),
    /// A hardware cache event: cache x operation x result.
    HwCache(Cache, CacheOp, CacheResult),
    /// A software event.
    Software(Software),
    /// A raw, model-specific PMU event (`PERF_TYPE_RAW`, `config` = the
    /// encoding the CPU vendor documents).
    Raw(u64),
    /// A tracepoint by id (`PERF_TYPE_TRACEPOINT`; the id is in tracefs:
    /// `events/<subsystem>/<name>/id`).
    Tracepoint(u64),
    /// A hardware breakpoint on `addr` of `len` bytes (`PERF_TYPE_BREAKPOINT`).
    Breakpoint {
        /// Access type.
        kind: BreakpointType,
        /// Address.
        addr: u64,
        /// Length in bytes (`HW_BREAKPOINT_LEN_1` .. `_8`).
        len: u64,
    },
    /// A dynamic PMU: the type number from
    /// `/sys/bus/event_source/devices/<pmu>/type` (since Linux 2.6.38) and
    /// its config words as its `format/` files describe them.
    Pmu {
        /// The PMU's type number.
        pmu_type: u32,
        /// `config`.
        config: u64,
        /// `config1`.
        config1: u64,
        /// `config2`.
        config2: u64,
        /// `config3` (since Linux 6.3).
        config3: u64,
        /// `config4` (since Linux 7.0).
        config4: u64,
    },
}

impl Event {
    /// A dynamic PMU event with only `config` set.
    pub const fn pmu(pmu_type: u32, config: u64) -> Event {
        Event::Pmu {
            pmu_type,
            config,
            config1: 0,
            config2: 0,
            config3: 0,
            config4: 0,
        }
    }

    /// `attr.type`.
    pub const fn type_id(&self) -> u32 {
        match self {
            Event::Hardware(_) => sys::PERF_TYPE_HARDWARE,
            Event::HwCache(..) => sys::PERF_TYPE_HW_CACHE,
            Event::Software(_) => sys::PERF_TYPE_SOFTWARE,
            Event::Raw(_) => sys::PERF_TYPE_RAW,
            Event::Tracepoint(_) => sys::PERF_TYPE_TRACEPOINT,
            Event::Breakpoint { .. } => sys::PERF_TYPE_BREAKPOINT,
            Event::Pmu { pmu_type, .. } => *pmu_type,
        }
    }

    /// `attr.config`: for cache events `id | op << 8 | result << 16`.
    pub const fn config(&self) -> u64 {
        match *self {
            Event::Hardware(h) => h as u64,
            Event::HwCache(c, op, r) => c as u64 | (op as u64) << 8 | (r as u64) << 16,
            Event::Software(s) => s as u64,
            Event::Raw(c) | Event::Tracepoint(c) => c,
            Event::Breakpoint { .. } => 0,
            Event::Pmu { config, .. } => config,
        }
    }

    /// Whether the event needs a hardware PMU (absent in most VMs).
    pub const fn needs_hardware_pmu(&self) -> bool {
        matches!(
            self,
            Event::Hardware(_) | Event::HwCache(..) | Event::Raw(_)
        )
    }
}
