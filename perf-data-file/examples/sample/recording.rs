//! The recording: while the events run, the records are only copied out of
//! the rings into one buffer, as perf record copies them into perf.data
//! (no parsing, no ordering, no symbol lookup), so with `-a` the tool's own
//! share of the samples is its copying alone. After the recording they are
//! put in time order (PERF_SAMPLE_TIME, or the sample_id trailer's time)
//! and handed out one by one.

use perf_event_core::ring::RawRecord;
use perf_event_host::ringset::RingSet;

/// The records as the kernel wrote them, back to back.
pub struct Recording {
    bytes: Vec<u8>,
}

impl Recording {
    /// A buffer with `reserve` bytes already touched, so that copying
    /// into it costs no page fault until it is full (taken before the
    /// events are enabled).
    pub fn with_reserve(reserve: usize) -> Recording {
        let mut bytes = vec![1u8; reserve];
        bytes.clear();
        Recording { bytes }
    }

    /// Copies every record the rings hold now and frees the rings.
    pub fn drain(&mut self, set: &mut RingSet) {
        set.drain(|_, _, rec| self.keep(rec));
    }

    /// Keeps one record a ring lends.
    pub fn keep(&mut self, rec: &RawRecord<'_>) {
        let (a, b) = rec.parts();
        self.bytes.extend_from_slice(a);
        self.bytes.extend_from_slice(b);
    }

    /// The number of bytes recorded.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Calls `each(event, record)` for every record in time order (records
    /// without a time keep the time of the one before them).
    pub fn in_time_order(mut self, set: &RingSet, mut each: impl FnMut(usize, &RawRecord<'_>)) {
        let end = self.bytes.len() as u64;
        // RawRecord::at reads a ring: a power-of-two area.
        self.bytes
            .resize(self.bytes.len().next_power_of_two().max(8), 0);
        let data = &self.bytes[..];
        let mut index: Vec<(u64, u64, usize)> = Vec::new();
        let (mut pos, mut last_time) = (0u64, 0u64);
        while pos < end {
            let Ok(rec) = RawRecord::at(data, pos, end) else {
                break;
            };
            let (key, event) = set.identify().peek(&rec, None);
            last_time = key.time.unwrap_or(last_time);
            if let Some(event) = event {
                index.push((last_time, pos, event));
            }
            pos += rec.len() as u64;
        }
        // Stable: records of one time keep their ring order.
        index.sort_by_key(|r| r.0);
        for (_, pos, event) in index {
            if let Ok(rec) = RawRecord::at(data, pos, end) {
                each(event, &rec);
            }
        }
    }
}
