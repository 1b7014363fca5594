//! Tests that read the repository: the vendored `src/sys` files, the
//! build-time bindings (feature `bindgen`) against them, the fuzz corpora and
//! regressions.
//!
//! Host-only (`HOST_AREAS` in `xtask/src/lab/testbins.rs`): the lab does
//! not run it in its guests.

mod bindgen_layout;
mod fuzz_corpus;
mod fuzz_regressions;
mod layers;
mod vendored;
