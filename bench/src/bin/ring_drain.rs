//! Draining one perf ring (`RingBuffer`), the ways a user can write it,
//! against a raw reader reading the same three fields (see BENCHMARKS.md):
//!
//! ```sh
//! cargo run --release -p bench --bin ring_drain
//! ```
//!
//! Every reader has a ring of its own on the same tracepoint
//! (sys_enter_prctl, period 1, IP | TID | TIME, on this thread), so one
//! round of K prctls fills all of them with the same K samples; each
//! reader then drains its ring (the one going first rotates), and the time
//! per record is compared with the raw reader's of the same round.

use perf_bench::raw_ring::Raw;
use perf_bench::spread::min_median_max;
use perf_bench::storm::{prctls, tracepoint_id};
use perf_event_core::attr::Attr;
use perf_event_core::event::Event;
use perf_event_core::fd::EventFd;
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::record::{Record, SampleLayout, SamplePrefix};
use perf_event_core::ring::RingBuffer;
use perf_event_core::sys;
use std::hint::black_box;
use std::ops::ControlFlow;
use std::time::Instant;

const K: u32 = 5_000;
const ROUNDS: usize = 41;
const PAGES: usize = 64;

const SAMPLE: u64 = (sys::PERF_SAMPLE_IP | sys::PERF_SAMPLE_TID | sys::PERF_SAMPLE_TIME) as u64;

/// The readers, in the order of the table.
const READERS: [&str; 5] = [
    "raw reader (fixed offsets)",
    "records() + next() alone (the walk)",
    "records() + next() + parse + ip/pid_tid/time",
    "records() + next() + sample prefix ip/pid_tid/time",
    "peek().each + sample prefix ip/pid_tid/time + commit",
];

/// One reader's event and ring.
struct Ring {
    fd: EventFd,
    ring: RingBuffer,
}

impl Ring {
    fn new(attr: &Attr) -> Ring {
        let fd = open(attr, Scope::this_thread(), None, OpenFlags::new())
            .unwrap_or_else(|e| panic!("{e}"));
        let ring = RingBuffer::map(&fd, PAGES).unwrap_or_else(|e| panic!("{e}"));
        Ring { fd, ring }
    }
}

/// The three fields through the prefix: (1 if a sample, their sum).
#[inline(always)]
fn prefix_fields(prefix: &SamplePrefix, bytes: &[u8]) -> (u64, u64) {
    if !prefix.is_sample(bytes) {
        return (0, 0);
    }
    let tid = prefix.pid_tid(bytes).map_or(0, |p| u64::from(p.1));
    (
        1,
        prefix.ip(bytes).unwrap_or(0) ^ tid ^ prefix.time(bytes).unwrap_or(0),
    )
}

#[inline(never)]
fn walk(r: &mut Ring) -> (u64, u64) {
    let mut n = 0;
    let mut batch = r.ring.records();
    while let Some(Ok(rec)) = batch.next() {
        n += u64::from(rec.header.kind == sys::PERF_RECORD_SAMPLE);
    }
    (n, 0)
}

#[inline(never)]
fn records_parse(r: &mut Ring, layout: &SampleLayout) -> (u64, u64) {
    let (mut n, mut sum) = (0, 0u64);
    let mut scratch = [0u8; 64];
    let mut batch = r.ring.records();
    while let Some(Ok(rec)) = batch.next() {
        if let Ok(p) = rec.parse(layout, &mut scratch) {
            if let Record::Sample(s) = p.record {
                let tid = s.pid_tid().map_or(0, |p| u64::from(p.1));
                sum = sum.wrapping_add(s.ip().unwrap_or(0) ^ tid ^ s.time().unwrap_or(0));
                n += 1;
            }
        }
    }
    (n, sum)
}

#[inline(never)]
fn records_prefix(r: &mut Ring, prefix: &SamplePrefix) -> (u64, u64) {
    let (mut n, mut sum) = (0, 0u64);
    let mut scratch = [0u8; 64];
    let mut batch = r.ring.records();
    while let Some(Ok(rec)) = batch.next() {
        if let Ok(b) = rec.bytes(&mut scratch) {
            let (one, s) = prefix_fields(prefix, b);
            n += one;
            sum = sum.wrapping_add(s);
        }
    }
    (n, sum)
}

#[inline(never)]
fn peek_each_prefix(r: &mut Ring, prefix: &SamplePrefix) -> (u64, u64) {
    let (mut n, mut sum) = (0, 0u64);
    let mut scratch = [0u8; 64];
    let mut peek = r.ring.peek(r.ring.tail());
    let error = peek.each(|_, _, rec| {
        if let Ok(b) = rec.bytes(&mut scratch) {
            let (one, s) = prefix_fields(prefix, b);
            n += one;
            sum = sum.wrapping_add(s);
        }
        ControlFlow::Continue(())
    });
    assert!(error.is_none(), "{error:?}");
    let end = peek.pos();
    r.ring.commit(end).unwrap();
    (n, sum)
}

fn main() {
    let id = tracepoint_id("syscalls", "sys_enter_prctl");
    let attr = Attr::new(Event::Tracepoint(id))
        .disabled(true)
        .sample_period(1)
        .sample_type_raw(SAMPLE);
    let layout = SampleLayout::from_attr(&attr);
    let prefix = layout.prefix();
    let mut raw = Raw::new(&attr, PAGES);
    let mut rings: Vec<Ring> = (1..READERS.len()).map(|_| Ring::new(&attr)).collect();
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); READERS.len()];
    for round in 0..=ROUNDS {
        let fds = std::iter::once(&raw.fd).chain(rings.iter().map(|r| &r.fd));
        for fd in fds.clone() {
            fd.enable(false).unwrap();
        }
        prctls(libc::PR_GET_DUMPABLE, K);
        for fd in fds {
            fd.disable(false).unwrap();
        }
        let mut results = vec![(0u64, 0f64); READERS.len()];
        for k in 0..READERS.len() {
            let i = (round + k) % READERS.len();
            let t = Instant::now();
            let (n, sum) = match i {
                0 => raw.drain(),
                1 => walk(&mut rings[0]),
                2 => records_parse(&mut rings[1], &layout),
                3 => records_prefix(&mut rings[2], &prefix),
                _ => peek_each_prefix(&mut rings[3], &prefix),
            };
            black_box(sum);
            results[i] = (n, t.elapsed().as_nanos() as f64);
        }
        for (i, (n, ns)) in results.iter().enumerate() {
            assert_eq!(*n, u64::from(K), "{}: {n} samples of {K}", READERS[i]);
            // Round 0 warms the caches and the branch predictors.
            if round > 0 {
                times[i].push(ns / f64::from(K));
            }
        }
    }
    println!("## one ring, {K} samples (IP|TID|TIME) per round, {ROUNDS} rounds");
    println!(
        "{:<54} {:>22} {:>22}",
        "reader", "ns/record min/med/max", "x raw (paired) min/med/max"
    );
    for (i, name) in READERS.iter().enumerate() {
        let (lo, med, hi) = min_median_max(&times[i]);
        let ratios: Vec<f64> = times[i].iter().zip(&times[0]).map(|(a, b)| a / b).collect();
        let (rlo, rmed, rhi) = min_median_max(&ratios);
        println!("{name:<54} {lo:>6.2} {med:>6.2} {hi:>7.2} {rlo:>8.2}x {rmed:>5.2}x {rhi:>5.2}x");
    }
}
