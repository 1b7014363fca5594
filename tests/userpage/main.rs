//! The user-space counter reader against the running kernel: the read(2)
//! fallback of software events on the host, the counter instructions on the
//! lab's aarch64, riscv64 and armhf PMUs, and the instruction cost of a
//! read against libperf's.
//!
//! Kernel-facing: `cargo xtask lab` runs this binary, every module of it,
//! on the host and in each QEMU guest (`TARGETS` in
//! `xtask/src/lab/testbins.rs`). Guests have no source tree and no perf
//! tool: a file that needs either belongs in a host-only area.

#[path = "../support/lab_support.rs"]
mod lab_support;

mod libperf_compare;
mod pmu_user_access;
mod read_cost;
mod userpage_host;
mod userpage_pmu;
