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

use crate::args::{usage, Options};
use crate::output;
use crate::run::{self, Wanted};
use crate::set_report::{counted, delta, lines_for, mode, outcomes_by_key, read_comms};
use perf_event_core::fallback::Policy;
use perf_event_core::linux::process::strsignal;
use perf_event_host::set::{
    aggregate, AggrMode, BudgetPolicy, CorePmus, Cpus, EventSet, EventSpec, HybridNames,
    PlacedCounts, Target, ThreadSet, TopologyLevel,
};
use perf_event_host::sysfs::{CpuList, Pmus};
use perf_event_host::workload::{ExitWatch, Workload};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

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

fn ids(list: &str, what: &str) -> Vec<i32> {
    list.split(',')
        .map(|p| {
            p.trim()
                .parse()
                .unwrap_or_else(|_| usage(&format!("bad {what} `{p}' (expected a number)")))
        })
        .collect()
}

/// What is measured, and how the report names it.
struct Chosen {
    target: Target,
    /// `'system wide'`, `process id '1234'`, ...
    label: String,
    /// Processes/threads whose exit ends counting.
    watched: Vec<i32>,
    /// `watched` are thread ids (`-t`), watched as threads where the
    /// kernel can (Linux 6.9), not as whole processes.
    threads: bool,
}

fn choose(s: &SetOptions, inherit: bool, child: Option<i32>) -> Chosen {
    if let Some(list) = &s.cpus {
        let list = CpuList::parse(list)
            .unwrap_or_else(|at| usage(&format!("bad CPU list `{list}' at byte {at}")));
        let sel = cpus().select(&list);
        for r in &sel.rejected {
            eprintln!("stat: {r}: left out");
        }
        if sel.cpus.is_empty() {
            usage("no usable CPU in -C");
        }
        return Chosen {
            target: Target::Cpus(sel.cpus),
            label: "'CPU(s) ".to_owned() + &list.to_string() + "'",
            watched: Vec::new(),
            threads: false,
        };
    }
    if s.all_cpus {
        return Chosen {
            target: Target::Cpus(cpus().online().clone()),
            label: "'system wide'".to_owned(),
            watched: Vec::new(),
            threads: false,
        };
    }
    if let Some(list) = &s.pids {
        let pids = ids(list, "pid");
        let target = match pids.as_slice() {
            [pid] => Target::Process {
                pid: *pid,
                cpus: None,
                inherit,
            },
            _ => {
                let mut tids = Vec::new();
                for &pid in &pids {
                    let t = ThreadSet::of_process(pid).unwrap_or_else(|e| fail(&e.to_string()));
                    tids.extend_from_slice(t.as_slice());
                }
                Target::Threads {
                    threads: ThreadSet::from_tids(tids),
                    cpus: None,
                    inherit,
                }
            }
        };
        return Chosen {
            target,
            label: format!("process id '{list}'"),
            watched: pids,
            threads: false,
        };
    }
    let (tids, label) = match (&s.tids, child) {
        (Some(list), _) => (ids(list, "tid"), format!("thread id '{list}'")),
        (None, Some(pid)) => (vec![pid], String::new()),
        (None, None) => usage("--per-thread and -I need a target (-a, -C, -p, -t) or a command"),
    };
    Chosen {
        target: Target::Threads {
            threads: ThreadSet::from_tids(tids.iter().copied()),
            cpus: None,
            inherit,
        },
        label,
        watched: tids,
        threads: child.is_none(),
    }
}

fn cpus() -> Cpus {
    Cpus::read().unwrap_or_else(|e| fail(&e.to_string()))
}

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

/// Whether a process or thread still runs (a zombie counts as gone).
fn alive(id: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{id}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
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
fn write_report(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Exits with the command's status, or dies of the signal that ended
/// counting (Ctrl-C with no command: perf's 130).
fn finish(code: i32) -> ! {
    run::die_of_signal();
    std::process::exit(code)
}

/// What ended a wait.
enum Wake {
    /// The deadline passed.
    Timeout,
    /// A watched process exited (its index).
    Exited(usize),
    /// A signal came (see `run::RECEIVED`).
    Signal,
}

/// Sleeps in poll(2) until a watched process exits, a signal comes or
/// `deadline` passes (`None`: no deadline; `fallback`: re-check the
/// watched ids every 50 ms, for threads a pidfd cannot watch: kernels
/// before 6.9).
fn wait(watches: &[&ExitWatch], deadline: Option<Instant>, fallback: bool) -> Wake {
    let mut fds: Vec<libc::pollfd> = watches
        .iter()
        .map(|w| libc::pollfd {
            fd: w.fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    fds.push(libc::pollfd {
        fd: run::signal_fd(),
        events: libc::POLLIN,
        revents: 0,
    });
    let mut ms = deadline.map_or(-1, |d| {
        let left = d.saturating_duration_since(Instant::now());
        left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
    });
    if fallback && !(0..=50).contains(&ms) {
        ms = 50;
    }
    if run::RECEIVED.load(Ordering::SeqCst) != 0 {
        return Wake::Signal;
    }
    // SAFETY: `fds` is a valid, writable array of pollfd of this length.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    if run::RECEIVED.load(Ordering::SeqCst) != 0 {
        return Wake::Signal;
    }
    if n > 0 {
        if let Some(i) = fds[..watches.len()].iter().position(|p| p.revents != 0) {
            return Wake::Exited(i);
        }
    }
    Wake::Timeout
}

/// Runs the event-set path and exits.
///
/// The counting window is exact: CPU-wide and attached sets are enabled
/// right before the command is released into exec (per-task ones are
/// enabled by the exec itself) and disabled the moment its exit (or the
/// watched processes' exit, or Ctrl-C) wakes the poll; intervals tick at
/// their deadlines, the last one at that moment.
pub fn run(opts: &Options) -> ! {
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
    let mut workload = (!opts.command.is_empty())
        .then(|| Workload::hold(&opts.command).unwrap_or_else(|e| fail(&e.to_string())));
    // With a target the command is a timer; without, it is the target.
    let child_is_target = !s.has_target() && workload.is_some();
    let chosen = choose(
        s,
        opts.inherit,
        workload
            .as_ref()
            .filter(|_| child_is_target)
            .map(Workload::pid),
    );
    let wanted = run::wanted(opts);
    // An error drops the held command, which then exits unexecuted.
    let mut set = EventSet::open(
        groups(&wanted, child_is_target),
        chosen.target,
        BudgetPolicy::Fail,
    )
    .unwrap_or_else(|e| fail(&e.to_string()));
    if opts.verbose > 0 {
        for (i, e) in set.events().iter().enumerate() {
            for taken in e.fallbacks.iter() {
                eprintln!("Warning:\n{taken}");
            }
            if opts.verbose > 1 {
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
    let events = report_events(&set);
    let mut comms = read_comms(&set);
    // Processes whose exit ends counting: the command, else -p / -t.
    let mut watches: Vec<ExitWatch> = Vec::new();
    let mut fallback: Vec<i32> = Vec::new();
    if workload.is_none() {
        for &id in &chosen.watched {
            let watch = if chosen.threads {
                ExitWatch::thread(id)
            } else {
                ExitWatch::process(id)
            };
            match watch {
                Ok(w) => watches.push(w),
                Err(_) => fallback.push(id),
            }
        }
    }
    if !child_is_target {
        set.enable().unwrap_or_else(|e| fail(&e.to_string()));
    }
    let start = Instant::now();
    if let Some(w) = workload.as_mut() {
        if let Err(e) = w.release() {
            eprintln!("{e}");
            std::process::exit(255);
        }
        // The command's name is the program's after exec.
        if child_is_target {
            comms = read_comms(&set);
        }
    }
    let interval = s.interval_ms.map(Duration::from_millis);
    let mut next = interval.map(|i| start + i);
    // --timeout (never with -I: refused when parsed): counting ends there,
    // and a command of ours gets SIGTERM.
    let end = opts.timeout_ms.map(|ms| start + Duration::from_millis(ms));
    let mut before: Vec<PlacedCounts> = Vec::new();
    let mut last_tick = start;
    let mut ended = start;
    let mut printed = 0u64;
    let mut quiet = false;
    if interval.is_some() && opts.csv.is_none() {
        eprintln!("#           time             counts unit events");
    }
    let mut print_interval = |set: &mut EventSet, at: Instant| {
        let counts = set
            .read_all()
            .unwrap_or_else(|e| fail(&e.to_string()))
            .to_vec();
        let d = delta(&counts, &before);
        let since = at - start;
        let sep = opts.csv.as_deref().unwrap_or(" ");
        let stamp = format!("{:6}.{:09}{sep}", since.as_secs(), since.subsec_nanos());
        let text = lines_for(set, &comms, &events, &d, opts, at - last_tick, &stamp);
        write_report(&text);
        before = counts;
        last_tick = at;
    };
    loop {
        let deadline = next.or(end);
        let wake = match &workload {
            Some(w) => wait(&[w.exit_watch()], deadline, false),
            None => wait(
                &watches.iter().collect::<Vec<_>>(),
                deadline,
                !fallback.is_empty(),
            ),
        };
        let done = match wake {
            Wake::Exited(i) => {
                if workload.is_none() {
                    watches.remove(i);
                }
                workload.is_some() || (watches.is_empty() && fallback.iter().all(|&f| !alive(f)))
            }
            // With a command, SIGINT to the tool alone lets it finish
            // (perf 6.1), except in interval mode.
            Wake::Signal => workload.is_none() || interval.is_some(),
            Wake::Timeout if end.is_some_and(|e| Instant::now() >= e) => {
                if let Some(w) = &workload {
                    let _ = w.signal(libc::SIGTERM);
                }
                true
            }
            Wake::Timeout => {
                !fallback.is_empty() && watches.is_empty() && fallback.iter().all(|&f| !alive(f))
            }
        };
        let now = Instant::now();
        if done {
            set.disable().unwrap_or_else(|e| fail(&e.to_string()));
            ended = now;
        }
        if let Some(n) = next {
            if now >= n || done {
                print_interval(&mut set, if done { now } else { n.max(now) });
                next = Some(n + interval.unwrap_or_default());
                printed += 1;
            }
        }
        if done {
            break;
        }
        // --interval-count: perf stops there and ends the command quietly.
        if s.interval_count.is_some_and(|n| printed >= n) {
            set.disable().unwrap_or_else(|e| fail(&e.to_string()));
            ended = now;
            if let Some(w) = &workload {
                let _ = w.signal(libc::SIGTERM);
                quiet = true;
            }
            break;
        }
    }
    let elapsed = ended - start;
    let code = match workload.as_mut().map(Workload::reap) {
        Some(Ok(exit)) => {
            if let Some(sig) = exit.signal().filter(|_| !quiet) {
                eprintln!("{}: {}", opts.command[0], strsignal(sig));
            }
            exit.code().unwrap_or(0)
        }
        Some(Err(e)) => fail(&e.to_string()),
        None => 0,
    };
    if interval.is_some() {
        finish(code);
    }
    let counts = set
        .read_all()
        .unwrap_or_else(|e| fail(&e.to_string()))
        .to_vec();
    let label = if chosen.label.is_empty() {
        format!("'{}'", opts.command.join(" "))
    } else {
        chosen.label.clone()
    };
    let text = if mode(s) == AggrMode::Total && s.per.is_none() {
        let lines = aggregate(set.events(), &counts, AggrMode::Total, HybridNames::Keep);
        let outcomes = outcomes_by_key(events.len(), &lines).remove(0).1;
        let run = counted(outcomes, elapsed);
        let text = output::report(
            &["\u{0}".to_owned()],
            opts.csv.as_deref(),
            &events,
            std::slice::from_ref(&run),
        );
        // perf's header names the target; no user/sys times without a
        // command of our own.
        text.replace("'\u{0}'", &label)
            .lines()
            .filter(|l| !l.ends_with("seconds user") && !l.ends_with("seconds sys"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            .trim_end()
            .to_owned()
            // CSV ends with its last line; the table with a blank one.
            + if opts.csv.is_some() { "\n" } else { "\n\n" }
    } else {
        let lines = lines_for(&set, &comms, &events, &counts, opts, elapsed, "");
        if opts.csv.is_some() {
            lines
        } else {
            format!(
                "\n Performance counter stats for {label}:\n\n{lines}\n {:17.9} seconds time \
                 elapsed\n\n",
                elapsed.as_secs_f64()
            )
        }
    };
    write_report(&text);
    finish(code)
}
