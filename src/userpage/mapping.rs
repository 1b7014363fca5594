//! [`UserPage`]: an event's `perf_event_mmap_page`, mapped on its own or
//! borrowed from the first page of a ring-buffer mapping.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::source::{PagePtr, PageSource};
use super::sync::Ordering;
use crate::fd::EventFd;
use crate::linux::errno as e;
use crate::linux::mmap::{page_size, Mapping, Protection};
use crate::sys;
use core::ffi::{c_int, c_void};
use core::fmt;
use core::ptr::NonNull;

/// Why mapping an event's page failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MapError {
    /// `mmap(2)` failed with this errno.
    Mmap {
        /// The errno.
        errno: c_int,
    },
}

impl fmt::Display for MapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MapError::Mmap { errno } => {
                write!(
                    f,
                    "mmap of the event's first page failed with errno {errno}: "
                )?;
                f.write_str(match *errno {
                    e::EBADF | e::ENODEV => "the fd is not an open perf event",
                    e::EINVAL => {
                        "the kernel refused the size or offset (one page at offset 0), or the \
                         event is a group member whose output goes to another event's buffer"
                    }
                    e::EPERM => {
                        "locked-memory limit: the mapping exceeds \
                         /proc/sys/kernel/perf_event_mlock_kb plus RLIMIT_MEMLOCK and the \
                         process lacks CAP_IPC_LOCK"
                    }
                    e::ENOMEM => "out of memory",
                    _ => "see mmap(2) and perf_event_open(2)",
                })
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for MapError {}

/// An event's metadata page.
///
/// Either mapped here ([`UserPage::map`]: one page, unmapped on drop) or
/// the first page of a ring-buffer mapping someone else owns
/// ([`UserPage::from_ring_mapping`]).
#[derive(Debug)]
pub struct UserPage {
    page: PagePtr<'static>,
    /// The mapping, unmapped on drop; `None` when borrowed. Declared after
    /// `page` so that the pointer is gone first.
    _mapping: Option<Mapping>,
}

// SAFETY: the mapping belongs to the process, not to a thread, and is only
// read with atomic loads (PagePtr).
unsafe impl Send for UserPage {}
// SAFETY: as above.
unsafe impl Sync for UserPage {}

impl UserPage {
    /// Maps the first page of event `fd` (`mmap(NULL, page_size,
    /// PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)`): the metadata page alone,
    /// with no ring buffer after it (allowed since Linux 2.6.31). Writable
    /// because the reader loads it atomically; it never writes, and without
    /// data pages writability changes nothing for the kernel. The mapping
    /// holds its own reference to the event: it stays valid after `fd` closes.
    pub fn map(fd: &EventFd) -> Result<Self, MapError> {
        // SAFETY: an EventFd is an open perf event fd for as long as it lives.
        unsafe { Self::map_raw(fd.raw()) }
    }

    /// [`UserPage::map`] for a perf event fd this crate did not open (for
    /// library authors with their own fd type).
    ///
    /// # Safety
    ///
    /// `fd` must be an open perf event fd for the duration of the call (or
    /// a number that is no open fd, such as -1: mmap then fails with EBADF).
    /// Any other mappable file would give the reader a page it trusts (the
    /// counter index and capabilities) without the kernel's protocol, and
    /// the counter instruction could then run with a garbage index.
    pub unsafe fn map_raw(fd: c_int) -> Result<Self, MapError> {
        // SAFETY: the caller's contract: an open perf event fd (or none).
        let mapping = unsafe { Mapping::shared_raw(fd, page_size(), 0, Protection::ReadWrite) }
            .map_err(|e| MapError::Mmap { errno: e.0 })?;
        Ok(UserPage {
            // SAFETY: the page-aligned, read-write mapping lives until drop,
            // which ends every borrow of it; the kernel writes it (a perf
            // event's page: the caller's contract).
            page: unsafe { PagePtr::new(mapping.as_ptr().cast()) },
            _mapping: Some(mapping),
        })
    }

    /// The first page of a ring-buffer mapping (`mmap` of `1 + 2^n` pages of
    /// the event fd) that the caller owns and unmaps.
    ///
    /// # Safety
    ///
    /// `first_page` must be the start of a live `MAP_SHARED` mapping of a
    /// perf event fd at offset 0, mapped `PROT_READ | PROT_WRITE` (the
    /// reader's atomic loads need writable memory), and must stay mapped
    /// for as long as the returned `UserPage` lives.
    pub unsafe fn from_ring_mapping(first_page: NonNull<c_void>) -> Self {
        UserPage {
            // SAFETY: the caller's contract.
            page: unsafe { PagePtr::new(first_page.cast()) },
            _mapping: None,
        }
    }

    /// The page as a [`PageSource`] with the real counter instructions.
    #[inline]
    pub fn page(&self) -> PagePtr<'_> {
        self.page
    }

    /// The page's address.
    #[inline]
    pub fn as_ptr(&self) -> *const sys::perf_event_mmap_page {
        self.page.as_ptr()
    }

    /// The `version` field (since 2.6.31; 0 on every kernel so far).
    pub fn version(&self) -> u32 {
        let page = self.page.as_ptr();
        // SAFETY: `version` of the live page; the kernel writes it once at
        // mmap, before this mapping was returned.
        let at = unsafe { core::ptr::addr_of!((*page).version) };
        // SAFETY: an aligned u32 of the live, writable page.
        unsafe { core::sync::atomic::AtomicU32::from_ptr(at.cast_mut()) }.load(Ordering::Relaxed)
    }
}

macro_rules! delegate_page_source {
    ($(#[$m:meta])* impl$([$($g:tt)*])? for $ty:ty => |$s:ident| $page:expr) => {
        $(#[$m])*
        impl$(<$($g)*>)? PageSource for $ty {
            #[inline]
            fn load_lock(&self, order: Ordering) -> u32 { let $s = self; $page.load_lock(order) }
            #[inline]
            fn load_index(&self) -> u32 { let $s = self; $page.load_index() }
            #[inline]
            fn load_offset(&self) -> i64 { let $s = self; $page.load_offset() }
            #[inline]
            fn load_time_enabled(&self) -> u64 { let $s = self; $page.load_time_enabled() }
            #[inline]
            fn load_time_running(&self) -> u64 { let $s = self; $page.load_time_running() }
            #[inline]
            fn load_capabilities(&self) -> u64 { let $s = self; $page.load_capabilities() }
            #[inline]
            fn load_pmc_width(&self) -> u16 { let $s = self; $page.load_pmc_width() }
            #[inline]
            fn load_time_shift(&self) -> u16 { let $s = self; $page.load_time_shift() }
            #[inline]
            fn load_time_mult(&self) -> u32 { let $s = self; $page.load_time_mult() }
            #[inline]
            fn load_time_offset(&self) -> u64 { let $s = self; $page.load_time_offset() }
            #[inline]
            fn load_time_cycles(&self) -> u64 { let $s = self; $page.load_time_cycles() }
            #[inline]
            fn load_time_mask(&self) -> u64 { let $s = self; $page.load_time_mask() }
            #[inline(always)]
            unsafe fn read_counter(&self, index: u32) -> Option<u64> {
                let $s = self;
                // SAFETY: the caller's contract is passed on unchanged.
                unsafe { $page.read_counter(index) }
            }
            #[inline(always)]
            unsafe fn read_timestamp(&self) -> Option<u64> {
                let $s = self;
                // SAFETY: the caller's contract is passed on unchanged.
                unsafe { $page.read_timestamp() }
            }
        }
    };
}

delegate_page_source!(
    /// The mapped page, with the real counter instructions.
    impl for UserPage => |s| s.page
);
delegate_page_source!(
    /// Any borrowed source.
    impl['a, S: PageSource + ?Sized] for &'a S => |s| (**s)
);
