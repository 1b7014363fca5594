//! Overwrite mode (`write_backward`, read-only mapping, since Linux 4.6):
//! the kernel writes records backward and never waits for the reader, so a
//! consistent view needs output paused (PERF_EVENT_IOC_PAUSE_OUTPUT) while
//! it is copied. Walking forward from `data_head` then gives the newest
//! record first.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::{RingBuffer, RingError};
use crate::fd::EventFd;
use crate::record::Header;

/// A copy of an overwrite-mode ring, newest record first.
#[derive(Clone, Copy, Debug)]
pub struct OverwriteSnapshot<'b> {
    bytes: &'b [u8],
}

impl RingBuffer {
    /// Pauses `fd`'s output, copies the ring (as much as `buf` holds,
    /// newest first), and resumes output. `fd` must be the event this ring
    /// was mapped from (an overwrite-mode mapping).
    pub fn snapshot<'b>(
        &self,
        fd: &EventFd,
        buf: &'b mut [u8],
    ) -> Result<OverwriteSnapshot<'b>, RingError> {
        fd.pause_output(true).map_err(RingError::Pause)?;
        let head = self.head();
        let size = self.data_size;
        let n = size.min(buf.len());
        let at = (head & (size as u64 - 1)) as usize;
        // SAFETY: output is paused, so the kernel writes nothing into the
        // data area until it is resumed below.
        let data = unsafe { self.data() };
        let first = n.min(size - at);
        buf[..first].copy_from_slice(&data[at..at + first]);
        buf[first..n].copy_from_slice(&data[..n - first]);
        let resumed = fd.pause_output(false);
        resumed.map_err(RingError::Pause)?;
        Ok(OverwriteSnapshot { bytes: &buf[..n] })
    }
}

impl<'b> OverwriteSnapshot<'b> {
    /// The copied bytes.
    pub fn bytes(&self) -> &'b [u8] {
        self.bytes
    }

    /// Whole records, newest first. The walk stops at the first header
    /// that is zero (never written), impossible, or cut off by the copy.
    pub fn records(&self) -> impl Iterator<Item = &'b [u8]> + 'b {
        let bytes = self.bytes;
        let mut pos = 0usize;
        core::iter::from_fn(move || {
            let h = bytes.get(pos..pos + 8)?;
            let header = Header::from_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]]);
            let size = header.size as usize;
            if size < Header::SIZE || size % 8 != 0 {
                return None;
            }
            let record = bytes.get(pos..pos + size)?;
            pos += size;
            Some(record)
        })
    }
}
