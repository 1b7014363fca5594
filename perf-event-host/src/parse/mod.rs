//! perf-style event strings (std): `cycles:u`, `cpu/event=0x3c,umask=0x00/k`,
//! `msr/tsc/`, `sched:sched_switch`, `mem:0x1000/8:rw`, `r01a8`,
//! `{cycles,instructions}:S`, to [`Attr`] values and their group structure,
//! without opening anything.
//!
//! The syntax is the perf tool's (perf-list(1), tools/perf/util/parse-events.l):
//!
//! | form | event |
//! |------|-------|
//! | `cycles`, `instructions`, `task-clock`, `page-faults`, `cs`, ... | generalized hardware / software events |
//! | `L1-dcache-load-misses`, `LLC-loads`, `dTLB-load-misses`, `branch-loads`, ... | `PERF_TYPE_HW_CACHE`: cache, then operation and / or result |
//! | `rNNN` (hex, up to 16 digits) | `PERF_TYPE_RAW` with `config = 0xNNN` |
//! | `TYPE:CONFIG` (numbers) | any type and config |
//! | `pmu/term=value,term,.../` | a sysfs PMU, terms from its `format/` and `events/` (`pmu` may name numbered instances: `uncore_imc` is `uncore_imc_0`, `uncore_imc_1`, ...; `*` / `?` glob PMU names) |
//! | `name` | an `events/` alias of any PMU (`tsc` is `msr/tsc/`) |
//! | `system:event` | a tracepoint, its id from tracefs; `*` / `?` in either part expand against tracefs (`syscalls:sys_enter_w*`, `*:sched_switch`) |
//! | `mem:ADDR[/LEN][:rwx]` | a hardware breakpoint (default `rw`, length 4; 8 for `x`); config terms may follow in slashes (`mem:0x1000/8/name=w/`) |
//! | `{a,b,...}`, `name{a,b,...}` | a group, led by its first event (named: [`Group::name`]) |
//!
//! Inside a PMU's terms, as in perf: a bare `config1` is `config1=1`;
//! `event=NAME` names an alias of the PMU (`msr/event=tsc/`); `rNNN` or
//! `r0xNNN` is `config=0xNNN` (`software/r1a/`); a generalized name on a
//! core PMU (`cpu/cycles/`, `cpu_atom/L1-dcache-load-miss/`) is that
//! hardware or cache event, with the PMU's type in config bits 32-63 when
//! the machine has several core PMUs (hybrid; perf's extended type). A
//! bare generalized name (`cycles`) stays one event; opening it on each
//! core PMU of a hybrid machine is the event-set layer's work.
//!
//! Modifiers follow a `:` (or directly the closing `/` of a term list):
//! `u k h G H I p pp ppp P S D e W` ([`Modifiers`]). Config terms in
//! `/.../` after any event (`cycles/period=1000/`, `4:0x3c/name=x/`,
//! `sched:sched_switch/call-graph=fp/`, `mem:0x1000/8/name=w/`) set attr
//! fields rather than PMU bits: `period=`, `freq=`, `name=`, `inherit`,
//! `no-inherit`, `time`, `config`..`config3`, `call-graph=fp|dwarf[,size]|lbr|no`
//! with `stack-size=` and `max-stack=` (the callchain sample fields perf
//! sets), `overwrite` / `no-overwrite` (`write_backward`), `aux-output`,
//! `aux-sample-size=`. A bare switch term is 1.
//!
//! Attrs come out counting (no sample period unless `period=` / `freq=`
//! asks), enabled, every privilege level unless a modifier says otherwise:
//! set `disabled`, `read_format` and the rest on [`ParsedEvent::attr`]
//! before opening. Events, names and PMU data are borrowed from the input
//! and the [`Resolver`]; errors carry the byte position and the offending
//! text.
//!
//! ```
//! use perf_event_host::parse::{parse, Builtin};
//!
//! let list = parse("{cycles:u,instructions:u},page-faults", &Builtin).unwrap();
//! assert_eq!(list.groups().count(), 2);
//! let raw = list.events()[0].attr.to_raw();
//! assert_eq!((raw.type_, raw.config), (0, 0)); // PERF_TYPE_HARDWARE, CPU_CYCLES
//!
//! let err = parse("cycles:x", &Builtin).unwrap_err();
//! assert_eq!(err.position, 7);
//! ```

mod config;
mod error;
mod event;
mod mem;
mod modifiers;
mod names;
mod pmu;
mod tracepoints;

pub use error::{ErrorKind, ParseError};
pub use modifiers::{ModifierError, ModifierProblem, Modifiers};
pub use tracepoints::{list_tracepoints, TracepointName};

use crate::sysfs::{Alias, Pmu, Pmus, SysfsError, Tracefs, TracepointError};
use core::ops::Range;
use perf_event_core::attr::Attr;
use std::sync::OnceLock;

/// Where the parser looks up PMUs and tracepoints: the real system
/// ([`System`]), a fixture tree ([`Pmus::read_from`]), or nothing
/// ([`Builtin`]).
pub trait Resolver {
    /// The PMUs (any order).
    fn pmus(&self) -> &[Pmu];
    /// The id of tracepoint `system:event`.
    fn tracepoint_id(&self, system: &str, event: &str) -> Result<u64, TracepointError>;
    /// Every tracepoint, for wildcards (`sched:*`). The default: none
    /// (tracefs not mounted).
    fn tracepoints(&self) -> Result<&[TracepointName], TracepointError> {
        Err(TracepointError::NotMounted)
    }
}

/// No PMUs, no tracefs: only the generalized, cache, raw, numeric and
/// breakpoint events parse.
#[derive(Clone, Copy, Debug, Default)]
pub struct Builtin;

impl Resolver for Builtin {
    fn pmus(&self) -> &[Pmu] {
        &[]
    }
    fn tracepoint_id(&self, _: &str, _: &str) -> Result<u64, TracepointError> {
        Err(TracepointError::NotMounted)
    }
}

/// PMUs without tracefs.
impl Resolver for Pmus {
    fn pmus(&self) -> &[Pmu] {
        self.all()
    }
    fn tracepoint_id(&self, _: &str, _: &str) -> Result<u64, TracepointError> {
        Err(TracepointError::NotMounted)
    }
}

/// The PMUs of a sysfs tree and a tracefs.
#[derive(Debug)]
pub struct System {
    /// The PMUs.
    pub pmus: Pmus,
    /// The tracefs, when mounted.
    pub tracefs: Option<Tracefs>,
    /// The tracefs's tracepoints, listed on the first wildcard.
    tracepoint_names: OnceLock<Vec<TracepointName>>,
}

impl System {
    /// A system of these PMUs and this tracefs (fixtures, other roots).
    pub fn new(pmus: Pmus, tracefs: Option<Tracefs>) -> System {
        System {
            pmus,
            tracefs,
            tracepoint_names: OnceLock::new(),
        }
    }

    /// This machine: every PMU under /sys/bus/event_source/devices and the
    /// mounted tracefs (if any; tracepoint events fail without it).
    pub fn discover() -> Result<System, SysfsError> {
        Ok(System::new(Pmus::read()?, Tracefs::find().ok()))
    }
}

impl Resolver for System {
    fn pmus(&self) -> &[Pmu] {
        self.pmus.all()
    }
    fn tracepoint_id(&self, system: &str, event: &str) -> Result<u64, TracepointError> {
        match &self.tracefs {
            Some(t) => t.tracepoint_id(system, event),
            None => Err(TracepointError::NotMounted),
        }
    }
    fn tracepoints(&self) -> Result<&[TracepointName], TracepointError> {
        if let Some(names) = self.tracepoint_names.get() {
            return Ok(names);
        }
        let tracefs = self.tracefs.as_ref().ok_or(TracepointError::NotMounted)?;
        let names = list_tracepoints(tracefs)?;
        Ok(self.tracepoint_names.get_or_init(|| names))
    }
}

/// One event of a parsed string.
#[derive(Clone, Copy, Debug)]
pub struct ParsedEvent<'s, 'r> {
    /// The attr, ready to open (after the caller's own settings).
    pub attr: Attr,
    /// The event's text in the input (without group braces).
    pub text: &'s str,
    /// Its byte offset in the input.
    pub position: usize,
    /// The `name=` term, if given.
    pub name: Option<&'s str>,
    /// The tracepoint (`system:event`) a wildcard expanded to.
    pub expanded: Option<&'r str>,
    /// The sysfs PMU, for `pmu/.../` and alias events.
    pub pmu: Option<&'r Pmu>,
    /// The `events/` alias used, with its `.scale` and `.unit`.
    pub alias: Option<&'r Alias>,
    /// The modifiers written (the event's and its group's), including those
    /// without an attr bit (`P`, `W`).
    pub modifiers: Modifiers,
    /// The index of its group in [`EventList::groups`].
    pub group: usize,
}

/// A group of events (a `{...}`, or one ungrouped event).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group<'s> {
    /// The events' indices in [`EventList::events`]; the first leads.
    pub events: Range<usize>,
    /// Whether it was written with braces.
    pub braced: bool,
    /// The group's own modifiers (`{...}:mods`).
    pub modifiers: Modifiers,
    /// Its name, when written `name{...}`.
    pub name: Option<&'s str>,
}

/// The events of a string and their groups.
#[derive(Clone, Debug)]
pub struct EventList<'s, 'r> {
    events: Vec<ParsedEvent<'s, 'r>>,
    groups: Vec<Group<'s>>,
}

impl<'s, 'r> EventList<'s, 'r> {
    /// Every event, in string order (a name that matches several PMUs
    /// gives one event per PMU).
    pub fn events(&self) -> &[ParsedEvent<'s, 'r>] {
        &self.events
    }

    /// The groups, in string order.
    pub fn group_list(&self) -> &[Group<'s>] {
        &self.groups
    }

    /// The events of each group: open the first, then the rest with it as
    /// the group fd.
    pub fn groups(&self) -> impl Iterator<Item = &[ParsedEvent<'s, 'r>]> + '_ {
        self.groups.iter().map(|g| &self.events[g.events.clone()])
    }
}

/// Parses an event string. See the [module docs](self).
pub fn parse<'s, 'r, R: Resolver + ?Sized>(
    input: &'s str,
    resolver: &'r R,
) -> Result<EventList<'s, 'r>, ParseError> {
    event::Parser::new(input, resolver).run()
}
