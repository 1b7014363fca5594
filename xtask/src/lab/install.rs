//! What the host needs for the lab: QEMU for both guest architectures and
//! the Rust targets the guest test binaries are built for (static musl,
//! linked by the toolchain's own `rust-lld`, so no cross C toolchain).
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

/// QEMU packages for the guest architectures.
const QEMU_PACKAGES: &[&str] = &["qemu-system-arm", "qemu-system-x86"];

/// Installs QEMU and the rustup targets when missing.
pub fn host_tools() -> Result {
    if Arch::ALL.iter().any(|a| !shell::have(a.qemu())) {
        install_qemu()?;
    }
    for arch in Arch::ALL {
        if !shell::have(arch.qemu()) {
            return Err(format!(
                "{} is still missing after installing {QEMU_PACKAGES:?}: install QEMU for \
                 {} guests by hand (Debian: qemu-system-arm, qemu-system-x86)",
                arch.qemu(),
                arch.name()
            ));
        }
    }
    let targets: Vec<&str> = Arch::ALL.iter().map(|a| a.rust_target()).collect();
    shell::rustup_targets("stable", &targets)
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

fn install_qemu() -> Result {
    if !shell::have("apt-get") {
        return Err(
            "QEMU is missing and there is no apt-get: install qemu-system-aarch64 and \
             qemu-system-x86_64 (QEMU 7.2 or later) with your package manager"
                .to_owned(),
        );
    }
    if codename() != "bookworm" {
        // Newer Debian and Ubuntu carry a recent enough QEMU in their main suite.
        return shell::apt_install(QEMU_PACKAGES);
    }
    shell::step("installing QEMU from bookworm-backports (one apt call, private lists)");
    let before = qemu_img_version();
    let dir = super::kernels::lab_cache().join("host-apt");
    for sub in ["lists/partial", "cache/archives/partial"] {
        std::fs::create_dir_all(dir.join(sub))
            .map_err(|e| format!("cannot create {}: {e}", dir.join(sub).display()))?;
    }
    let list = dir.join("backports.list");
    std::fs::write(
        &list,
        "deb http://deb.debian.org/debian bookworm-backports main\n",
    )
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
    run(apt().arg("update"))?;
    run(apt()
        .args([
            "install",
            "-y",
            "--no-install-recommends",
            "-t",
            "bookworm-backports",
        ])
        .args(QEMU_PACKAGES))?;
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
