//! The bench crate's library: it carries the C loop built by build.rs (the
//! man page's seqlock reader) for the `bench` binary. The criterion
//! measurement that used to live here is the published
//! `perf-event-criterion` crate.
