//! The AUX area (since Linux 4.1): a second mapping after the data area for
//! PMUs that stream hardware trace (Intel PT, ARM SPE/CoreSight, ...). Its
//! head and tail live in the metadata page and follow the same ordering
//! rules as the data area: `aux_head` Acquire, `aux_tail` Release.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::{RingBuffer, RingError};
use crate::fd::EventFd;
use crate::linux::mmap::{page_size, Mapping, Protection};
use crate::sys;
use core::mem::offset_of;
use core::ptr::NonNull;
use core::sync::atomic::Ordering;

/// A mapped AUX area.
#[derive(Debug)]
pub struct AuxArea {
    base: NonNull<u8>,
    len: usize,
    /// The mapping, unmapped on drop.
    _map: Mapping,
}

// SAFETY: plain shared memory; access goes through `&self` with the
// ordering rules documented on the methods.
unsafe impl Send for AuxArea {}

impl RingBuffer {
    /// Maps `pages` (2^n) AUX pages after the data area: writes
    /// `aux_offset` / `aux_size` into the metadata page, then maps them.
    /// Needs a PMU with AUX support; others answer EINVAL.
    pub fn map_aux(&self, fd: &EventFd, pages: usize) -> Result<AuxArea, RingError> {
        if pages == 0 || !pages.is_power_of_two() {
            return Err(RingError::PageCount { pages });
        }
        let page = page_size();
        let offset = (self.data_offset + self.data_size).div_ceil(page) * page;
        let len = pages
            .checked_mul(page)
            .ok_or(RingError::PageCount { pages })?;
        self.meta_atomic(offset_of!(sys::perf_event_mmap_page, aux_offset))
            .store(offset, Ordering::Relaxed);
        self.meta_atomic(offset_of!(sys::perf_event_mmap_page, aux_size))
            .store(len, Ordering::Release);
        let map = Mapping::shared(fd, len, offset as u64, Protection::ReadWrite)
            .map_err(|e| RingError::from_mmap(e, pages, page))?;
        Ok(AuxArea {
            base: map.as_ptr(),
            len,
            _map: map,
        })
    }

    /// `aux_head` with Acquire ordering.
    pub fn aux_head(&self) -> u64 {
        self.meta_atomic(offset_of!(sys::perf_event_mmap_page, aux_head))
            .load(Ordering::Acquire) as u64
    }

    /// Frees AUX data below `tail` for the kernel (Release).
    pub fn set_aux_tail(&self, tail: u64) {
        self.meta_atomic(offset_of!(sys::perf_event_mmap_page, aux_tail))
            .store(tail as usize, Ordering::Release);
    }
}

impl AuxArea {
    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the area is empty (never: mapping needs at least one page).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The AUX bytes.
    ///
    /// # Safety
    /// Only `[aux_tail, aux_head)` (after an Acquire load of `aux_head`) is
    /// stable; the rest may be written by the hardware concurrently.
    pub unsafe fn data(&self) -> &[u8] {
        // SAFETY: the mapping is `len` bytes; the caller upholds the
        // no-concurrent-write rule.
        unsafe { core::slice::from_raw_parts(self.base.as_ptr(), self.len) }
    }
}
