//! `sample -a -- ./hot` against `perf record -a -- ./hot` (cpu-clock every
//! 50 us of CPU time, about 40,000 samples of the workload per run, five
//! runs of each interleaved, medians compared): the tool's own share of
//! all samples is no larger than perf record's own share, and the hot
//! functions' shares of the workload's samples are within 1 point of
//! perf report's. Shares of the workload's samples, not of all: the rest
//! of the machine (other builds on a shared 2-CPU host) differs between
//! two runs by far more than a point.
//!
//! The idle task's samples (pid 0, `0:swapper`: an idle CPU's cpu-clock
//! timer landing in its halt) are counted in both tools' runs and printed,
//! not compared as shares: how many there are depends on which CPU the
//! scheduler put the workload on and on the idle CPU's ticks, not on the
//! tool. On the 2-vCPU VM this was written on, an idle CPU 1 gave no
//! samples at all (its timer fired 20,000 times a second), an idle CPU 0
//! gave them until the kernel throttled the event (400 samples per tick
//! at perf_event_max_sample_rate 100000, HZ 250; a NOHZ-idle CPU has no
//! tick to lift it: PERF_RECORD_THROTTLE on CPU 0 only), with perf record
//! and this tool alike (the workload pinned by taskset to CPU 1: 1,888 and
//! 3,363 idle samples with perf record, 2,076 and 3,738 with sample). What
//! is asserted instead is what decides them: our attr equals perf
//! record's on every field the kernel reads when the timer fires in the
//! idle task, and perf report of our file counts the idle task's samples
//! (and every share) as our report does.
use crate::sample_support::{
    build_sample, hot, median, ok, one_busy_test_at_a_time, perf_on, perf_report, rows, sample,
    scratch, share_within, tools_here,
};
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

const PERIOD: &str = "50000";
const N: &str = "300000000";

/// One run: the tool's own share of all samples, hot_twice's and
/// hot_once's shares of the workload's samples, the idle task's share of
/// all samples (percent).
type Run = (f64, f64, f64, f64);

/// perf record -a (its file is `dir/a.data`).
fn perf_run(dir: &Path, exe: &Path) -> Option<Run> {
    let data = dir.join("a.data");
    let rec = Command::new("perf")
        .args(["record", "-q", "-a", "-e", "cpu-clock", "-c", PERIOD, "-o"])
        .arg(&data)
        .arg("--")
        .arg(exe)
        .arg(N)
        .spawn()
        .unwrap();
    let pid = rec.id();
    if !rec.wait_with_output().unwrap().status.success() {
        return None;
    }
    let r = rows(&perf_report(&data, &["--sort", "dso,sym"]));
    Some((
        pid_share(&data, &format!("{pid}:")),
        share_within(&r, "hot", "hot_twice"),
        share_within(&r, "hot", "hot_once"),
        pid_share(&data, "0:"),
    ))
}

/// The share of the samples of pid `prefix` (`"123:"`) in `perf report
/// --sort pid` (lines `    0.09%     9831:perf`, `    1.20%  0:swapper`).
fn pid_share(data: &Path, prefix: &str) -> f64 {
    perf_report(data, &["--sort", "pid"])
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let pct: f64 = f.next()?.strip_suffix('%')?.parse().ok()?;
            f.next()?.starts_with(prefix).then_some(pct)
        })
        .fold(0.0, |a, b| a + b)
}

/// The count and percent of a `# Samples of ...: X (P%)` line.
fn samples_line(text: &str, prefix: &str) -> (u64, f64) {
    text.lines()
        .find_map(|l| {
            let (_, tail) = l.strip_prefix(prefix)?.split_once("): ")?;
            let (n, pct) = tail.split_once(" (")?;
            Some((n.parse().ok()?, pct.strip_suffix("%)")?.parse().ok()?))
        })
        .unwrap_or_else(|| panic!("no line {prefix:?} in\n{text}"))
}

/// sample -a (with `extra` options): the report and its [`Run`].
fn sample_run(exe: &Path, extra: &[&str]) -> (String, Run) {
    let out = sample()
        .args(["-a", &format!("-c{PERIOD}"), "-ecpu-clock"])
        .args(extra)
        .arg("--")
        .arg(exe)
        .arg(N)
        .output()
        .unwrap();
    let text = ok(out, "sample -a");
    let r = rows(&text);
    let run = (
        samples_line(&text, "# Samples of this tool").1,
        share_within(&r, "hot", "hot_twice"),
        share_within(&r, "hot", "hot_once"),
        samples_line(&text, "# Samples of the idle task").1,
    );
    (text, run)
}

/// The fields of the first event of `perf evlist -v -i data` (`type: 1,
/// size: 128, ...`).
fn evlist_fields(data: &Path) -> HashMap<String, String> {
    let text = perf_on(data, &["evlist", "-v"]);
    let line = text.lines().next().unwrap_or_default();
    let line = line.replace("{ sample_period, sample_freq }", "sample_period");
    let (_, fields) = line.split_once(": ").unwrap_or_default();
    fields
        .split(", ")
        .filter_map(|f| f.split_once(": "))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// What the kernel reads of the attr when a cpu-clock event's timer fires
/// (kernel/events/core.c: `perf_swevent_hrtimer` and `perf_exclude_event`
/// take the sample or not by exclude_idle, exclude_user and
/// exclude_kernel; the period sets the timer and, with freq, the
/// throttling), so whether an idle CPU gives samples: the same for perf
/// record and us. (exclude_hv and exclude_guest, which differ, are not
/// read for software events.)
const IDLE_DECIDING: [&str; 7] = [
    "type",
    "config",
    "sample_period",
    "freq",
    "exclude_idle",
    "exclude_user",
    "exclude_kernel",
];

#[test]
fn own_share_and_hot_shares_match_perf_record_a() {
    if !tools_here() {
        return;
    }
    let dir = scratch("system-wide");
    let exe = hot(&dir);
    build_sample();
    let _busy = one_busy_test_at_a_time();
    let (mut perf, mut ours) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let Some(p) = perf_run(&dir, &exe) else {
            crate::lab_support::skip("needs perf", "perf record -a cannot sample here");
            return;
        };
        perf.push(p);
        ours.push(sample_run(&exe, &[]).1);
    }
    // Idle shares are printed, not compared: see the module docs.
    println!("perf (own %, hot_twice %, hot_once %, idle %): {perf:?}\nsample: {ours:?}");
    // The idle task's samples: what decides them is the same attr ...
    let data = dir.join("ours.data");
    let (text, _) = sample_run(&exe, &["-o", data.to_str().unwrap()]);
    let (theirs, mine) = (evlist_fields(&dir.join("a.data")), evlist_fields(&data));
    for field in IDLE_DECIDING {
        let get = |m: &HashMap<String, String>| m.get(field).cloned().unwrap_or("0".into());
        assert_eq!(
            get(&mine),
            get(&theirs),
            "{field}: ours {mine:?}\nperf record's {theirs:?}"
        );
    }
    // ... and our report counts them, and every sample, as perf does.
    let script = perf_on(&data, &["script", "-F", "pid"]);
    let pids: Vec<&str> = script.lines().map(str::trim).collect();
    let idle = pids.iter().filter(|p| **p == "0").count() as u64;
    // `# Event 'cpu-clock': N samples, 0 lost`.
    let all: Option<usize> = text.lines().find_map(|l| {
        l.strip_prefix("# Event 'cpu-clock': ")?
            .split(' ')
            .next()?
            .parse()
            .ok()
    });
    assert_eq!(
        all,
        Some(pids.len()),
        "samples: ours, perf script's\n{text}"
    );
    assert_eq!(
        samples_line(&text, "# Samples of the idle task").0,
        idle,
        "idle samples: our report against perf script of our file\n{text}"
    );
    let report_idle = pid_share(&data, "0:");
    let our_idle = samples_line(&text, "# Samples of the idle task").1;
    assert!(
        (report_idle - our_idle).abs() <= 0.011,
        "idle share: perf report {report_idle} %, ours {our_idle} %"
    );
    println!(
        "idle samples of the -o run: {idle} of {} ({our_idle} %)",
        pids.len()
    );
    let col = |v: &[Run], i: usize| median(v.iter().map(|t| [t.0, t.1, t.2][i]).collect());
    // Own shares are tenths of a percent and move by several hundredths
    // from run to run (CI saw perf's at 0.14, 0.15 and 0.19 % in one run,
    // and on a slower day perf's 0.17-0.28 % against ours 0.11-0.44 %):
    // ours is no larger than perf's median plus perf's own run-to-run
    // spread, or 0.15 points when perf's five runs happened to spread less.
    let perf_own: Vec<f64> = perf.iter().map(|t| t.0).collect();
    let spread = (perf_own.iter().copied().fold(f64::MIN, f64::max)
        - perf_own.iter().copied().fold(f64::MAX, f64::min))
    .max(0.15);
    assert!(
        col(&ours, 0) <= col(&perf, 0) + spread,
        "the tool's own share {:.2} % > perf record's {:.2} % (+ its spread {spread:.2})\n\
         perf: {perf:?}\nours: {ours:?}",
        col(&ours, 0),
        col(&perf, 0)
    );
    for (i, name) in [(1, "hot_twice"), (2, "hot_once")] {
        let (p, o) = (col(&perf, i), col(&ours, i));
        assert!(
            (p - o).abs() <= 1.0,
            "{name}: perf {p:.2} %, sample {o:.2} % of the workload's samples\nperf: \
             {perf:?}\nours: {ours:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
