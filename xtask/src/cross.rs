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
//!
//! Each group of targets (stable without std, stable with std, nightly
//! with `-Zbuild-std=core`) is one cargo invocation with a `--target` per
//! architecture and `--keep-going`: cargo checks the targets side by side
//! and builds what they share once, where 32 cargo runs one after another
//! each waited for the machine alone (on a loaded CI machine, most of the
//! step's time). A group that fails is checked again one target at a time,
//! so the failure names each architecture that fails.

use crate::options::ARCHES;
use crate::shell::{self, Result};
use std::process::Command;

/// Runs the cross-architecture checks; every failing target is reported.
pub fn main() -> Result {
    check(&[])
}

/// One cargo invocation over several targets.
struct Group {
    /// What the group checks, for the step line.
    what: &'static str,
    /// `false`: the stable toolchain; `true`: nightly with `-Zbuild-std=core`.
    build_std: bool,
    /// `--no-default-features` (the `no_std` core) or default features.
    no_std: bool,
    targets: Vec<&'static str>,
}

impl Group {
    fn command(&self, targets: &[&str]) -> Command {
        let mut cmd = if self.build_std {
            let mut cmd = shell::cargo(Some("nightly"));
            cmd.args(["check", "--quiet", "--lib", "-Zbuild-std=core"]);
            cmd
        } else {
            let mut cmd = shell::cargo(Some("stable"));
            cmd.args(["check", "--quiet", "--lib"]);
            cmd
        };
        if self.no_std {
            cmd.arg("--no-default-features");
        }
        cmd.arg("--keep-going");
        for target in targets {
            cmd.args(["--target", target]);
        }
        cmd
    }
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
    let groups = [
        Group {
            what: "without std (stable)",
            build_std: false,
            no_std: true,
            targets: stable.clone(),
        },
        Group {
            what: "with std (stable), the targets no other step builds",
            build_std: false,
            no_std: false,
            targets: stable
                .iter()
                .copied()
                .filter(|t| !built_with_std.contains(t))
                .collect(),
        },
        Group {
            what: "without std (nightly, -Zbuild-std=core: rustup has no rust-std for them)",
            build_std: true,
            no_std: true,
            targets: ARCHES
                .iter()
                .filter(|a| !a.rustup_std)
                .map(|a| a.rust_target)
                .collect(),
        },
    ];
    if groups.iter().any(|g| g.build_std && !g.targets.is_empty()) {
        // -Zbuild-std=core compiles core from source.
        shell::rustup_components("nightly", &["rust-src"])?;
    }
    let mut failed = Vec::new();
    for group in groups.iter().filter(|g| !g.targets.is_empty()) {
        shell::step(&format!(
            "cross check {}: {}",
            group.what,
            group.targets.join(" ")
        ));
        if shell::run(&mut group.command(&group.targets)).is_ok() {
            continue;
        }
        eprintln!("the group failed: each of its targets again, alone, to name the ones that fail");
        for target in &group.targets {
            if let Err(e) = shell::run(&mut group.command(&[target])) {
                eprintln!("{e}");
                failed.push(format!("{target} ({})", group.what));
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
