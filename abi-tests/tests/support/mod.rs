#![allow(dead_code)] // each test binary uses part of it
                     // Shared by the abi-tests integration tests: where clang and the pinned
                     // headers are (set by `cargo xtask abi` / `cargo xtask ci`).

use std::path::PathBuf;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The pinned header tree (`.../usr/include`), from `ABI_TESTS_HEADERS`.
pub fn headers() -> PathBuf {
    std::env::var_os("ABI_TESTS_HEADERS")
        .map(PathBuf::from)
        .expect(
            "ABI_TESTS_HEADERS is not set: these tests compile C against the pinned kernel \
         headers; run them with `cargo xtask abi` (or `cargo xtask ci`), which fetches \
         the headers and sets it",
        )
}

/// The clang binary, from `ABI_TESTS_CLANG`.
pub fn clang() -> PathBuf {
    std::env::var_os("ABI_TESTS_CLANG")
        .map(PathBuf::from)
        .expect("ABI_TESTS_CLANG is not set: run these tests with `cargo xtask abi`")
}

/// The include directories of an architecture in the pinned tree.
pub fn include_dirs(multiarch: &str) -> Vec<PathBuf> {
    let root = headers();
    vec![root.join(multiarch), root]
}
