//! `cargo xtask cross`: `cargo check --no-default-features --target T` for
//! every architecture with vendored bindings, so each `src/sys/<arch>.rs`
//! compiles and satisfies the layout assertions of `src/abi/layout.rs` (and
//! bindgen's own layout checks) for its target.
//!
//! Targets whose `rust-std` rustup ships are checked on the stable toolchain
//! (also with default features, i.e. with std); the others with
//! `cargo +nightly check -Zbuild-std=core`. `cargo xtask ci` leaves out the
//! default-features check of the targets another of its parts builds in
//! full with default features (the host's `test` step, the lab's guest
//! builds of the same target): a check of code that is compiled anyway.

use crate::options::ARCHES;
use crate::shell::{self, Result};

/// Runs the cross-architecture checks; every failing target is reported.
pub fn main() -> Result {
    check(&[])
}

/// The checks, leaving out the default-features check of the targets in
/// `built_with_std`, which the caller builds in full with default
/// features elsewhere.
pub fn check(built_with_std: &[&str]) -> Result {
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
            let with_std = !built_with_std.contains(&arch.rust_target);
            if !with_std {
                eprintln!("(default features: built in full by another CI step)");
            }
            for features in [&["--no-default-features"][..], &[]]
                .into_iter()
                .take(if with_std { 2 } else { 1 })
            {
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
