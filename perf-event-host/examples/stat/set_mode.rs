//! `-a`, `-C LIST`, `-p PID`, `-t TID`, `--per-thread`, `-A` and `-I MS`:
//! counting on the event-set layer (`perf_event_host::set`) instead of one
//! fd per event of a command.
//!
//! - Targets: `-a` every online CPU, `-C 0-3,8` those CPUs (offline or
//!   nonexistent ones are reported and left out), `-p PID[,PID]` every
//!   thread of running processes (re-scanned until stable), `-t TID[,TID]`
//!   threads. With a command, the command only sets how long to count
//!   (`perf stat -a sleep 1`); without one, counting runs until the
//!   processes exit or Ctrl-C. `-I`/`--per-thread` with only a command count
//!   the command (started held, opened, then released into exec).
//! - Generalized hardware events expand to one event per core PMU on hybrid
//!   machines (`cpu_core/cycles/`, `cpu_atom/cycles/`).
//! - `-A` prints one line per CPU (`CPU0 ...`), `--per-thread` one per
//!   thread (`comm-tid ...`), both event by event as perf 6.1 does;
//!   `--per-core` / `--per-die` / `--per-socket` / `--per-node` one per
//!   topology key with its CPU count (`S0-D0-C0  2 ...`); `-I MS` the
//!   counts of each interval prefixed with the time, `--interval-count N`
//!   stops after N.
//! - The window is exact: the command is held before exec by
//!   `perf_event_host::workload`, CPU-wide and attached sets are enabled
//!   right before its release and disabled when its exit (a pidfd) or
//!   Ctrl-C wakes the poll; no polling period.
//! - `-D -1` / `-D N` and `--control` as perf 6.1's stat serves them
//!   here: the set opened disabled (a held command's events not
//!   `enable_on_exec`), `Events disabled` printed before the release;
//!   `-D N` enables the whole set N ms later (`Events enabled`; the
//!   intervals' stamps and the time elapsed count from then); control
//!   commands are served in the window's poll(2) (`set_window.rs`) over
//!   the set (`control.rs`'s `StatEvents`): `enable` / `disable` act on
//!   every group leader on every placement, `enable NAME` on the leaders
//!   of that name, as perf's `evlist__enable` / `evlist__enable_evsel`.
//!   Only the enabled windows count; a set never enabled is
//!   `<not counted>`.
//!
//! This module opens the set and runs the steps in order; the target is
//! chosen in `set_target.rs`, the window waited out in `set_window.rs`,
//! the lines printed by `set_report.rs`.

use crate::args::Options;
use crate::metrics::Metrics;
use crate::run::{self, Wanted};
use crate::set_report::{read_comms, summary};
use crate::set_target::{choose, Chosen};
use crate::set_window::{count, Control, Intervals, Watched};
use perf_event_core::fallback::Policy;
use perf_event_core::linux::process::strsignal;
use perf_event_host::control::Server;
use perf_event_host::set::{
    BudgetPolicy, CorePmus, Cpus, EventSet, EventSpec, Target, TopologyLevel,
};
use perf_event_host::sysfs::Pmus;
use perf_event_host::workload::Workload;
use std::time::Instant;

/// The options this module serves (parsed in `args`).
#[derive(Default)]
pub struct SetOptions {
    pub all_cpus: bool,
    pub cpus: Option<String>,
    pub pids: Option<String>,
    pub tids: Option<String>,
    pub per_thread: bool,
    pub no_aggr: bool,
    pub interval_ms: Option<u64>,
    /// `--per-core`, `--per-die`, `--per-socket`, `--per-node`.
    pub per: Option<TopologyLevel>,
    /// `--interval-count N`: stop after N intervals.
    pub interval_count: Option<u64>,
}

impl SetOptions {
    /// Whether the event-set path is asked for.
    pub fn active(&self) -> bool {
        self.all_cpus
            || self.cpus.is_some()
            || self.pids.is_some()
            || self.tids.is_some()
            || self.per_thread
            || self.no_aggr
            || self.interval_ms.is_some()
            || self.per.is_some()
    }

    /// Whether a target other than a command is given.
    pub fn has_target(&self) -> bool {
        self.all_cpus || self.cpus.is_some() || self.pids.is_some() || self.tids.is_some()
    }
}

/// perf's `Error:` and its message; status 255.
pub fn fail(msg: &str) -> ! {
    eprintln!("Error:\n{msg}");
    std::process::exit(255)
}

/// The events as groups of set specs, expanded per core PMU.
/// `on_exec`: the targets are the held command's tasks, so leaders stay
/// `enable_on_exec` (the kernel enables them at the exec).
fn groups(wanted: &[Wanted], on_exec: bool) -> Vec<Vec<EventSpec>> {
    let core = match (Pmus::read(), Cpus::read()) {
        (Ok(p), Ok(c)) => CorePmus::find(&p, &c),
        _ => CorePmus::default(),
    };
    let mut out = Vec::new();
    for (i, w) in wanted.iter().enumerate() {
        if w.leader != i {
            continue;
        }
        let group: Vec<EventSpec> = wanted
            .iter()
            .filter(|m| m.leader == i)
            // CPU-wide and attached sets are enabled right before the
            // release: no exec to wait for.
            .map(|m| {
                let mut spec =
                    EventSpec::new(&m.name, m.attr.enable_on_exec(on_exec && m.leader == i))
                        .with_policy(Policy::PERF_STAT);
                spec.max_precise = m.max_precise;
                spec
            })
            .collect();
        out.extend(core.expand_group(&group));
    }
    out
}

/// The report's event list: one entry per set event.
fn report_events(set: &EventSet) -> Vec<Wanted> {
    let events = set.events();
    events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let attr = set.opened_attr(i).unwrap_or(e.spec.attr);
            Wanted {
                name: e.name(&attr),
                attr,
                leader: (0..=i).rev().find(|&j| events[j].leader).unwrap_or(i),
                max_precise: false,
                tool: false,
            }
        })
        .collect()
}

/// perf's refusal of an option combination: its message, the options
/// concerned, status 234 (perf returns -EINVAL from main).
fn refuse(head: &str, options: &[&str]) -> ! {
    eprint!("{head}");
    for o in options {
        eprintln!("{o}");
    }
    std::process::exit(234)
}

/// Writes report text to stderr. A closed pipe kills the tool by SIGPIPE
/// (its default action is restored in `main`), as it kills perf.
pub fn write_report(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Exits with the command's status, or dies of the signal that ended
/// counting (Ctrl-C with no command: perf's 130).
fn finish(code: i32) -> ! {
    run::die_of_signal();
    std::process::exit(code)
}

/// Runs the event-set path and exits; `server` serves `--control`.
///
/// The counting window is exact: CPU-wide and attached sets are enabled
/// right before the command is released into exec (per-task ones are
/// enabled by the exec itself) and disabled the moment its exit (or the
/// watched processes' exit, or Ctrl-C) wakes the poll; intervals tick at
/// their deadlines, the last one at that moment. With `-D` the set starts
/// disabled (see [`start_counting`]).
pub fn run(opts: &Options, server: Option<Server>) -> ! {
    let s = &opts.set;
    refuse_unsupported(opts);
    let mut workload = (!opts.command.is_empty())
        .then(|| Workload::hold(&opts.command).unwrap_or_else(|e| fail(&e.to_string())));
    // With a target the command is a timer; without, it is the target.
    let child_is_target = !s.has_target() && workload.is_some();
    let Chosen {
        target,
        label,
        watched,
        threads,
    } = choose(
        s,
        opts.inherit,
        workload
            .as_ref()
            .filter(|_| child_is_target)
            .map(Workload::pid),
    );
    // -D: the command's events wait for the delay or `enable`, not exec.
    let on_exec = child_is_target && opts.delay_ms == 0;
    let (mut set, metrics) = open(opts, target, on_exec);
    let events = report_events(&set);
    let mut comms = read_comms(&set);
    // Processes whose exit ends counting: the command, else -p / -t.
    let mut watched = match workload {
        None => Watched::new(&watched, threads),
        Some(_) => Watched::default(),
    };
    let start = start_counting(opts, &set, workload.as_mut(), child_is_target);
    // The command's name is the program's after exec.
    if child_is_target {
        comms = read_comms(&set);
    }
    let mut ticks = Intervals::start(opts, &events, &metrics, &comms, start);
    let mut control = Control::new(server, &events);
    let ended = count(
        &mut set,
        workload.as_ref(),
        &mut watched,
        &mut ticks,
        &mut control,
    );
    let code = exit_code(workload.as_mut(), &opts.command, ended.quiet);
    if s.interval_ms.is_some() {
        finish(code);
    }
    let label = if label.is_empty() {
        format!("'{}'", opts.command.join(" "))
    } else {
        label
    };
    let text = summary(
        &mut set,
        &events,
        &metrics,
        &comms,
        opts,
        &label,
        ended.at - start,
    );
    write_report(&text);
    finish(code)
}

/// Starts counting as perf 6.1's `__run_perf_stat` does, and returns when
/// it started (the reference of the intervals' stamps and of the time
/// elapsed): without `-D` the set is enabled (a held command's own events
/// by its exec) and the command released. With `-D` the set stays
/// disabled: `Events disabled` is printed before the release; `-D -1`
/// leaves it so for `--control enable`, `-D N` waits N ms (serving no
/// command; the command's exit or a signal cut the wait short, as they
/// cut perf's usleep short), then enables it and prints `Events enabled`:
/// the start is then.
fn start_counting(
    opts: &Options,
    set: &EventSet,
    workload: Option<&mut Workload>,
    child_is_target: bool,
) -> Instant {
    if opts.delay_ms != 0 {
        eprintln!("Events disabled");
    } else if !child_is_target {
        set.enable().unwrap_or_else(|e| fail(&e.to_string()));
    }
    let start = Instant::now();
    let workload = workload.map(|w| {
        release(w);
        &*w
    });
    if opts.delay_ms <= 0 {
        return start;
    }
    run::delay(workload, opts.delay_ms as u64);
    set.enable().unwrap_or_else(|e| fail(&e.to_string()));
    eprintln!("Events enabled");
    Instant::now()
}

/// perf's refusals of `--per-thread` with only a command and of `-A`
/// without `-a` / `-C`.
fn refuse_unsupported(opts: &Options) {
    let s = &opts.set;
    if !s.has_target() && s.per_thread && !opts.command.is_empty() {
        refuse(
            "The --per-thread option is only available when monitoring via -p -t -a options or only --per-thread.\n",
            &[
                "    -p, --pid <pid>       stat events on existing process id",
                "    -t, --tid <tid>       stat events on existing thread id",
            ],
        );
    }
    if s.no_aggr && !(s.all_cpus || s.cpus.is_some()) {
        refuse(
            "both cgroup and no-aggregation modes only available in system-wide mode\n\n Usage: perf stat [<options>] [<command>]\n\n",
            &[
                "    -G, --cgroup <name>   monitor event in cgroup name only",
                "    -A, --no-aggr         disable CPU count aggregation",
                "    -a, --all-cpus        system-wide collection from all CPUs",
                "        --for-each-cgroup <name>",
                "                          expand events for each cgroup",
            ],
        );
    }
}

/// The events opened on `target` as a set, with perf stat's fallbacks;
/// `-v` prints what was opened. `on_exec`: the target is the held
/// command.
fn open(opts: &Options, target: Target, on_exec: bool) -> (EventSet, Metrics) {
    // `-M`'s tool events (`duration_time`) lead no group: none is opened.
    let (wanted, metrics) = run::wanted(opts);
    // An error drops the held command, which then exits unexecuted.
    let set = EventSet::open(groups(&wanted, on_exec), target, BudgetPolicy::Fail)
        .unwrap_or_else(|e| fail(&e.to_string()));
    if opts.verbose > 0 {
        print_opened(&set, opts.verbose);
    }
    let metrics = metrics.with_events(&wanted, set.events().len());
    (set, metrics)
}

/// `-v`: each event's fallbacks and failure; `-vv`: also its attr as
/// opened, as perf prints it; then the attach report and the fd count.
fn print_opened(set: &EventSet, verbose: u8) {
    for (i, e) in set.events().iter().enumerate() {
        for taken in e.fallbacks.iter() {
            eprintln!("Warning:\n{taken}");
        }
        if verbose > 1 {
            let outcome = match (&e.unsupported, e.opened) {
                (_, n) if n > 0 => format!("sys_perf_event_open: opened on {n} placements"),
                (Some(err), _) => format!(
                    "sys_perf_event_open failed, error -{}",
                    err.errno.map_or(0, |e| e.0)
                ),
                (None, _) => "sys_perf_event_open: not opened".to_owned(),
            };
            eprintln!(
                "{}\n{outcome}",
                set.opened_attr(i).unwrap_or(e.spec.attr).perf_print()
            );
        }
        if let Some(err) = &e.unsupported {
            eprintln!("stat: {}: {err}", e.spec.display_name());
        }
    }
    eprintln!("stat: {:?}, {} fds", set.attach_report(), set.fd_count());
}

/// Lets the held command exec; its failure ends the tool (status 255).
fn release(w: &mut Workload) {
    if let Err(e) = w.release() {
        eprintln!("{e}");
        std::process::exit(255);
    }
}

/// The tool's status: the command's exit code (0 without a command, or
/// when a signal ended it: `CMD: <signal>` is printed unless `quiet`).
fn exit_code(workload: Option<&mut Workload>, command: &[String], quiet: bool) -> i32 {
    match workload.map(Workload::reap) {
        Some(Ok(exit)) => {
            if let Some(sig) = exit.signal().filter(|_| !quiet) {
                eprintln!("{}: {}", command[0], strsignal(sig));
            }
            exit.code().unwrap_or(0)
        }
        Some(Err(e)) => fail(&e.to_string()),
        None => 0,
    }
}
