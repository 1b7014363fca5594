//! No kernel involved: fixture sysfs trees of machines this one is not
//! (PMU discovery, event strings, perf's own parser cases, event sets), and
//! the user-page arithmetic and seqlock reader against a simulated page.
//!
//! Host-only (`HOST_AREAS` in `xtask/src/lab/testbins.rs`): the lab does
//! not run it in its guests.

#[path = "../support/attr_want.rs"]
mod attr_want;
#[path = "../support/lab_support.rs"]
mod lab_support;
#[path = "../support/sysfs_support.rs"]
mod sysfs_support;

mod event_strings;
mod metric_literals;
mod perf_parse_events;
mod set_fixtures;
mod sysfs_fixtures;
mod userpage_arith;
mod userpage_stress;
