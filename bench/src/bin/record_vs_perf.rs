//! Loss under a storm, against `perf record` (BENCHMARKS.md section 9):
//!
//! ```sh
//! cargo run --release -p bench --bin record_vs_perf -- [RUNS] [PAGES] [N]
//! ```
//!
//! The storm: one thread pinned on each CPU of the scenario makes N
//! `prctl(2)` calls with an option no kernel knows (24301, EINVAL), then
//! one more after the recorder caught up (`perf_bench::storm`); the
//! tracepoint `syscalls:sys_enter_prctl` with the filter `option == 24301`
//! fires exactly threads x (N + 1) times, whatever else runs on the
//! machine. A counting event on every CPU with the same filter confirms
//! that number in each run.
//!
//! Recorders, alternating, RUNS runs each per scenario, both pinned to
//! CPU 0 and both system-wide with PAGES data pages per CPU:
//!
//! - `taskset -c 0 perf record -a -e syscalls:sys_enter_prctl --filter
//!   'option == 24301' -m PAGES -o FILE -D -1 --control fifo:CTL,ACK`
//!   (enabled through its control fifo once it is ready); received and
//!   lost from its own summary and from `perf report --stats -i FILE`.
//! - perf-event-core: the same event and attr as perf's
//!   (IP | TID | TIME | CPU | PERIOD | RAW | IDENTIFIER, sample_id_all),
//!   one ring per CPU in a `RingSet`, drained in a loop into a perf.data
//!   file by `perf_data::Writer` (a round per pass, the records as they
//!   were in the rings, then each event's lost samples, as perf record
//!   ends); received and lost from the ring set's own accounting and from
//!   `perf report --stats -i FILE`.
//!
//! Scenarios: the storm on every CPU, the recorder's included; and the
//! recorder's CPU (0) left quiet, the storm on the others.

use perf_bench::perf_file::perf_data_writer;
use perf_bench::spread::min_median_max;
use perf_bench::storm::{cpus, pin, tracepoint_id, Storm};
use perf_event_core::abi::bitfield::attr_flags as flag;
use perf_event_core::attr::Attr;
use perf_event_core::event::Event;
use perf_event_core::fd::EventFd;
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::record::SampleLayout;
use perf_event_core::sys;
use perf_event_host::ringset::{Entry, Options, RingSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A prctl option no kernel defines: the call fails with EINVAL after the
/// sys_enter tracepoint fired, and the filter below keeps every other
/// prctl caller on the machine out of the count.
const OPTION: i32 = 24301;
const FILTER: &str = "option == 24301";

/// perf record's attr for a tracepoint with `-a` (`perf evlist -v`).
const SAMPLE: u64 = (sys::PERF_SAMPLE_IP
    | sys::PERF_SAMPLE_TID
    | sys::PERF_SAMPLE_TIME
    | sys::PERF_SAMPLE_CPU
    | sys::PERF_SAMPLE_PERIOD
    | sys::PERF_SAMPLE_RAW
    | sys::PERF_SAMPLE_IDENTIFIER) as u64;

fn attr(id: u64, sampling: bool) -> Attr {
    let a = Attr::new(Event::Tracepoint(id)).disabled(true);
    if sampling {
        a.sample_period(1)
            .sample_type_raw(SAMPLE)
            .flag(flag::SAMPLE_ID_ALL, 1)
    } else {
        a
    }
}

/// One counting event per CPU with the storm's filter: the ground truth.
struct Truth(Vec<EventFd>);

impl Truth {
    fn open(id: u64, cpus: &[usize]) -> Truth {
        let filter = std::ffi::CString::new(FILTER).unwrap();
        Truth(
            cpus.iter()
                .map(|&c| {
                    let fd = open(
                        &attr(id, false),
                        Scope::all_tasks_on(c as u32),
                        None,
                        OpenFlags::new(),
                    )
                    .unwrap_or_else(|e| panic!("{e}"));
                    fd.set_filter(&filter).expect("tracepoint filter");
                    fd.enable(false).unwrap();
                    fd
                })
                .collect(),
        )
    }

    fn count(&self) -> u64 {
        self.0.iter().map(|f| f.read_counts().unwrap().value).sum()
    }
}

/// What one recorder saw.
#[derive(Clone, Copy, Debug, Default)]
struct Seen {
    received: u64,
    lost: u64,
    /// From `perf report --stats` of the tool's file: (samples, lost samples).
    report: Option<(u64, u64)>,
}

/// perf-event-core: per-CPU rings, drained into a perf.data file.
fn record_ours(id: u64, storm_cpus: &[usize], pages: usize, n: u32, file: &Path) -> Seen {
    let a = attr(id, true);
    let filter = std::ffi::CString::new(FILTER).unwrap();
    let entries = cpus()
        .iter()
        .map(|&c| {
            let scope = Scope::all_tasks_on(c as u32);
            let fd = open(&a, scope, None, OpenFlags::new()).unwrap_or_else(|e| panic!("{e}"));
            fd.set_filter(&filter).expect("tracepoint filter");
            Entry {
                fd,
                event: 0,
                layout: SampleLayout::from_attr(&a),
                cpu: scope.cpu(),
                thread: scope.pid(),
            }
        })
        .collect();
    let opts = Options {
        data_pages: pages,
        ..Options::default()
    };
    let mut set = RingSet::new(entries, opts).unwrap_or_else(|e| panic!("{e}"));
    // A perf.data file, as perf record writes it: each pass over the rings
    // is one round, the rings' runs written as they are.
    let mut out = perf_data_writer(file, a, "syscalls:sys_enter_prctl", &set);
    let mut storm = Storm::new(n, storm_cpus, OPTION);
    for e in 0..set.entries() {
        set.fd(e).unwrap().enable(false).unwrap();
    }
    let mut received = 0u64;
    let mut drain = |set: &mut RingSet| {
        out.write_drained(set, |_, _, rec| {
            received += u64::from(rec.header.kind == sys::PERF_RECORD_SAMPLE);
        })
        .expect("perf.data write")
    };
    storm.start();
    while storm.running() {
        // perf record's loop: drain every ring again while the last pass
        // found records; when it found none, sleep until a ring is half
        // full (the kernel's default wakeup).
        if drain(&mut set) == 0 {
            set.wait(10).expect("epoll_wait");
        }
    }
    drain(&mut set);
    storm.last();
    drain(&mut set);
    for e in 0..set.entries() {
        set.fd(e).unwrap().disable(false).unwrap();
    }
    drain(&mut set);
    // As perf record ends a recording: each event's lost samples.
    out.write_lost_samples(&set)
        .expect("perf.data lost samples");
    out.finish().expect("perf.data finish");
    let l = set.total_losses();
    assert_eq!(
        (l.overruns, l.corrupt),
        (0, 0),
        "ring overruns or corrupt records"
    );
    Seen {
        received,
        lost: l.lost,
        report: Some(report_stats(file)),
    }
}

/// `perf record -a`, pinned to CPU 0, enabled through its control fifo.
fn record_perf(storm_cpus: &[usize], pages: usize, n: u32, file: &Path) -> Seen {
    let dir = file.with_extension("ctl");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (ctl, ack) = (dir.join("ctl"), dir.join("ack"));
    for f in [&ctl, &ack] {
        let c = std::ffi::CString::new(f.to_str().unwrap()).unwrap();
        // SAFETY: a valid C path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    }
    let mut child = Command::new("taskset")
        .args([
            "-c",
            "0",
            "perf",
            "record",
            "-a",
            "-e",
            "syscalls:sys_enter_prctl",
        ])
        .args(["--filter", FILTER, "-m", &pages.to_string(), "-D", "-1"])
        .arg("--control")
        .arg(format!("fifo:{},{}", ctl.display(), ack.display()))
        .arg("-o")
        .arg(file)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("taskset -c 0 perf record");
    // Opening the fifos waits for perf to open its ends.
    let mut ctl_w = std::fs::OpenOptions::new().write(true).open(&ctl).unwrap();
    let mut ack_r = BufReader::new(std::fs::File::open(&ack).unwrap());
    let mut storm = Storm::new(n, storm_cpus, OPTION);
    ctl_w.write_all(b"enable\n").unwrap();
    let mut line = String::new();
    ack_r.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ack", "perf record's control fifo");
    storm.start();
    storm.wait_done();
    // perf drains on its own (poll); give it the time ours spends in its
    // last drain before the final call of each thread.
    std::thread::sleep(Duration::from_millis(50));
    storm.last();
    std::thread::sleep(Duration::from_millis(50));
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    // perf ends on SIGINT by raising it again.
    assert!(
        status.success() || status.signal() == Some(libc::SIGINT),
        "perf record: {status}\n{err}"
    );
    let (received, lost) = perf_summary(&err);
    Seen {
        received,
        lost,
        report: Some(report_stats(file)),
    }
}

/// (samples, lost samples) from perf record's own last lines:
/// `Captured and wrote ... (N samples)` and, when it lost any, `Processed
/// T samples and lost P%!` (perf prints only the percentage: lost is
/// rounded from it).
fn perf_summary(err: &str) -> (u64, u64) {
    let received = err
        .lines()
        .find(|l| l.contains("Captured and wrote"))
        .and_then(|l| {
            l.rsplit('(')
                .next()?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("perf record's summary line:\n{err}"));
    let lost = err
        .lines()
        .find(|l| l.starts_with("Processed") && l.contains("samples and lost"))
        .and_then(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let total: f64 = w.get(1)?.parse().ok()?;
            let pct: f64 = w.get(5)?.trim_end_matches("%!").parse().ok()?;
            Some((total * pct / 100.0).round() as u64)
        })
        .unwrap_or(0);
    (received, lost)
}

/// (samples, lost samples) from `perf report --stats -i FILE`: `SAMPLE
/// events` of the aggregated stats and `LOST_SAMPLES events` of the
/// event's own stats (the kernel's count of samples it could not write,
/// read by perf record through PERF_FORMAT_LOST; the aggregated
/// `LOST_SAMPLES` and `LOST` lines count records, not samples).
fn report_stats(file: &Path) -> (u64, u64) {
    let out = Command::new("perf")
        .args(["report", "--stats", "-i"])
        .arg(file)
        .output()
        .expect("perf report --stats");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let field = |lines: &[&str], name: &str| {
        lines
            .iter()
            .find(|l| l.trim_start().starts_with(name))
            .and_then(|l| l.split(':').nth(1)?.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    let own = lines
        .iter()
        .position(|l| l.ends_with(" stats:") && !l.contains("Aggregated"));
    let lost = own.map_or(0, |i| field(&lines[i..], "LOST_SAMPLES events"));
    (field(&lines, "SAMPLE events"), lost)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(11);
    let pages: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(8);
    let n: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let id = tracepoint_id("syscalls", "sys_enter_prctl");
    pin(0);
    let all = cpus();
    let quiet = if all.len() > 1 {
        all[1..].to_vec()
    } else {
        all.clone()
    };
    let dir: PathBuf = std::env::temp_dir().join("record_vs_perf");
    std::fs::create_dir_all(&dir).unwrap();
    println!(
        "# loss under a storm: syscalls:sys_enter_prctl ({FILTER}), {n} + 1 prctls per storm \
         thread, {pages} data pages per CPU, both recorders pinned to CPU 0, {runs} runs each, \
         alternating\n"
    );
    for (what, storm_cpus) in [
        ("every CPU storms, the recorder's too", all.clone()),
        ("the recorder's CPU 0 quiet", quiet),
    ] {
        let generated = storm_cpus.len() as u64 * (u64::from(n) + 1);
        let truth = Truth::open(id, &all);
        let (mut ours, mut perf) = (Vec::new(), Vec::new());
        let started = Instant::now();
        for run in 0..runs {
            for ours_turn in [run % 2 == 0, run % 2 == 1] {
                let before = truth.count();
                let seen = if ours_turn {
                    record_ours(id, &storm_cpus, pages, n, &dir.join("ours.data"))
                } else {
                    record_perf(&storm_cpus, pages, n, &dir.join("perf.data"))
                };
                let fired = truth.count() - before;
                assert_eq!(fired, generated, "the counting event saw {fired} firings");
                if ours_turn {
                    assert_eq!(
                        seen.received + seen.lost,
                        generated,
                        "ours: received + lost == generated"
                    );
                    assert_eq!(
                        seen.report,
                        Some((seen.received, seen.lost)),
                        "ours: perf report --stats of our file agrees with our accounting"
                    );
                    ours.push(seen);
                } else {
                    perf.push(seen);
                }
            }
        }
        println!(
            "## {what}: storm CPUs {storm_cpus:?}, generated {generated} per run \
             ({:.0} s)\n",
            started.elapsed().as_secs_f64()
        );
        println!(
            "| run | perf-event-core received | lost | its file, perf report --stats: samples | lost \
             | perf record received | lost (own) | its file, perf report --stats: samples | lost |"
        );
        println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (i, (o, p)) in ours.iter().zip(&perf).enumerate() {
            let (os, ol) = o.report.unwrap_or_default();
            let (rs, rl) = p.report.unwrap_or_default();
            println!(
                "| {i} | {} | {} | {os} | {ol} | {} | {} | {rs} | {rl} |",
                o.received, o.lost, p.received, p.lost
            );
        }
        // perf's lost: the exact count of `perf report --stats` (its own
        // summary gives only a percentage, and only above a threshold).
        let perf_lost: Vec<u64> = perf
            .iter()
            .map(|p| p.report.map_or(p.lost, |r| r.1))
            .collect();
        let ours_lost: Vec<u64> = ours.iter().map(|o| o.lost).collect();
        let share = |v: &[u64]| -> Vec<f64> {
            v.iter()
                .map(|&l| l as f64 / generated as f64 * 100.0)
                .collect()
        };
        let (a, b) = (share(&ours_lost), share(&perf_lost));
        // Paired: ours lost / perf lost in the same run (perf lost 0: inf).
        let ratio: Vec<f64> = ours_lost
            .iter()
            .zip(&perf_lost)
            .map(|(&o, &p)| o as f64 / p.max(1) as f64)
            .collect();
        let pairs = || ours_lost.iter().zip(&perf_lost);
        let show = |(lo, med, hi): (f64, f64, f64)| format!("{lo:.2} / {med:.2} / {hi:.2}");
        println!(
            "\nlost, % of generated (min / median / max): perf-event-core {}, perf record {}",
            show(min_median_max(&a)),
            show(min_median_max(&b))
        );
        println!(
            "paired ratio ours lost / perf lost (perf's 0 taken as 1; min / median / max): {}; \
             ours lost fewer / as many / more than perf: {} / {} / {} of {runs} runs; received + lost == generated for ours \
             in every run, and perf report --stats of our file gives the same (both asserted); perf record \
             received + lost (report) == generated in {} of {runs}\n",
            show(min_median_max(&ratio)),
            pairs().filter(|(o, p)| o < p).count(),
            pairs().filter(|(o, p)| o == p).count(),
            pairs().filter(|(o, p)| o > p).count(),
            perf.iter()
                .zip(&perf_lost)
                .filter(|(p, &l)| p.received + l == generated)
                .count()
        );
    }
}
