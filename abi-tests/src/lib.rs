//! ABI proof for perf-event-core: what the Rust side says, checked against
//! what the C compiler says about the real headers.
