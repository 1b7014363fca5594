//! Self-monitoring for benchmark harnesses: a group of events opened once
//! and kept counting, read around a region.
//!
//! # Cost of a region
//!
//! A region is two reads of the whole group ([`Monitor::start`],
//! [`Monitor::stop`]) and the difference between them; nothing is enabled,
//! disabled or reset per region (the group is enabled once, at open, with
//! one `PERF_EVENT_IOC_ENABLE` carrying `PERF_IOC_FLAG_GROUP`).
//!
//! - **User-space path**: when every event of the group is on the PMU and
//!   its page allows the counter instruction (`rdpmc`, `mrs`, `csrr`; see
//!   [`crate::userpage`]), each read is a seqlock snapshot per event and
//!   **no system call**.
//! - **`read(2)` path** (software events, no user access, an event not on
//!   the PMU right now, or counting other threads): each read is **one
//!   `read(2)` of the leader with `PERF_FORMAT_GROUP`**, which returns
//!   every member's value and the group's times: **2 system calls per
//!   region**, whatever the number of events.
//!
//! # Which threads are counted ([`Threads`])
//!
//! - [`Threads::Caller`]: the calling thread only. User-space reads are
//!   possible.
//! - [`Threads::CallerAndNew`]: the calling thread and every thread (and
//!   process) it creates after the monitor is opened, with the attr's
//!   `inherit` bit. A child's counts are added to the group when it exits,
//!   and a read sums the children still running (`perf_event_read_value`
//!   walks the child events), so a region counts all of the work of the
//!   threads it started once the kernel has reaped them. A joined thread
//!   may not be reaped yet: musl's `pthread_join` returns before the
//!   thread makes its exit system call, and a group read while the kernel
//!   tears an exiting child's group down (the leader is detached and added
//!   back first, then each member) misses the members not yet added back
//!   (seen on Linux 6.12). For exact counts, read once the threads are gone
//!   from `/proc/self/task`. Threads that existed before the monitor was
//!   opened are not counted (use perf-event-host's `PerThread` for them). Always the
//!   `read(2)` path: a counter register holds only the current thread's
//!   count, and the kernel refuses to map the page of an inherited per-task
//!   event.
//! - `PerThread` (perf-event-host): the same group opened on each thread of a given
//!   list of thread ids; a read sums one group read per thread.
//!
//! # Kernel limits
//!
//! - `inherit` with `PERF_FORMAT_GROUP`: refused with EINVAL before Linux
//!   4.13 (commit ba5213ae6b88 moved the check to `PERF_SAMPLE_READ`).
//!   [`MonitorError::Open`] says so when the running kernel is older.
//! - `inherit` with `PERF_SAMPLE_READ` in `sample_type`: refused before
//!   Linux 6.12; since 6.12 accepted only together with `PERF_SAMPLE_TID`.
//!   A monitor counts and never samples, but an attr that carries these bits
//!   gets the explanation instead of a bare EINVAL.
//!
//! ```
//! use perf_event_core::attr::Attr;
//! use perf_event_core::event::{Event, Software};
//! use perf_event_core::monitor::Monitor;
//!
//! let mut m = Monitor::open([
//!     Attr::new(Event::Software(Software::TaskClock)),
//!     Attr::new(Event::Software(Software::PageFaults)),
//! ])?;
//! let (sum, [clock, faults]) = m.measure(|| (0..1_000_000u64).sum::<u64>())?;
//! assert!(clock.counts.value > 0 && sum > 0);
//! # let _ = faults;
//! # Ok::<(), perf_event_core::monitor::MonitorError>(())
//! ```
//!
//! [`Counter`] names the events harnesses ask for (instructions, cycles,
//! branch and cache misses, task-clock, or any one attr) and opens them as a
//! monitor, with errors ([`CounterError`]) that say which software event
//! works where a hardware one is missing. perf-event-host's `measure`
//! module adds, with std, `PerThread`, `event_counter` (a counter from a
//! perf event string) and `stats`, the harness-agnostic measuring API.

mod counter;
mod group;

pub use counter::{Counter, CounterError};
pub use group::{open_group, GroupFd, MAX_EVENTS};

use crate::abi::KernelVersion;
use crate::attr::Attr;
use crate::fallback::{Attempt, Fallbacks, Policy};
use crate::open::{OpenError, Scope};
use crate::read_format::ReadError;
use crate::sys;
use crate::userpage::{
    CounterReader, CounterReading, FallbackReason, MapError, ReadPath, UserPage,
};
use core::fmt;

/// `read_format` of every monitored event: the group's values in one
/// `read(2)`, with the times that make multiplexed counts scalable.
pub const READ_FORMAT: u64 = (sys::PERF_FORMAT_GROUP
    | sys::PERF_FORMAT_TOTAL_TIME_ENABLED
    | sys::PERF_FORMAT_TOTAL_TIME_RUNNING) as u64;

/// Which threads a monitor counts (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Threads {
    /// The thread that opens the monitor.
    #[default]
    Caller,
    /// That thread and every thread or process it creates afterwards
    /// (`inherit`); read through `read(2)` only.
    CallerAndNew,
}

/// Why a monitor could not be set up or read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MonitorError {
    /// Opening event `index` failed.
    Open {
        /// Which event (0 = the group leader).
        index: usize,
        /// Why.
        error: OpenError,
        /// Whether the attr had `inherit` (for the kernel-limit explanation).
        inherit: bool,
        /// `sample_type` of the attr (PERF_SAMPLE_READ matters with inherit).
        sample_type: u64,
    },
    /// Mapping event `index`'s metadata page failed.
    Map {
        /// Which event.
        index: usize,
        /// Why.
        error: MapError,
    },
    /// The group read failed.
    Read(ReadError),
    /// Enabling the group failed.
    Control(crate::linux::errno::Errno),
    /// More events than [`MAX_EVENTS`] in one group.
    TooManyEvents {
        /// Events given.
        given: usize,
    },
}

const SAMPLE_READ: u64 = sys::PERF_SAMPLE_READ as u64;

impl MonitorError {
    /// The kernel-limit explanation of an EINVAL with inherit, for the
    /// `running` kernel (appended to the open error's text).
    fn explain_inherit(
        &self,
        running: Option<KernelVersion>,
        f: &mut fmt::Formatter<'_>,
    ) -> fmt::Result {
        let MonitorError::Open {
            error,
            inherit: true,
            sample_type,
            ..
        } = self
        else {
            return Ok(());
        };
        if error.errno.map(|e| e.0) != Some(crate::linux::errno::EINVAL) {
            return Ok(());
        }
        let older = |v| running.is_some_and(|r| !r.at_least(v));
        if older(KernelVersion::new(4, 13, 0)) {
            write!(
                f,
                "; this kernel ({}) refuses inherit with PERF_FORMAT_GROUP (allowed since Linux \
                 4.13): count the calling thread only (Threads::Caller) or list the threads \
                 (PerThread)",
                running.unwrap_or(KernelVersion::new(0, 0, 0))
            )?;
        }
        if sample_type & SAMPLE_READ != 0 {
            let v612 = KernelVersion::new(6, 12, 0);
            if older(v612) {
                f.write_str(
                    "; inherit with PERF_SAMPLE_READ is refused before Linux 6.12: drop \
                     PERF_SAMPLE_READ (a monitor reads counts with read(2)) or inherit",
                )?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for MonitorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MonitorError::Open { index, error, .. } => {
                write!(f, "monitor event {index}: {error}")?;
                self.explain_inherit(crate::linux::system::kernel_version(), f)
            }
            MonitorError::Map { index, error } => write!(f, "monitor event {index}: {error}"),
            MonitorError::Read(error) => write!(f, "reading the monitor's group: {error}"),
            MonitorError::Control(e) => write!(f, "enabling the monitor's group: {e}"),
            MonitorError::TooManyEvents { given } => write!(
                f,
                "{given} events in one monitor: at most {MAX_EVENTS} (the group read buffer)"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for MonitorError {}

/// Per-element [`CounterReading::between`] of two group reads: each
/// event's count over the region.
#[inline]
pub fn between<const N: usize>(
    start: &[CounterReading; N],
    end: &[CounterReading; N],
) -> [CounterReading; N] {
    core::array::from_fn(|i| start[i].between(&end[i]))
}

/// What a monitor holds before its first read: a count of 0 with no time.
pub const UNREAD: CounterReading = CounterReading {
    counts: crate::read_format::Counts::with_times(0, 0, 0),
    path: ReadPath::Syscall {
        reason: FallbackReason::NotOnPmu,
    },
};

/// `N` events opened as one group (the first leads) and kept enabled;
/// [`Monitor::start`] / [`Monitor::stop`] read them around a region. See
/// the [module docs](self) for the paths and their system calls.
///
/// Not `Send`: user-space counter reads are valid only on the thread that
/// opened the events.
#[derive(Debug)]
pub struct Monitor<const N: usize> {
    events: Events<N>,
    threads: Threads,
    start: [CounterReading; N],
    /// Per event, perf's fallbacks taken when it was opened.
    fallbacks: [Fallbacks; N],
}

/// The group's fds, with their user-space readers when that path may be
/// taken ([`Threads::Caller`]).
#[derive(Debug)]
enum Events<const N: usize> {
    UserSpace([CounterReader<UserPage, GroupFd<N>>; N]),
    /// The fds, and why they are read with `read(2)` only.
    ReadOnly([GroupFd<N>; N], FallbackReason),
}

impl<const N: usize> Monitor<N> {
    /// Opens `attrs` on the calling thread as one group.
    /// [`Monitor::open_for`] with [`Threads::Caller`].
    pub fn open(attrs: [Attr; N]) -> Result<Monitor<N>, MonitorError> {
        Monitor::open_for(attrs, Threads::Caller)
    }

    /// [`Monitor::open_with`] under [`Policy::PERF_STAT`]: as an ordinary
    /// user at `perf_event_paranoid` 2 an event that counts the kernel is
    /// refused (EACCES), and the monitor counts it in user space only, as
    /// `perf stat` does (`task-clock:u`); [`Monitor::fallbacks`] says so.
    pub fn open_for(attrs: [Attr; N], threads: Threads) -> Result<Monitor<N>, MonitorError> {
        Monitor::open_with(attrs, threads, Policy::PERF_STAT)
    }

    /// Opens `attrs` as one group (the first leads) counting `threads`,
    /// maps each event's metadata page when user-space reads are possible
    /// (the calling thread only, and no software, tracepoint or breakpoint
    /// event in the group: those have no counter to read), and enables the
    /// group (one ioctl). Each attr gets `read_format`
    /// [`READ_FORMAT`], `inherit` per `threads`, and is opened disabled;
    /// other settings (exclude bits, config1 user-access bits) are the
    /// caller's.
    ///
    /// Each event is opened under `policy` ([`crate::fallback`]; the final
    /// attrs and what changed are in [`Monitor::fallbacks`]);
    /// [`Policy::STRICT`] makes any refusal the error.
    pub fn open_with(
        attrs: [Attr; N],
        threads: Threads,
        policy: Policy,
    ) -> Result<Monitor<N>, MonitorError> {
        const { assert!(N > 0, "a monitor needs at least one event") };
        let inherit = threads == Threads::CallerAndNew;
        let mut attempts = attrs.map(|a| Attempt::new(a, policy));
        let fds = group::open_group(&mut attempts, Scope::this_thread(), inherit)?;
        let attrs = attempts.map(|a| a.attr());
        // A software, tracepoint or breakpoint event has no hardware
        // counter (its page's `index` is always 0), so such a group is never
        // read all in user space: no pages, and no page check before each
        // group read.
        let countless = attrs.iter().any(|a| {
            matches!(
                a.to_raw().type_,
                crate::sys::PERF_TYPE_SOFTWARE
                    | crate::sys::PERF_TYPE_TRACEPOINT
                    | crate::sys::PERF_TYPE_BREAKPOINT
            )
        });
        let events = if inherit {
            // The children's counts are summed by the kernel's read.
            Events::ReadOnly(fds, FallbackReason::OtherThread)
        } else if countless {
            Events::ReadOnly(fds, FallbackReason::NoUserAccess)
        } else {
            Events::UserSpace(group::map_readers(fds)?)
        };
        let monitor = Monitor {
            events,
            threads,
            start: [UNREAD; N],
            fallbacks: attempts.map(|a| *a.fallbacks()),
        };
        monitor
            .leader()
            .fd()
            .enable(true)
            .map_err(MonitorError::Control)?;
        Ok(monitor)
    }

    /// Per event, perf's fallbacks taken when it was opened (empty when
    /// the kernel took each attr as given).
    pub fn fallbacks(&self) -> &[Fallbacks; N] {
        &self.fallbacks
    }

    /// Which threads it counts.
    pub fn threads(&self) -> Threads {
        self.threads
    }

    /// Reads every event now: the counter instruction for all of them when
    /// each page allows it, else one group `read(2)` (its path says why:
    /// the first event that could not be read in user space, or
    /// [`FallbackReason::OtherThread`] with [`Threads::CallerAndNew`],
    /// [`FallbackReason::NoUserAccess`] for a group with a software,
    /// tracepoint or breakpoint event).
    #[inline]
    pub fn read(&self) -> Result<[CounterReading; N], MonitorError> {
        self.read_as(|_, reading| reading)
    }

    /// [`Monitor::read`], each event's reading passed through `wrap` (with
    /// its index) as it is made: [`Monitor::stop`] subtracts the start as
    /// it decodes, without a second array.
    #[inline(always)]
    fn read_as<T>(
        &self,
        wrap: impl Fn(usize, CounterReading) -> T,
    ) -> Result<[T; N], MonitorError> {
        let reason = match &self.events {
            Events::UserSpace(readers) => match group::read_user_space(readers) {
                Ok(readings) => return Ok(core::array::from_fn(|i| wrap(i, readings[i]))),
                Err(reason) => reason,
            },
            Events::ReadOnly(_, reason) => *reason,
        };
        let path = ReadPath::Syscall { reason };
        self.leader()
            .read_group_as(|i, counts| wrap(i, CounterReading { counts, path }))
            .map_err(MonitorError::Read)
    }

    /// Marks the start of a region.
    #[inline]
    pub fn start(&mut self) -> Result<(), MonitorError> {
        self.start = self.read()?;
        Ok(())
    }

    /// The counts since [`Monitor::start`] ([`between`]).
    #[inline]
    pub fn stop(&mut self) -> Result<[CounterReading; N], MonitorError> {
        let start = &self.start;
        self.read_as(|i, end| start[i].between(&end))
    }

    /// Runs `f` between [`Monitor::start`] and [`Monitor::stop`].
    #[inline]
    pub fn measure<R>(
        &mut self,
        f: impl FnOnce() -> R,
    ) -> Result<(R, [CounterReading; N]), MonitorError> {
        self.start()?;
        let r = f();
        Ok((r, self.stop()?))
    }

    /// The group leader's fd (owned by the monitor).
    pub fn leader(&self) -> &GroupFd<N> {
        match &self.events {
            Events::UserSpace(readers) => readers[0].fd(),
            Events::ReadOnly(fds, _) => &fds[0],
        }
    }

    /// The user-space readers, one per event, when the monitor may take the
    /// user-space path (e.g. to check the pages' capabilities): `None` with
    /// [`Threads::CallerAndNew`] or a software, tracepoint or breakpoint
    /// event in the group.
    pub fn readers(&self) -> Option<&[CounterReader<UserPage, GroupFd<N>>; N]> {
        match &self.events {
            Events::UserSpace(readers) => Some(readers),
            Events::ReadOnly(..) => None,
        }
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use crate::linux::errno::Errno;

    struct Explained(MonitorError, KernelVersion);

    impl fmt::Display for Explained {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            self.0.explain_inherit(Some(self.1), f)
        }
    }

    fn einval(inherit: bool, sample_type: u64) -> MonitorError {
        MonitorError::Open {
            index: 0,
            error: OpenError {
                errno: Some(Errno(crate::linux::errno::EINVAL)),
                pre: None,
                diagnosis: None,
                context: None,
            },
            inherit,
            sample_type,
        }
    }

    #[test]
    fn inherit_limits_are_explained_for_the_kernels_that_have_them() {
        let old = KernelVersion::new(4, 9, 0);
        let text = Explained(einval(true, 0), old).to_string();
        assert!(
            text.contains("PERF_FORMAT_GROUP (allowed since Linux 4.13)"),
            "{text}"
        );
        let text = Explained(einval(true, SAMPLE_READ), KernelVersion::new(6, 1, 0)).to_string();
        assert!(text.contains("before Linux 6.12"), "{text}");
        assert!(!text.contains("4.13"), "6.1 allows group reads: {text}");
        for quiet in [
            Explained(einval(true, SAMPLE_READ), KernelVersion::new(6, 12, 0)),
            Explained(einval(false, SAMPLE_READ), old),
        ] {
            assert_eq!(quiet.to_string(), "");
        }
    }
}
