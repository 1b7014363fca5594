//! Measuring with a [`Monitor`](perf_event_core::monitor::Monitor) (std):
//! the events harnesses ask for by name, a monitor over a list of threads,
//! and per-iteration statistics.
//!
//! - [`event_counter`]: a [`Counter`](perf_event_core::monitor::Counter)
//!   (the core's named events: instructions, cycles, branch and cache
//!   misses, task-clock, any one attr) from a perf event string.
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

pub use counter::{event_counter, EventCounterError};
pub use threads::PerThread;
