//! The ioctls of an open event and the read(2) formats against the running
//! kernel.
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

mod ioctl_kernel;
mod read_format_kernel;
