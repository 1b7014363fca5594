//! Where a snapshot's loads come from: [`PageSource`], and [`PagePtr`], the
//! source over a real `perf_event_mmap_page` in memory.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::arch;
use super::sync::Ordering;
use crate::sys;
use core::marker::PhantomData;
use core::ptr::{addr_of, NonNull};
use core::sync::atomic::{AtomicU16, AtomicU32};

/// The loads of the seqlock protocol: a page (mapped from the kernel, or
/// simulated) and the counter and timestamp instructions that go with it.
///
/// Every `load_*` is one relaxed atomic (or volatile) load of the field of
/// the same name in `struct perf_event_mmap_page`; a 64-bit field may be
/// two 32-bit loads where the target has no 64-bit atomics, which the
/// seqlock makes safe (a torn field is a torn snapshot, and is retried).
/// Implementations never create a reference to memory another thread or
/// the kernel writes. The order of the loads and the fence between them is
/// [`super::snapshot`]'s business, not the source's.
pub trait PageSource {
    /// Loads `lock` with `order` (the protocol uses `Acquire` first and
    /// `Relaxed` after its `fence(Acquire)`).
    fn load_lock(&self, order: Ordering) -> u32;
    /// `index`: 0, or the hardware counter plus one (since Linux 2.6.31).
    fn load_index(&self) -> u32;
    /// `offset`: add to the counter instruction's value (since 2.6.31).
    fn load_offset(&self) -> i64;
    /// `time_enabled` at the page's last update, in ns (since 2.6.32).
    fn load_time_enabled(&self) -> u64;
    /// `time_running` at the page's last update, in ns (since 2.6.32).
    fn load_time_running(&self) -> u64;
    /// `capabilities`: the raw word of the `cap_*` bits (since 3.12).
    fn load_capabilities(&self) -> u64;
    /// `pmc_width`: bits of the counter value (since 3.4).
    fn load_pmc_width(&self) -> u16;
    /// `time_shift` (since 3.4).
    fn load_time_shift(&self) -> u16;
    /// `time_mult` (since 3.4).
    fn load_time_mult(&self) -> u32;
    /// `time_offset` (since 3.4).
    fn load_time_offset(&self) -> u64;
    /// `time_cycles` (since 5.12, with `cap_user_time_short`).
    fn load_time_cycles(&self) -> u64;
    /// `time_mask` (since 5.12, with `cap_user_time_short`).
    fn load_time_mask(&self) -> u64;

    /// The counter instruction for page index `index` (`rdpmc` /
    /// `mrs` / `csrr` on a real page, the simulated counter on a simulated
    /// one), or `None` when there is none for it.
    ///
    /// # Safety
    ///
    /// On a real page the instruction faults unless the kernel allows it:
    /// the caller must have loaded, in the current seqlock section,
    /// `cap_user_rdpmc == 1` and this nonzero `index`, and the event must
    /// monitor the calling thread (pid 0 or its tid, cpu -1).
    unsafe fn read_counter(&self, index: u32) -> Option<u64>;

    /// The timestamp counter the `time_*` fields convert, or `None`.
    ///
    /// # Safety
    ///
    /// The caller must have loaded `cap_user_time == 1` in the current
    /// seqlock section.
    unsafe fn read_timestamp(&self) -> Option<u64>;
}

/// A `perf_event_mmap_page` in memory, read through a raw pointer: the
/// first page of an event's mapping (what [`super::UserPage`] maps), or a
/// page-layout buffer such as [`super::sim::SimPage`]'s.
///
/// Counter and timestamp reads are the real instructions of the target
/// ([`super::HAS_COUNTER_INSTRUCTION`]).
#[derive(Clone, Copy, Debug)]
pub struct PagePtr<'a> {
    page: NonNull<sys::perf_event_mmap_page>,
    _page: PhantomData<&'a sys::perf_event_mmap_page>,
}

// SAFETY: a PagePtr only performs atomic loads of memory that stays valid
// for 'a (its constructor's contract); any thread may do those.
unsafe impl Send for PagePtr<'_> {}
// SAFETY: as above.
unsafe impl Sync for PagePtr<'_> {}

impl<'a> PagePtr<'a> {
    /// A source over the page at `page`.
    ///
    /// # Safety
    ///
    /// For all of `'a`, `page` must point to a `perf_event_mmap_page` (at
    /// least its first 1088 bytes, [`crate::abi::layout::MMAP_PAGE_SIZE`])
    /// that is mapped readable **and writable** (atomic loads need memory
    /// valid for writes; the reader never stores), aligned to 8 bytes (a
    /// mapping is page-aligned), and written by others only with atomic
    /// stores or by the kernel.
    #[inline]
    pub const unsafe fn new(page: NonNull<sys::perf_event_mmap_page>) -> Self {
        PagePtr {
            page,
            _page: PhantomData,
        }
    }

    /// The page's address (e.g. for a C reader of the same page).
    #[inline]
    pub const fn as_ptr(&self) -> *const sys::perf_event_mmap_page {
        self.page.as_ptr()
    }

    #[inline(always)]
    fn u32_at(&self, field: *const u32) -> u32 {
        // SAFETY: `field` points into the live, writable, 8-aligned page
        // (constructor contract); u32 fields are 4-aligned; all concurrent
        // writes are atomic or the kernel's.
        unsafe { AtomicU32::from_ptr(field.cast_mut()) }.load(Ordering::Relaxed)
    }

    #[inline(always)]
    fn u16_at(&self, field: *const u16) -> u16 {
        // SAFETY: as in `u32_at`; u16 fields are 2-aligned.
        unsafe { AtomicU16::from_ptr(field.cast_mut()) }.load(Ordering::Relaxed)
    }

    #[cfg(target_has_atomic = "64")]
    #[inline(always)]
    fn u64_at(&self, field: *const u64) -> u64 {
        // SAFETY: as in `u32_at`; u64 fields are at offsets that are
        // multiples of 8 in an 8-aligned page.
        unsafe { core::sync::atomic::AtomicU64::from_ptr(field.cast_mut()) }.load(Ordering::Relaxed)
    }

    /// Without 64-bit atomics: two 32-bit halves in the target's byte order.
    /// A field torn between them belongs to a torn section, which the
    /// seqlock's re-check rejects.
    #[cfg(not(target_has_atomic = "64"))]
    #[inline(always)]
    fn u64_at(&self, field: *const u64) -> u64 {
        let words = field.cast::<u32>();
        // SAFETY: both halves lie inside the 8-byte field.
        let (first, second) = (self.u32_at(words), self.u32_at(unsafe { words.add(1) }));
        if cfg!(target_endian = "big") {
            (u64::from(first) << 32) | u64::from(second)
        } else {
            (u64::from(second) << 32) | u64::from(first)
        }
    }
}

/// The address of a field of the page, without creating a reference.
macro_rules! field {
    ($page:expr, $($f:tt)+) => {{
        let p = $page.page.as_ptr();
        // SAFETY: a place expression on the live page (constructor
        // contract): computes the field's address, reads nothing.
        unsafe { addr_of!((*p).$($f)+) }
    }};
}

impl PageSource for PagePtr<'_> {
    #[inline]
    fn load_lock(&self, order: Ordering) -> u32 {
        let at = field!(self, lock);
        // SAFETY: see `u32_at`.
        unsafe { AtomicU32::from_ptr(at.cast_mut()) }.load(order)
    }
    #[inline]
    fn load_index(&self) -> u32 {
        self.u32_at(field!(self, index))
    }
    #[inline]
    fn load_offset(&self) -> i64 {
        self.u64_at(field!(self, offset).cast()) as i64
    }
    #[inline]
    fn load_time_enabled(&self) -> u64 {
        self.u64_at(field!(self, time_enabled))
    }
    #[inline]
    fn load_time_running(&self) -> u64 {
        self.u64_at(field!(self, time_running))
    }
    #[inline]
    fn load_capabilities(&self) -> u64 {
        self.u64_at(field!(self, __bindgen_anon_1.capabilities))
    }
    #[inline]
    fn load_pmc_width(&self) -> u16 {
        self.u16_at(field!(self, pmc_width))
    }
    #[inline]
    fn load_time_shift(&self) -> u16 {
        self.u16_at(field!(self, time_shift))
    }
    #[inline]
    fn load_time_mult(&self) -> u32 {
        self.u32_at(field!(self, time_mult))
    }
    #[inline]
    fn load_time_offset(&self) -> u64 {
        self.u64_at(field!(self, time_offset))
    }
    #[inline]
    fn load_time_cycles(&self) -> u64 {
        self.u64_at(field!(self, time_cycles))
    }
    #[inline]
    fn load_time_mask(&self) -> u64 {
        self.u64_at(field!(self, time_mask))
    }

    #[inline(always)]
    unsafe fn read_counter(&self, index: u32) -> Option<u64> {
        // SAFETY: the caller's contract is the instruction's.
        unsafe { arch::read_counter(index) }
    }

    #[inline(always)]
    unsafe fn read_timestamp(&self) -> Option<u64> {
        // SAFETY: the caller's contract is the instruction's.
        unsafe { arch::read_timestamp() }
    }
}
