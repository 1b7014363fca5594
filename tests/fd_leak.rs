//! Alone in its test binary so no other test opens fds meanwhile.

use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Software};
use perf_event_core::open::{open, OpenFlags, Scope};

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn opening_and_dropping_10000_events_leaks_no_fd() {
    let attr = Attr::new(Event::Software(Software::CpuClock)).disabled(true);
    let before = open_fds();
    let mut highest = 0;
    for _ in 0..10_000 {
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
