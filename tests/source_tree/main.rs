//! Tests that read the repository: the vendored `src/sys` files, the fuzz
//! corpora and regressions, the layers, the tests' early returns against
//! the skip report, and the length of the examples' functions. (The
//! build-time bindings against the vendored ones, feature `bindgen`, are a
//! unit test of the core: `src/abi/bindgen_layout.rs`.)
//!
//! Host-only (`HOST_AREAS` in `xtask/src/lab/testbins.rs`): the lab does
//! not run it in its guests.

mod example_size;
mod fuzz_corpus;
mod fuzz_regressions;
mod layers;
mod rust_source;
mod skip_report;
mod vendored;

/// The workspace's root (this package is its `tests/` directory).
fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is a directory of the workspace")
        .to_path_buf()
}
