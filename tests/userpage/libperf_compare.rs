//! The crate's user-space counter read against libperf's, in the lab's
//! aarch64 and riscv64 guests: instructions per read, measured the same
//! way (`read_cost::read_costs`), and libperf's value checked against
//! its own `read(2)` of the same counter.

use super::read_cost::{read_costs, COST_READS};
use super::userpage_pmu::{
    pmu_with_user_access, riscv64_pmu_with_user_access, CONFIG1_LONG, CONFIG1_USER,
};
use crate::lab_support;

/// libperf's `perf_evsel__read` (the kernel's `tools/lib/perf`, which
/// takes the user-space path itself) against `CounterReader::read`: the
/// same cycles event, the same bracketing instruction counter, 10^4 reads
/// each. `libperf-read` (bench/c/libperf_read.c) is built and put beside
/// the test binaries by `cargo xtask lab` for these guests. The crate's
/// read must cost no more instructions than libperf's, and libperf's
/// value must be the counter's (its user-space reads and its `read(2)`
/// of the same event in order).
fn libperf_comparison(arch: &str, config1: u64) {
    let exe = std::env::current_exe()
        .unwrap()
        .with_file_name("libperf-read");
    if !exe.is_file() {
        lab_support::skip(
            "needs libperf-read",
            &format!(
                "{} is not here: `cargo xtask lab` builds it for its aarch64 and riscv64 \
                 guests (its notes say why when it could not)",
                exe.display()
            ),
        );
        return;
    }
    let (_, ours, _) = read_costs(config1);
    let out = std::process::Command::new(&exe)
        .arg(format!("{config1:#x}"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}: {:?} {text}{}",
        exe.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let field = |name: &str| -> f64 {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{name}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name}= in {text:?}"))
    };
    let (libperf, libperf_syscall) = (field("per_read"), field("syscall_per_read"));
    let (user_value, syscall_value) = (field("user_value"), field("syscall_value"));
    println!(
        "LAB-BENCH {arch} libperf comparison, guest instructions (user+kernel) per read over \
         {COST_READS} reads: libperf perf_evsel__read {libperf:.1} (its read(2) path \
         {libperf_syscall:.1}), perf-event-core CounterReader::read {ours:.1}, ratio {:.2}",
        ours / libperf
    );
    assert!(
        // Below half a read(2): no system call in (nearly) every read.
        libperf * 2.0 < libperf_syscall,
        "libperf did not take its user-space path: {libperf:.1} instructions per read, \
         {libperf_syscall:.1} through read(2)"
    );
    assert!(
        0.0 < user_value && user_value <= syscall_value,
        "libperf's user-space value {user_value} then read(2) {syscall_value}"
    );
    assert!(
        ours <= libperf,
        "{arch}: CounterReader::read costs {ours:.1} instructions per read, libperf {libperf:.1}"
    );
}

/// aarch64: `CounterReader::read` against libperf's `perf_evsel__read`.
#[test]
fn aarch64_read_instructions_against_libperf() {
    if pmu_with_user_access() {
        libperf_comparison("aarch64", CONFIG1_USER | CONFIG1_LONG);
    }
}

/// riscv64: `CounterReader::read` against libperf's `perf_evsel__read`.
#[test]
fn riscv64_read_instructions_against_libperf() {
    if riscv64_pmu_with_user_access() {
        libperf_comparison("riscv64", 0);
    }
}
