//! A bounds-checked reader over one record's bytes: every read names the
//! field it wanted when the record is too short.

use super::RecordError;

/// Reads native-endian integers and byte runs from a record body.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
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
    pub(crate) fn bytes(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], RecordError> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.buf.len());
        let end = end.ok_or(RecordError::Truncated {
            field,
            at: self.pos,
            len: self.buf.len(),
        })?;
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    #[inline]
    pub(crate) fn u64(&mut self, field: &'static str) -> Result<u64, RecordError> {
        let b = self.bytes(8, field)?;
        Ok(u64::from_ne_bytes([
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
        ]))
    }

    #[inline]
    pub(crate) fn u32(&mut self, field: &'static str) -> Result<u32, RecordError> {
        let b = self.bytes(4, field)?;
        Ok(u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
    }

    #[inline]
    pub(crate) fn u16(&mut self, field: &'static str) -> Result<u16, RecordError> {
        let b = self.bytes(2, field)?;
        Ok(u16::from_ne_bytes([b[0], b[1]]))
    }

    /// `n` u64 values as raw bytes (`8 * n`), with overflow checked.
    #[inline]
    pub(crate) fn u64s(&mut self, n: u64, field: &'static str) -> Result<U64s<'a>, RecordError> {
        let len = usize::try_from(n).ok().and_then(|n| n.checked_mul(8));
        let len = len.ok_or(RecordError::Truncated {
            field,
            at: self.pos,
            len: self.buf.len(),
        })?;
        Ok(U64s(self.bytes(len, field)?))
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
    ) -> Result<Cursor<'a>, RecordError> {
        if n > self.remaining() {
            return Err(RecordError::Truncated {
                field,
                at: self.pos,
                len: self.buf.len(),
            });
        }
        let cut = self.buf.len() - n;
        let tail = Cursor {
            buf: &self.buf[cut..],
            pos: 0,
        };
        self.buf = &self.buf[..cut];
        Ok(tail)
    }
}

/// A run of native-endian u64 values inside a record, read without copying
/// the record and without alignment requirements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct U64s<'a>(&'a [u8]);

impl<'a> U64s<'a> {
    #[inline]
    pub(crate) const fn new(bytes: &'a [u8]) -> Self {
        U64s(bytes)
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.0.len() / 8
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `i`-th value.
    pub fn get(&self, i: usize) -> Option<u64> {
        let b = self.0.get(8 * i..8 * i + 8)?;
        Some(u64::from_ne_bytes([
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
        ]))
    }

    /// The values in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + 'a {
        self.0
            .chunks_exact(8)
            .map(|b| u64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    }

    /// The raw bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.0
    }
}
