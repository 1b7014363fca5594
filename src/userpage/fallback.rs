//! The `read(2)` path: what the reader uses whenever the counter
//! instruction may not or cannot run.
//!
//! [`CounterFd`] is all the reader needs from an event file descriptor:
//! the crate's owned [`EventFd`] implements it (its own `read_counts`),
//! and [`RawCounterFd`] over a plain `c_int` a caller keeps open.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use crate::fd::EventFd;
use crate::read_format::{Counts, ReadError, ReadFormat};
use crate::sys;
use core::ffi::c_int;

/// `PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING`: what
/// the fallback needs in the event's `read_format` (the times that make a
/// `read(2)` value comparable to, and scalable like, a user-space read).
pub const REQUIRED_READ_FORMAT: ReadFormat =
    ReadFormat::TOTAL_TIME_ENABLED.union(ReadFormat::TOTAL_TIME_RUNNING);

/// The `read_format` bits of a single (non-group) read the fallback parses:
/// TOTAL_TIME_ENABLED, TOTAL_TIME_RUNNING, ID (Linux 2.6.31), LOST (6.0).
const SINGLE_READ_BITS: u64 =
    REQUIRED_READ_FORMAT.bits() | sys::PERF_FORMAT_ID as u64 | sys::PERF_FORMAT_LOST as u64;

/// An event file descriptor the reader can fall back to.
pub trait CounterFd {
    /// Reads value, `time_enabled` and `time_running` with `read(2)`, as
    /// the fd's own read path does ([`Counts`], both times present: the
    /// reader refuses counts without them with
    /// [`ReadError::MissingTimes`]).
    fn read_counts(&self) -> Result<Counts, ReadError>;
}

/// An event fd (not owned: never closed here) and the `read_format` it was
/// opened with: the fallback over a fd this crate did not open. An
/// [`EventFd`] is a [`CounterFd`] itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawCounterFd {
    fd: c_int,
    read_format: u64,
    words: usize,
}

impl RawCounterFd {
    /// The fd `fd`, opened with `read_format`, which must hold
    /// TOTAL_TIME_ENABLED and TOTAL_TIME_RUNNING and not GROUP.
    ///
    /// # Safety
    ///
    /// `fd` must be an open perf event fd that stays open (not closed, its
    /// number not reused) for as long as this value or a copy of it is
    /// read: `read(2)` on another file would consume that file's data
    /// (`-1`, never an fd, is allowed: its reads fail with EBADF). When the
    /// format is refused, no value exists and `fd` is not used.
    pub const unsafe fn new(fd: c_int, read_format: ReadFormat) -> Result<Self, ReadError> {
        let read_format = read_format.bits();
        if REQUIRED_READ_FORMAT.bits() & !read_format != 0 {
            return Err(ReadError::MissingTimes);
        }
        if read_format & sys::PERF_FORMAT_GROUP as u64 != 0 {
            return Err(ReadError::GroupFormat);
        }
        let unknown = read_format & !SINGLE_READ_BITS;
        if unknown != 0 {
            return Err(ReadError::UnknownFormat { bits: unknown });
        }
        // value, then one u64 per set bit (enabled, running, id, lost).
        let words = 1 + read_format.count_ones() as usize;
        Ok(RawCounterFd {
            fd,
            read_format,
            words,
        })
    }

    /// The fd.
    pub const fn fd(&self) -> c_int {
        self.fd
    }

    /// The `read_format` it was opened with.
    pub const fn read_format(&self) -> ReadFormat {
        ReadFormat(self.read_format)
    }

    /// Bytes one `read(2)` returns: 8 per `u64` of the layout.
    #[inline]
    pub const fn read_size(&self) -> usize {
        self.words * 8
    }
}

impl CounterFd for RawCounterFd {
    #[inline]
    fn read_counts(&self) -> Result<Counts, ReadError> {
        // struct read_format { value; [time_enabled]; [time_running]; [id]; [lost]; }
        let mut buf = [0u8; 40];
        let expected = self.read_size();
        // `expected` is at most 40 (RawCounterFd::new allows 5 words).
        // SAFETY: `fd` is open while this value is read (`new`'s contract).
        let n = unsafe { crate::linux::io::read(self.fd, &mut buf[..expected]) }
            .map_err(ReadError::Errno)?;
        // The codec of the fd's own read path (read_format), so both agree
        // on every layout (a short read is `ReadError::Size`); both times
        // are in the format (checked by `new`).
        ReadFormat(self.read_format).counts(&buf[..n])
    }
}

/// A borrowed [`CounterFd`] (e.g. `&EventFd`, so that a reader does not
/// take the fd's ownership).
impl<T: CounterFd + ?Sized> CounterFd for &T {
    #[inline(always)]
    fn read_counts(&self) -> Result<Counts, ReadError> {
        (**self).read_counts()
    }
}

/// The owned fd reads itself ([`EventFd::read_counts`], the same codec as
/// [`RawCounterFd`]; a group leader gives its own value).
impl CounterFd for EventFd {
    #[inline]
    fn read_counts(&self) -> Result<Counts, ReadError> {
        EventFd::read_counts(self)
    }
}
