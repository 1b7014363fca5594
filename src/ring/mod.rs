//! The mmap ring buffer of a sampling event (perf_event_open(2), "MMAP
//! layout"): one metadata page plus 2^n data pages, read without copying.
//!
//! Ordering, as the kernel requires: `data_head` is loaded with Acquire
//! before any record below it is read; `data_tail` is stored with Release
//! only after the caller is done with the records it frees. Between those
//! two points the kernel does not write the bytes `[tail, head)` (in the
//! default, non-overwrite mode it never writes past `data_tail`), so the
//! records can be lent out as plain byte slices.
//!
//! # Draining a ring
//!
//! [`RingBuffer::records`] is the one way to drain a ring: a [`Batch`] of
//! the records up to `data_head`, freed for the kernel when it is dropped.
//! A profiler's hot fields (ip, pid/tid, time, id, cpu, period) are read
//! straight from a record's bytes through the layout's
//! [`SamplePrefix`](crate::record::SamplePrefix), offsets computed once;
//! [`RawRecord::parse`] decodes a whole record (callchain, registers,
//! side-band records) when it is needed. (BENCHMARKS.md, "Draining one
//! ring": the prefix path costs about twice a raw reader that reads the
//! three fields at hard-coded offsets, a full parse more.)
//!
//! ```
//! use perf_event_core::attr::Attr;
//! use perf_event_core::event::{Event, Software};
//! use perf_event_core::open::{open, OpenFlags, Scope};
//! use perf_event_core::record::SampleLayout;
//! use perf_event_core::ring::RingBuffer;
//! use perf_event_core::abi::SampleType;
//!
//! // Every page fault of this thread in user space, with ip, pid/tid, time.
//! let attr = Attr::new(Event::Software(Software::PageFaults))
//!     .sample_period(1)
//!     .sample_type(SampleType::IP | SampleType::TID | SampleType::TIME)
//!     .exclude_kernel(true)
//!     .exclude_hv(true);
//! let fd = open(&attr, Scope::this_thread(), None, OpenFlags::new())?;
//! let mut ring = RingBuffer::map(&fd, 8)?;
//! let touched = vec![1u8; 1 << 20]; // fresh pages, each written: one fault each
//! fd.disable(false)?;
//! let prefix = SampleLayout::from_attr(&attr).prefix();
//! let (mut scratch, mut samples) = ([0u8; 64], 0);
//! let mut batch = ring.records();
//! while let Some(record) = batch.next() {
//!     let record = record?; // a corrupt stretch: says what was skipped
//!     let bytes = record.bytes(&mut scratch)?;
//!     if prefix.is_sample(bytes) {
//!         let (ip, time) = (prefix.ip(bytes), prefix.time(bytes));
//!         let (pid, tid) = prefix.pid_tid(bytes).unwrap_or_default();
//!         assert!(ip.is_some() && time.is_some() && pid > 0 && tid > 0);
//!         samples += 1;
//!     }
//! }
//! drop(batch); // frees the records for the kernel
//! assert!(samples > 0, "{} bytes touched", touched.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`RingBuffer::peek`] walks without freeing: records stay lent until
//! [`RingBuffer::commit`], so that a reader can hold records of several
//! rings at once (perf-event-host's ring set and its time-ordered merge).

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

mod aux_area;
mod backward;
mod batch;
mod locked;

pub use aux_area::AuxArea;
pub use backward::OverwriteSnapshot;
pub use batch::{Batch, ParseRecordError, Peek, RawRecord};
pub use locked::LockedMemory;

use crate::fd::EventFd;
use crate::linux::errno::Errno;
use crate::linux::io::{self, POLLHUP, POLLIN};
use crate::linux::mmap::{page_size, Mapping, Protection};
use crate::sys;
use core::fmt;
use core::mem::offset_of;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};

/// Why a mapping or a read of the ring failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RingError {
    /// The data area must be 2^n pages (n >= 0).
    PageCount {
        /// Pages asked for.
        pages: usize,
    },
    /// mmap(2) failed (EINVAL: wrong size or a second mapping of a
    /// redirected event); EPERM is [`RingError::LockedMemory`].
    Map(Errno),
    /// mmap(2) failed with EPERM: the pages exceed what this user may lock
    /// (`perf_event_mlock_kb` per CPU, then `RLIMIT_MEMLOCK`), with the
    /// limits read when it failed.
    LockedMemory(LockedMemory),
    /// `data_head - data_tail` exceeds the buffer: the positions cannot be
    /// trusted; everything up to head was skipped.
    Overrun {
        /// data_head.
        head: u64,
        /// data_tail.
        tail: u64,
        /// Bytes skipped.
        skipped: u64,
    },
    /// A record header is impossible (size below 8, or past data_head);
    /// everything from it up to head was skipped.
    Corrupt {
        /// Position of the bad header.
        at: u64,
        /// Its size field.
        size: u16,
        /// Bytes skipped.
        skipped: u64,
    },
    /// PERF_EVENT_IOC_PAUSE_OUTPUT failed while taking a snapshot.
    Pause(Errno),
    /// A caller buffer cannot hold the record.
    BufferTooSmall {
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        got: usize,
    },
}

impl fmt::Display for RingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RingError::PageCount { pages } => write!(
                f,
                "a ring buffer needs 2^n data pages (1, 2, 4, ...), not {pages}"
            ),
            RingError::Map(e) => write!(
                f,
                "mmap of the ring buffer failed: {e} (EINVAL: size not 1 + 2^n pages, an \
                 inherited event on cpu -1 (open one per CPU), or the event's output is \
                 redirected)"
            ),
            RingError::LockedMemory(l) => write!(f, "{l}"),
            RingError::Overrun {
                head,
                tail,
                skipped,
            } => write!(
                f,
                "ring overrun: data_head {head} - data_tail {tail} exceeds the buffer; \
                 {skipped} bytes skipped"
            ),
            RingError::Corrupt { at, size, skipped } => write!(
                f,
                "corrupt record at {at} (size {size}); {skipped} bytes up to data_head skipped"
            ),
            RingError::Pause(e) => {
                write!(f, "pausing the ring's output failed: {e} (needs Linux 4.7)")
            }
            RingError::BufferTooSmall { needed, got } => {
                write!(
                    f,
                    "record of {needed} bytes does not fit the {got}-byte buffer"
                )
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for RingError {}

impl RingError {
    /// The error of a refused mmap of `pages` pages: EPERM with the
    /// locked-memory limits read now, anything else as it is.
    pub(crate) fn from_mmap(errno: Errno, pages: usize, page_size: usize) -> RingError {
        if errno.0 == crate::linux::errno::EPERM {
            RingError::LockedMemory(LockedMemory::now(pages, page_size))
        } else {
            RingError::Map(errno)
        }
    }
}

/// A mapped ring buffer.
#[derive(Debug)]
pub struct RingBuffer {
    base: NonNull<u8>,
    /// The mapping `base` points into, unmapped on drop.
    _map: Mapping,
    data_offset: usize,
    data_size: usize,
    writable: bool,
}

// SAFETY: the mapping is process-wide memory; all access goes through
// atomics (metadata) or through `&mut self` batches (data).
unsafe impl Send for RingBuffer {}

impl RingBuffer {
    /// Maps `fd`'s metadata page and `data_pages` (2^n) data pages,
    /// read-write: the reader advances `data_tail` (the default mode).
    pub fn map(fd: &EventFd, data_pages: usize) -> Result<RingBuffer, RingError> {
        Self::map_mode(fd, data_pages, true)
    }

    /// Maps read-only: overwrite mode, for events with `write_backward`
    /// (the kernel never waits for the reader; see [`RingBuffer::snapshot`]).
    pub fn map_overwrite(fd: &EventFd, data_pages: usize) -> Result<RingBuffer, RingError> {
        Self::map_mode(fd, data_pages, false)
    }

    fn map_mode(fd: &EventFd, data_pages: usize, writable: bool) -> Result<RingBuffer, RingError> {
        if data_pages == 0 || !data_pages.is_power_of_two() {
            return Err(RingError::PageCount { pages: data_pages });
        }
        let page = page_size();
        let map_len = data_pages
            .checked_add(1)
            .and_then(|n| n.checked_mul(page))
            .ok_or(RingError::PageCount { pages: data_pages })?;
        let prot = if writable {
            Protection::ReadWrite
        } else {
            Protection::Read
        };
        let map = Mapping::shared(fd, map_len, 0, prot)
            .map_err(|e| RingError::from_mmap(e, data_pages + 1, page))?;
        let mut ring = RingBuffer {
            base: map.as_ptr(),
            _map: map,
            data_offset: page,
            data_size: map_len - page,
            writable,
        };
        // Since Linux 4.1 the kernel says where the data is; older kernels
        // leave zeros and use the classic layout (data after one page).
        let (off, size) = (
            ring.meta_u64(offset_of!(sys::perf_event_mmap_page, data_offset)),
            ring.meta_u64(offset_of!(sys::perf_event_mmap_page, data_size)),
        );
        if off != 0
            && size != 0
            && off as usize + size as usize <= map_len
            && (size as usize).is_power_of_two()
        {
            ring.data_offset = off as usize;
            ring.data_size = size as usize;
        }
        Ok(ring)
    }

    /// A u64 field of the metadata page as the kernel's `unsigned long`.
    ///
    /// The kernel keeps ring positions (data_head/tail, aux_head/tail) and
    /// the area sizes in `unsigned long`: on 32-bit targets only the low
    /// word of each u64 field is used (and wraps at 2^32), and many 32-bit
    /// targets have no 64-bit atomics. So the field is accessed as an
    /// `AtomicUsize` over its low word (the second word on big-endian).
    #[inline]
    fn meta_atomic(&self, offset: usize) -> &AtomicUsize {
        let low_word = if cfg!(all(target_endian = "big", target_pointer_width = "32")) {
            4
        } else {
            0
        };
        // SAFETY: `offset` is a u64 field offset inside the mapped metadata
        // page, 8-aligned (checked in abi::layout), so its low word is
        // usize-aligned; the kernel writes it concurrently, so it is only
        // ever accessed atomically.
        unsafe { &*(self.base.as_ptr().add(offset + low_word) as *const AtomicUsize) }
    }

    fn meta_u64(&self, offset: usize) -> u64 {
        self.meta_atomic(offset).load(Ordering::Relaxed) as u64
    }

    /// The metadata page (`perf_event_mmap_page`), for the user-space
    /// counter reader. Read it only with atomic or volatile loads.
    pub fn metadata(&self) -> NonNull<sys::perf_event_mmap_page> {
        self.base.cast()
    }

    /// `data_head` with Acquire ordering: records below it are complete.
    #[inline]
    pub fn head(&self) -> u64 {
        self.meta_atomic(offset_of!(sys::perf_event_mmap_page, data_head))
            .load(Ordering::Acquire) as u64
    }

    /// `data_tail`: where the reader is.
    #[inline]
    pub fn tail(&self) -> u64 {
        self.meta_atomic(offset_of!(sys::perf_event_mmap_page, data_tail))
            .load(Ordering::Relaxed) as u64
    }

    /// Frees everything below `tail` for the kernel (Release).
    fn set_tail(&self, tail: u64) {
        if self.writable {
            self.meta_atomic(offset_of!(sys::perf_event_mmap_page, data_tail))
                .store(tail as usize, Ordering::Release);
        }
    }

    /// Bytes in the data area.
    #[inline]
    pub fn data_size(&self) -> usize {
        self.data_size
    }

    /// The data area.
    ///
    /// # Safety
    /// Only bytes the kernel is not writing may be read through it: in
    /// non-overwrite mode `[data_tail, data_head)` after an Acquire load of
    /// `data_head`; in overwrite mode, only while output is paused.
    unsafe fn data(&self) -> &[u8] {
        // SAFETY: the data area lies inside the mapping (checked in map_mode);
        // the caller upholds the no-concurrent-write rule.
        unsafe {
            core::slice::from_raw_parts(self.base.as_ptr().add(self.data_offset), self.data_size)
        }
    }

    /// The records available now, oldest first. `data_tail` advances when
    /// the batch is dropped (or [`Batch::finish`]ed), after the caller is
    /// done with every record it lent out.
    pub fn records(&mut self) -> Batch<'_> {
        Batch::new(self)
    }

    /// Walks the records from `from` (a record boundary in
    /// `[data_tail, data_head]`, usually the end of the previous walk) up
    /// to `data_head`, without moving `data_tail`: records stay lent while
    /// the ring is borrowed, so several rings can be held at once. Free
    /// them for the kernel with [`RingBuffer::commit`].
    pub fn peek(&self, from: u64) -> Peek<'_> {
        Peek::new(self, from)
    }

    /// The record at `pos`, a record boundary that [`RingBuffer::peek`]
    /// returned and that has not been committed. Checked against the
    /// current `data_tail` / `data_head`: a position outside them is an
    /// error, never a read of bytes the kernel may be writing.
    #[inline]
    pub fn record_at(&self, pos: u64) -> Result<RawRecord<'_>, RingError> {
        let (head, tail) = (self.head(), self.tail());
        let used = (head as usize).wrapping_sub(tail as usize) as u64;
        let ahead = (pos as usize).wrapping_sub(tail as usize) as u64;
        if used > self.data_size as u64 || ahead >= used {
            return Err(RingError::Corrupt {
                at: pos,
                size: 0,
                skipped: 0,
            });
        }
        // SAFETY: [tail, head) is not written by the kernel until data_tail
        // moves, which needs `&mut self` (commit), impossible while the
        // returned record borrows the ring.
        let data = unsafe { self.data() };
        RawRecord::at(data, pos, head)
    }

    /// The record of `len` bytes at `pos`, one [`RingBuffer::peek`] returned
    /// and that has not been committed: as [`RingBuffer::record_at`] (the
    /// position is checked against the current `data_tail` / `data_head`)
    /// but the header is only compared with `len`, not checked again: the
    /// cheap second look of a merge that holds records in their rings
    /// (perf-event-host's ring set).
    #[inline]
    pub fn record_known(&self, pos: u64, len: usize) -> Result<RawRecord<'_>, RingError> {
        let (head, tail) = (self.head(), self.tail());
        let used = (head as usize).wrapping_sub(tail as usize) as u64;
        let ahead = (pos as usize).wrapping_sub(tail as usize) as u64;
        let err = RingError::Corrupt {
            at: pos,
            size: 0,
            skipped: 0,
        };
        if used > self.data_size as u64 || ahead >= used || len as u64 > used - ahead {
            return Err(err);
        }
        // SAFETY: [tail, head) is not written by the kernel until data_tail
        // moves, which needs `&mut self` (commit), impossible while the
        // returned record borrows the ring; `[pos, pos + len)` lies inside.
        let data = unsafe { self.data() };
        RawRecord::known(data, pos, len).ok_or(err)
    }

    /// Moves `data_tail` to `to` (Release), freeing everything below it for
    /// the kernel. `to` must lie in `[data_tail, data_head]`; anything else
    /// is refused (the tail never moves backwards or past the writer).
    pub fn commit(&mut self, to: u64) -> Result<(), RingError> {
        let (head, tail) = (self.head(), self.tail());
        let used = (head as usize).wrapping_sub(tail as usize) as u64;
        let ahead = (to as usize).wrapping_sub(tail as usize) as u64;
        if ahead > used && used <= self.data_size as u64 {
            return Err(RingError::Corrupt {
                at: to,
                size: 0,
                skipped: 0,
            });
        }
        self.set_tail(to);
        Ok(())
    }

    /// Waits until the kernel signals data (wakeup_events / watermark) or
    /// `timeout_ms` passes; `Ok(true)` when readable, or when the event's
    /// task has exited (POLLHUP: drain what remains; nothing more comes).
    pub fn wait(fd: &EventFd, timeout_ms: i32) -> Result<bool, Errno> {
        let mut fds = [io::PollFd::new(fd, POLLIN)];
        let n = io::poll(&mut fds, timeout_ms)?;
        Ok(n > 0 && fds[0].revents() & (POLLIN | POLLHUP) != 0)
    }
}

#[cfg(test)]
mod tests;
