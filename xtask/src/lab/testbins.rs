//! Builds the crate's kernel-facing integration tests: static binaries for
//! each guest architecture (musl linked by rust-lld, or glibc with
//! `crt-static` linked by Debian's cross gcc, see `guests.rs`; mips64el's
//! standard library built from source by the nightly toolchain), and the
//! same tests for the host, which runs them as the matrix's first column.

use super::guests::Arch;
use crate::shell::{self, Result};
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The integration test targets (`tests/<name>.rs`) the lab runs on the host
/// and in every guest: those that talk to the kernel. `vendored` and
/// `bindgen_layout` read the source tree and stay host-only. A new test
/// *function* in these files needs nothing here; a new kernel-facing test
/// *file* is added to this list.
pub const TARGETS: &[&str] = &[
    "raw_kernel",
    "raw_layer",
    "kernel_abi",
    "pmu_user_access",
    "attr_kernel",
    "open_kernel",
    "fd_leak",
    "ioctl_kernel",
    "read_format_kernel",
    "ring_kernel",
    "userpage_host",
    "userpage_pmu",
    "monitor_kernel",
    "monitor_threads",
    "perf_compare",
    "foreign_records",
    "ringset_kernel",
    "ringset_overload",
    "set_kernel",
];

/// The toolchain that builds the standard library of the targets rustup
/// serves none for ([`Arch::build_std`]).
pub const NIGHTLY: &str = "nightly";

/// One built test binary.
#[derive(Clone, Debug)]
pub struct TestBinary {
    /// The cargo target name (`raw_kernel`), also its name in the guest.
    pub name: String,
    /// The executable.
    pub path: PathBuf,
}

/// Where guest binaries are built: a target directory of the lab's own, so
/// the profile overrides below never invalidate the workspace's builds.
fn target_dir() -> PathBuf {
    shell::root().join("target/lab")
}

/// Builds the test binaries for a guest architecture.
pub fn build_guest(arch: Arch) -> Result<Vec<TestBinary>> {
    let (linker, _) = arch.linker();
    shell::step(&format!(
        "building the guest tests for {} (static, {linker})",
        arch.rust_target()
    ));
    let var = |what: &str| {
        format!(
            "CARGO_TARGET_{}_{what}",
            arch.rust_target().to_uppercase().replace('-', "_")
        )
    };
    // rustup serves no standard library for a tier-3 target: nightly
    // builds it from rust-src (`-Zbuild-std`).
    let mut cmd = shell::cargo(arch.build_std().then_some(NIGHTLY));
    cmd.args([
        "test",
        "--no-run",
        "--message-format=json-render-diagnostics",
    ]);
    if arch.build_std() {
        cmd.arg("-Zbuild-std");
    }
    cmd.args([
        "--package",
        "perf-event-core",
        "--target",
        arch.rust_target(),
    ])
    .env("CARGO_TARGET_DIR", target_dir())
    .env(var("LINKER"), linker)
    // Optimized code runs several times faster under TCG (and the read-cost
    // measurement of tests/userpage_pmu.rs needs it); debug assertions and
    // overflow checks stay on. No debug info: a smaller initramfs (panics
    // still name file and line; backtraces keep symbols).
    .env("CARGO_PROFILE_DEV_OPT_LEVEL", "2")
    .env("CARGO_PROFILE_DEV_DEBUG", "0");
    if let Some(flags) = arch.rustflags() {
        cmd.env(var("RUSTFLAGS"), flags);
    }
    for t in TARGETS {
        cmd.args(["--test", t]);
    }
    collect(cmd)
}

/// Builds the same test binaries for the host.
pub fn build_host() -> Result<Vec<TestBinary>> {
    shell::step("building the tests for the host");
    let mut cmd = shell::cargo(None);
    cmd.args([
        "test",
        "--no-run",
        "--message-format=json-render-diagnostics",
    ])
    .args(["--package", "perf-event-core"]);
    for t in TARGETS {
        cmd.args(["--test", t]);
    }
    collect(cmd)
}

/// Runs a `cargo test --no-run --message-format=json...` and returns the
/// executables of the [`TARGETS`], one per target.
fn collect(mut cmd: Command) -> Result<Vec<TestBinary>> {
    eprintln!("$ {}", shell::show(&cmd));
    let out = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start `{}`: {e}", shell::show(&cmd)))?;
    if !out.status.success() {
        return Err(format!(
            "building the lab's test binaries failed ({}): fix the errors above",
            out.status
        ));
    }
    let mut found = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        let (Some(name), Some(exe)) = (msg["target"]["name"].as_str(), msg["executable"].as_str())
        else {
            continue;
        };
        if TARGETS.contains(&name) {
            found.push(TestBinary {
                name: name.to_owned(),
                path: PathBuf::from(exe),
            });
        }
    }
    for t in TARGETS {
        if !found.iter().any(|b| b.name == *t) {
            return Err(format!(
                "cargo built no executable for test target `{t}`: does tests/{t}.rs exist?"
            ));
        }
    }
    found.sort_by_key(|b| TARGETS.iter().position(|t| *t == b.name));
    Ok(found)
}
