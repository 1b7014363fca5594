//! No fd leaks from open and drop: 10,000 times on the host, 1,000 in the
//! lab's guests (each open and close is kernel work emulated there; a leak
//! shows from the first few, in the fd count and the fd numbers). The count of the process's fds is only
//! meaningful while no other test opens fds, so the test re-runs this test
//! binary with `--exact` for itself alone (the other tests of its area
//! binary run meanwhile in the parent) and does the check in that child.

use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Software};
use perf_event_core::open::{open, OpenFlags, Scope};
use std::process::Command;

/// Set in the child: run the check itself.
const ALONE_VAR: &str = "PERF_EVENT_CORE_FD_LEAK_ALONE";

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn check_alone() {
    let attr = Attr::new(Event::Software(Software::CpuClock)).disabled(true);
    let before = open_fds();
    let mut highest = 0;
    let times = if crate::lab_support::lab_guest() {
        1_000
    } else {
        10_000
    };
    for _ in 0..times {
        let fd = open(&attr, Scope::this_thread(), None, OpenFlags::new()).unwrap();
        highest = highest.max(fd.raw());
        drop(fd);
    }
    assert_eq!(open_fds(), before);
    // Each drop closed its fd, so the kernel reused the same low numbers.
    assert!(
        highest < before as i32 + 8,
        "fd numbers climbed to {highest}"
    );
}

#[test]
fn opening_and_dropping_events_leaks_no_fd() {
    if std::env::var_os(ALONE_VAR).is_some() {
        check_alone();
        return;
    }
    // libtest names the test's thread with the test's full name.
    let name = std::thread::current().name().unwrap().to_owned();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &name, "--test-threads=1", "--nocapture"])
        .env(ALONE_VAR, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the check alone failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    // `--exact` with a wrong name runs nothing and still succeeds.
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "the child ran no test named {name}:\n{stdout}"
    );
}
