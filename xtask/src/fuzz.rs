//! `cargo xtask fuzz [SECONDS]`: every fuzz target for a bounded time
//! (cargo-fuzz, nightly), starting from the checked-in corpus. New inputs go
//! to a scratch corpus under target/, so the tree stays clean; a crash fails
//! the run and names the artifact to copy into fuzz/regressions/<target>/.

use crate::shell::{self, Result};
use std::process::Command;

/// The fuzz targets (fuzz/fuzz_targets/<name>.rs).
pub const TARGETS: &[&str] = &["record_parse", "read_format_parse"];

/// Runs each target for `seconds`.
pub fn main(seconds: u32) -> Result {
    shell::rustup_components("nightly", &["rust-src"])?;
    if !shell::have("cargo-fuzz") {
        shell::step("installing cargo-fuzz from crates.io");
        shell::run(shell::cargo(None).args(["install", "--locked", "cargo-fuzz"]))?;
    }
    let root = shell::root();
    for target in TARGETS {
        shell::step(&format!("fuzz {target} for {seconds} s"));
        let scratch = root.join("target/fuzz-corpus").join(target);
        std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
        let seeds = root.join("fuzz/corpus").join(target);
        let result = shell::run(
            Command::new("rustup")
                .args(["run", "nightly", "cargo", "fuzz", "run", target])
                .arg(&scratch)
                .arg(&seeds)
                .args([
                    "--",
                    &format!("-max_total_time={seconds}"),
                    "-print_final_stats=1",
                ])
                .env_remove("RUSTUP_TOOLCHAIN")
                .current_dir(root.join("fuzz")),
        );
        if let Err(e) = result {
            return Err(format!(
                "{e}\nfuzz target {target} found a crash: copy the artifact from fuzz/artifacts/{target}/ \
                 into fuzz/regressions/{target}/ (tests/fuzz_regressions.rs replays it) and fix the parser"
            ));
        }
    }
    Ok(())
}

/// The parser tests under miri (undefined behaviour, out-of-bounds reads).
pub fn miri() -> Result {
    shell::rustup_components("nightly", &["miri", "rust-src"])?;
    shell::run(
        Command::new("rustup")
            .args([
                "run",
                "nightly",
                "cargo",
                "miri",
                "test",
                "--lib",
                "--",
                "record",
                "read_format",
                "attr",
            ])
            .env_remove("RUSTUP_TOOLCHAIN")
            .current_dir(shell::root()),
    )
}
