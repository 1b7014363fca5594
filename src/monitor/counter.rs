//! [`Counter`]: the events benchmark harnesses ask for by name, and
//! [`CounterError`], which says which software event works where a
//! hardware one is missing. `no_std` and allocation-free: an event given by
//! a perf event string is parsed above the core (perf-event-host's
//! `measure::event_counter`) into [`Counter::Event`].

use super::{Monitor, MonitorError, Threads};
use crate::attr::Attr;
use crate::event::{Event, Hardware, Software};
use crate::linux::errno::{self as e, Errno};
use core::fmt;

/// An event to count per benchmark iteration.
///
/// The hardware counters count user space only (`exclude_kernel`,
/// `exclude_hv`, like perf's `:u`): that is what a benchmark's own code
/// executes, and what `kernel.perf_event_paranoid = 2` (the default) lets
/// an unprivileged user count. On aarch64 they also ask for user-space
/// counter access (`config1` bit 1, honoured where
/// `/proc/sys/kernel/perf_user_access` is 1), so reads need no syscall.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Counter {
    /// `PERF_COUNT_HW_INSTRUCTIONS` (user space).
    Instructions,
    /// `PERF_COUNT_HW_CPU_CYCLES` (user space).
    Cycles,
    /// `PERF_COUNT_HW_BRANCH_MISSES` (user space).
    BranchMisses,
    /// `PERF_COUNT_HW_CACHE_MISSES` (user space; usually last-level cache).
    CacheMisses,
    /// `PERF_COUNT_SW_TASK_CLOCK`: CPU time of the task in ns. A software
    /// event: works on every machine, including VMs without a PMU.
    TaskClock,
    /// Any one event, by its attr: `name` is how messages and units call it
    /// (perf's spelling, e.g. `page-faults`). perf-event-host's
    /// `measure::event_counter` makes one from a perf event string.
    Event {
        /// The event to open, as given.
        attr: Attr,
        /// Its name in messages, and its unit.
        name: &'static str,
    },
}

impl Counter {
    /// The name in messages (perf's spelling).
    pub fn name(&self) -> &'static str {
        match self {
            Counter::Instructions => "instructions",
            Counter::Cycles => "cycles",
            Counter::BranchMisses => "branch-misses",
            Counter::CacheMisses => "cache-misses",
            Counter::TaskClock => "task-clock",
            Counter::Event { name, .. } => name,
        }
    }

    /// The unit values are in: `ns` for task-clock, else the event's name.
    pub fn unit(&self) -> &'static str {
        match self {
            Counter::TaskClock => "ns",
            other => other.name(),
        }
    }

    /// The attr to open.
    pub fn attr(&self) -> Attr {
        let hw = |h| {
            Attr::new(Event::Hardware(h))
                .exclude_kernel(true)
                .exclude_hv(true)
                .config1(crate::abi::arch::TARGET.user_counter.config1())
        };
        match self {
            Counter::Instructions => hw(Hardware::Instructions),
            Counter::Cycles => hw(Hardware::CpuCycles),
            Counter::BranchMisses => hw(Hardware::BranchMisses),
            Counter::CacheMisses => hw(Hardware::CacheMisses),
            Counter::TaskClock => Attr::new(Event::Software(Software::TaskClock)),
            Counter::Event { attr, .. } => *attr,
        }
    }

    /// Opens `counters` as one [`Monitor`] group counting `threads`. A
    /// hardware counter the machine lacks is an error that names it and
    /// the software event that would work ([`Counter::TaskClock`]), never
    /// a monitor that reads zeros.
    // The error is the monitor's own (128 bytes: an open's full
    // explanation) and which counter; the core allocates nothing, so it
    // is returned by value, as `Monitor::open_for` returns its error.
    #[allow(clippy::result_large_err)]
    pub fn open<const N: usize>(
        counters: &[Counter; N],
        threads: Threads,
    ) -> Result<Monitor<N>, CounterError> {
        let attrs = counters.map(|c| c.attr());
        Monitor::open_for(attrs, threads).map_err(|error| {
            let index = match error {
                MonitorError::Open { index, .. } | MonitorError::Map { index, .. } => index,
                _ => 0,
            };
            CounterError {
                index,
                name: counters[index].name(),
                error,
                hardware: attrs[index].needs_hardware_pmu(),
            }
        })
    }
}

impl fmt::Display for Counter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A counter that could not be opened: which one, the monitor's error, and
/// whether it needs a hardware PMU (for the explanation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterError {
    /// Which counter: its index in the slice given to [`Counter::open`].
    pub index: usize,
    /// Its name ([`Counter::name`]).
    pub name: &'static str,
    /// Why: the monitor's error.
    pub error: MonitorError,
    /// Whether the event needs a hardware PMU.
    pub hardware: bool,
}

impl CounterError {
    /// The errno `perf_event_open` answered when this hardware counter has
    /// no PMU here: ENOENT, EOPNOTSUPP or ENODEV, as in most VMs.
    fn missing_hardware_errno(&self) -> Option<Errno> {
        match self.error {
            MonitorError::Open { error, .. } if self.hardware => error
                .errno
                .filter(|e| matches!(e.0, e::ENOENT | e::EOPNOTSUPP | e::ENODEV)),
            _ => None,
        }
    }

    /// Whether the machine has no PMU for this (hardware) counter: ENOENT,
    /// EOPNOTSUPP or ENODEV from `perf_event_open`, as in most VMs.
    pub fn is_missing_hardware(&self) -> bool {
        self.missing_hardware_errno().is_some()
    }
}

impl fmt::Display for CounterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name;
        match self.missing_hardware_errno() {
            Some(errno) => write!(
                f,
                "counter `{name}`: this machine has no hardware PMU event for it \
                 (perf_event_open: {errno}; usual in virtual machines). The software event \
                 `task-clock` (CPU time in ns, Counter::TaskClock) works here; or run on \
                 bare metal / a VM with a virtual PMU"
            ),
            None => write!(f, "counter `{name}`: {}", self.error),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for CounterError {}
