//! Measuring with a [`Monitor`](perf_event_core::monitor::Monitor) (std):
//! the events harnesses ask for by name, a monitor over a list of threads,
//! and per-iteration statistics.
//!
//! - [`Counter`]: instructions, cycles, branch and cache misses,
//!   task-clock or any perf event string, opened as a monitor group, with
//!   errors that say which software event works where a hardware one is
//!   missing (a VM without a PMU, `perf_event_paranoid`).
//! - [`PerThread`]: the same group opened on each thread of a given list
//!   of thread ids (`perf stat -t`); a read sums one group read per
//!   thread.
//! - [`stats`]: the harness-agnostic measuring API: a closure run many
//!   times around a monitor region, with per-iteration statistics for every
//!   counter (divan, `harness = false` benches, test suites; the criterion
//!   adapter is the `perf-event-criterion` crate).

// The errors are the core's `MonitorError` (an open's full explanation,
// 128 bytes and more), returned as the core's own monitor returns it.
// Clippy weighs a foreign error type here and not in its own crate.
#![allow(clippy::result_large_err)]

mod counter;
pub mod stats;
mod threads;

pub use counter::{Counter, CounterError, CounterErrorKind};
pub use threads::PerThread;
