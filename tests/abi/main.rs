//! The raw bindings and the attr / open layers against the running kernel:
//! the syscall and every ioctl number, the raw layer as perf-event-open-sys
//! users use it, how each kernel version answers for ABI it does or does not
//! know, minimal attr sizes with explained errors, typed open, no fd leak.
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

mod access_kernel;
mod attr_kernel;
mod fd_leak;
mod kernel_abi;
mod open_kernel;
mod raw_kernel;
mod raw_layer;
