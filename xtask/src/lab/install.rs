//! What the host needs for the lab: QEMU for the guest architectures, the
//! Rust targets the guest test binaries are built for (static musl linked
//! by the toolchain's own `rust-lld`; static glibc linked by Debian's cross
//! gcc where rustup serves no musl target; for mips64el, which rustup does
//! not serve, nightly's `rust-src`), `dtc` for the armhf guests' device
//! tree, and `xz` and `zstd` for the x86 kernels' ELF (`pvh.rs`).
//!
//! On Debian bookworm QEMU comes from bookworm-backports: bookworm's own
//! qemu-system 7.2 would replace the qemu-utils 10.0 from backports that
//! these machines ship. The backports list is read through private apt
//! lists (the machine's sources and lists stay as they are) and everything
//! is installed in one apt call, because the machines' docker-clean hook
//! deletes downloaded packages after every dpkg run.

use super::guests::Arch;
use crate::shell::{self, output, run, Result};
use std::process::Command;

/// The Debian packages the lab needs on the host for `arches`.
fn packages(arches: &[Arch]) -> Vec<&'static str> {
    let mut packages = Vec::new();
    for arch in arches {
        packages.push(arch.qemu_package());
        if *arch == Arch::Riscv64 {
            // The firmware QEMU's `-bios default` loads on `virt`.
            packages.push("opensbi");
        }
        if *arch == Arch::Armhf {
            packages.push("device-tree-compiler");
        }
        if arch.pvh() {
            // The kernel's ELF out of its image (`pvh.rs`).
            packages.extend_from_slice(&["xz-utils", "zstd"]);
        }
        if let (_, Some(cross)) = arch.linker() {
            packages.extend_from_slice(cross);
        }
        packages.extend_from_slice(super::libperf::packages(*arch));
    }
    packages.sort_unstable();
    packages.dedup();
    packages
}

/// The commands each package provides, to tell whether it is there.
fn missing_tools(arches: &[Arch]) -> Vec<&'static str> {
    let mut tools = Vec::new();
    for arch in arches {
        tools.push(arch.qemu());
        if let (linker, Some(_)) = arch.linker() {
            tools.push(linker);
        }
        if *arch == Arch::Armhf {
            tools.push("dtc");
        }
        if arch.pvh() {
            tools.extend_from_slice(&["xz", "zstd"]);
        }
        tools.extend(super::libperf::tools(*arch));
    }
    tools.sort_unstable();
    tools.dedup();
    tools.retain(|t| !shell::have(t));
    tools
}

/// Installs QEMU, cross linkers and the rustup targets when missing.
pub fn host_tools(arches: &[Arch]) -> Result {
    if !missing_tools(arches).is_empty() {
        install(&packages(arches))?;
    }
    let still = missing_tools(arches);
    if !still.is_empty() {
        return Err(format!(
            "{still:?} still missing after installing {:?}: install them by hand",
            packages(arches)
        ));
    }
    let targets: Vec<&str> = arches
        .iter()
        .filter(|a| !a.build_std())
        .map(|a| a.rust_target())
        .collect();
    shell::rustup_targets("stable", &targets)?;
    if arches.iter().any(|a| a.build_std()) {
        // mips64el: no rust-std from rustup; nightly builds it from source.
        shell::rustup_components(super::testbins::NIGHTLY, &["rust-src"])?;
    }
    Ok(())
}

/// The version line of `qemu-img`, when installed.
fn qemu_img_version() -> Option<String> {
    output(Command::new("qemu-img").arg("--version"))
        .ok()
        .and_then(|s| s.lines().next().map(str::to_owned))
}

fn codename() -> String {
    std::fs::read_to_string("/etc/os-release")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VERSION_CODENAME="))
        .map(|v| v.trim_matches('"').to_owned())
        .unwrap_or_default()
}

fn install(packages: &[&str]) -> Result {
    if !shell::have("apt-get") {
        return Err(format!(
            "the lab's host tools are missing and there is no apt-get: install the \
             equivalents of Debian's {packages:?} (QEMU 7.2 or later) with your package \
             manager"
        ));
    }
    if codename() != "bookworm" {
        // Newer Debian and Ubuntu carry a recent enough QEMU in their main suite.
        return shell::apt_install(packages);
    }
    shell::step("installing QEMU from bookworm-backports (one apt call, private lists)");
    let before = qemu_img_version();
    let dir = super::kernels::lab_cache().join("host-apt");
    for sub in ["lists/partial", "cache/archives/partial"] {
        std::fs::create_dir_all(dir.join(sub))
            .map_err(|e| format!("cannot create {}: {e}", dir.join(sub).display()))?;
    }
    let list = dir.join("backports.list");
    let source = crate::debian::archives()?.line("bookworm-backports", &[])?;
    std::fs::write(&list, source + "\n")
        .map_err(|e| format!("cannot write {}: {e}", list.display()))?;
    // The machine's own sources (Dir::Etc::SourceParts) plus backports, with
    // lists and package cache of our own: /etc/apt and /var/lib/apt/lists
    // are not changed.
    let opts = [
        format!("-oDir::Etc::SourceList={}", list.display()),
        format!("-oDir::State::Lists={}", dir.join("lists").display()),
        format!("-oDir::Cache={}", dir.join("cache").display()),
        "-oAcquire::IndexTargets::deb::DEP-11::DefaultEnabled=false".to_owned(),
        // Our directories are root's; apt's _apt sandbox user cannot write them.
        "-oAPT::Sandbox::User=root".to_owned(),
        // Keep the parsed package cache (docker-clean images disable it).
        "-oDir::Cache::pkgcache=pkgcache.bin".to_owned(),
        "-oDir::Cache::srcpkgcache=srcpkgcache.bin".to_owned(),
        "-qq".to_owned(),
    ];
    let sudo = !output(Command::new("id").arg("-u")).is_ok_and(|s| s.trim() == "0");
    let apt = || {
        let mut cmd = Command::new(if sudo { "sudo" } else { "apt-get" });
        if sudo {
            cmd.arg("apt-get");
        }
        cmd.args(&opts).env("DEBIAN_FRONTEND", "noninteractive");
        cmd
    };
    // A stale index of one suite must not stop the install (see
    // `shell::apt_install`): the install says whether the packages were had.
    if let Err(e) = run(apt().arg("update")) {
        eprintln!("apt-get update failed ({e}); installing from the lists it could fetch");
    }
    run(apt()
        .args([
            "install",
            "-y",
            "--no-install-recommends",
            "-t",
            "bookworm-backports",
        ])
        .args(packages))?;
    let _ = run(apt().arg("clean"));
    let after = qemu_img_version();
    match (&before, &after) {
        (Some(b), Some(a)) if b != a => Err(format!(
            "installing QEMU changed qemu-img from `{b}` to `{a}`: restore it with \
             `apt-get install -t bookworm-backports qemu-utils`"
        )),
        (Some(_), None) => Err(format!(
            "installing QEMU removed qemu-utils ({}): reinstall it with \
             `apt-get install -t bookworm-backports qemu-utils`",
            before.unwrap_or_default()
        )),
        _ => {
            if let Some(v) = after {
                eprintln!("qemu-utils survived: {v}");
            }
            Ok(())
        }
    }
}
