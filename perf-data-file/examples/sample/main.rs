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
//! cargo run --release --example sample -- -D -1 --control fd:5,6 -o perf.data -- CMD ARGS
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
//! `-D MS` / `--delay MS` and `--control fd:CTL[,ACK]` / `fifo:CTL[,ACK]`
//! are perf record 6.1's (`control.rs`): with `-D` the events start
//! disabled ("Events disabled") and are enabled MS ms after the command
//! started ("Events enabled"), or with `-D -1` by an `enable` command; the
//! control channel's commands (`enable` / `disable`, all or `enable NAME`,
//! `evlist [-v|-g|-F]`, `snapshot`, `ping`, `stop`) are read, answered and
//! acknowledged by the library's `perf_event_host::control::Server` while
//! the rings are drained (one poll(2) on the ring set and the control fd).
//! `stop` ends the recording as Ctrl-C does: the file is finished, the
//! command still running gets SIGTERM, and the tool dies of it (status
//! 143), as perf record does. With `-D` a tracking event `dummy:HG` records
//! the command's mappings and names from its exec, as perf record's does,
//! so the report names symbols of a recording enabled late; it lists in
//! `evlist` as perf's does and has no report of its own. `-D` time ranges
//! (`-D 10-20,30-40`, ms from the start) enable the events in those
//! windows only, with perf's messages at each bound, and the recording
//! ends with the last one, as perf record 6.1's do. A bad `-D` (`0`
//! included, as perf refuses it) or `--control` value gets perf's answer:
//! the usage and that option's help as `perf record -h` prints it, status
//! 129.
//!
//! Symbols come from the ELF symbol tables of the mapped files and
//! /proc/kallsyms, as perf does without debug info, demangled (Rust, C++),
//! and are looked up only after the recording ended: while recording, the
//! tool only copies addresses out of the rings, so with `-a` its own share
//! of the samples (printed as "Samples of this tool") stays as small as
//! perf record's. Ctrl-C (SIGINT) or SIGTERM ends the recording; the report
//! of what was recorded is printed, then the tool dies of that signal, as
//! perf record does. A command that cannot be executed gets perf's message
//! and exit status 255; otherwise the exit status is the command's, and a
//! command killed by a signal (the SIGTERM sent when the recording ends
//! first included) kills the tool with that signal, as perf record's
//! `record__sig_exit` does.

mod args;
mod capture;
mod control;
mod events;
mod launch;
mod perf_file;
mod recording;
mod report;
mod symbols;

use args::{Args, Target};
use capture::Capture;
use perf_event_core::attr::Attr;
use perf_event_host::control::Server;
use perf_event_host::ringset::{Entry, Options, RingSet, Sharing};
use perf_event_host::workload::{Exit, Workload, WorkloadError};
use recording::Recording;
use report::Report;
use std::time::{Duration, Instant};

fn main() {
    let words: Vec<String> = std::env::args().skip(1).collect();
    let a = args::parse(&words);
    if let Some(input) = &a.input {
        return report_file(input, &a);
    }
    let mut server = control::open(&a);
    let wanted = events::attrs(&a);
    let tracking = events::tracking(&a, wanted.len());
    let command = match &a.target {
        Target::Command(c) | Target::All(Some(c)) => Some(c.clone()),
        _ => None,
    };
    let to_pipe = a.output.as_deref() == Some("-");
    let mut workload = command.as_deref().map(|c| launch::spawn(c, to_pipe));
    let places = events::places(&a.target, workload.as_ref());
    let (entries, attempts) = events::open_all(&wanted, &places, a.verbose);
    let attrs = events::opened(&wanted, &attempts);
    let names: Vec<String> = attrs.iter().map(|(n, _)| n.clone()).collect();
    let mut output = a
        .output
        .as_deref()
        .map(|path| start_output(path, &attrs, &entries));
    let mut set = ring_set(entries);
    let mut cap = Capture::default();
    snapshot_running(&a, &mut cap, output.as_mut());
    // 32 MiB touched now, before anything is enabled: about 500,000
    // records of `-a` without callchains are copied without a page fault.
    let mut recording = Recording::with_reserve(32 << 20);
    launch::catch_stop_signals();
    control::before_start(&a, &set, tracking);
    if let (Some(w), Some(c)) = (&mut workload, &command) {
        launch::release(w, &names[0], &c[0]);
    }
    control::after_start(&a, &set);
    let mut control = server.as_mut().map(|server| (server, &attrs[..]));
    let mut rec = Recorder {
        set: &mut set,
        output: output.as_mut(),
        recording: &mut recording,
    };
    rec.record(&a, workload.as_mut(), control.as_mut(), tracking);
    let exit = workload.as_mut().map(end_workload);
    if let Some(out) = output.take() {
        if let Err(e) = out.finish(&set) {
            eprintln!("sample: writing {}: {e}", a.output.as_deref().unwrap_or(""));
        }
    }
    report(&a, &set, cap, recording, &names);
    exit_as(exit);
}

/// `-o FILE`: the perf.data output, started with the events' attrs and
/// ids; an error ends the tool (status 1).
fn start_output(path: &str, attrs: &[(String, Attr)], entries: &[Entry]) -> perf_file::Output {
    perf_file::Output::start(path, perf_file::events(attrs, entries)).unwrap_or_else(|e| {
        eprintln!("sample: {path}: {e}");
        std::process::exit(1)
    })
}

/// The ring set over the opened events (128 data pages a ring, the
/// events of one CPU sharing its ring); an error ends the tool (status 1).
fn ring_set(entries: Vec<Entry>) -> RingSet {
    let opts = Options {
        data_pages: 128,
        sharing: Sharing::SameCpu,
        ..Options::default()
    };
    RingSet::new(entries, opts).unwrap_or_else(|e| {
        eprintln!("sample: {e}");
        std::process::exit(1)
    })
}

/// Processes running before the recording: their mappings and names now,
/// while nothing is enabled (perf synthesizes them the same way), also
/// written to `-o`'s file.
fn snapshot_running(a: &Args, cap: &mut Capture, output: Option<&mut perf_file::Output>) {
    let running = match &a.target {
        Target::All(_) => capture::all_pids(),
        Target::Pid(p) => vec![*p],
        Target::Command(_) => Vec::new(),
    };
    cap.snapshot(running.iter().copied());
    if let Some(out) = output {
        if let Err(e) = out.synthesize(&running) {
            eprintln!("sample: {}: {e}", a.output.as_deref().unwrap_or(""));
            std::process::exit(1);
        }
    }
}

/// What a recording writes to: the rings it drains, `-o`'s output, the
/// copy of every record kept for the report.
struct Recorder<'a> {
    set: &'a mut RingSet,
    output: Option<&'a mut perf_file::Output>,
    recording: &'a mut Recording,
}

/// `--control`'s server and the events its commands act on (name and
/// attr as opened).
type Control<'a> = (&'a mut Server, &'a [(String, Attr)]);

impl Recorder<'_> {
    /// The recording: every pass over the rings copies what they hold
    /// (with `-o` also written, each pass a round, as in perf record) until
    /// [`finished`], a `stop` command or the end of `-D`'s last time range;
    /// the events are disabled before the last pass.
    fn record(
        &mut self,
        a: &Args,
        mut workload: Option<&mut Workload>,
        mut control: Option<&mut Control<'_>>,
        tracking: Option<usize>,
    ) {
        let start = Instant::now();
        let mut stop = false;
        // -D START-END,...: the first range began with the delay.
        let mut ranges = control::Ranges::start(a);
        loop {
            // Woken by the rings (half full), their hang-up (-p: the
            // process exited), SIGCHLD (the command exited), SIGINT /
            // SIGTERM, the end of -d, or a control command: few wake-ups,
            // each a cost counted in -a's samples.
            let mut left = a.duration.map_or(1000, |d| {
                d.saturating_sub(start.elapsed()).as_millis().clamp(1, 1000) as i32
            });
            if let Some(r) = &ranges {
                left = r.timeout_ms(left);
            }
            match control.as_deref_mut() {
                Some((server, events)) => stop |= control::wait(self.set, server, events, left),
                None => {
                    let _ = self.set.wait(left);
                }
            }
            if let Some(r) = &mut ranges {
                stop |= r.tick(self.set, tracking);
            }
            let done = stop || finished(a, self.set, workload.as_deref_mut(), start);
            if done {
                for e in 0..self.set.entries() {
                    let _ = self.set.fd(e).map(|f| f.disable(false));
                }
            }
            self.pass(a);
            if done {
                break;
            }
        }
    }

    /// One pass over the rings: every record copied, and with `-o` written
    /// as a round; a write error ends the tool (status 1).
    fn pass(&mut self, a: &Args) {
        let recording = &mut *self.recording;
        match self.output.as_deref_mut() {
            Some(out) => {
                if let Err(e) = out.write_drained(self.set, |_, _, rec| recording.keep(rec)) {
                    eprintln!("sample: writing {}: {e}", a.output.as_deref().unwrap_or(""));
                    std::process::exit(1);
                }
            }
            None => recording.drain(self.set),
        }
    }
}

/// Whether the recording ends: a stop signal, the command's exit, or
/// (without a command) the end of `-d` or every ring hung up.
fn finished(a: &Args, set: &RingSet, workload: Option<&mut Workload>, start: Instant) -> bool {
    let command = workload.is_some();
    let exited = workload.is_some_and(|w| w.wait_exit(Some(Duration::ZERO)).unwrap_or(true));
    launch::stopped().is_some()
        || exited
        || match (command, a.duration) {
            (true, _) => false,
            (false, Some(d)) => start.elapsed() >= d || set.all_gone(),
            (false, None) => set.all_gone(),
        }
}

/// Stopped by a signal while the command runs: perf record sends it
/// SIGTERM and waits for it.
fn end_workload(w: &mut Workload) -> Result<Exit, WorkloadError> {
    if !w.wait_exit(Some(Duration::ZERO)).unwrap_or(true) {
        let _ = w.signal(libc::SIGTERM);
    }
    w.reap()
}

/// The records in time order through the symbols, as `--folded`'s stacks
/// and, unless stdout carries those or `-o -`'s stream, the report.
fn report(a: &Args, set: &RingSet, mut cap: Capture, recording: Recording, names: &[String]) {
    // A record is at most 64 KiB (its size is a u16).
    let mut scratch = vec![0u8; 1 << 16];
    let recorded = recording.len();
    recording.in_time_order(set, |event, rec| cap.take(set, event, rec, &mut scratch));
    let report = Report::new(&cap, names.len(), a.folded.is_some());
    let to_stdout = a.folded.as_deref() == Some("-") || a.output.as_deref() == Some("-");
    if let Some(path) = a.folded.as_deref() {
        write_folded(&report, path);
    }
    if !to_stdout {
        print_report(a, set, &report, names, recorded);
    }
}

/// The report per event, then the rings' totals: bytes recorded, losses.
fn print_report(a: &Args, set: &RingSet, report: &Report, names: &[String], recorded: usize) {
    let lost: Vec<u64> = (0..names.len())
        .map(|e| set.event_losses(e).dropped())
        .collect();
    let system_wide = matches!(a.target, Target::All(_));
    report.print(names, &lost, a.callchain, system_wide);
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

/// `--folded FILE`: the folded stacks written to FILE (`-`: stdout); an
/// error is reported, and the report still printed.
fn write_folded(report: &Report, path: &str) {
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

/// Ends as perf record ends: a command killed by a signal kills the tool
/// with the same signal (perf's `record__sig_exit`: after `stop` or
/// Ctrl-C the command got SIGTERM, so the tool dies of SIGTERM, status
/// 143); else a stop signal received (SIGINT, SIGTERM) is raised again;
/// else the command's exit code (255 when it could not be waited for).
/// Returns without a command or signal.
fn exit_as(exit: Option<Result<Exit, WorkloadError>>) {
    if let Some(sig) = exit.as_ref().and_then(|e| e.as_ref().ok()?.signal()) {
        launch::die_of(sig);
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
        write_folded(&report, path);
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
