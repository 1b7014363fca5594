//! The counting window of the event-set mode: waiting in poll(2) for the
//! command's or the watched processes' exit, a signal, `--timeout`, the
//! next `-I` tick or a `--control` command; each interval's deltas printed
//! at its tick; the set disabled the moment counting ends.
//!
//! Control commands are served as perf 6.1 serves them in `perf stat -a`
//! (its `dispatch_events`): enabling or disabling the set (or the events
//! of a name) between ticks, which keep their deadlines. perf's
//! `process_evlist` means to print an interval at each `enable` and
//! `disable`, but it tests the return of `evlist__ctlfd_process`, which is
//! 0 after them: perf 6.1 prints none, and neither does this.

use crate::args::Options;
use crate::control::{Fds, StatEvents};
use crate::metrics::Metrics;
use crate::run::{self, Wanted};
use crate::set_mode::{fail, write_report, SetOptions};
use crate::set_report::{delta, interval_total, lines_for};
use perf_event_host::control::Server;
use perf_event_host::set::{EventSet, PlacedCounts, TopologyLevel};
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

/// Sleeps in poll(2) until a watched process exits, a signal comes, a
/// control command is there or `deadline` passes (`None`: no deadline;
/// `fallback`: re-check the watched ids every 50 ms, for threads a pidfd
/// cannot watch: kernels before 6.9). `control`: the control fd polled
/// beside them and the revents it got, to serve before the wake is acted
/// on (a wake by the control fd alone is a [`Wake::Timeout`]).
fn wait(
    watches: &[&ExitWatch],
    deadline: Option<Instant>,
    fallback: bool,
    control: Option<&mut Control<'_>>,
) -> Wake {
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
    // -1 (no channel, or it hung up): poll(2) skips the entry.
    fds.push(libc::pollfd {
        fd: control.as_ref().map_or(-1, |c| c.fd()),
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
    if let Some(c) = control {
        c.pending = fds[watches.len() + 1].revents;
    }
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

    /// Waits for one of them to exit, a signal, a control command or
    /// `deadline`.
    fn wait(&self, deadline: Option<Instant>, control: &mut Control<'_>) -> Wake {
        wait(
            &self.watches.iter().collect::<Vec<_>>(),
            deadline,
            !self.fallback.is_empty(),
            Some(control),
        )
    }

    /// Whether every one of them has exited.
    fn all_gone(&self) -> bool {
        self.watches.is_empty() && self.fallback.iter().all(|&f| !alive(f))
    }
}

/// `--control`: the channel and the events its commands act on (the
/// report's list: one entry per set event).
pub struct Control<'a> {
    server: Option<Server>,
    events: &'a [Wanted],
    /// What the last poll found on the control fd, not served yet.
    pending: i16,
}

impl<'a> Control<'a> {
    /// `server` (none without `--control`) over `events`.
    pub fn new(server: Option<Server>, events: &'a [Wanted]) -> Control<'a> {
        Control {
            server,
            events,
            pending: 0,
        }
    }

    /// The fd to poll: -1 without a channel or once it hung up.
    fn fd(&self) -> i32 {
        use std::os::fd::AsRawFd;
        self.server
            .as_ref()
            .and_then(Server::fd)
            .map_or(-1, |fd| fd.as_raw_fd())
    }

    /// Serves the command the last poll found (if any) over `set`: perf's
    /// reading, matching, acknowledgement and messages on stderr.
    fn serve(&mut self, set: &EventSet) {
        let revents = std::mem::take(&mut self.pending);
        if let (Some(server), true) = (self.server.as_mut(), revents != 0) {
            let mut events = StatEvents {
                events: self.events,
                fds: Fds::Set(set),
            };
            server.serve(revents, &mut events, &mut std::io::stderr());
        }
    }
}

/// `-I MS`: the ticks, and the counts of the last one.
pub struct Intervals<'a> {
    opts: &'a Options,
    events: &'a [Wanted],
    /// `-M`'s metrics, computed per interval.
    metrics: &'a Metrics,
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
    /// The ticks of `-I` from `start` on (none without it).
    pub fn start(
        opts: &'a Options,
        events: &'a [Wanted],
        metrics: &'a Metrics,
        comms: &'a HashMap<i32, String>,
        start: Instant,
    ) -> Intervals<'a> {
        let every = opts.set.interval_ms.map(Duration::from_millis);
        Intervals {
            opts,
            events,
            metrics,
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
        // perf 6.1's process_interval: the wall-clock stats of every
        // interval's shadow metrics (`CPUs utilized`) and `-M` metrics
        // are the `-I` period, the last, shorter interval's too.
        let walltime = self.every.unwrap_or(elapsed);
        let mut text = String::new();
        // perf 6.1's print_interval: the heading with the first interval
        // and again every 25 (never with -x).
        if self.opts.csv.is_none() && self.printed % 25 == 0 {
            text.push_str(heading(&self.opts.set));
            text.push('\n');
        }
        let whole = !self.opts.set.no_aggr && self.opts.set.per.is_none();
        if self.metrics.is_empty() || !whole {
            text.push_str(&lines_for(
                set,
                self.comms,
                (self.events, self.metrics),
                &d,
                self.opts,
                (elapsed, walltime),
                &stamp,
            ));
        } else {
            // `-M` (the whole only): the metrics of the interval's counts.
            text.push_str(&interval_total(
                set,
                self.events,
                self.metrics,
                &d,
                self.opts.csv.as_deref(),
                (elapsed, walltime),
                &stamp,
            ));
        }
        write_report(&text);
        self.before = counts;
        self.last_tick = at;
    }
}

/// The heading of the `-I` table for the aggregation asked for, as perf
/// 6.1 prints it (the topology level first, as `lines_for` aggregates).
fn heading(s: &SetOptions) -> &'static str {
    match s.per {
        Some(TopologyLevel::Core) => {
            "#           time core            cpus             counts unit events"
        }
        Some(TopologyLevel::Die) => {
            "#           time die          cpus             counts unit events"
        }
        Some(TopologyLevel::Socket) => {
            "#           time socket cpus             counts unit events"
        }
        Some(TopologyLevel::Node) => "#           time node   cpus             counts unit events",
        None if s.no_aggr => "#           time CPU                    counts unit events",
        None if s.per_thread => {
            "#           time             comm-pid                  counts unit events"
        }
        // A level this tool does not know yet: perf's global heading.
        _ => "#           time             counts unit events",
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
/// intervals as they tick and serving `control`'s commands as they come;
/// the set is disabled at that moment.
pub fn count(
    set: &mut EventSet,
    workload: Option<&Workload>,
    watched: &mut Watched,
    ticks: &mut Intervals<'_>,
    control: &mut Control<'_>,
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
            Some(w) => wait(&[w.exit_watch()], deadline, false, Some(control)),
            None => watched.wait(deadline, control),
        };
        control.serve(set);
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
