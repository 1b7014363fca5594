//! `cargo xtask fuzz [SECONDS]`: each cargo-fuzz target of `fuzz/` (record
//! and read_format parsers with their decoders, sysfs format specs, event
//! strings, tracefs `format` files with raw-payload decoding) for a
//! bounded time (default 10 s) on the checked-in corpus. New corpus
//! entries go to `target/fuzz-corpus/<target>` and crash inputs to
//! `target/fuzz-artifacts/<target>/`, so the tree stays clean; a crash
//! fails the task with the input's path and the command that reproduces it.
//! Installs the nightly toolchain and cargo-fuzz when they are missing.

use crate::shell::{self, Result};
use std::process::Command;

/// The targets in `fuzz/fuzz_targets/`.
const TARGETS: &[&str] = &[
    "record_parse",
    "read_format_parse",
    "format_spec",
    "event_string",
    "trace_format",
    "ringset_merge",
    "perf_data_read",
    "metric_expr",
];

/// The per-target time `cargo xtask ci` gives.
pub const CI_SECONDS: u32 = 10;

/// The nightly toolchain and cargo-fuzz, installed when missing.
pub fn ensure_tools() -> Result {
    if shell::output(Command::new("rustup").args(["run", "nightly", "rustc", "--version"])).is_err()
    {
        shell::step("installing the nightly toolchain (cargo-fuzz needs it)");
        shell::run(Command::new("rustup").args([
            "toolchain",
            "install",
            "nightly",
            "--profile",
            "minimal",
        ]))?;
    }
    if shell::output(shell::cargo(Some("nightly")).args(["fuzz", "--version"])).is_err() {
        shell::step("installing cargo-fuzz");
        // Unoptimized (the release profile's other settings kept): it only
        // starts cargo, while optimizing its dependencies takes minutes of
        // a fresh machine's CI.
        shell::run(shell::cargo(Some("stable")).args([
            "install",
            "cargo-fuzz",
            "--locked",
            "--config",
            "profile.release.opt-level=0",
        ]))?;
    }
    Ok(())
}

/// LLVM's own libFuzzer, as Debian's clang 16 runtime package
/// (`libclang-rt-16-dev`, which `cargo xtask ci` installs) ships it.
const CLANG_LIBFUZZER: &str = "/usr/lib/llvm-16/lib/clang/16/lib/linux/libclang_rt.fuzzer-x86_64.a";

/// The libFuzzer the targets link: clang's prebuilt one where it is
/// installed (libfuzzer-sys's `CUSTOM_LIBFUZZER_PATH`), which spares the
/// build of libfuzzer-sys's own C++ copy (46 of the fuzz build's CPU-s);
/// else that copy, and a line that says so. The same engine either way
/// (libfuzzer-sys vendors LLVM's sources): the targets' sanitizer-coverage
/// hooks are the compiler's, not the library's.
fn prebuilt_libfuzzer() -> Option<&'static str> {
    if std::env::var_os("CUSTOM_LIBFUZZER_PATH").is_some() {
        return None;
    }
    if cfg!(target_arch = "x86_64") && std::path::Path::new(CLANG_LIBFUZZER).is_file() {
        return Some(CLANG_LIBFUZZER);
    }
    eprintln!(
        "no prebuilt libFuzzer at {CLANG_LIBFUZZER} (Debian's libclang-rt-16-dev): \
         libfuzzer-sys builds its own copy"
    );
    None
}

/// Runs every target for `seconds`.
pub fn main(seconds: u32) -> Result {
    ensure_tools()?;
    let root = shell::root();
    let libfuzzer = prebuilt_libfuzzer();
    let mut failed = Vec::new();
    for target in TARGETS {
        shell::step(&format!("fuzz {target} for {seconds} s"));
        let scratch = root.join("target/fuzz-corpus").join(target);
        let artifacts = root.join("target/fuzz-artifacts").join(target);
        for dir in [&scratch, &artifacts] {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let corpus = root.join("fuzz/corpus").join(target);
        let mut cmd = shell::cargo(Some("nightly"));
        if let Some(lib) = libfuzzer {
            cmd.env("CUSTOM_LIBFUZZER_PATH", lib);
        }
        // Without AddressSanitizer: every module the targets reach is under
        // the crate's `deny(unsafe_code)` (record, read_format, parse,
        // perf_data, ringset, sysfs; the ring's `RawRecord::at` over a
        // slice is safe code too), so ASan has nothing to watch that
        // bounds checks do not; a failed check panics, which libFuzzer
        // reports as a crash. ASan cost 60 of the build's 166 CPU-s, and
        // nine tenths of the executions in the time each target gets
        // (record_parse: 39,000 a second with it, 359,000 without).
        cmd.args(["fuzz", "run", "--sanitizer", "none", target])
            .arg(&scratch)
            .arg(&corpus)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg(format!("-artifact_prefix={}/", artifacts.display()));
        if let Err(e) = shell::run(&mut cmd) {
            let crashes: Vec<String> = std::fs::read_dir(&artifacts)
                .map(|d| {
                    d.flatten()
                        .map(|f| f.path().display().to_string())
                        .collect()
                })
                .unwrap_or_default();
            eprintln!(
                "fuzz target {target} failed: {e}\n  inputs: {crashes:?}\n  reproduce: cargo +nightly \
                 fuzz run {target} <input>; then add the input as a regression test in \
                 tests/source_tree/fuzz_regressions.rs"
            );
            failed.push(*target);
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("fuzz targets failed: {}", failed.join(", ")))
    }
}

/// The parser tests under miri (undefined behaviour, out-of-bounds reads).
pub fn miri() -> Result {
    shell::rustup_components("nightly", &["miri", "rust-src"])?;
    shell::run(shell::cargo(Some("nightly")).args([
        "miri",
        "test",
        // The packages that parse: the core's records, read formats and
        // attrs, and the unit tests of perf-event-host that name them
        // (event strings' attrs). Not perf-data-file: safe code only
        // (`deny(unsafe_code)`, no module allowed), whose one test the filter selects
        // reads files, which Miri's isolation refuses (ignored there), so
        // its build under Miri (with `object`'s) ran nothing.
        "-p",
        "perf-event-core",
        "-p",
        "perf-event-host",
        "--lib",
        "--",
        "record",
        "read_format",
        "attr",
    ]))
}
