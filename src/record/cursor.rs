//! A bounds-checked reader over one record's bytes: every read names the
//! field it wanted when the record is too short. Integers are read in the
//! record's byte order ([`ByteOrder`]); for the native order the swap
//! compiles away to a predictable not-taken branch.

use super::RecordError;
pub(crate) use crate::byte_order::ByteOrder;

/// A u64 at `at` in `b`, swapped when `swap`.
#[inline(always)]
pub(crate) fn u64_at(b: &[u8], at: usize, swap: bool) -> Option<u64> {
    let w = b.get(at..at.checked_add(8)?)?;
    let v = u64::from_ne_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
    Some(if swap { v.swap_bytes() } else { v })
}

/// A u32 at `at` in `b`, swapped when `swap`.
#[inline(always)]
pub(crate) fn u32_at(b: &[u8], at: usize, swap: bool) -> Option<u32> {
    let w = b.get(at..at.checked_add(4)?)?;
    let v = u32::from_ne_bytes([w[0], w[1], w[2], w[3]]);
    Some(if swap { v.swap_bytes() } else { v })
}

/// Reads integers and byte runs from a record body; `SWAP`: the record is
/// in the other byte order (a constant, so the native parser has no swap
/// code at all).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cursor<'a, const SWAP: bool> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a, const SWAP: bool> Cursor<'a, SWAP> {
    #[inline]
    pub(crate) const fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    #[inline]
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    #[inline]
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    #[inline]
    fn short(&self, field: &'static str) -> RecordError {
        RecordError::Truncated {
            field,
            at: self.pos,
            len: self.buf.len(),
        }
    }

    #[inline]
    pub(crate) fn bytes(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], RecordError> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.buf.len());
        let end = end.ok_or(self.short(field))?;
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    #[inline]
    pub(crate) fn u64(&mut self, field: &'static str) -> Result<u64, RecordError> {
        let v = u64_at(self.buf, self.pos, SWAP).ok_or(self.short(field))?;
        self.pos += 8;
        Ok(v)
    }

    #[inline]
    pub(crate) fn u32(&mut self, field: &'static str) -> Result<u32, RecordError> {
        let v = u32_at(self.buf, self.pos, SWAP).ok_or(self.short(field))?;
        self.pos += 4;
        Ok(v)
    }

    #[inline]
    pub(crate) fn u16(&mut self, field: &'static str) -> Result<u16, RecordError> {
        let b = self.bytes(2, field)?;
        let v = u16::from_ne_bytes([b[0], b[1]]);
        Ok(if SWAP { v.swap_bytes() } else { v })
    }

    /// `n` u64 values (`8 * n` bytes), with overflow checked.
    #[inline]
    pub(crate) fn u64s(&mut self, n: u64, field: &'static str) -> Result<U64s<'a>, RecordError> {
        let len = usize::try_from(n).ok().and_then(|n| n.checked_mul(8));
        let len = len.ok_or(self.short(field))?;
        Ok(U64s::new(self.bytes(len, field)?, SWAP))
    }

    /// The rest of the body.
    #[inline]
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        let out = &self.buf[self.pos..];
        self.pos = self.buf.len();
        out
    }

    /// Splits off the last `n` bytes (the sample_id trailer) for a later read.
    #[inline]
    pub(crate) fn split_tail(
        &mut self,
        n: usize,
        field: &'static str,
    ) -> Result<Cursor<'a, SWAP>, RecordError> {
        if n > self.remaining() {
            return Err(self.short(field));
        }
        let cut = self.buf.len() - n;
        let tail = Cursor::new(&self.buf[cut..]);
        self.buf = &self.buf[..cut];
        Ok(tail)
    }
}

/// A run of u64 values inside a record, read without copying the record,
/// without alignment requirements, in the record's byte order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct U64s<'a> {
    bytes: &'a [u8],
    swap: bool,
}

impl<'a> U64s<'a> {
    #[inline]
    pub(crate) const fn new(bytes: &'a [u8], swap: bool) -> Self {
        U64s { bytes, swap }
    }

    /// Number of values.
    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len() / 8
    }

    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bytes.len() < 8
    }

    /// The `i`-th value.
    #[inline]
    pub fn get(&self, i: usize) -> Option<u64> {
        u64_at(self.bytes, i.checked_mul(8)?, self.swap)
    }

    /// The values in order.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = u64> + 'a {
        let swap = self.swap;
        self.bytes.chunks_exact(8).map(move |b| {
            let v = u64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
            if swap {
                v.swap_bytes()
            } else {
                v
            }
        })
    }

    /// The values `start..end` (clamped to the run).
    #[inline]
    pub fn slice(&self, start: usize, end: usize) -> U64s<'a> {
        let n = self.len();
        let (s, e) = (start.min(n), end.min(n).max(start.min(n)));
        U64s::new(&self.bytes[8 * s..8 * e], self.swap)
    }

    /// The raw bytes, in the record's byte order.
    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The byte order the values are read in.
    pub fn byte_order(&self) -> ByteOrder {
        if self.swap == ByteOrder::Little.is_foreign() {
            ByteOrder::Little
        } else {
            ByteOrder::Big
        }
    }
}
