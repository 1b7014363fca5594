//! Lock-free user-space counter reads through the event's mmap'ed
//! `perf_event_mmap_page` (perf_event_open(2), "MMAP layout" and
//! `cap_user_rdpmc`), with `read(2)` as the fallback.
//!
//! ```no_run
//! # #[cfg(feature = "std")] fn demo(fd: &perf_event_core::fd::EventFd) -> Result<(), Box<dyn std::error::Error>> {
//! use perf_event_core::userpage::{CounterReader, EventTarget, UserPage};
//! // fd: opened with pid 0, cpu -1, read_format TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING.
//! let target = EventTarget::as_opened(0, -1); // on the thread that opened it
//! let reader = CounterReader::new(UserPage::map(fd)?, fd, target);
//! let reading = reader.read()?;
//! println!("{} ({:?}), scaled {:?}", reading.counts.value, reading.path, reading.counts.scaled());
//! # Ok(()) }
//! ```
//!
//! # The protocol
//!
//! [`snapshot::read`]: `lock` with an Acquire load; the fields with relaxed
//! atomic loads (never references into the page); the counter instruction
//! only when `cap_user_rdpmc` is set and `index != 0`; `fence(Acquire)` and
//! a second load of `lock`; start over when it changed. The kernel side is
//! `perf_event_update_userpage` (`++lock; fields; ++lock`); [`sim`] has a
//! writer that does the same for tests.
//!
//! [`CounterReader::read`] decides on every call: `cap_user_rdpmc == 0`
//! means the instruction may never run, `index == 0` means not now; in both
//! cases, and for every event that does not monitor the calling thread
//! ([`EventTarget`]: pid 0 or the own tid, cpu -1), it reads the fd with
//! `read(2)` ([`CounterFd`]).
//!
//! # The instructions
//!
//! x86 / x86_64 `rdpmc` (ECX = `index - 1`, fixed counters with bit 30),
//! aarch64 `mrs PMEVCNTR<n>_EL0` (index 1..=31) and `PMCCNTR_EL0` (index
//! 32), riscv64 `csrr 0xC00 + index - 1`; timestamps with `rdtsc`,
//! `CNTVCT_EL0`, `rdtime`. Other architectures compile the same code and
//! always read through the fd ([`HAS_COUNTER_INSTRUCTION`]).
//!
//! # Arithmetic ([`time`])
//!
//! The count is `offset + sign_extend(pmc, pmc_width)` with wrapping `u64`
//! arithmetic. With `cap_user_time` the times are brought forward to the
//! snapshot's timestamp: `delta = time_offset + (cycles * time_mult) >>
//! time_shift` (the 96-bit product in `u128`; with `cap_user_time_short`
//! the cycles are first `time_cycles + ((cycles - time_cycles) &
//! time_mask)`); `enabled += delta`, and `running += delta` only when
//! `index != 0`. Scaling is `count * enabled / running` in `u128`, and no
//! estimate when `running == 0`.
//!
//! # The rdpmc_jump case: a transient of `-2^pmc_width`
//!
//! The kernel stores `offset = count - prev_count`. After it has *read* the
//! hardware counter (`PERF_EVENT_IOC_RESET` reads it and then updates the
//! page; a `read(2)` reads it, and a later page update such as a new
//! `mmap` uses that value), `prev_count` holds the raw register value,
//! which is **not** sign-extended (x86 `x86_perf_event_update`, arm
//! `armpmu_event_update`); after the counter is reprogrammed (overflow
//! interrupt, context switch in) it holds the sign-extended `-period`. A
//! user-space reader sign-extends the counter, as it must; so between a
//! RESET (or a `read(2)` followed by a page update) and the next
//! reprogramming, while the raw counter's top bit (`pmc_width - 1`) is set,
//! `offset + sign_extend(pmc)` is exactly `2^pmc_width` too small. Readers
//! that do not sign-extend see the mirror image, `+2^pmc_width`, after
//! reprogramming (deater/perf_event_tests' `rdpmc_jump`).
//!
//! What this reader does: a count is never negative, so a sum whose top
//! bit is set is moved up by `2^pmc_width`
//! ([`time::correct_negative_count`]) and the reading says so
//! (`ReadPath::Counter { wrap_corrected: true, .. }`). That repairs the
//! transient whenever the true count is below `2^pmc_width`, which covers
//! the usual "RESET, run, read" pattern. Once the count since the RESET
//! has itself reached `2^pmc_width` (2^48 events on x86; 2^32 with 32-bit
//! arm64 counters) the wrong sum is non-negative and cannot be told from a
//! real count: the reader returns it as the page defines it. The
//! difference of two reads with no page update between them is exact
//! either way (the error cancels), and the transient ends at the next
//! reprogramming of the counter.
//!
//! # Contents
//!
//! - [`PageSource`] (the loads) and [`PagePtr`] (a page in memory).
//! - [`snapshot`]: the seqlock loop and [`snapshot::Snapshot`].
//! - [`time`]: sign extension, time conversion, extrapolation, scaling.
//! - [`CounterFd`] (implemented by the owned `EventFd`) and
//!   [`RawCounterFd`]: the `read(2)` path.
//! - [`UserPage`], mapping the page.
//! - [`CounterReader`], [`EventTarget`], [`CounterReading`]: the reader.
//! - [`sim`]: [`sim::SimPage`], the simulated page and kernel-protocol
//!   writer (where the target has 64-bit atomics).

mod arch;
mod fallback;
mod mapping;
mod reader;
#[cfg(any(loom, target_has_atomic = "64"))]
pub mod sim;
pub mod snapshot;
mod source;
mod sync;
pub mod time;

pub use arch::aarch64::{register_for_index as aarch64_register_for_index, PMEVCNTR};
pub use arch::riscv64::{csr_for_index as riscv64_csr_for_index, COUNTER_CSR};
pub use arch::HAS_COUNTER_INSTRUCTION;
pub use fallback::{CounterFd, RawCounterFd, REQUIRED_READ_FORMAT};
pub use mapping::{MapError, UserPage};
pub use reader::{CounterReader, CounterReading, EventTarget, FallbackReason, ReadPath};
pub use source::{PagePtr, PageSource};
