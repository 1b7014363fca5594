//! A criterion `Measurement` in
//! perf events: instructions, cycles, branch misses, cache misses,
//! task-clock, or any perf event string, per benchmark iteration, for
//! criterion 0.5, 0.6, 0.7 and 0.8.
//!
//! ```toml
//! [dev-dependencies]
//! criterion = "0.8"
//! perf-event-criterion = { version = "0.1", features = ["criterion-0_8"] }
//! ```
//!
//! ```ignore
//! use criterion::{criterion_group, criterion_main, Criterion};
//! use perf_event_core::monitor::Counter;
//! use perf_event_criterion::PerfMeasurement;
//!
//! fn config() -> Criterion<PerfMeasurement> {
//!     // Fails with a message naming `task-clock` where there is no PMU.
//!     let m = PerfMeasurement::new(Counter::Instructions).unwrap_or_else(|e| panic!("{e}"));
//!     Criterion::default().with_measurement(m)
//! }
//! fn sum(c: &mut Criterion<PerfMeasurement>) {
//!     c.bench_function("sum", |b| b.iter(|| (0..1000u64).sum::<u64>()));
//! }
//! criterion_group! { name = benches; config = config(); targets = sum }
//! criterion_main!(benches);
//! ```
//!
//! # Why a crate of its own (and not a feature of perf-event-core)
//!
//! - criterion is a large dependency tree; a feature of the core crate
//!   would put four optional copies of it into the core's manifest and lock
//!   file, and make the core's MSRV follow criterion's (0.8 needs Rust
//!   1.86). Here only benchmark code pays for it.
//! - criterion's releases are semver-incompatible (0.5 ... 0.8): each is a
//!   renamed optional dependency (`criterion_0_5` ... `criterion_0_8`)
//!   selected by a feature (`criterion-0_5` ... `criterion-0_8`), and the
//!   same [`PerfMeasurement`] implements every enabled release's
//!   `Measurement` trait. A new criterion release is one more feature here
//!   without a release of the core.
//!
//! # What is measured
//!
//! [`PerfMeasurement`] opens one event of the benchmark's thread through
//! [`perf_event_core::monitor::Monitor`] (by choice also the threads it
//! creates: [`PerfMeasurement::with_threads`]). criterion's `start` and
//! `end` each read it once: with the counter instruction where the PMU
//! allows user-space reads (no system call), else one `read(2)`. A batch's
//! value is the difference, scaled by `time_enabled / time_running` if the
//! event was multiplexed.
//!
//! On a machine without the hardware event (most VMs),
//! [`PerfMeasurement::new`] returns an error that names the missing event
//! and the software event that works (`task-clock`); nothing ever reports
//! zeros in its place. An event that did not run at all during a batch
//! (multiplexed out entirely) panics with that explanation, as criterion's
//! `Measurement::end` cannot return an error.
//!
//! The crate depends on perf-event-core alone. For an event given as a
//! perf event string (`page-faults`, `cpu/event=0x3c/`) make the
//! [`Counter`] with perf-event-host's `measure::event_counter`; for
//! statistics outside criterion (divan, `harness = false`, tests) use
//! perf-event-host's `measure::stats`.
#![deny(unsafe_code)]
// The errors are the core's `CounterError` (the monitor's full
// explanation and which counter, 160 bytes), returned once per
// measurement as the core returns it.
#![allow(clippy::result_large_err)]

use perf_event_core::monitor::{Counter, CounterError, Monitor, Threads};
use perf_event_core::userpage::CounterReading;

/// A criterion measurement counting one perf event (see the crate docs).
#[derive(Debug)]
pub struct PerfMeasurement {
    monitor: Monitor<1>,
    counter: Counter,
    unit: &'static str,
}

impl PerfMeasurement {
    /// Counts `counter` on the calling thread (the one that runs the
    /// benchmarks).
    pub fn new(counter: Counter) -> Result<PerfMeasurement, CounterError> {
        PerfMeasurement::with_threads(counter, Threads::Caller)
    }

    /// Counts `counter` on the calling thread and, with
    /// [`Threads::CallerAndNew`], every thread it creates afterwards (for
    /// benchmarks that spawn workers; always read with `read(2)`).
    pub fn with_threads(
        counter: Counter,
        threads: Threads,
    ) -> Result<PerfMeasurement, CounterError> {
        let monitor = Counter::open(&[counter], threads)?;
        // perf stat's fallbacks (`:u` under perf_event_paranoid 2 for an
        // ordinary user): reported once, when the measurement is made.
        for f in monitor.fallbacks()[0].iter() {
            eprintln!("perf-event-criterion: {counter}: {f}");
        }
        // criterion wants a &'static str unit: every counter's is one.
        let unit = counter.unit();
        Ok(PerfMeasurement {
            monitor,
            counter,
            unit,
        })
    }

    /// The counter measured.
    pub fn counter(&self) -> &Counter {
        &self.counter
    }

    /// The unit values are reported in (`ns` for task-clock, else the
    /// event's name).
    pub fn unit(&self) -> &'static str {
        self.unit
    }

    /// Whether the last read took the user-space path (no system call).
    pub fn reads_in_user_space(&self) -> bool {
        self.read().used_counter()
    }

    /// Reads the counter now (what criterion's `start` does). Panics with
    /// the reason when the read fails: criterion cannot take an error.
    pub fn read(&self) -> CounterReading {
        match self.monitor.read() {
            Ok([count]) => count,
            Err(e) => panic!("perf-event-criterion: reading `{}`: {e}", self.counter),
        }
    }

    /// The scaled count since `start` (what criterion's `end` does):
    /// criterion's value for a batch. Panics with the reason when the event
    /// never ran on the PMU since `start`, rather than report a zero.
    pub fn since(&self, start: CounterReading) -> u64 {
        let end = self.read();
        let m = start.between(&end).counts;
        m.scaled().value().unwrap_or_else(|| {
            panic!(
                "perf-event-criterion: `{}` never ran on the PMU during this batch \
                 ({} ns enabled, {} running): other events took every counter; measure fewer \
                 events at once",
                self.counter,
                m.enabled.unwrap_or(0),
                m.running.unwrap_or(0)
            )
        })
    }
}

/// `Measurement` and `ValueFormatter` for one criterion release; the
/// match arms turn its `Throughput` variants into (count, unit).
#[cfg(any(
    feature = "criterion-0_5",
    feature = "criterion-0_6",
    feature = "criterion-0_7",
    feature = "criterion-0_8"
))]
macro_rules! measurement_for {
    ($krate:ident { $($pat:pat => $per:expr,)* }) => {
        impl $krate::measurement::Measurement for PerfMeasurement {
            type Intermediate = CounterReading;
            type Value = u64;

            fn start(&self) -> CounterReading {
                self.read()
            }

            fn end(&self, start: CounterReading) -> u64 {
                self.since(start)
            }

            fn add(&self, a: &u64, b: &u64) -> u64 {
                a.wrapping_add(*b)
            }

            fn zero(&self) -> u64 {
                0
            }

            fn to_f64(&self, v: &u64) -> f64 {
                *v as f64
            }

            fn formatter(&self) -> &dyn $krate::measurement::ValueFormatter {
                self
            }
        }

        impl $krate::measurement::ValueFormatter for PerfMeasurement {
            fn scale_values(&self, _typical: f64, _values: &mut [f64]) -> &'static str {
                self.unit
            }

            fn scale_throughputs(
                &self,
                _typical: f64,
                throughput: &$krate::Throughput,
                values: &mut [f64],
            ) -> &'static str {
                use $krate::Throughput;
                let (n, unit): (u64, &'static str) = match *throughput {
                    $($pat => $per,)*
                };
                for v in values.iter_mut() {
                    *v /= n.max(1) as f64;
                }
                unit
            }

            fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
                self.unit
            }
        }
    };
}

#[cfg(feature = "criterion-0_5")]
measurement_for!(criterion_0_5 {
    Throughput::Bytes(n) | Throughput::BytesDecimal(n) => (n, "per byte"),
    Throughput::Elements(n) => (n, "per element"),
});

#[cfg(feature = "criterion-0_6")]
measurement_for!(criterion_0_6 {
    Throughput::Bytes(n) | Throughput::BytesDecimal(n) => (n, "per byte"),
    Throughput::Elements(n) => (n, "per element"),
});

#[cfg(feature = "criterion-0_7")]
measurement_for!(criterion_0_7 {
    Throughput::Bytes(n) | Throughput::BytesDecimal(n) => (n, "per byte"),
    Throughput::Elements(n) => (n, "per element"),
    Throughput::Bits(n) => (n, "per bit"),
});

#[cfg(feature = "criterion-0_8")]
measurement_for!(criterion_0_8 {
    Throughput::Bytes(n) | Throughput::BytesDecimal(n) => (n, "per byte"),
    Throughput::Elements(n) | Throughput::ElementsAndBytes { elements: n, .. } => {
        (n, "per element")
    },
    Throughput::Bits(n) => (n, "per bit"),
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_clock_counts_a_batch() {
        let m = PerfMeasurement::new(Counter::TaskClock).unwrap();
        assert_eq!(m.unit(), "ns");
        let start = m.read();
        std::hint::black_box((0..1_000_000u64).sum::<u64>());
        assert!(m.since(start) > 0);
    }

    #[test]
    fn an_event_string_is_its_own_unit() {
        let attr = perf_event_core::attr::Attr::new(perf_event_core::event::Event::Software(
            perf_event_core::event::Software::PageFaults,
        ));
        let counter = Counter::Event {
            attr,
            name: "page-faults",
        };
        let m = PerfMeasurement::new(counter).unwrap();
        assert_eq!(m.unit(), "page-faults");
    }
}
