//! perf-event-tests has no library of its own: the package is its test
//! areas (`*/main.rs`, declared in Cargo.toml), which share the helpers in
//! `support/` by path.
