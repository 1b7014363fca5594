//! A `harness = false` bench with no framework: perf events per iteration
//! through `perf_event_host::measure::stats` in a few lines.
//!
//! ```sh
//! cargo bench -p bench --bench counts
//! ```

use perf_event_core::monitor::{Counter, Threads};
use perf_event_host::measure::event_counter;
use perf_event_host::measure::stats::{measure, Runs};
use std::hint::black_box;

fn sum_of_squares(n: u64) -> u64 {
    (0..n)
        .map(black_box)
        .fold(0u64, |a, i| a.wrapping_add(i * i))
}

fn main() {
    // Hardware counters where the machine has a PMU; task-clock and
    // page-faults (software) everywhere.
    let hardware = [
        Counter::Instructions,
        Counter::Cycles,
        Counter::BranchMisses,
    ];
    let software = [
        Counter::TaskClock,
        event_counter("page-faults").unwrap_or_else(|e| panic!("{e}")),
        event_counter("context-switches").unwrap_or_else(|e| panic!("{e}")),
    ];
    let (counters, mut monitor) = match Counter::open(&hardware, Threads::Caller) {
        Ok(m) => (hardware, m),
        Err(e) => {
            eprintln!("{e}\n-> software counters instead");
            let m = Counter::open(&software, Threads::Caller).unwrap_or_else(|e| panic!("{e}"));
            (software, m)
        }
    };
    for n in [1_000u64, 100_000] {
        let report = measure(&mut monitor, &Runs::new(30).batch(10), || sum_of_squares(n))
            .unwrap_or_else(|e| panic!("{e}"));
        println!("sum_of_squares({n}):");
        for (counter, stats) in counters.iter().zip(&report.counters) {
            println!("  {:<18} {stats}", counter.unit());
        }
    }
}
