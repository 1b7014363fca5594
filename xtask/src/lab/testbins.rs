//! Builds the crate's kernel-facing integration tests: one static binary
//! for each guest architecture holding every area ([`LAB_TARGET`]; musl
//! linked by rust-lld, or glibc with `crt-static` linked by Debian's cross
//! gcc, see `guests.rs`; mips64el's standard library built from source by
//! the nightly toolchain), and the same binary for the host, which runs it
//! as the matrix's first column. Each area runs on its own, with libtest's
//! filter `<area>::`.

use super::guests::Arch;
use crate::shell::{self, Result};
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The kernel-facing test areas the lab runs on the host and in every
/// guest. An area is a directory `tests/<area>/` whose `main.rs` makes it
/// one test binary for `cargo test` (cargo target `<area>`), with one
/// module per file of the directory, and a module of [`LAB_TARGET`], the
/// binary the lab runs. Every file of these areas talks to the kernel and needs
/// nothing but the binary itself: guests have no source tree, no perf tool
/// and no cargo. A new test file in one of these directories runs in the
/// guests with no change here; a file that needs the source tree, perf or
/// cargo goes into a host-only area (`HOST_AREAS`).
pub const TARGETS: &[&str] = &[
    "abi",
    "ioctl_read",
    "ring",
    "userpage",
    "monitor",
    "set",
    "sysfs",
    "fallback",
];

/// The test target with every area of [`TARGETS`] as a module of the same
/// name (`tests/lab_areas/main.rs`, `test = false` in Cargo.toml): built
/// once per architecture instead of once per area, aarch64's build took a
/// sixth less CPU time (85 against 103 CPU-s of user time, both beside the
/// same load), and the initramfs holds one copy of the library instead
/// of eight.
pub const LAB_TARGET: &str = "lab_areas";

/// The host-only test areas (`tests/<area>/main.rs`): they read the source
/// tree (`source_tree`), involve no kernel (`simulated`), or run the perf
/// tool and cargo (`perf_oracle`). The `test` step of `cargo xtask ci` runs
/// them; the lab does not. Every area directory is in exactly one of the
/// two lists (the unit test below that checks the tree is the only user).
#[cfg(test)]
const HOST_AREAS: &[&str] = &["source_tree", "simulated", "perf_oracle", "unprivileged"];

/// The single files of `tests/`: the loom model, a test target built only
/// with `--cfg loom` by its own CI step, and the tests package's empty
/// library (`lib.rs`: a package needs one target that is not a test).
#[cfg(test)]
const SINGLE_FILE_TESTS: &[&str] = &["lib", "userpage_loom"];

/// The cfg every guest build sets: the tests package (tests/Cargo.toml)
/// builds none of its host-only dependencies under it
/// (`[target.'cfg(not(any(perf_event_core_lab_guest, loom)))'.dependencies]`),
/// since no test area of [`TARGETS`] uses one (proptest and what it pulls
/// in): a fifth of each architecture's build.
pub const GUEST_CFG: &str = "--cfg perf_event_core_lab_guest";

/// The toolchain that builds the standard library of the targets rustup
/// serves none for ([`Arch::build_std`]).
pub const NIGHTLY: &str = "nightly";

/// One test area to run: the area's name and the binary that holds it.
#[derive(Clone, Debug)]
pub struct TestBinary {
    /// The area (`abi`): its run's name in the results.
    pub name: String,
    /// The executable ([`LAB_TARGET`]'s, the same for every area).
    pub path: PathBuf,
}

impl TestBinary {
    /// libtest's filter that selects this area's tests alone: they are
    /// `<area>::<file>::<test>` in [`LAB_TARGET`], and no area has a file
    /// whose name ends in another area's (a unit test below checks).
    pub fn filter(&self) -> String {
        format!("{}::", self.name)
    }

    /// The executable's name in the guest's `/lab`.
    pub fn guest_file(&self) -> String {
        self.path.file_name().map_or_else(
            || LAB_TARGET.to_owned(),
            |f| f.to_string_lossy().into_owned(),
        )
    }
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
        "perf-event-tests",
        "--target",
        arch.rust_target(),
    ])
    .env("CARGO_TARGET_DIR", target_dir())
    .env(var("LINKER"), linker)
    // Optimized code runs several times faster under TCG (and the read-cost
    // measurement of tests/userpage/read_cost.rs needs it); debug assertions and
    // overflow checks stay on. No debug info: a smaller initramfs (panics
    // still name file and line; backtraces keep symbols).
    .env("CARGO_PROFILE_DEV_OPT_LEVEL", "2")
    .env("CARGO_PROFILE_DEV_DEBUG", "0")
    // A build from scratch (CI's fresh clone): incremental caches only cost
    // time there (about a tenth of the build's CPU time).
    .env("CARGO_PROFILE_DEV_INCREMENTAL", "false");
    let flags = match arch.rustflags() {
        Some(flags) => format!("{GUEST_CFG} {flags}"),
        None => GUEST_CFG.to_owned(),
    };
    cmd.env(var("RUSTFLAGS"), flags);
    cmd.args(["--test", LAB_TARGET]);
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
    .args(["--package", "perf-event-tests", "--test", LAB_TARGET]);
    collect(cmd)
}

/// Runs a `cargo test --no-run --message-format=json...` and returns the
/// [`LAB_TARGET`] executable, once for each area of [`TARGETS`].
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
    let exe = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|msg| msg["reason"] == "compiler-artifact" && msg["target"]["name"] == LAB_TARGET)
        .find_map(|msg| msg["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| {
            format!(
                "cargo built no executable for the test target `{LAB_TARGET}`: does \
                 tests/{LAB_TARGET}/main.rs exist, with its [[test]] entry in tests/Cargo.toml?"
            )
        })?;
    Ok(TARGETS
        .iter()
        .map(|t| TestBinary {
            name: (*t).to_owned(),
            path: exe.clone(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::{HOST_AREAS, LAB_TARGET, SINGLE_FILE_TESTS, TARGETS};
    use crate::shell;
    use std::collections::BTreeSet;

    fn names(dir: &std::path::Path, keep: impl Fn(&std::path::Path) -> bool) -> BTreeSet<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| keep(p))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect()
    }

    /// Every test binary of `tests/` is classified: each area directory
    /// (one with a `main.rs`) is kernel-facing or host-only, and the only
    /// single-file targets are the known ones.
    #[test]
    fn every_test_area_is_kernel_facing_or_host_only() {
        let tests = shell::root().join("tests");
        let areas = names(&tests, |p| p.join("main.rs").is_file());
        let listed: BTreeSet<String> = TARGETS
            .iter()
            .chain(HOST_AREAS)
            .chain(&[LAB_TARGET])
            .map(|a| (*a).to_owned())
            .collect();
        assert_eq!(
            areas, listed,
            "tests/<area>/main.rs vs TARGETS + HOST_AREAS in xtask/src/lab/testbins.rs"
        );
        assert!(TARGETS
            .iter()
            .all(|a| !HOST_AREAS.contains(a) && *a != LAB_TARGET));
        let files = names(&tests, |p| p.extension().is_some_and(|e| e == "rs"));
        let single: BTreeSet<String> = SINGLE_FILE_TESTS.iter().map(|t| (*t).to_owned()).collect();
        assert_eq!(
            files, single,
            "tests/*.rs: a test file belongs in an area directory, tests/<area>/"
        );
    }

    /// Every file of an area is a module of its `main.rs`: cargo compiles
    /// only what `main.rs` declares, so a file left out would never run.
    #[test]
    fn every_file_of_an_area_is_a_module_of_it() {
        let tests = shell::root().join("tests");
        for area in TARGETS.iter().chain(HOST_AREAS) {
            let dir = tests.join(area);
            let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
            for file in names(&dir, |p| p.extension().is_some_and(|e| e == "rs")) {
                if file != "main" {
                    assert!(
                        main.lines().any(|l| l.trim() == format!("mod {file};")),
                        "tests/{area}/{file}.rs is not declared in tests/{area}/main.rs \
                         (`mod {file};`): it would never be compiled or run"
                    );
                }
            }
        }
    }

    /// The lab's binary holds exactly the kernel-facing areas, each as the
    /// module named as the area (what the filter `<area>::` selects), and
    /// no file of an area is named so that another area's filter would
    /// select it too (`kernel_abi` ends in `abi`: `kernel_abi::` contains
    /// `abi::`; it is in the abi area itself, so the filter takes nothing
    /// of another area).
    #[test]
    fn the_lab_binary_holds_every_kernel_facing_area_and_nothing_else() {
        let tests = shell::root().join("tests");
        let main = std::fs::read_to_string(tests.join(LAB_TARGET).join("main.rs")).unwrap();
        let lines: Vec<&str> = main.lines().map(str::trim).collect();
        let mut areas = BTreeSet::new();
        for pair in lines.windows(2) {
            if let (Some(path), Some(name)) = (
                pair[0]
                    .strip_prefix("#[path = \"../")
                    .and_then(|p| p.strip_suffix("/main.rs\"]")),
                pair[1]
                    .strip_prefix("mod ")
                    .and_then(|m| m.strip_suffix(';')),
            ) {
                assert_eq!(
                    path, name,
                    "tests/{LAB_TARGET}/main.rs: `mod {name}` loads {path}"
                );
                areas.insert(name.to_owned());
            }
        }
        let want: BTreeSet<String> = TARGETS.iter().map(|t| (*t).to_owned()).collect();
        assert_eq!(
            areas, want,
            "the areas of tests/{LAB_TARGET}/main.rs vs TARGETS"
        );
        for area in TARGETS {
            for file in names(&tests.join(area), |p| {
                p.extension().is_some_and(|e| e == "rs")
            }) {
                for other in TARGETS.iter().filter(|o| *o != area) {
                    assert!(
                        !file.ends_with(other),
                        "tests/{area}/{file}.rs: its tests would also run under \
                         the filter `{other}::` of area `{other}`; rename the file"
                    );
                }
            }
        }
    }
}
