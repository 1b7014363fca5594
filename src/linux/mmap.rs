//! [`Mapping`]: the one memory-mapping type of the crate (the metadata
//! page, the ring buffer and the AUX area all live in one), and
//! [`page_size`], the one page-size function.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::fd::EventFd;
use super::types::c_int;
use crate::linux::errno::Errno;
use core::ptr::NonNull;

/// The system page size, `sysconf(_SC_PAGESIZE)`: 4 KiB, 16 KiB or 64 KiB
/// depending on the architecture and kernel configuration, never assumed.
///
/// On Linux the C library answers from the kernel's `AT_PAGESZ` auxiliary
/// vector entry and cannot fail; should a C library ever answer nonsense
/// (0 or negative), the smallest page of any Linux architecture, 4096, is
/// returned rather than a size that would break every mapping.
#[inline]
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).ok().filter(|n| *n > 0).unwrap_or(4096)
}

/// How a mapping may be accessed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Protection {
    /// `PROT_READ`: for a ring buffer, overwrite mode (the kernel never
    /// waits for the reader).
    Read,
    /// `PROT_READ | PROT_WRITE`: the reader may store `data_tail` /
    /// `aux_tail`; atomic loads also need writable memory.
    ReadWrite,
}

impl Protection {
    const fn bits(self) -> c_int {
        match self {
            Protection::Read => libc::PROT_READ,
            Protection::ReadWrite => libc::PROT_READ | libc::PROT_WRITE,
        }
    }
}

/// A memory mapping, unmapped (`munmap(2)`) on drop.
///
/// It hands out only a raw pointer: what may be read or written through it,
/// and with which ordering, is the business of the module that made it
/// (the kernel writes perf mappings concurrently).
#[derive(Debug)]
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a mapping belongs to the process, not to a thread; this type only
// holds its address and unmaps it once.
unsafe impl Send for Mapping {}
// SAFETY: `&Mapping` gives only the address and the length.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// `mmap(NULL, len, prot, MAP_SHARED, fd, offset)`: for a perf event fd,
    /// offset 0 maps the metadata page (and `len - page` bytes of ring
    /// buffer after it, a power of two of pages), and the offset written to
    /// `aux_offset` maps the AUX area (since Linux 4.1).
    ///
    /// The kernel answers `EINVAL` for a size or offset it refuses, and
    /// `EPERM` above `perf_event_mlock_kb` plus `RLIMIT_MEMLOCK`. An offset
    /// that does not fit this target's `off_t` is `EINVAL` here.
    pub fn shared(
        fd: &EventFd,
        len: usize,
        offset: u64,
        prot: Protection,
    ) -> Result<Mapping, Errno> {
        // SAFETY: an EventFd is an open perf event fd while borrowed.
        unsafe { Self::shared_raw(fd.raw(), len, offset, prot) }
    }

    /// [`Mapping::shared`] of an fd number (a perf event fd this crate did
    /// not open).
    ///
    /// # Safety
    ///
    /// `fd` must be an open perf event fd for the duration of the call (or
    /// a number that is no open fd, such as -1: mmap then fails with
    /// EBADF). A mapping of another file is not what readers of the
    /// mapping expect (a regular file truncated under it raises SIGBUS on
    /// access), and a stale number maps whatever file now has it.
    pub unsafe fn shared_raw(
        fd: c_int,
        len: usize,
        offset: u64,
        prot: Protection,
    ) -> Result<Mapping, Errno> {
        let offset = libc::off_t::try_from(offset).map_err(|_| Errno(super::errno::EINVAL))?;
        // SAFETY: a new mapping at an address the kernel chooses: no existing
        // memory is affected; `fd` is the caller's contract.
        let ptr = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                len,
                prot.bits(),
                libc::MAP_SHARED,
                fd,
                offset,
            )
        };
        Self::from_mmap(ptr, len)
    }

    /// `mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
    /// -1, 0)`: zeroed private memory, page-aligned like a perf mapping (for
    /// simulations of the kernel's side in tests).
    pub fn anonymous(len: usize) -> Result<Mapping, Errno> {
        // SAFETY: a new private mapping; no existing memory is affected.
        let ptr = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        Self::from_mmap(ptr, len)
    }

    fn from_mmap(ptr: *mut libc::c_void, len: usize) -> Result<Mapping, Errno> {
        if ptr == libc::MAP_FAILED {
            return Err(Errno::last());
        }
        // mmap never returns NULL for a NULL hint without MAP_FIXED; were it
        // to, the mapping could not be told from "no mapping": refuse it.
        let ptr = NonNull::new(ptr.cast::<u8>()).ok_or(Errno(super::errno::ENOMEM))?;
        Ok(Mapping { ptr, len })
    }

    /// The first byte (page-aligned).
    #[inline]
    pub fn as_ptr(&self) -> NonNull<u8> {
        self.ptr
    }

    /// The length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the length is 0 (never: mmap refuses empty mappings).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: exactly the mapping made in `from_mmap`, unmapped once; the
        // modules holding a Mapping end every borrow of it before drop.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}
