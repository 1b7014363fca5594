//! The `cargo xtask ci` steps about the bindings: the vendored files
//! against a regeneration (`bindgen --check`, and proof that it fails on a
//! changed byte), and feature `bindgen` built, linted and tested.

use crate::shell::{self, Result};
use crate::{generate, headers};
use std::path::Path;

/// Where Debian's clang 16 (which `cargo xtask ci` installs) keeps
/// libclang, unless LIBCLANG_PATH says otherwise.
const LIBCLANG: &str = "/usr/lib/llvm-16/lib";

pub(crate) fn bindgen_check() -> Result {
    generate::main(&generate::Args {
        check: true,
        ..Default::default()
    })
}

/// Proves the check can fail: a copy of the vendored x86_64 file with one
/// byte changed must be reported, with the file named.
pub(crate) fn bindgen_check_can_fail() -> Result {
    let root = shell::root();
    let copy = root.join("target/xtask/mutated-sys");
    let _ = std::fs::remove_dir_all(&copy);
    std::fs::create_dir_all(&copy).map_err(|e| e.to_string())?;
    let file = copy.join("x86_64.rs");
    let mut bytes = std::fs::read(root.join("src/sys/x86_64.rs")).map_err(|e| e.to_string())?;
    let at = find(&bytes, b"PERF_ATTR_SIZE_VER9: u32 = 144").ok_or("no VER9 line to mutate")?;
    bytes[at + b"PERF_ATTR_SIZE_VER9: u32 = 14".len()] = b'5';
    std::fs::write(&file, &bytes).map_err(|e| e.to_string())?;
    let args = generate::Args {
        check: true,
        arches: vec!["x86_64".to_owned()],
        against: Some(copy.clone()),
        ..Default::default()
    };
    match generate::main(&args) {
        Err(e) if e.contains("x86_64.rs") => {
            eprintln!("as it must, the check failed: {e}");
            Ok(())
        }
        Err(e) => Err(format!("the check failed without naming x86_64.rs: {e}")),
        Ok(()) => Err("bindgen --check accepted a changed vendored file".to_owned()),
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Feature `bindgen`: build, lint and test the build-time bindings against
/// the pinned header set; the test asserts they equal the vendored ones.
///
/// The feature changes only where `sys` comes from (build.rs writes it into
/// OUT_DIR instead of `src/sys/<arch>.rs` being included). With the pinned
/// headers, the core's unit test `abi::bindgen_layout` proves the generated file
/// byte-identical to the vendored one below its preamble, so the library
/// compiled with the feature is the library the `test` step tested, and
/// running the whole suite again would test the same code twice. What the
/// feature can break on its own is what runs here: the build (build.rs,
/// libclang), clippy on the library with the generated file included, the
/// equality and layout tests, the library's unit tests and the `abi` area
/// (the layout, bindgen's names and bit-field setters, the ioctls, against
/// the kernel). The other tests and the examples see only the library's
/// items, which the equality proves the same: linting them again with the
/// feature would check the same code twice.
pub(crate) fn feature_bindgen() -> Result {
    let set = headers::pinned()?;
    let libclang = std::env::var("LIBCLANG_PATH").unwrap_or_else(|_| LIBCLANG.to_owned());
    let with_env = |cmd: &mut std::process::Command| {
        cmd.env("LIBCLANG_PATH", &libclang)
            .env("PERF_EVENT_INCLUDE_DIR", Path::new(&set.include));
    };
    let mut build = shell::cargo(None);
    build.args(["build", "--features", "bindgen"]);
    with_env(&mut build);
    shell::run(&mut build)?;
    let mut lint = shell::cargo(None);
    lint.args([
        "clippy",
        "--features",
        "bindgen",
        "--lib",
        "--",
        "-D",
        "warnings",
    ]);
    with_env(&mut lint);
    shell::run(&mut lint)?;
    // The core's unit tests (the equality and layout test among them),
    // then the `abi` area (the workspace's tests package, whose feature
    // `bindgen` is the core's).
    let mut unit = shell::cargo(None);
    unit.args([
        "test",
        "-p",
        "perf-event-core",
        "--features",
        "bindgen",
        "--no-fail-fast",
        "--lib",
    ]);
    with_env(&mut unit);
    let mut areas = shell::cargo(None);
    areas.args([
        "test",
        "-p",
        "perf-event-tests",
        "--features",
        "bindgen",
        "--no-fail-fast",
        "--test",
        "abi",
    ]);
    with_env(&mut areas);
    shell::run(&mut unit)?;
    shell::run(&mut areas)
}
