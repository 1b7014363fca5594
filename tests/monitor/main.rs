//! The self-monitoring API against the running kernel: the measuring path,
//! the threads a region counts, the system calls a region costs.
//!
//! Kernel-facing: `cargo xtask lab` runs this binary, every module of it,
//! on the host and in each QEMU guest (`TARGETS` in
//! `xtask/src/lab/testbins.rs`). Guests have no source tree and no perf
//! tool: a file that needs either belongs in a host-only area.

#[path = "../support/kernel_support.rs"]
mod kernel_support;
#[path = "../support/lab_support.rs"]
mod lab_support;
#[path = "../support/seccomp_support.rs"]
mod seccomp_support;

mod measure_faults;
mod monitor_kernel;
mod monitor_threads;
mod monitor_unprivileged;
