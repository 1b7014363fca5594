//! The sample example's shares against `perf record`'s (BENCHMARKS.md
//! section 13; the comparisons the perf_oracle tests made until issue 37,
//! which load broke):
//!
//! ```sh
//! cargo run --release -p bench --bin sample_vs_perf_shares -- [RUNS] [PARTS]
//! ```
//!
//! (PARTS: which parts, e.g. `14`; all four by default.)
//!
//! The workload is the tests' `hot` (tests/perf_oracle/sample_support.rs):
//! a C program built with frame pointers spending two thirds of its time in
//! `hot_twice` and one third in `hot_once`, both called from `work`, called
//! from `main`. RUNS runs (default 5) of each tool, interleaved, per part,
//! cpu-clock sampling at a fixed period; min / median / max of each tool:
//!
//! 1. `-a` (every 50 us, 300M iterations): the recorder's own share of all
//!    samples (perf report `--sort pid` of perf record's file for perf;
//!    the example's "Samples of this tool" line), and hot_twice's and
//!    hot_once's shares of the workload's samples (`--sort dso,sym`).
//! 2. `-g` (every 50 us, 300M): each function's "Children" share, perf
//!    report `--children` against the example's folded stacks (the
//!    samples whose stack holds it, once per stack).
//! 3. `-o` (every 250 us, 200M): hot_twice's share of the workload's
//!    samples in perf report of the example's perf.data and of perf
//!    record's own.
//! 4. A plain run (every 1 ms, 100M): hot_twice's and hot_once's shares of
//!    the workload's samples, perf report of perf record's file against
//!    the example's report (tests/perf_oracle/sample_example.rs until
//!    issue 37: within 8 points).

use perf_bench::spread::min_median_max;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The tests' hot workload.
const HOT: &str = r#"
#include <stdint.h>
#include <stdlib.h>
volatile uint64_t sink;
__attribute__((noinline)) void hot_twice(uint64_t n) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < n; i++) x = x * 6364136223846793005ULL + i;
    sink = x;
}
__attribute__((noinline)) void hot_once(uint64_t n) {
    uint64_t x = 3;
    for (uint64_t i = 0; i < n; i++) x = x * 2862933555777941757ULL + i;
    sink = x;
}
__attribute__((noinline)) void work(uint64_t n) {
    for (int r = 0; r < 10; r++) { hot_twice(2 * n / 10); hot_once(n / 10); }
}
int main(int argc, char **argv) {
    work(argc > 1 ? strtoull(argv[1], 0, 10) : 100000000ULL);
    return 0;
}
"#;

/// The optimized sample example, built now.
fn sample_binary() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let st = Command::new(env!("CARGO"))
        .current_dir(root)
        .args([
            "build",
            "--quiet",
            "--release",
            "-p",
            "perf-data-file",
            "--example",
            "sample",
        ])
        .status()
        .unwrap();
    assert!(st.success(), "cargo build --release --example sample");
    // target/release/sample_vs_perf_shares -> target/release/examples/sample
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().join("examples/sample")
}

fn hot(dir: &Path) -> PathBuf {
    let (src, exe) = (dir.join("hot.c"), dir.join("hot"));
    std::fs::write(&src, HOT).unwrap();
    let st = Command::new("cc")
        .args([
            "-O1",
            "-fno-omit-frame-pointer",
            "-mno-omit-leaf-frame-pointer",
            "-o",
        ])
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success(), "cc");
    exe
}

/// stdout of `cmd`, asserted successful.
fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd.stderr(Stdio::null()).output().unwrap();
    assert!(out.status.success(), "{what}: {:?}", out.status);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn perf_report(data: &Path, args: &[&str]) -> String {
    run(
        Command::new("perf")
            .args(["report", "--stdio"])
            .args(args)
            .arg("-i")
            .arg(data),
        "perf report",
    )
}

/// `(dso, symbol, percent)` from report lines `  12.34%  dso  [.] sym`.
fn rows(text: &str) -> Vec<(String, String, f64)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let pct: f64 = f.next()?.strip_suffix('%')?.parse().ok()?;
            let dso = f.next()?.to_string();
            let _mode = f.next()?;
            Some((dso, f.collect::<Vec<_>>().join(" "), pct))
        })
        .collect()
}

/// `symbol`'s share of the samples in object `hot` (percent).
fn share_in_hot(text: &str, symbol: &str) -> f64 {
    let r = rows(text);
    let own = r.iter().filter(|r| r.0 == "hot");
    let total: f64 = own.clone().map(|r| r.2).sum();
    let sym: f64 = own.filter(|r| r.1 == symbol).map(|r| r.2).sum();
    100.0 * sym / total.max(1e-9)
}

/// The share of pid `prefix` (`"123:"`) in `perf report --sort pid`.
fn pid_share(data: &Path, prefix: &str) -> f64 {
    perf_report(data, &["--sort", "pid"])
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let pct: f64 = f.next()?.strip_suffix('%')?.parse().ok()?;
            f.next()?.starts_with(prefix).then_some(pct)
        })
        .sum()
}

/// The percent of the example's `# Samples of this tool (pid N): X (P%)`.
fn own_line(text: &str) -> f64 {
    text.lines()
        .find_map(|l| {
            let tail = l.strip_prefix("# Samples of this tool")?;
            let (_, pct) = tail.rsplit_once(" (")?;
            pct.strip_suffix("%)")?.parse().ok()
        })
        .unwrap_or_else(|| panic!("no own line in\n{text}"))
}

/// A series per tool: name -> values of each run.
#[derive(Default)]
struct Series(Vec<(String, Vec<f64>, Vec<f64>)>);

impl Series {
    fn push(&mut self, name: &str, perf: f64, ours: f64) {
        match self.0.iter_mut().find(|s| s.0 == name) {
            Some(s) => {
                s.1.push(perf);
                s.2.push(ours);
            }
            None => self.0.push((name.to_string(), vec![perf], vec![ours])),
        }
    }

    fn print(&self, title: &str) {
        println!("\n{title} (min / median / max of the runs, percent)");
        for (name, perf, ours) in &self.0 {
            let show = |v: &[f64]| {
                let (a, b, c) = min_median_max(v);
                format!("{a:.2} / {b:.2} / {c:.2}")
            };
            println!(
                "  {name:<28} perf record {:<22} sample {}",
                show(perf),
                show(ours)
            );
        }
    }
}

/// Part 1: `-a`.
fn system_wide(dir: &Path, exe: &Path, sample: &Path, runs: usize) -> Series {
    let mut s = Series::default();
    let data = dir.join("a.data");
    for _ in 0..runs {
        let rec = Command::new("perf")
            .args(["record", "-q", "-a", "-e", "cpu-clock", "-c", "50000", "-o"])
            .arg(&data)
            .arg("--")
            .arg(exe)
            .arg("300000000")
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = rec.id();
        assert!(
            rec.wait_with_output().unwrap().status.success(),
            "perf record -a"
        );
        let perf = perf_report(&data, &["--sort", "dso,sym"]);
        let ours = run(
            Command::new(sample)
                .args(["-a", "-c50000", "-ecpu-clock", "--"])
                .arg(exe)
                .arg("300000000"),
            "sample -a",
        );
        s.push(
            "own share of all samples",
            pid_share(&data, &format!("{pid}:")),
            own_line(&ours),
        );
        for f in ["hot_twice", "hot_once"] {
            s.push(
                &format!("{f} of the workload's"),
                share_in_hot(&perf, f),
                share_in_hot(&ours, f),
            );
        }
    }
    s
}

/// Per-function totals of folded stacks, in percent of all samples (the
/// first frame, the command's name, is not a function).
fn folded_totals(text: &str) -> HashMap<String, f64> {
    let mut totals = HashMap::new();
    let mut all = 0.0;
    for line in text.lines() {
        let (stack, n) = line.rsplit_once(' ').expect("`stack count`");
        let n: f64 = n.parse().expect("a count");
        all += n;
        let frames: HashSet<&str> = stack.split(';').skip(1).collect();
        for f in frames {
            *totals.entry(f.to_string()).or_default() += n;
        }
    }
    totals.values_mut().for_each(|v| *v *= 100.0 / all);
    totals
}

/// perf report --children: symbol -> Children percent.
fn perf_children(text: &str) -> HashMap<String, f64> {
    // Lines `    66.88%    66.30%  [.] hot_twice`.
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let pct: f64 = f.next()?.strip_suffix('%')?.parse().ok()?;
            let (_self, _mode) = (f.next()?, f.next()?);
            Some((f.collect::<Vec<_>>().join(" "), pct))
        })
        .collect()
}

/// Part 2: `-g`, the "Children" shares.
fn callchains(dir: &Path, exe: &Path, sample: &Path, runs: usize) -> Series {
    let mut s = Series::default();
    let (data, folded) = (dir.join("g.data"), dir.join("out.folded"));
    for _ in 0..runs {
        run(
            Command::new("perf")
                .args(["record", "-q", "-g", "-e", "cpu-clock", "-c", "50000", "-o"])
                .arg(&data)
                .arg("--")
                .arg(exe)
                .arg("300000000"),
            "perf record -g",
        );
        let perf = perf_children(&perf_report(
            &data,
            &["--children", "--sort", "sym", "-g", "none"],
        ));
        run(
            Command::new(sample)
                .args(["-g", "-c50000", "-ecpu-clock", "--folded"])
                .arg(&folded)
                .arg("--")
                .arg(exe)
                .arg("300000000"),
            "sample -g --folded",
        );
        let ours = folded_totals(&std::fs::read_to_string(&folded).unwrap());
        for f in ["main", "hot_twice", "hot_once"] {
            let get = |m: &HashMap<String, f64>| m.get(f).copied().unwrap_or(0.0);
            s.push(&format!("{f} children"), get(&perf), get(&ours));
        }
    }
    s
}

/// Part 3: perf report of the example's `-o` file and of perf record's.
fn files(dir: &Path, exe: &Path, sample: &Path, runs: usize) -> Series {
    let mut s = Series::default();
    let (ours, perfs) = (dir.join("ours.data"), dir.join("perf.data"));
    for _ in 0..runs {
        run(
            Command::new(sample)
                .args(["-e", "cpu-clock", "-c", "250000", "-o"])
                .arg(&ours)
                .arg(exe)
                .arg("200000000"),
            "sample -o",
        );
        run(
            Command::new("perf")
                .args(["record", "-q", "-e", "cpu-clock", "-c", "250000", "-o"])
                .arg(&perfs)
                .arg(exe)
                .arg("200000000"),
            "perf record",
        );
        let share = |d: &Path| share_in_hot(&perf_report(d, &["--sort", "dso,sym"]), "hot_twice");
        s.push("hot_twice of the workload's", share(&perfs), share(&ours));
    }
    s
}

/// Part 4: a plain run, the example's report against perf report.
fn plain(dir: &Path, exe: &Path, sample: &Path, runs: usize) -> Series {
    let mut s = Series::default();
    let data = dir.join("p.data");
    for _ in 0..runs {
        run(
            Command::new("perf")
                .args(["record", "-q", "-e", "cpu-clock", "-c", "1000000", "-o"])
                .arg(&data)
                .arg("--")
                .arg(exe)
                .arg("100000000"),
            "perf record",
        );
        let perf = perf_report(&data, &["--sort", "dso,sym"]);
        let ours = run(
            Command::new(sample)
                .args(["-e", "cpu-clock", "-c", "1000000", "--"])
                .arg(exe)
                .arg("100000000"),
            "sample",
        );
        for f in ["hot_twice", "hot_once"] {
            s.push(
                &format!("{f} of the workload's"),
                share_in_hot(&perf, f),
                share_in_hot(&ours, f),
            );
        }
    }
    s
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .map_or(5, |a| a.parse().expect("RUNS"));
    let dir = std::env::temp_dir().join(format!("sample-vs-perf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = hot(&dir);
    let sample = sample_binary();
    let parts = std::env::args().nth(2).unwrap_or("1234".into());
    println!("{runs} runs of each tool per part, interleaved");
    if parts.contains('1') {
        system_wide(&dir, &exe, &sample, runs)
            .print("1. -a, cpu-clock every 50 us, 300M iterations");
    }
    if parts.contains('2') {
        callchains(&dir, &exe, &sample, runs)
            .print("2. -g, cpu-clock every 50 us, 300M iterations");
    }
    if parts.contains('3') {
        files(&dir, &exe, &sample, runs).print("3. -o, cpu-clock every 250 us, 200M iterations");
    }
    if parts.contains('4') {
        plain(&dir, &exe, &sample, runs).print("4. plain, cpu-clock every 1 ms, 100M iterations");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
