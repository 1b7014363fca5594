//! `cargo xtask package`: what a user downloads. `cargo publish --dry-run`
//! must succeed without a single warning; then the packaged `.crate` is
//! unpacked into an empty directory under `target/package/` (cargo never
//! looks above a `target/package` directory for a workspace, so the
//! unpacked crate is a package of its own), where it must build, run its
//! examples, pass its doctests (the README's examples among them) and
//! type-check its integration tests on its own.

use crate::shell::{self, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The examples run from the unpacked crate, with their arguments.
const EXAMPLES: &[(&str, &[&str])] = &[
    ("stat", &["ls", "-l", "/"]),
    ("printf", &[]),
    ("watchpoint", &[]),
    (
        "sample",
        &[
            "sh",
            "-c",
            "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done",
        ],
    ),
    ("hello", &[]),
    ("ringset_mio", &[]),
];

/// Runs the dry run, then the unpacked crate's build, examples and doctests.
pub fn main() -> Result {
    let root = shell::root();
    let mut publish = shell::cargo(None);
    // --allow-dirty: the check is about the package's contents; CI runs on
    // a clean checkout, a developer before committing. --no-verify: cargo's
    // verification is a `cargo build` of the packaged sources, which this
    // step does itself below on the unpacked `.crate` (and more: examples,
    // doctests, tests), so it would only build the same crate twice.
    publish.args([
        "publish",
        "--dry-run",
        "--no-verify",
        "--allow-dirty",
        "-p",
        "perf-event-core",
    ]);
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
    let crate_file = packaged_crate(&root)?;
    let dir = unpack(&root, &crate_file)?;
    // The workspace's own target directory: the registry dependencies the
    // earlier steps compiled are reused (same versions from the packaged
    // Cargo.lock, same profiles), while perf-event-core itself, at another
    // path, is compiled from the unpacked sources. Its own directory made
    // this step compile every dependency again, in debug and release.
    let target = root.join("target");
    let in_dir = |args: &[&str]| {
        let mut cmd = shell::cargo(None);
        cmd.current_dir(&dir)
            .args(args)
            .env("CARGO_TARGET_DIR", &target);
        cmd
    };
    shell::run(&mut in_dir(&["build", "--locked"]))?;
    // The examples in the debug build just made (the `examples` step runs
    // them optimized from the clone): what is proven here is that the
    // package holds everything they need.
    for (example, args) in EXAMPLES {
        shell::run(in_dir(&["run", "--locked", "--example", example, "--"]).args(*args))?;
    }
    shell::run(&mut in_dir(&["test", "--locked", "--doc"]))?;
    // The packaged integration tests (for users and distribution packagers
    // to run against their kernel) must at least compile from the package
    // alone: type-checked (`cargo check`, which finds a file or module the
    // package lacks as a build would); building and running them is the
    // `test` step's job, from the clone.
    shell::run(&mut in_dir(&["check", "--locked", "--tests"]))?;
    eprintln!(
        "the package in {} builds, runs its examples and doctests, type-checks its tests",
        dir.display()
    );
    Ok(())
}

/// The `.crate` that `cargo publish --dry-run` wrote.
fn packaged_crate(root: &Path) -> Result<PathBuf> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).map_err(|e| e.to_string())?;
    let version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .ok_or("no version in Cargo.toml")?;
    // `cargo publish --dry-run` leaves it in target/package/tmp-crate/
    // (cargo 1.90 and later), `cargo package` in target/package/.
    let name = format!("perf-event-core-{version}.crate");
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

/// Unpacks the `.crate` (a gzip'ed tar) into a fresh directory of this
/// checkout's `target/package/`: cargo stops its search for a workspace at
/// a `target/package` directory, so no parent Cargo.toml or lock file can
/// help the unpacked crate (checked: its workspace root is itself), and
/// checkouts side by side never share the directory.
fn unpack(root: &Path, crate_file: &Path) -> Result<PathBuf> {
    let base = root.join("target/package/unpacked");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).map_err(|e| format!("{}: {e}", base.display()))?;
    shell::run(
        Command::new("tar")
            .arg("-xzf")
            .arg(crate_file)
            .arg("-C")
            .arg(&base),
    )?;
    let mut entries = std::fs::read_dir(&base)
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
    if Path::new(workspace) != dir {
        return Err(format!(
            "the unpacked crate in {} belongs to the workspace at {workspace}, not to itself",
            dir.display()
        ));
    }
    Ok(dir)
}
