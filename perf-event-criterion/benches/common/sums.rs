// Shared by benches/oldest.rs and benches/newest.rs, which bring the
// criterion release they test into scope as `criterion` first.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use perf_event_core::monitor::Counter;
use perf_event_criterion::PerfMeasurement;
use std::hint::black_box;

fn sums(c: &mut Criterion<PerfMeasurement>) {
    let mut group = c.benchmark_group("sum");
    for n in [1_000u64, 10_000] {
        group.throughput(Throughput::Elements(n));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.iter(|| (0..n).map(black_box).fold(0u64, |a, i| a.wrapping_add(i * i)))
        });
    }
    group.finish();
}

/// Instructions where the machine has a PMU; where it has none, the
/// adapter's error says so and names task-clock, which this bench then
/// uses (a choice made here, in the open, not by the adapter).
fn config() -> Criterion<PerfMeasurement> {
    let m = PerfMeasurement::new(Counter::Instructions).unwrap_or_else(|e| {
        eprintln!("{e}\n-> measuring task-clock instead");
        PerfMeasurement::new(Counter::TaskClock).unwrap_or_else(|e| panic!("{e}"))
    });
    eprintln!("measuring in {}", m.unit());
    Criterion::default().with_measurement(m)
}

criterion_group! {
    name = benches;
    config = config();
    targets = sums
}
criterion_main!(benches);
