//! Draining several rings on a tracepoint storm (see BENCHMARKS.md):
//!
//! ```sh
//! cargo run --release -p bench --bin ringset
//! ```
//!
//! 1. Drain cost per record from R = 2, 4 and 16 rings, all fed by the same
//!    stream (sys_enter_prctl, period 1, IP | TID | TIME, on this thread):
//!    perf-event-core's `RingSet::drain` + `record::parse` + the ip / tid /
//!    time accessors; perf-event2 (one `Sampler` per ring, `next_record` +
//!    `parse_record`); and a minimal raw reader walking the headers and
//!    reading the three fields at their fixed offsets. Each round refills
//!    every ring with the same K prctls, then times each reader (rotating
//!    who goes first); medians over rounds and paired ratios.
//! 2. The time-ordered merge per record: `fill` + `next_ordered` +
//!    `record` + `release` over the same R rings, and `drain_ordered` (the
//!    same merge by internal iteration), each with its paired ratio to
//!    drain + parse (min / median / max over rounds; issue 27's target is
//!    2). `ringset count [R]`: two rounds only, for
//!    `valgrind --tool=callgrind` (instructions per record of each reader:
//!    the inclusive counts of `merge_ours`, `merge_each` and `drain_ours`).
//! 3. Lost records under a storm on every CPU with small rings, read
//!    concurrently: perf-event-core's ring set vs perf-event2's samplers;
//!    received + lost == generated for both.
//! 4. Writing perf.data: the drain of part 1 with every record written
//!    by `perf_data::Writer` to a file (one round per drain, as perf
//!    record), per record next to the drain's; and under the storm of
//!    part 3, the ring set drained into a perf.data file loses no more
//!    than the ring set drained alone (received + lost == generated).

mod loss;
mod write;

use perf_bench::raw_ring::Raw;
use perf_bench::storm::{prctls, tracepoint_id};
use perf_event::events::Tracepoint;
use perf_event::{Builder, SampleFlag};
use perf_event_core::attr::Attr;
use perf_event_core::event::Event;
use perf_event_core::fd::EventFd;
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::record::{Record, SampleLayout};
use perf_event_core::sys;
use perf_event_host::ringset::{Entry, Options, RingSet};
use std::hint::black_box;
use std::time::Instant;

const K: u32 = 5_000;
const ROUNDS: usize = 31;
const PAGES: usize = 64;

const SAMPLE: u64 = (sys::PERF_SAMPLE_IP | sys::PERF_SAMPLE_TID | sys::PERF_SAMPLE_TIME) as u64;

fn attr(id: u64) -> Attr {
    Attr::new(Event::Tracepoint(id))
        .disabled(true)
        .sample_period(1)
        .sample_type_raw(SAMPLE)
}

fn ours(id: u64, rings: usize, scope: impl Fn(usize) -> Scope, pages: usize) -> RingSet {
    let a = attr(id);
    let entries = (0..rings)
        .map(|i| {
            let s = scope(i);
            Entry {
                fd: open(&a, s, None, OpenFlags::new()).unwrap_or_else(|e| panic!("{e}")),
                event: 0,
                layout: SampleLayout::from_attr(&a),
                cpu: s.cpu(),
                thread: s.pid(),
            }
        })
        .collect();
    let opts = Options {
        data_pages: pages,
        // 16 rings x K records fit without a forced release.
        max_held: 1 << 17,
        ..Options::default()
    };
    RingSet::new(entries, opts).unwrap_or_else(|e| panic!("{e}"))
}

fn pe2(
    id: u64,
    rings: usize,
    one_cpu: impl Fn(usize) -> Option<(usize, i32)>,
    pages: usize,
) -> Vec<perf_event::Sampler> {
    (0..rings)
        .map(|i| {
            let mut b = Builder::new(Tracepoint::with_id(id));
            match one_cpu(i) {
                Some((cpu, tid)) => {
                    b.one_cpu(cpu).observe_pid(tid);
                }
                None => {
                    b.observe_self().any_cpu();
                }
            }
            b.sample_period(1)
                .sample(SampleFlag::IP | SampleFlag::TID | SampleFlag::TIME)
                .enabled(false);
            b.build().unwrap().sampled(pages * page_size()).unwrap()
        })
        .collect()
}

fn page_size() -> usize {
    perf_event_core::linux::mmap::page_size()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

#[inline(never)]
fn drain_ours(set: &mut RingSet) -> (u64, u64) {
    let layout = *set.layout(0).unwrap();
    let (mut n, mut sum) = (0u64, 0u64);
    // One scratch buffer for the records that wrap the ring's end.
    let mut scratch = [0u8; 64];
    set.drain(|_, _, rec| {
        if let Ok(p) = rec.parse(&layout, &mut scratch) {
            if let Record::Sample(s) = p.record {
                let tid = s.pid_tid().map_or(0, |p| p.1 as u64);
                sum = sum.wrapping_add(s.ip().unwrap_or(0) ^ tid ^ s.time().unwrap_or(0));
                n += 1;
            }
        }
    });
    (n, sum)
}

/// A profiler's hot path: `RingSet::drain` with the three fields read
/// through `SampleLayout::prefix()` (offsets computed once per layout; a
/// record that wraps the ring's end is copied first).
#[inline(never)]
fn drain_prefix(set: &mut RingSet) -> (u64, u64) {
    let prefix = set.layout(0).unwrap().prefix();
    let (mut n, mut sum) = (0u64, 0u64);
    let mut scratch = [0u8; 64];
    set.drain(|_, _, rec| {
        let Ok(bytes) = rec.bytes(&mut scratch) else {
            return;
        };
        if prefix.is_sample(bytes) {
            let tid = prefix.pid_tid(bytes).map_or(0, |p| p.1 as u64);
            sum = sum.wrapping_add(
                prefix.ip(bytes).unwrap_or(0) ^ tid ^ prefix.time(bytes).unwrap_or(0),
            );
            n += 1;
        }
    });
    (n, sum)
}

/// The ring set's own part: the walk, without parsing the records.
#[inline(never)]
fn walk_ours(set: &mut RingSet) -> u64 {
    let mut n = 0u64;
    set.drain(|_, _, rec| {
        n += u64::from(rec.header.kind == sys::PERF_RECORD_SAMPLE);
    });
    n
}

fn drain_pe2(samplers: &mut [perf_event::Sampler]) -> (u64, u64) {
    let (mut n, mut sum) = (0u64, 0u64);
    for s in samplers {
        while let Some(rec) = s.next_record() {
            if let Ok(perf_event::data::Record::Sample(smp)) = rec.parse_record() {
                sum = sum.wrapping_add(
                    smp.ip().unwrap_or(0)
                        ^ u64::from(smp.tid().unwrap_or(0))
                        ^ smp.time().unwrap_or(0),
                );
                n += 1;
            }
        }
    }
    (n, sum)
}

#[inline(never)]
fn merge_ours(set: &mut RingSet) -> u64 {
    let mut n = 0;
    loop {
        set.fill();
        let before = n;
        // The writers are disabled: everything read can be released.
        while let Some(h) = set.next_ordered().or_else(|| set.flush_next()) {
            if let Ok(rec) = set.record(&h) {
                black_box(rec.header);
            }
            set.release(h);
            n += 1;
        }
        if n == before {
            return n;
        }
    }
}

/// The same merge by internal iteration: `RingSet::drain_ordered` (fill,
/// then each record handed over and given back at once, no lending).
#[inline(never)]
fn merge_each(set: &mut RingSet) -> u64 {
    let mut n = 0;
    loop {
        // The writers are disabled: everything read can be released.
        let got = set.drain_ordered(true, |_, rec| {
            black_box(rec.header);
        });
        if got == 0 {
            return n;
        }
        n += got as u64;
    }
}

fn drain_bench(id: u64, rings: usize, rounds: usize) {
    let mut a = ours(id, rings, |_| Scope::this_thread(), PAGES);
    let mut m = ours(id, rings, |_| Scope::this_thread(), PAGES);
    let mut w = ours(id, rings, |_| Scope::this_thread(), PAGES);
    let mut f = ours(id, rings, |_| Scope::this_thread(), PAGES);
    let mut pd = ours(id, rings, |_| Scope::this_thread(), PAGES);
    let mut mo = ours(id, rings, |_| Scope::this_thread(), PAGES);
    let mut b = pe2(id, rings, |_| None, PAGES);
    let mut raws: Vec<Raw> = (0..rings).map(|_| Raw::new(&attr(id), PAGES)).collect();
    let fds: Vec<&EventFd> = (0..rings)
        .flat_map(|e| {
            [
                a.fd(e).unwrap(),
                m.fd(e).unwrap(),
                w.fd(e).unwrap(),
                f.fd(e).unwrap(),
                pd.fd(e).unwrap(),
                mo.fd(e).unwrap(),
            ]
        })
        .chain(raws.iter().map(|r| &r.fd))
        .collect();
    let raw_fds: Vec<i32> = fds.iter().map(|f| f.raw()).collect();
    let mut times: [Vec<f64>; 8] = Default::default();
    let path = write::perf_data_path("drain");
    let total = (K as usize * rings) as f64;
    for round in 0..rounds + 1 {
        for &fd in &raw_fds {
            // SAFETY: enabling a perf fd we own.
            unsafe { libc::ioctl(fd, sys::PERF_EVENT_IOC_ENABLE as _, 0) };
        }
        for s in b.iter_mut() {
            s.enable().unwrap();
        }
        prctls(libc::PR_GET_DUMPABLE, K);
        for s in b.iter_mut() {
            s.disable().unwrap();
        }
        for &fd in &raw_fds {
            // SAFETY: disabling a perf fd we own.
            unsafe { libc::ioctl(fd, sys::PERF_EVENT_IOC_DISABLE as _, 0) };
        }
        let mut results = [(0u64, 0f64); 8];
        // A new file each round (made before the timing).
        let mut writer = Some(write::perf_data_writer(&path, id, &pd));
        for k in 0..8 {
            let i = (round + k) % 8;
            let t = Instant::now();
            let n = match i {
                0 => black_box(drain_ours(&mut a)).0,
                1 => black_box(drain_pe2(&mut b)).0,
                2 => raws.iter_mut().map(|r| black_box(r.drain()).0).sum(),
                3 => merge_ours(&mut m),
                4 => black_box(walk_ours(&mut w)),
                5 => black_box(drain_prefix(&mut f)).0,
                7 => merge_each(&mut mo),
                _ => black_box(write::write_ours(&mut pd, writer.as_mut().unwrap())),
            };
            results[i] = (n, t.elapsed().as_nanos() as f64);
        }
        writer.take().unwrap().finish().unwrap();
        for (i, (n, ns)) in results.iter().enumerate() {
            assert_eq!(*n as f64, total, "reader {i} got {n} records of {total}");
            if round > 0 {
                times[i].push(ns / total);
            }
        }
    }
    let raw = median(&mut times[2].clone());
    println!("\n## drain, {rings} rings x {K} records (IP|TID|TIME), {rounds} rounds");
    println!("{:<48} {:>10} {:>12}", "reader", "ns/record", "x raw");
    for (i, name) in [
        "perf-event-core RingSet::drain + parse + ip/tid/time",
        "perf-event2 Sampler::next_record + parse_record",
        "raw reader (fixed offsets)",
        "perf-event-core time-ordered merge (fill/next/release)",
        "perf-event-core RingSet::drain alone (no parse)",
        "perf-event-core RingSet::drain + prefix ip/tid/time",
        "perf-event-core RingSet::drain + perf_data::Writer (file)",
        "perf-event-core time-ordered merge (drain_ordered)",
    ]
    .iter()
    .enumerate()
    {
        let mut ratios: Vec<f64> = times[i].iter().zip(&times[2]).map(|(a, b)| a / b).collect();
        let ns = median(&mut times[i].clone());
        println!("{name:<48} {ns:>10.2} {:>12.2}", median(&mut ratios));
    }
    // The merge against drain + parse of the same records, paired per round.
    let mut mr: Vec<f64> = times[3].iter().zip(&times[0]).map(|(a, b)| a / b).collect();
    mr.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "merge / (drain + parse), paired per round: min {:.2} median {:.2} max {:.2} \
         (target: <= 2)",
        mr[0],
        mr[mr.len() / 2],
        mr[mr.len() - 1]
    );
    let mut me: Vec<f64> = times[7].iter().zip(&times[0]).map(|(a, b)| a / b).collect();
    me.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "drain_ordered / (drain + parse), paired per round: min {:.2} median {:.2} max {:.2} \
         (target: <= 2)",
        me[0],
        me[me.len() / 2],
        me[me.len() - 1]
    );
    for (name, set) in [("fill/next/release", &m), ("drain_ordered", &mo)] {
        let st = set.merge_stats();
        assert_eq!((st.out_of_order, st.unguarded_rounds), (0, 0), "{name}");
    }
    for (name, set) in [("fill/next/release", &m), ("drain_ordered", &mo)] {
        let st = set.merge_stats();
        println!(
            "merge stats ({name}): released {} forced {} out_of_order {} unguarded_rounds {} \
             max_held {}",
            st.released, st.forced, st.out_of_order, st.unguarded_rounds, st.max_held
        );
    }
    let mut wr: Vec<f64> = times[6].iter().zip(&times[4]).map(|(a, b)| a - b).collect();
    println!(
        "perf_data::Writer's own cost (drain + write - drain alone, paired per round): \
         median {:.2} ns/record",
        median(&mut wr)
    );
    let _ = std::fs::remove_file(&path);
    let mut vs: Vec<f64> = times[1].iter().zip(&times[0]).map(|(a, b)| a / b).collect();
    println!(
        "perf-event2 / perf-event-core drain: {:.2}x (raw {raw:.2} ns)",
        median(&mut vs)
    );
}

fn main() {
    let id = tracepoint_id("syscalls", "sys_enter_prctl");
    // `ringset drain` / `ringset loss [N]`: one part only.
    let only = std::env::args().nth(1);
    // `ringset count`: a few rounds only, for `valgrind --tool=callgrind`.
    let rounds = if only.as_deref() == Some("count") {
        2
    } else {
        ROUNDS
    };
    if only.as_deref() != Some("loss") {
        // `ringset count R`: R rings only.
        let only_rings: Option<usize> = std::env::args().nth(2).and_then(|s| s.parse().ok());
        for rings in [1, 2, 4, 16] {
            if only_rings.is_none_or(|r| r == rings) {
                drain_bench(id, rings, rounds);
            }
        }
    }
    if only.as_deref() != Some("drain") && only.as_deref() != Some("count") {
        // `ringset loss N`: the N-th storm only.
        let only_storm = std::env::args().nth(2).and_then(|s| s.parse().ok());
        loss::loss_bench(id, only_storm);
    }
}
