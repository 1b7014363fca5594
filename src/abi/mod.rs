//! Hand-written facts about the perf ABI that the rest of the crate relies on.
//!
//! [`layout`] pins the offsets and sizes that user-space readers of the mmap
//! page and the ring buffer depend on, and the syscall number, as
//! compile-time assertions evaluated for every target the crate is built for.

pub mod layout;
