//! A test suite that asserts perf event counts per iteration with
//! `perf_event_host::measure::stats`, as a user's own tests would: page
//! faults of a function that touches fresh pages (a software event, so on
//! every machine and in every guest).

use perf_event_core::linux::mmap::page_size;
use perf_event_core::monitor::{Counter, Threads};
use perf_event_host::measure::event_counter;
use perf_event_host::measure::stats::{measure, Runs};

const PAGES: usize = 16;

/// Maps `PAGES` fresh private anonymous pages, writes one byte of each
/// (one page fault each) and unmaps them.
fn touch_fresh_pages() -> u8 {
    let page = page_size();
    // SAFETY: a private anonymous mapping, written within its bounds and
    // unmapped before returning.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            PAGES * page,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        for i in 0..PAGES {
            std::ptr::write_volatile(p.cast::<u8>().add(i * page), 1);
        }
        let v = std::ptr::read_volatile(p.cast::<u8>());
        libc::munmap(p, PAGES * page);
        v
    }
}

#[test]
fn each_call_faults_in_its_pages() {
    let counter = event_counter("page-faults").unwrap_or_else(|e| panic!("{e}"));
    let mut m = Counter::open(&[counter], Threads::Caller).unwrap_or_else(|e| panic!("{e}"));
    let report = measure(&mut m, &Runs::new(21), touch_fresh_pages).unwrap();
    let faults = &report.counters[0];
    println!("page faults: {faults}");
    assert!(
        (PAGES as f64..PAGES as f64 + 2.0).contains(&faults.median),
        "{faults}"
    );
    assert_eq!(faults.running_fraction, 1.0);
}
