//! A simulated page and a writer that follows the kernel's update protocol,
//! so the reader can be exercised without hardware: by the stress test
//! (threads), the loom model (every interleaving) and the benchmarks.
//!
//! The kernel's `perf_event_update_userpage` does `++lock; barrier();
//! fields; barrier(); ++lock` on the CPU the event runs on: a reader of its
//! own event is interrupted by the update and needs no CPU fences on the
//! writer side. The simulated writer runs on another thread, so it uses the
//! C11 form of the same protocol: `lock = seq + 1` (relaxed),
//! `fence(Release)`, the fields (relaxed), `lock = seq + 2` (Release). A
//! reader that is correct against this writer is correct against the kernel.
//!
//! In a normal build the page is a real `perf_event_mmap_page` in memory
//! (so [`SimPage::page_ptr`] reads it with the production loads of
//! [`PagePtr`], and a C reader can read the same bytes); in the loom build
//! it is a set of loom atomics. The simulated hardware counter is written
//! inside the update, like the kernel reprogramming the counter, and the
//! simulated timestamp counter is free-running.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::snapshot::{self, Snapshot, Unstable};
#[cfg(not(loom))]
use super::source::PagePtr;
use super::source::PageSource;
use super::sync::{fence, AtomicU64, Ordering};

/// Everything one update writes: the page's read-side fields and the
/// simulated counter's raw value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageState {
    /// `index`.
    pub index: u32,
    /// `offset`.
    pub offset: i64,
    /// `time_enabled`.
    pub time_enabled: u64,
    /// `time_running`.
    pub time_running: u64,
    /// `capabilities` (raw word; build it with
    /// [`crate::abi::bitfield::mmap_caps`] masks).
    pub capabilities: u64,
    /// `pmc_width`.
    pub pmc_width: u16,
    /// `time_shift`.
    pub time_shift: u16,
    /// `time_mult`.
    pub time_mult: u32,
    /// `time_offset`.
    pub time_offset: u64,
    /// `time_cycles`.
    pub time_cycles: u64,
    /// `time_mask`.
    pub time_mask: u64,
    /// The simulated hardware counter's raw value (what the counter
    /// instruction returns until the next update).
    pub counter: u64,
}

#[cfg(not(loom))]
type Fields = memory::Fields;
#[cfg(loom)]
type Fields = cells::Fields;

/// A simulated event page with a kernel-protocol writer.
///
/// One writer at a time ([`SimPage::publish`] from one thread, as the
/// kernel updates a page from one CPU); any number of readers.
#[derive(Debug)]
pub struct SimPage {
    fields: Fields,
    counter: AtomicU64,
    clock: AtomicU64,
}

impl SimPage {
    /// A page that starts in `state` (lock 2: one update made).
    pub fn new(state: &PageState) -> Self {
        let page = SimPage {
            fields: Fields::new(),
            counter: AtomicU64::new(0),
            clock: AtomicU64::new(0),
        };
        page.publish(state);
        page
    }

    /// Updates the page the way the kernel does.
    pub fn publish(&self, state: &PageState) {
        let lock = self.fields.lock();
        let seq = lock.load(Ordering::Relaxed);
        lock.store(seq.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        self.fields.store(state);
        self.counter.store(state.counter, Ordering::Relaxed);
        lock.store(seq.wrapping_add(2), Ordering::Release);
    }

    /// Sets the simulated timestamp counter.
    pub fn set_clock(&self, cycles: u64) {
        self.clock.store(cycles, Ordering::Relaxed);
    }

    /// A snapshot with the simulated counter and clock.
    pub fn snapshot(&self) -> Result<Snapshot, Unstable> {
        // SAFETY: the simulated counter instruction is a plain load; it has
        // no precondition.
        unsafe { snapshot::read(self, true) }
    }

    /// The page as real memory with the target's real instructions: what
    /// a mapped page is read with. Only for pages whose `cap_user_rdpmc` or
    /// `index` keep the real counter instruction from running.
    #[cfg(not(loom))]
    pub fn page_ptr(&self) -> PagePtr<'_> {
        self.fields.page_ptr()
    }
}

impl PageSource for SimPage {
    fn load_lock(&self, order: Ordering) -> u32 {
        self.fields.lock().load(order)
    }
    fn load_index(&self) -> u32 {
        self.fields.index()
    }
    fn load_offset(&self) -> i64 {
        self.fields.offset()
    }
    fn load_time_enabled(&self) -> u64 {
        self.fields.time_enabled()
    }
    fn load_time_running(&self) -> u64 {
        self.fields.time_running()
    }
    fn load_capabilities(&self) -> u64 {
        self.fields.capabilities()
    }
    fn load_pmc_width(&self) -> u16 {
        self.fields.pmc_width()
    }
    fn load_time_shift(&self) -> u16 {
        self.fields.time_shift()
    }
    fn load_time_mult(&self) -> u32 {
        self.fields.time_mult()
    }
    fn load_time_offset(&self) -> u64 {
        self.fields.time_offset()
    }
    fn load_time_cycles(&self) -> u64 {
        self.fields.time_cycles()
    }
    fn load_time_mask(&self) -> u64 {
        self.fields.time_mask()
    }
    unsafe fn read_counter(&self, _index: u32) -> Option<u64> {
        Some(self.counter.load(Ordering::Relaxed))
    }
    unsafe fn read_timestamp(&self) -> Option<u64> {
        Some(self.clock.load(Ordering::Relaxed))
    }
}

#[cfg(not(loom))]
mod memory {
    //! The page as a real `perf_event_mmap_page` in memory, written with
    //! atomic stores through raw pointers.

    use super::super::source::{PagePtr, PageSource};
    use super::PageState;
    use crate::sys;
    use core::cell::UnsafeCell;
    use core::ptr::{addr_of_mut, NonNull};
    use core::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};

    /// Page-layout memory, 64-byte aligned like a cache line (a mapping is
    /// page-aligned; the reader needs 8).
    #[repr(C, align(64))]
    pub(super) struct Fields {
        page: UnsafeCell<sys::perf_event_mmap_page>,
    }

    // SAFETY: after `new`, the memory is only accessed with atomics.
    unsafe impl Sync for Fields {}

    impl core::fmt::Debug for Fields {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.write_str("Fields { perf_event_mmap_page }")
        }
    }

    macro_rules! at {
        ($self:expr, $($f:tt)+) => {{
            let p = $self.page.get();
            // SAFETY: a place expression on the owned page: computes the
            // field's address, reads nothing.
            unsafe { addr_of_mut!((*p).$($f)+) }
        }};
    }

    impl Fields {
        pub(super) fn new() -> Self {
            Fields {
                page: UnsafeCell::new(sys::perf_event_mmap_page::default()),
            }
        }

        pub(super) fn page_ptr(&self) -> PagePtr<'_> {
            let page = NonNull::new(self.page.get()).expect("UnsafeCell::get is never null");
            // SAFETY: the page lives as long as `self`, is 64-aligned and
            // writable, and is written only with atomic stores.
            unsafe { PagePtr::new(page) }
        }

        pub(super) fn lock(&self) -> &AtomicU32 {
            let lock = at!(self, lock);
            // SAFETY: `lock` is an aligned u32 of the page, which outlives
            // the reference and is only accessed atomically.
            unsafe { AtomicU32::from_ptr(lock) }
        }

        pub(super) fn store(&self, s: &PageState) {
            let r = Ordering::Relaxed;
            let index = at!(self, index);
            let offset = at!(self, offset).cast::<u64>();
            let enabled = at!(self, time_enabled);
            let running = at!(self, time_running);
            let caps = at!(self, __bindgen_anon_1.capabilities);
            let width = at!(self, pmc_width);
            let shift = at!(self, time_shift);
            let mult = at!(self, time_mult);
            let time_offset = at!(self, time_offset);
            let cycles = at!(self, time_cycles);
            let mask = at!(self, time_mask);
            // SAFETY: (all stores below) each pointer is an aligned field of
            // the live page, only ever accessed atomically with its own size.
            unsafe {
                AtomicU32::from_ptr(index).store(s.index, r);
                AtomicU64::from_ptr(offset).store(s.offset as u64, r);
                AtomicU64::from_ptr(enabled).store(s.time_enabled, r);
                AtomicU64::from_ptr(running).store(s.time_running, r);
                AtomicU64::from_ptr(caps).store(s.capabilities, r);
                AtomicU16::from_ptr(width).store(s.pmc_width, r);
                AtomicU16::from_ptr(shift).store(s.time_shift, r);
                AtomicU32::from_ptr(mult).store(s.time_mult, r);
                AtomicU64::from_ptr(time_offset).store(s.time_offset, r);
                AtomicU64::from_ptr(cycles).store(s.time_cycles, r);
                AtomicU64::from_ptr(mask).store(s.time_mask, r);
            }
        }

        pub(super) fn index(&self) -> u32 {
            self.page_ptr().load_index()
        }
        pub(super) fn offset(&self) -> i64 {
            self.page_ptr().load_offset()
        }
        pub(super) fn time_enabled(&self) -> u64 {
            self.page_ptr().load_time_enabled()
        }
        pub(super) fn time_running(&self) -> u64 {
            self.page_ptr().load_time_running()
        }
        pub(super) fn capabilities(&self) -> u64 {
            self.page_ptr().load_capabilities()
        }
        pub(super) fn pmc_width(&self) -> u16 {
            self.page_ptr().load_pmc_width()
        }
        pub(super) fn time_shift(&self) -> u16 {
            self.page_ptr().load_time_shift()
        }
        pub(super) fn time_mult(&self) -> u32 {
            self.page_ptr().load_time_mult()
        }
        pub(super) fn time_offset(&self) -> u64 {
            self.page_ptr().load_time_offset()
        }
        pub(super) fn time_cycles(&self) -> u64 {
            self.page_ptr().load_time_cycles()
        }
        pub(super) fn time_mask(&self) -> u64 {
            self.page_ptr().load_time_mask()
        }
    }
}

#[cfg(loom)]
mod cells {
    //! The page as loom atomics, one per field.

    use super::PageState;
    use crate::userpage::sync::{AtomicU32, AtomicU64, Ordering};

    #[derive(Debug)]
    pub(super) struct Fields {
        lock: AtomicU32,
        index: AtomicU32,
        offset: AtomicU64,
        time_enabled: AtomicU64,
        time_running: AtomicU64,
        capabilities: AtomicU64,
        pmc_width: AtomicU32,
        time_shift: AtomicU32,
        time_mult: AtomicU32,
        time_offset: AtomicU64,
        time_cycles: AtomicU64,
        time_mask: AtomicU64,
    }

    impl Fields {
        pub(super) fn new() -> Self {
            Fields {
                lock: AtomicU32::new(0),
                index: AtomicU32::new(0),
                offset: AtomicU64::new(0),
                time_enabled: AtomicU64::new(0),
                time_running: AtomicU64::new(0),
                capabilities: AtomicU64::new(0),
                pmc_width: AtomicU32::new(0),
                time_shift: AtomicU32::new(0),
                time_mult: AtomicU32::new(0),
                time_offset: AtomicU64::new(0),
                time_cycles: AtomicU64::new(0),
                time_mask: AtomicU64::new(0),
            }
        }

        pub(super) fn lock(&self) -> &AtomicU32 {
            &self.lock
        }

        pub(super) fn store(&self, s: &PageState) {
            let r = Ordering::Relaxed;
            self.index.store(s.index, r);
            self.offset.store(s.offset as u64, r);
            self.time_enabled.store(s.time_enabled, r);
            self.time_running.store(s.time_running, r);
            self.capabilities.store(s.capabilities, r);
            self.pmc_width.store(u32::from(s.pmc_width), r);
            self.time_shift.store(u32::from(s.time_shift), r);
            self.time_mult.store(s.time_mult, r);
            self.time_offset.store(s.time_offset, r);
            self.time_cycles.store(s.time_cycles, r);
            self.time_mask.store(s.time_mask, r);
        }

        pub(super) fn index(&self) -> u32 {
            self.index.load(Ordering::Relaxed)
        }
        pub(super) fn offset(&self) -> i64 {
            self.offset.load(Ordering::Relaxed) as i64
        }
        pub(super) fn time_enabled(&self) -> u64 {
            self.time_enabled.load(Ordering::Relaxed)
        }
        pub(super) fn time_running(&self) -> u64 {
            self.time_running.load(Ordering::Relaxed)
        }
        pub(super) fn capabilities(&self) -> u64 {
            self.capabilities.load(Ordering::Relaxed)
        }
        pub(super) fn pmc_width(&self) -> u16 {
            self.pmc_width.load(Ordering::Relaxed) as u16
        }
        pub(super) fn time_shift(&self) -> u16 {
            self.time_shift.load(Ordering::Relaxed) as u16
        }
        pub(super) fn time_mult(&self) -> u32 {
            self.time_mult.load(Ordering::Relaxed)
        }
        pub(super) fn time_offset(&self) -> u64 {
            self.time_offset.load(Ordering::Relaxed)
        }
        pub(super) fn time_cycles(&self) -> u64 {
            self.time_cycles.load(Ordering::Relaxed)
        }
        pub(super) fn time_mask(&self) -> u64 {
            self.time_mask.load(Ordering::Relaxed)
        }
    }
}
