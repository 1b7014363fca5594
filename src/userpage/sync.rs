//! The atomics the seqlock protocol uses, in one place so the loom model
//! swaps them (crossbeam-utils `primitive` style).
//!
//! A normal build uses `core`. With `RUSTFLAGS='--cfg loom'` (only the CI
//! step that runs `tests/userpage_loom.rs`) the fence, the spin hint and the
//! atomics of the simulated page come from loom, which then explores every
//! interleaving and every value the memory model lets a relaxed load see.
//! Loads of a real mapped page ([`super::PagePtr`]) always use `core`
//! atomics: in a loom build that page is not used.

#[cfg(not(loom))]
pub(crate) use core::hint::spin_loop;
#[cfg(not(loom))]
pub(crate) use core::sync::atomic::fence;
/// The simulated page's counter and clock (it exists only where the target
/// has 64-bit atomics).
#[cfg(all(not(loom), target_has_atomic = "64"))]
pub(crate) use core::sync::atomic::AtomicU64;

#[cfg(loom)]
pub(crate) use loom::hint::spin_loop;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU32, AtomicU64};

pub(crate) use core::sync::atomic::Ordering;
