//! # perf-event-host
//!
//! perf on this machine, on top of [`perf_event_core`]: what the machine
//! has, perf's event syntax, and counting and sampling over many CPUs and
//! threads at once, as `perf stat` and `perf record` do. Everything here
//! needs `std` (it allocates, reads sysfs and procfs, and starts
//! processes); the kernel ABI, the attr builder, the fd, the user-space
//! counter reads and the ring buffer are the core's, re-exported by none
//! of these modules.
//!
//! - [`features`]: which flags and attr size the running kernel accepts,
//!   found by opening cheap events.
//! - [`sysfs`]: PMUs, format bit ranges, event aliases, tracefs ids,
//!   kprobe / uprobe events, system limits.
//! - [`parse`]: perf-style event strings to attrs and groups.
//! - [`set`]: event sets: groups on every CPU, every thread of a running
//!   process and every core type, one fd table, read together and
//!   aggregated.
//! - [`ringset`]: many rings read as one: one epoll wait (POLLHUP when a
//!   target exits), records identified by sample id, a time-ordered merge
//!   holding records in their rings, loss accounting per ring and event.
//! - [`workload`]: a command held before `exec`, released when the
//!   counters are ready, its exit waking the waiter (pidfd) with no
//!   polling period.
//! - [`control`]: perf's control protocol (`--control fd:|fifo:`) at
//!   both ends: a client that drives perf or our tools around a region,
//!   the measured program's region markers, and the tool's server.
//! - [`measure`]: named counters, a monitor over a list of threads, and
//!   the harness-agnostic measuring API over the core's
//!   [`Monitor`](perf_event_core::monitor::Monitor).
//!
//! The `stat` example is a `perf stat` built on these modules, with
//! perf's `--control` protocol
//! (`cargo run --release -p perf-event-host --example stat -- ls -l /`);
//! `counted_region` is a benchmark whose region alone an external `perf
//! stat` counts. perf.data in and out is the `perf-data-file` package.
#![deny(unsafe_code)]
// The other lints (missing_docs, the clippy set): the `[lints]` table of
// Cargo.toml, denied for every target of the crate.

pub mod control;
pub mod features;
pub mod measure;
pub mod parse;
pub mod ringset;
pub mod set;
pub mod sysfs;
#[cfg(feature = "vendor")]
pub mod vendor;
pub mod workload;
