//! The file's frame: the magic, the file header with its sections, the
//! attr entries, perf's own record types and the feature numbers
//! (`tools/perf/util/header.h`, `tools/lib/perf/include/perf/event.h`).

use super::PerfDataError;
use perf_event_core::byte_order::ByteOrder;

/// `PERFILE2` read as a little-endian u64.
pub const MAGIC: u64 = 0x3245_4c49_4652_4550;
/// The size of a file-mode header: magic, size, attr_size, the attrs, data
/// and event_types sections, and the 256-bit feature bitmap.
pub const FILE_HEADER_SIZE: u64 = 104;
/// The size of a pipe-mode header: magic and size.
pub const PIPE_HEADER_SIZE: u64 = 16;
/// Strings in feature sections are padded to this (perf's `NAME_ALIGN`).
pub const NAME_ALIGN: usize = 64;

/// perf's own record types (synthesized by the tool, never by the kernel).
pub mod kind {
    /// PERF_RECORD_HEADER_ATTR (pipe mode): an attr and its ids.
    pub const HEADER_ATTR: u32 = 64;
    /// PERF_RECORD_HEADER_EVENT_TYPE (obsolete).
    pub const HEADER_EVENT_TYPE: u32 = 65;
    /// PERF_RECORD_HEADER_TRACING_DATA.
    pub const HEADER_TRACING_DATA: u32 = 66;
    /// PERF_RECORD_HEADER_BUILD_ID (pipe mode).
    pub const HEADER_BUILD_ID: u32 = 67;
    /// PERF_RECORD_FINISHED_ROUND: every record before the previous one of
    /// these may be sorted and processed.
    pub const FINISHED_ROUND: u32 = 68;
    /// PERF_RECORD_ID_INDEX.
    pub const ID_INDEX: u32 = 69;
    /// PERF_RECORD_AUXTRACE_INFO.
    pub const AUXTRACE_INFO: u32 = 70;
    /// PERF_RECORD_AUXTRACE: followed by `size` bytes of AUX data that are
    /// not counted in its header's size.
    pub const AUXTRACE: u32 = 71;
    /// PERF_RECORD_EVENT_UPDATE.
    pub const EVENT_UPDATE: u32 = 78;
    /// PERF_RECORD_TIME_CONV.
    pub const TIME_CONV: u32 = 79;
    /// PERF_RECORD_HEADER_FEATURE (pipe mode): one feature section.
    pub const HEADER_FEATURE: u32 = 80;
    /// PERF_RECORD_COMPRESSED.
    pub const COMPRESSED: u32 = 81;
    /// PERF_RECORD_FINISHED_INIT.
    pub const FINISHED_INIT: u32 = 82;
}

/// Feature section numbers (bits of the header's feature bitmap).
pub mod feature {
    /// HEADER_TRACING_DATA.
    pub const TRACING_DATA: u32 = 1;
    /// HEADER_BUILD_ID: build-id records of the objects the recording saw.
    pub const BUILD_ID: u32 = 2;
    /// HEADER_HOSTNAME.
    pub const HOSTNAME: u32 = 3;
    /// HEADER_OSRELEASE.
    pub const OSRELEASE: u32 = 4;
    /// HEADER_VERSION: the writing tool's version.
    pub const VERSION: u32 = 5;
    /// HEADER_ARCH.
    pub const ARCH: u32 = 6;
    /// HEADER_NRCPUS: CPUs available and online.
    pub const NRCPUS: u32 = 7;
    /// HEADER_CPUDESC.
    pub const CPUDESC: u32 = 8;
    /// HEADER_CPUID.
    pub const CPUID: u32 = 9;
    /// HEADER_TOTAL_MEM (kB).
    pub const TOTAL_MEM: u32 = 10;
    /// HEADER_CMDLINE.
    pub const CMDLINE: u32 = 11;
    /// HEADER_EVENT_DESC: each event's attr, name and ids.
    pub const EVENT_DESC: u32 = 12;
    /// HEADER_CPU_TOPOLOGY.
    pub const CPU_TOPOLOGY: u32 = 13;
    /// HEADER_SAMPLE_TIME: first and last sample time.
    pub const SAMPLE_TIME: u32 = 21;
    /// HEADER_CLOCKID: the resolution of the events' clock, in ns.
    pub const CLOCKID: u32 = 23;
    /// HEADER_CLOCK_DATA: the clock and a wall-clock reference.
    pub const CLOCK_DATA: u32 = 29;
    /// One past the last bit of the bitmap.
    pub const BITS: u32 = 256;
}

/// An `(offset, size)` pair of the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Section {
    /// From the start of the file.
    pub offset: u64,
    /// In bytes.
    pub size: u64,
}

impl Section {
    /// The byte range, if it lies inside `len` bytes.
    pub fn range(&self, len: usize) -> Option<core::ops::Range<usize>> {
        let start = usize::try_from(self.offset).ok()?;
        let end = start.checked_add(usize::try_from(self.size).ok()?)?;
        (end <= len).then_some(start..end)
    }
}

/// Bounds-checked integers of a byte slice in a byte order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bytes<'a> {
    /// The bytes.
    pub(crate) b: &'a [u8],
    /// Their order.
    pub(crate) order: ByteOrder,
}

impl<'a> Bytes<'a> {
    fn get<const N: usize>(&self, at: usize, what: &'static str) -> Result<[u8; N], PerfDataError> {
        at.checked_add(N)
            .and_then(|end| self.b.get(at..end))
            .map(|w| {
                let mut a = [0u8; N];
                a.copy_from_slice(w);
                if self.order.is_foreign() {
                    a.reverse();
                }
                a
            })
            .ok_or(PerfDataError::Truncated { what, at })
    }
    /// The u16 at `at`.
    pub(crate) fn u16(&self, at: usize, what: &'static str) -> Result<u16, PerfDataError> {
        self.get::<2>(at, what).map(u16::from_ne_bytes)
    }
    /// The u32 at `at`.
    pub(crate) fn u32(&self, at: usize, what: &'static str) -> Result<u32, PerfDataError> {
        self.get::<4>(at, what).map(u32::from_ne_bytes)
    }
    /// The u64 at `at`.
    pub(crate) fn u64(&self, at: usize, what: &'static str) -> Result<u64, PerfDataError> {
        self.get::<8>(at, what).map(u64::from_ne_bytes)
    }
    /// `n` bytes at `at`.
    pub(crate) fn slice(
        &self,
        at: usize,
        n: usize,
        what: &'static str,
    ) -> Result<&'a [u8], PerfDataError> {
        at.checked_add(n)
            .and_then(|end| self.b.get(at..end))
            .ok_or(PerfDataError::Truncated { what, at })
    }
    /// A section at `at`.
    pub(crate) fn section(&self, at: usize, what: &'static str) -> Result<Section, PerfDataError> {
        Ok(Section {
            offset: self.u64(at, what)?,
            size: self.u64(at + 8, what)?,
        })
    }
}

/// The byte order of a file from its first 8 bytes.
pub(crate) fn order_of(magic: &[u8]) -> Result<ByteOrder, PerfDataError> {
    let w: [u8; 8] =
        magic
            .get(..8)
            .and_then(|w| w.try_into().ok())
            .ok_or(PerfDataError::Truncated {
                what: "magic",
                at: 0,
            })?;
    if u64::from_le_bytes(w) == MAGIC {
        Ok(ByteOrder::Little)
    } else if u64::from_be_bytes(w) == MAGIC {
        Ok(ByteOrder::Big)
    } else {
        Err(PerfDataError::NotPerfData)
    }
}

/// The file header of file mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileHeader {
    /// Bytes per attr entry (the attr and its ids section).
    pub attr_size: u64,
    /// The attr entries.
    pub attrs: Section,
    /// The records.
    pub data: Section,
    /// The feature bitmap (bit n: feature n has a section).
    pub features: [u64; 4],
}

impl FileHeader {
    /// Whether feature `f` is present.
    pub fn has(&self, f: u32) -> bool {
        f < feature::BITS && self.features[(f / 64) as usize] >> (f % 64) & 1 == 1
    }

    /// Sets feature `f`.
    pub fn set(&mut self, f: u32) {
        if f < feature::BITS {
            self.features[(f / 64) as usize] |= 1 << (f % 64);
        }
    }

    /// The header in native order.
    pub fn to_bytes(&self) -> [u8; FILE_HEADER_SIZE as usize] {
        let mut out = [0u8; FILE_HEADER_SIZE as usize];
        let words = [
            MAGIC,
            FILE_HEADER_SIZE,
            self.attr_size,
            self.attrs.offset,
            self.attrs.size,
            self.data.offset,
            self.data.size,
            0,
            0,
            self.features[0],
            self.features[1],
            self.features[2],
            self.features[3],
        ];
        for (i, w) in words.iter().enumerate() {
            out[8 * i..8 * i + 8].copy_from_slice(&w.to_ne_bytes());
        }
        out
    }

    /// Reads a file-mode header.
    pub(crate) fn read(b: Bytes<'_>) -> Result<FileHeader, PerfDataError> {
        let size = b.u64(8, "header size")?;
        if size < FILE_HEADER_SIZE {
            return Err(PerfDataError::Invalid {
                what: "header size",
                at: 8,
            });
        }
        let mut features = [0u64; 4];
        for (i, f) in features.iter_mut().enumerate() {
            *f = b.u64(72 + 8 * i, "feature bitmap")?;
        }
        Ok(FileHeader {
            attr_size: b.u64(16, "attr_size")?,
            attrs: b.section(24, "attrs section")?,
            data: b.section(40, "data section")?,
            features,
        })
    }
}

/// Rounds `n` up to a multiple of `to` (a power of two).
pub(crate) const fn align(n: usize, to: usize) -> usize {
    (n + to - 1) & !(to - 1)
}
