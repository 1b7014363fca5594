//! [`Counter`]: the events benchmark harnesses ask for by name, and errors
//! that say which software event works where a hardware one is missing.

use core::fmt;
use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Hardware, Software};
use perf_event_core::linux::errno as e;
use perf_event_core::monitor::{Monitor, MonitorError, Threads};

/// An event to count per benchmark iteration.
///
/// The hardware counters count user space only (`exclude_kernel`,
/// `exclude_hv`, like perf's `:u`): that is what a benchmark's own code
/// executes, and what `kernel.perf_event_paranoid = 2` (the default) lets
/// an unprivileged user count. On aarch64 they also ask for user-space
/// counter access (`config1` bit 1, honoured where
/// `/proc/sys/kernel/perf_user_access` is 1), so reads need no syscall.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
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
    /// Any perf event string naming one event (`cycles:u`,
    /// `cpu/event=0x3c/`, `sched:sched_switch`, `page-faults`...), parsed
    /// with [`crate::parse`] against this machine's sysfs and tracefs.
    Event(String),
}

impl Counter {
    /// The name in messages (perf's spelling).
    pub fn name(&self) -> &str {
        match self {
            Counter::Instructions => "instructions",
            Counter::Cycles => "cycles",
            Counter::BranchMisses => "branch-misses",
            Counter::CacheMisses => "cache-misses",
            Counter::TaskClock => "task-clock",
            Counter::Event(s) => s,
        }
    }

    /// The unit values are in: `ns` for task-clock, else the event's name.
    pub fn unit(&self) -> &str {
        match self {
            Counter::TaskClock => "ns",
            other => other.name(),
        }
    }

    /// The attr to open.
    pub fn attr(&self) -> Result<Attr, CounterError> {
        let hw = |h| {
            Attr::new(Event::Hardware(h))
                .exclude_kernel(true)
                .exclude_hv(true)
                .config1(perf_event_core::abi::arch::TARGET.user_counter.config1())
        };
        Ok(match self {
            Counter::Instructions => hw(Hardware::Instructions),
            Counter::Cycles => hw(Hardware::CpuCycles),
            Counter::BranchMisses => hw(Hardware::BranchMisses),
            Counter::CacheMisses => hw(Hardware::CacheMisses),
            Counter::TaskClock => Attr::new(Event::Software(Software::TaskClock)),
            Counter::Event(s) => {
                let fail = |why: String| CounterError {
                    counter: self.clone(),
                    kind: CounterErrorKind::Parse(why),
                };
                let system = crate::parse::System::discover()
                    .map_err(|e| fail(format!("reading the PMUs: {e}")))?;
                let list = crate::parse::parse(s, &system).map_err(|e| fail(e.to_string()))?;
                match list.events() {
                    [one] => one.attr,
                    events => {
                        return Err(fail(format!(
                            "names {} events; a counter is one event",
                            events.len()
                        )))
                    }
                }
            }
        })
    }

    /// Opens `counters` as one [`Monitor`] group counting `threads`. A
    /// hardware counter the machine lacks is an error that names it and
    /// the software event that would work ([`Counter::TaskClock`]), never
    /// a monitor that reads zeros.
    pub fn open<const N: usize>(
        counters: &[Counter; N],
        threads: Threads,
    ) -> Result<Monitor<N>, CounterError> {
        let mut attrs = [Attr::new(Event::Software(Software::TaskClock)); N];
        for (attr, counter) in attrs.iter_mut().zip(counters) {
            *attr = counter.attr()?;
        }
        Monitor::open_for(attrs, threads).map_err(|error| {
            let index = match error {
                MonitorError::Open { index, .. } | MonitorError::Map { index, .. } => index,
                _ => 0,
            };
            CounterError {
                counter: counters[index].clone(),
                kind: CounterErrorKind::Monitor {
                    error: Box::new(error),
                    hardware: attrs[index].needs_hardware_pmu(),
                },
            }
        })
    }
}

impl fmt::Display for Counter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A counter that could not be set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterError {
    /// Which counter.
    pub counter: Counter,
    /// Why.
    pub kind: CounterErrorKind,
}

/// Why a counter could not be set up.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CounterErrorKind {
    /// The event string did not parse to one event.
    Parse(String),
    /// Opening or mapping failed.
    Monitor {
        /// The monitor's error.
        error: Box<MonitorError>,
        /// Whether the event needs a hardware PMU.
        hardware: bool,
    },
}

impl CounterError {
    /// Whether the machine has no PMU for this (hardware) counter: ENOENT,
    /// EOPNOTSUPP or ENODEV from `perf_event_open`, as in most VMs.
    pub fn is_missing_hardware(&self) -> bool {
        match &self.kind {
            CounterErrorKind::Monitor {
                error,
                hardware: true,
            } => matches!(
                **error,
                MonitorError::Open { error, .. } if matches!(
                error.errno.map(|e| e.0),
                Some(e::ENOENT | e::EOPNOTSUPP | e::ENODEV)
            )),
            _ => false,
        }
    }
}

impl fmt::Display for CounterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.counter.name();
        match &self.kind {
            CounterErrorKind::Parse(why) => write!(f, "counter `{name}`: {why}"),
            CounterErrorKind::Monitor { .. } if self.is_missing_hardware() => {
                let errno = match &self.kind {
                    CounterErrorKind::Monitor { error, .. } => match **error {
                        MonitorError::Open { error, .. } => error.errno,
                        _ => None,
                    },
                    CounterErrorKind::Parse(_) => None,
                };
                write!(
                    f,
                    "counter `{name}`: this machine has no hardware PMU event for it \
                     (perf_event_open: {}; usual in virtual machines). The software event \
                     `task-clock` (CPU time in ns, Counter::TaskClock) works here; or run on \
                     bare metal / a VM with a virtual PMU",
                    errno.unwrap_or(perf_event_core::linux::errno::Errno(0))
                )
            }
            CounterErrorKind::Monitor { error, .. } => write!(f, "counter `{name}`: {error}"),
        }
    }
}

impl std::error::Error for CounterError {}
