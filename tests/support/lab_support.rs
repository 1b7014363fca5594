//! Shared by the integration tests that need a particular machine (a PMU,
//! tracefs) or kernel: how such a test says that it did not run here, facts
//! about the running kernel, and the lab's deliberate-failure switch.
//!
//! A test that cannot run on this machine calls [`skip`] (or
//! [`not_applicable`], for what the lab provides) and returns. libtest still
//! counts it as passed, so the skip is made visible in two places, both on
//! the process's stderr (which libtest does not capture):
//!
//! ```text
//! SKIPPED NAME (needs tracefs): tracefs is not mounted and ...
//! ...
//! 2 tests of this binary were SKIPPED here: 2 need tracefs
//! ```
//!
//! the second line when the test binary exits. [`not_applicable`] also
//! prints one machine-readable line on stdout (visible with `--nocapture`):
//!
//! ```text
//! LAB-NOT-APPLICABLE <test name> needs=<need>: <reason>
//! ```
//!
//! `cargo xtask lab` runs these tests on the host and in QEMU guests, shows
//! such a run as `n/a` in its matrix, and fails unless the test *passed* on
//! every guest that provides `<need>` and on at least one machine (see
//! `xtask/src/lab/guests.rs`).

#![allow(dead_code)] // each test file uses a part

#[path = "needs.rs"]
mod needs;
/// What a test may need: the one list (`tests/support/needs.rs`), shared
/// with the lab (`xtask/src/lab/guests.rs`).
pub use needs::Need;

/// Reports that the calling test did not run on this machine, and why, for
/// the lab too ([`Need`]). The test must return right after.
pub fn not_applicable(need: Need, reason: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("<unnamed test>");
    // A line of its own: libtest has already printed "test NAME ... ".
    println!(
        "\nLAB-NOT-APPLICABLE {test} needs={}: {reason}",
        need.token()
    );
    skip(&format!("needs {}", need.token()), reason);
}

/// Reports that the calling test did not run on this machine: `what` is
/// the short cause counted in the summary ("needs a hardware PMU"),
/// `reason` the details. Written straight to stderr (libtest captures only
/// `print!`/`eprint!`), and counted in the summary line printed when the
/// test binary exits. The test must return right after.
pub fn skip(what: &str, reason: &str) {
    use std::io::Write;
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("<unnamed test>").to_owned();
    let line = format!("SKIPPED {test} ({what}): {reason}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    let mut skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
    skipped.push(what.to_owned());
    static SUMMARY: std::sync::Once = std::sync::Once::new();
    SUMMARY.call_once(|| {
        // SAFETY: registers a plain extern "C" fn with no preconditions;
        // exit() runs it after libtest's own summary.
        unsafe { libc::atexit(print_summary) };
    });
}

static SKIPPED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// How many tests skipped, and why: "3 tests ... SKIPPED here: 2 need
/// tracefs, 1 needs a hardware PMU".
pub fn summary(skipped: &[String]) -> String {
    let mut by_cause: std::collections::BTreeMap<&str, usize> = Default::default();
    for what in skipped {
        *by_cause.entry(what.as_str()).or_default() += 1;
    }
    let causes: Vec<String> = by_cause
        .iter()
        .map(|(what, n)| {
            // "needs X" reads "2 need X".
            let what = match (what.strip_prefix("needs "), *n) {
                (Some(rest), n) if n > 1 => format!("need {rest}"),
                _ => (*what).to_owned(),
            };
            format!("{n} {what}")
        })
        .collect();
    let n = skipped.len();
    format!(
        "{n} test{} of this binary {} SKIPPED here: {}",
        if n == 1 { "" } else { "s" },
        if n == 1 { "was" } else { "were" },
        causes.join(", ")
    )
}

extern "C" fn print_summary() {
    use std::io::Write;
    let skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
    if !skipped.is_empty() {
        let line = format!("\n{}\n", summary(&skipped));
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}

/// The environment variable that makes the lab's tests fail on purpose
/// (set by the guests' init for `cargo xtask lab --break`).
pub const BREAK_VAR: &str = "PERF_EVENT_CORE_LAB_BREAK";

/// Fails the calling test when [`BREAK_VAR`] is set: proves that the lab
/// notices a failing guest test. Call it after the test's real checks.
pub fn deliberate_failure_point() {
    assert!(
        std::env::var_os(BREAK_VAR).is_none(),
        "{BREAK_VAR} is set: this test fails on purpose so `cargo xtask lab --break` \
         can prove that a failing guest test fails the lab"
    );
}

/// The variable the lab's guest init exports: the test runs in a QEMU TCG
/// guest, where every instruction is emulated (tens of times slower than
/// the host).
pub const GUEST_VAR: &str = "PERF_EVENT_CORE_LAB_GUEST";

/// Whether the test runs in one of the lab's QEMU guests ([`GUEST_VAR`]).
pub fn lab_guest() -> bool {
    std::env::var_os(GUEST_VAR).is_some()
}

/// The running kernel's release (`uname -r`), e.g. `6.12.117+deb12-amd64`.
pub fn kernel_release() -> String {
    // SAFETY: utsname is plain old data; uname fills it and returns 0.
    let uts = unsafe {
        let mut uts: libc::utsname = core::mem::zeroed();
        assert_eq!(libc::uname(&mut uts), 0, "uname failed");
        uts
    };
    // SAFETY: uname NUL-terminates `release` within the array.
    let release = unsafe { core::ffi::CStr::from_ptr(uts.release.as_ptr()) };
    release.to_string_lossy().into_owned()
}

/// `(major, minor)` of a release string: `6.12.117+deb12-amd64` -> (6, 12).
pub fn parse_version(release: &str) -> (u32, u32) {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let mut next = || {
        parts
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("cannot read a version from kernel release {release:?}"))
    };
    (next(), next())
}

/// Whether the running kernel accepts `PERF_FORMAT_LOST` (Linux 6.0) as a
/// stable backport: the 5.10 LTS series carries it (Debian's 5.10.223, the
/// lab's 5.10 guests, accepts it), so a version check alone would be wrong.
pub fn read_format_lost_backported() -> bool {
    kernel_version() == (5, 10)
}

/// `(major, minor)` of the running kernel.
pub fn kernel_version() -> (u32, u32) {
    parse_version(&kernel_release())
}

/// `perf_event_open(2)` on raw bytes: `attr` points to at least
/// `attr.size` readable bytes (the kernel may write `size` back on E2BIG).
/// Returns the fd or the errno.
///
/// # Safety
///
/// `attr` must point to a writable buffer whose first bytes form a
/// `perf_event_attr` header and that is at least as long as its `size`
/// field says (and at least `PERF_ATTR_SIZE_VER0` bytes).
pub unsafe fn perf_event_open(
    attr: *mut perf_event_core::sys::perf_event_attr,
    pid: libc::pid_t,
    cpu: libc::c_int,
    group: libc::c_int,
    flags: libc::c_ulong,
) -> Result<libc::c_int, i32> {
    // SAFETY: the caller guarantees the buffer; the other arguments are plain
    // integers.
    let fd = unsafe {
        libc::syscall(
            libc::c_long::from(perf_event_core::sys::__NR_perf_event_open),
            attr,
            pid,
            cpu,
            group,
            flags,
        )
    };
    if fd < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(-1))
    } else {
        Ok(fd as libc::c_int)
    }
}

/// Closes a file descriptor the test owns.
pub fn close(fd: libc::c_int) {
    // SAFETY: `fd` was opened by the test and is not used afterwards.
    unsafe { libc::close(fd) };
}

/// The symbolic name of an errno, for messages.
pub fn errno_name(errno: i32) -> String {
    let name = match errno {
        libc::E2BIG => "E2BIG",
        libc::EINVAL => "EINVAL",
        libc::ENOENT => "ENOENT",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::EACCES => "EACCES",
        libc::EPERM => "EPERM",
        libc::EFAULT => "EFAULT",
        libc::ENODEV => "ENODEV",
        _ => "",
    };
    format!("{name}({errno})")
}
