//! What to open: events, groups and where they go.

use super::cpus::CpuSet;
use super::threads::ThreadSet;
use perf_event_core::attr::Attr;
use perf_event_core::fallback::{Attempt, Policy};

/// One event of a group.
#[derive(Clone, Debug)]
pub struct EventSpec {
    /// The name it is reported under (`cycles`, `syscalls:sys_enter_read`).
    pub name: String,
    /// The attr. The set adds `PERF_FORMAT_TOTAL_TIME_ENABLED` and
    /// `TOTAL_TIME_RUNNING` to its read_format (and `GROUP` in a group of
    /// more than one event), opens leaders disabled and members enabled
    /// (they follow their leader).
    pub attr: Attr,
    /// The core PMU it belongs to after hybrid expansion (`cpu_core`).
    pub pmu: Option<String>,
    /// The only CPUs it may be opened on (a PMU's CPUs); `None`: any.
    pub cpus: Option<CpuSet>,
    /// An attr to retry with when the kernel refuses `attr` with ENOENT,
    /// EINVAL or EOPNOTSUPP (hybrid events on kernels without the extended
    /// PMU type).
    pub fallback: Option<Attr>,
    /// perf's fallbacks to take when the kernel refuses `attr`
    /// ([`Policy::STRICT`] by default: none). Taken on the first placement
    /// that needs them, kept for every later one, and reported in
    /// [`EventInfo::fallbacks`](super::EventInfo::fallbacks).
    pub policy: Policy,
    /// perf's `:P`: the highest `precise_ip` the PMU takes
    /// ([`Attempt::max_precise`](perf_event_core::fallback::Attempt::max_precise);
    /// lowered only under a policy with [`Policy::max_precise`]).
    pub max_precise: bool,
}

impl EventSpec {
    /// An event on any PMU and CPU.
    pub fn new(name: &str, attr: Attr) -> EventSpec {
        EventSpec {
            name: name.to_owned(),
            attr,
            pmu: None,
            cpus: None,
            fallback: None,
            policy: Policy::STRICT,
            max_precise: false,
        }
    }

    /// The same event under `policy`.
    pub fn with_policy(mut self, policy: Policy) -> EventSpec {
        self.policy = policy;
        self
    }

    /// The attempt that opens `attr` (the spec's, or its hybrid fallback)
    /// under the spec's policy.
    pub(super) fn attempt(&self, attr: Attr) -> Attempt {
        let a = Attempt::new(attr, self.policy);
        if self.max_precise {
            a.max_precise()
        } else {
            a
        }
    }

    /// The name as `perf stat` prints it: `pmu/name/` for an event bound to
    /// one core PMU, the plain name otherwise.
    pub fn display_name(&self) -> String {
        match &self.pmu {
            Some(pmu) => format!("{pmu}/{}/", self.name),
            None => self.name.clone(),
        }
    }
}

/// Where the groups are placed: each group is opened once per (cpu,
/// thread) placement.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Target {
    /// Every task on each CPU (`perf stat -a` / `-C`): placements
    /// (cpu, pid -1). Needs CAP_PERFMON or perf_event_paranoid <= 0.
    Cpus(CpuSet),
    /// The given threads on any CPU (`-t TID`), or on each of `cpus`.
    Threads {
        /// The threads.
        threads: ThreadSet,
        /// `None`: one placement per thread (cpu -1); otherwise one per
        /// (cpu, thread).
        cpus: Option<CpuSet>,
        /// Set `inherit`: threads they create later are counted too.
        inherit: bool,
    },
    /// Every thread of a running process (`-p PID`): `/proc/PID/task` is
    /// scanned, its threads opened, and scanned again until no new thread
    /// appears; threads that exit before their open are skipped and counted.
    Process {
        /// The process.
        pid: i32,
        /// As for [`Target::Threads`].
        cpus: Option<CpuSet>,
        /// Set `inherit` on every thread's events.
        inherit: bool,
    },
}

/// What to do when the fds needed exceed RLIMIT_NOFILE's hard limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum BudgetPolicy {
    /// Fail with [`SetError::Budget`](super::SetError::Budget).
    #[default]
    Fail,
    /// For [`Target::Process`] / [`Target::Threads`]: open one placement
    /// per online CPU on the process's main thread with `inherit` set
    /// instead of one per thread (samply's fallback). It counts the main
    /// thread and every thread created after the open (all of a workload
    /// the caller starts), but not the other threads that already ran.
    InheritPerCpu,
}
