//! perf's control protocol in time (BENCHMARKS.md section 17): the round
//! trip `enable` → ack → `disable` → ack through the library's client,
//! against `perf stat`'s server and the stat example's, and the client's
//! own cost against a bare `write(2)` + `read(2)` of the same bytes.
//!
//! ```sh
//! cargo run --release -p bench --bin control_round_trip -- [ROUNDS]
//! ```
//!
//! ROUNDS (default 20) rounds of 200 round trips per case, the cases
//! interleaved (their order alternating from round to round) so that they
//! see the same load; min / median / max over every round trip. Each tool
//! runs `-D -1 --control fd:N,N -e task-clock -- sleep 600` over a socket
//! pair, so only its control loop is measured. perf is `perf` on PATH; the
//! stat example is built in release beside this binary.

use perf_bench::examples::stat_example;
use perf_bench::spread::min_median_max;
use perf_event_core::linux::io as os_io;
use perf_event_host::control::{Channel, Client, Tool};
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

/// One way of sending the two commands and reading the two acks.
enum Driver {
    Client(Client),
    /// The bare calls: one write of the line, one read of the 5-byte ack
    /// (the tool writes it in one write), on a socket pair.
    Bare {
        sock: File,
        tool: Child,
    },
}

impl Driver {
    fn client(tool: &[String]) -> Driver {
        let channel = Channel::socket_pair().unwrap();
        let mut cmd = command(tool, &channel.control_arg());
        Driver::Client(channel.spawn(&mut cmd, Tool::Stat).unwrap())
    }

    fn bare(tool: &[String]) -> Driver {
        let (mine, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let end: OwnedFd = os_io::dup_inheritable(theirs.as_fd()).unwrap().into();
        let control = format!("fd:{0},{0}", end.as_raw_fd());
        let child = command(tool, &control).spawn().unwrap();
        drop(end);
        Driver::Bare {
            sock: File::from(OwnedFd::from(mine)),
            tool: child,
        }
    }

    /// enable → ack → disable → ack, in ns.
    fn round_trip(&mut self) -> f64 {
        let start = Instant::now();
        match self {
            Driver::Client(c) => {
                c.enable().unwrap();
                c.disable().unwrap();
            }
            Driver::Bare { sock, .. } => {
                let mut ack = [0u8; 5];
                for line in [&b"enable\n"[..], b"disable\n"] {
                    sock.write_all(line).unwrap();
                    sock.read_exact(&mut ack).unwrap();
                    assert_eq!(&ack, b"ack\n\0");
                }
            }
        }
        start.elapsed().as_nanos() as f64
    }

    fn end(self) {
        match self {
            Driver::Client(mut c) => {
                let _ = c.child().unwrap().kill();
                let _ = c.finish();
            }
            Driver::Bare { mut tool, .. } => {
                let _ = tool.kill();
                let _ = tool.wait();
            }
        }
    }
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
    let mut cases: Vec<(&str, Driver)> = Vec::new();
    if has_perf {
        cases.push(("client -> perf stat", Driver::client(&perf)));
        cases.push(("bare write + read -> perf stat", Driver::bare(&perf)));
    } else {
        println!("perf is not installed or cannot count here: its rows are left out");
    }
    cases.push(("client -> stat example", Driver::client(&ours)));
    cases.push(("bare write + read -> stat example", Driver::bare(&ours)));
    // Warm up: the tools are started and listening once each answered.
    for (_, d) in &mut cases {
        for _ in 0..20 {
            d.round_trip();
        }
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    for round in 0..rounds {
        let order: Vec<usize> = if round % 2 == 0 {
            (0..cases.len()).collect()
        } else {
            (0..cases.len()).rev().collect()
        };
        for i in order {
            for _ in 0..PER_ROUND {
                times[i].push(cases[i].1.round_trip());
            }
        }
    }
    println!(
        "## control round trip (enable -> ack -> disable -> ack), {rounds} rounds x {PER_ROUND}, us"
    );
    println!("| case | min | median | max |");
    println!("|---|---:|---:|---:|");
    let mut medians = Vec::new();
    for ((name, _), t) in cases.iter().zip(&times) {
        let (lo, med, hi) = min_median_max(t);
        medians.push(med);
        println!(
            "| {name} | {:.1} | {:.1} | {:.1} |",
            lo / 1e3,
            med / 1e3,
            hi / 1e3
        );
    }
    let n = cases.len();
    println!(
        "\nour server / perf's (client, medians): {}",
        if has_perf {
            format!("{:.2}x", medians[n - 2] / medians[0])
        } else {
            "n/a".into()
        }
    );
    println!(
        "the client's own cost per round trip (client - bare, medians, stat example): {:.2} us ({:+.1} %)",
        (medians[n - 2] - medians[n - 1]) / 1e3,
        (medians[n - 2] / medians[n - 1] - 1.0) * 100.0
    );
    if has_perf {
        println!(
            "the client's own cost per round trip (client - bare, medians, perf stat): {:.2} us ({:+.1} %)",
            (medians[0] - medians[1]) / 1e3,
            (medians[0] / medians[1] - 1.0) * 100.0
        );
    }
    for (_, d) in cases {
        d.end();
    }
}
