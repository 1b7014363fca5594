//! `--control` and `-D`: perf's control protocol served over the events
//! of a run, as perf 6.1's stat serves it (the reading, matching,
//! acknowledging and messages are the library's
//! [`Server`](perf_event_host::control::Server)): over the fds of a
//! command this tool starts ([`RunEvents`]), or over the event set of the
//! event-set mode ([`SetEvents`]). Both act the way perf's `evlist__enable`
//! / `evlist__enable_evsel` do, on group leaders (a member follows its
//! leader), and list the events the way its `evlist` command does
//! ([`toggle_leaders`], [`write_evlist`]).

use crate::args;
use crate::run::{Slot, Wanted};
use perf_event_host::control::{
    write_evlist_group, write_evlist_line, ControlError, Events, EvlistDetail, Server, Tool,
};
use perf_event_host::set::EventSet;
use std::io::Write;

/// The server of `--control ARG`, opened as perf opens it while parsing
/// its options (FIFOs included): a value it cannot use gets perf's usage
/// of the option and status 129. `None` without `--control`.
pub fn server(arg: Option<&str>) -> Option<Server> {
    arg.map(|arg| {
        Server::open(arg, Tool::Stat).unwrap_or_else(|e| {
            if !matches!(e, ControlError::Arg { .. }) {
                eprintln!("{e}");
            }
            args::option_usage("control")
        })
    })
}

/// Calls `act` with the index of every group leader among `events` named
/// `name` (every leader with `None`), as perf enables an event by name
/// only where it leads its group: whether an event of that name exists
/// (leader or not: perf answers `Event NAME enabled` for a member too).
pub fn toggle_leaders(events: &[Wanted], name: Option<&[u8]>, mut act: impl FnMut(usize)) -> bool {
    let named = |i: usize| name.is_none_or(|n| events[i].name.as_bytes() == n);
    for (i, ev) in events.iter().enumerate() {
        if ev.leader == i && named(i) {
            act(i);
        }
    }
    (0..events.len()).any(named)
}

/// perf's `evlist` command over `events`: one line per event (`-v`: with
/// its attr, `-F`: its sample period or frequency), or per group (`-g`:
/// `{leader,member}`).
pub fn write_evlist(
    events: &[Wanted],
    detail: EvlistDetail,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    for (i, ev) in events.iter().enumerate() {
        if detail != EvlistDetail::Groups {
            write_evlist_line(out, detail, &ev.name, &ev.attr)?;
        } else if ev.leader == i {
            let members: Vec<&str> = events
                .iter()
                .filter(|e| e.leader == i)
                .map(|e| e.name.as_str())
                .collect();
            write_evlist_group(out, &members)?;
        }
    }
    Ok(())
}

/// The run's events as the control commands see them.
pub struct RunEvents<'a> {
    pub events: &'a [Wanted],
    pub slots: &'a [Slot],
}

impl RunEvents<'_> {
    /// Enables or disables the leaders named `name` (all with `None`):
    /// whether an event of that name exists.
    fn toggle(&self, name: Option<&[u8]>, on: bool) -> bool {
        toggle_leaders(self.events, name, |i| {
            if let Slot::Open(fd) = &self.slots[i] {
                let _ = if on {
                    fd.enable(false)
                } else {
                    fd.disable(false)
                };
            }
        })
    }
}

impl Events for RunEvents<'_> {
    fn enable(&mut self, name: Option<&[u8]>) -> bool {
        self.toggle(name, true)
    }

    fn disable(&mut self, name: Option<&[u8]>) -> bool {
        self.toggle(name, false)
    }

    fn evlist(&self, detail: EvlistDetail, out: &mut dyn Write) -> std::io::Result<()> {
        write_evlist(self.events, detail, out)
    }
}

/// The event set's events as the control commands see them: `events` is
/// the report's list, one entry per set event (same indices).
pub struct SetEvents<'a> {
    pub events: &'a [Wanted],
    pub set: &'a EventSet,
}

impl SetEvents<'_> {
    /// Enables or disables, on every placement, the group leaders named
    /// `name` (all with `None`; with their groups, as one ioctl per group
    /// instance): whether an event of that name exists. perf ignores a
    /// failed ioctl here, and so does this.
    fn toggle(&self, name: Option<&[u8]>, on: bool) -> bool {
        toggle_leaders(self.events, name, |i| {
            for (placement, fd) in self.set.fds() {
                if placement.event == i {
                    let _ = if on {
                        fd.enable(true)
                    } else {
                        fd.disable(true)
                    };
                }
            }
        })
    }
}

impl Events for SetEvents<'_> {
    fn enable(&mut self, name: Option<&[u8]>) -> bool {
        self.toggle(name, true)
    }

    fn disable(&mut self, name: Option<&[u8]>) -> bool {
        self.toggle(name, false)
    }

    fn evlist(&self, detail: EvlistDetail, out: &mut dyn Write) -> std::io::Result<()> {
        write_evlist(self.events, detail, out)
    }
}
