//! The floor the ring benchmarks compare with (`ringset`, `ring_drain`): a
//! minimal reader of one perf ring that walks the record headers and reads
//! a sample's first three words (IP, TID, TIME under that `sample_type`) at
//! fixed offsets, mapped and read with no help from the crate.

use perf_event_core::attr::Attr;
use perf_event_core::fd::EventFd;
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::sys;
use std::sync::atomic::{AtomicU64, Ordering};

/// One event on this thread with its own ring of `pages` data pages.
pub struct Raw {
    /// The event.
    pub fd: EventFd,
    base: *mut u8,
    len: usize,
}

impl Raw {
    /// Opens `attr` on this thread and maps 1 + `pages` pages of it.
    pub fn new(attr: &Attr, pages: usize) -> Raw {
        let fd = open(attr, Scope::this_thread(), None, OpenFlags::new()).unwrap();
        let len = (pages + 1) * page_size();
        // SAFETY: the documented 1 + 2^n page mapping of a perf fd.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.raw(),
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED);
        Raw {
            fd,
            base: base.cast(),
            len,
        }
    }

    fn word(&self, off: usize) -> &AtomicU64 {
        // SAFETY: an 8-aligned u64 field of the mapped metadata page.
        unsafe { &*(self.base.add(off) as *const AtomicU64) }
    }

    /// Reads every record up to the head and frees them: (samples, a sum
    /// of their three words, so that the reads are not optimised away).
    #[inline(never)]
    pub fn drain(&mut self) -> (u64, u64) {
        let head = self
            .word(std::mem::offset_of!(sys::perf_event_mmap_page, data_head))
            .load(Ordering::Acquire);
        let tail_w = self.word(std::mem::offset_of!(sys::perf_event_mmap_page, data_tail));
        let mut pos = tail_w.load(Ordering::Relaxed);
        let page = page_size();
        let size = self.len - page;
        let mask = size as u64 - 1;
        let (mut n, mut sum) = (0, 0u64);
        // SAFETY: the data area starts one page in; [tail, head) is stable.
        let data = unsafe { self.base.add(page) };
        while pos < head {
            let off = (pos & mask) as usize;
            let rd = |o: usize| -> u64 {
                let at = (off + o) & mask as usize;
                // SAFETY: inside the data area (masked); 8-aligned.
                unsafe { std::ptr::read_volatile(data.add(at) as *const u64) }
            };
            let hdr = rd(0);
            let (kind, rec) = (hdr as u32, hdr >> 48);
            if kind == sys::PERF_RECORD_SAMPLE {
                sum = sum.wrapping_add(rd(8) ^ rd(16) ^ rd(24));
                n += 1;
            }
            pos += rec;
        }
        tail_w.store(pos, Ordering::Release);
        (n, sum)
    }
}

fn page_size() -> usize {
    perf_event_core::linux::mmap::page_size()
}
