//! The newest supported criterion (0.8) with `PerfMeasurement`. Short
//! mode in `cargo xtask ci`:
//! `cargo bench -p perf-event-criterion --features criterion-0_8 --bench newest -- --quick --noplot`.

// criterion_group! and criterion_main! define undocumented public functions.
#![allow(missing_docs)]

use criterion_0_8 as criterion;

include!("common/sums.rs");
