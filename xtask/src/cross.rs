//! `cargo xtask cross`: `cargo check --no-default-features --target T` for
//! every architecture with vendored bindings, so each `src/sys/<arch>.rs`
//! compiles and satisfies the layout assertions of `src/abi/layout.rs` (and
//! bindgen's own layout checks) for its target.
//!
//! Targets whose `rust-std` rustup ships are checked on the stable toolchain
//! (also with default features, i.e. with std); the others with
//! `cargo +nightly check -Zbuild-std=core`.

use crate::options::ARCHES;
use crate::shell::{self, Result};

/// Runs the cross-architecture checks; every failing target is reported.
pub fn main() -> Result {
    let stable: Vec<&str> = ARCHES
        .iter()
        .filter(|a| a.rustup_std)
        .map(|a| a.rust_target)
        .collect();
    shell::rustup_targets("stable", &stable)?;
    if ARCHES.iter().any(|a| !a.rustup_std) {
        // -Zbuild-std=core compiles core from source.
        shell::rustup_components("nightly", &["rust-src"])?;
    }
    let mut failed = Vec::new();
    for arch in ARCHES {
        shell::step(&format!("cross check {} ({})", arch.file, arch.rust_target));
        let mut cmds = Vec::new();
        if arch.rustup_std {
            for features in [&["--no-default-features"][..], &[]] {
                let mut cmd = shell::cargo(Some("stable"));
                cmd.args(["check", "--quiet", "--lib", "--target", arch.rust_target]);
                cmd.args(features);
                cmds.push(cmd);
            }
        } else {
            let mut cmd = shell::cargo(Some("nightly"));
            cmd.args([
                "check",
                "--quiet",
                "--lib",
                "-Zbuild-std=core",
                "--no-default-features",
            ]);
            cmd.args(["--target", arch.rust_target]);
            cmds.push(cmd);
        }
        for mut cmd in cmds {
            if let Err(e) = shell::run(&mut cmd) {
                eprintln!("{e}");
                failed.push(arch.rust_target);
            }
        }
    }
    if failed.is_empty() {
        eprintln!("cross check passed for {} architectures", ARCHES.len());
        Ok(())
    } else {
        Err(format!("cross check failed for: {}", failed.join(", ")))
    }
}
