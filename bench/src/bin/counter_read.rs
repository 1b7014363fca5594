//! `CounterReader::read` on its user-space path, over a simulated page (a
//! simulated counter and clock, so it runs without a PMU and under
//! valgrind): the counter-instruction path's own cost.
//!
//! ```sh
//! cargo run --release -p bench --bin counter_read            # ns per read
//! valgrind --tool=callgrind --toggle-collect=bench_counter_read \
//!     target/release/counter_read callgrind 100000           # instructions
//! ```
//!
//! (`--toggle-collect=bench_counter_fields` / `bench_counter_value`: the read
//! with every field used / with only the count used, as the lab's
//! instruction count of a read uses it.)
//!
//! Each round times the whole read and, on the same page, the snapshot
//! alone (`SimPage::snapshot`); the paired ratio read / snapshot is what
//! the reader adds to the seqlock section (the path check, the count's
//! sign extension, the time extrapolation and the reading it returns).

use perf_event_core::abi::bitfield::mmap_caps;
use perf_event_core::userpage::sim::{PageState, SimPage};
use perf_event_core::userpage::{CounterReader, EventTarget, RawCounterFd, REQUIRED_READ_FORMAT};
use std::hint::black_box;
use std::time::Instant;

type Reader = CounterReader<SimPage, RawCounterFd>;

/// One read, not inlined so that callgrind counts it alone; the whole
/// reading is handed to `black_box` (kept in memory, as a caller that
/// stores the readings).
#[no_mangle]
#[inline(never)]
fn bench_counter_read(reader: &Reader) -> bool {
    black_box(reader.read()).is_ok()
}

/// One read whose fields are used as a harness uses them (the value, both
/// times, the path), the read inlined into this function.
#[no_mangle]
#[inline(never)]
fn bench_counter_fields(reader: &Reader) -> u64 {
    match reader.read() {
        Ok(r) => {
            r.counts.value
                ^ r.counts.enabled.unwrap_or(0)
                ^ r.counts.running.unwrap_or(0)
                ^ u64::from(r.used_counter())
        }
        Err(_) => 0,
    }
}

/// One read of which only the count is used (what the lab's instruction
/// count of a read measures), the read inlined into this function.
#[no_mangle]
#[inline(never)]
fn bench_counter_value(reader: &Reader) -> u64 {
    match reader.read() {
        Ok(r) => r.counts.value,
        Err(_) => 0,
    }
}

fn reader() -> Reader {
    let page = SimPage::new(&PageState {
        index: 1,
        offset: 123_456,
        time_enabled: 2_000_000,
        time_running: 1_000_000,
        capabilities: mmap_caps::CAP_BIT0_IS_DEPRECATED.mask()
            | mmap_caps::CAP_USER_RDPMC.mask()
            | mmap_caps::CAP_USER_TIME.mask(),
        pmc_width: 48,
        time_shift: 31,
        time_mult: 1_234_567,
        time_offset: 0u64.wrapping_sub(1 << 40),
        counter: 1000,
        ..Default::default()
    });
    // SAFETY: -1 is never an open fd (a read(2) would fail with EBADF); the
    // simulated page always allows the counter, so it is never read.
    let fd = unsafe { RawCounterFd::new(-1, REQUIRED_READ_FORMAT) }.expect("read_format 0x3");
    CounterReader::new(page, fd, EventTarget::as_opened(0, -1))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = reader();
    assert!(
        bench_counter_read(&r),
        "the simulated page allows the counter"
    );
    if args.first().map(String::as_str) == Some("callgrind") {
        let n: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
        for _ in 0..n {
            bench_counter_read(&r);
            black_box(bench_counter_fields(&r));
            black_box(bench_counter_value(&r));
        }
        return;
    }
    let (rounds, iterations) = (31, 1_000_000u64);
    // 0: the whole reading, 1: its fields, 2: the snapshot alone.
    let mut ns: [Vec<f64>; 3] = Default::default();
    let mut ratio: [Vec<f64>; 2] = Default::default();
    for round in 0..rounds {
        let time = |which: usize| {
            let start = Instant::now();
            for _ in 0..iterations {
                match which {
                    0 => {
                        black_box(bench_counter_read(&r));
                    }
                    1 => {
                        black_box(bench_counter_fields(&r));
                    }
                    _ => {
                        black_box(r.page().snapshot().ok());
                    }
                }
            }
            start.elapsed().as_nanos() as f64 / iterations as f64
        };
        let mut t = [0.0; 3];
        for k in 0..3 {
            let which = (round + k) % 3;
            t[which] = time(which);
        }
        for (k, v) in t.iter().enumerate() {
            ns[k].push(*v);
        }
        ratio[0].push(t[0] / t[2]);
        ratio[1].push(t[1] / t[2]);
    }
    let [whole, fields, snap] = &mut ns;
    let [whole_ratio, fields_ratio] = &mut ratio;
    println!(
        "CounterReader::read, user-space path on a simulated page (median of {rounds} rounds): \
         whole reading {:.2} ns ({:.3}x the snapshot), fields used {:.2} ns ({:.3}x), \
         snapshot alone {:.2} ns",
        median(whole),
        median(whole_ratio),
        median(fields),
        median(fields_ratio),
        median(snap),
    );
}
