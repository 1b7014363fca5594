//! `cargo xtask ci`: everything CI runs, in one command that also installs
//! what it needs. Every step runs; a summary with timings ends the output and
//! any failed step fails the task.

use crate::ci_bindgen;
use crate::ci_lab::Lab;
use crate::cpu_time::CpuTime;
use crate::headers;
use crate::shell::{self, Result};
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

/// What a step that passed still has to tell at the end of the run (the
/// lab's unavailable guests and stale pins).
pub(crate) static NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Debian packages the steps need: clang and libclang >= 16 for bindgen and
/// the ABI checks (clang 14 does not know loongarch64), diff for
/// `bindgen --check`, the system C compiler for the host ABI check,
/// perf for the tests that compare with it, and strace for the benchmarks.
const PACKAGES: &[&str] = &[
    "clang-16",
    "libclang-16-dev",
    "diffutils",
    "gcc",
    "libc6-dev",
    // perf itself, the oracle the comparison tests run against (stat,
    // parse-events, record/script/report): without it they say "skipped".
    "linux-perf",
    // The benchmarks' system-call counts (`bench region`, `attach_vs_perf`).
    "strace",
    // The lab's fetcher (curl, gpgv, xz) and its test, which signs an
    // archive of its own (gpg).
    "curl",
    "gpg",
    "gpgv",
    "xz-utils",
];

/// Debian packages that only save time: each is installed on its own and
/// one the archive cannot give leaves a line, not a failed run. LLVM's
/// prebuilt libFuzzer for the fuzz step (xtask/src/fuzz.rs), in place of
/// building libfuzzer-sys's C++ copy.
const TIME_SAVING_PACKAGES: &[&str] = &["libclang-rt-16-dev"];

type Step = (&'static str, fn() -> Result);

const STEPS: &[Step] = &[
    ("fmt", fmt),
    ("clippy", clippy),
    ("test", test),
    ("loom model of the userpage seqlock reader", loom),
    (
        "examples (stat, printf, watchpoint, sample, hello, ringset_mio)",
        example,
    ),
    (
        "criterion adapter: oldest and newest criterion, short mode",
        criterion_adapter,
    ),
    (
        "doc: default features and --no-default-features, -D warnings",
        doc,
    ),
    (
        "MSRV: cargo check with the rust-version toolchain",
        crate::msrv::main,
    ),
    (
        "links of README/ARCHITECTURE/CONTRIBUTING/CHANGELOG",
        crate::links::main,
    ),
    (
        "package: publish --dry-run without warnings, the unpacked crate builds and runs",
        crate::package::main,
    ),
    ("public API vs the snapshot", public_api),
    (
        "public-API check fails on a removed public item",
        crate::public_api::can_fail,
    ),
    ("bindgen --check", ci_bindgen::bindgen_check),
    (
        "bindgen --check fails on a changed byte",
        ci_bindgen::bindgen_check_can_fail,
    ),
    (
        "abi --check: every architecture vs clang, host vs cc, history",
        abi,
    ),
    ("cross-architecture check", cross),
    (
        "vendor tables: --check against the pinned source, and jevents.py on it",
        vendor_tables,
    ),
    (
        "miri: parser tests, beside fuzz: every parser, bounded",
        miri_beside_fuzz,
    ),
    ("feature bindgen", ci_bindgen::feature_bindgen),
];

/// The lab's name in the summary: it runs beside the steps above.
const LAB: &str = "lab (QEMU guests), beside the steps above";

/// How every build of CI compiles, set for each cargo the steps start (the
/// lab's guest builds included) and exported by `.ci/run` before it builds
/// xtask itself: a setting that differs gives a dependency another
/// metadata hash, and the test step compiled xtask's dependencies (bindgen,
/// public-api, serde) a second time. A unit test keeps `.ci/run` equal.
///
/// - Debug builds with line tables only: file and line in backtraces and
///   panics, no variable or type information, which no step reads (the
///   full debug info was a large part of the `test` step's compile and
///   link time).
/// - No incremental compilation: CI builds a fresh clone and never edits,
///   so its caches are never read (about a tenth of a workspace package's
///   compile time, as measured for the lab's guest builds).
/// - Four codegen units per crate instead of 256 (a non-incremental dev
///   build) or 16 (release): each unit compiles again the inline and
///   generic code it uses, so fewer units cost less CPU in all, and CI's two
///   CPUs are always busy (the lab runs beside every step). The `set` and
///   `ring` test binaries with their dependencies: 55.3 CPU-s with 256
///   units, 45.3 with 4 (44.5 with 1), and less wall time too.
pub(crate) const BUILD_SETTINGS: &[(&str, &str)] = &[
    ("CARGO_PROFILE_DEV_DEBUG", "line-tables-only"),
    ("CARGO_INCREMENTAL", "0"),
    ("CARGO_PROFILE_DEV_CODEGEN_UNITS", "4"),
    ("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "4"),
];

/// Compiler processes at a time for every cargo CI starts (the lab's guest
/// builds included): two per CPU, where cargo's default is one. On a
/// quiet machine the CPUs are busy either way (the lab fills what a step
/// leaves idle). Beside other work (one CPU hog per CPU), the scheduler
/// shares the CPUs among runnable tasks, and a run with one compiler per
/// CPU got a quarter of the machine in the `test` step (451 CPU-s in
/// 910 s) and a tenth in `cross`'s one-crate checks (223 CPU-s in
/// 1,245 s): 69 minutes for 27 minutes of quiet work. Not part of
/// [`BUILD_SETTINGS`]: the number of jobs never changes what is built, so
/// xtask's own build need not share it.
fn build_jobs() -> usize {
    2 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs every step and reports.
pub fn main() -> Result {
    shell::step("installing what CI needs");
    shell::apt_install(PACKAGES)?;
    for package in TIME_SAVING_PACKAGES {
        if let Err(e) = shell::apt_install(&[package]) {
            eprintln!("{package} not installed ({e}): the steps that use it do without");
        }
    }
    shell::rustup_components("stable", &["rustfmt", "clippy"])?;
    for (name, value) in BUILD_SETTINGS {
        std::env::set_var(name, value);
    }
    if std::env::var_os("CARGO_BUILD_JOBS").is_none() {
        std::env::set_var("CARGO_BUILD_JOBS", build_jobs().to_string());
    }
    let started = Instant::now();
    let lab = Lab::start()?;
    let mut summary = Vec::new();
    for (name, run) in STEPS {
        shell::step(name);
        let t = Instant::now();
        let cpu = CpuTime::now();
        let result = match run() {
            // The archive, not the project, kept the step from running (a
            // pinned header package gone or unreachable): listed at the end.
            Err(e) if e.starts_with(headers::UNAVAILABLE) => {
                eprintln!("step `{name}` could not run: {e}");
                NOTES
                    .lock()
                    .expect("no panic while holding it")
                    .push(format!("step `{name}` left out: {e}"));
                Ok(())
            }
            other => other,
        };
        if let Err(e) = &result {
            eprintln!("step `{name}` failed: {e}");
        }
        summary.push((
            *name,
            result.is_ok(),
            t.elapsed().as_secs_f64(),
            cpu.busy(),
            cpu.own_secs(),
        ));
    }
    lab.steps_done();
    shell::step(LAB);
    let t = Instant::now();
    let cpu = CpuTime::now();
    let result = lab.finish();
    let lab_cpu = cpu.own_secs();
    if let Err(e) = &result {
        eprintln!("step `{LAB}` failed: {e}");
    }
    eprintln!(
        "the lab ended {:.0} s after the other steps",
        t.elapsed().as_secs_f64()
    );
    summary.push((
        LAB,
        result.is_ok(),
        started.elapsed().as_secs_f64(),
        cpu.busy(),
        lab_cpu,
    ));
    let all_cpu: f64 = summary.iter().map(|s| s.4).sum();
    eprintln!(
        "\n==> summary ({:.0} s, {all_cpu:.0} CPU-s; the lab ran beside the other steps \
         from their start, so its time is the whole run's; cpu: CPU seconds the step spent \
         itself; busy: the machine's CPUs in use during the step, the lab's included)",
        started.elapsed().as_secs_f64()
    );
    for (name, ok, secs, busy, cpu) in &summary {
        eprintln!(
            "  {:<4} {secs:>6.1} s  cpu {cpu:>6.0} s  busy {busy}  {name}",
            if *ok { "ok" } else { "FAIL" }
        );
    }
    let notes = NOTES.lock().expect("no panic while holding it");
    if !notes.is_empty() {
        eprintln!("\n==> left out, not failed (outside the repository):");
        for note in notes.iter() {
            eprintln!("  - {note}");
        }
    }
    let failed: Vec<&str> = summary.iter().filter(|s| !s.1).map(|s| s.0).collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("CI steps failed: {}", failed.join(", ")))
    }
}

fn fmt() -> Result {
    shell::run(shell::cargo(None).args(["fmt", "--all", "--", "--check"]))
}

/// Runs every command, also after one failed, and fails naming each that
/// failed: within a step, one failure never hides the others.
fn run_all(commands: impl IntoIterator<Item = Command>) -> Result {
    let failed: Vec<String> = commands
        .into_iter()
        .filter_map(|mut cmd| shell::run(&mut cmd).err())
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("; "))
    }
}

fn clippy() -> Result {
    let mut all = shell::cargo(None);
    all.args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]);
    // The core without std is what embedded and no_std users build.
    let mut no_std = shell::cargo(None);
    no_std.args([
        "clippy",
        "--lib",
        "--no-default-features",
        "--",
        "-D",
        "warnings",
    ]);
    run_all([all, no_std])
}

fn test() -> Result {
    // abi-tests needs clang and the pinned headers: the `abi` step runs it.
    // --no-fail-fast: every test binary runs, so one that fails never
    // hides the results of the others.
    let mut workspace = shell::cargo(None);
    workspace.args([
        "test",
        "--workspace",
        "--exclude",
        "abi-tests",
        "--exclude",
        "perf-event-vendor",
        "--no-fail-fast",
    ]);
    // perf-event-vendor's proofs against perf's own generator (the tests
    // named `oracle`) run in the `vendor tables` step, after it has fetched
    // the kernel source, and required to run there: here they would run a
    // second time (about 25 CPU-s).
    let mut vendor = shell::cargo(None);
    vendor.args([
        "test",
        "-p",
        "perf-event-vendor",
        "--no-fail-fast",
        "--",
        "--skip",
        "oracle",
    ]);
    run_all([workspace, vendor])
}

/// perf-event-vendor's tables: `cargo xtask vendor-events --check` (the
/// committed files are what each pinned kernel source generates), then its
/// proof against perf's own jevents.py and glibc's regexec with the source
/// it fetched, required to run (`PERF_EVENT_VENDOR_ORACLE=require`). A
/// source the archive cannot give is a note, not a failure.
fn vendor_tables() -> Result {
    // Fetching, verifying and unpacking the pinned source is all that
    // depends on the archive: its failure is the archive's.
    for pin in crate::lab::linux_source_pins() {
        if let Err(e) = crate::lab::linux_source(pin) {
            return Err(format!(
                "{} (the pinned kernel source {}): {e}",
                headers::UNAVAILABLE,
                pin.package
            ));
        }
    }
    crate::vendor_events::main(&["--check".to_owned()])?;
    shell::run(
        shell::cargo(None)
            .args(["test", "-p", "perf-event-vendor", "--lib", "--", "oracle"])
            .env("PERF_EVENT_VENDOR_ORACLE", "require"),
    )?;
    // The `test` step builds the default features: here the lookups and
    // doc tests of the Linux 6.1 tables too.
    for target in ["--test=lookups", "--doc"] {
        shell::run(shell::cargo(None).args([
            "test",
            "-p",
            "perf-event-vendor",
            "--features",
            "linux-6-1",
            target,
        ]))?;
    }
    Ok(())
}

/// The loom model (`tests/userpage_loom.rs`, a test target of its own): the reader's atomics become
/// loom's under `--cfg loom`. Its own target directory, so the changed
/// RUSTFLAGS do not invalidate the other steps' builds.
fn loom() -> Result {
    let mut cmd = shell::cargo(None);
    cmd.args([
        "test",
        "--release",
        "--package",
        "perf-event-tests",
        "--test",
        "userpage_loom",
    ]);
    // `--cfg loom` changes every crate's flags, so this build compiles all
    // of the package's dependencies and dev-dependencies again, in
    // release. The model runs only loom (with what it calls while it
    // explores) and the crate's reader: everything else unoptimized, which
    // is a fraction of the build's time.
    cmd.args(["--config", "profile.release.package.\"*\".opt-level=0"]);
    for package in LOOM_RUNS {
        cmd.arg("--config")
            .arg(format!("profile.release.package.{package}.opt-level=3"));
    }
    shell::run(
        cmd.env("RUSTFLAGS", "--cfg loom")
            .env("CARGO_TARGET_DIR", shell::root().join("target/loom")),
    )
}

/// The dependencies the loom model runs (loom's own), optimized; the
/// workspace's packages keep the release profile.
const LOOM_RUNS: &[&str] = &[
    "loom",
    "generator",
    "scoped-tls",
    "tracing",
    "tracing-core",
    "tracing-subscriber",
];

/// The cross check, less the default-features builds of the targets that
/// the `test` step (the host's) and the lab's guest builds compile in full
/// with default features.
fn cross() -> Result {
    let host = shell::output(Command::new("rustc").arg("-vV"))?;
    let host = host
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .ok_or("rustc -vV names no host")?;
    let mut built: Vec<&str> = crate::lab::guests::Arch::ALL
        .iter()
        .map(|a| a.rust_target())
        .collect();
    built.push(host);
    crate::cross::check(&built)
}

fn abi() -> Result {
    crate::abi::main(&["--check".to_owned()])
}

fn example() -> Result {
    // The README's first command, then every other example, each in its
    // package.
    let mut commands = vec![shell::cargo(None)];
    commands[0].args([
        "run",
        "--release",
        "-p",
        "perf-event-host",
        "--example",
        "stat",
        "--",
        "ls",
        "-l",
        "/",
    ]);
    for (package, example, args) in [
        ("perf-event-core", "printf", &[][..]),
        ("perf-event-core", "watchpoint", &[][..]),
        (
            "perf-data-file",
            "sample",
            &[
                "sh",
                "-c",
                "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done",
            ][..],
        ),
        ("perf-event-core", "hello", &[][..]),
        ("perf-event-host", "ringset_mio", &[][..]),
    ] {
        let mut cmd = shell::cargo(None);
        cmd.args([
            "run",
            "--release",
            "-p",
            package,
            "--example",
            example,
            "--",
        ])
        .args(args);
        commands.push(cmd);
    }
    run_all(commands)
}

/// perf-event-criterion with the oldest (0.5) and the newest (0.8)
/// criterion it supports, each a short run of its bench. What is checked is
/// that the adapter builds and measures with each, not how fast criterion
/// analyses: the registry packages (criterion and its plotting,
/// serialization and thread-pool dependencies, most of the step's build)
/// are compiled unoptimized, the workspace's own packages optimized.
fn criterion_adapter() -> Result {
    // Both benches in one cargo run: the two criterion versions' shared
    // dependencies (serde, regex, ...) are resolved and compiled once, with
    // one feature set, and the adapter once with both features (107 CPU-s
    // where two runs took 124).
    shell::run(shell::cargo(None).args([
        "bench",
        "-p",
        "perf-event-criterion",
        "--features",
        "criterion-0_5,criterion-0_8",
        "--bench",
        "oldest",
        "--bench",
        "newest",
        "--config",
        "profile.bench.package.\"*\".opt-level=0",
        "--",
        "--quick",
        "--noplot",
    ]))
}

fn doc() -> Result {
    let doc = |args: &[&str]| {
        let mut cmd = shell::cargo(None);
        cmd.arg("doc").args(args).env("RUSTDOCFLAGS", "-D warnings");
        cmd
    };
    let mut commands = vec![
        doc(&["--workspace", "--no-deps"]),
        // What no_std users read: the std-only modules are gone, and no
        // link may point at them.
        doc(&[
            "--no-deps",
            "-p",
            "perf-event-core",
            "--no-default-features",
        ]),
    ];
    // What docs.rs builds: each target of [package.metadata.docs.rs].
    let targets = docs_rs_targets()?;
    let names: Vec<&str> = targets.iter().map(String::as_str).collect();
    shell::rustup_targets("stable", &names)?;
    for target in &targets {
        commands.push(doc(&[
            "--no-deps",
            "-p",
            "perf-event-core",
            "--target",
            target,
        ]));
    }
    run_all(commands)
}

/// The `targets` of `[package.metadata.docs.rs]` in the root Cargo.toml.
fn docs_rs_targets() -> Result<Vec<String>> {
    let manifest = std::fs::read_to_string(shell::root().join("Cargo.toml"))
        .map_err(|e| format!("Cargo.toml: {e}"))?;
    let table = manifest
        .split("[package.metadata.docs.rs]")
        .nth(1)
        .ok_or("Cargo.toml has no [package.metadata.docs.rs]")?;
    let list = table
        .split("targets = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .ok_or("[package.metadata.docs.rs] has no targets list")?;
    Ok(list
        .split(',')
        .map(|t| t.trim().trim_matches('"').to_owned())
        .filter(|t| !t.is_empty())
        .collect())
}

fn public_api() -> Result {
    crate::public_api::main(&[])
}

/// Miri and the fuzzers each keep one CPU busy (Miri interprets on one
/// thread, each libFuzzer run is one process) for about four minutes, in
/// their own target directories: run side by side on two CPUs they take
/// the longer one's time, not the sum. Both run to the end; each failure
/// is named.
fn miri_beside_fuzz() -> Result {
    // The toolchain, Miri and cargo-fuzz first, one after the other: two
    // rustup or cargo-install runs at once on one toolchain could collide.
    crate::fuzz::ensure_tools()?;
    shell::rustup_components("nightly", &["miri", "rust-src"])?;
    let miri = std::thread::spawn(crate::fuzz::miri);
    let fuzz = crate::fuzz::main(crate::fuzz::CI_SECONDS).map_err(|e| format!("fuzz: {e}"));
    let miri = miri
        .join()
        .unwrap_or_else(|_| Err("the miri thread panicked".to_owned()))
        .map_err(|e| format!("miri: {e}"));
    match (miri, fuzz) {
        (Ok(()), Ok(())) => Ok(()),
        (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
        (Err(a), Err(b)) => Err(format!("{a}; {b}")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ci_run_exports_the_build_settings_before_building_xtask() {
        let script = std::fs::read_to_string(crate::shell::root().join(".ci/run")).unwrap();
        let exec = script
            .find("exec cargo xtask ci")
            .expect("`exec cargo xtask ci` in .ci/run");
        for (name, value) in super::BUILD_SETTINGS {
            let export = format!("export {name}={value}\n");
            let at = script
                .find(&export)
                .unwrap_or_else(|| panic!(".ci/run lacks `{}`", export.trim()));
            assert!(at < exec, "`{}` after the xtask build", export.trim());
        }
    }

    #[test]
    fn docs_rs_targets_come_from_the_manifest() {
        let targets = super::docs_rs_targets().unwrap();
        for main in [
            "x86_64-unknown-linux-gnu",
            "aarch64-unknown-linux-gnu",
            "riscv64gc-unknown-linux-gnu",
        ] {
            assert!(targets.iter().any(|t| t == main), "{main} in {targets:?}");
        }
    }
}
