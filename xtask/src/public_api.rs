//! `cargo xtask public-api [--bless]`: the public API of each published
//! package of the workspace ([`PACKAGES`]) against its checked-in snapshot
//! `public-api/PACKAGE.txt`.
//!
//! The listing is cargo-public-api's `-sss` (its `public-api` library, at a
//! pinned version) over the rustdoc JSON of the nightly toolchain, default features
//! (`bindgen` changes how `sys` is made, not what it contains) plus the
//! API-adding features of [`FEATURES`], for the
//! host target. Any difference fails with a unified diff, so a rename or
//! removal in `sys` after a regeneration, or in the typed layers, is a
//! visible and deliberate change: `--bless` writes the new snapshot, and
//! CHANGELOG.md says why.

use crate::shell::{self, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The published packages: name and directory (relative to the workspace
/// root), lowest layer first.
pub const PACKAGES: &[(&str, &str)] = &[
    ("perf-event-core", "."),
    ("perf-event-host", "perf-event-host"),
    ("perf-data-file", "perf-data-file"),
    ("perf-event-criterion", "perf-event-criterion"),
    ("perf-event-vendor", "perf-event-vendor"),
];

/// Features whose API the snapshot holds too (non-default features that add
/// public items): perf-event-host's `vendor` (module `vendor`).
pub const FEATURES: &[(&str, &str)] = &[("perf-event-host", "vendor")];

/// The snapshot of `package`, relative to the workspace root.
pub fn snapshot(package: &str) -> String {
    format!("public-api/{package}.txt")
}

/// The command that regenerates the snapshots, for messages.
pub const BLESS: &str = "cargo xtask public-api --bless";

/// Compares (or with `--bless` writes) the snapshot.
pub fn main(args: &[String]) -> Result {
    let bless = match args {
        [] => false,
        [flag] if flag == "--bless" => true,
        [flag] if flag == "--prove-it-fails" => return can_fail(),
        _ => {
            return Err(format!(
                "usage: cargo xtask public-api [--bless | --prove-it-fails]\n({BLESS} writes public-api/PACKAGE.txt)"
            ))
        }
    };
    let root = shell::root();
    let mut failed = Vec::new();
    for (package, dir) in PACKAGES {
        let api = listing(&root.join(dir).join("Cargo.toml"), package)?;
        let name = snapshot(package);
        let file = root.join(&name);
        if bless {
            std::fs::create_dir_all(file.parent().expect("a file in a directory"))
                .map_err(|e| e.to_string())?;
            std::fs::write(&file, &api).map_err(|e| format!("{name}: {e}"))?;
            eprintln!("wrote {name} ({} lines)", api.lines().count());
        } else if let Err(e) = compare(&file, &api, package) {
            failed.push(e);
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("\n\n"))
    }
}

/// The public API of `package`, whose manifest is given, one item a line:
/// rustdoc's JSON from the nightly toolchain (`cargo rustdoc --lib ...
/// --output-format json --cap-lints warn`, what cargo-public-api runs),
/// listed by the `public-api` library without blanket, auto-trait and
/// auto-derived impls (cargo-public-api's `-sss`). The library, not the
/// cargo-public-api command: installing that took 130 CPU-s of a fresh
/// machine's CI for its command-line layer.
pub fn listing(manifest: &Path, package: &str) -> Result<String> {
    shell::rustup_toolchain("nightly")?;
    let target = shell::root().join("target/public-api");
    shell::run(
        shell::cargo(Some("nightly"))
            .args(["rustdoc", "--lib", "--quiet", "--color", "never"])
            .arg("--manifest-path")
            .arg(manifest)
            .arg("--target-dir")
            .arg(&target)
            .args(
                FEATURES
                    .iter()
                    .filter(|(p, _)| *p == package)
                    .flat_map(|(_, f)| ["--features", f]),
            )
            .args(["--", "-Z", "unstable-options", "--output-format", "json"])
            .args(["--cap-lints", "warn"]),
    )?;
    let json = target.join(format!("doc/{}.json", package.replace('-', "_")));
    let api = public_api::Builder::from_rustdoc_json(&json)
        .omit_blanket_impls(true)
        .omit_auto_trait_impls(true)
        .omit_auto_derived_impls(true)
        .build()
        .map_err(|e| format!("listing the public API from {}: {e}", json.display()))?;
    Ok(api.items().map(|item| format!("{item}\n")).collect())
}

/// Fails with a unified diff when `api` is not `package`'s snapshot.
fn compare(snapshot: &Path, api: &str, package: &str) -> Result {
    let name = self::snapshot(package);
    let expected = std::fs::read_to_string(snapshot)
        .map_err(|e| format!("{}: {e}\nrun `{BLESS}` to create it", snapshot.display()))?;
    if expected == api {
        eprintln!(
            "the public API of {package} matches {name} ({} lines)",
            api.lines().count()
        );
        return Ok(());
    }
    let current = shell::root().join(format!("target/xtask/public-api.{package}.current.txt"));
    std::fs::create_dir_all(current.parent().expect("in target")).map_err(|e| e.to_string())?;
    std::fs::write(&current, api).map_err(|e| e.to_string())?;
    let diff = Command::new("diff")
        .arg("-u")
        .arg(snapshot)
        .arg(&current)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_else(|e| format!("(diff could not run: {e})"));
    Err(format!(
        "the public API of {package} differs from {name} (- snapshot, + now):\n{diff}\n\
         If the change is deliberate, run `{BLESS}` and record it in CHANGELOG.md."
    ))
}

/// Proves the guard can fail: a copy of the crate with one public item made
/// private (`Scope::this_thread_on`) must be reported, with the item named
/// in the diff.
pub fn can_fail() -> Result {
    let root = shell::root();
    let copy = copy_of_crate(&root)?;
    let file = copy.join("src/open/mod.rs");
    let source = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let public = "pub const fn this_thread_on(";
    if !source.contains(public) {
        return Err(format!("src/open/mod.rs has no `{public}` to remove"));
    }
    std::fs::write(
        &file,
        source.replacen(public, "pub(crate) const fn this_thread_on(", 1),
    )
    .map_err(|e| e.to_string())?;
    let api = listing(&copy.join("Cargo.toml"), "perf-event-core")?;
    match compare(
        &root.join(snapshot("perf-event-core")),
        &api,
        "perf-event-core",
    ) {
        Err(e)
            if e.lines()
                .any(|l| l.starts_with('-') && l.contains("this_thread_on")) =>
        {
            eprintln!("as it must, the check failed and named the removed item:");
            for line in e.lines().filter(|l| l.starts_with("-pub")) {
                eprintln!("  {line}");
            }
            Ok(())
        }
        Err(e) => Err(format!(
            "the check failed without naming this_thread_on:\n{e}"
        )),
        Ok(()) => Err("the public-API check accepted a removed public item".to_owned()),
    }
}

/// A copy of what `cargo package` would ship, outside the workspace, so the
/// mutation never touches the real sources.
fn copy_of_crate(root: &Path) -> Result<PathBuf> {
    let listed = shell::output(shell::cargo(None).args([
        "package",
        "--list",
        "--allow-dirty",
        "-p",
        "perf-event-core",
    ]))?;
    let copy = std::env::temp_dir().join("perf-event-core-public-api-mutant");
    let _ = std::fs::remove_dir_all(&copy);
    for file in listed.lines().map(str::trim) {
        let from = root.join(file);
        if file.is_empty() || !from.is_file() {
            continue; // .cargo_vcs_info.json and Cargo.toml.orig are generated
        }
        let to = copy.join(file);
        std::fs::create_dir_all(to.parent().expect("a file in a directory"))
            .map_err(|e| e.to_string())?;
        std::fs::copy(&from, &to).map_err(|e| format!("{file}: {e}"))?;
    }
    // A workspace of its own: the copy must not look for a parent one.
    let manifest = copy.join("Cargo.toml");
    let mut text = std::fs::read_to_string(&manifest).map_err(|e| e.to_string())?;
    let start = text.find("\n[workspace]").ok_or("no [workspace] table")?;
    let end = text[start + 1..]
        .find("\n[")
        .map_or(text.len(), |n| start + 1 + n);
    text.replace_range(start..end, "\n[workspace]\n");
    // The packages above the core are its tests' path dependencies, not
    // part of the copy (what `cargo publish` drops as well).
    let text: String = text
        .lines()
        .filter(|l| {
            !PACKAGES
                .iter()
                .skip(1)
                .any(|(package, _)| l.starts_with(&format!("{package} = ")))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&manifest, text).map_err(|e| e.to_string())?;
    std::fs::copy(root.join("Cargo.lock"), copy.join("Cargo.lock")).map_err(|e| e.to_string())?;
    Ok(copy)
}
