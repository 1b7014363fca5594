//! The harness-agnostic measuring API (std): run a closure many times
//! around a [`Monitor`] region and get per-iteration statistics for every
//! counter, for divan benches, `harness = false` benches and test suites.
//!
//! ```
//! use perf_event_host::measure::stats::{measure, Runs};
//! use perf_event_core::monitor::{Counter, Threads};
//!
//! let mut m = Counter::open(&[Counter::TaskClock], Threads::Caller)?;
//! let report = measure(&mut m, &Runs::new(20).batch(10), || {
//!     (0..10_000u64).map(std::hint::black_box).sum::<u64>()
//! })?;
//! let clock = &report.counters[0];
//! println!("{:.0} ns per call (median), ± {:.0}", clock.median, clock.deviation);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What is measured
//!
//! After `warmup` unmeasured regions, each of `samples` regions calls the
//! closure `batch` times; a sample is the region's count divided by
//! `batch` (per iteration). Multiplexed counts are scaled by
//! `time_enabled / time_running` per region; a region in which an event
//! never ran has no estimate and is left out of that event's statistics
//! (counted in [`Stats::not_counted`]).
//!
//! # The region's own cost
//!
//! The reads that open and close a region are themselves counted (the
//! instructions of the user-space reads, or the user part of the two
//! `read(2)` calls, or their CPU time). Before the samples, as many *empty*
//! regions (start, then stop at once) are measured; the median of the empty
//! region is subtracted from each region's count before dividing by
//! `batch`, clamped at 0, when that is sound for the counter:
//!
//! - every empty region ran unmultiplexed (`time_running == time_enabled`),
//!   so the median is a count, not an estimate; and
//! - the empty regions were read the same way as the measured ones (all
//!   user space, or all `read(2)`), so they cost the same.
//!
//! Otherwise nothing is subtracted and [`Overhead::subtracted`] says so.
//! [`Runs::subtract_empty`] turns subtraction off. Deterministic counters
//! (instructions) become exact to within the closure's loop overhead;
//! noisy ones (task-clock, cycles) lose their bias, not their noise.

use perf_event_core::monitor::{Monitor, MonitorError};
use perf_event_core::userpage::CounterReading;
use std::hint::black_box;

/// How many times to run, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Runs {
    /// Unmeasured regions first (caches, page faults, branch predictors).
    pub warmup: usize,
    /// Measured regions.
    pub samples: usize,
    /// Calls of the closure per region (raise it for closures shorter than
    /// the region's own cost).
    pub batch: u64,
    /// Subtract the empty region's median where sound (see the module docs).
    pub subtract_empty: bool,
}

impl Runs {
    /// `samples` regions of one call each, 3 warm-up regions, subtraction on.
    pub const fn new(samples: usize) -> Runs {
        Runs {
            warmup: 3,
            samples,
            batch: 1,
            subtract_empty: true,
        }
    }

    /// Sets the warm-up regions.
    pub const fn warmup(mut self, regions: usize) -> Runs {
        self.warmup = regions;
        self
    }

    /// Sets the calls per region (at least 1).
    pub const fn batch(mut self, calls: u64) -> Runs {
        self.batch = if calls == 0 { 1 } else { calls };
        self
    }

    /// Turns the empty-region subtraction on or off.
    pub const fn subtract_empty(mut self, on: bool) -> Runs {
        self.subtract_empty = on;
        self
    }
}

impl Default for Runs {
    fn default() -> Runs {
        Runs::new(30)
    }
}

/// The empty region's cost for one counter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Overhead {
    /// Median count of an empty region (whole region, not per iteration).
    pub median: f64,
    /// Whether it was subtracted (see the module docs for when it is).
    pub subtracted: bool,
}

/// Per-iteration statistics of one counter.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    /// Smallest sample.
    pub min: f64,
    /// Median sample.
    pub median: f64,
    /// Mean sample.
    pub mean: f64,
    /// Sample standard deviation (n - 1); 0 for one sample.
    pub deviation: f64,
    /// The samples (per iteration, scaled, overhead subtracted), in order.
    pub values: Vec<f64>,
    /// Mean multiplexing scale `time_enabled / time_running` over the
    /// counted regions: 1.0 when the event was on the PMU throughout.
    pub scale: f64,
    /// Total `time_running / time_enabled` over the regions (1.0 = never
    /// multiplexed).
    pub running_fraction: f64,
    /// Regions in which the event never ran (no estimate possible).
    pub not_counted: usize,
    /// Whether every region was read in user space (no syscall).
    pub user_space: bool,
    /// The empty region's cost and whether it was subtracted.
    pub overhead: Overhead,
}

impl std::fmt::Display for Stats {
    /// One line: `median M (min, mean ± deviation), scale, running
    /// fraction, empty region`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "median {:.1} (min {:.1}, mean {:.1} ± {:.1}) per iteration, scale {:.2}, \
             running {:.0} %, empty region {:.1} {}",
            self.median,
            self.min,
            self.mean,
            self.deviation,
            self.scale,
            self.running_fraction * 100.0,
            self.overhead.median,
            if self.overhead.subtracted {
                "subtracted"
            } else {
                "not subtracted"
            }
        )?;
        if self.not_counted > 0 {
            write!(f, ", {} regions never ran", self.not_counted)?;
        }
        Ok(())
    }
}

/// What [`measure`] returns: one [`Stats`] per counter, in the monitor's
/// order.
#[derive(Clone, Debug, PartialEq)]
pub struct Report<const N: usize> {
    /// The counters' statistics.
    pub counters: [Stats; N],
    /// The runs that produced them.
    pub runs: Runs,
}

/// Measures `f` as [`Runs`] says on `monitor`; see the [module docs](self).
pub fn measure<const N: usize, R>(
    monitor: &mut Monitor<N>,
    runs: &Runs,
    mut f: impl FnMut() -> R,
) -> Result<Report<N>, MonitorError> {
    let batch = runs.batch.max(1);
    let mut region = |monitor: &mut Monitor<N>| -> Result<[CounterReading; N], MonitorError> {
        monitor.start()?;
        for _ in 0..batch {
            black_box(f());
        }
        monitor.stop()
    };
    for _ in 0..runs.warmup {
        region(monitor)?;
    }
    let empty = if runs.subtract_empty {
        let mut empty = Vec::with_capacity(runs.samples);
        for _ in 0..runs.samples.max(1) {
            monitor.start()?;
            empty.push(monitor.stop()?);
        }
        Some(empty)
    } else {
        None
    };
    let mut regions = Vec::with_capacity(runs.samples);
    for _ in 0..runs.samples {
        regions.push(region(monitor)?);
    }
    let counters = core::array::from_fn(|i| {
        let column: Vec<CounterReading> = regions.iter().map(|r| r[i]).collect();
        let overhead = match &empty {
            Some(empty) => {
                let empty: Vec<CounterReading> = empty.iter().map(|r| r[i]).collect();
                overhead_of(&empty, &column)
            }
            None => Overhead {
                median: 0.0,
                subtracted: false,
            },
        };
        stats_of(&column, overhead, batch)
    });
    Ok(Report {
        counters,
        runs: *runs,
    })
}

fn overhead_of(empty: &[CounterReading], measured: &[CounterReading]) -> Overhead {
    let mut values: Vec<f64> = empty.iter().map(|m| m.counts.value as f64).collect();
    let median = median(&mut values);
    let unmultiplexed = empty.iter().all(|m| m.counts.running == m.counts.enabled);
    let user_space = empty.first().is_some_and(|e| e.used_counter());
    let same_path = |m: &CounterReading| m.used_counter() == user_space;
    let same_path = empty.iter().chain(measured).all(same_path);
    Overhead {
        median,
        subtracted: unmultiplexed && same_path && !empty.is_empty(),
    }
}

fn stats_of(regions: &[CounterReading], overhead: Overhead, batch: u64) -> Stats {
    let subtract = if overhead.subtracted {
        overhead.median
    } else {
        0.0
    };
    let mut values = Vec::with_capacity(regions.len());
    let (mut scales, mut enabled, mut running, mut not_counted) = (0.0, 0u128, 0u128, 0);
    for m in regions {
        let (e, r) = (m.counts.enabled.unwrap_or(0), m.counts.running.unwrap_or(0));
        enabled += u128::from(e);
        running += u128::from(r);
        let Some(scaled) = m.counts.scaled().value() else {
            not_counted += 1;
            continue;
        };
        scales += if r == 0 { 1.0 } else { e as f64 / r as f64 };
        values.push((scaled as f64 - subtract).max(0.0) / batch as f64);
    }
    let n = values.len();
    let mean = if n == 0 {
        0.0
    } else {
        values.iter().sum::<f64>() / n as f64
    };
    let deviation = if n < 2 {
        0.0
    } else {
        (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    };
    let mut sorted = values.clone();
    Stats {
        min: if n == 0 {
            0.0
        } else {
            sorted.iter().copied().fold(f64::INFINITY, f64::min)
        },
        median: median(&mut sorted),
        mean,
        deviation,
        values,
        scale: if n == 0 { 0.0 } else { scales / n as f64 },
        running_fraction: if enabled == 0 {
            1.0
        } else {
            running as f64 / enabled as f64
        },
        not_counted,
        user_space: regions.iter().all(CounterReading::used_counter),
        overhead,
    }
}

/// The median (mean of the middle two for an even count); 0 when empty.
fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 0 {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use perf_event_core::read_format::Counts;
    use perf_event_core::userpage::{FallbackReason, ReadPath};

    fn m(value: u64, enabled: u64, running: u64) -> CounterReading {
        CounterReading {
            counts: Counts::with_times(value, enabled, running),
            path: ReadPath::Syscall {
                reason: FallbackReason::NoUserAccess,
            },
        }
    }

    #[test]
    fn statistics_of_known_samples() {
        let regions = [m(110, 10, 10), m(130, 10, 10), m(120, 10, 10), m(50, 10, 5)];
        let overhead = overhead_of(&[m(10, 1, 1), m(10, 1, 1), m(12, 1, 1)], &regions);
        assert_eq!(overhead.median, 10.0);
        assert!(overhead.subtracted);
        let s = stats_of(&regions, overhead, 2);
        // (110-10)/2, (130-10)/2, (120-10)/2, (50*2-10)/2
        assert_eq!(s.values, vec![50.0, 60.0, 55.0, 45.0]);
        assert_eq!((s.min, s.median, s.mean), (45.0, 52.5, 52.5));
        assert!((s.deviation - 6.454_972_243_679_028).abs() < 1e-9);
        assert_eq!(s.scale, (1.0 + 1.0 + 1.0 + 2.0) / 4.0);
        assert_eq!(s.running_fraction, 35.0 / 40.0);
    }

    #[test]
    fn multiplexed_or_mixed_path_empty_regions_are_not_subtracted() {
        let regions = [m(100, 10, 10)];
        assert!(!overhead_of(&[m(10, 2, 1)], &regions).subtracted);
        let mut user = m(10, 1, 1);
        user.path = ReadPath::Counter {
            index: 1,
            times_extrapolated: true,
            wrap_corrected: false,
        };
        assert!(!overhead_of(&[user], &regions).subtracted);
    }

    #[test]
    fn regions_that_never_ran_are_left_out_and_counted() {
        let s = stats_of(
            &[m(0, 10, 0), m(40, 10, 10)],
            Overhead {
                median: 50.0,
                subtracted: true,
            },
            1,
        );
        assert_eq!(s.not_counted, 1);
        assert_eq!(s.values, vec![0.0], "clamped at 0, never negative");
    }
}
