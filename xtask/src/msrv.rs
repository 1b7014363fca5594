//! `cargo xtask msrv`: builds the crate with the toolchain its `rust-version`
//! names (installed with rustup when missing), with and without default
//! features, so the MSRV the README states is a fact for the library.

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
    for features in [&[][..], &["--no-default-features"][..]] {
        shell::run(
            shell::cargo(Some(&version))
                .args(["check", "--locked", "-p", "perf-event-core", "--lib"])
                .args(features)
                .env("CARGO_TARGET_DIR", &target)
                .env("RUSTFLAGS", "-D warnings -A unknown-lints"),
        )
        .map_err(|e| {
            format!("the library does not build with Rust {version} (rust-version): {e}")
        })?;
    }
    Ok(())
}
