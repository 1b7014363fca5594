//! The one-word fields at the start of every PERF_RECORD_SAMPLE
//! (IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD) sit at
//! offsets that follow from `sample_type` alone. [`SamplePrefix`] computes
//! them once per layout, so a reader that needs only these fields (a
//! profiler's ip / tid / time, a merge's time and id) reads them straight
//! from the record without a full [`super::parse`].

use super::cursor::{u32_at, u64_at};
use super::layout::{SampleLayout, BEFORE, FIELDS, PREFIX};
use super::Header;
use crate::sys;

const ABSENT: u8 = u8::MAX;

/// Where the prefix fields of one layout's samples are, counted from the
/// start of the record (header included).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SamplePrefix {
    at: [u8; PREFIX],
    swap: bool,
}

impl SampleLayout {
    /// The offsets of this layout's prefix fields, computed once.
    pub const fn prefix(&self) -> SamplePrefix {
        let mut at = [ABSENT; PREFIX];
        let mut i = 0;
        while i < PREFIX {
            if self.sample_type & FIELDS[i].bits != 0 {
                at[i] =
                    (Header::SIZE + 8 * (self.sample_type & BEFORE[i]).count_ones() as usize) as u8;
            }
            i += 1;
        }
        SamplePrefix {
            at,
            swap: self.byte_order.is_foreign(),
        }
    }
}

impl SamplePrefix {
    #[inline(always)]
    fn u64(&self, i: usize, record: &[u8]) -> Option<u64> {
        let at = self.at[i];
        if at == ABSENT {
            return None;
        }
        u64_at(record, at as usize, self.swap)
    }

    /// Whether `record` (header first) is a PERF_RECORD_SAMPLE; the other
    /// accessors assume it is (on any other record they read whatever lies
    /// at those offsets, never out of bounds).
    #[inline]
    pub fn is_sample(&self, record: &[u8]) -> bool {
        u32_at(record, 0, self.swap) == Some(sys::PERF_RECORD_SAMPLE)
    }

    /// PERF_SAMPLE_IDENTIFIER, else PERF_SAMPLE_ID.
    #[inline]
    pub fn id(&self, record: &[u8]) -> Option<u64> {
        self.u64(0, record).or_else(|| self.u64(5, record))
    }
    /// PERF_SAMPLE_IP.
    #[inline]
    pub fn ip(&self, record: &[u8]) -> Option<u64> {
        self.u64(1, record)
    }
    /// PERF_SAMPLE_TID: (pid, tid).
    #[inline]
    pub fn pid_tid(&self, record: &[u8]) -> Option<(u32, u32)> {
        let at = self.at[2];
        if at == ABSENT {
            return None;
        }
        let at = at as usize;
        Some((
            u32_at(record, at, self.swap)?,
            u32_at(record, at + 4, self.swap)?,
        ))
    }
    /// PERF_SAMPLE_TIME.
    #[inline]
    pub fn time(&self, record: &[u8]) -> Option<u64> {
        self.u64(3, record)
    }
    /// PERF_SAMPLE_ADDR.
    #[inline]
    pub fn addr(&self, record: &[u8]) -> Option<u64> {
        self.u64(4, record)
    }
    /// PERF_SAMPLE_STREAM_ID.
    #[inline]
    pub fn stream_id(&self, record: &[u8]) -> Option<u64> {
        self.u64(6, record)
    }
    /// PERF_SAMPLE_CPU.
    #[inline]
    pub fn cpu(&self, record: &[u8]) -> Option<u32> {
        let at = self.at[7];
        if at == ABSENT {
            return None;
        }
        u32_at(record, at as usize, self.swap)
    }
    /// PERF_SAMPLE_PERIOD.
    #[inline]
    pub fn period(&self, record: &[u8]) -> Option<u64> {
        self.u64(8, record)
    }
}
