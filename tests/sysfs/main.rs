//! Discovery against the running machine's sysfs, tracefs and procfs, and
//! events opened from it.
//!
//! Kernel-facing: `cargo xtask lab` runs this binary, every module of it,
//! on the host and in each QEMU guest (`TARGETS` in
//! `xtask/src/lab/testbins.rs`). Guests have no source tree and no perf
//! tool: a file that needs either belongs in a host-only area.

#[path = "../support/attr_want.rs"]
mod attr_want;
#[path = "../support/kernel_support.rs"]
mod kernel_support;
#[path = "../support/lab_support.rs"]
mod lab_support;
#[path = "../support/sysfs_support.rs"]
mod sysfs_support;

mod sysfs_kernel;
// Fixture trees, no kernel: here rather than in `simulated` so that the
// lab's aarch64 guests run the arm64 tables' cases (the package embeds
// the target's tables only).
mod vendor_fixtures;
