//! # perf-event-core
//!
//! Complete bindings to Linux `perf_event_open(2)` and the zero-cost core that
//! every perf library, profiler and benchmark harness needs.
//!
//! The crate is `no_std` and allocation-free unless feature `std` (on by
//! default) is enabled.
//!
//! ## Modules
//!
//! - [`sys`]: the kernel's perf ABI as bindgen generates it from the UAPI
//!   headers, vendored per architecture (or generated at build time with
//!   feature `bindgen`).
//! - [`abi`]: hand-written ABI facts that everything else relies on, checked
//!   at compile time.
//! - [`userpage`]: lock-free reads of a counter through its mmap'ed
//!   `perf_event_mmap_page` (the seqlock protocol, `rdpmc` / `mrs` / `csrr`,
//!   time extrapolation and scaling), falling back to `read(2)`.

#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs, unsafe_op_in_unsafe_fn)]

pub mod abi;
pub mod sys;
pub mod userpage;
