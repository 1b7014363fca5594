//! `--control` and `-D`: perf's control protocol served over one run's
//! events, as perf 6.1's stat serves it (the reading, matching,
//! acknowledging and messages are the library's
//! [`Server`](perf_event_host::control::Server)).

use crate::run::{Slot, Wanted};
use perf_event_host::control::{write_evlist_group, write_evlist_line, Events, EvlistDetail};
use std::io::Write;

/// The run's events as the control commands see them: enabling acts on
/// group leaders (a member follows its leader), as perf's
/// `evlist__enable` does.
pub struct RunEvents<'a> {
    pub events: &'a [Wanted],
    pub slots: &'a [Slot],
}

impl RunEvents<'_> {
    /// Enables or disables the leaders named `name` (all with `None`):
    /// whether an event of that name exists.
    fn toggle(&self, name: Option<&[u8]>, on: bool) -> bool {
        let named = |i: usize| name.is_none_or(|n| self.events[i].name.as_bytes() == n);
        for (i, ev) in self.events.iter().enumerate() {
            if ev.leader != i || !named(i) {
                continue;
            }
            if let Slot::Open(fd) = &self.slots[i] {
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

impl Events for RunEvents<'_> {
    fn enable(&mut self, name: Option<&[u8]>) -> bool {
        self.toggle(name, true)
    }

    fn disable(&mut self, name: Option<&[u8]>) -> bool {
        self.toggle(name, false)
    }

    fn evlist(&self, detail: EvlistDetail, out: &mut dyn Write) -> std::io::Result<()> {
        for (i, ev) in self.events.iter().enumerate() {
            if detail != EvlistDetail::Groups {
                write_evlist_line(out, detail, &ev.name, &ev.attr)?;
            } else if ev.leader == i {
                let members: Vec<&str> = self
                    .events
                    .iter()
                    .filter(|e| e.leader == i)
                    .map(|e| e.name.as_str())
                    .collect();
                write_evlist_group(out, &members)?;
            }
        }
        Ok(())
    }
}
