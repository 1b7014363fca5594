//! perf's fallback rules against the running kernel, in every lab guest
//! (those with a PMU, aarch64's, and those without, s390x's): what the
//! fallback reports say for root and an ordinary user at every
//! `perf_event_paranoid` level is what perf 6.1 would have done there.
//!
//! Kernel-facing (`TARGETS` in `xtask/src/lab/testbins.rs`), and a test
//! binary of its own with one test: it changes
//! `kernel.perf_event_paranoid` (and restores it), so no other test of
//! its binary may open events beside it; `cargo test` and the lab run
//! test binaries one after another.

#[path = "../support/kernel_support.rs"]
mod kernel_support;
#[path = "../support/lab_support.rs"]
mod lab_support;
#[path = "../support/paranoid_support.rs"]
mod paranoid_support;
#[path = "../support/seccomp_support.rs"]
mod seccomp_support;

mod fallback_kernel;
