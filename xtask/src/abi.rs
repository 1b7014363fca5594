//! `cargo xtask abi`: every vendored architecture's Rust-side ABI facts
//! checked against clang on the pinned headers, the host facts checked
//! against the system C compiler at run time (abi-tests' tests), and the
//! ABI history across kernels (see `history.rs`).

use crate::headers;
use crate::options::{self, ARCHES};
use crate::shell::{self, Result};
use std::path::PathBuf;

/// clang >= 16: clang 14 does not know loongarch64.
pub const CLANG: &str = "clang-16";

/// Runs the task: per-architecture checks, host run-time check, history.
pub fn main(args: &[String]) -> Result {
    let check_only = args.iter().any(|a| a == "--check");
    ensure_clang()?;
    let set = headers::pinned()?;
    let root = shell::root();
    let mut failed = Vec::new();
    shell::step(&format!("ABI facts vs {CLANG} on {}", set.description));
    for arch in ARCHES {
        let facts = abi_tests::arch_facts(&root, abi_arch(arch))?;
        let compiler = abi_tests::check::Compiler {
            clang: PathBuf::from(CLANG),
            clang_target: arch.clang_target.to_owned(),
            include_dirs: options::include_dirs(&set.include, arch.multiarch),
            wrapper_dir: root.clone(),
        };
        let work = root.join("target/xtask/abi").join(arch.file);
        let report = abi_tests::check::check(&facts, &compiler, &work)?;
        let status = if report.failures.is_empty() {
            "ok"
        } else {
            "FAILED"
        };
        eprintln!(
            "  {:<12} {:>5} facts: {:>5} static asserts, {:>3} bit-field probes  {status}",
            arch.file,
            report.asserts + report.probes,
            report.asserts,
            report.probes
        );
        for f in &report.failures {
            eprintln!("      {f}");
        }
        if !report.failures.is_empty() {
            failed.push(arch.file);
        }
    }
    if !failed.is_empty() {
        return Err(format!(
            "the C compiler disagrees with the Rust side on: {}",
            failed.join(", ")
        ));
    }
    shell::step("host: Rust values vs the system C compiler at run time, and the mutation test");
    shell::run(abi_test_env(shell::cargo(None).args([
        "test",
        "-p",
        "abi-tests",
    ]))?)?;
    crate::history::main(check_only)
}

/// The environment abi-tests' tests need: clang and the pinned headers.
pub fn abi_test_env(cmd: &mut std::process::Command) -> Result<&mut std::process::Command> {
    let set = headers::pinned()?;
    Ok(cmd
        .env("ABI_TESTS_CLANG", CLANG)
        .env("ABI_TESTS_HEADERS", &set.include))
}

/// Installs clang 16 when it is missing.
pub fn ensure_clang() -> Result {
    if shell::have(CLANG) {
        return Ok(());
    }
    shell::apt_install(&["clang-16"])
}

/// The same architecture in abi-tests' copy of the table.
fn abi_arch(arch: &options::Arch) -> &'static abi_tests::Arch {
    abi_tests::ARCHES
        .iter()
        .find(|a| a.file == arch.file)
        .expect("one table, included twice")
}
