#![allow(dead_code)] // each test binary uses part of it
                     // Shared by the abi-tests integration tests: where clang and the pinned
                     // headers are (set by `cargo xtask abi` / `cargo xtask ci`).

use std::path::PathBuf;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Whether clang and the pinned headers were given (`ABI_TESTS_CLANG`,
/// `ABI_TESTS_HEADERS`, which `cargo xtask abi` and `cargo xtask ci` set).
/// Without them (a plain `cargo test --workspace`) the test cannot run:
/// this prints why on stderr, which libtest does not capture, in the skip
/// report's form (`SKIPPED NAME (needs ...): ...`), and the test returns.
pub fn pinned(test: &str) -> bool {
    let missing: Vec<&str> = ["ABI_TESTS_HEADERS", "ABI_TESTS_CLANG"]
        .into_iter()
        .filter(|var| std::env::var_os(var).is_none())
        .collect();
    if missing.is_empty() {
        return true;
    }
    // Straight to stderr: libtest captures eprintln! of a passing test.
    use std::io::Write;
    let line = format!(
        "SKIPPED {test} (needs the pinned kernel headers and clang): {} not set; \
         `cargo xtask abi` (or `cargo xtask ci`) fetches the headers and runs this with them\n",
        missing.join(" and ")
    );
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    false
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
