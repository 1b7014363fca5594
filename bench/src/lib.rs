//! The bench crate's library: it carries the C loop built by build.rs (the
//! man page's seqlock reader) for the `bench` binary, and what several
//! bench binaries share ([`storm`], [`spread`], [`perf_file`], [`raw_ring`],
//! [`examples`]). The criterion measurement that used to
//! live here is the published `perf-event-criterion` crate.

pub mod examples;
pub mod perf_file;
pub mod raw_ring;
pub mod spread;
pub mod storm;
