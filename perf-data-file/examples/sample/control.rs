//! `-D/--delay` and `--control`: perf record 6.1's delayed start and its
//! control protocol, served over the recording's events. The reading,
//! matching, acknowledging and messages of the commands are the library's
//! [`Server`]; this module is what the commands act on (every fd of the
//! events, per perf's `evlist__enable` / `evlist__disable`) and the one
//! wait of the recording loop: a `poll(2)` on the ring set's epoll fd and
//! the control fd.
//!
//! With `-D` the events are opened disabled and not enabled at exec: `-D
//! N` enables them N ms after the command started (perf sleeps the delay
//! out, serving no command meanwhile, and so does this), `-D -1` leaves
//! them to an `enable` command. A tracking event (`dummy:HG`, as perf
//! record 6.1 adds one with `-D`) is enabled at exec all the same, so the
//! command's mappings and names are recorded before any `enable`.
//!
//! `-D START-END,...` (perf record 6.1's time ranges): the first range's
//! start is the delay; then a [`Ranges`] timer disables the events at each
//! range's end and enables them at the next one's start, with perf's
//! messages, and the recording ends at the last range's end, as perf's
//! `event_enable_timer__process` does.

use super::args::{option_usage, Args, Target};
use perf_event_core::attr::Attr;
use perf_event_core::linux::io::{self as os_io, PollFd, POLLIN};
use perf_event_host::control::{
    write_evlist_group, write_evlist_line, ControlError, Events, EvlistDetail, Received, Server,
    Tool,
};
use perf_event_host::ringset::RingSet;
use std::io::Write;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

/// perf's messages around a delayed start (`EVLIST_DISABLED_MSG`,
/// `EVLIST_ENABLED_MSG`).
const DISABLED: &str = "Events disabled";
const ENABLED: &str = "Events enabled";

/// `--control ARG` opened as perf record opens it while reading its
/// options: a value it cannot use gets that option's help, status 129
/// (after the reason, when a FIFO or an fd could not be opened).
pub fn open(a: &Args) -> Option<Server> {
    let arg = a.control.as_deref()?;
    Some(Server::open(arg, Tool::Record).unwrap_or_else(|e| {
        if !matches!(e, ControlError::Arg { .. }) {
            eprintln!("{e}");
        }
        option_usage("control")
    }))
}

/// The recording's events as the control commands see them: each event's
/// name and attr as opened (index = event), and the ring set holding
/// their fds. Every event is its own group leader here (the tool opens no
/// groups), so enabling an event is enabling each of its fds.
pub struct RecordEvents<'a> {
    pub set: &'a RingSet,
    pub events: &'a [(String, Attr)],
}

impl RecordEvents<'_> {
    /// Enables or disables every fd of the events named `name` (all with
    /// `None`): whether an event of that name exists.
    fn toggle(&self, name: Option<&[u8]>, on: bool) -> bool {
        let named = |event: usize| name.is_none_or(|n| self.events[event].0.as_bytes() == n);
        for entry in 0..self.set.entries() {
            let Some((event, ..)) = self.set.entry(entry) else {
                continue;
            };
            if !named(event) {
                continue;
            }
            if let Some(fd) = self.set.fd(entry) {
                let _ = if on {
                    fd.enable(false)
                } else {
                    fd.disable(false)
                };
            }
        }
        (0..self.events.len()).any(named)
    }
}

impl Events for RecordEvents<'_> {
    fn enable(&mut self, name: Option<&[u8]>) -> bool {
        self.toggle(name, true)
    }

    fn disable(&mut self, name: Option<&[u8]>) -> bool {
        self.toggle(name, false)
    }

    /// perf's `evlist__ctlfd_list`: one line per event. `-g` lists group
    /// leaders, a group as `{leader,member}`: here every event alone.
    fn evlist(&self, detail: EvlistDetail, out: &mut dyn Write) -> std::io::Result<()> {
        for (name, attr) in self.events {
            if detail == EvlistDetail::Groups {
                write_evlist_group(out, &[name.as_str()])?;
            } else {
                write_evlist_line(out, detail, name, attr)?;
            }
        }
        Ok(())
    }
}

/// Enables every fd of every event, or of the events for which `which`
/// is true.
pub fn enable_where(set: &RingSet, which: impl Fn(usize) -> bool) {
    for entry in 0..set.entries() {
        if set.entry(entry).is_some_and(|(event, ..)| which(event)) {
            let _ = set.fd(entry).map(|f| f.enable(false));
        }
    }
}

/// Before the command is released: without a command (`-a`, `-p`) the
/// events start now, as perf record enables them, except that with `-D`
/// only the tracking event does; with `-D`, perf's "Events disabled".
pub fn before_start(a: &Args, set: &RingSet, tracking: Option<usize>) {
    if !matches!(a.target, Target::Command(_)) {
        enable_where(set, |event| a.delay_ms == 0 || Some(event) == tracking);
    }
    if a.delay_ms != 0 {
        eprintln!("{DISABLED}");
    }
}

/// After the command was released: `-D N` (N > 0) sleeps N ms, then
/// enables every event and prints perf's "Events enabled".
pub fn after_start(a: &Args, set: &RingSet) {
    if a.delay_ms > 0 {
        std::thread::sleep(Duration::from_millis(a.delay_ms as u64));
        enable_where(set, |_| true);
        eprintln!("{ENABLED}");
    }
}

/// Disables every fd of the events for which `which` is true.
fn disable_where(set: &RingSet, which: impl Fn(usize) -> bool) {
    for entry in 0..set.entries() {
        if set.entry(entry).is_some_and(|(event, ..)| which(event)) {
            let _ = set.fd(entry).map(|f| f.disable(false));
        }
    }
}

/// `-D START-END,...`'s timer, armed once the first range has begun: the
/// ranges' bounds as one list (start, end, start, end, ...), the next one
/// due, and when. Each step is timed from the one before, as perf's
/// timerfd is re-armed at each.
pub struct Ranges {
    bounds: Vec<u32>,
    /// The bound that comes next (odd: an end).
    step: usize,
    due: Instant,
}

impl Ranges {
    /// The timer of `a`'s ranges, started now (the first range's start);
    /// `None` without ranges.
    pub fn start(a: &Args) -> Option<Ranges> {
        let first = a.delay_ranges.first()?;
        let bounds: Vec<u32> = a.delay_ranges.iter().flat_map(|&(s, e)| [s, e]).collect();
        Some(Ranges {
            bounds,
            step: 1,
            due: Instant::now() + Duration::from_millis(u64::from(first.1 - first.0)),
        })
    }

    /// The poll timeout until the next bound, at most `cap` ms.
    pub fn timeout_ms(&self, cap: i32) -> i32 {
        let left = self.due.saturating_duration_since(Instant::now());
        (left.as_micros().div_ceil(1000) as i64).clamp(0, i64::from(cap)) as i32
    }

    /// At a due bound: a range's end disables the events (the tracking
    /// event excepted) with perf's "Events disabled", and after the last
    /// range ends the recording (true); a start enables them with "Events
    /// enabled". Nothing before the bound is due.
    pub fn tick(&mut self, set: &RingSet, tracking: Option<usize>) -> bool {
        if Instant::now() < self.due || self.step >= self.bounds.len() {
            return false;
        }
        let counted = |event: usize| Some(event) != tracking;
        if self.step % 2 == 1 {
            disable_where(set, counted);
            eprintln!("{DISABLED}");
            if self.step + 1 >= self.bounds.len() {
                return true;
            }
        } else {
            enable_where(set, counted);
            eprintln!("{ENABLED}");
        }
        self.step += 1;
        let ms = self.bounds[self.step] - self.bounds[self.step - 1];
        self.due += Duration::from_millis(u64::from(ms));
        false
    }
}

/// The recording loop's wait with `--control`: up to `timeout_ms` for a
/// ring to fill, a task to exit (both through the ring set's epoll fd), a
/// signal, or a command, which is then served (its message on stderr, its
/// acknowledgement). Whether the command was `stop`. Once the channel hung
/// up, the ring set alone is waited for.
pub fn wait(
    set: &mut RingSet,
    server: &mut Server,
    events: &[(String, Attr)],
    timeout_ms: i32,
) -> bool {
    let Some(ctl) = server.fd() else {
        let _ = set.wait(timeout_ms);
        return false;
    };
    let mut fds = [
        PollFd::from_fd(set.as_fd(), POLLIN),
        PollFd::from_fd(ctl, POLLIN),
    ];
    // EINTR: a signal (SIGCHLD, SIGINT, SIGTERM), seen by the caller.
    let _ = os_io::poll(&mut fds, timeout_ms);
    let (rings, control) = (fds[0].revents(), fds[1].revents());
    if rings != 0 {
        // Collects what woke the epoll fd: tasks that exited, full rings.
        let _ = set.wait(0);
    }
    if control == 0 {
        return false;
    }
    let mut served = RecordEvents { set, events };
    let got = server.serve(control, &mut served, &mut std::io::stderr());
    matches!(got, Some(Received::Stop))
}
