//! The owned perf event fd, [`EventFd`]: every ioctl with the argument type
//! the kernel really takes, exact-size reads, and prctl for all of the
//! thread's events; and [`open_raw`], `perf_event_open(2)` on a raw
//! `perf_event_attr` returning one. (Both are defined at the OS boundary,
//! in the private `linux/fd.rs`, so that every layer can name them; this
//! module is their one public path.)

use crate::attr::Attr;
use crate::linux::errno::Errno;
use crate::linux::prctl;
use crate::read_format::{Counts, ReadError, ReadFormat, Reading};

pub use crate::linux::fd::{open_raw, BpfPrograms, EventFd};

/// The methods that need the typed layer's types; the fd's own and the
/// ioctls are defined at the OS boundary (`linux/fd.rs`).
impl EventFd {
    /// The read_format this fd was opened with.
    #[inline]
    pub fn read_format(&self) -> ReadFormat {
        ReadFormat(self.read_format_bits())
    }

    /// `PERF_EVENT_IOC_MODIFY_ATTRIBUTES`: change a breakpoint event's
    /// address, length or type (since Linux 4.17). The new attr's
    /// `disabled` bit applies as well: a `disabled(true)` attr stops it.
    pub fn modify_attributes(&self, attr: &Attr) -> Result<(), Errno> {
        let mut raw = attr.to_raw();
        self.modify_attributes_raw(&mut raw)
    }

    /// Reads into `buf` and parses exactly what the kernel returned. For a
    /// group leader with PERF_FORMAT_GROUP, size `buf` with
    /// [`ReadFormat::size`] for the group's member count.
    pub fn read_into<'b>(&self, buf: &'b mut [u8]) -> Result<Reading<'b>, ReadError> {
        let n = self.read(buf).map_err(ReadError::Errno)?;
        self.parse_read(&buf[..n])
    }

    /// Parses the bytes one [`EventFd::read`] returned (none: the
    /// end-of-file of a pinned event in error state) with this fd's
    /// read_format.
    pub fn parse_read<'b>(&self, bytes: &'b [u8]) -> Result<Reading<'b>, ReadError> {
        if bytes.is_empty() {
            return Err(ReadError::EndOfFile);
        }
        self.read_format().parse(bytes)
    }

    /// Reads a single event's count and times (for a group leader, the
    /// leader's own value: use [`EventFd::read_into`] for the members).
    pub fn read_counts(&self) -> Result<Counts, ReadError> {
        let mut buf = [0u8; 8 * 16];
        let needed = self.read_format().size(1);
        if self.read_format().is_group() {
            // The leader's value is the first of the group; read it all.
            let reading = self.read_into(&mut buf)?;
            return Ok(reading.counts());
        }
        let n = self.read(&mut buf[..needed]).map_err(ReadError::Errno)?;
        if n == 0 {
            return Err(ReadError::EndOfFile);
        }
        self.read_format().counts(&buf[..n])
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
/// thread created (since Linux 2.6.31).
pub fn disable_thread_events() -> Result<(), Errno> {
    match prctl::task_perf_events_disable() {
        r if r < 0 => Err(Errno::last()),
        _ => Ok(()),
    }
}
