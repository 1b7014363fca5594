//! A criterion benchmark measured in perf events through the published
//! adapter, `perf_event_criterion::PerfMeasurement` (instructions where the
//! machine has a PMU, task-clock ns otherwise, saying why). Short mode in `cargo xtask ci`:
//! `cargo bench -p bench --bench criterion_monitor -- --quick`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use perf_event_criterion::{Counter, PerfMeasurement};
use std::hint::black_box;

fn sums(c: &mut Criterion<PerfMeasurement>) {
    let mut group = c.benchmark_group("sum");
    for n in [1_000u64, 10_000] {
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.iter(|| {
                (0..n)
                    .map(black_box)
                    .fold(0u64, |a, i| a.wrapping_add(i * i))
            })
        });
    }
    group.finish();
}

fn config() -> Criterion<PerfMeasurement> {
    let m = PerfMeasurement::new(Counter::Instructions).unwrap_or_else(|e| {
        eprintln!("{e}\n-> measuring task-clock instead");
        PerfMeasurement::new(Counter::TaskClock).unwrap_or_else(|e| panic!("{e}"))
    });
    eprintln!("criterion_monitor: measuring in {}", m.unit());
    Criterion::default().with_measurement(m)
}

criterion_group! {
    name = benches;
    config = config();
    targets = sums
}
criterion_main!(benches);
