//! A mini `perf record` + `perf report --sort dso,sym`: samples a command,
//! a running process or the whole machine with one or more events, reads
//! every CPU's (or thread's) ring through one ring set, merges the records
//! in time order (so each sample meets the mappings made before it) and
//! prints, per event, the share of samples per object and symbol.
//!
//! ```sh
//! cargo run --release --example sample -- [-e EVENT]... [-c PERIOD | -F HZ] CMD ARGS
//! cargo run --release --example sample -- -a [-d SECONDS] [-e EVENT]...
//! cargo run --release --example sample -- -p PID [-d SECONDS] [-e EVENT]...
//! ```
//!
//! Events are perf event strings (`cycles`, `cpu-clock`, `sched:sched_switch`,
//! `cpu/event=0x3c/`). Without `-e`: `cycles` when the machine has a PMU,
//! else `cpu-clock`. Without `-c`/`-F`: 4000 Hz. Symbols come from the ELF
//! symbol tables of the mapped files and /proc/kallsyms, as perf does
//! without debug info. The report lists shares by period, like perf report.

mod symbols;

use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Hardware, Software};
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::parse::{parse, Builtin, System};
use perf_event_core::record::{Record, SampleLayout};
use perf_event_core::ringset::{Entry, Options, RingSet, Sharing};
use perf_event_core::sys;
use std::collections::HashMap;
use std::ffi::CString;
use std::time::{Duration, Instant};
use symbols::{proc_maps, Key, Map, Resolver};

enum Target {
    Command(Vec<String>),
    Pid(u32),
    All,
}

struct Args {
    events: Vec<String>,
    period: Option<u64>,
    freq: u64,
    duration: Option<Duration>,
    target: Target,
}

fn usage(why: &str) -> ! {
    eprintln!(
        "sample: {why}\nusage: sample [-e EVENT]... [-c PERIOD | -F HZ] (CMD ARGS | -a | -p PID) \
         [-d SECONDS]"
    );
    std::process::exit(129)
}

fn args() -> Args {
    let mut a = Args {
        events: Vec::new(),
        period: None,
        freq: 4000,
        duration: None,
        target: Target::All,
    };
    let mut it = std::env::args().skip(1).peekable();
    let mut all = false;
    let mut pid = None;
    let value = |it: &mut std::iter::Peekable<std::iter::Skip<std::env::Args>>, opt: &str| {
        it.next()
            .unwrap_or_else(|| usage(&format!("{opt} needs a value")))
    };
    let mut command = Vec::new();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "-e" => a.events.push(value(&mut it, "-e")),
            "-c" => {
                a.period = Some(
                    value(&mut it, "-c")
                        .parse()
                        .unwrap_or_else(|_| usage("-c N")),
                )
            }
            "-F" => {
                a.freq = value(&mut it, "-F")
                    .parse()
                    .unwrap_or_else(|_| usage("-F HZ"))
            }
            "-d" => {
                let s: f64 = value(&mut it, "-d")
                    .parse()
                    .unwrap_or_else(|_| usage("-d SECONDS"));
                a.duration = Some(Duration::from_secs_f64(s));
            }
            "-a" => all = true,
            "-p" => {
                pid = Some(
                    value(&mut it, "-p")
                        .parse()
                        .unwrap_or_else(|_| usage("-p PID")),
                )
            }
            "--" => {
                command.extend(it.by_ref());
            }
            s if s.starts_with('-') => usage(&format!("unknown option {s}")),
            _ => {
                command.push(arg);
                command.extend(it.by_ref());
            }
        }
    }
    a.target = match (all, pid, command.is_empty()) {
        (true, None, true) => Target::All,
        (false, Some(p), true) => Target::Pid(p),
        (false, None, false) => Target::Command(command),
        _ => usage("give exactly one of CMD, -a, -p PID"),
    };
    if matches!(a.target, Target::All | Target::Pid(_)) && a.duration.is_none() && pid.is_none() {
        a.duration = Some(Duration::from_secs(1));
    }
    a
}

/// The attrs to open: the user's events, or cycles / cpu-clock.
fn attrs(a: &Args) -> Vec<(String, Attr)> {
    let sample_type = (sys::PERF_SAMPLE_IDENTIFIER
        | sys::PERF_SAMPLE_IP
        | sys::PERF_SAMPLE_TID
        | sys::PERF_SAMPLE_TIME
        | sys::PERF_SAMPLE_CPU
        | sys::PERF_SAMPLE_PERIOD) as u64;
    let inherit = matches!(a.target, Target::Command(_));
    let setup = |attr: Attr| {
        let attr = attr
            .disabled(true)
            .sample_type(sample_type)
            .sample_id_all(true)
            .inherit(inherit)
            .enable_on_exec(inherit)
            .exclude_hv(true);
        match a.period {
            Some(p) => attr.sample_period(p),
            None => attr.sample_freq(a.freq),
        }
    };
    let mut out = Vec::new();
    if a.events.is_empty() {
        let cycles = setup(Attr::new(Event::Hardware(Hardware::CpuCycles)));
        let fine = open(&cycles, Scope::this_thread(), None, OpenFlags::new()).is_ok();
        out.push(if fine {
            ("cycles".to_string(), cycles)
        } else {
            eprintln!("sample: no cycles event here; sampling cpu-clock");
            let e = Attr::new(Event::Software(Software::CpuClock));
            ("cpu-clock".to_string(), setup(e))
        });
    }
    let system = System::discover();
    for text in &a.events {
        let list = match &system {
            Ok(s) => parse(text, s).map(|l| l.events().iter().map(|e| e.attr).collect::<Vec<_>>()),
            Err(_) => parse(text, &Builtin).map(|l| l.events().iter().map(|e| e.attr).collect()),
        }
        .unwrap_or_else(|e| usage(&format!("{text}: {e}")));
        for attr in list {
            out.push((text.clone(), setup(attr)));
        }
    }
    // The first event also reports mappings and exec names (once is enough).
    if let Some((_, first)) = out.first_mut() {
        *first = first.mmap(true).mmap2(true).comm(true);
    }
    out
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

/// Forks `command`, held before exec until the returned pipe is written.
fn spawn(command: &[String]) -> (i32, i32) {
    let argv: Vec<CString> = command
        .iter()
        .map(|a| CString::new(a.as_str()).unwrap_or_else(|_| usage("NUL in an argument")))
        .collect();
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    let mut pipe = [0; 2];
    // SAFETY: pipe2 fills two fds.
    let rc = unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0);
    // SAFETY: the child makes only async-signal-safe calls before exec.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: as above.
        unsafe {
            let mut b = 0u8;
            libc::read(pipe[0], (&mut b as *mut u8).cast(), 1);
            libc::execvp(ptrs[0], ptrs.as_ptr());
            libc::_exit(127);
        }
    }
    // SAFETY: closing our copy of the read end.
    unsafe { libc::close(pipe[0]) };
    (pid, pipe[1])
}

fn main() {
    let a = args();
    let attrs = attrs(&a);
    let (child, release) = match &a.target {
        Target::Command(c) => {
            let (pid, w) = spawn(c);
            (Some(pid), Some(w))
        }
        _ => (None, None),
    };
    // Where each event is opened: per CPU (command: inherited by its
    // children; -a: every task), or per thread of a running process.
    let places: Vec<(i32, Option<u32>)> = match &a.target {
        Target::Command(_) => online_cpus()
            .into_iter()
            .map(|c| (child.unwrap_or(-1), Some(c)))
            .collect(),
        Target::All => online_cpus().into_iter().map(|c| (-1, Some(c))).collect(),
        Target::Pid(p) => std::fs::read_dir(format!("/proc/{p}/task"))
            .unwrap_or_else(|e| usage(&format!("process {p}: {e}")))
            .flatten()
            .filter_map(|t| t.file_name().to_str()?.parse().ok())
            .map(|tid: i32| (tid, None))
            .collect(),
    };
    let mut entries = Vec::new();
    for &(pid, cpu) in &places {
        for (event, (name, attr)) in attrs.iter().enumerate() {
            let scope = match (pid, cpu) {
                (-1, Some(c)) => Scope::all_tasks_on(c),
                (p, Some(c)) => Scope::thread_on(p, c),
                (p, None) => Scope::thread(p),
            };
            match open(attr, scope, None, OpenFlags::new()) {
                Ok(fd) => entries.push(Entry {
                    fd,
                    event,
                    layout: SampleLayout::from_attr(attr),
                    cpu: cpu.map_or(-1, |c| c as i32),
                    thread: pid,
                }),
                // A thread may exit between the listing and the open.
                Err(e) if cpu.is_none() && e.errno.map(|e| e.0) == Some(libc::ESRCH) => {}
                Err(e) => {
                    eprintln!("sample: {name}: {e}");
                    std::process::exit(1);
                }
            }
        }
    }
    let opts = Options {
        data_pages: 128,
        sharing: Sharing::SameCpu,
        ..Options::default()
    };
    let mut set = RingSet::new(entries, opts).unwrap_or_else(|e| {
        eprintln!("sample: {e}");
        std::process::exit(1)
    });
    if child.is_none() {
        for e in 0..set.entries() {
            let _ = set.fd(e).map(|f| f.enable(false));
        }
    }
    if let Some(w) = release {
        // SAFETY: one byte from a local buffer lets the child exec.
        unsafe {
            libc::write(w, [1u8].as_ptr().cast(), 1);
            libc::close(w);
        }
    }

    let mut report = Report::default();
    // A record is at most 64 KiB (its size is a u16).
    let mut scratch = vec![0u8; 1 << 16];
    let start = Instant::now();
    let mut status = 0;
    loop {
        let _ = set.wait(100);
        let done = match (child, a.duration) {
            // SAFETY: polling our own child.
            (Some(pid), _) => (unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) }) == pid,
            (None, Some(d)) => start.elapsed() >= d || set.all_gone(),
            (None, None) => set.all_gone(),
        };
        if done {
            for e in 0..set.entries() {
                let _ = set.fd(e).map(|f| f.disable(false));
            }
        }
        set.fill();
        while let Some(h) = set.next_ordered() {
            report.take(&set, &h, &mut scratch);
            set.release(h);
        }
        if done {
            set.fill();
            while let Some(h) = set.flush_next() {
                report.take(&set, &h, &mut scratch);
                set.release(h);
            }
            break;
        }
    }
    report.print(&attrs, &set);
    if child.is_some() {
        let code = if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            128 + libc::WTERMSIG(status)
        };
        std::process::exit(code);
    }
}

#[derive(Default)]
struct Report {
    /// Mappings per pid, in the order they were made.
    maps: HashMap<u32, Vec<Map>>,
    /// Per event: period per (object, mode, symbol).
    hits: HashMap<usize, HashMap<Key, u64>>,
    samples: HashMap<usize, u64>,
    resolver: Resolver,
}

impl Report {
    /// One record, in time order; `scratch` holds it only when it wraps the
    /// ring's end (otherwise it is parsed where it lies).
    fn take(&mut self, set: &RingSet, h: &perf_event_core::ringset::Held, scratch: &mut [u8]) {
        let (Some(event), Ok(rec)) = (h.event(), set.record(h)) else {
            return;
        };
        let Some(layout) = set.layout(event) else {
            return;
        };
        let Ok(parsed) = rec.parse(layout, scratch) else {
            return;
        };
        match parsed.record {
            Record::Mmap2 {
                pid,
                addr,
                len,
                pgoff,
                filename,
                ..
            } => {
                let file = String::from_utf8_lossy(filename).into_owned();
                self.maps.entry(pid).or_default().push(Map {
                    start: addr,
                    end: addr + len,
                    pgoff,
                    file,
                });
            }
            Record::Sample(s) => {
                let (Some(ip), Some((pid, _))) = (s.ip(), s.pid_tid()) else {
                    return;
                };
                *self.samples.entry(event).or_default() += 1;
                let kernel = rec.header.cpumode() == sys::PERF_RECORD_MISC_KERNEL as u16;
                let key = if kernel {
                    self.resolver.kernel(ip)
                } else {
                    let maps = self.maps.entry(pid).or_insert_with(|| proc_maps(pid));
                    let map = maps.iter().rev().find(|m| (m.start..m.end).contains(&ip));
                    self.resolver.user(ip, map)
                };
                *self.hits.entry(event).or_default().entry(key).or_default() +=
                    s.period().unwrap_or(1);
            }
            _ => {}
        }
    }

    fn print(&self, attrs: &[(String, Attr)], set: &RingSet) {
        for (event, (name, _)) in attrs.iter().enumerate() {
            let lost = set.event_losses(event);
            println!(
                "# Event '{name}': {} samples, {} lost",
                self.samples.get(&event).copied().unwrap_or(0),
                lost.dropped()
            );
            println!("# Overhead  Shared Object  Symbol");
            let Some(hits) = self.hits.get(&event) else {
                println!();
                continue;
            };
            let total: u64 = hits.values().sum();
            let mut rows: Vec<(&Key, &u64)> = hits.iter().collect();
            rows.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            for ((dso, mode, sym), n) in rows {
                println!(
                    "{:8.2}%  {dso}  {mode} {sym}",
                    100.0 * *n as f64 / total.max(1) as f64
                );
            }
            println!();
        }
        let t = set.total_losses();
        let m = set.merge_stats();
        println!(
            "# rings: {}, lost {} (LOST records {}, overruns {}, {} bytes skipped); merge: {} \
             records, {} forced out of order",
            set.rings().len(),
            t.dropped(),
            t.lost_records,
            t.overruns,
            t.bytes_skipped,
            m.released,
            m.forced
        );
    }
}
