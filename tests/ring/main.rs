//! One ring and ring sets against the running kernel (wrap, overrun, loss,
//! the time-ordered merge, overload), and records captured on a big-endian
//! guest parsed here.
//!
//! Kernel-facing: `cargo xtask lab` runs this binary, every module of it,
//! on the host and in each QEMU guest (`TARGETS` in
//! `xtask/src/lab/testbins.rs`). Guests have no source tree and no perf
//! tool: a file that needs either belongs in a host-only area.

#[path = "../support/kernel_support.rs"]
mod kernel_support;
#[path = "../support/lab_support.rs"]
mod lab_support;
#[path = "../support/ringset_support.rs"]
mod ringset_support;
#[path = "../support/seccomp_support.rs"]
mod seccomp_support;
#[path = "../support/set_support.rs"]
mod set_support;

mod foreign_records;
mod ring_kernel;
mod ring_mlock;
mod ringset_kernel;
mod ringset_overload;
mod ringset_spans;
