//! stat's timing against `perf stat` (BENCHMARKS.md section 12): the
//! comparisons that were assertions in `tests/perf_oracle` until issue 37
//! (a loaded machine moved them past their bounds), measured here instead:
//!
//! ```sh
//! cargo run --release -p bench --bin stat_vs_perf_timing -- [RUNS]
//! ```
//!
//! RUNS (default 9) runs per tool and case, interleaved ours / perf so that
//! both see the same load; min / median / max of each:
//!
//! - the counting window of `-a`, `-C 0`, `-a -A` and `-p PID` (a spinning
//!   shell) with `-e task-clock -- sleep 0.3`: seconds time elapsed and
//!   task-clock (summed over the lines);
//! - `-I 100 -x, -e task-clock -- sleep 0.25`: each interval's stamp
//!   (runs with the usual number of intervals only);
//! - `--timeout 300 -e task-clock` with `-a`, `-a -- sleep 2` and `-p PID`
//!   (a sleeping process): seconds time elapsed;
//! - `-x, -e task-clock,page-faults -- dd if=/dev/zero of=/dev/null bs=4M
//!   count=256`: task-clock and page-faults.
//!
//! The stat example is built in release (`cargo build --release --example
//! stat`) and found beside this binary; perf is `perf` on PATH.

use perf_bench::examples::stat_example;
use perf_bench::spread::min_median_max;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// `stat ARGS` of one tool: `perf stat` or the example.
fn tool(perf: bool, example: &PathBuf) -> Command {
    if perf {
        let mut c = Command::new("perf");
        c.arg("stat");
        c
    } else {
        Command::new(example)
    }
}

/// The report (stderr) of one run; panics when the tool failed.
fn report(perf: bool, example: &PathBuf, args: &[&str]) -> String {
    let out = tool(perf, example)
        .args(args)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() || args.contains(&"--timeout"),
        "perf {perf} {args:?}: {text}"
    );
    text
}

/// Seconds time elapsed of a table report.
fn elapsed(text: &str) -> f64 {
    text.lines()
        .find_map(|l| l.trim().strip_suffix("seconds time elapsed"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no elapsed line in {text}"))
}

/// task-clock in ms, summed over a table report's lines.
fn task_clock(text: &str) -> f64 {
    text.lines()
        .filter_map(|l| l.split_once(" msec task-clock").map(|(v, _)| v))
        .filter_map(|v| {
            v.split_whitespace()
                .last()?
                .replace(',', "")
                .parse::<f64>()
                .ok()
        })
        .sum()
}

/// The first field of each CSV line of a report, as a number.
fn csv_values(text: &str) -> Vec<f64> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split(',').next()?.trim().parse().ok())
        .collect()
}

/// Ours and perf's series of one measure.
#[derive(Default)]
struct Pair {
    ours: Vec<f64>,
    perf: Vec<f64>,
}

impl Pair {
    fn push(&mut self, perf: bool, v: f64) {
        if perf {
            self.perf.push(v)
        } else {
            self.ours.push(v)
        }
    }

    fn print(&self, what: &str, unit: &str, scale: f64) {
        let f = |v: &[f64]| {
            if v.is_empty() {
                return "-".to_owned();
            }
            let (lo, med, hi) = min_median_max(v);
            format!("{:.2} / {:.2} / {:.2}", lo * scale, med * scale, hi * scale)
        };
        println!(
            "| {what} | {unit} | {} | {} |",
            f(&self.ours),
            f(&self.perf)
        );
    }
}

/// A process killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .map_or(9, |r| r.parse().expect("RUNS: a number"));
    let example = stat_example();
    let spinner = Killed(
        Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap(),
    );
    let sleeper = Killed(Command::new("sleep").arg("1000").spawn().unwrap());
    let spin_pid = spinner.0.id().to_string();
    let sleep_pid = sleeper.0.id().to_string();
    println!("{runs} runs per tool and case, interleaved; min / median / max\n");
    println!("| case | unit | ours | perf stat |");
    println!("|---|---|---|---|");
    let windows: [(&str, Vec<&str>); 4] = [
        ("-a", vec!["-a"]),
        ("-C 0", vec!["-C", "0"]),
        ("-a -A", vec!["-a", "-A"]),
        ("-p spinner", vec!["-p", &spin_pid]),
    ];
    for (name, args) in &windows {
        let (mut e, mut c) = (Pair::default(), Pair::default());
        for _ in 0..runs {
            for perf in [false, true] {
                let mut a = args.clone();
                a.extend(["-e", "task-clock", "--", "sleep", "0.3"]);
                let text = report(perf, &example, &a);
                e.push(perf, elapsed(&text));
                c.push(perf, task_clock(&text));
            }
        }
        e.print(&format!("`{name} -- sleep 0.3` elapsed"), "ms", 1e3);
        c.print(&format!("`{name} -- sleep 0.3` task-clock"), "ms", 1.0);
    }
    let mut stamps: Vec<Pair> = Vec::new();
    let mut odd = (0, 0);
    for _ in 0..runs {
        for perf in [false, true] {
            let text = report(
                perf,
                &example,
                &[
                    "-I",
                    "100",
                    "-x,",
                    "-e",
                    "task-clock",
                    "--",
                    "sleep",
                    "0.25",
                ],
            );
            let mut s: Vec<f64> = text
                .lines()
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .filter_map(|l| l.trim().split(',').next()?.parse().ok())
                .collect();
            if s.len() != 3 {
                if perf {
                    odd.1 += 1
                } else {
                    odd.0 += 1
                }
                continue;
            }
            for (i, t) in s.drain(..).enumerate() {
                if stamps.len() <= i {
                    stamps.push(Pair::default());
                }
                stamps[i].push(perf, t);
            }
        }
    }
    for (i, p) in stamps.iter().enumerate() {
        p.print(&format!("`-I 100 -- sleep 0.25` stamp {i}"), "ms", 1e3);
    }
    if odd != (0, 0) {
        println!(
            "(runs without 3 intervals, left out: ours {}, perf {})",
            odd.0, odd.1
        );
    }
    let timeouts: [(&str, Vec<&str>); 3] = [
        ("-a", vec!["-a"]),
        ("-a -- sleep 2", vec!["-a", "--", "sleep", "2"]),
        ("-p sleeper", vec!["-p", &sleep_pid]),
    ];
    for (name, args) in &timeouts {
        let mut e = Pair::default();
        for _ in 0..runs {
            for perf in [false, true] {
                let mut a = vec!["--timeout", "300", "-e", "task-clock"];
                a.extend(args.iter().copied());
                e.push(perf, elapsed(&report(perf, &example, &a)));
            }
        }
        e.print(&format!("`--timeout 300 {name}` elapsed"), "ms", 1e3);
    }
    let (mut clock, mut faults) = (Pair::default(), Pair::default());
    let dd = [
        "-x,",
        "-e",
        "task-clock,page-faults",
        "--",
        "dd",
        "if=/dev/zero",
        "of=/dev/null",
        "bs=4M",
        "count=256",
        "status=none",
    ];
    for _ in 0..runs {
        for perf in [false, true] {
            let v = csv_values(&report(perf, &example, &dd));
            clock.push(perf, v[0]);
            faults.push(perf, v[1]);
        }
    }
    clock.print("`dd bs=4M count=256` task-clock", "ms", 1.0);
    faults.print("`dd bs=4M count=256` page-faults", "", 1.0);
}
