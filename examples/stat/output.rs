//! The report: perf stat's table or CSV.

use crate::args::Options;
use crate::run::{Outcome, Wanted};
use perf_event_core::read_format::Scaled;

/// Mean and the relative standard deviation of the mean (perf's "+-").
pub fn mean_rsd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    if v.len() < 2 || mean == 0.0 {
        return (mean, 0.0);
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, 100.0 * (var / n).sqrt() / mean)
}

/// Per event: scaled mean value, its rsd, the mean percentage running, or None.
fn summarize(runs: &[Vec<Outcome>], i: usize) -> Option<(f64, f64, Option<f64>, bool)> {
    let mut values = Vec::new();
    let mut percent = Vec::new();
    for run in runs {
        let Outcome::Counted(c) = run[i] else {
            return None;
        };
        match c.scaled() {
            Scaled::Exact(v) | Scaled::NoTimes(v) => values.push(v as f64),
            Scaled::Estimated {
                value,
                percent_running,
            } => {
                values.push(value as f64);
                percent.push(f64::from(percent_running));
            }
            Scaled::NotCounted => return Some((0.0, 0.0, None, false)),
            Scaled::Inconsistent { value, .. } => values.push(value as f64),
        }
    }
    let (mean, rsd) = mean_rsd(&values);
    let pct = (!percent.is_empty()).then(|| percent.iter().sum::<f64>() / percent.len() as f64);
    Some((mean, rsd, pct, true))
}

pub fn report(opts: &Options, events: &[Wanted], runs: &[Vec<Outcome>], times: &[f64]) {
    let stats: Vec<_> = (0..events.len()).map(|i| summarize(runs, i)).collect();
    let find = |name: &str| {
        events
            .iter()
            .position(|e| e.name == name)
            .and_then(|i| stats[i])
            .filter(|s| s.3)
            .map(|s| s.0)
    };
    let (elapsed, elapsed_rsd) = mean_rsd(times);
    let task_clock_ms = find("task-clock").map(|ns| ns / 1e6);
    if let Some(sep) = &opts.csv {
        for (ev, s) in events.iter().zip(&stats) {
            let is_clock = ev.name == "task-clock" || ev.name == "cpu-clock";
            match s {
                None => println!("<not supported>{sep}{sep}{}{sep}0{sep}100.00", ev.name),
                Some((_, _, _, false)) => {
                    println!("<not counted>{sep}{sep}{}{sep}0{sep}0.00", ev.name)
                }
                Some((v, _, pct, true)) => {
                    let (value, unit) = if is_clock {
                        (format!("{:.2}", v / 1e6), "msec")
                    } else {
                        (format!("{v:.0}"), "")
                    };
                    println!(
                        "{value}{sep}{unit}{sep}{}{sep}{sep}{:.2}",
                        ev.name,
                        pct.unwrap_or(100.0)
                    );
                }
            }
        }
        return;
    }
    let runs_note = if runs.len() > 1 {
        format!(" ({} runs)", runs.len())
    } else {
        String::new()
    };
    println!(
        "\n Performance counter stats for '{}'{runs_note}:\n",
        opts.command.join(" ")
    );
    for (ev, s) in events.iter().zip(&stats) {
        let Some((v, rsd, pct, counted)) = *s else {
            println!("{:>20}      {}", "<not supported>", ev.name);
            continue;
        };
        if !counted {
            println!("{:>20}      {}", "<not counted>", ev.name);
            continue;
        }
        let is_clock = ev.name == "task-clock" || ev.name == "cpu-clock";
        let value = if is_clock {
            format!("{:.2} msec", v / 1e6)
        } else {
            format!("{v:.0}     ")
        };
        let metric = match ev.name.as_str() {
            n if is_clock && n == "task-clock" => {
                format!("#  {:8.3} CPUs utilized", v / 1e9 / elapsed.max(1e-9))
            }
            "instructions" => find("cycles").map_or(String::new(), |c| {
                format!("#  {:8.2}  insn per cycle", v / c.max(1.0))
            }),
            "branch-misses" => find("branches").map_or(String::new(), |b| {
                format!("#  {:8.2}% of all branches", 100.0 * v / b.max(1.0))
            }),
            _ => task_clock_ms.map_or(String::new(), |ms| rate(v / (ms / 1e3))),
        };
        let noise = if runs.len() > 1 {
            format!("  ( +- {rsd:5.2}% )")
        } else {
            String::new()
        };
        let running = pct.map_or(String::new(), |p| format!("  ({p:.2}%)"));
        println!("{value:>20} {:<25} {metric:<35}{noise}{running}", ev.name);
    }
    let noise = if runs.len() > 1 {
        format!(
            " +- {:.6} ( +- {elapsed_rsd:5.2}% )",
            elapsed * elapsed_rsd / 100.0
        )
    } else {
        String::new()
    };
    println!("\n{elapsed:>17.9} seconds time elapsed{noise}\n");
}

fn rate(per_sec: f64) -> String {
    let (v, unit) = if per_sec >= 1e9 {
        (per_sec / 1e9, "G/sec")
    } else if per_sec >= 1e6 {
        (per_sec / 1e6, "M/sec")
    } else if per_sec >= 1e3 {
        (per_sec / 1e3, "K/sec")
    } else {
        (per_sec, "/sec")
    };
    format!("#  {v:8.3} {unit}")
}
