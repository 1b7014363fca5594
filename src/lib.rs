//! # perf-event-core
//!
//! Complete bindings to Linux `perf_event_open(2)` and the zero-cost core that
//! every perf library, profiler and benchmark harness needs.
//!
//! The crate allocates nothing, and is `no_std` unless feature `std` (on
//! by default) adds std's trait impls.
//!
//! ## Where `unsafe` lives
//!
//! The crate root is `#![deny(unsafe_code)]`. `unsafe` is allowed file by
//! file (`#![allow(unsafe_code)]` at the top of each file that needs it),
//! and only in files of four modules, each for one reason:
//!
//! - [`linux`]: the OS boundary, the only caller of the C library
//!   (`perf_event_open`, ioctls, read, mmap/munmap, poll, prctl, uname,
//!   getrlimit, sysconf, errno), and the raw structs' union members.
//! - [`sys`]: bindgen's generated bit-field accessors (never edited by hand).
//! - [`userpage`]: the counter instructions (`rdpmc`, `mrs`, `csrr`) and the
//!   seqlock reader of the kernel-shared `perf_event_mmap_page`.
//! - [`ring`]: the reader of the kernel-shared ring buffer and AUX area.
//!
//! Everything else is safe code on top of these.
//!
//! ## Modules
//!
//! - [`linux`]: the raw layer: the syscall, one function per ioctl, prctl,
//!   and the plain OS calls, exactly as the kernel defines them.
//! - [`migration`]: moving from perf-event-open-sys / perf-event-open-sys2,
//!   item by item, and from perf-event2, with compiled examples.
//! - [`sys`]: the kernel's perf ABI as bindgen generates it from the UAPI
//!   headers, vendored per architecture (or generated at build time with
//!   feature `bindgen`).
//! - [`abi`]: hand-written ABI facts that everything else relies on, checked
//!   at compile time.
//! - [`event`]: typed event sources (hardware, cache, software, raw,
//!   tracepoint, breakpoint, dynamic PMU).
//! - [`attr`]: the `const fn` attr builder, minimal `attr.size`, the kernel
//!   version each feature needs, validation and E2BIG/EINVAL diagnosis.
//! - [`open`], [`fd`], [`read_format`]: the syscall with explained errors,
//!   the owned fd with every ioctl, and the exact-size read codec with scaling.
//! - [`fallback`]: perf's fallbacks in one place (a `:P` event's precision,
//!   cycles -> cpu-clock without a PMU, `:u` under `perf_event_paranoid`,
//!   flags an old kernel lacks), each one taken returned as a value; used
//!   by `monitor` and by perf-event-host's event sets.
//! - [`ring`], [`record`]: the mmap ring buffer (wrap-safe, zero-copy,
//!   overwrite snapshots, AUX area) and every PERF_RECORD type.
//! - [`monitor`]: self-monitoring for harnesses: a group kept enabled and
//!   read around a region (counter instruction, or one PERF_FORMAT_GROUP
//!   `read(2)`), on this thread or its new threads (inherit); named
//!   counters, thread lists and statistics over it are perf-event-host's
//!   `measure` (the criterion adapter is the `perf-event-criterion`
//!   crate).
//! - [`userpage`]: lock-free reads of a counter through its mmap'ed
//!   `perf_event_mmap_page` (the seqlock protocol, `rdpmc` / `mrs` / `csrr`,
//!   time extrapolation and scaling), falling back to `read(2)`.
//!
//! The std-only layers built on this crate are their own packages:
//! `perf-event-host` (sysfs discovery, perf's event strings, event and ring
//! sets, the workload launcher, a counter from an event string and measuring statistics,
//! the `stat` example) and `perf-data-file` (perf.data in and out, the
//! `sample` example).
//!
//! ## Features
//!
//! - `std` (default): std trait impls only (`Error`, `AsFd`, conversions
//!   to `std::io::Error` and `OwnedFd`); every module is there without it.
//!   Without it the crate is `#![no_std]`; with or without it, it
//!   allocates nothing.
//! - `bindgen`: generate [`sys`] at build time from the installed kernel
//!   headers instead of using the vendored bindings (needs libclang).
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(unsafe_code)]
// The other lints (missing_docs, unsafe_op_in_unsafe_fn, the clippy set):
// the `[lints]` table of Cargo.toml, denied for every target of the crate.

pub mod abi;
pub mod attr;
pub mod byte_order;
pub mod event;
pub mod fallback;
pub mod fd;
pub mod linux;
pub mod migration;
pub mod monitor;
pub mod open;
pub mod read_format;
pub mod record;
pub mod ring;
pub mod sys;
pub mod userpage;

/// The README's examples, compiled and run as doctests (`cargo test --doc`).
#[cfg(all(doctest, feature = "std"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
