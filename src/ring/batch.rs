//! One pass over the records available in a ring buffer.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::{RingBuffer, RingError};
use crate::record::{self, Header, Parsed, RecordError, SampleLayout};
use core::fmt;
use core::ops::ControlFlow;

/// The records between `data_tail` and the `data_head` read when the batch
/// began. Records borrow the batch, so each must be dropped before the next
/// is taken; `data_tail` moves when the batch is dropped.
/// A [`Peek`] from `data_tail` that commits where it stopped when dropped.
pub struct Batch<'r> {
    walk: Peek<'r>,
}

impl fmt::Debug for Batch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batch")
            .field("head", &self.walk.head)
            .field("pos", &self.walk.pos)
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
#[non_exhaustive]
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
    /// The record at position `pos` of a data area `data` (2^n bytes) whose
    /// readable part ends at `head`: the header is checked (size >= 8, a
    /// multiple of 8, not past `head`) and the bytes are lent in one or two
    /// parts. Pure: the ring readers and the fuzz targets share it.
    ///
    /// On a bad header the error says how many bytes up to `head` must be
    /// skipped ([`RingError::Corrupt`]).
    #[inline]
    pub fn at(data: &'b [u8], pos: u64, head: u64) -> Result<RawRecord<'b>, RingError> {
        let left = (head as usize).wrapping_sub(pos as usize) as u64;
        let size = data.len();
        let corrupt = |size: u16| RingError::Corrupt {
            at: pos,
            size,
            skipped: left,
        };
        if size == 0 || !size.is_power_of_two() || left > size as u64 || left < 8 {
            return Err(corrupt(0));
        }
        let at = (pos as usize) & (size - 1);
        let header = match data.get(at..at + Header::SIZE) {
            Some(h) => Header::from_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]]),
            // The kernel keeps records 8-aligned, so a header never wraps.
            None => return Err(corrupt(0)),
        };
        let len = header.size as usize;
        if len < Header::SIZE || len % 8 != 0 || len as u64 > left {
            return Err(corrupt(header.size));
        }
        let first_len = len.min(size - at);
        Ok(RawRecord {
            header,
            first: &data[at..at + first_len],
            second: &data[..len - first_len],
        })
    }

    /// The record of `len` bytes at `pos` of a data area `data`, one a
    /// walk already delivered ([`RawRecord::at`] checked its header then):
    /// only that its header still says `len` is checked. `None` if not, or
    /// if the bytes fall outside `data` (never a panic).
    #[inline]
    pub(crate) fn known(data: &'b [u8], pos: u64, len: usize) -> Option<RawRecord<'b>> {
        let at = (pos as usize) & data.len().wrapping_sub(1);
        let rest = data.get(at..)?;
        let h = rest.get(..Header::SIZE)?;
        let header = Header::from_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]]);
        if header.size as usize != len {
            return None;
        }
        // In one part, or wrapping the ring's end.
        let (first, second) = match rest.get(..len) {
            Some(first) => (first, &data[..0]),
            None => (rest, data.get(..len - rest.len())?),
        };
        Some(RawRecord {
            header,
            first,
            second,
        })
    }

    /// Bytes of the record, header included.
    #[inline]
    pub fn len(&self) -> usize {
        self.first.len() + self.second.len()
    }

    /// Never true: a record holds at least its header.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The record as one slice, when it does not wrap.
    #[inline]
    pub fn contiguous(&self) -> Option<&'b [u8]> {
        self.second.is_empty().then_some(self.first)
    }

    /// The two parts (the second is empty unless the record wraps).
    #[inline]
    pub fn parts(&self) -> (&'b [u8], &'b [u8]) {
        (self.first, self.second)
    }

    /// Whether the record straddles the end of the data area.
    #[inline]
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

    /// The record as one slice: in place, or copied into `scratch` when it
    /// wraps the ring's end (rare: `scratch` needs the record's size, at
    /// most 65535 bytes; the size of the samples read is enough).
    /// [`SamplePrefix`](crate::record::SamplePrefix) reads a sample's
    /// one-word fields from it (the fast path); [`RawRecord::parse`] the
    /// whole record.
    #[inline(always)]
    pub fn bytes<'c>(&'c self, scratch: &'c mut [u8]) -> Result<&'c [u8], RingError> {
        match self.contiguous() {
            Some(b) => Ok(b),
            None => self.copy_into(scratch),
        }
    }

    /// Parses the record in place, or in `scratch` when it wraps (see
    /// [`RawRecord::bytes`]).
    #[inline]
    pub fn parse<'c>(
        &'c self,
        layout: &SampleLayout,
        scratch: &'c mut [u8],
    ) -> Result<Parsed<'c>, ParseRecordError> {
        let bytes = self.bytes(scratch).map_err(ParseRecordError::Ring)?;
        record::parse(layout, bytes).map_err(ParseRecordError::Record)
    }
}

impl<'r> Batch<'r> {
    #[inline]
    pub(super) fn new(ring: &'r mut RingBuffer) -> Batch<'r> {
        let ring: &'r RingBuffer = ring;
        Batch {
            walk: Peek::new(ring, ring.tail()),
        }
    }

    /// Bytes not yet taken in this batch.
    #[inline]
    pub fn remaining(&self) -> u64 {
        (self.walk.head as usize).wrapping_sub(self.walk.pos as usize) as u64
    }

    /// The next record, or an error saying what was skipped and why.
    #[allow(clippy::should_implement_trait)] // a lending iterator: records borrow the batch
    #[inline]
    pub fn next(&mut self) -> Option<Result<RawRecord<'_>, RingError>> {
        // The records are lent for the batch's borrow only: data_tail moves
        // when the batch is dropped, after every record it lent is gone.
        self.walk.next().map(|r| r.map(|(_, rec)| rec))
    }

    /// Ends the batch, freeing what it read for the kernel.
    pub fn finish(self) {}
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        self.walk.ring.set_tail(self.walk.pos);
    }
}

/// Records from a position up to the `data_head` read when the walk began,
/// lent for as long as the ring is borrowed; `data_tail` is not touched
/// (the caller commits with [`RingBuffer::commit`] once it is done). This is
/// what lets a reader hold records of several rings at once.
#[derive(Debug)]
pub struct Peek<'r> {
    ring: &'r RingBuffer,
    head: u64,
    pos: u64,
    pending_error: Option<RingError>,
}

impl<'r> Peek<'r> {
    #[inline]
    pub(super) fn new(ring: &'r RingBuffer, from: u64) -> Peek<'r> {
        let head = ring.head();
        let tail = ring.tail();
        let used = (head as usize).wrapping_sub(tail as usize) as u64;
        let ahead = (from as usize).wrapping_sub(tail as usize) as u64;
        let mut peek = Peek {
            ring,
            head,
            pos: from,
            pending_error: None,
        };
        if used > ring.data_size as u64 {
            // The writer passed the reader: nothing in the ring can be trusted.
            peek.pending_error = Some(RingError::Overrun {
                head,
                tail,
                skipped: used,
            });
            peek.pos = head;
        } else if ahead > used {
            // `from` is not inside [tail, head]: restart from the tail.
            peek.pending_error = Some(RingError::Corrupt {
                at: from,
                size: 0,
                skipped: 0,
            });
            peek.pos = tail;
        }
        peek
    }

    /// The `data_head` this walk stops at.
    #[inline]
    pub fn head(&self) -> u64 {
        self.head
    }

    /// Where the next record starts (the head once the walk is done).
    #[inline]
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// The bytes between two positions of the ring that this walk may lend
    /// (both within `[data_tail, data_head]`, `from` not after `to`), in
    /// one part, or two when they wrap around the end of the data area:
    /// several records at once, exactly as the kernel wrote them (what
    /// perf record copies to its file). `None` when a position is outside
    /// that range.
    pub fn span(&self, from: u64, to: u64) -> Option<(&'r [u8], &'r [u8])> {
        let tail = self.ring.tail() as usize;
        let used = (self.head as usize).wrapping_sub(tail);
        let start = (from as usize).wrapping_sub(tail);
        let end = (to as usize).wrapping_sub(tail);
        if used > self.ring.data_size || start > end || end > used {
            return None;
        }
        // SAFETY: as in `next`: [tail, head) stays unwritten while the ring
        // is borrowed by this walk, and the range checked above lies in it.
        let data = unsafe { self.ring.data() };
        let size = data.len();
        if !size.is_power_of_two() {
            return None;
        }
        let len = end - start;
        let at = (from as usize) & (size - 1);
        let first = len.min(size - at);
        Some((&data[at..at + first], &data[..len - first]))
    }

    /// The next record and its position, or an error saying what was
    /// skipped and why (the walk then continues from [`Peek::pos`]).
    #[allow(clippy::should_implement_trait)]
    #[inline]
    pub fn next(&mut self) -> Option<Result<(u64, RawRecord<'r>), RingError>> {
        let mut got = None;
        let end = self.each(|at, _, rec| {
            got = Some((at, rec));
            ControlFlow::Break(())
        });
        match end {
            Some(e) => Some(Err(e)),
            None => got.map(Ok),
        }
    }

    /// Walks the records from [`Peek::pos`] up to the head, handing `f`
    /// each record with its position and the position after it, until `f`
    /// breaks: the same walk as [`Peek::next`], its state kept in
    /// registers rather than returned record by record (the drain's inner
    /// loop). Returns the error that interrupted the walk, if one did; the
    /// walk then goes on from [`Peek::pos`] with the next call.
    #[inline(always)]
    pub fn each(
        &mut self,
        mut f: impl FnMut(u64, u64, RawRecord<'r>) -> ControlFlow<()>,
    ) -> Option<RingError> {
        if let Some(e) = self.pending_error.take() {
            return Some(e);
        }
        // SAFETY: [tail, head) is not written by the kernel until data_tail
        // moves, which needs `&mut RingBuffer` (commit / records), impossible
        // while this walk and the records it lends borrow the ring.
        let data = unsafe { self.ring.data() };
        let (head, mut pos) = (self.head, self.pos);
        while pos != head {
            match RawRecord::at(data, pos, head) {
                Ok(rec) => {
                    let at = pos;
                    pos = (at as usize).wrapping_add(rec.header.size as usize) as u64;
                    // The walk is bound by the latency of each header load
                    // (the next position depends on it): ask for the line
                    // 512 bytes ahead now (measured: 4-ring drain 9.4-10.0
                    // -> 8.6 ns per record; BENCHMARKS.md section 7).
                    #[cfg(all(target_arch = "x86_64", not(miri)))]
                    {
                        let ahead = (pos as usize).wrapping_add(512) & (data.len() - 1);
                        // SAFETY: a prefetch hint inside the mapped data area; it never faults.
                        unsafe {
                            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                                data.as_ptr().add(ahead).cast(),
                            )
                        };
                    }
                    if f(at, pos, rec).is_break() {
                        self.pos = pos;
                        return None;
                    }
                }
                Err(e) => {
                    self.pos = head;
                    return Some(e);
                }
            }
        }
        self.pos = pos;
        None
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;

    /// A 64-byte ring holding a 24-byte record at `at` (its bytes 0..24).
    fn ring_with_record_at(at: usize) -> [u8; 64] {
        let mut data = [0u8; 64];
        let mut rec = [0u8; 24];
        rec[..4].copy_from_slice(&9u32.to_ne_bytes());
        rec[6..8].copy_from_slice(&24u16.to_ne_bytes());
        for (i, b) in rec.iter_mut().enumerate().skip(8) {
            *b = i as u8;
        }
        for (i, b) in rec.iter().enumerate() {
            data[(at + i) % 64] = *b;
        }
        data
    }

    #[test]
    fn a_known_record_is_the_walked_one_in_one_part_or_across_the_end() {
        for at in [0usize, 16, 40, 48, 56] {
            let data = ring_with_record_at(at);
            // Position in a later lap of the ring, as the kernel counts it.
            let pos = (3 * 64 + at) as u64;
            let walked = RawRecord::at(&data, pos, pos + 24).unwrap();
            let known = RawRecord::known(&data, pos, 24).unwrap();
            assert_eq!(known.parts(), walked.parts(), "at {at}");
            assert_eq!(known.header, walked.header);
            assert_eq!(known.wraps(), at > 40);
            // The header must still say the length the walk checked.
            assert!(RawRecord::known(&data, pos, 16).is_none());
            assert!(RawRecord::known(&data, pos, 32).is_none());
        }
        // A length past the whole ring: refused, no panic.
        let data = ring_with_record_at(0);
        assert!(RawRecord::known(&data, 0, 1000).is_none());
        assert!(RawRecord::known(&[], 0, 24).is_none());
    }
}
