//! Loom model of the seqlock reader against the kernel-protocol writer of
//! the simulated page: loom runs every interleaving of the two threads (up
//! to a preemption bound) and lets every relaxed load return any value the
//! C11 memory model allows, so a missing fence or a too-weak ordering shows
//! up as a torn snapshot.
//!
//! Run with `RUSTFLAGS='--cfg loom' cargo test --release --test userpage_loom`
//! (a step of `cargo xtask ci`). Without `--cfg loom` this file is empty.

#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use perf_event_core::abi::bitfield::mmap_caps;
use perf_event_core::userpage::sim::{PageState, SimPage};
use perf_event_core::userpage::snapshot::Snapshot;
use perf_event_core::userpage::PageSource;
use std::sync::atomic::Ordering;

/// Update `k`: every field a different function of `k`. `time` adds the
/// time conversion fields to what the reader loads.
fn state(k: u64, time: bool) -> PageState {
    let mut caps = mmap_caps::CAP_USER_RDPMC.mask();
    if time {
        caps |= mmap_caps::CAP_USER_TIME.mask() | mmap_caps::CAP_USER_TIME_SHORT.mask();
    }
    PageState {
        index: k as u32 + 1,
        offset: 10 + k as i64,
        time_enabled: 20 + k,
        time_running: 30 + k,
        capabilities: caps,
        pmc_width: 40 + k as u16,
        time_shift: 50 + k as u16,
        time_mult: 60 + k as u32,
        time_offset: 70 + k,
        time_cycles: 80 + k,
        time_mask: 90 + k,
        counter: 100 + k,
    }
}

/// Panics unless every field of `s` comes from one update.
fn assert_whole(s: &Snapshot, time: bool) {
    let k = (s.offset - 10) as u64;
    let want = state(k, time);
    let mut got = PageState {
        index: s.index,
        offset: s.offset,
        time_enabled: s.time_enabled,
        time_running: s.time_running,
        capabilities: s.capabilities,
        pmc_width: s.pmc_width,
        counter: s.pmc.expect("cap_user_rdpmc and index != 0: counter read"),
        ..want
    };
    if time {
        let conv = s.time().expect("cap_user_time: conversion read");
        let (cycles, mask) = conv.short.expect("cap_user_time_short");
        got.time_shift = conv.time_shift;
        got.time_mult = conv.time_mult;
        got.time_offset = conv.time_offset;
        got.time_cycles = cycles;
        got.time_mask = mask;
    }
    assert_eq!(got, want, "torn snapshot under lock {}", s.seq);
    assert_eq!(
        u64::from(s.seq),
        2 * (k + 1),
        "lock does not match the fields"
    );
}

fn model(time: bool, updates: u64, bound: usize, read: fn(&SimPage) -> Option<Snapshot>) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(bound);
    builder.check(move || {
        let page = Arc::new(SimPage::new(&state(0, time)));
        let writer = {
            let page = page.clone();
            thread::spawn(move || {
                for k in 1..=updates {
                    page.publish(&state(k, time));
                }
            })
        };
        if let Some(s) = read(&page) {
            assert_whole(&s, time);
        }
        writer.join().expect("writer");
    });
}

fn seqlock_read(page: &SimPage) -> Option<Snapshot> {
    page.snapshot().ok()
}

#[test]
fn no_torn_snapshot_counter_fields() {
    model(false, 2, 2, seqlock_read);
}

#[test]
fn no_torn_snapshot_with_time_fields() {
    model(true, 1, 2, seqlock_read);
}

/// The bug of readers that load the lock with Acquire but close the
/// section with only a compiler barrier (no `fence(Acquire)` before the
/// second lock load): correct on x86, wrong on ARM. Loom must find a torn
/// snapshot, which proves the models above can fail.
#[test]
fn loom_finds_the_tear_of_a_reader_without_the_closing_fence() {
    fn broken(page: &SimPage) -> Option<Snapshot> {
        loop {
            let seq = page.load_lock(Ordering::Acquire);
            if seq & 1 != 0 {
                loom::thread::yield_now();
                continue;
            }
            let s = Snapshot {
                seq,
                index: page.load_index(),
                offset: page.load_offset(),
                time_enabled: page.load_time_enabled(),
                time_running: page.load_time_running(),
                capabilities: page.load_capabilities(),
                pmc_width: page.load_pmc_width(),
                // SAFETY: the simulated counter is a plain load.
                pmc: unsafe { page.read_counter(1) },
                time_shift: 0,
                time_mult: 0,
                time_offset: 0,
                time_cycles: 0,
                time_mask: 0,
                timestamp: None,
            };
            if page.load_lock(Ordering::Relaxed) == seq {
                return Some(s);
            }
            loom::thread::yield_now();
        }
    }
    let caught = std::panic::catch_unwind(|| model(false, 1, 2, broken));
    let message = caught
        .expect_err("loom found no torn snapshot in a reader without the closing fence")
        .downcast::<String>()
        .map(|s| *s)
        .unwrap_or_default();
    assert!(
        message.contains("torn") || message.contains("lock"),
        "{message}"
    );
}
