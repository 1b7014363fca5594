//! [`CounterReader`]: the counter instruction when the page allows it,
//! `read(2)` every other time.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::fallback::CounterFd;
use super::snapshot::{self, Snapshot, Unstable};
use super::source::PageSource;
use crate::read_format::{Counts, ReadError};
use core::ffi::c_int;
use core::fmt;
use core::marker::PhantomData;

use crate::linux::system::gettid;
use crate::linux::types::pid_t;

/// What an event monitors: the `pid` and `cpu` it was opened with, and the
/// thread that opened it (which `pid == 0` means).
///
/// The counter instruction reads the counter of whatever runs on the CPU
/// now, so only an event that counts exactly the calling thread on any CPU
/// (`pid` 0 or the thread's own tid, `cpu` -1) may be read with it; for
/// anything else the reader always uses `read(2)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventTarget {
    pid: pid_t,
    cpu: c_int,
    opener: pid_t,
}

impl EventTarget {
    /// The `pid` and `cpu` just passed to `perf_event_open(2)`. Call it on
    /// the thread that opened the event: `pid == 0` means that thread, and
    /// this records its tid.
    #[inline]
    pub fn as_opened(pid: pid_t, cpu: c_int) -> Self {
        EventTarget {
            pid,
            cpu,
            opener: gettid(),
        }
    }

    /// The `pid` and `cpu` of an event opened by thread `opener`.
    #[inline]
    pub const fn opened_by(opener: pid_t, pid: pid_t, cpu: c_int) -> Self {
        EventTarget { pid, cpu, opener }
    }

    /// The one thread the event counts on every CPU, if it counts exactly
    /// one (`cpu == -1` and `pid >= 0`; `pid > 0` is a thread id).
    #[inline]
    pub const fn monitored_thread(&self) -> Option<pid_t> {
        if self.cpu != -1 || self.pid < 0 {
            None
        } else if self.pid == 0 {
            Some(self.opener)
        } else {
            Some(self.pid)
        }
    }

    /// Whether the event counts the calling thread, on any CPU.
    #[inline]
    pub fn monitors_calling_thread(&self) -> bool {
        self.monitored_thread() == Some(gettid())
    }
}

/// Why a read went through `read(2)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FallbackReason {
    /// The event does not monitor the thread that made the reader (another
    /// thread, a CPU-wide event, a cgroup): the counter instruction would
    /// read someone else's counter.
    OtherThread,
    /// `cap_user_rdpmc == 0`: the kernel does not let user space read this
    /// counter (software event, no user access enabled, e.g.
    /// `/sys/bus/event_source/devices/cpu/rdpmc` = 0 on x86 or
    /// `perf_user_access` = 0 / no `config1` bit 1 on arm64).
    NoUserAccess,
    /// `index == 0`: the event is not on a hardware counter at this moment
    /// (disabled, multiplexed out, or never scheduled).
    NotOnPmu,
    /// This architecture has no instruction for the page's index.
    NoInstruction {
        /// The page's index.
        index: u32,
    },
    /// The page's lock kept changing ([`Unstable`]).
    Unstable,
}

impl fmt::Display for FallbackReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FallbackReason::OtherThread => {
                f.write_str("the event does not monitor the calling thread on every CPU")
            }
            FallbackReason::NoUserAccess => {
                f.write_str("cap_user_rdpmc is 0: the kernel does not allow user-space reads")
            }
            FallbackReason::NotOnPmu => {
                f.write_str("index is 0: the event is not on a hardware counter now")
            }
            FallbackReason::NoInstruction { index } => write!(
                f,
                "this architecture has no counter instruction for page index {index}"
            ),
            FallbackReason::Unstable => f.write_str("the page's seqlock kept changing"),
        }
    }
}

/// How a [`CounterReading`] was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadPath {
    /// The counter instruction, in one seqlock section.
    Counter {
        /// The page's index (counter + 1).
        index: u32,
        /// Whether the times were extrapolated to now (`cap_user_time`);
        /// else they are as of the page's last update.
        times_extrapolated: bool,
        /// Whether the `-2^pmc_width` transient was corrected.
        wrap_corrected: bool,
    },
    /// `read(2)` on the event fd.
    Syscall {
        /// Why.
        reason: FallbackReason,
    },
}

/// A read of a counter: the [`Counts`] and the path that made them (the
/// counter instruction or `read(2)`, and why). The monitor's reads and
/// regions are of this type as well ([`CounterReading::between`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterReading {
    /// The count and its times (both always present: the user-space path
    /// reads them from the page, and the `read(2)` path refuses a
    /// read_format without them, [`ReadError::MissingTimes`]).
    pub counts: Counts,
    /// How it was read.
    pub path: ReadPath,
}

impl CounterReading {
    /// Whether the counter instruction made it (no system call; for a
    /// region, both of its reads).
    #[inline]
    pub const fn used_counter(&self) -> bool {
        matches!(self.path, ReadPath::Counter { .. })
    }

    /// The region between two reads of the same event (`self` the
    /// earlier; the kernel's count and times only grow between them):
    /// [`Counts::between`], and the path of the later read, or
    /// the earlier's when that one was `read(2)` (so that
    /// [`CounterReading::used_counter`] says whether both reads used the
    /// counter instruction).
    #[inline]
    pub const fn between(&self, end: &CounterReading) -> CounterReading {
        CounterReading {
            counts: self.counts.between(&end.counts),
            path: match self.path {
                ReadPath::Syscall { .. } => self.path,
                ReadPath::Counter { .. } => end.path,
            },
        }
    }

    #[inline]
    fn from_fd(counts: Counts, reason: FallbackReason) -> Result<Self, ReadError> {
        if counts.enabled.is_none() || counts.running.is_none() {
            return Err(ReadError::MissingTimes);
        }
        Ok(CounterReading {
            counts,
            path: ReadPath::Syscall { reason },
        })
    }
}

/// Reads one event: user space when the page allows it, `read(2)` when not.
///
/// Not `Send` or `Sync`: whether the counter instruction may run was
/// decided for the thread that made the reader, and stays true only there.
#[derive(Debug)]
pub struct CounterReader<P, F> {
    page: P,
    fd: F,
    use_counter: bool,
    _one_thread: PhantomData<*const ()>,
}

impl<P: PageSource, F: CounterFd> CounterReader<P, F> {
    /// A reader of the event with page `page` and fd `fd`, opened for
    /// `target`. The counter instruction is used only if `target` monitors
    /// the calling thread.
    #[inline]
    pub fn new(page: P, fd: F, target: EventTarget) -> Self {
        CounterReader {
            page,
            fd,
            use_counter: target.monitors_calling_thread(),
            _one_thread: PhantomData,
        }
    }

    /// Whether reads may use the counter instruction (the event monitors
    /// this thread); each read still checks the page.
    #[inline]
    pub fn may_use_counter(&self) -> bool {
        self.use_counter
    }

    /// The page.
    #[inline]
    pub fn page(&self) -> &P {
        &self.page
    }

    /// The fd.
    #[inline]
    pub fn fd(&self) -> &F {
        &self.fd
    }

    /// A consistent snapshot of the page (with the counter read when this
    /// reader may use it).
    #[inline(always)]
    pub fn snapshot(&self) -> Result<Snapshot, Unstable> {
        // SAFETY: `use_counter` is true only if the event monitors the
        // thread that made this reader, which is the calling thread: the
        // reader is neither Send nor Sync.
        unsafe { snapshot::read(&self.page, self.use_counter) }
    }

    /// Reads the event: the counter instruction when the event monitors
    /// this thread, `cap_user_rdpmc` is set, `index != 0` and the
    /// architecture has the instruction; otherwise `read(2)`, decided anew
    /// on every call.
    #[inline(always)]
    pub fn read(&self) -> Result<CounterReading, ReadError> {
        // The reason goes in its own variable, not in an error variant of
        // the reading: a payload sharing the reading's bytes would keep
        // fields the caller never uses (the times) from being optimized
        // away.
        let mut why = FallbackReason::OtherThread;
        match self.read_user_space(&mut why) {
            Some(reading) => Ok(reading),
            None => self.fallback(why),
        }
    }

    /// The user-space path alone: the reading, or `None` and in `why` the
    /// reason `read(2)` must make it (the monitor reads a group's members
    /// with it, then makes one group read when any refuses).
    #[inline(always)]
    pub(crate) fn read_user_space(&self, why: &mut FallbackReason) -> Option<CounterReading> {
        if !self.use_counter {
            *why = FallbackReason::OtherThread;
            return None;
        }
        let Ok(snap) = self.snapshot() else {
            *why = FallbackReason::Unstable;
            return None;
        };
        // The snapshot ran the counter instruction only if this section
        // showed `cap_user_rdpmc` and `index != 0` and the architecture
        // has an instruction for the index: one test on the fast path,
        // the reason worked out only when it fails.
        let Some((value, wrap_corrected)) = snap.count() else {
            *why = Self::why_no_count(&snap);
            return None;
        };
        let (counts, times_extrapolated) = snap.counts_extrapolated(value);
        Some(CounterReading {
            counts,
            path: ReadPath::Counter {
                index: snap.index,
                times_extrapolated,
                wrap_corrected,
            },
        })
    }

    /// Why a consistent snapshot has no counter value.
    #[inline(always)]
    fn why_no_count(snap: &Snapshot) -> FallbackReason {
        if !snap.cap_user_rdpmc() {
            FallbackReason::NoUserAccess
        } else if snap.index == 0 {
            FallbackReason::NotOnPmu
        } else {
            FallbackReason::NoInstruction { index: snap.index }
        }
    }

    // Out of line and cold: the counter path stays small where it is inlined.
    #[cold]
    #[inline(never)]
    fn fallback(&self, reason: FallbackReason) -> Result<CounterReading, ReadError> {
        self.fd
            .read_counts()
            .and_then(|counts| CounterReading::from_fd(counts, reason))
    }
}
