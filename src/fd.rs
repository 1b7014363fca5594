//! An owned perf event fd: every ioctl with the argument type the kernel
//! really takes, exact-size reads, and prctl for all of the thread's events.

use crate::attr::Attr;
use crate::linux::errno::Errno;
use crate::linux::errno::{EINVAL, ENOSPC};
use crate::linux::fd::PerfFd;
use crate::linux::prctl;
use crate::linux::types::{c_int, c_uint};
use crate::read_format::{Counts, ReadError, ReadFormat, Reading};
use crate::sys;
use core::ffi::CStr;
use core::fmt;

/// An open perf event. Closes the fd on drop (with or without std).
#[derive(Debug)]
pub struct EventFd {
    fd: PerfFd,
    format: ReadFormat,
}

/// Why a read failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadFailure {
    /// read(2) failed (ENOSPC: the buffer is smaller than the group read).
    Errno(Errno),
    /// read(2) returned 0: a pinned event that could not be scheduled is in
    /// error state and reads end-of-file until re-enabled.
    EndOfFile,
    /// The bytes do not match the read_format.
    Format(ReadError),
}

impl fmt::Display for ReadFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadFailure::Errno(e) if e.0 == ENOSPC => {
                write!(
                    f,
                    "read: {e}: the buffer is smaller than the group's read size"
                )
            }
            ReadFailure::Errno(e) => write!(f, "read: {e}"),
            ReadFailure::EndOfFile => f.write_str(
                "read returned end-of-file: the pinned event could not be put on the PMU and \
                 is in error state; re-enable it or drop `pinned`",
            ),
            ReadFailure::Format(e) => e.fmt(f),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ReadFailure {}

/// The result of `PERF_EVENT_IOC_QUERY_BPF`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BpfPrograms<'a> {
    /// How many programs are attached (may exceed `ids.len()`).
    pub attached: u32,
    /// The ids that fit in the caller's buffer.
    pub ids: &'a [u32],
}

impl EventFd {
    /// Takes ownership of a perf event fd whose attr had `read_format`
    /// (from [`linux::fd::open`](crate::linux::fd::open), or the raw
    /// [`perf_event_open`](crate::linux::perf_event_open)'s fd wrapped with
    /// [`PerfFd::from_raw`]).
    pub fn new(fd: PerfFd, read_format: u64) -> EventFd {
        EventFd {
            fd,
            format: ReadFormat(read_format),
        }
    }

    /// The fd number.
    pub fn raw(&self) -> c_int {
        self.fd.raw()
    }

    /// The owned fd, for the raw layer's calls.
    pub fn perf_fd(&self) -> &PerfFd {
        &self.fd
    }

    /// Gives up the typed layer, keeping the fd open.
    pub fn into_perf_fd(self) -> PerfFd {
        self.fd
    }

    /// The read_format this fd was opened with.
    pub fn read_format(&self) -> ReadFormat {
        self.format
    }

    fn group_flag(group: bool) -> c_uint {
        if group {
            sys::PERF_IOC_FLAG_GROUP as c_uint
        } else {
            0
        }
    }

    /// `PERF_EVENT_IOC_ENABLE`; with `group`, the leader's whole group.
    pub fn enable(&self, group: bool) -> Result<(), Errno> {
        self.fd.enable(Self::group_flag(group)).map(drop)
    }

    /// `PERF_EVENT_IOC_DISABLE`; with `group`, the leader's whole group.
    pub fn disable(&self, group: bool) -> Result<(), Errno> {
        self.fd.disable(Self::group_flag(group)).map(drop)
    }

    /// `PERF_EVENT_IOC_RESET`: zero the count (not the times).
    pub fn reset(&self, group: bool) -> Result<(), Errno> {
        self.fd.reset(Self::group_flag(group)).map(drop)
    }

    /// `PERF_EVENT_IOC_REFRESH`: enable for `overflows` more overflows, then
    /// disable (a signal is sent on each overflow when the fd has O_ASYNC).
    /// Counts above `i32::MAX` are refused with EINVAL (the kernel reads an int).
    pub fn refresh(&self, overflows: u32) -> Result<(), Errno> {
        let n = c_int::try_from(overflows).map_err(|_| Errno(EINVAL))?;
        self.fd.refresh(n).map(drop)
    }

    /// `PERF_EVENT_IOC_PERIOD`: the new sample period, passed by pointer to
    /// a u64 as the kernel reads it (since Linux 2.6.36).
    pub fn period(&self, period: u64) -> Result<(), Errno> {
        self.fd.period(&period).map(drop)
    }

    /// `PERF_EVENT_IOC_SET_OUTPUT`: send this event's records to `target`'s
    /// ring buffer (same CPU / task rules apply), or stop with `None` (-1).
    pub fn set_output(&self, target: Option<&EventFd>) -> Result<(), Errno> {
        self.fd.set_output(target.map_or(-1, |t| t.raw())).map(drop)
    }

    /// `PERF_EVENT_IOC_SET_FILTER`: a tracepoint filter (ftrace syntax) or
    /// an address filter for AUX PMUs (since Linux 2.6.33).
    pub fn set_filter(&self, filter: &CStr) -> Result<(), Errno> {
        self.fd.set_filter(filter).map(drop)
    }

    /// `PERF_EVENT_IOC_ID`: the event id, as in PERF_FORMAT_ID (since Linux 3.12).
    pub fn id(&self) -> Result<u64, Errno> {
        self.fd.id()
    }

    /// `PERF_EVENT_IOC_SET_BPF`: attach the BPF program `prog_fd` to this
    /// tracepoint/kprobe event (since Linux 4.1).
    pub fn set_bpf(&self, prog_fd: c_int) -> Result<(), Errno> {
        self.fd.set_bpf(prog_fd).map(drop)
    }

    /// `PERF_EVENT_IOC_PAUSE_OUTPUT`: stop (true) or resume (false) writing
    /// to the ring buffer (since Linux 4.7).
    pub fn pause_output(&self, pause: bool) -> Result<(), Errno> {
        self.fd.pause_output(pause as c_uint).map(drop)
    }

    /// `PERF_EVENT_IOC_QUERY_BPF`: the BPF programs attached to this event
    /// (since Linux 4.16). `buf[0..2]` hold the kernel's header
    /// (`ids_len`, `prog_cnt`); ids are written from `buf[2]` on.
    pub fn query_bpf<'a>(&self, buf: &'a mut [u32]) -> Result<BpfPrograms<'a>, Errno> {
        if buf.len() < 2 {
            return Err(Errno(EINVAL));
        }
        buf[0] = (buf.len() - 2) as u32;
        buf[1] = 0;
        // perf_event_query_bpf is { u32 ids_len; u32 prog_cnt; u32 ids[]; }.
        self.fd.query_bpf(buf)?;
        let attached = buf[1];
        let n = (attached as usize).min(buf.len() - 2);
        Ok(BpfPrograms {
            attached,
            ids: &buf[2..2 + n],
        })
    }

    /// `PERF_EVENT_IOC_MODIFY_ATTRIBUTES`: change a breakpoint event's
    /// address, length or type (since Linux 4.17). The new attr's
    /// `disabled` bit applies as well: a `disabled(true)` attr stops it.
    pub fn modify_attributes(&self, attr: &Attr) -> Result<(), Errno> {
        let mut raw = attr.to_raw();
        self.fd.modify_attributes(&mut raw).map(drop)
    }

    /// Reads into `buf` and parses exactly what the kernel returned. For a
    /// group leader with PERF_FORMAT_GROUP, size `buf` with
    /// [`ReadFormat::size`] for the group's member count.
    pub fn read_into<'b>(&self, buf: &'b mut [u8]) -> Result<Reading<'b>, ReadFailure> {
        let n = self.fd.read(buf).map_err(ReadFailure::Errno)?;
        if n == 0 {
            return Err(ReadFailure::EndOfFile);
        }
        self.format.parse(&buf[..n]).map_err(ReadFailure::Format)
    }

    /// Reads a single event's count and times (for a group leader, the
    /// leader's own value: use [`EventFd::read_into`] for the members).
    pub fn read_counts(&self) -> Result<Counts, ReadFailure> {
        let mut buf = [0u8; 8 * 16];
        let needed = self.format.size(1);
        if self.format.is_group() {
            // The leader's value is the first of the group; read it all.
            let reading = self.read_into(&mut buf)?;
            return Ok(reading.counts());
        }
        let n = self
            .fd
            .read(&mut buf[..needed])
            .map_err(ReadFailure::Errno)?;
        if n == 0 {
            return Err(ReadFailure::EndOfFile);
        }
        self.format.counts(&buf[..n]).map_err(ReadFailure::Format)
    }
}

/// `prctl(PR_TASK_PERF_EVENTS_ENABLE)`: enable every event the calling
/// thread created (since Linux 2.6.31).
pub fn enable_thread_events() -> Result<(), Errno> {
    match prctl::task_perf_events_enable() {
        r if r < 0 => Err(Errno::last()),
        _ => Ok(()),
    }
}

/// `prctl(PR_TASK_PERF_EVENTS_DISABLE)`: disable every event the calling
/// thread created.
pub fn disable_thread_events() -> Result<(), Errno> {
    match prctl::task_perf_events_disable() {
        r if r < 0 => Err(Errno::last()),
        _ => Ok(()),
    }
}

#[cfg(feature = "std")]
mod std_traits {
    use super::EventFd;
    use std::os::fd::{AsFd, AsRawFd, BorrowedFd, IntoRawFd, OwnedFd, RawFd};

    impl AsRawFd for EventFd {
        fn as_raw_fd(&self) -> RawFd {
            self.fd.as_raw_fd()
        }
    }

    impl AsFd for EventFd {
        fn as_fd(&self) -> BorrowedFd<'_> {
            self.fd.as_fd()
        }
    }

    impl IntoRawFd for EventFd {
        fn into_raw_fd(self) -> RawFd {
            self.fd.into_raw_fd()
        }
    }

    impl From<EventFd> for OwnedFd {
        fn from(fd: EventFd) -> OwnedFd {
            fd.fd.into()
        }
    }
}
