//! A mini `perf record` + `perf report --sort dso,sym`: samples a command,
//! a running process or the whole machine with one or more events, drains
//! every CPU's (or thread's) ring through one ring set, copying the records
//! as perf record copies them into perf.data; once the recording ended it
//! puts them in time order (so each sample meets the mappings made before
//! it) and prints, per event, the share of samples per object and symbol.
//!
//! Output, messages and exit statuses follow perf 6.1 (the perf this was
//! checked against, tests/perf_oracle/sample_*.rs); where a newer perf
//! words or names something differently (its default event's name, say),
//! this follows 6.1.
//!
//! ```sh
//! cargo run --release --example sample -- [-e EVENT]... [-c PERIOD | -F HZ] [-g] CMD ARGS
//! cargo run --release --example sample -- -a [-d SECONDS | -- CMD ARGS]
//! cargo run --release --example sample -- -p PID [-d SECONDS]
//! cargo run --release --example sample -- -g --folded out.folded -- CMD ARGS
//! cargo run --release --example sample -- -o perf.data -- CMD ARGS   # perf report -i perf.data
//! cargo run --release --example sample -- -o - -- CMD ARGS | perf report -i -
//! cargo run --release --example sample -- -i perf.data              # perf's or ours
//! ```
//!
//! Options are read as perf reads them: `-c100000`, `-F999`, `-ecpu-clock`,
//! `-ag`, `--freq=999`. Events are perf event strings (`cycles`,
//! `cpu-clock`, `sched:sched_switch`, `cpu/event=0x3c/`). Without `-e`:
//! `cycles` when the machine has a PMU, else `cpu-clock` (named
//! `cpu-clock:pppH` in messages, as perf 6.1 names its fallback). Without
//! `-c`/`-F`: 4000 Hz. `-a` and `-p` without a command record until Ctrl-C
//! or SIGTERM (`-p`: or the process's exit), as perf record does, or for
//! `-d SECONDS` (this tool's option; perf record's `-d` is `--data`).
//!
//! `-g` (or `--call-graph fp`) records callchains (frame pointers) and adds
//! a "Children" column, each symbol's share of the samples it is on the
//! stack of, as `perf report --children` (perf 6.1's default with
//! callchains). `--folded FILE` (implies `-g`) writes the first event's
//! stacks as `comm;caller;...;callee count` lines, the input of
//! flamegraph.pl (`-` for stdout instead of the report).
//!
//! `-o FILE` also writes the recording as perf.data with the library's
//! `perf_data::Writer` (the records as the rings hold them, each pass over
//! the rings a round; the kernel's mapping and, with `-a` / `-p`, the
//! running processes synthesized as perf record does; sample times on
//! CLOCK_MONOTONIC): `perf report`, `perf script` and the profilers'
//! importers read it, and SIGINT / SIGTERM close it first. `-o -` writes
//! perf's pipe format to stdout instead of the report. `-i FILE` reads a
//! perf.data file (perf's or ours, `-` for stdin) with `perf_data::PerfData`
//! and prints the same report.
//!
//! Symbols come from the ELF symbol tables of the mapped files and
//! /proc/kallsyms, as perf does without debug info, demangled (Rust, C++),
//! and are looked up only after the recording ended: while recording, the
//! tool only copies addresses out of the rings, so with `-a` its own share
//! of the samples (printed as "Samples of this tool") stays as small as
//! perf record's. Ctrl-C (SIGINT) or SIGTERM ends the recording; the report
//! of what was recorded is printed, then the tool dies of that signal, as
//! perf record does. A command that cannot be executed gets perf's message
//! and exit status 255; otherwise the exit status is the command's.

mod args;
mod capture;
mod launch;
mod perf_file;
mod recording;
mod report;
mod symbols;

use args::{usage, Args, Target};
use capture::Capture;
use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Hardware};
use perf_event_core::fallback::{self, Attempt, Policy};
use perf_event_core::open::{open, Scope};
use perf_event_core::record::SampleLayout;
use perf_event_core::sys;
use perf_event_host::parse::{parse, Builtin, Modifiers, System};
use perf_event_host::ringset::{Entry, Options, RingSet, Sharing};
use recording::Recording;
use report::Report;
use std::time::{Duration, Instant};

/// The events to open: name, attr, and whether perf's `:P` asks for the
/// highest precision (perf record's default `cycles:P` included).
type Wanted = (String, Attr, bool);

/// The attrs to open: the user's events, or perf record's default
/// `cycles:P` (cpu-clock where the machine has no PMU for it, by the
/// fallback policy at open).
fn attrs(a: &Args) -> Vec<Wanted> {
    let sample_type = (sys::PERF_SAMPLE_IDENTIFIER
        | sys::PERF_SAMPLE_IP
        | sys::PERF_SAMPLE_TID
        | sys::PERF_SAMPLE_TIME
        | sys::PERF_SAMPLE_CPU
        | sys::PERF_SAMPLE_PERIOD) as u64
        | if a.callchain {
            sys::PERF_SAMPLE_CALLCHAIN as u64
        } else {
            0
        };
    let inherit = matches!(a.target, Target::Command(_));
    let setup = |attr: Attr| {
        // A tracepoint's samples carry its fields (PERF_SAMPLE_RAW), as
        // perf record asks for them.
        let raw = match attr.to_raw().type_ {
            sys::PERF_TYPE_TRACEPOINT => sys::PERF_SAMPLE_RAW as u64,
            _ => 0,
        };
        let attr = attr
            .disabled(true)
            .sample_type_raw(sample_type | raw)
            .sample_id_all(true)
            .inherit(inherit)
            .enable_on_exec(inherit);
        match a.period {
            Some(p) => attr.sample_period(p),
            None => attr.sample_freq(a.freq),
        }
    };
    // -o: sample times on CLOCK_MONOTONIC, recorded with the wall-clock
    // time that goes with it (perf record -k monotonic).
    let setup = |attr: Attr| match a.output {
        Some(_) => setup(attr).clockid(libc::CLOCK_MONOTONIC),
        None => setup(attr),
    };
    let mut out = Vec::new();
    if a.events.is_empty() {
        // perf 6.1's evsel__new_cycles: user space only when the kernel may
        // not be profiled (paranoid > 1 without CAP_PERFMON), the highest
        // precision, and the guest not excluded: bookworm's perf 6.1.187
        // leaves `exclude_guest` 0 on its default event (its message names
        // `cpu-clock:ppp` after the fallback, where a set bit would make
        // it `cpu-clock:pppH`), while events written with `-e` still get
        // it (below).
        let user_only = !kernel_allowed();
        let cycles = Attr::new(Event::Hardware(Hardware::CpuCycles)).exclude_kernel(user_only);
        let name = if user_only { "cycles:u" } else { "cycles" };
        out.push((name.to_string(), setup(cycles), true));
    }
    let system = System::discover();
    for text in &a.events {
        let each = |l: perf_event_host::parse::EventList<'_, '_>| {
            l.events()
                .iter()
                // perf 6.1 excludes the guest from an event written
                // without modifiers (its event_attr_init; modifiers decide
                // otherwise, as the parser does).
                .map(|e| {
                    let bare = e.modifiers == Modifiers::default();
                    let attr = if bare {
                        e.attr.exclude_guest(true)
                    } else {
                        e.attr
                    };
                    (attr, e.modifiers.precise_max)
                })
                .collect::<Vec<_>>()
        };
        let list = match &system {
            Ok(s) => parse(text, s).map(each),
            Err(_) => parse(text, &Builtin).map(each),
        }
        .unwrap_or_else(|e| usage(&format!("{text}: {e}")));
        for (attr, max_precise) in list {
            out.push((text.clone(), setup(attr), max_precise));
        }
    }
    // The first event also reports mappings, exec names and forks (once is
    // enough).
    if let Some((_, first, _)) = out.first_mut() {
        *first = first.mmap(true).mmap2(true).comm(true).task(true);
    }
    out
}

/// Whether this process may profile the kernel (perf's
/// `perf_event_can_profile_kernel`: paranoid at most 1, or CAP_PERFMON /
/// CAP_SYS_ADMIN).
fn kernel_allowed() -> bool {
    let paranoid = perf_event_core::linux::system::perf_event_paranoid();
    paranoid.is_some_and(|p| p.allows_kernel())
        || perf_event_core::linux::access::Caller::current().perfmon
}

fn online_cpus() -> Vec<u32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
            cpus.extend(a..=b);
        }
    }
    if cpus.is_empty() {
        cpus.push(0);
    }
    cpus
}

fn main() {
    let words: Vec<String> = std::env::args().skip(1).collect();
    let a = args::parse(&words);
    if let Some(input) = &a.input {
        return report_file(input, &a);
    }
    let wanted = attrs(&a);
    let command = match &a.target {
        Target::Command(c) | Target::All(Some(c)) => Some(c.clone()),
        _ => None,
    };
    let to_pipe = a.output.as_deref() == Some("-");
    let mut workload = command.as_deref().map(|c| launch::spawn(c, to_pipe));
    // Where each event is opened: per CPU (command: inherited by its
    // children; -a: every task), or per thread of a running process.
    let places: Vec<(i32, Option<u32>)> = match &a.target {
        Target::Command(_) => {
            let pid = workload.as_ref().map_or(-1, |w| w.pid());
            online_cpus().into_iter().map(|c| (pid, Some(c))).collect()
        }
        Target::All(_) => online_cpus().into_iter().map(|c| (-1, Some(c))).collect(),
        Target::Pid(p) => std::fs::read_dir(format!("/proc/{p}/task"))
            .unwrap_or_else(|e| usage(&format!("process {p}: {e}")))
            .flatten()
            .filter_map(|t| t.file_name().to_str()?.parse().ok())
            .map(|tid: i32| (tid, None))
            .collect(),
    };
    // perf record's fallbacks, taken on each event's first placement and
    // kept for the others.
    let mut attempts: Vec<Attempt> = wanted
        .iter()
        .map(|(_, attr, max)| {
            let a = Attempt::new(*attr, Policy::PERF);
            if *max {
                a.max_precise()
            } else {
                a
            }
        })
        .collect();
    let mut settled = vec![false; wanted.len()];
    let mut entries = Vec::new();
    for &(pid, cpu) in &places {
        for (event, (name, _, _)) in wanted.iter().enumerate() {
            let scope = match (pid, cpu) {
                (-1, Some(c)) => Scope::all_tasks_on(c),
                (p, Some(c)) => Scope::thread_on(p, c),
                (p, None) => Scope::thread(p),
            };
            let attempt = &mut attempts[event];
            let opened = if settled[event] {
                open(&attempt.attr(), scope, None, attempt.flags())
            } else {
                let r = fallback::open(attempt, scope, None);
                if a.verbose > 0 {
                    for taken in attempt.fallbacks().iter() {
                        eprintln!("Warning:\n{taken}");
                    }
                }
                if a.verbose > 1 {
                    let outcome = match &r {
                        Ok(_) => format!(
                            "sys_perf_event_open: pid {pid}  cpu {} = opened",
                            scope.cpu()
                        ),
                        Err(e) => format!(
                            "sys_perf_event_open: pid {pid}  cpu {} failed, error -{}",
                            scope.cpu(),
                            e.errno.map_or(0, |e| e.0)
                        ),
                    };
                    eprintln!("{}\n{outcome}", attempt.attr().perf_print());
                }
                r
            };
            let attr = attempt.attr();
            match opened {
                Ok(fd) => {
                    settled[event] = true;
                    entries.push(Entry {
                        fd,
                        event,
                        layout: SampleLayout::from_attr(&attr),
                        cpu: cpu.map_or(-1, |c| c as i32),
                        thread: pid,
                    })
                }
                // A thread may exit between the listing and the open.
                Err(e) if cpu.is_none() && e.errno.map(|e| e.0) == Some(libc::ESRCH) => {}
                Err(e) => {
                    let name = fallback::renamed(name, attempt.fallbacks(), &attr);
                    eprintln!("sample: {name}: {e}");
                    // perf record's status when an event cannot be opened.
                    std::process::exit(255);
                }
            }
        }
    }
    // The events as opened: perf's names after the fallbacks.
    let attrs: Vec<(String, Attr)> = wanted
        .iter()
        .zip(&attempts)
        .map(|((name, _, _), at)| {
            (
                fallback::renamed(name, at.fallbacks(), &at.attr()).to_string(),
                at.attr(),
            )
        })
        .collect();
    let names: Vec<String> = attrs.iter().map(|(n, _)| n.clone()).collect();
    let opts = Options {
        data_pages: 128,
        sharing: Sharing::SameCpu,
        ..Options::default()
    };
    let mut output = a.output.as_deref().map(|path| {
        perf_file::Output::start(path, perf_file::events(&attrs, &entries)).unwrap_or_else(|e| {
            eprintln!("sample: {path}: {e}");
            std::process::exit(1)
        })
    });
    let mut set = RingSet::new(entries, opts).unwrap_or_else(|e| {
        eprintln!("sample: {e}");
        std::process::exit(1)
    });
    let mut cap = Capture::default();
    // Processes running before the recording: their mappings and names now,
    // while nothing is enabled (perf synthesizes them the same way).
    let running = match &a.target {
        Target::All(_) => capture::all_pids(),
        Target::Pid(p) => vec![*p],
        Target::Command(_) => Vec::new(),
    };
    cap.snapshot(running.iter().copied());
    if let Some(out) = &mut output {
        if let Err(e) = out.synthesize(&running) {
            eprintln!("sample: {}: {e}", a.output.as_deref().unwrap_or(""));
            std::process::exit(1);
        }
    }
    // 32 MiB touched now, before anything is enabled: about 500,000
    // records of `-a` without callchains are copied without a page fault.
    let mut recording = Recording::with_reserve(32 << 20);
    launch::catch_stop_signals();
    if !matches!(a.target, Target::Command(_)) {
        for e in 0..set.entries() {
            let _ = set.fd(e).map(|f| f.enable(false));
        }
    }
    if let (Some(w), Some(c)) = (&mut workload, &command) {
        launch::release(w, &names[0], &c[0]);
    }

    let start = Instant::now();
    loop {
        // Woken by the rings (half full), their hang-up (-p: the process
        // exited), SIGCHLD (the command exited), SIGINT / SIGTERM, or the
        // end of -d: few wake-ups, each a cost counted in -a's samples.
        let left = a.duration.map_or(1000, |d| {
            d.saturating_sub(start.elapsed()).as_millis().clamp(1, 1000) as i32
        });
        let _ = set.wait(left);
        let exited = workload
            .as_mut()
            .is_some_and(|w| w.wait_exit(Some(Duration::ZERO)).unwrap_or(true));
        let done = launch::stopped().is_some()
            || exited
            || match (&workload, a.duration) {
                (Some(_), _) => false,
                (None, Some(d)) => start.elapsed() >= d || set.all_gone(),
                (None, None) => set.all_gone(),
            };
        if done {
            for e in 0..set.entries() {
                let _ = set.fd(e).map(|f| f.disable(false));
            }
        }
        match &mut output {
            // Each pass over the rings is a round, as in perf record.
            Some(out) => {
                if let Err(e) = out.write_drained(&mut set, |_, _, rec| recording.keep(rec)) {
                    eprintln!("sample: writing {}: {e}", a.output.as_deref().unwrap_or(""));
                    std::process::exit(1);
                }
            }
            None => recording.drain(&mut set),
        }
        if done {
            break;
        }
    }
    // Stopped by a signal while the command runs: perf record sends it
    // SIGTERM and waits for it.
    let exit = workload.as_mut().map(|w| {
        if !w.wait_exit(Some(Duration::ZERO)).unwrap_or(true) {
            let _ = w.signal(libc::SIGTERM);
        }
        w.reap()
    });

    if let Some(out) = output.take() {
        if let Err(e) = out.finish(&set) {
            eprintln!("sample: writing {}: {e}", a.output.as_deref().unwrap_or(""));
        }
    }

    // A record is at most 64 KiB (its size is a u16).
    let mut scratch = vec![0u8; 1 << 16];
    let recorded = recording.len();
    recording.in_time_order(&set, |event, rec| cap.take(&set, event, rec, &mut scratch));
    let report = Report::new(&cap, attrs.len(), a.folded.is_some());
    let to_stdout = a.folded.as_deref() == Some("-") || a.output.as_deref() == Some("-");
    if let Some(path) = a.folded.as_deref() {
        let written = if path == "-" {
            report.write_folded(&mut std::io::stdout().lock())
        } else {
            std::fs::File::create(path)
                .and_then(|f| report.write_folded(&mut std::io::BufWriter::new(f)))
        };
        if let Err(e) = written {
            eprintln!("sample: {path}: {e}");
        }
    }
    if !to_stdout {
        let lost: Vec<u64> = (0..attrs.len())
            .map(|e| set.event_losses(e).dropped())
            .collect();
        let system_wide = matches!(a.target, Target::All(_));
        report.print(&names, &lost, a.callchain, system_wide);
        let t = set.total_losses();
        println!(
            "# rings: {}, {recorded} bytes recorded, lost {} (LOST records {}, overruns {}, {} \
             bytes skipped)",
            set.rings().len(),
            t.dropped(),
            t.lost_records,
            t.overruns,
            t.bytes_skipped,
        );
    }
    launch::raise_stop_signal();
    match exit {
        Some(Ok(e)) => {
            std::process::exit(e.code().unwrap_or_else(|| 128 + e.signal().unwrap_or(0)))
        }
        Some(Err(e)) => {
            eprintln!("sample: {e}");
            std::process::exit(255)
        }
        None => {}
    }
}

/// `-i FILE`: the report of a perf.data file.
fn report_file(path: &str, a: &Args) {
    let mut cap = Capture::default();
    let (names, callchain) = perf_file::read(path, &mut cap).unwrap_or_else(|e| {
        eprintln!("sample: {e}");
        std::process::exit(1)
    });
    let report = Report::new(&cap, names.len(), a.folded.is_some());
    if let Some(path) = a.folded.as_deref() {
        let written = if path == "-" {
            report.write_folded(&mut std::io::stdout().lock())
        } else {
            std::fs::File::create(path)
                .and_then(|f| report.write_folded(&mut std::io::BufWriter::new(f)))
        };
        if let Err(e) = written {
            eprintln!("sample: {path}: {e}");
        }
        if path == "-" {
            return;
        }
    }
    report.print(
        &names,
        &vec![0; names.len()],
        callchain || a.callchain,
        false,
    );
}
