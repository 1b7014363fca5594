//! A criterion [`Measurement`] built on [`perf_event_core::monitor`]: each
//! iteration batch is measured in events (instructions, cycles, or any
//! attr) instead of wall time, read through the user-space reader where
//! the hardware allows it (no syscall), `read(2)` otherwise.
//!
//! ```no_run
//! use perf_bench::measurement::PerfMeasurement;
//! use criterion::Criterion;
//!
//! let mut c = Criterion::default().with_measurement(PerfMeasurement::instructions_or_task_clock());
//! c.bench_function("sum", |b| b.iter(|| (0..1000u64).sum::<u64>()));
//! ```

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::Throughput;
use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Hardware, Software};
use perf_event_core::monitor::{Monitor, MonitorError};

/// Counts one event of the calling thread per measured batch.
#[derive(Debug)]
pub struct PerfMeasurement {
    monitor: Monitor<1>,
    unit: &'static str,
}

impl PerfMeasurement {
    /// Measures `attr`, reported in `unit` ("instructions", "ns", ...).
    pub fn new(attr: Attr, unit: &'static str) -> Result<Self, MonitorError> {
        Ok(PerfMeasurement {
            monitor: Monitor::open([attr])?,
            unit,
        })
    }

    /// User-space instructions where the machine has a PMU (on arm64 with
    /// user access requested), else the task-clock software event in ns.
    pub fn instructions_or_task_clock() -> Self {
        let instructions = Attr::new(Event::Hardware(Hardware::Instructions))
            .exclude_kernel(true)
            .exclude_hv(true)
            .config1(if cfg!(target_arch = "aarch64") {
                0x2
            } else {
                0
            });
        Self::new(instructions, "instructions").unwrap_or_else(|_| {
            Self::new(Attr::new(Event::Software(Software::TaskClock)), "ns")
                .unwrap_or_else(|e| panic!("task-clock: {e}"))
        })
    }

    /// The unit values are reported in.
    pub fn unit(&self) -> &'static str {
        self.unit
    }

    fn read(&self) -> u64 {
        self.monitor.readers()[0]
            .read()
            .map(|r| r.value)
            .unwrap_or_else(|e| panic!("reading the counter: {e}"))
    }
}

impl Measurement for PerfMeasurement {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        self.read()
    }

    fn end(&self, start: u64) -> u64 {
        self.read().wrapping_sub(start)
    }

    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }

    fn zero(&self) -> u64 {
        0
    }

    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        self
    }
}

impl ValueFormatter for PerfMeasurement {
    fn scale_values(&self, _typical: f64, _values: &mut [f64]) -> &'static str {
        self.unit
    }

    fn scale_throughputs(
        &self,
        _typical: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let per = match throughput {
            Throughput::Bytes(n) | Throughput::BytesDecimal(n) | Throughput::Elements(n) => {
                *n as f64
            }
        };
        for v in values.iter_mut() {
            *v /= per.max(1.0);
        }
        "per element"
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        self.unit
    }
}
