//! `sample -g --folded FILE -- ./hot` against `perf record -g -- ./hot` +
//! `perf report --children`: the folded stacks are flame-graph input
//! (`comm;caller;...;callee count`, the command's name first), and each
//! function's total in them (the samples whose stack holds it, once per
//! stack) is within 1 point of perf's "Children" share, for every function
//! with 5 % or more in either (cpu-clock every 50 us of CPU time, about
//! 40,000 samples a run; medians of three runs of each, interleaved).

use crate::sample_support::{
    build_sample, hot, median, ok, one_busy_test_at_a_time, perf_report, sample, scratch,
    tools_here,
};
use std::collections::{HashMap, HashSet};
use std::process::Command;

const PERIOD: &str = "50000";
const N: &str = "300000000";

type Totals = HashMap<String, f64>;

/// perf report --children: symbol -> Children percent.
fn perf_children(dir: &std::path::Path, exe: &std::path::Path) -> Option<Totals> {
    let data = dir.join("g.data");
    let rec = Command::new("perf")
        .args(["record", "-q", "-g", "-e", "cpu-clock", "-c", PERIOD, "-o"])
        .arg(&data)
        .arg("--")
        .arg(exe)
        .arg(N)
        .output()
        .unwrap();
    if !rec.status.success() {
        return None;
    }
    let text = perf_report(&data, &["--children", "--sort", "sym", "-g", "none"]);
    // Lines `    66.88%    66.30%  [.] hot_twice`.
    Some(
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let pct: f64 = f.next()?.strip_suffix('%')?.parse().ok()?;
                let (_self, _mode) = (f.next()?, f.next()?);
                Some((f.collect::<Vec<_>>().join(" "), pct))
            })
            .collect(),
    )
}

/// Per-function totals of folded stacks, in percent of all samples; the
/// first frame (the command's name) is not a function.
fn folded_totals(text: &str) -> Totals {
    let mut totals = Totals::new();
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

#[test]
fn folded_stacks_match_perf_report_children() {
    if !tools_here() {
        return;
    }
    let dir = scratch("callchains");
    let exe = hot(&dir);
    build_sample();
    let _busy = one_busy_test_at_a_time();
    let folded = dir.join("out.folded");
    let (mut perf, mut ours) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let Some(p) = perf_children(&dir, &exe) else {
            crate::lab_support::skip("needs perf", "perf record -g cannot sample here");
            return;
        };
        perf.push(p);
        let out = sample()
            .args(["-g", &format!("-c{PERIOD}"), "-ecpu-clock", "--folded"])
            .arg(&folded)
            .arg("--")
            .arg(&exe)
            .arg(N)
            .output()
            .unwrap();
        let report = ok(out, "sample -g --folded");
        assert!(report.contains("# Children      Self"), "{report}");
        let text = std::fs::read_to_string(&folded).unwrap();
        assert!(
            text.lines().all(|l| l.starts_with("hot;")),
            "every stack starts with the command's name:\n{text}"
        );
        ours.push(folded_totals(&text));
    }
    let med = |runs: &[Totals], f: &str| {
        median(
            runs.iter()
                .map(|r| r.get(f).copied().unwrap_or(0.0))
                .collect(),
        )
    };
    let mut names: Vec<&String> = perf.iter().chain(&ours).flat_map(|r| r.keys()).collect();
    names.sort();
    names.dedup();
    let mut compared = Vec::new();
    for f in names {
        let (p, o) = (med(&perf, f), med(&ours, f));
        if p < 5.0 && o < 5.0 {
            continue;
        }
        compared.push(format!("{f}: perf {p:.2} %, sample {o:.2} %"));
        assert!(
            (p - o).abs() <= 1.0,
            "{f}: perf report --children {p:.2} %, folded stacks {o:.2} %\nperf: {perf:?}\nours: \
             {ours:?}"
        );
    }
    println!("{}", compared.join("\n"));
    // `work` is not among them: the leaf functions keep no frame pointer
    // at -O1 here, so the frame walk of both tools goes from the leaf to
    // `main` (work's return address is skipped alike).
    for f in ["main", "hot_twice", "hot_once"] {
        assert!(
            compared.iter().any(|c| c.starts_with(&format!("{f}:"))),
            "{f}: {compared:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
