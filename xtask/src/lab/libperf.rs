//! libperf for the guests: the kernel's `tools/lib/perf` (the library perf
//! itself stands on), built from Debian's kernel source package
//! ([`pins::LINUX_SOURCE`], fetched and verified like every pin) with
//! Debian's cross gcc, and `bench/c/libperf_read.c` linked statically
//! against it. The guest tests
//! `userpage::libperf_compare::{aarch64,riscv64}_read_instructions_against_libperf`
//! run the result
//! (`/lab/libperf-read`) beside the crate's `CounterReader::read`.
//!
//! Only the parts libperf's build reads are unpacked from the source
//! tarball (`tools/`, the UAPI headers); the tree and each architecture's
//! build are cached by the source's SHA-256 and the C file's contents. A
//! failure (archive, build) leaves the comparison out with its reason: it
//! is a note of the lab, never a failed run.

use super::deb_cache::content_dir;
use super::guests::Arch;
use super::kernels::{self, Source};
use super::pins;
use crate::shell::{self, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The guest architectures whose libperf reads counters from user space.
pub const ARCHES: [Arch; 2] = [Arch::Aarch64, Arch::Riscv64];

/// The name of the program in the guest's `/lab`.
pub const GUEST_NAME: &str = "libperf-read";

/// `(make's ARCH, CROSS_COMPILE, cross gcc)` for `arch`.
fn toolchain(arch: Arch) -> Option<(&'static str, &'static str, &'static str)> {
    match arch {
        Arch::Aarch64 => Some(("arm64", "aarch64-linux-gnu-", "aarch64-linux-gnu-gcc")),
        Arch::Riscv64 => Some(("riscv", "riscv64-linux-gnu-", "riscv64-linux-gnu-gcc")),
        _ => None,
    }
}

/// The Debian packages the build needs on the host for `arch` (the cross
/// gcc and its C library; make).
pub fn packages(arch: Arch) -> &'static [&'static str] {
    match arch {
        Arch::Aarch64 => &["gcc-aarch64-linux-gnu", "libc6-dev-arm64-cross", "make"],
        Arch::Riscv64 => &["gcc-riscv64-linux-gnu", "libc6-dev-riscv64-cross", "make"],
        _ => &[],
    }
}

/// The commands [`packages`] provide.
pub fn tools(arch: Arch) -> Vec<&'static str> {
    toolchain(arch).map_or(Vec::new(), |(_, _, gcc)| vec![gcc, "make"])
}

/// `libperf-read` for `arch`: built now, or from the cache.
pub fn build(source: &Source, arch: Arch) -> std::result::Result<PathBuf, String> {
    let (make_arch, cross, gcc) =
        toolchain(arch).ok_or_else(|| format!("libperf is not compared on {}", arch.name()))?;
    let program = shell::root().join("bench/c/libperf_read.c");
    let code = std::fs::read(&program).map_err(|e| format!("{}: {e}", program.display()))?;
    let key = format!(
        "{}-{}-{}",
        &pins::LINUX_SOURCE.sha256[..16],
        arch.name(),
        fnv(&code)
    );
    let dir = source.cache.join("libperf").join(key);
    let out = dir.join(GUEST_NAME);
    if out.is_file() {
        return Ok(out);
    }
    shell::step(&format!("building libperf for {}", arch.name()));
    let tarball = kernels::fetch_pin(source, &pins::LINUX_SOURCE)
        .map_err(|e| format!("{}: {e}", pins::LINUX_SOURCE.package))?;
    let tree = unpack(&tarball, &source.cache.join("libperf"))?;
    let build = dir.join("build");
    for lib in ["perf", "api"] {
        let lib_out = build.join(lib);
        std::fs::create_dir_all(&lib_out).map_err(|e| format!("{}: {e}", lib_out.display()))?;
        let target = lib_out.join(format!("lib{lib}.a"));
        shell::run(
            Command::new("make")
                .arg("-s")
                .arg("-C")
                .arg(tree.join("tools/lib").join(lib))
                .arg(format!("ARCH={make_arch}"))
                .arg(format!("CROSS_COMPILE={cross}"))
                .arg(format!("OUTPUT={}/", lib_out.display()))
                .arg(&target),
        )?;
    }
    let partial = dir.join(format!("{GUEST_NAME}.partial"));
    shell::run(
        Command::new(gcc)
            .args(["-O2", "-static", "-Wall"])
            .arg("-I")
            .arg(tree.join("tools/lib/perf/include"))
            .arg("-I")
            .arg(tree.join("tools/include/uapi"))
            .arg(&program)
            .arg(build.join("perf/libperf.a"))
            .arg(build.join("api/libapi.a"))
            .arg("-o")
            .arg(&partial),
    )?;
    std::fs::rename(&partial, &out).map_err(|e| format!("{}: {e}", out.display()))?;
    let _ = std::fs::remove_dir_all(&build);
    Ok(out)
}

/// A pinned kernel source (one of [`pins::LINUX_SOURCES`]) unpacked as for
/// libperf (`tools/`, the UAPI headers), for tasks beyond the lab
/// (`cargo xtask vendor-events`): only the pin itself, verified by size and
/// SHA-256, never a replacement of a stale pin.
pub fn source_tree(source: &Source, pin: &pins::Pin) -> Result<PathBuf> {
    let tarball = kernels::fetch_pin(source, pin)
        .map_err(|e| format!("{} {} could not be fetched: {e}", pin.package, pin.version))?;
    if !tarball.starts_with(content_dir(&source.cache, pin.sha256)) {
        return Err(format!(
            "{} {} is no longer served (a newer package stands in for it): run \
             `cargo xtask lab --update-pins` and regenerate",
            pin.package, pin.version
        ));
    }
    unpack(&tarball, &source.cache.join("libperf"))
}

/// Unpacks what libperf's build reads from the source tarball into
/// `cache/<tarball's directory name>`, once: the `.complete` mark names the
/// tarball (its path holds the package's SHA-256), so another version of
/// the same series is unpacked afresh.
fn unpack(tarball: &Path, cache: &Path) -> Result<PathBuf> {
    let name = tarball
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".tar.xz"))
        .ok_or_else(|| format!("{}: not a .tar.xz", tarball.display()))?
        .to_owned();
    let tree = cache.join(&name);
    let mark = tarball.display().to_string();
    let complete = || std::fs::read_to_string(tree.join(".complete")).is_ok_and(|m| m == mark);
    // One unpack at a time in this process (CI's vendor-table step and the
    // lab's libperf build run side by side); another process's unpack
    // works in a directory of its own, and the first to finish wins.
    static UNPACK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = UNPACK.lock().unwrap_or_else(|e| e.into_inner());
    if complete() {
        return Ok(tree);
    }
    let partial = cache.join(format!("{name}.partial.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(&partial).map_err(|e| format!("{}: {e}", partial.display()))?;
    let members: Vec<String> = [
        "tools",
        "include/uapi",
        "arch/arm64/include/uapi",
        "arch/riscv/include/uapi",
        "scripts",
        "Makefile",
    ]
    .iter()
    .map(|m| format!("{name}/{m}"))
    .collect();
    shell::run(
        Command::new("tar")
            .arg("-xJf")
            .arg(tarball)
            .arg("-C")
            .arg(&partial)
            .args(&members),
    )?;
    std::fs::write(partial.join(&name).join(".complete"), &mark)
        .map_err(|e| format!("{}: {e}", partial.display()))?;
    if complete() {
        // Another process finished first: its tree may be in use.
        let _ = std::fs::remove_dir_all(&partial);
        return Ok(tree);
    }
    let _ = std::fs::remove_dir_all(&tree);
    std::fs::rename(partial.join(&name), &tree).map_err(|e| format!("{}: {e}", tree.display()))?;
    let _ = std::fs::remove_dir_all(&partial);
    Ok(tree)
}

/// FNV-1a of `bytes`, in hex: the cache key of the C program's text.
fn fnv(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}")
}
