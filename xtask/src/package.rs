//! `cargo xtask package`: what users download, package by package.
//! `cargo publish --dry-run` of every published package at once (cargo
//! packages them against each other) must succeed without a single
//! warning; then each packaged `.crate` is unpacked into an empty
//! directory under `target/package/` (cargo never looks above a
//! `target/package` directory for a workspace, so each unpacked crate is a
//! package of its own), where it must build, run its examples, pass its
//! doctests (the READMEs' examples among them) and type-check its unit
//! tests on its own. A package above the core finds the packages below it
//! as unpacked too (`[patch.crates-io]` to their unpacked directories),
//! never as the workspace's sources.

use crate::shell::{self, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// An example run from an unpacked crate, with its arguments.
type Example = (&'static str, &'static [&'static str]);

/// The published packages, lowest first (each depends only on those
/// before it), with the examples run from each unpacked crate.
const PACKAGES: &[(&str, &[Example])] = &[
    (
        "perf-event-core",
        &[("printf", &[]), ("watchpoint", &[]), ("hello", &[])],
    ),
    // Before perf-event-host, whose optional feature `vendor` uses it: the
    // unpacked perf-event-host resolves it (optional dependencies too) from
    // the unpacked perf-event-vendor.
    (
        "perf-event-vendor",
        &[("model_for_cpuid", &["GenuineIntel-6-55-4"])],
    ),
    (
        "perf-event-host",
        &[("stat", &["ls", "-l", "/"]), ("ringset_mio", &[])],
    ),
    (
        "perf-data-file",
        &[(
            "sample",
            &[
                "sh",
                "-c",
                "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done",
            ],
        )],
    ),
    ("perf-event-criterion", &[]),
];

/// Runs the dry run, then each unpacked crate's build, examples and
/// doctests.
pub fn main() -> Result {
    let root = shell::root();
    let mut publish = shell::cargo(None);
    // --allow-dirty: the check is about the packages' contents; CI runs on
    // a clean checkout, a developer before committing. --no-verify: cargo's
    // verification is a `cargo build` of the packaged sources, which this
    // step does itself below on each unpacked `.crate` (and more: examples,
    // doctests, tests), so it would only build the same crates twice.
    publish.args(["publish", "--dry-run", "--no-verify", "--allow-dirty"]);
    for (package, _) in PACKAGES {
        publish.args(["-p", package]);
    }
    eprintln!("$ {}", shell::show(&publish));
    let out = publish
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot start cargo publish: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprint!("{stderr}");
    if !out.status.success() {
        return Err(format!("`cargo publish --dry-run` failed ({})", out.status));
    }
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning:") && !l.contains("aborting upload due to dry run"))
        .collect();
    if !warnings.is_empty() {
        return Err(format!(
            "`cargo publish --dry-run` warned:\n  {}",
            warnings.join("\n  ")
        ));
    }
    let base = root.join("target/package/unpacked");
    let _ = std::fs::remove_dir_all(&base);
    let mut unpacked: Vec<(&str, PathBuf)> = Vec::new();
    for (package, examples) in PACKAGES {
        let crate_file = packaged_crate(&root, package)?;
        let dir = unpack(&base.join(package), &crate_file)?;
        check_unpacked(&root, package, &dir, examples, &unpacked)?;
        unpacked.push((package, dir));
    }
    Ok(())
}

/// Builds the unpacked `package` in `dir`, runs its `examples`, its
/// doctests and type-checks its tests; the packages below it are the
/// unpacked ones in `below`.
fn check_unpacked(
    root: &Path,
    package: &str,
    dir: &Path,
    examples: &[Example],
    below: &[(&str, PathBuf)],
) -> Result {
    // The workspace's own target directory: the registry dependencies the
    // earlier steps compiled are reused (same versions, same profiles),
    // while the packages themselves, at other paths, are compiled from the
    // unpacked sources. A directory of its own made this step compile
    // every dependency again, in debug and release.
    let target = root.join("target");
    // The core's packaged Cargo.lock is used as it is (`--locked`). A
    // package above it gets the workspace's lock file, so its registry
    // dependencies keep the versions CI tested; not `--locked`, since the
    // lock also lists the workspace's other packages, which cargo prunes.
    let locked = below.is_empty();
    if !locked {
        std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock"))
            .map_err(|e| format!("Cargo.lock into {}: {e}", dir.display()))?;
    }
    let in_dir = |args: &[&str]| {
        let mut cmd = shell::cargo(None);
        cmd.current_dir(dir).args(args);
        if locked {
            cmd.arg("--locked");
        }
        for (name, path) in below.iter().filter(|(name, _)| needs(dir, name, below)) {
            cmd.arg("--config").arg(format!(
                "patch.crates-io.{name}.path={:?}",
                path.display().to_string()
            ));
        }
        cmd.env("CARGO_TARGET_DIR", &target);
        cmd
    };
    shell::run(&mut in_dir(&["build"]))?;
    // The examples in the debug build just made (the `examples` step runs
    // them optimized from the clone): what is proven here is that the
    // package holds everything they need.
    for (example, args) in examples {
        let mut cmd = in_dir(&["run", "--example", example]);
        shell::run(cmd.arg("--").args(*args))?;
    }
    shell::run(&mut in_dir(&["test", "--doc"]))?;
    // The unit tests (and an example's, `test = true`) must at least
    // compile from the package alone; running them is the `test` step's
    // job, from the clone.
    shell::run(&mut in_dir(&["check", "--tests"]))?;
    eprintln!(
        "{package}: the package in {} builds, runs its examples and doctests, type-checks its tests",
        dir.display()
    );
    Ok(())
}

/// Whether the unpacked crate in `dir` needs `package` (one of `below`):
/// names it among its dependencies, or names a package of `below` that
/// needs it (perf-data-file's feature `vendor` turns on perf-event-host's,
/// which needs perf-event-vendor; cargo resolves every feature of the
/// crate). A patch for a package it does not use makes cargo warn.
fn needs(dir: &Path, package: &str, below: &[(&str, PathBuf)]) -> bool {
    depends_on(dir, package)
        || below
            .iter()
            .any(|(q, q_dir)| *q != package && depends_on(dir, q) && needs(q_dir, package, below))
}

/// Whether the unpacked crate in `dir` names `package` among its
/// dependencies.
fn depends_on(dir: &Path, package: &str) -> bool {
    std::fs::read_to_string(dir.join("Cargo.toml"))
        .is_ok_and(|m| m.contains(&format!("[dependencies.{package}]")))
}

/// The `.crate` of `package` that `cargo publish --dry-run` wrote.
fn packaged_crate(root: &Path, package: &str) -> Result<PathBuf> {
    let dir = crate::public_api::PACKAGES
        .iter()
        .find(|(name, _)| *name == package)
        .map_or(".", |(_, dir)| dir);
    let manifest =
        std::fs::read_to_string(root.join(dir).join("Cargo.toml")).map_err(|e| e.to_string())?;
    let version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .ok_or_else(|| format!("no version in {dir}/Cargo.toml"))?;
    // `cargo publish --dry-run` leaves it in target/package/tmp-crate/
    // (cargo 1.90 and later), `cargo package` in target/package/.
    let name = format!("{package}-{version}.crate");
    let candidates = [
        root.join("target/package/tmp-crate").join(&name),
        root.join("target/package").join(&name),
    ];
    candidates
        .iter()
        .find(|f| f.is_file())
        .cloned()
        .ok_or_else(|| {
            format!(
                "cargo publish wrote no {name} (looked in {} and {})",
                candidates[0].display(),
                candidates[1].display()
            )
        })
}

/// Unpacks the `.crate` (a gzip'ed tar) into `base`, a fresh directory of
/// this checkout's `target/package/`: cargo stops its search for a
/// workspace at a `target/package` directory, so no parent Cargo.toml or
/// lock file can help the unpacked crate (checked: its workspace root is
/// itself), and checkouts side by side never share the directory.
fn unpack(base: &Path, crate_file: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(base).map_err(|e| format!("{}: {e}", base.display()))?;
    // `-m`: the files get the time of unpacking, not the packaged ones.
    // The archive's times are older than a previous run's build of the same
    // unpacked path in the shared target directory, which cargo would then
    // take as up to date (a stale library under a changed source).
    shell::run(
        Command::new("tar")
            .arg("-m")
            .arg("-xzf")
            .arg(crate_file)
            .arg("-C")
            .arg(base),
    )?;
    let mut entries = std::fs::read_dir(base)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()));
    let dir = match (entries.next(), entries.next()) {
        (Some(dir), None) if dir.join("Cargo.toml").is_file() => dir,
        _ => {
            return Err(format!(
                "{} did not unpack into one crate directory",
                crate_file.display()
            ))
        }
    };
    // The unpacked crate must be its own workspace, not a stray member of
    // this one (whose lock file and members could help it build).
    let metadata = shell::output(shell::cargo(None).current_dir(&dir).args([
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
    ]))?;
    let json: serde_json::Value =
        serde_json::from_str(&metadata).map_err(|e| format!("cargo metadata: {e}"))?;
    let workspace = json["workspace_root"].as_str().unwrap_or_default();
    // Compared as the file system sees them: `target` may be a link.
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if !same(Path::new(workspace), &dir) {
        return Err(format!(
            "the unpacked crate in {} belongs to the workspace at {workspace}, not to itself",
            dir.display()
        ));
    }
    Ok(dir)
}
