//! perf.data in and out (std): a writer and a reader of the file format
//! of `perf record` (the kernel's
//! `tools/perf/Documentation/perf.data-file-format.txt`), on this crate's
//! own types: events are [`Attr`](perf_event_core::attr::Attr)s with their ids,
//! records are the kernel's bytes, parsed by [`perf_event_core::record::parse`]
//! with each event's [`SampleLayout`](perf_event_core::record::SampleLayout).
//!
//! - [`Writer`]: a file ([`Writer::create`]) or perf's pipe format
//!   ([`Writer::pipe`], to stdout). Records are written as the rings hold
//!   them, never re-encoded, through a 64 KiB buffer; the attrs and their
//!   ids first; PERF_RECORD_FINISHED_ROUND at each [`Writer::finish_round`]
//!   (the caller's round: a pass that read every ring to its head, as
//!   `perf record` does, [`Writer::write_drained`], or a round of the ring
//!   set's time-ordered merge, [`Writer::write_ordered`]);
//!   the feature sections at [`Writer::finish`]: hostname, osrelease,
//!   version, arch, nrcpus, cpudesc, cpuid, total memory, cmdline,
//!   event_desc, cpu topology, clockid and clock data (events with
//!   `use_clockid`), sample_time, the build ids of the objects the
//!   recording mapped (their ELF notes, read with the `object` crate) and,
//!   with tracepoint events, their formats from tracefs (tracing data,
//!   which perf needs to read such a file at all). At the end of a
//!   recording [`Writer::write_lost_samples`] writes each event's lost
//!   samples as `perf record` does (what `perf report --stats` shows).
//!   In file mode the header's data size is brought up to date at every
//!   round: a writer killed mid-recording leaves a file perf reads up to
//!   its last round, and [`PerfData`] recovers.
//! - [`PerfData`]: perf's files and this writer's, file and pipe mode,
//!   little- and big-endian (the magic says which); the attrs with their
//!   ids and names, every feature above, and the records, each with the
//!   event its sample id names.
//!
//! ```no_run
//! use perf_data_file::PerfData;
//! use perf_event_core::record::Record;
//! let file = PerfData::open("perf.data").unwrap();
//! println!("{:?} on {:?}", file.features.cmdline, file.features.hostname);
//! for rec in file.records() {
//!     let (_, bytes) = rec.unwrap();
//!     if let Ok(p) = file.parse(bytes) {
//!         if let Record::Sample(s) = p.record {
//!             println!("{:x?}", s.ip());
//!         }
//!     }
//! }
//! ```

#![deny(unsafe_code)]

mod build_id;
mod features;
mod header;
mod pipe;
mod reader;
mod spool;
mod synthesize;
mod tracing_data;
mod writer;

pub use features::{BuildId, ClockData, CoreAndSocket, CpuTopology, EventDesc, Features};
pub use header::{
    feature, kind, FileHeader, Section, FILE_HEADER_SIZE, MAGIC, NAME_ALIGN, PIPE_HEADER_SIZE,
};
pub use reader::{FileAttr, PerfData, Records};
pub use spool::SPOOL_CHUNKS;
pub use writer::{RecordedEvent, WriteStats, Writer, FLUSH_BYTES, FLUSH_INTERVAL};

use perf_event_core::record::RecordError;
use std::fmt;

/// Why a perf.data file could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum PerfDataError {
    /// Reading the file failed.
    Io(std::io::Error),
    /// The magic is not `PERFILE2` in either byte order.
    NotPerfData,
    /// `what` at byte `at` runs past the end of the file or its section.
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Where.
        at: usize,
    },
    /// `what` at byte `at` has a value no file can have.
    Invalid {
        /// What was being read.
        what: &'static str,
        /// Where.
        at: usize,
    },
    /// An attr or a record the record parser refused.
    Record(RecordError),
    /// No event has this sample id (`None`: the file has no events).
    NoEvent {
        /// The id.
        id: Option<u64>,
    },
    /// Events with different sample_types and no PERF_SAMPLE_IDENTIFIER:
    /// a record's id cannot be found.
    MixedLayouts,
}

impl fmt::Display for PerfDataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PerfDataError::Io(e) => write!(f, "{e}"),
            PerfDataError::NotPerfData => write!(f, "not a perf.data file (bad magic)"),
            PerfDataError::Truncated { what, at } => write!(f, "{what} at byte {at} is cut short"),
            PerfDataError::Invalid { what, at } => write!(f, "{what} at byte {at} is invalid"),
            PerfDataError::Record(e) => write!(f, "{e}"),
            PerfDataError::NoEvent { id: Some(id) } => write!(f, "no event has sample id {id}"),
            PerfDataError::NoEvent { id: None } => write!(f, "the file has no events"),
            PerfDataError::MixedLayouts => write!(
                f,
                "events with different sample_type and no PERF_SAMPLE_IDENTIFIER"
            ),
        }
    }
}

impl std::error::Error for PerfDataError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PerfDataError::Io(e) => Some(e),
            PerfDataError::Record(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
