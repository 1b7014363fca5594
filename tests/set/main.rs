//! Event sets against the running kernel: per CPU, attached to running
//! processes, thread churn, the fd budget.
//!
//! Kernel-facing: `cargo xtask lab` runs this binary, every module of it,
//! on the host and in each QEMU guest (`TARGETS` in
//! `xtask/src/lab/testbins.rs`). Guests have no source tree and no perf
//! tool: a file that needs either belongs in a host-only area.

#[path = "../support/kernel_support.rs"]
mod kernel_support;
#[path = "../support/lab_support.rs"]
mod lab_support;
#[path = "../support/set_support.rs"]
mod set_support;

mod set_kernel;
mod set_read_format;
mod vendor_events;
mod workload_instructions;
mod workload_kernel;
