//! Event-string errors: the byte position, the offending text, what was
//! expected.

use super::modifiers::ModifierProblem;
use crate::sysfs::{EncodeError, TermSyntaxError};
use core::fmt;

/// A rejected event string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The whole string given.
    pub input: String,
    /// Byte offset of the offending text.
    pub position: usize,
    /// Its length in bytes (at least 1 when the input is not empty there).
    pub len: usize,
    /// What is wrong.
    pub kind: ErrorKind,
}

/// What is wrong with an event string.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Nothing where an event belongs (empty string, `a,,b`, `{}`).
    ExpectedEvent,
    /// A character that cannot come here.
    Unexpected {
        /// What the parser needed.
        expected: &'static str,
    },
    /// `{` without `}`.
    UnclosedGroup,
    /// `{` inside a group.
    NestedGroup,
    /// `}` without `{`.
    UnopenedGroup,
    /// `pmu/...` without the closing `/`.
    UnclosedTerms,
    /// A name that is no generalized event, cache event, raw event, PMU
    /// alias or tracepoint.
    UnknownEvent,
    /// `name/.../` where `name` is no PMU.
    UnknownPmu {
        /// The PMUs there are, comma-separated.
        known: String,
    },
    /// `*` or `?` in a name that is neither a tracepoint nor a PMU.
    Wildcard,
    /// A wildcard that matches no tracepoint.
    NoMatch,
    /// An event the perf tool computes itself (`duration_time`).
    ToolEvent,
    /// A name that starts like a cache event but is not one.
    Cache {
        /// Why.
        why: &'static str,
    },
    /// A bad modifier.
    Modifier(ModifierProblem),
    /// A malformed term list.
    Terms(TermSyntaxError),
    /// A term the PMU cannot encode.
    Encode(Box<EncodeError>),
    /// A config term (`period=`, `name=`) used wrongly, or a term a
    /// generalized event cannot take.
    ConfigTerm {
        /// Why.
        why: &'static str,
    },
    /// A tracepoint that cannot be resolved (the resolver's message).
    Tracepoint(String),
    /// A malformed `mem:` breakpoint.
    Breakpoint {
        /// Why.
        why: &'static str,
    },
    /// A malformed number.
    Number {
        /// Why.
        why: &'static str,
    },
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::ExpectedEvent => f.write_str(
                "expected an event (a name such as `cycles`, `pmu/terms/`, `system:tracepoint`, \
                 `mem:ADDR`, `rNNN` or `{group}`)",
            ),
            ErrorKind::Unexpected { expected } => write!(f, "unexpected text: expected {expected}"),
            ErrorKind::UnclosedGroup => f.write_str("`{` without its `}`"),
            ErrorKind::NestedGroup => f.write_str("groups do not nest"),
            ErrorKind::UnopenedGroup => f.write_str("`}` without a `{` before it"),
            ErrorKind::UnclosedTerms => f.write_str("the term list has no closing `/`"),
            ErrorKind::UnknownEvent => f.write_str(if cfg!(feature = "vendor") {
                "unknown event: not a generalized name (cycles, instructions, task-clock, ...), \
                 a cache event (L1-dcache-load-misses, ...), a raw event (rNNN), nor an event \
                 of any PMU (/sys/bus/event_source/devices/*/events; perf's vendor names such \
                 as inst_retired.any when the resolver is a vendor::VendorSystem)"
            } else {
                "unknown event: not a generalized name (cycles, instructions, task-clock, ...), \
                 a cache event (L1-dcache-load-misses, ...), a raw event (rNNN), nor an event \
                 of any PMU (/sys/bus/event_source/devices/*/events); perf's vendor names \
                 (inst_retired.any, ...) need perf-event-host's feature `vendor`"
            }),
            ErrorKind::UnknownPmu { known } => write!(
                f,
                "no PMU of that name under /sys/bus/event_source/devices (this system has: {known})"
            ),
            ErrorKind::Wildcard => f.write_str(
                "wildcards match tracepoints (`system:pattern`) and PMU names \
                             (`pmu*/terms/`), not event names",
            ),
            ErrorKind::NoMatch => f.write_str(
                "no tracepoint matches (`ls <tracefs>/events` lists the systems; `*` matches \
                 any run of characters, `?` one)",
            ),
            ErrorKind::ToolEvent => f.write_str(
                "a perf tool event (perf measures it itself): there is no kernel event to open",
            ),
            ErrorKind::Cache { why } => write!(f, "cache event: {why}"),
            ErrorKind::Modifier(p) => write!(f, "{p}"),
            ErrorKind::Terms(e) => write!(f, "malformed term list {e}"),
            ErrorKind::Encode(e) => write!(f, "{e}"),
            ErrorKind::ConfigTerm { why } => f.write_str(why),
            ErrorKind::Tracepoint(why) => f.write_str(why),
            ErrorKind::Breakpoint { why } => write!(f, "breakpoint: {why}"),
            ErrorKind::Number { why } => f.write_str(why),
        }
    }
}

/// `byte N: what` then the input with a caret line under the offending text.
impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.position.min(self.input.len());
        let shown = self.input.get(at..at + self.len).unwrap_or("");
        if shown.is_empty() {
            write!(f, "event string, byte {at}: {}", self.kind)?;
        } else {
            write!(f, "event string, byte {at} (`{shown}`): {}", self.kind)?;
        }
        let column = self.input.get(..at).map_or(at, |s| s.chars().count());
        let width = shown.chars().count().max(1);
        write!(
            f,
            "\n  {}\n  {}{}",
            self.input,
            " ".repeat(column),
            "^".repeat(width)
        )
    }
}

impl std::error::Error for ParseError {}
