//! The seqlock read of the page: one consistent [`Snapshot`].
//!
//! The kernel updates the page with `++lock; barrier(); fields...;
//! barrier(); ++lock` (`perf_event_update_userpage`, on the CPU the event
//! runs on, so a thread reading its own event sees the lock change around
//! any update that interrupted it). The reader:
//!
//! 1. loads `lock` with `Acquire` (an odd value, an update in progress that
//!    only a reader on another CPU can see, makes the section fail);
//! 2. loads the fields with relaxed atomic loads, and runs the counter
//!    instruction when allowed, `cap_user_rdpmc` is set and `index != 0`,
//!    and the timestamp instruction when `cap_user_time` is set;
//! 3. `fence(Acquire)`, then loads `lock` again (relaxed);
//! 4. returns the snapshot if the lock did not change, else starts over.
//!
//! Step 3 is a real fence, not a compiler barrier: on weakly ordered CPUs
//! (arm64, riscv, POWER) the relaxed field loads could otherwise complete
//! after the second lock load and see a later update than the lock says.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::source::PageSource;
use super::sync::{fence, spin_loop, Ordering};
use super::time::{self, TimeConversion};
use crate::abi::bitfield::mmap_caps;
use crate::read_format::Counts;

/// How many times [`read`] starts over before giving up with
/// [`Unstable`]. The kernel never updates one page continuously, so a
/// thread reading its own event needs at most a few tries; the bound only
/// keeps a reader of a page that something keeps rewriting (or whose lock
/// stays odd) from spinning forever.
pub const MAX_ATTEMPTS: u32 = 1 << 16;

/// A consistent copy of the page's read-side fields, taken between two
/// equal even values of `lock`, with the counter and timestamp readings
/// taken inside the same section.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// The (even) `lock` value the section was read under.
    pub seq: u32,
    /// `index`: 0 when the event is not on a hardware counter now (or has
    /// none: software events); else the counter plus one.
    pub index: u32,
    /// `offset`: count minus the counter's value at the page's update.
    pub offset: i64,
    /// `time_enabled` as of the page's update (ns).
    pub time_enabled: u64,
    /// `time_running` as of the page's update (ns).
    pub time_running: u64,
    /// The raw `capabilities` word (decode with [`crate::abi::bitfield::mmap_caps`]).
    pub capabilities: u64,
    /// `pmc_width`, read when the counter was read (else 0).
    pub pmc_width: u16,
    /// `time_shift`, read when `cap_user_time` is set (else 0).
    pub time_shift: u16,
    /// `time_mult`, read when `cap_user_time` is set (else 0).
    pub time_mult: u32,
    /// `time_offset`, read when `cap_user_time` is set (else 0).
    pub time_offset: u64,
    /// `time_cycles`, read when `cap_user_time_short` is set (else 0).
    pub time_cycles: u64,
    /// `time_mask`, read when `cap_user_time_short` is set (else 0).
    pub time_mask: u64,
    /// The counter instruction's raw value, when it was run.
    pub pmc: Option<u64>,
    /// The timestamp instruction's value, when `cap_user_time` was set and
    /// the architecture has one.
    pub timestamp: Option<u64>,
}

/// The seqlock kept changing for [`MAX_ATTEMPTS`] tries (or stayed odd).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unstable {
    /// The tries made.
    pub attempts: u32,
}

impl core::fmt::Display for Unstable {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "the perf_event_mmap_page lock changed (or stayed odd) on each of {} tries: \
             something keeps rewriting the page; read the counter with read(2) instead",
            self.attempts
        )
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Unstable {}

/// Takes a [`Snapshot`] of `page` under its seqlock.
///
/// `may_use_counter` says whether the counter instruction may run at all:
/// true only for an event that monitors the calling thread (see
/// [`super::EventTarget`]); the page's `cap_user_rdpmc` and `index` then
/// decide each time.
///
/// # Safety
///
/// With `may_use_counter == true` on a real page, the event must monitor
/// the calling thread (pid 0 or its tid, cpu -1): the instruction faults on
/// counters the kernel did not open to this thread.
#[inline(always)]
pub unsafe fn read<S: PageSource + ?Sized>(
    page: &S,
    may_use_counter: bool,
) -> Result<Snapshot, Unstable> {
    let mut snapshot = Snapshot::default();
    // SAFETY: the caller's contract is read_into's.
    unsafe { read_into(page, may_use_counter, &mut snapshot) }.map(|()| snapshot)
}

/// [`read`] into `out`: each field is stored as it is loaded, so nothing
/// is held in registers across the section. On `Err`, `out` holds the
/// last, torn, attempt and must not be used.
///
/// # Safety
///
/// As for [`read`].
#[inline(always)]
pub unsafe fn read_into<S: PageSource + ?Sized>(
    page: &S,
    may_use_counter: bool,
    out: &mut Snapshot,
) -> Result<(), Unstable> {
    const RDPMC_BIT: u64 = mmap_caps::CAP_USER_RDPMC.mask();
    const TIME_BIT: u64 = mmap_caps::CAP_USER_TIME.mask();
    const SHORT_BIT: u64 = mmap_caps::CAP_USER_TIME_SHORT.mask();
    let mut attempts = 0;
    while attempts < MAX_ATTEMPTS {
        attempts += 1;
        // An odd lock (an update in progress, visible to a reader on another
        // CPU) becomes the even value before it, which the lock never
        // shows again (it only grows, and wraps after 2^31 updates): the
        // closing check then fails and the section is read again.
        let seq = page.load_lock(Ordering::Acquire) & !1;
        let capabilities = page.load_capabilities();
        let index = page.load_index();
        out.capabilities = capabilities;
        out.index = index;
        out.offset = page.load_offset();
        out.time_enabled = page.load_time_enabled();
        out.time_running = page.load_time_running();
        out.pmc = None;
        out.pmc_width = 0;
        if may_use_counter && capabilities & RDPMC_BIT != 0 && index != 0 {
            out.pmc_width = page.load_pmc_width();
            // SAFETY: this section showed cap_user_rdpmc and a nonzero
            // index, and the caller vouched that the event monitors this
            // thread.
            out.pmc = unsafe { page.read_counter(index) };
        }
        out.time_cycles = 0;
        out.time_mask = 0;
        if capabilities & TIME_BIT != 0 {
            if capabilities & SHORT_BIT != 0 {
                out.time_cycles = page.load_time_cycles();
                out.time_mask = page.load_time_mask();
            }
            out.time_shift = page.load_time_shift();
            out.time_mult = page.load_time_mult();
            out.time_offset = page.load_time_offset();
            // SAFETY: this section showed cap_user_time.
            out.timestamp = unsafe { page.read_timestamp() };
        } else {
            out.time_shift = 0;
            out.time_mult = 0;
            out.time_offset = 0;
            out.timestamp = None;
        }
        fence(Ordering::Acquire);
        if page.load_lock(Ordering::Relaxed) == seq {
            out.seq = seq;
            return Ok(());
        }
        spin_loop();
    }
    Err(Unstable { attempts })
}

impl Snapshot {
    /// `cap_user_rdpmc` of this snapshot.
    #[inline]
    pub const fn cap_user_rdpmc(&self) -> bool {
        self.capabilities & mmap_caps::CAP_USER_RDPMC.mask() != 0
    }

    /// `cap_user_time` of this snapshot.
    #[inline]
    pub const fn cap_user_time(&self) -> bool {
        self.capabilities & mmap_caps::CAP_USER_TIME.mask() != 0
    }

    /// `cap_user_time_short` of this snapshot.
    #[inline]
    pub const fn cap_user_time_short(&self) -> bool {
        self.capabilities & mmap_caps::CAP_USER_TIME_SHORT.mask() != 0
    }

    /// The time conversion, when `cap_user_time` was set.
    #[inline]
    pub const fn time(&self) -> Option<TimeConversion> {
        if !self.cap_user_time() {
            return None;
        }
        Some(TimeConversion {
            time_shift: self.time_shift,
            time_mult: self.time_mult,
            time_offset: self.time_offset,
            short: if self.cap_user_time_short() {
                Some((self.time_cycles, self.time_mask))
            } else {
                None
            },
        })
    }

    /// The event count, when the counter instruction ran: `offset` plus the
    /// counter sign-extended by `pmc_width`, wrapping; a negative sum (the
    /// `-2^pmc_width` transient, see [`time::correct_negative_count`]) is
    /// corrected. Returns the count and whether it was corrected.
    #[inline]
    pub const fn count(&self) -> Option<(u64, bool)> {
        match self.pmc {
            Some(raw) => {
                let value = time::counter_value(self.offset, raw, self.pmc_width);
                Some(time::correct_negative_count(value, self.pmc_width))
            }
            None => None,
        }
    }

    /// `value` with this snapshot's enabled and running times, brought
    /// forward to the snapshot's timestamp when the page allows it
    /// ([`Snapshot::times_extrapolated`]; running only while `index != 0`),
    /// else the page's times as of its last update (the kernel writes
    /// `time_enabled` / `time_running` into the page since Linux 2.6.32).
    #[inline]
    pub const fn counts(&self, value: u64) -> Counts {
        self.counts_extrapolated(value).0
    }

    /// [`Snapshot::counts`] and [`Snapshot::times_extrapolated`] in one
    /// pass (the reader's path records both).
    #[inline(always)]
    pub(crate) const fn counts_extrapolated(&self, value: u64) -> (Counts, bool) {
        match (self.time(), self.timestamp) {
            (Some(conversion), Some(cycles)) => {
                let delta = conversion.delta_ns(cycles);
                let (enabled, running) =
                    time::extrapolate(self.time_enabled, self.time_running, self.index, delta);
                (Counts::with_times(value, enabled, running), true)
            }
            _ => (
                Counts::with_times(value, self.time_enabled, self.time_running),
                false,
            ),
        }
    }

    /// Whether [`Snapshot::counts`] brings the times forward to the
    /// snapshot's timestamp (`cap_user_time`, which the kernel sets since
    /// Linux 3.12, and a timestamp instruction); false when they are the
    /// page's values as of its last update.
    #[inline]
    pub const fn times_extrapolated(&self) -> bool {
        self.cap_user_time() && self.timestamp.is_some()
    }
}
