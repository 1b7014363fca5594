//! The oldest supported criterion (0.5) with `PerfMeasurement`. Short
//! mode in `cargo xtask ci`:
//! `cargo bench -p perf-event-criterion --features criterion-0_5 --bench oldest -- --quick --noplot`.

// criterion_group! and criterion_main! define undocumented public functions.
#![allow(missing_docs)]

use criterion_0_5 as criterion;

include!("common/sums.rs");
