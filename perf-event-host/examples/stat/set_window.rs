//! The counting window of the event-set mode: waiting in poll(2) for the
//! command's or the watched processes' exit, a signal, `--timeout` or the
//! next `-I` tick; each interval's deltas printed at its tick; the set
//! disabled the moment counting ends.

use crate::args::Options;
use crate::run::{self, Wanted};
use crate::set_mode::{fail, write_report};
use crate::set_report::{delta, lines_for};
use perf_event_host::set::{EventSet, PlacedCounts};
use perf_event_host::workload::{ExitWatch, Workload};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

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

/// Whether a process or thread still runs (a zombie counts as gone).
fn alive(id: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{id}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

/// The processes or threads of `-p` / `-t` whose exit ends counting
/// (none when a command of ours does).
#[derive(Default)]
pub struct Watched {
    /// Those a pidfd watches, each removed at its exit.
    watches: Vec<ExitWatch>,
    /// Those it cannot (threads before Linux 6.9): re-checked in /proc.
    fallback: Vec<i32>,
}

impl Watched {
    /// Watches `ids`, as threads when `threads` (`-t`).
    pub fn new(ids: &[i32], threads: bool) -> Watched {
        let mut watched = Watched::default();
        for &id in ids {
            let watch = if threads {
                ExitWatch::thread(id)
            } else {
                ExitWatch::process(id)
            };
            match watch {
                Ok(w) => watched.watches.push(w),
                Err(_) => watched.fallback.push(id),
            }
        }
        watched
    }

    /// Waits for one of them to exit, a signal or `deadline`.
    fn wait(&self, deadline: Option<Instant>) -> Wake {
        wait(
            &self.watches.iter().collect::<Vec<_>>(),
            deadline,
            !self.fallback.is_empty(),
        )
    }

    /// Whether every one of them has exited.
    fn all_gone(&self) -> bool {
        self.watches.is_empty() && self.fallback.iter().all(|&f| !alive(f))
    }
}

/// `-I MS`: the ticks, and the counts of the last one.
pub struct Intervals<'a> {
    opts: &'a Options,
    events: &'a [Wanted],
    comms: &'a HashMap<i32, String>,
    /// `-I`'s period (`None`: no intervals).
    every: Option<Duration>,
    /// The next tick.
    next: Option<Instant>,
    /// When counting started.
    start: Instant,
    last_tick: Instant,
    /// The counts read at the last tick.
    before: Vec<PlacedCounts>,
    /// How many intervals were printed.
    printed: u64,
}

impl<'a> Intervals<'a> {
    /// The ticks of `-I` from `start` on (none without it); prints the
    /// table's heading line.
    pub fn start(
        opts: &'a Options,
        events: &'a [Wanted],
        comms: &'a HashMap<i32, String>,
        start: Instant,
    ) -> Intervals<'a> {
        let every = opts.set.interval_ms.map(Duration::from_millis);
        if every.is_some() && opts.csv.is_none() {
            eprintln!("#           time             counts unit events");
        }
        Intervals {
            opts,
            events,
            comms,
            every,
            next: every.map(|i| start + i),
            start,
            last_tick: start,
            before: Vec::new(),
            printed: 0,
        }
    }

    /// Prints the interval ending at `now` if its tick has come, or when
    /// counting ended (`done`: the last, shorter one).
    fn tick(&mut self, set: &mut EventSet, now: Instant, done: bool) {
        if let Some(n) = self.next {
            if now >= n || done {
                self.print(set, if done { now } else { n.max(now) });
                self.next = Some(n + self.every.unwrap_or_default());
                self.printed += 1;
            }
        }
    }

    /// The lines of the interval ending `at`: the counts since the last
    /// tick, each line stamped with the time since the start.
    fn print(&mut self, set: &mut EventSet, at: Instant) {
        let counts = set
            .read_all()
            .unwrap_or_else(|e| fail(&e.to_string()))
            .to_vec();
        let d = delta(&counts, &self.before);
        let since = at - self.start;
        let sep = self.opts.csv.as_deref().unwrap_or(" ");
        let stamp = format!("{:6}.{:09}{sep}", since.as_secs(), since.subsec_nanos());
        let elapsed = at - self.last_tick;
        let text = lines_for(set, self.comms, self.events, &d, self.opts, elapsed, &stamp);
        write_report(&text);
        self.before = counts;
        self.last_tick = at;
    }
}

/// How counting ended.
pub struct Ended {
    /// When the set was disabled.
    pub at: Instant,
    /// `--interval-count` ended the command (SIGTERM): its death by that
    /// signal is not reported.
    pub quiet: bool,
}

/// Counts until the command (`workload`) or every watched process exits,
/// a signal, `--timeout` or `--interval-count` ends it, printing the
/// intervals as they tick; the set is disabled at that moment.
pub fn count(
    set: &mut EventSet,
    workload: Option<&Workload>,
    watched: &mut Watched,
    ticks: &mut Intervals<'_>,
) -> Ended {
    let opts = ticks.opts;
    // --timeout (never with -I: refused when parsed): counting ends there,
    // and a command of ours gets SIGTERM.
    let end = opts
        .timeout_ms
        .map(|ms| ticks.start + Duration::from_millis(ms));
    loop {
        let deadline = ticks.next.or(end);
        let wake = match workload {
            Some(w) => wait(&[w.exit_watch()], deadline, false),
            None => watched.wait(deadline),
        };
        let done = ends_counting(wake, workload, watched, ticks.every.is_some(), end);
        let now = Instant::now();
        if done {
            set.disable().unwrap_or_else(|e| fail(&e.to_string()));
        }
        ticks.tick(set, now, done);
        if done {
            return Ended {
                at: now,
                quiet: false,
            };
        }
        // --interval-count: perf stops there and ends the command quietly.
        if opts.set.interval_count.is_some_and(|n| ticks.printed >= n) {
            set.disable().unwrap_or_else(|e| fail(&e.to_string()));
            let quiet = workload.is_some_and(|w| {
                let _ = w.signal(libc::SIGTERM);
                true
            });
            return Ended { at: now, quiet };
        }
    }
}

/// Whether `wake` ends counting (`intervals`: `-I` is given; `end`:
/// `--timeout`'s deadline, at which a command of ours gets SIGTERM).
fn ends_counting(
    wake: Wake,
    workload: Option<&Workload>,
    watched: &mut Watched,
    intervals: bool,
    end: Option<Instant>,
) -> bool {
    match wake {
        Wake::Exited(i) => {
            if workload.is_none() {
                watched.watches.remove(i);
            }
            workload.is_some() || watched.all_gone()
        }
        // With a command, SIGINT to the tool alone lets it finish
        // (perf 6.1), except in interval mode.
        Wake::Signal => workload.is_none() || intervals,
        Wake::Timeout if end.is_some_and(|e| Instant::now() >= e) => {
            if let Some(w) = workload {
                let _ = w.signal(libc::SIGTERM);
            }
            true
        }
        Wake::Timeout => !watched.fallback.is_empty() && watched.all_gone(),
    }
}
