//! A mini `perf stat`: counts events for a command, as the perf tool does.
//!
//! ```sh
//! cargo run --release --example stat -- [-e EVENTS]... [-r N] [-x SEP] -- CMD ARGS
//! ```
//!
//! The command is forked, waits on a pipe while its events are opened with
//! `disabled` + `enable_on_exec` + `inherit` (CLOEXEC on our fds), then
//! execs: counting starts exactly at exec and covers its threads and
//! children. Events use perf's syntax (`-e cycles:u,{task-clock,page-faults}`);
//! events the machine lacks print `<not supported>`, events that never ran
//! `<not counted>`, multiplexed ones are scaled with the percentage shown.
//! The command's exit status is passed through.

use perf_event_core::attr::Attr;
use perf_event_core::fd::EventFd;
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::parse::{parse, Builtin, Resolver, System};
use perf_event_core::read_format::{Counts, Scaled};
use perf_event_core::sys;
use std::ffi::CString;
use std::time::{Duration, Instant};

const DEFAULT_EVENTS: &str = "task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,branch-misses";
const TIMES: u64 =
    (sys::PERF_FORMAT_TOTAL_TIME_ENABLED | sys::PERF_FORMAT_TOTAL_TIME_RUNNING) as u64;

struct Options {
    events: String,
    runs: usize,
    csv: Option<String>,
    command: Vec<String>,
}

fn usage(msg: &str) -> ! {
    eprintln!("stat: {msg}\nusage: stat [-e EVENTS]... [-r N] [-x SEP] [--] CMD [ARGS...]");
    std::process::exit(129)
}

fn options() -> Options {
    let mut args = std::env::args().skip(1);
    let (mut events, mut runs, mut csv) = (Vec::new(), 1, None);
    let mut command = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "-e" => events.push(args.next().unwrap_or_else(|| usage("-e needs events"))),
            "-r" => {
                runs = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|n| *n > 0)
                    .unwrap_or_else(|| usage("-r needs a count"))
            }
            "-x" => csv = Some(args.next().unwrap_or_else(|| usage("-x needs a separator"))),
            "--" => {
                command.extend(args.by_ref());
                break;
            }
            _ => {
                command.push(a);
                command.extend(args.by_ref());
                break;
            }
        }
    }
    if command.is_empty() {
        usage("no command given");
    }
    let events = if events.is_empty() {
        DEFAULT_EVENTS.to_owned()
    } else {
        events.join(",")
    };
    Options {
        events,
        runs,
        csv,
        command,
    }
}

/// One event as requested: its name and attr, its group leader's index.
struct Wanted {
    name: String,
    attr: Attr,
    leader: usize,
}

/// One event's result in one run.
#[derive(Clone, Copy)]
enum Outcome {
    NotSupported,
    Counted(Counts),
}

fn wanted(events: &str) -> Vec<Wanted> {
    let system = System::discover();
    let resolver: &dyn Resolver = match &system {
        Ok(s) => s,
        Err(_) => &Builtin,
    };
    let list = parse(events, resolver).unwrap_or_else(|e| usage(&format!("{e}")));
    let mut out = Vec::new();
    for group in list.groups() {
        let leader = out.len();
        for (i, ev) in group.iter().enumerate() {
            let attr = ev.attr.read_format(TIMES).inherit(true);
            // Only group leaders wait for exec; members follow their leader.
            let attr = if i == 0 {
                attr.disabled(true).enable_on_exec(true)
            } else {
                attr
            };
            out.push(Wanted {
                name: ev.name.unwrap_or(ev.text).to_owned(),
                attr,
                leader,
            });
        }
    }
    out
}

/// Forks the command, opens the events on it, lets it exec, waits.
/// Returns the outcomes, the elapsed time and the exit status.
fn run_once(events: &[Wanted], argv: &[CString]) -> (Vec<Outcome>, Duration, i32) {
    let mut pipe = [0; 2];
    // SAFETY: pipe2 fills two fds.
    let rc = unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2");
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // SAFETY: the child only calls async-signal-safe functions (read,
    // execvp, write, _exit) on memory prepared before the fork.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let mut go = 0u8;
        // SAFETY: see above; exec failure exits 127 like a shell.
        unsafe {
            libc::read(pipe[0], (&mut go as *mut u8).cast(), 1);
            libc::execvp(ptrs[0], ptrs.as_ptr());
            let msg = b"stat: cannot execute the command\n";
            libc::write(2, msg.as_ptr().cast(), msg.len());
            libc::_exit(127);
        }
    }
    assert!(pid > 0, "fork failed");
    let mut fds: Vec<Option<EventFd>> = Vec::with_capacity(events.len());
    for (i, ev) in events.iter().enumerate() {
        let group = if ev.leader == i {
            None
        } else {
            fds[ev.leader].as_ref()
        };
        let fd = match open(&ev.attr, Scope::thread(pid), group, OpenFlags::new()) {
            Ok(fd) => Some(fd),
            Err(e) => {
                if std::env::var_os("STAT_VERBOSE").is_some() {
                    eprintln!("stat: {}: {e}", ev.name);
                }
                None
            }
        };
        fds.push(fd);
    }
    let start = Instant::now();
    // SAFETY: one byte to our pipe releases the child into exec.
    unsafe {
        libc::write(pipe[1], [1u8].as_ptr().cast(), 1);
        libc::close(pipe[0]);
        libc::close(pipe[1]);
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let elapsed = start.elapsed();
    let outcomes = fds
        .iter()
        .map(|fd| match fd.as_ref().map(|fd| fd.read_counts()) {
            Some(Ok(c)) => Outcome::Counted(c),
            _ => Outcome::NotSupported,
        })
        .collect();
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    (outcomes, elapsed, code)
}

/// Mean and the relative standard deviation of the mean (perf's "+-").
fn mean_rsd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    if v.len() < 2 || mean == 0.0 {
        return (mean, 0.0);
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, 100.0 * (var / n).sqrt() / mean)
}

fn main() {
    let opts = options();
    let events = wanted(&opts.events);
    let argv: Vec<CString> = opts
        .command
        .iter()
        .map(|a| CString::new(a.as_str()).unwrap_or_else(|_| usage("NUL in argument")))
        .collect();
    let (mut runs, mut times, mut code) = (Vec::new(), Vec::new(), 0);
    for _ in 0..opts.runs {
        let (outcomes, elapsed, status) = run_once(&events, &argv);
        runs.push(outcomes);
        times.push(elapsed.as_secs_f64());
        code = status;
    }
    report(&opts, &events, &runs, &times);
    std::process::exit(code);
}

/// Per event: scaled mean value, its rsd, the mean percentage running, or None.
fn summarize(runs: &[Vec<Outcome>], i: usize) -> Option<(f64, f64, Option<f64>, bool)> {
    let mut values = Vec::new();
    let mut percent = Vec::new();
    for run in runs {
        let Outcome::Counted(c) = run[i] else {
            return None;
        };
        match c.scaled() {
            Scaled::Exact(v) | Scaled::NoTimes(v) => values.push(v as f64),
            Scaled::Estimated {
                value,
                percent_running,
            } => {
                values.push(value as f64);
                percent.push(f64::from(percent_running));
            }
            Scaled::NotCounted => return Some((0.0, 0.0, None, false)),
            Scaled::Inconsistent { value, .. } => values.push(value as f64),
        }
    }
    let (mean, rsd) = mean_rsd(&values);
    let pct = (!percent.is_empty()).then(|| percent.iter().sum::<f64>() / percent.len() as f64);
    Some((mean, rsd, pct, true))
}

fn report(opts: &Options, events: &[Wanted], runs: &[Vec<Outcome>], times: &[f64]) {
    let stats: Vec<_> = (0..events.len()).map(|i| summarize(runs, i)).collect();
    let find = |name: &str| {
        events
            .iter()
            .position(|e| e.name == name)
            .and_then(|i| stats[i])
            .filter(|s| s.3)
            .map(|s| s.0)
    };
    let (elapsed, elapsed_rsd) = mean_rsd(times);
    let task_clock_ms = find("task-clock").map(|ns| ns / 1e6);
    if let Some(sep) = &opts.csv {
        for (ev, s) in events.iter().zip(&stats) {
            let is_clock = ev.name == "task-clock" || ev.name == "cpu-clock";
            match s {
                None => println!("<not supported>{sep}{sep}{}{sep}0{sep}100.00", ev.name),
                Some((_, _, _, false)) => {
                    println!("<not counted>{sep}{sep}{}{sep}0{sep}0.00", ev.name)
                }
                Some((v, _, pct, true)) => {
                    let (value, unit) = if is_clock {
                        (format!("{:.2}", v / 1e6), "msec")
                    } else {
                        (format!("{v:.0}"), "")
                    };
                    println!(
                        "{value}{sep}{unit}{sep}{}{sep}{sep}{:.2}",
                        ev.name,
                        pct.unwrap_or(100.0)
                    );
                }
            }
        }
        return;
    }
    let runs_note = if runs.len() > 1 {
        format!(" ({} runs)", runs.len())
    } else {
        String::new()
    };
    println!(
        "\n Performance counter stats for '{}'{runs_note}:\n",
        opts.command.join(" ")
    );
    for (ev, s) in events.iter().zip(&stats) {
        let Some((v, rsd, pct, counted)) = *s else {
            println!("{:>20}      {}", "<not supported>", ev.name);
            continue;
        };
        if !counted {
            println!("{:>20}      {}", "<not counted>", ev.name);
            continue;
        }
        let is_clock = ev.name == "task-clock" || ev.name == "cpu-clock";
        let value = if is_clock {
            format!("{:.2} msec", v / 1e6)
        } else {
            format!("{v:.0}     ")
        };
        let metric = match ev.name.as_str() {
            n if is_clock && n == "task-clock" => {
                format!("#  {:8.3} CPUs utilized", v / 1e9 / elapsed.max(1e-9))
            }
            "instructions" => find("cycles").map_or(String::new(), |c| {
                format!("#  {:8.2}  insn per cycle", v / c.max(1.0))
            }),
            "branch-misses" => find("branches").map_or(String::new(), |b| {
                format!("#  {:8.2}% of all branches", 100.0 * v / b.max(1.0))
            }),
            _ => task_clock_ms.map_or(String::new(), |ms| rate(v / (ms / 1e3))),
        };
        let noise = if runs.len() > 1 {
            format!("  ( +- {rsd:5.2}% )")
        } else {
            String::new()
        };
        let running = pct.map_or(String::new(), |p| format!("  ({p:.2}%)"));
        println!("{value:>20} {:<25} {metric:<35}{noise}{running}", ev.name);
    }
    let noise = if runs.len() > 1 {
        format!(
            " +- {:.6} ( +- {elapsed_rsd:5.2}% )",
            elapsed * elapsed_rsd / 100.0
        )
    } else {
        String::new()
    };
    println!("\n{elapsed:>17.9} seconds time elapsed{noise}\n");
}

fn rate(per_sec: f64) -> String {
    let (v, unit) = if per_sec >= 1e9 {
        (per_sec / 1e9, "G/sec")
    } else if per_sec >= 1e6 {
        (per_sec / 1e6, "M/sec")
    } else if per_sec >= 1e3 {
        (per_sec / 1e3, "K/sec")
    } else {
        (per_sec, "/sec")
    };
    format!("#  {v:8.3} {unit}")
}
