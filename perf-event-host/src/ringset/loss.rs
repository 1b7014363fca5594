//! Loss accounting: what the kernel dropped and what the reader skipped.

use perf_event_core::record::Header;
use perf_event_core::ring::{RawRecord, RingError};
use perf_event_core::sys;

/// What was lost in one ring, or for one event. Nothing is dropped
/// silently: every way a record can go missing has a counter.
///
/// Per event, PERF_RECORD_LOST is exact for rings written by one event.
/// The kernel keeps one lost counter per ring, so in a ring shared by
/// several events (PERF_EVENT_IOC_SET_OUTPUT) a LOST record counts the
/// ring's losses and names the event that wrote next: there only the
/// ring's figure (and the sum over its events) is exact.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Losses {
    /// Records the kernel could not write because the ring was full, as
    /// PERF_RECORD_LOST reports them (its `lost` field, summed).
    pub lost: u64,
    /// PERF_RECORD_LOST records seen.
    pub lost_records: u64,
    /// Samples the kernel dropped for other reasons (PERF_RECORD_LOST_SAMPLES,
    /// since Linux 4.2: e.g. a sample too large, BPF or AUX failures).
    pub lost_samples: u64,
    /// Overruns: `data_head - data_tail` exceeded the ring (the writer passed
    /// the reader), so the positions could not be trusted and the bytes
    /// up to `data_head` were skipped.
    pub overruns: u64,
    /// Corrupt headers (size < 8, not 8-aligned, past `data_head`).
    pub corrupt: u64,
    /// Bytes skipped because of overruns and corrupt headers.
    pub bytes_skipped: u64,
}

impl Losses {
    /// Records dropped by the kernel (`lost + lost_samples`).
    pub fn dropped(&self) -> u64 {
        self.lost + self.lost_samples
    }

    /// Counts a ring error.
    pub(crate) fn skipped(&mut self, e: &RingError) {
        match *e {
            RingError::Overrun { skipped, .. } => {
                self.overruns += 1;
                self.bytes_skipped += skipped;
            }
            RingError::Corrupt { skipped, .. } => {
                self.corrupt += 1;
                self.bytes_skipped += skipped;
            }
            _ => {}
        }
    }

    /// Adds `other`.
    pub fn add(&mut self, other: &Losses) {
        self.lost += other.lost;
        self.lost_records += other.lost_records;
        self.lost_samples += other.lost_samples;
        self.overruns += other.overruns;
        self.corrupt += other.corrupt;
        self.bytes_skipped += other.bytes_skipped;
    }
}

/// What a loss record says: PERF_RECORD_LOST's (id, lost) or
/// PERF_RECORD_LOST_SAMPLES' lost count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LossRecord {
    Lost { id: u64, lost: u64 },
    LostSamples { lost: u64 },
}

impl LossRecord {
    /// Reads the fixed fields of a loss record (they sit right after the
    /// header, before any trailer, so no layout is needed).
    #[inline]
    pub(crate) fn of(rec: &RawRecord<'_>) -> Option<LossRecord> {
        let kind = rec.header.kind;
        if kind != sys::PERF_RECORD_LOST && kind != sys::PERF_RECORD_LOST_SAMPLES {
            return None;
        }
        let mut b = [0u8; 24];
        let (a, c) = rec.parts();
        let n = rec.len().min(24);
        for (i, o) in b[..n].iter_mut().enumerate() {
            *o = if i < a.len() { a[i] } else { c[i - a.len()] };
        }
        let u = |o: usize| u64::from_ne_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]));
        if kind == sys::PERF_RECORD_LOST && n >= Header::SIZE + 16 {
            Some(LossRecord::Lost {
                id: u(8),
                lost: u(16),
            })
        } else if kind == sys::PERF_RECORD_LOST_SAMPLES && n >= Header::SIZE + 8 {
            Some(LossRecord::LostSamples { lost: u(8) })
        } else {
            None
        }
    }
}
