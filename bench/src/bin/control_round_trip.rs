//! perf's control protocol in time (BENCHMARKS.md section 17): the round
//! trip `enable` → ack → `disable` → ack through the library's client,
//! against `perf stat`'s server and the stat example's, and the client's
//! own cost against a bare `write(2)` + `read(2)` of the same bytes.
//!
//! ```sh
//! cargo run --release -p bench --bin control_round_trip -- [ROUNDS]
//! ```
//!
//! ROUNDS (default 20) rounds of 100 pairs of round trips per tool, the
//! tools alternating from round to round so that they see the same load.
//! Within a pair, one round trip goes through the client and one through
//! the bare calls, on the same socket to the same tool, in alternating
//! order: the client's own cost is the median of the pairs' differences,
//! which the machine's drift between pairs cannot move. Each tool runs
//! `-D -1 --control fd:N,N -e task-clock -- sleep 600` over a socket pair,
//! so only its control loop is measured. perf is `perf` on PATH; the stat
//! example is built in release beside this binary.

use perf_bench::examples::stat_example;
use perf_bench::spread::min_median_max;
use perf_event_core::linux::io as os_io;
use perf_event_host::control::{Client, Tool as ToolKind};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

const PER_ROUND: usize = 200;

/// `tool` (argv up to its options) started with `-D -1 --control CONTROL`
/// on `sleep 600`, its output discarded.
fn command(tool: &[String], control: &str) -> Command {
    let mut cmd = Command::new(&tool[0]);
    cmd.args(&tool[1..])
        .args([
            "-D",
            "-1",
            "--control",
            control,
            "-e",
            "task-clock",
            "--",
            "sleep",
            "600",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// A tool listening on a socket pair, and two ways to drive it over the
/// same socket: the library's client and the bare calls.
struct Tool {
    client: Client,
    /// One write of the line, one read of the 5-byte ack (the tool writes
    /// it in one write).
    bare: File,
    child: Child,
}

impl Tool {
    fn start(tool: &[String]) -> Tool {
        let (mine, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let end: OwnedFd = os_io::dup_inheritable(theirs.as_fd()).unwrap().into();
        let control = format!("fd:{0},{0}", end.as_raw_fd());
        let child = command(tool, &control).spawn().unwrap();
        drop(end);
        let dup = || OwnedFd::from(mine.try_clone().unwrap());
        let client = Client::from_fds(dup(), Some(dup()), ToolKind::Stat);
        Tool {
            client,
            bare: File::from(OwnedFd::from(mine)),
            child,
        }
    }

    /// enable → ack → disable → ack through the client, in ns.
    fn client_round_trip(&mut self) -> f64 {
        let start = Instant::now();
        self.client.enable().unwrap();
        self.client.disable().unwrap();
        start.elapsed().as_nanos() as f64
    }

    /// The same with the bare calls, in ns.
    fn bare_round_trip(&mut self) -> f64 {
        let start = Instant::now();
        let mut ack = [0u8; 5];
        for line in [&b"enable\n"[..], b"disable\n"] {
            self.bare.write_all(line).unwrap();
            self.bare.read_exact(&mut ack).unwrap();
            assert_eq!(&ack, b"ack\n\0");
        }
        start.elapsed().as_nanos() as f64
    }

    fn end(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Round trips of one tool: (client, bare, client - bare of each adjacent
/// pair), the pair's order alternating.
#[derive(Default)]
struct Series {
    client: Vec<f64>,
    bare: Vec<f64>,
    diff: Vec<f64>,
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    let ours = vec![stat_example().to_str().unwrap().to_owned()];
    let perf = vec!["perf".to_owned(), "stat".to_owned()];
    let has_perf = Command::new("perf")
        .args(["stat", "-x,", "-e", "task-clock", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    let mut tools: Vec<(&str, Tool)> = Vec::new();
    if has_perf {
        tools.push(("perf stat", Tool::start(&perf)));
    } else {
        println!("perf is not installed or cannot count here: its rows are left out");
    }
    tools.push(("stat example", Tool::start(&ours)));
    // Warm up: each tool has answered before anything is timed.
    for (_, t) in &mut tools {
        for _ in 0..20 {
            t.client_round_trip();
            t.bare_round_trip();
        }
    }
    let mut series: Vec<Series> = tools.iter().map(|_| Series::default()).collect();
    for round in 0..rounds {
        // The tools alternate by round, the two ways by pair.
        let order: Vec<usize> = if round % 2 == 0 {
            (0..tools.len()).collect()
        } else {
            (0..tools.len()).rev().collect()
        };
        for i in order {
            let t = &mut tools[i].1;
            let s = &mut series[i];
            for pair in 0..PER_ROUND / 2 {
                let (c, b) = if pair % 2 == 0 {
                    let c = t.client_round_trip();
                    (c, t.bare_round_trip())
                } else {
                    let b = t.bare_round_trip();
                    (t.client_round_trip(), b)
                };
                s.client.push(c);
                s.bare.push(b);
                s.diff.push(c - b);
            }
        }
    }
    report(rounds, &tools, &series);
    for (_, t) in tools {
        t.end();
    }
}

fn report(rounds: usize, tools: &[(&str, Tool)], series: &[Series]) {
    println!(
        "## control round trip (enable -> ack -> disable -> ack), {rounds} rounds x {} pairs, us",
        PER_ROUND / 2
    );
    println!("| server | driven by | min | median | max |");
    println!("|---|---|---:|---:|---:|");
    for ((name, _), s) in tools.iter().zip(series) {
        for (way, v) in [("client", &s.client), ("bare write + read", &s.bare)] {
            let (lo, med, hi) = min_median_max(v);
            println!(
                "| {name} | {way} | {:.1} | {:.1} | {:.1} |",
                lo / 1e3,
                med / 1e3,
                hi / 1e3
            );
        }
    }
    for ((name, _), s) in tools.iter().zip(series) {
        let (_, bare, _) = min_median_max(&s.bare);
        let (lo, med, hi) = min_median_max(&s.diff);
        println!(
            "{name}: the client's own cost per round trip (client - bare, adjacent pairs): \
             median {:.2} us ({:+.1} % of bare), min {:.1}, max {:.1}",
            med / 1e3,
            med / bare * 100.0,
            lo / 1e3,
            hi / 1e3
        );
    }
    if series.len() == 2 {
        let (_, theirs, _) = min_median_max(&series[0].client);
        let (_, ours, _) = min_median_max(&series[1].client);
        println!(
            "our server / perf's (client, medians): {:.2}x",
            ours / theirs
        );
    }
}
