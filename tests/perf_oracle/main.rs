//! This crate against the perf tool on the same machine: `perf stat`,
//! `perf record` / `report` / `script`, perf's event parser, and the stat
//! and sample examples (built with cargo) against perf's output.
//!
//! Host-only (`HOST_AREAS` in `xtask/src/lab/testbins.rs`): the lab does
//! not run it in its guests. Needs the perf tool (Debian `linux-perf`) and
//! cargo; without perf its tests say "skipped".

#[path = "../support/control_support.rs"]
mod control_support;
#[path = "../support/lab_support.rs"]
mod lab_support;
#[path = "../support/seccomp_support.rs"]
mod seccomp_support;
#[path = "../support/set_support.rs"]
mod set_support;
#[path = "../support/stat_support.rs"]
mod stat_support;
#[path = "../support/sysfs_support.rs"]
mod sysfs_support;

/// Held by every test of this binary that keeps a CPU busy or measures a
/// time window against perf (sample's hot loops; stat's tests compare no
/// timing since issue 37): one at a time, so that on 2 CPUs they do not add
/// to each other's noise while libtest runs the rest in parallel.
pub fn one_busy_test_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static BUSY: std::sync::Mutex<()> = std::sync::Mutex::new(());
    BUSY.lock().unwrap_or_else(|e| e.into_inner())
}

mod access_vs_perf;
mod control_bytes_vs_perf;
mod control_client_vs_perf;
mod parse_vs_perf;
mod perf_compare;
mod perf_data_fields;
mod perf_data_layouts;
mod perf_data_perfs_files;
mod perf_data_printed;
mod perf_data_side_band;
mod perf_data_support;
mod perf_data_vs_perf;
mod sample_callchains;
mod sample_cli;
mod sample_control_vs_perf;
mod sample_example;
mod sample_support;
mod sample_system_wide;
mod stat_control_vs_perf;
mod stat_example;
mod stat_metrics_vs_perf;
mod stat_options_vs_perf;
mod stat_set_control_vs_perf;
mod stat_set_example;
mod stat_vs_perf;
mod stat_windows_vs_perf;
mod vendor_metrics_vs_perf;
mod vendor_vs_perf;
