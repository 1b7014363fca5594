//! Section 4: the cost of one measured region on a 3-event group
//! (task-clock, page-faults, context-switches: software events, so the
//! `read(2)` path): perf-event-core's `Monitor` start + stop (each one
//! PERF_FORMAT_GROUP read) against perf-event2's `Group` enable + disable +
//! read, and the system calls each makes per region, counted by
//! `strace -c` on a run of one candidate (`bench region-target`).

use crate::timing;
use perf_event::events::Software;
use perf_event::{Builder, Group};
use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Software as Sw};
use perf_event_core::monitor::Monitor;
use std::hint::black_box;
use std::process::Command;

fn ours() -> Monitor<3> {
    Monitor::open([
        Attr::new(Event::Software(Sw::TaskClock)),
        Attr::new(Event::Software(Sw::PageFaults)),
        Attr::new(Event::Software(Sw::ContextSwitches)),
    ])
    .expect("perf-event-core: 3 software events")
}

fn peer() -> Group {
    let mut group = Group::new().expect("perf-event2: group");
    for event in [
        Software::TASK_CLOCK,
        Software::PAGE_FAULTS,
        Software::CONTEXT_SWITCHES,
    ] {
        group
            .add(&Builder::new(event))
            .expect("perf-event2: group member");
    }
    group
}

fn our_region(m: &mut Monitor<3>) {
    m.start().expect("start");
    black_box(m.stop().expect("stop"));
}

fn peer_region(g: &mut Group) {
    g.enable().expect("enable");
    g.disable().expect("disable");
    black_box(g.read().expect("read"));
}

/// `bench region-target ours|perf-event2|group-reads N`: N regions of one
/// candidate (or N pairs of the monitor's group reads alone), for strace
/// or callgrind.
pub fn target(args: &[String]) {
    let n: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    match args.first().map(String::as_str) {
        Some("ours") => {
            let mut m = ours();
            for _ in 0..n {
                our_region(&mut m);
            }
        }
        Some("group-reads") => {
            let m = ours();
            for _ in 0..n {
                black_box(m.leader().read_group().expect("read"));
                black_box(m.leader().read_group().expect("read"));
            }
        }
        Some("perf-event2") => {
            let mut g = peer();
            for _ in 0..n {
                peer_region(&mut g);
            }
        }
        other => panic!("region-target ours|perf-event2|group-reads N, not {other:?}"),
    }
}

pub fn run() {
    println!("\n## one measured region, 3-event group (ns per region, median of rounds)\n");
    let mut m = ours();
    let mut g = peer();
    let single = ours();
    let lone = perf_event_core::open::open(
        &Attr::new(Event::Software(Sw::TaskClock))
            .read_format(perf_event_core::userpage::REQUIRED_READ_FORMAT),
        perf_event_core::open::Scope::this_thread(),
        None,
        perf_event_core::open::OpenFlags::new(),
    )
    .expect("task-clock");
    let results = timing::compare(
        31,
        20_000,
        &mut [
            ("perf-event2 Group enable + disable + read", &mut || {
                peer_region(&mut g)
            }),
            (
                "perf-event-core Monitor start + stop (2 group reads)",
                &mut || our_region(&mut m),
            ),
            ("perf-event-core one group read(2) alone", &mut || {
                black_box(single.leader().read_group().expect("read"));
            }),
            (
                "one read(2) of one event (task-clock, no GROUP)",
                &mut || {
                    black_box(lone.read_counts().expect("read"));
                },
            ),
        ],
    );
    timing::print(&results);
    let ratio = results[1].ratio_to_first;
    println!(
        "\nMonitor region vs perf-event2 region: {ratio:.3}x (target: <= 0.3x) -> {}",
        if ratio <= 0.3 { "met" } else { "NOT met" }
    );
    // The monitor against its own work in the kernel: two group reads.
    let [lo, mid, hi] = timing::paired(&results[1], &results[2], |m, g| m / (2.0 * g));
    println!(
        "Monitor region vs two group read(2)s, paired per round: min {lo:.3} median {mid:.3} \
         max {hi:.3} (target: <= 1.05) -> {}",
        if mid <= 1.05 {
            "met by the median"
        } else {
            "NOT met"
        }
    );
    syscalls();
}

/// Per-region syscalls of each candidate, from `strace -c`.
fn syscalls() {
    let regions = 1000u64;
    println!("\n### system calls per region (strace -c, {regions} regions)\n");
    let count = |which: &str| -> Result<Vec<(String, f64)>, String> {
        let out = std::env::temp_dir().join(format!("bench-strace-{which}.txt"));
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let status = Command::new("strace")
            .args(["-c", "-o"])
            .arg(&out)
            .arg(exe)
            .args(["region-target", which, &regions.to_string()])
            .status()
            .map_err(|e| format!("strace: {e} (`cargo xtask ci` installs it)"))?;
        if !status.success() {
            return Err(format!("strace failed: {status}"));
        }
        let text = std::fs::read_to_string(&out).map_err(|e| e.to_string())?;
        // Rows: % time, seconds, usecs/call, calls, [errors], syscall.
        Ok(text
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let name = *f.last()?;
                let calls: f64 = f.get(3)?.parse().ok()?;
                ["read", "ioctl"]
                    .contains(&name)
                    .then(|| (name.to_owned(), calls / regions as f64))
            })
            .collect())
    };
    println!("| candidate | read per region | ioctl per region |\n|---|---:|---:|");
    for which in ["perf-event2", "ours"] {
        match count(which) {
            Ok(rows) => {
                let get = |n: &str| rows.iter().find(|r| r.0 == n).map_or(0.0, |r| r.1);
                println!("| {which} | {:.2} | {:.2} |", get("read"), get("ioctl"));
            }
            Err(e) => println!("| {which} | {e} | |"),
        }
    }
    println!(
        "\n(setup calls — open, mmap, one ENABLE — are spread over {regions} regions; \
         the user-space path makes none per region: tests/monitor/monitor_kernel.rs counts them in the \
         aarch64 lab guest)"
    );
}
