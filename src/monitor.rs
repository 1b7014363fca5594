//! Self-monitoring for benchmark harnesses: a group of events on the
//! calling thread, opened once, read around a region with the user-space
//! reader (the counter instruction where the page allows it, `read(2)`
//! otherwise). No allocation; no system call per measurement where the
//! hardware allows user-space reads.
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
//! assert!(clock.value > 0 && sum > 0);
//! # let _ = faults;
//! # Ok::<(), perf_event_core::monitor::MonitorError>(())
//! ```

use crate::attr::Attr;
use crate::fd::EventFd;
use crate::open::{open, OpenError, OpenFlags, Scope};
use crate::sys;
use crate::userpage::{
    CounterFd, CounterReader, CounterReading, EventTarget, FdReadError, MapError, RawCounterFd,
    UserPage, REQUIRED_READ_FORMAT,
};
use core::fmt;

/// The fd of a monitored event: the owned [`EventFd`] read as the reader's
/// fallback.
#[derive(Debug)]
pub struct MonitoredFd {
    fd: EventFd,
    raw: RawCounterFd,
}

impl CounterFd for MonitoredFd {
    fn read_counts(&self) -> Result<crate::read_format::Counts, FdReadError> {
        self.raw.read_counts()
    }
}

impl MonitoredFd {
    /// The event's fd.
    pub fn event_fd(&self) -> &EventFd {
        &self.fd
    }
}

/// Why a monitor could not be set up or read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MonitorError {
    /// Opening event `index` failed.
    Open {
        /// Which event (0 = the group leader).
        index: usize,
        /// Why.
        error: OpenError,
    },
    /// Mapping event `index`'s metadata page failed.
    Map {
        /// Which event.
        index: usize,
        /// Why.
        error: MapError,
    },
    /// Reading event `index` failed.
    Read {
        /// Which event.
        index: usize,
        /// Why.
        error: FdReadError,
    },
    /// enable/disable of the group failed.
    Control(crate::errno::Errno),
}

impl fmt::Display for MonitorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MonitorError::Open { index, error } => write!(f, "monitor event {index}: {error}"),
            MonitorError::Map { index, error } => write!(f, "monitor event {index}: {error}"),
            MonitorError::Read { index, error } => write!(f, "monitor event {index}: {error}"),
            MonitorError::Control(e) => write!(f, "enabling the monitor's group: {e}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for MonitorError {}

/// One event's count over a measured region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Measured {
    /// The count over the region.
    pub value: u64,
    /// ns the event was enabled during the region.
    pub time_enabled: u64,
    /// ns it was on the PMU during the region.
    pub time_running: u64,
    /// Whether both reads used the counter instruction (no syscall).
    pub user_space: bool,
}

impl Measured {
    /// `value * enabled / running` in 128 bits; `None` if it never ran.
    pub const fn scaled(&self) -> Option<u64> {
        crate::read_format::scale(self.value, self.time_enabled, self.time_running)
    }
}

/// `N` events of the calling thread, opened as one group and kept enabled;
/// [`Monitor::start`] / [`Monitor::stop`] read them around a region.
///
/// Not `Send`: user-space counter reads are valid only on the thread that
/// opened the events.
#[derive(Debug)]
pub struct Monitor<const N: usize> {
    readers: [CounterReader<UserPage, MonitoredFd>; N],
    start: [CounterReading; N],
}

impl<const N: usize> Monitor<N> {
    /// Opens `attrs` on the calling thread as one group (the first leads),
    /// maps each event's metadata page, and enables the group. Each attr
    /// gets `read_format` TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING and is
    /// opened disabled; other settings (exclude bits, config1 user-access
    /// bits) are the caller's.
    pub fn open(attrs: [Attr; N]) -> Result<Monitor<N>, MonitorError> {
        const { assert!(N > 0, "a monitor needs at least one event") };
        let mut fds: [Option<EventFd>; N] = [const { None }; N];
        for (index, attr) in attrs.iter().enumerate() {
            let attr = attr.disabled(index == 0).read_format(REQUIRED_READ_FORMAT);
            let fd = open(
                &attr,
                Scope::this_thread(),
                fds[0].as_ref(),
                OpenFlags::new(),
            )
            .map_err(|error| MonitorError::Open { index, error })?;
            fds[index] = Some(fd);
        }
        let mut pages: [Option<UserPage>; N] = [const { None }; N];
        for (index, fd) in fds.iter().enumerate() {
            let fd = fd.as_ref().expect("opened above");
            pages[index] =
                Some(UserPage::map(fd.raw()).map_err(|error| MonitorError::Map { index, error })?);
        }
        let leader = fds[0].as_ref().expect("opened above");
        leader.enable(true).map_err(MonitorError::Control)?;
        let mut fds = fds.into_iter();
        let mut pages = pages.into_iter();
        let readers = core::array::from_fn(|_| {
            let fd = fds.next().flatten().expect("one fd per event");
            let raw =
                RawCounterFd::new(fd.raw(), REQUIRED_READ_FORMAT).expect("read_format set above");
            let page = pages.next().flatten().expect("one page per event");
            CounterReader::new(page, MonitoredFd { fd, raw }, EventTarget::as_opened(0, -1))
        });
        let zero = CounterReading {
            value: 0,
            time_enabled: 0,
            time_running: 0,
            path: crate::userpage::ReadPath::Syscall {
                reason: crate::userpage::FallbackReason::NotOnPmu,
            },
        };
        Ok(Monitor {
            readers,
            start: [zero; N],
        })
    }

    fn read_all(&self) -> Result<[CounterReading; N], MonitorError> {
        let mut out = self.start;
        for (index, (slot, reader)) in out.iter_mut().zip(&self.readers).enumerate() {
            *slot = reader
                .read()
                .map_err(|error| MonitorError::Read { index, error })?;
        }
        Ok(out)
    }

    /// Marks the start of a region.
    pub fn start(&mut self) -> Result<(), MonitorError> {
        self.start = self.read_all()?;
        Ok(())
    }

    /// The counts since [`Monitor::start`].
    pub fn stop(&mut self) -> Result<[Measured; N], MonitorError> {
        let end = self.read_all()?;
        let mut out = [Measured::default(); N];
        for ((m, a), b) in out.iter_mut().zip(&self.start).zip(&end) {
            *m = Measured {
                value: b.value.wrapping_sub(a.value),
                time_enabled: b.time_enabled.saturating_sub(a.time_enabled),
                time_running: b.time_running.saturating_sub(a.time_running),
                user_space: a.used_counter() && b.used_counter(),
            };
        }
        Ok(out)
    }

    /// Runs `f` between [`Monitor::start`] and [`Monitor::stop`].
    pub fn measure<R>(
        &mut self,
        f: impl FnOnce() -> R,
    ) -> Result<(R, [Measured; N]), MonitorError> {
        self.start()?;
        let r = f();
        Ok((r, self.stop()?))
    }

    /// The readers (pages and fds), e.g. to check which path reads take.
    pub fn readers(&self) -> &[CounterReader<UserPage, MonitoredFd>; N] {
        &self.readers
    }
}

/// `read_format` the monitor sets (for callers building attrs by hand).
pub const READ_FORMAT: u64 = REQUIRED_READ_FORMAT;
const _: () = assert!(READ_FORMAT & sys::PERF_FORMAT_GROUP as u64 == 0);
