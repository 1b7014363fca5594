//! `cargo xtask msrv`: builds the published libraries with the toolchain
//! the root's `rust-version` names (installed with rustup when missing),
//! the core also without default features, so the MSRV the README states
//! is a fact for them.

use crate::shell::{self, Result};

/// The `rust-version` of the root Cargo.toml.
pub fn rust_version() -> Result<String> {
    let manifest = std::fs::read_to_string(shell::root().join("Cargo.toml"))
        .map_err(|e| format!("cannot read Cargo.toml: {e}"))?;
    manifest
        .lines()
        .find_map(|line| {
            let value = line.strip_prefix("rust-version")?.trim_start();
            Some(value.strip_prefix('=')?.trim().trim_matches('"').to_owned())
        })
        .ok_or_else(|| "Cargo.toml has no rust-version".to_owned())
}

/// Installs the MSRV toolchain (minimal profile) and checks the library
/// with it, default features and `--no-default-features`, warnings denied
/// (but `unknown_lints`: the generated `sys` allows lints that newer
/// compilers know). The MSRV is the library's: the dev-dependencies
/// (proptest, criterion) need a newer cargo, so tests and examples are
/// built with stable only.
pub fn main() -> Result {
    let version = rust_version()?;
    shell::rustup_toolchain(&version)?;
    // Its own target directory: another compiler would invalidate the
    // stable toolchain's builds of the other steps.
    let target = shell::root().join("target/msrv");
    // The published libraries with default features; the core alone
    // without (the packages above it need its std impls).
    let all = [
        "-p",
        "perf-event-core",
        "-p",
        "perf-event-host",
        "-p",
        "perf-data-file",
        "-p",
        "perf-event-vendor",
    ];
    let core_alone = ["-p", "perf-event-core", "--no-default-features"];
    for packages in [&all[..], &core_alone[..]] {
        shell::run(
            shell::cargo(Some(&version))
                .args(["check", "--locked", "--lib"])
                .args(packages)
                .env("CARGO_TARGET_DIR", &target)
                .env("RUSTFLAGS", "-D warnings -A unknown-lints"),
        )
        .map_err(|e| {
            format!("the library does not build with Rust {version} (rust-version): {e}")
        })?;
    }
    Ok(())
}
