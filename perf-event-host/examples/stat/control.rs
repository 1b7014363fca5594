//! `--control` and `-D`: perf's control protocol served over the events
//! of a run, as perf 6.1's stat serves it (the reading, matching,
//! acknowledging and messages are the library's
//! [`Server`](perf_event_host::control::Server)): over the fds of a
//! command this tool starts, or over the event set of the event-set mode
//! ([`StatEvents`], over either [`Fds`]). Both act the way perf's `evlist__enable`
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

/// The fds the commands act on: a command's run (one fd per event), or
/// the event set of the event-set mode (one fd per event and placement).
pub enum Fds<'a> {
    Run(&'a [Slot]),
    Set(&'a EventSet),
}

/// A run's or a set's events as the control commands see them: `events`
/// is the report's list, one entry per event (same indices as the fds).
/// Enabling acts on group leaders (a member follows its leader), with
/// their groups, as perf's `evlist__enable` / `evlist__enable_evsel` do;
/// perf ignores a failed ioctl here, and so does this.
pub struct StatEvents<'a> {
    pub events: &'a [Wanted],
    pub fds: Fds<'a>,
}

impl StatEvents<'_> {
    /// Enables or disables the leaders named `name` (all with `None`):
    /// whether an event of that name exists.
    fn toggle(&self, name: Option<&[u8]>, on: bool) -> bool {
        let set = |fd: &perf_event_core::fd::EventFd, group: bool| {
            let _ = if on {
                fd.enable(group)
            } else {
                fd.disable(group)
            };
        };
        toggle_leaders(self.events, name, |i| match &self.fds {
            Fds::Run(slots) => {
                if let Slot::Open(fd) = &slots[i] {
                    set(fd, false);
                }
            }
            Fds::Set(event_set) => {
                for (placement, fd) in event_set.fds() {
                    if placement.event == i {
                        set(fd, true);
                    }
                }
            }
        })
    }
}

impl Events for StatEvents<'_> {
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
