//! The tools as an ordinary user and under every `perf_event_paranoid`
//! level, against perf 6.1 itself (perf's fallbacks: `:u`, cycles ->
//! cpu-clock, `:P`).
//!
//! Host-only (`HOST_AREAS` in `xtask/src/lab/testbins.rs`), and a test
//! binary of its own: it changes `kernel.perf_event_paranoid` (and
//! restores it), so it must not run beside tests that open events. Under
//! `cargo test` the test binaries run one after another, and its one test
//! holds every cell. Needs root (to set the sysctl and drop to uid 65534
//! with `setpriv`), perf and cargo; without them it says "skipped".

#[path = "../support/lab_support.rs"]
mod lab_support;
#[path = "../support/paranoid_support.rs"]
mod paranoid_support;
#[path = "../support/stat_support.rs"]
mod stat_support;

mod fallback_matrix;
