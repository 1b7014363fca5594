//! The `read(2)` layout of a perf event fd (perf_event_open(2), "Reading
//! results"): its exact size for any `read_format` and group size, zero-copy
//! parsing, and multiplexing scaling in 128-bit arithmetic.
//!
//! Without `PERF_FORMAT_GROUP`:
//! `value; [time_enabled]; [time_running]; [id]; [lost]`.
//! With it: `nr; [time_enabled]; [time_running]; { value; [id]; [lost] } x nr`.

use crate::byte_order::ByteOrder;
use crate::linux::errno::{Errno, ECHILD, ENOSPC};
use crate::sys;
use core::fmt;

const ENABLED: u64 = sys::PERF_FORMAT_TOTAL_TIME_ENABLED as u64;
const RUNNING: u64 = sys::PERF_FORMAT_TOTAL_TIME_RUNNING as u64;
const ID: u64 = sys::PERF_FORMAT_ID as u64;
const GROUP: u64 = sys::PERF_FORMAT_GROUP as u64;
const LOST: u64 = sys::PERF_FORMAT_LOST as u64;

/// A `read_format` word (`PERF_FORMAT_*` bits), a typed flag set like
/// [`crate::abi::SampleType`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ReadFormat(pub u64);

crate::abi::flags::flag_set!(ReadFormat {
    /// `PERF_FORMAT_TOTAL_TIME_ENABLED` (since Linux 2.6.31).
    TOTAL_TIME_ENABLED = sys::PERF_FORMAT_TOTAL_TIME_ENABLED;
    /// `PERF_FORMAT_TOTAL_TIME_RUNNING` (2.6.31).
    TOTAL_TIME_RUNNING = sys::PERF_FORMAT_TOTAL_TIME_RUNNING;
    /// `PERF_FORMAT_ID` (2.6.31).
    ID = sys::PERF_FORMAT_ID;
    /// `PERF_FORMAT_GROUP` (2.6.31).
    GROUP = sys::PERF_FORMAT_GROUP;
    /// `PERF_FORMAT_LOST` (6.0).
    LOST = sys::PERF_FORMAT_LOST;
});

impl ReadFormat {
    #[inline]
    const fn has(self, bit: u64) -> bool {
        self.0 & bit != 0
    }

    /// Whether reads return a whole group.
    #[inline]
    pub const fn is_group(self) -> bool {
        self.has(GROUP)
    }

    /// u64 words per event value (value, id, lost).
    #[inline]
    const fn words_per_value(self) -> usize {
        1 + self.has(ID) as usize + self.has(LOST) as usize
    }

    /// u64 words in the header (nr for groups, then the times).
    #[inline]
    const fn header_words(self) -> usize {
        self.is_group() as usize + self.has(ENABLED) as usize + self.has(RUNNING) as usize
    }

    /// The exact number of bytes `read(2)` returns for this format and a
    /// group of `members` events (leader included; ignored without GROUP).
    #[inline]
    pub const fn size(self, members: usize) -> usize {
        let values = if self.is_group() { members } else { 1 };
        8 * (self.header_words() + values * self.words_per_value())
    }

    /// Parses a `read(2)` result. The buffer must hold exactly what the
    /// kernel returned (`bytes_read` bytes); anything else is an error.
    #[inline]
    pub fn parse(self, buf: &[u8]) -> Result<Reading<'_>, ReadError> {
        self.parse_in(buf, ByteOrder::NATIVE)
    }

    /// [`ReadFormat::parse`] for values in `order` (a perf.data file or a
    /// record from a machine of the other byte order). A group read must
    /// hold at least one value (`nr >= 1`: the kernel always counts the
    /// leader).
    pub fn parse_in(self, buf: &[u8], order: ByteOrder) -> Result<Reading<'_>, ReadError> {
        if self.is_group() && buf.len() >= 8 && buf[..8] == [0; 8] {
            return Err(ReadError::EmptyGroup);
        }
        if buf.len() % 8 != 0 || buf.len() < self.size(1) {
            return Err(ReadError::Size {
                expected: self.size(1),
                got: buf.len(),
            });
        }
        let reading = Reading {
            format: self,
            buf,
            swap: order.is_foreign(),
        };
        if self.is_group() {
            let nr = reading.word(0);
            let want = (nr as usize).checked_mul(self.words_per_value() * 8);
            let want = want.and_then(|v| v.checked_add(8 * self.header_words()));
            if want != Some(buf.len()) {
                return Err(ReadError::GroupSize {
                    members: nr,
                    expected: want.unwrap_or(usize::MAX),
                    got: buf.len(),
                });
            }
        } else if buf.len() != self.size(1) {
            return Err(ReadError::Size {
                expected: self.size(1),
                got: buf.len(),
            });
        }
        Ok(reading)
    }
}

impl ReadFormat {
    /// The first value and the times of a `read(2)` result: what
    /// [`ReadFormat::parse`] then [`Reading::counts`] give, in one pass
    /// for the single-event layout (the `read(2)` paths of
    /// [`crate::fd::EventFd`] and of the user-space reader's fallback).
    #[inline]
    pub fn counts(self, buf: &[u8]) -> Result<Counts, ReadError> {
        if self.is_group() {
            return self.parse(buf).map(|r| r.counts());
        }
        let expected = self.size(1);
        if buf.len() != expected {
            return Err(ReadError::Size {
                expected,
                got: buf.len(),
            });
        }
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&buf[8 * i..8 * i + 8]);
            u64::from_ne_bytes(w)
        };
        // value; [time_enabled]; [time_running]; ...
        let enabled = self.has(ENABLED);
        Ok(Counts {
            value: word(0),
            enabled: enabled.then(|| word(1)),
            running: self.has(RUNNING).then(|| word(1 + enabled as usize)),
        })
    }
}

/// Why a read of a perf event failed: the one read error of the crate,
/// from `read(2)` itself ([`ReadError::Errno`], [`ReadError::EndOfFile`]) to
/// the bytes it returned (the other variants). Every read path returns it:
/// [`ReadFormat::parse`], `EventFd::read_into` / `read_counts`, the
/// user-space reader's fallback (`userpage::CounterFd`), and the monitor
/// and event set reads (wrapped with the event that failed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadError {
    /// `read(2)` failed with this errno (EBADF: the fd is closed or not an
    /// event; ENOSPC: the buffer is smaller than the group's read; ECHILD:
    /// an inherited copy of the group no longer matches the group, see
    /// [`ReadError::is_inherited_group_mismatch`]).
    Errno(Errno),
    /// `read(2)` returned 0: a pinned event that could not be scheduled is
    /// in error state and reads end-of-file until re-enabled (since Linux
    /// 2.6.31).
    EndOfFile,
    /// The buffer does not have the size this read_format implies.
    Size {
        /// Bytes the format implies.
        expected: usize,
        /// Bytes given.
        got: usize,
    },
    /// A group read whose `nr` does not match the buffer.
    GroupSize {
        /// `nr` from the buffer.
        members: u64,
        /// Bytes `nr` implies.
        expected: usize,
        /// Bytes given.
        got: usize,
    },
    /// A group read with `nr == 0`: the kernel always counts the leader.
    EmptyGroup,
    /// The caller's buffer is smaller than the read needs.
    BufferTooSmall {
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        got: usize,
    },
    /// The counts came without `time_enabled` / `time_running` (an event
    /// whose read_format lacks `PERF_FORMAT_TOTAL_TIME_ENABLED |
    /// PERF_FORMAT_TOTAL_TIME_RUNNING`, both since Linux 2.6.31) where a
    /// reader needs them: the user-space reader's fallback reports and
    /// scales them (and refuses such a `read_format` up front,
    /// `userpage::RawCounterFd::new`).
    MissingTimes,
    /// A `read_format` with `PERF_FORMAT_GROUP` where one event is read on
    /// its own: `read(2)` on it returns the whole group.
    GroupFormat,
    /// A `read_format` with bits this crate cannot size (a newer kernel's
    /// format).
    UnknownFormat {
        /// The unknown bits.
        bits: u64,
    },
}

impl ReadError {
    /// `ECHILD` from a `PERF_FORMAT_GROUP` read of an inherited group: an
    /// inherited copy of the group (in a child task) does not have the
    /// parent group's members, and the kernel refuses to sum over it
    /// (since Linux 6.6, and the stable kernels the fix went back to, 4.14
    /// on). Before Linux 5.13 a child task's exit detaches its copy before
    /// taking it off the parent's list, so a read beside a thread's exit
    /// sees this for a moment: read again. (The event set does, a bounded
    /// number of times.)
    pub const fn is_inherited_group_mismatch(&self) -> bool {
        matches!(self, ReadError::Errno(Errno(ECHILD)))
    }

    /// A short, fixed description of what is wrong (for errors that embed it).
    pub const fn reason(&self) -> &'static str {
        match self {
            ReadError::Errno(_) => "read(2) failed",
            ReadError::EndOfFile => "read(2) returned end-of-file (pinned event in error state)",
            ReadError::Size { .. } => "size does not match the read_format",
            ReadError::GroupSize { .. } => "group nr does not match the size",
            ReadError::EmptyGroup => "group read with nr == 0 (the leader is always counted)",
            ReadError::BufferTooSmall { .. } => "buffer smaller than the read",
            ReadError::MissingTimes => "no time_enabled / time_running in the read_format",
            ReadError::GroupFormat => "PERF_FORMAT_GROUP where one event is read",
            ReadError::UnknownFormat { .. } => "read_format bits this crate cannot size",
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Errno(e) if e.0 == ENOSPC => {
                write!(
                    f,
                    "read: {e}: the buffer is smaller than the group's read size"
                )
            }
            ReadError::Errno(e) if e.0 == ECHILD => write!(
                f,
                "read: {e}: an inherited copy of this group (in a child task) does not match \
                 the group, so the kernel will not sum it; a child task exiting leaves it so \
                 for a moment before Linux 5.13: read again"
            ),
            ReadError::Errno(e) => write!(f, "read: {e}"),
            ReadError::EndOfFile => f.write_str(
                "read returned end-of-file: the pinned event could not be put on the PMU and \
                 is in error state; re-enable it or drop `pinned`",
            ),
            ReadError::Size { expected, got } => {
                write!(
                    f,
                    "read returned {got} bytes where the read_format implies {expected}"
                )
            }
            ReadError::GroupSize {
                members,
                expected,
                got,
            } => write!(
                f,
                "group read says {members} members ({expected} bytes) but holds {got} bytes"
            ),
            ReadError::EmptyGroup => {
                f.write_str("group read says 0 members, but the kernel always reports the leader")
            }
            ReadError::BufferTooSmall { needed, got } => write!(
                f,
                "the buffer has {got} bytes but this event's read needs {needed} \
                 (ReadFormat::size tells how many)"
            ),
            ReadError::MissingTimes => f.write_str(
                "the counts have no time_enabled / time_running: open the event with \
                 read_format TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING",
            ),
            ReadError::GroupFormat => f.write_str(
                "the event's read_format has PERF_FORMAT_GROUP: read(2) on it returns the whole \
                 group; open the event without GROUP to read it on its own",
            ),
            ReadError::UnknownFormat { bits } => write!(
                f,
                "the event's read_format has bits {bits:#x} this crate cannot size (it knows \
                 TOTAL_TIME_ENABLED, TOTAL_TIME_RUNNING, ID, GROUP and LOST)"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ReadError {}

/// A parsed `read(2)` result, borrowing the buffer.
#[derive(Clone, Copy, Debug)]
pub struct Reading<'a> {
    format: ReadFormat,
    buf: &'a [u8],
    swap: bool,
}

/// One event's value within a reading: its count, and its id and lost
/// samples where the `read_format` asks for them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventValue {
    /// The count.
    pub value: u64,
    /// `PERF_FORMAT_ID`: the event id (equals `PERF_EVENT_IOC_ID`).
    pub id: Option<u64>,
    /// `PERF_FORMAT_LOST`: samples lost (since Linux 6.0).
    pub lost: Option<u64>,
}

impl<'a> Reading<'a> {
    #[inline]
    fn word(&self, i: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&self.buf[8 * i..8 * i + 8]);
        let v = u64::from_ne_bytes(w);
        if self.swap {
            v.swap_bytes()
        } else {
            v
        }
    }

    /// `PERF_FORMAT_TOTAL_TIME_ENABLED`: ns the event was enabled.
    #[inline]
    pub fn time_enabled(&self) -> Option<u64> {
        // Word 0 is `nr` (group) or the value (single): the times follow it.
        self.format.has(ENABLED).then(|| self.word(1))
    }

    /// `PERF_FORMAT_TOTAL_TIME_RUNNING`: ns the event was on the PMU.
    #[inline]
    pub fn time_running(&self) -> Option<u64> {
        let at = 1 + self.format.has(ENABLED) as usize;
        self.format.has(RUNNING).then(|| self.word(at))
    }

    /// Number of values: 1, or the group's members.
    #[inline]
    pub fn len(&self) -> usize {
        if self.format.is_group() {
            self.word(0) as usize
        } else {
            1
        }
    }

    /// Whether there are no values (a group read of zero members).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th value (0 = the event itself, or the group leader).
    #[inline]
    pub fn get(&self, i: usize) -> Option<EventValue> {
        if i >= self.len() {
            return None;
        }
        let f = self.format;
        let at = if f.is_group() {
            f.header_words() + i * f.words_per_value()
        } else {
            0
        };
        // Without GROUP the value comes first and the times follow it.
        let extra = if f.is_group() {
            at + 1
        } else {
            1 + f.has(ENABLED) as usize + f.has(RUNNING) as usize
        };
        let id = f.has(ID).then(|| self.word(extra));
        let lost = f.has(LOST).then(|| self.word(extra + f.has(ID) as usize));
        Some(EventValue {
            value: self.word(at),
            id,
            lost,
        })
    }

    /// The values in order.
    pub fn values(&self) -> impl Iterator<Item = EventValue> + '_ {
        (0..self.len()).filter_map(move |i| self.get(i))
    }

    /// The first value with its times, ready for scaling.
    #[inline]
    pub fn counts(&self) -> Counts {
        Counts {
            value: self.get(0).map_or(0, |v| v.value),
            enabled: self.time_enabled(),
            running: self.time_running(),
        }
    }
}

/// The multiplexing estimate `count * enabled / running`: the product in
/// `u128`, floor division; `None` when there is no estimate: `running == 0`
/// (the event never ran) or the estimate does not fit in `u64` (never
/// clipped, never a division by zero). The rule behind [`Counts::scaled`].
pub(crate) const fn scale(count: u64, enabled: u64, running: u64) -> Option<u64> {
    if running == 0 {
        return None;
    }
    let estimate = count as u128 * enabled as u128 / running as u128;
    if estimate > u64::MAX as u128 {
        None
    } else {
        Some(estimate as u64)
    }
}

/// A count with the times it was enabled and running: the one counts value
/// of the crate, whatever read it (`read(2)` through the read_format codec,
/// the user-space counter instruction, a monitor's group read, an event
/// set's read-all) and for one instant or a region between two reads
/// ([`Counts::between`]). The kernel reports the times in the read with
/// `PERF_FORMAT_TOTAL_TIME_ENABLED` / `PERF_FORMAT_TOTAL_TIME_RUNNING`
/// (since Linux 2.6.31) and in the mmap page (`time_enabled`,
/// `time_running`); a `read(2)` without those bits has no times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Counts {
    /// The raw count.
    pub value: u64,
    /// ns enabled, if the read reported it.
    pub enabled: Option<u64>,
    /// ns on the PMU, if the read reported it.
    pub running: Option<u64>,
}

/// The result of scaling a multiplexed count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scaled {
    /// The event ran the whole time it was enabled: the count is exact.
    Exact(u64),
    /// `value * enabled / running` (in `u128`, floor division).
    Estimated {
        /// The estimate.
        value: u64,
        /// Percentage of the enabled time the event ran (0..=100).
        percent_running: u8,
    },
    /// The event never ran (running == 0): no estimate exists.
    NotCounted,
    /// The times were not read (read_format without both time bits).
    NoTimes(u64),
    /// `value * enabled / running` does not fit in `u64`: no estimate
    /// (the raw count and times are passed on, nothing is clipped).
    TooLarge {
        /// The raw count.
        value: u64,
        /// ns enabled.
        enabled: u64,
        /// ns running.
        running: u64,
    },
    /// running > enabled, which the kernel should not report but has been
    /// seen: the raw count is passed on unscaled.
    Inconsistent {
        /// The raw count.
        value: u64,
        /// ns enabled.
        enabled: u64,
        /// ns running.
        running: u64,
    },
}

impl Scaled {
    /// The count to report: the exact or estimated value, and the raw
    /// count when there is nothing to scale it with ([`Scaled::NoTimes`])
    /// or the times are inconsistent; `None` when there is no value
    /// ([`Scaled::NotCounted`]: the kernel never put the event on the PMU;
    /// [`Scaled::TooLarge`]). `perf stat` reports the same figure (its
    /// `<not counted>` for `None`).
    #[inline]
    pub const fn value(&self) -> Option<u64> {
        match *self {
            Scaled::Exact(v) | Scaled::NoTimes(v) => Some(v),
            Scaled::Estimated { value, .. } | Scaled::Inconsistent { value, .. } => Some(value),
            Scaled::NotCounted | Scaled::TooLarge { .. } => None,
        }
    }
}

impl Counts {
    /// A count with both times (what the user-space path and every read
    /// with `TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING` give: the kernel
    /// reports both since Linux 2.6.31).
    #[inline]
    pub const fn with_times(value: u64, enabled: u64, running: u64) -> Counts {
        Counts {
            value,
            enabled: Some(enabled),
            running: Some(running),
        }
    }

    /// The region between two reads of the same event (`self` the earlier):
    /// the count's difference (wrapping, as the counter does) and the times'
    /// (saturating at 0); a time is present only if both reads have it. The
    /// kernel's count and times of an event only grow until it is reset
    /// (`PERF_EVENT_IOC_RESET`, since Linux 2.6.31, resets the count, not
    /// the times).
    #[inline]
    pub const fn between(&self, end: &Counts) -> Counts {
        const fn diff(start: Option<u64>, end: Option<u64>) -> Option<u64> {
            match (start, end) {
                (Some(s), Some(e)) => Some(e.saturating_sub(s)),
                _ => None,
            }
        }
        Counts {
            value: end.value.wrapping_sub(self.value),
            enabled: diff(self.enabled, end.enabled),
            running: diff(self.running, end.running),
        }
    }

    /// `running / enabled`: 1.0 when the event was on the PMU the whole
    /// time it was enabled, less when the kernel multiplexed it (rotated it
    /// off the PMU to let other events count, since Linux 2.6.31); `None`
    /// without times or with `enabled == 0`.
    pub fn running_fraction(&self) -> Option<f64> {
        match (self.enabled, self.running) {
            (Some(e), Some(r)) if e != 0 => Some(r as f64 / e as f64),
            _ => None,
        }
    }

    /// Scales for multiplexing: never divides by zero, never overflows.
    pub const fn scaled(&self) -> Scaled {
        let (Some(enabled), Some(running)) = (self.enabled, self.running) else {
            return Scaled::NoTimes(self.value);
        };
        if running == 0 {
            return Scaled::NotCounted;
        }
        if running > enabled {
            return Scaled::Inconsistent {
                value: self.value,
                enabled,
                running,
            };
        }
        if running == enabled {
            return Scaled::Exact(self.value);
        }
        let Some(value) = scale(self.value, enabled, running) else {
            return Scaled::TooLarge {
                value: self.value,
                enabled,
                running,
            };
        };
        let percent_running = (running as u128 * 100 / enabled as u128) as u8;
        Scaled::Estimated {
            value,
            percent_running,
        }
    }
}

#[cfg(test)]
mod tests;
