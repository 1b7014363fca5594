//! Benchmark helpers of perf-event-core that other benchmark code can use:
//! [`measurement::PerfMeasurement`], a criterion `Measurement` that counts
//! a perf event with the crate's self-monitoring API.

pub mod measurement;
