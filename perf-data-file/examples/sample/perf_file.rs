//! perf.data in and out: `-o FILE` writes the recording as `perf record`
//! would (a file, or perf's pipe format on stdout with `-o -`), through
//! the library's `perf_data::Writer`: each pass over the rings is one
//! round. `-i FILE` reads a perf.data file (perf's or ours) with
//! `perf_data::PerfData` and hands its records, in time order, to the
//! same report.

use super::capture::Capture;
use perf_data_file::{Features, PerfData, RecordedEvent, Writer};
use perf_event_core::attr::Attr;
use perf_event_core::record::Record;
use perf_event_core::ring::RawRecord;
use perf_event_host::ringset::{Entry, RingSet};
use std::fs::File;
use std::io::{Read, Stdout};

/// Where the recording goes.
pub enum Output {
    File(Writer<File>),
    Pipe(Writer<Stdout>),
}

/// The events with the ids of their fds.
pub fn events(attrs: &[(String, Attr)], entries: &[Entry]) -> Vec<RecordedEvent> {
    attrs
        .iter()
        .enumerate()
        .map(|(i, (name, attr))| RecordedEvent {
            attr: *attr,
            name: name.clone(),
            ids: entries
                .iter()
                .filter(|e| e.event == i)
                .filter_map(|e| e.fd.id().ok())
                .collect(),
        })
        .collect()
}

impl Output {
    /// Starts the file (`-`: stdout in pipe mode).
    pub fn start(path: &str, events: Vec<RecordedEvent>) -> std::io::Result<Output> {
        let features = Features::from_system();
        Ok(if path == "-" {
            Output::Pipe(Writer::pipe(std::io::stdout(), events, features)?)
        } else {
            Output::File(Writer::create(File::create(path)?, events, features)?)
        })
    }

    /// The kernel's mapping and the processes running now, as perf
    /// record synthesizes them.
    pub fn synthesize(&mut self, pids: &[u32]) -> std::io::Result<()> {
        match self {
            Output::File(w) => {
                w.write_kernel_mmap()?;
                pids.iter().try_for_each(|&p| w.write_process(p))
            }
            Output::Pipe(w) => {
                w.write_kernel_mmap()?;
                pids.iter().try_for_each(|&p| w.write_process(p))
            }
        }
    }

    /// One pass over the rings, written as a round ([`Writer::write_drained`]);
    /// `each` sees every record too.
    pub fn write_drained(
        &mut self,
        set: &mut RingSet,
        each: impl FnMut(usize, Option<usize>, &RawRecord<'_>),
    ) -> std::io::Result<usize> {
        match self {
            Output::File(w) => w.write_drained(set, each),
            Output::Pipe(w) => w.write_drained(set, each),
        }
    }

    /// Ends the file as perf record does: each event's lost samples
    /// (PERF_RECORD_LOST_SAMPLES), then the features and the header.
    pub fn finish(self, set: &RingSet) -> std::io::Result<()> {
        match self {
            Output::File(mut w) => {
                w.write_lost_samples(set)?;
                w.finish().map(drop)
            }
            Output::Pipe(mut w) => {
                w.write_lost_samples(set)?;
                w.finish().map(drop)
            }
        }
    }
}

/// Reads `path` (`-`: stdin) and feeds its records to `cap` in time
/// order; returns the event names.
pub fn read(path: &str, cap: &mut Capture) -> Result<(Vec<String>, bool), String> {
    let bytes = if path == "-" {
        let mut b = Vec::new();
        std::io::stdin()
            .read_to_end(&mut b)
            .map_err(|e| format!("stdin: {e}"))?;
        b
    } else {
        std::fs::read(path).map_err(|e| format!("{path}: {e}"))?
    };
    let file = PerfData::from_bytes(bytes).map_err(|e| format!("{path}: {e}"))?;
    // (time, offset, event): records without a time keep the one before.
    let mut index = Vec::new();
    let mut last = 0u64;
    for rec in file.records() {
        let Ok((at, bytes)) = rec else { break };
        if bytes.len() < 8 || u32::from_ne_bytes(bytes[..4].try_into().unwrap()) >= 64 {
            continue;
        }
        let Ok(event) = file.event_of(bytes) else {
            continue;
        };
        let Ok(parsed) = file.parse(bytes) else {
            continue;
        };
        let time = match parsed.record {
            Record::Sample(s) => s.time(),
            _ => parsed.sample_id.and_then(|i| i.time),
        };
        last = time.unwrap_or(last);
        index.push((last, at, bytes.len(), event));
    }
    index.sort_by_key(|r| r.0);
    for (_, at, len, event) in index {
        if let Ok(parsed) = file.parse(&file.bytes()[at..at + len]) {
            cap.take_parsed(event, &parsed);
        }
    }
    let names = file
        .attrs
        .iter()
        .enumerate()
        .map(|(i, a)| a.name.clone().unwrap_or_else(|| format!("event{i}")))
        .collect();
    let chain = perf_event_core::sys::PERF_SAMPLE_CALLCHAIN as u64;
    let callchain = file.attrs.iter().any(|a| a.layout.sample_type & chain != 0);
    Ok((names, callchain))
}
