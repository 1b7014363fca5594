//! What the perf.data tests share: the sample example run on the hot
//! workload with `-o`, report shares, and a sample as `perf script -F
//! pid,tid,cpu,time,period,event,ip` prints it next to the same sample read
//! with the crate's reader.

use crate::sample_support::{build_sample, hot, ok, one_busy_test_at_a_time, rows, sample_binary};
use perf_data_file::PerfData;
use perf_event_core::record::{Context, Record};
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// Records the hot workload with `-o data`; returns the example's report.
pub fn record_hot(dir: &Path, data: &Path, extra: &[&str]) -> String {
    let exe = hot(dir);
    build_sample();
    let _busy = one_busy_test_at_a_time();
    let out = Command::new(sample_binary())
        .args(["-e", "cpu-clock", "-c", "250000"])
        .args(extra)
        .arg("-o")
        .arg(data)
        .arg(&exe)
        .arg("400000000")
        .output()
        .unwrap();
    ok(out, "sample -o")
}

pub fn shares(rows: &[(String, String, f64)]) -> HashMap<(String, String), f64> {
    let mut m = HashMap::new();
    for (dso, sym, pct) in rows {
        *m.entry((dso.clone(), sym.clone())).or_insert(0.0) += pct;
    }
    m
}

/// A sample as perf script prints it with `-F pid,tid,cpu,time,period,event,ip --ns`.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone)]
pub struct Line {
    pub time: u64,
    pub pid: u32,
    pub tid: u32,
    pub cpu: u32,
    pub period: u64,
    pub event: String,
    /// The sampled ip (perf script prints it only without callchains).
    pub ip: Option<u64>,
    /// How many addresses the callchain has (context markers left out),
    /// as perf script prints them under the sample (each relative to its
    /// object, so only their number is compared).
    pub chain: usize,
}

pub fn script_samples(data: &Path) -> Vec<Line> {
    let out = Command::new("perf")
        .args([
            "script",
            "-F",
            "pid,tid,cpu,time,period,event,ip",
            "--ns",
            "-i",
        ])
        .arg(data)
        .output()
        .unwrap();
    let text = ok(out, "perf script");
    let mut out: Vec<Line> = Vec::new();
    for l in text.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() == 1 {
            // A callchain entry of the sample above.
            out.last_mut().unwrap().chain += 1;
            continue;
        }
        if w.len() < 5 {
            continue;
        }
        out.push({
            // 25422/25422 [001] 12859.677273607:    1000000 cpu-clock:      55b4e8d3d159
            let (pid, tid) = w[0].split_once('/').unwrap();
            let (s, ns) = w[2].trim_end_matches(':').split_once('.').unwrap();
            Line {
                time: s.parse::<u64>().unwrap() * 1_000_000_000 + ns.parse::<u64>().unwrap(),
                pid: pid.parse().unwrap(),
                tid: tid.parse().unwrap(),
                cpu: w[1].trim_matches(['[', ']']).parse().unwrap(),
                period: w[3].parse().unwrap(),
                event: w[4].trim_end_matches(':').to_string(),
                ip: w.get(5).map(|ip| u64::from_str_radix(ip, 16).unwrap()),
                chain: 0,
            }
        });
    }
    out
}

/// perf script's default `--max-stack` (`PERF_MAX_STACK_DEPTH`).
pub const PERF_MAX_STACK: usize = 127;

/// Every sample of `file` read with the crate's reader, as perf script
/// prints it; and the number of FINISHED_ROUND records.
pub fn crate_samples(file: &PerfData) -> (Vec<Line>, usize) {
    let mut ours = Vec::new();
    let mut rounds = 0;
    for rec in file.records() {
        let (_, bytes) = rec.unwrap();
        if u32::from_ne_bytes(bytes[..4].try_into().unwrap()) == 68 {
            rounds += 1;
            continue;
        }
        let parsed = file.parse(bytes).unwrap();
        let Record::Sample(s) = parsed.record else {
            continue;
        };
        let attr = file.attr_of(bytes).unwrap();
        let (pid, tid) = s.pid_tid().unwrap();
        ours.push(Line {
            time: s.time().unwrap(),
            pid,
            tid,
            cpu: s.cpu().unwrap(),
            // A fixed period is the attr's (perf script prints it).
            period: s.period().unwrap_or(attr.raw.sample_period()),
            event: attr.name.clone().unwrap(),
            ip: s.callchain().is_none().then(|| s.ip().unwrap()),
            // perf script prints at most --max-stack (127) entries: a
            // deep stack (rustc's recursion, under -a) is cut there.
            chain: s
                .callchain()
                .map_or(0, |c| {
                    c.iter()
                        .filter(|v| Context::from_marker(*v).is_none())
                        .count()
                })
                .min(PERF_MAX_STACK),
        });
    }
    (ours, rounds)
}

/// How perf prints a CPU of the topology.
pub fn cpu_line(i: usize, c: &perf_data_file::CoreAndSocket, die: Option<&u32>) -> String {
    match die {
        Some(d) => format!(
            "# CPU {i}: Core ID {}, Die ID {d}, Socket ID {}",
            c.core_id, c.socket_id
        ),
        None => format!(
            "# CPU {i}: Core ID {}, Socket ID {}",
            c.core_id, c.socket_id
        ),
    }
}

/// Every (object, symbol) share of two reports within 0.5 point.
pub fn within_half_a_point(a: &str, b: &str, what: &str) {
    let (x, y) = (shares(&rows(a)), shares(&rows(b)));
    assert!(
        !x.is_empty() && !y.is_empty(),
        "{what}: empty report\n{a}\n{b}"
    );
    for key in x.keys().chain(y.keys()) {
        let (p, q) = (x.get(key).unwrap_or(&0.0), y.get(key).unwrap_or(&0.0));
        assert!(
            (p - q).abs() <= 0.5,
            "{what}: {key:?}: {p}% vs {q}%\n{a}\n{b}"
        );
    }
}
