//! Attaching to a whole machine, against `perf stat` (BENCHMARKS.md
//! section 10):
//!
//! ```sh
//! cargo run --release -p bench --bin attach_vs_perf -- [RUNS [cpus|pid]]
//! ```
//!
//! {task-clock, context-switches, page-faults} on every CPU (`perf stat
//! -a`), and on every thread of a process of 64 threads that the bench
//! starts (`perf stat -p PID`), opened, enabled, disabled, read and closed:
//!
//! - `perf stat -e task-clock,context-switches,page-faults -a -- sleep 0.1`
//!   and `... -p PID -- sleep 0.1`;
//! - perf-event-core's `set::EventSet` doing the same in a child process
//!   (this binary, `ours`), once with the three events as one group (the
//!   set's way: one ioctl and one `read(2)` per group) and once as three
//!   groups of one (perf stat's layout: one fd, ioctl and read each).
//!
//! Both tools start on CPU 0 (`taskset -c 0`), the 64 threads are pinned
//! to the last CPU (see `threads`). Each tool runs under the same tracer (`trace.rs`: raw_syscalls
//! tracepoints through `perf record`), RUNS runs each, alternating; per
//! phase: the phase's own calls, every call of the tool's thread between
//! its first and last (perf's `sched_setaffinity` included), and its wall
//! time; min / median / max over runs of the paired ratio ours / perf.
//! The crate's side also prints each library call whole (between markers:
//! the thread listing, the fd budget and the rescans of `/proc/PID/task`
//! included).

mod trace;

use perf_bench::spread::min_median_max;
use perf_bench::storm::{cpus, pin};

use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Software};
use perf_event_host::set::{BudgetPolicy, Cpus, EventSet, EventSpec, Target};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use trace::{Phase, PHASES};

const EVENTS: [(&str, Software); 3] = [
    ("task-clock", Software::TaskClock),
    ("context-switches", Software::ContextSwitches),
    ("page-faults", Software::PageFaults),
];
const THREADS: usize = 64;

fn marker() {
    // SAFETY: getppid has no arguments; the tracer sees it as a marker.
    unsafe { libc::getppid() };
}

/// `ours cpus|PID group|single`: the crate's side, bracketing each library
/// call with markers.
fn ours(args: &[String]) {
    let target = match args[0].as_str() {
        "cpus" => Target::Cpus(Cpus::read().expect("online CPUs").online().clone()),
        pid => Target::Process {
            pid: pid.parse().expect("a pid"),
            cpus: None,
            inherit: false,
        },
    };
    let specs = EVENTS
        .iter()
        .map(|&(name, sw)| EventSpec::new(name, Attr::new(Event::Software(sw))));
    let groups: Vec<Vec<EventSpec>> = match args[1].as_str() {
        "group" => vec![specs.collect()],
        _ => specs.map(|s| vec![s]).collect(),
    };
    marker();
    let mut set = EventSet::open(groups, target, BudgetPolicy::Fail).expect("EventSet::open");
    marker();
    marker();
    set.enable().expect("enable");
    marker();
    std::thread::sleep(std::time::Duration::from_millis(100));
    marker();
    set.disable().expect("disable");
    marker();
    marker();
    let n = set.read_all().expect("read_all").len();
    marker();
    marker();
    drop(set);
    marker();
    assert!(n > 0);
}

/// `threads N`: N threads in all (this one included), pinned to the last
/// CPU and parked until stdin closes; prints `ready` once they all exist.
/// An ioctl or open on a thread's event calls the CPU the thread last ran
/// on (a local call or an interrupt to the other CPU, 1.5 vs 15 µs on this
/// VM): with the tools on CPU 0 and the threads on the last CPU, both
/// tools pay the same.
fn threads(n: usize) {
    let cpu = *cpus().last().expect("an online CPU");
    pin(cpu);
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let parked: Vec<_> = (1..n)
        .map(|_| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                pin(cpu);
                tx.send(()).unwrap();
                std::thread::park();
            })
        })
        .collect();
    for _ in 1..n {
        rx.recv().unwrap();
    }
    println!("ready");
    std::io::stdout().flush().unwrap();
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(parked);
}

/// `strace -c -e trace=perf_event_open,ioctl,read,close CMD` (the tool's
/// own thread, not its `sleep` child): calls of each over the whole run,
/// perf fds or not (perf also reads sysfs and procfs files).
fn strace_counts(cmd: &[String]) -> Result<[u64; 4], String> {
    const NAMES: [&str; 4] = ["perf_event_open", "ioctl", "read", "close"];
    let out = std::env::temp_dir().join("attach_vs_perf.strace");
    let status = Command::new("strace")
        .args(["-c", "-e", "trace=perf_event_open,ioctl,read,close", "-o"])
        .arg(&out)
        .args(cmd)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("strace: {e} (`cargo xtask ci` installs it)"))?;
    if !status.success() {
        return Err(format!("strace: {status}"));
    }
    let text = std::fs::read_to_string(&out).map_err(|e| e.to_string())?;
    let mut counts = [0u64; 4];
    for line in text.lines() {
        // Rows: % time, seconds, usecs/call, calls, [errors], syscall.
        let f: Vec<&str> = line.split_whitespace().collect();
        if let (Some(name), Some(calls)) = (f.last(), f.get(3).and_then(|c| c.parse().ok())) {
            if let Some(i) = NAMES.iter().position(|n| n == name) {
                counts[i] = calls;
            }
        }
    }
    Ok(counts)
}

/// One scenario: RUNS runs of each tool, alternating, then the table.
fn scenario(what: &str, scope: &[&str], our_target: &str, runs: usize) {
    let exe = std::env::current_exe().unwrap();
    let data = std::env::temp_dir().join("attach_vs_perf.data");
    let events = EVENTS.map(|e| e.0).join(",");
    let mut perf_cmd: Vec<String> = ["perf", "stat", "-e", &events].map(String::from).to_vec();
    perf_cmd.extend(scope.iter().map(|s| s.to_string()));
    perf_cmd.extend(["--", "sleep", "0.1"].map(String::from));
    // Both tools start on CPU 0 (perf stat -a then moves itself to each
    // CPU in turn, as it always does).
    perf_cmd.splice(0..0, ["taskset", "-c", "0"].map(String::from));
    let ours_cmd = |layout: &str| -> Vec<String> {
        vec![
            "taskset".into(),
            "-c".into(),
            "0".into(),
            exe.display().to_string(),
            "ours".into(),
            our_target.into(),
            layout.into(),
        ]
    };
    let tools: [(&str, Vec<String>); 3] = [
        ("perf stat", perf_cmd.clone()),
        ("perf-event-core, one group", ours_cmd("group")),
        ("perf-event-core, 3 groups of 1", ours_cmd("single")),
    ];
    // results[tool][run] = phases; whole[tool][run] = library calls whole.
    let mut results: Vec<Vec<[Phase; 5]>> = vec![Vec::new(); 3];
    let mut whole: Vec<Vec<Vec<(usize, u64)>>> = vec![Vec::new(); 3];
    for run in 0..runs {
        for k in 0..3 {
            let t = (run + k) % 3;
            let calls = trace::trace(&tools[t].1, &data);
            results[t].push(trace::phases(&calls));
            whole[t].push(trace::between_markers(&calls));
        }
    }
    println!(
        "## {what}: `{}`, {runs} runs of each, alternating\n",
        perf_cmd.join(" ")
    );
    println!(
        "| phase | tool | its calls | all calls in the phase | µs (median) | \
         ratio to perf stat, paired (min / median / max) |"
    );
    println!("|---|---|---:|---:|---:|---:|");
    for (p, name) in PHASES.iter().enumerate() {
        for (t, (tool, _)) in tools.iter().enumerate() {
            let ph: Vec<Phase> = results[t].iter().map(|r| r[p]).collect();
            let med =
                |f: &dyn Fn(&Phase) -> f64| min_median_max(&ph.iter().map(f).collect::<Vec<_>>()).1;
            let ratio: Vec<f64> = results[t]
                .iter()
                .zip(&results[0])
                .map(|(a, b)| a[p].ns as f64 / b[p].ns.max(1) as f64)
                .collect();
            let (lo, mid, hi) = min_median_max(&ratio);
            println!(
                "| {name} | {tool} | {} | {} | {:.1} | {} |",
                med(&|x| x.calls as f64),
                med(&|x| x.all_calls as f64),
                med(&|x| x.ns as f64) / 1000.0,
                if t == 0 {
                    "1".to_owned()
                } else {
                    format!("{lo:.2} / {mid:.2} / {hi:.2}")
                }
            );
        }
    }
    println!(
        "\n`strace -c -e trace=perf_event_open,ioctl,read,close`, one run each \
         (whole run: perf's reads of sysfs / procfs files and the crate's of \
         /proc included):\n"
    );
    println!("| tool | perf_event_open | ioctl | read | close |\n|---|---:|---:|---:|---:|");
    for (tool, cmd) in &tools {
        match strace_counts(cmd) {
            Ok(c) => println!("| {tool} | {} | {} | {} | {} |", c[0], c[1], c[2], c[3]),
            Err(e) => println!("| {tool} | {e} | | | |"),
        }
    }
    println!("\nperf-event-core, each library call whole (calls, µs; medians):\n");
    for t in 1..3 {
        let cells: Vec<String> = PHASES
            .iter()
            .enumerate()
            .map(|(p, name)| {
                let calls: Vec<f64> = whole[t].iter().map(|w| w[p].0 as f64).collect();
                let ns: Vec<f64> = whole[t].iter().map(|w| w[p].1 as f64).collect();
                format!(
                    "{name} {} calls {:.1} µs",
                    min_median_max(&calls).1,
                    min_median_max(&ns).1 / 1000.0
                )
            })
            .collect();
        println!("- {}: {}", tools[t].0, cells.join(", "));
    }
    println!();
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ours") => return ours(&args[1..]),
        Some("threads") => return threads(args[1].parse().expect("a thread count")),
        _ => {}
    }
    let runs: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(11);
    println!("# attaching to a whole machine: perf-event-core's EventSet against perf stat\n");
    // `attach_vs_perf RUNS cpus|pid`: one scenario only.
    let only = args.get(1).map(String::as_str);
    if only != Some("pid") {
        scenario("every CPU", &["-a"], "cpus", runs);
    }
    if only == Some("cpus") {
        return;
    }
    let mut target = Command::new(std::env::current_exe().unwrap())
        .args(["threads", &THREADS.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the 64-thread process");
    let mut line = String::new();
    BufReader::new(target.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    let pid = target.id().to_string();
    let what = format!("every thread of a process of {THREADS} threads");
    scenario(&what, &["-p", &pid], &pid, runs);
    drop(target.stdin.take());
    target.wait().unwrap();
}
