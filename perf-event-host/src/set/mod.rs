//! Event sets (std): the same events on every CPU, on every thread of a
//! running process and on every core type, with their fds managed — what
//! `perf stat -a`, `perf stat -p` and profilers build on (libperf's
//! evlist / evsel / cpumap / threadmap).
//!
//! - [`Cpus`] / [`CpuSet`]: online CPUs, a PMU's `cpus` / `cpumask`, user
//!   lists; offline and nonexistent CPUs are reported ([`CpuSelection`]).
//! - [`ThreadSet`]: the threads of a process from `/proc/PID/task`;
//!   [`AttachError`] explains ESRCH / EACCES / EPERM.
//! - [`CorePmus`]: hybrid expansion of generalized hardware events, one per
//!   core PMU, with the PMU type in config bits 32-63
//!   ([`PMU_TYPE_SHIFT`]), each restricted to its PMU's CPUs.
//! - [`EventSet`]: groups x placements -> an fd table. One call opens all,
//!   with `perf stat`'s partial-failure policy; enable / disable / reset
//!   with `PERF_IOC_FLAG_GROUP` on leaders; [`EventSet::read_all`] makes
//!   one `read(2)` per group instance; [`EventSet::sample_ids`] maps ids
//!   back to (event, cpu, thread).
//! - The fd budget: RLIMIT_NOFILE is raised toward its hard limit before
//!   opening; past it, [`BudgetError`] says how many fds are needed and
//!   allowed, or [`BudgetPolicy::InheritPerCpu`] falls back to per-CPU
//!   events with `inherit` on the main thread.
//! - [`aggregate`]: per CPU, thread, core type or total, scaled.
//!
//! ```no_run
//! use perf_event_core::attr::Attr;
//! use perf_event_core::event::{Event, Software};
//! use perf_event_host::set::{aggregate, AggrMode, BudgetPolicy, Cpus, EventSet, EventSpec,
//!     HybridNames, Target};
//!
//! let cpus = Cpus::read()?;
//! let group = vec![EventSpec::new("task-clock", Attr::new(Event::Software(Software::TaskClock)))];
//! let mut set = EventSet::open(vec![group], Target::Cpus(cpus.online().clone()),
//!     BudgetPolicy::Fail)?;
//! set.enable()?;
//! std::thread::sleep(std::time::Duration::from_millis(100));
//! set.disable()?;
//! let counts = set.read_all()?.to_vec();
//! for line in aggregate(set.events(), &counts, AggrMode::PerCpu, HybridNames::Keep) {
//!     println!("{:?} {}: {:?}", line.key, line.event, line.value);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod aggregate;
mod budget;
mod cpus;
mod event_set;
mod hybrid;
mod spec;
mod threads;

pub use aggregate::{
    aggregate, aggregate_topology, AggrKey, AggrMode, AggrValue, Aggregate, HybridNames,
    TopologyLevel,
};
pub use budget::{reserve, BudgetError};
pub use cpus::{CpuProblem, CpuSelection, CpuSet, Cpus, RejectedCpu};
pub use event_set::{AttachReport, EventInfo, EventSet};
pub use hybrid::{CorePmu, CorePmus, PMU_TYPE_SHIFT};
pub use spec::{BudgetPolicy, EventSpec, Target};
pub use threads::{AttachError, ThreadSet};

use crate::sysfs::SysfsError;
use perf_event_core::linux::errno::Errno;
use perf_event_core::open::OpenError;
use perf_event_core::read_format::Counts;
use perf_event_core::read_format::ReadError;
use std::fmt;

/// One fd's counts and where the fd is: what [`EventSet::read_all`] gives
/// for each open fd (the [`Placement`] of [`EventSet::sample_ids`] and the
/// crate's one counts value, from the group leader's `PERF_FORMAT_GROUP`
/// `read(2)`, since Linux 2.6.31).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacedCounts {
    /// Its event (index into [`EventSet::events`]), CPU (-1: any) and
    /// thread (-1: every task on the CPU).
    pub placement: Placement,
    /// The value with the group's enabled and running times.
    pub counts: Counts,
}

/// Whether an event opened anywhere.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventStatus {
    /// Open on at least one placement.
    Open,
    /// `<not supported>`: open nowhere, with the kernel's reason.
    NotSupported(String),
}

/// Why an event set could not be opened, controlled or read.
#[derive(Debug)]
#[non_exhaustive]
pub enum SetError {
    /// A fatal `perf_event_open` error (permission, or an errno that is not
    /// "this event is not supported").
    Open {
        /// The event's name.
        event: String,
        /// The CPU (-1: any).
        cpu: i32,
        /// The thread (-1: every task).
        tid: i32,
        /// The explained error.
        error: Box<OpenError>,
    },
    /// Not enough file descriptors.
    Budget(BudgetError),
    /// The process cannot be attached to.
    Attach(AttachError),
    /// The CPU list could not be read.
    Sysfs(SysfsError),
    /// An ioctl on a leader failed.
    Ioctl {
        /// The leader's name.
        event: String,
        /// The CPU.
        cpu: i32,
        /// The thread.
        tid: i32,
        /// The errno.
        errno: Errno,
    },
    /// A group read failed.
    Read {
        /// The leader's name.
        event: String,
        /// The CPU.
        cpu: i32,
        /// The thread.
        tid: i32,
        /// What went wrong.
        failure: ReadError,
    },
}

fn place(cpu: i32, tid: i32) -> String {
    match (cpu, tid) {
        (-1, t) => format!("thread {t}"),
        (c, -1) => format!("CPU {c}"),
        (c, t) => format!("thread {t} on CPU {c}"),
    }
}

impl fmt::Display for SetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetError::Open {
                event,
                cpu,
                tid,
                error,
            } => write!(f, "{event} on {}: {error}", place(*cpu, *tid)),
            SetError::Budget(e) => e.fmt(f),
            SetError::Attach(e) => e.fmt(f),
            SetError::Sysfs(e) => e.fmt(f),
            SetError::Ioctl {
                event,
                cpu,
                tid,
                errno,
            } => write!(f, "ioctl on {event} ({}): {errno}", place(*cpu, *tid)),
            SetError::Read {
                event,
                cpu,
                tid,
                failure,
            } => write!(f, "reading {event} ({}): {failure}", place(*cpu, *tid)),
        }
    }
}

impl std::error::Error for SetError {}

/// Where one fd is: its event (index into [`EventSet::events`]), CPU (-1:
/// any) and thread (-1: every task on the CPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Placement {
    /// Index into [`EventSet::events`].
    pub event: usize,
    /// The CPU, -1 for any.
    pub cpu: i32,
    /// The thread, -1 for every task.
    pub tid: i32,
}
