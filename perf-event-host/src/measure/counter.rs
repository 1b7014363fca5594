//! [`event_counter`]: a [`Counter`] from a perf event string, parsed
//! against this machine's sysfs and tracefs.

use crate::parse::{parse, ParseError, System};
use crate::sysfs::SysfsError;
use core::fmt;
use perf_event_core::monitor::Counter;

/// The counter for a perf event string naming one event (`cycles:u`,
/// `cpu/event=0x3c/`, `sched:sched_switch`, `page-faults`...), parsed with
/// [`crate::parse`] against this machine's PMUs (sysfs) and tracepoints
/// (tracefs): a [`Counter::Event`] whose name is `spec` itself.
///
/// `spec` is `'static` because a counter's name is its unit for the
/// lifetime of a benchmark (criterion's units are `&'static str`): pass a
/// literal, or `Box::leak` a string read at run time, once.
pub fn event_counter(spec: &'static str) -> Result<Counter, EventCounterError> {
    let system = System::discover().map_err(|error| EventCounterError::Discover { spec, error })?;
    let list = parse(spec, &system).map_err(|error| EventCounterError::Parse { spec, error })?;
    match list.events() {
        [one] => Ok(Counter::Event {
            attr: one.attr,
            name: spec,
        }),
        events => Err(EventCounterError::NotOneEvent {
            spec,
            events: events.len(),
        }),
    }
}

/// Why a perf event string gave no [`Counter`].
#[derive(Debug)]
#[non_exhaustive]
pub enum EventCounterError {
    /// Reading this machine's PMUs (sysfs) failed.
    Discover {
        /// The event string.
        spec: &'static str,
        /// The file that could not be read.
        error: SysfsError,
    },
    /// The string is not a perf event string this machine has.
    Parse {
        /// The event string.
        spec: &'static str,
        /// Where and why it was rejected.
        error: ParseError,
    },
    /// The string names several events (a list, a group, a hybrid or
    /// wildcard PMU expansion); a counter is one event.
    NotOneEvent {
        /// The event string.
        spec: &'static str,
        /// How many events it names.
        events: usize,
    },
}

impl fmt::Display for EventCounterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventCounterError::Discover { spec, error } => {
                write!(f, "counter `{spec}`: reading the PMUs: {error}")
            }
            EventCounterError::Parse { spec, error } => write!(f, "counter `{spec}`: {error}"),
            EventCounterError::NotOneEvent { spec, events } => write!(
                f,
                "counter `{spec}`: names {events} events; a counter is one event (measure \
                 several with one Counter each)"
            ),
        }
    }
}

impl std::error::Error for EventCounterError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_of_one_event_is_a_counter_named_by_it() {
        let counter = event_counter("page-faults").unwrap();
        assert_eq!(counter.name(), "page-faults");
        assert_eq!(counter.unit(), "page-faults");
        assert!(!counter.attr().needs_hardware_pmu());
    }

    #[test]
    fn a_string_that_is_not_one_event_says_why() {
        match event_counter("no-such-event-here") {
            Err(e @ EventCounterError::Parse { .. }) => {
                assert!(
                    e.to_string().starts_with("counter `no-such-event-here`: "),
                    "{e}"
                )
            }
            other => panic!("{other:?}"),
        }
        match event_counter("page-faults,task-clock") {
            Err(e @ EventCounterError::NotOneEvent { events: 2, .. }) => {
                assert!(e.to_string().contains("names 2 events"), "{e}")
            }
            other => panic!("{other:?}"),
        }
    }
}
