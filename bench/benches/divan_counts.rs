//! divan times the benchmarks; then the same functions are measured in perf
//! events with `perf_event_host::measure::stats` (divan has no pluggable
//! measurement, so the counts come as a second table).
//!
//! ```sh
//! cargo bench -p bench --bench divan_counts
//! ```

use perf_event_core::monitor::{Counter, Threads};
use perf_event_host::measure::stats::{measure, Runs};
use std::hint::black_box;

#[divan::bench(args = [1_000, 100_000])]
fn sum_of_squares(n: u64) -> u64 {
    (0..n)
        .map(black_box)
        .fold(0u64, |a, i| a.wrapping_add(i * i))
}

fn main() {
    divan::main();
    let counter = match Counter::open(&[Counter::Instructions], Threads::Caller) {
        Ok(m) => Ok(m),
        Err(e) => {
            eprintln!("{e}\n-> task-clock instead");
            Counter::open(&[Counter::TaskClock], Threads::Caller)
        }
    };
    let mut monitor = counter.unwrap_or_else(|e| panic!("{e}"));
    println!("\nperf events per call");
    for n in [1_000u64, 100_000] {
        let report = measure(&mut monitor, &Runs::new(30), || {
            sum_of_squares(black_box(n))
        })
        .unwrap_or_else(|e| panic!("{e}"));
        println!("sum_of_squares({n}): {}", report.counters[0]);
    }
}
