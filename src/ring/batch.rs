//! One pass over the records available in a ring buffer.

use super::{RingBuffer, RingError};
use crate::record::{self, Header, Parsed, RecordError, SampleLayout};
use core::fmt;

/// The records between `data_tail` and the `data_head` read when the batch
/// began. Records borrow the batch, so each must be dropped before the next
/// is taken; `data_tail` moves when the batch is dropped.
pub struct Batch<'r> {
    ring: &'r RingBuffer,
    head: u64,
    pos: u64,
    pending_error: Option<RingError>,
}

impl fmt::Debug for Batch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batch")
            .field("head", &self.head)
            .field("pos", &self.pos)
            .finish()
    }
}

/// One record in the ring: its bytes (header included), in one slice, or
/// two when it wraps around the end of the data area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawRecord<'b> {
    /// The header.
    pub header: Header,
    first: &'b [u8],
    second: &'b [u8],
}

/// Why a record could not be delivered parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseRecordError {
    /// The scratch buffer for a wrapped record is too small.
    Ring(RingError),
    /// The record's bytes are malformed.
    Record(RecordError),
}

impl fmt::Display for ParseRecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseRecordError::Ring(e) => e.fmt(f),
            ParseRecordError::Record(e) => e.fmt(f),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ParseRecordError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ParseRecordError::Ring(e) => Some(e),
            ParseRecordError::Record(e) => Some(e),
        }
    }
}

impl<'b> RawRecord<'b> {
    /// The record as one slice, when it does not wrap.
    pub fn contiguous(&self) -> Option<&'b [u8]> {
        self.second.is_empty().then_some(self.first)
    }

    /// The two parts (the second is empty unless the record wraps).
    pub fn parts(&self) -> (&'b [u8], &'b [u8]) {
        (self.first, self.second)
    }

    /// Whether the record straddles the end of the data area.
    pub fn wraps(&self) -> bool {
        !self.second.is_empty()
    }

    /// Copies the whole record into `buf` and returns it.
    pub fn copy_into<'c>(&self, buf: &'c mut [u8]) -> Result<&'c [u8], RingError> {
        let (n, got) = (self.first.len() + self.second.len(), buf.len());
        let out = buf
            .get_mut(..n)
            .ok_or(RingError::BufferTooSmall { needed: n, got })?;
        out[..self.first.len()].copy_from_slice(self.first);
        out[self.first.len()..].copy_from_slice(self.second);
        Ok(out)
    }

    /// Parses the record in place, or in `scratch` when it wraps (a record
    /// is at most 65535 bytes).
    pub fn parse<'c>(
        &'c self,
        layout: &SampleLayout,
        scratch: &'c mut [u8],
    ) -> Result<Parsed<'c>, ParseRecordError> {
        let bytes = match self.contiguous() {
            Some(b) => b,
            None => self.copy_into(scratch).map_err(ParseRecordError::Ring)?,
        };
        record::parse(layout, bytes).map_err(ParseRecordError::Record)
    }
}

impl<'r> Batch<'r> {
    pub(super) fn new(ring: &'r mut RingBuffer) -> Batch<'r> {
        let ring: &'r RingBuffer = ring;
        let head = ring.head();
        let tail = ring.tail();
        let mut batch = Batch {
            ring,
            head,
            pos: tail,
            pending_error: None,
        };
        // Positions are the kernel's `unsigned long`: wrap in usize.
        let used = (head as usize).wrapping_sub(tail as usize) as u64;
        if used > ring.data_size as u64 {
            batch.pending_error = Some(RingError::Overrun {
                head,
                tail,
                skipped: used,
            });
            batch.pos = head;
        }
        batch
    }

    /// Bytes not yet taken in this batch.
    pub fn remaining(&self) -> u64 {
        (self.head as usize).wrapping_sub(self.pos as usize) as u64
    }

    /// The next record, or an error saying what was skipped and why.
    #[allow(clippy::should_implement_trait)] // a lending iterator: records borrow the batch
    pub fn next(&mut self) -> Option<Result<RawRecord<'_>, RingError>> {
        if let Some(e) = self.pending_error.take() {
            return Some(Err(e));
        }
        let left = self.remaining();
        if left == 0 {
            return None;
        }
        let size = self.ring.data_size;
        let mask = size as u64 - 1;
        let at = (self.pos & mask) as usize;
        // SAFETY: [tail, head) is not written by the kernel until data_tail
        // moves, which happens only when this batch (and every record it
        // lent) is gone; head was loaded with Acquire.
        let data = unsafe { self.ring.data() };
        let header_bytes = data.get(at..at + 8);
        let header = header_bytes
            .map(|h| Header::from_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]]));
        let bad = match header {
            None => Some(0),
            Some(h)
                if (h.size as usize) < Header::SIZE
                    || h.size % 8 != 0
                    || u64::from(h.size) > left =>
            {
                Some(h.size)
            }
            Some(_) => None,
        };
        if left < 8 || bad.is_some() {
            let e = RingError::Corrupt {
                at: self.pos,
                size: bad.unwrap_or(0),
                skipped: left,
            };
            self.pos = self.head;
            return Some(Err(e));
        }
        let header = header?;
        let len = header.size as usize;
        let first_len = len.min(size - at);
        let first = &data[at..at + first_len];
        let second = &data[..len - first_len];
        self.pos = (self.pos as usize).wrapping_add(len) as u64;
        Some(Ok(RawRecord {
            header,
            first,
            second,
        }))
    }

    /// Ends the batch, freeing what it read for the kernel.
    pub fn finish(self) {}
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        self.ring.set_tail(self.pos);
    }
}
