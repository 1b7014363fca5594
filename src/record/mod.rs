//! Every `PERF_RECORD_*` type of the 7.2 ABI, parsed from one contiguous
//! record without copying and without panicking on malformed input
//! (perf_event_open(2), "MMAP layout"; layouts in `linux/perf_event.h`).
//!
//! - [`parse`] finds every field a record's layout ([`SampleLayout`], from
//!   the event's attr) says is present; an `Ok` sample returns each of them
//!   from its accessor, otherwise the error names the field and its offset.
//! - [`SamplePrefix`]: the one-word fields at the start of a sample (ip,
//!   pid/tid, time, id, cpu, ...) at offsets computed once per layout, read
//!   without a full parse.
//! - Decoders for what the kernel packs into words: [`BranchEntry`] /
//!   [`BranchFlags`] (branch stacks, with hw_idx and branch counters),
//!   [`DataSrc`], [`Weight`], [`Txn`], [`Callchain`] segments at the
//!   PERF_CONTEXT_* markers, registers by name ([`RegNames`]) for every
//!   architecture with a perf register ABI. Tracepoint payloads are decoded
//!   by name with `sysfs::TraceFormat` (std).
//! - Either byte order: records of a perf.data file or of another machine
//!   are parsed with [`SampleLayout::with_byte_order`] (the attr itself with
//!   [`attr_from_bytes`]); the native parser carries no swap code.

mod attr_bytes;
mod branch;
mod callchain;
mod cursor;
mod layout;
mod mem;
mod prefix;
mod regs;
mod sample;

use crate::byte_order::ByteOrder;
pub use attr_bytes::attr_from_bytes;
pub use branch::{BranchEntry, BranchFlags};
pub use callchain::{Callchain, Context, Segments};
pub use cursor::U64s;
pub use layout::{SampleId, SampleLayout};
pub use mem::{DataSrc, Txn, Weight};
pub use prefix::SamplePrefix;
pub use regs::RegNames;
pub use sample::{BranchStack, Regs, Sample};

use crate::sys;
use core::fmt;
use cursor::Cursor;

/// `struct perf_event_header`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// `PERF_RECORD_*`.
    pub kind: u32,
    /// `PERF_RECORD_MISC_*` bits.
    pub misc: u16,
    /// Size of the whole record, header included.
    pub size: u16,
}

impl Header {
    /// Size of the header.
    pub const SIZE: usize = 8;

    /// Reads a header from its 8 bytes (native byte order).
    #[inline]
    pub const fn from_bytes(b: [u8; 8]) -> Header {
        Header {
            kind: u32::from_ne_bytes([b[0], b[1], b[2], b[3]]),
            misc: u16::from_ne_bytes([b[4], b[5]]),
            size: u16::from_ne_bytes([b[6], b[7]]),
        }
    }

    /// Reads a header from its 8 bytes in `order`.
    #[inline]
    pub const fn from_bytes_in(b: [u8; 8], order: ByteOrder) -> Header {
        let h = Header::from_bytes(b);
        if order.is_foreign() {
            Header {
                kind: h.kind.swap_bytes(),
                misc: h.misc.swap_bytes(),
                size: h.size.swap_bytes(),
            }
        } else {
            h
        }
    }

    /// The CPU mode of the record (`misc & PERF_RECORD_MISC_CPUMODE_MASK`).
    pub const fn cpumode(&self) -> u16 {
        self.misc & sys::PERF_RECORD_MISC_CPUMODE_MASK as u16
    }
}

/// Why a record could not be parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordError {
    /// The record ends before a field it must hold.
    Truncated {
        /// The field being read.
        field: &'static str,
        /// Offset in the body.
        at: usize,
        /// Body length.
        len: usize,
    },
    /// A field whose value contradicts the layout (e.g. a group read with
    /// `nr == 0`).
    Invalid {
        /// The field.
        field: &'static str,
        /// Offset in the body.
        at: usize,
        /// What is wrong with it.
        why: &'static str,
    },
    /// `header.size` is below the header's own 8 bytes.
    SizeBelowHeader {
        /// The size found.
        size: u16,
    },
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::Truncated { field, at, len } => {
                write!(
                    f,
                    "record too short: field {field} at body offset {at} runs past its {len} bytes"
                )
            }
            RecordError::Invalid { field, at, why } => {
                write!(
                    f,
                    "record field {field} at body offset {at} is invalid: {why}"
                )
            }
            RecordError::SizeBelowHeader { size } => {
                write!(
                    f,
                    "record header says {size} bytes, less than the 8-byte header"
                )
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for RecordError {}

/// The identity of a mapping in PERF_RECORD_MMAP2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MappingId<'a> {
    /// Device and inode (`maj`, `min`, `ino`, `ino_generation`).
    Inode {
        /// Device major.
        maj: u32,
        /// Device minor.
        min: u32,
        /// Inode number.
        ino: u64,
        /// Inode generation.
        ino_generation: u64,
    },
    /// PERF_RECORD_MISC_MMAP_BUILD_ID: the build id (since Linux 5.12).
    BuildId(&'a [u8]),
}

/// A parsed record, borrowing the bytes it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // field names are the header's; see perf_event.h
#[allow(clippy::large_enum_variant)] // transient, on the stack; no allocation in the core
#[non_exhaustive]
pub enum Record<'a> {
    /// PERF_RECORD_MMAP.
    Mmap {
        pid: u32,
        tid: u32,
        addr: u64,
        len: u64,
        pgoff: u64,
        filename: &'a [u8],
    },
    /// PERF_RECORD_LOST: `lost` samples of event `id` were dropped.
    Lost { id: u64, lost: u64 },
    /// PERF_RECORD_COMM (misc COMM_EXEC: caused by exec).
    Comm { pid: u32, tid: u32, comm: &'a [u8] },
    /// PERF_RECORD_EXIT.
    Exit {
        pid: u32,
        ppid: u32,
        tid: u32,
        ptid: u32,
        time: u64,
    },
    /// PERF_RECORD_THROTTLE.
    Throttle { time: u64, id: u64, stream_id: u64 },
    /// PERF_RECORD_UNTHROTTLE.
    Unthrottle { time: u64, id: u64, stream_id: u64 },
    /// PERF_RECORD_FORK.
    Fork {
        pid: u32,
        ppid: u32,
        tid: u32,
        ptid: u32,
        time: u64,
    },
    /// PERF_RECORD_READ: values in the event's read_format (checked by
    /// [`parse`]; read them with `ReadFormat::parse_in` in the record's
    /// byte order).
    Read {
        pid: u32,
        tid: u32,
        values: &'a [u8],
    },
    /// PERF_RECORD_SAMPLE.
    Sample(Sample<'a>),
    /// PERF_RECORD_MMAP2 (since Linux 3.16).
    Mmap2 {
        pid: u32,
        tid: u32,
        addr: u64,
        len: u64,
        pgoff: u64,
        id: MappingId<'a>,
        prot: u32,
        flags: u32,
        filename: &'a [u8],
    },
    /// PERF_RECORD_AUX: `flags` are PERF_AUX_FLAG_* (see [`AuxFlags`]).
    Aux {
        aux_offset: u64,
        aux_size: u64,
        flags: AuxFlags,
    },
    /// PERF_RECORD_ITRACE_START.
    ItraceStart { pid: u32, tid: u32 },
    /// PERF_RECORD_LOST_SAMPLES.
    LostSamples { lost: u64 },
    /// PERF_RECORD_SWITCH (misc SWITCH_OUT: switching out).
    Switch,
    /// PERF_RECORD_SWITCH_CPU_WIDE.
    SwitchCpuWide {
        next_prev_pid: u32,
        next_prev_tid: u32,
    },
    /// PERF_RECORD_NAMESPACES: `links` are (dev, inode) pairs.
    Namespaces { pid: u32, tid: u32, links: U64s<'a> },
    /// PERF_RECORD_KSYMBOL.
    Ksymbol {
        addr: u64,
        len: u32,
        ksym_type: u16,
        flags: u16,
        name: &'a [u8],
    },
    /// PERF_RECORD_BPF_EVENT.
    BpfEvent {
        kind: u16,
        flags: u16,
        id: u32,
        tag: &'a [u8],
    },
    /// PERF_RECORD_CGROUP.
    Cgroup { id: u64, path: &'a [u8] },
    /// PERF_RECORD_TEXT_POKE: `bytes` holds old_len old then new_len new bytes.
    TextPoke {
        addr: u64,
        old_len: u16,
        new_len: u16,
        bytes: &'a [u8],
    },
    /// PERF_RECORD_AUX_OUTPUT_HW_ID.
    AuxOutputHwId { hw_id: u64 },
    /// PERF_RECORD_CALLCHAIN_DEFERRED (since Linux 6.19).
    CallchainDeferred { cookie: u64, ips: U64s<'a> },
    /// A type this crate does not know: the body as is.
    Unknown { kind: u32, body: &'a [u8] },
}

/// PERF_RECORD_AUX flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuxFlags(pub u64);

impl AuxFlags {
    /// PERF_AUX_FLAG_TRUNCATED: the record was truncated to fit.
    pub const fn truncated(self) -> bool {
        self.0 & sys::PERF_AUX_FLAG_TRUNCATED as u64 != 0
    }
    /// PERF_AUX_FLAG_OVERWRITE: snapshot from overwrite mode.
    pub const fn overwrite(self) -> bool {
        self.0 & sys::PERF_AUX_FLAG_OVERWRITE as u64 != 0
    }
    /// PERF_AUX_FLAG_PARTIAL: the record contains gaps.
    pub const fn partial(self) -> bool {
        self.0 & sys::PERF_AUX_FLAG_PARTIAL as u64 != 0
    }
    /// PERF_AUX_FLAG_COLLISION: sample collided with another.
    pub const fn collision(self) -> bool {
        self.0 & sys::PERF_AUX_FLAG_COLLISION as u64 != 0
    }
    /// PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK: the PMU-specific format type.
    pub const fn pmu_format_type(self) -> u8 {
        ((self.0 & sys::PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK as u64) >> 8) as u8
    }
}

/// A record with its header and, for non-sample records, the sample_id trailer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parsed<'a> {
    /// The header.
    pub header: Header,
    /// The record.
    pub record: Record<'a>,
    /// The sample_id trailer (non-sample records with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

/// A NUL-padded C string field: the bytes before the first NUL.
fn cstr(b: &[u8]) -> &[u8] {
    b.iter().position(|c| *c == 0).map_or(b, |n| &b[..n])
}

/// Parses one whole record (`bytes` starts with the header and holds
/// exactly `header.size` bytes), in the layout's byte order.
///
/// Always inlined: it is the hot path of every reader, and inlined into
/// the caller its 168-byte result is built in place instead of copied.
#[inline(always)]
pub fn parse<'a>(layout: &SampleLayout, bytes: &'a [u8]) -> Result<Parsed<'a>, RecordError> {
    if layout.byte_order.is_foreign() {
        parse_in::<true>(layout, bytes)
    } else {
        parse_in::<false>(layout, bytes)
    }
}

/// [`parse`] with the byte order as a constant.
#[inline(always)]
fn parse_in<'a, const SWAP: bool>(
    layout: &SampleLayout,
    bytes: &'a [u8],
) -> Result<Parsed<'a>, RecordError> {
    let head: [u8; 8] = match bytes.get(..8) {
        Some(h) => [h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]],
        None => {
            return Err(RecordError::Truncated {
                field: "header",
                at: 0,
                len: bytes.len(),
            })
        }
    };
    let mut header = Header::from_bytes(head);
    if SWAP {
        header = Header {
            kind: header.kind.swap_bytes(),
            misc: header.misc.swap_bytes(),
            size: header.size.swap_bytes(),
        };
    }
    if (header.size as usize) < Header::SIZE {
        return Err(RecordError::SizeBelowHeader { size: header.size });
    }
    let body = bytes
        .get(8..header.size as usize)
        .ok_or(RecordError::Truncated {
            field: "body",
            at: 0,
            len: bytes.len().saturating_sub(8),
        })?;
    if header.kind == sys::PERF_RECORD_SAMPLE {
        return Ok(Parsed {
            header,
            record: Record::Sample(Sample::parse::<SWAP>(layout, body)?),
            sample_id: None,
        });
    }
    let mut c = Cursor::<SWAP>::new(body);
    let known = header.kind > 0 && header.kind < sys::PERF_RECORD_MAX;
    let mut trailer = if layout.sample_id_all && known {
        Some(c.split_tail(layout.sample_id_size(), "sample_id")?)
    } else {
        None
    };
    let record = parse_body(header, &mut c)?;
    if let Record::Read { values, .. } = record {
        // The values the read_format promises, exactly (the same rule as
        // PERF_SAMPLE_READ in samples).
        if let Err(e) = layout.read_format.parse_in(values, layout.byte_order) {
            return Err(RecordError::Invalid {
                field: "read.values",
                at: 8,
                why: e.reason(),
            });
        }
    }
    let sample_id = match trailer.as_mut() {
        Some(t) => Some(SampleId::parse_trailer(layout, t)?),
        None => None,
    };
    Ok(Parsed {
        header,
        record,
        sample_id,
    })
}

fn parse_body<'a, const SWAP: bool>(
    header: Header,
    c: &mut Cursor<'a, SWAP>,
) -> Result<Record<'a>, RecordError> {
    Ok(match header.kind {
        sys::PERF_RECORD_MMAP => Record::Mmap {
            pid: c.u32("pid")?,
            tid: c.u32("tid")?,
            addr: c.u64("addr")?,
            len: c.u64("len")?,
            pgoff: c.u64("pgoff")?,
            filename: cstr(c.rest()),
        },
        sys::PERF_RECORD_LOST => Record::Lost {
            id: c.u64("id")?,
            lost: c.u64("lost")?,
        },
        sys::PERF_RECORD_COMM => Record::Comm {
            pid: c.u32("pid")?,
            tid: c.u32("tid")?,
            comm: cstr(c.rest()),
        },
        sys::PERF_RECORD_EXIT | sys::PERF_RECORD_FORK => {
            let (pid, ppid, tid, ptid) =
                (c.u32("pid")?, c.u32("ppid")?, c.u32("tid")?, c.u32("ptid")?);
            let time = c.u64("time")?;
            if header.kind == sys::PERF_RECORD_EXIT {
                Record::Exit {
                    pid,
                    ppid,
                    tid,
                    ptid,
                    time,
                }
            } else {
                Record::Fork {
                    pid,
                    ppid,
                    tid,
                    ptid,
                    time,
                }
            }
        }
        sys::PERF_RECORD_THROTTLE | sys::PERF_RECORD_UNTHROTTLE => {
            let (time, id, stream_id) = (c.u64("time")?, c.u64("id")?, c.u64("stream_id")?);
            if header.kind == sys::PERF_RECORD_THROTTLE {
                Record::Throttle {
                    time,
                    id,
                    stream_id,
                }
            } else {
                Record::Unthrottle {
                    time,
                    id,
                    stream_id,
                }
            }
        }
        sys::PERF_RECORD_READ => Record::Read {
            pid: c.u32("pid")?,
            tid: c.u32("tid")?,
            values: c.rest(),
        },
        sys::PERF_RECORD_MMAP2 => {
            let (pid, tid) = (c.u32("pid")?, c.u32("tid")?);
            let (addr, len, pgoff) = (c.u64("addr")?, c.u64("len")?, c.u64("pgoff")?);
            let id_bytes = c.bytes(24, "maj/min/ino or build_id")?;
            let id = if header.misc & sys::PERF_RECORD_MISC_MMAP_BUILD_ID as u16 != 0 {
                let n = (id_bytes[0] as usize).min(20);
                MappingId::BuildId(&id_bytes[4..4 + n])
            } else {
                let mut ic = Cursor::<SWAP>::new(id_bytes);
                MappingId::Inode {
                    maj: ic.u32("maj")?,
                    min: ic.u32("min")?,
                    ino: ic.u64("ino")?,
                    ino_generation: ic.u64("ino_generation")?,
                }
            };
            let (prot, flags) = (c.u32("prot")?, c.u32("flags")?);
            Record::Mmap2 {
                pid,
                tid,
                addr,
                len,
                pgoff,
                id,
                prot,
                flags,
                filename: cstr(c.rest()),
            }
        }
        sys::PERF_RECORD_AUX => Record::Aux {
            aux_offset: c.u64("aux_offset")?,
            aux_size: c.u64("aux_size")?,
            flags: AuxFlags(c.u64("flags")?),
        },
        sys::PERF_RECORD_ITRACE_START => Record::ItraceStart {
            pid: c.u32("pid")?,
            tid: c.u32("tid")?,
        },
        sys::PERF_RECORD_LOST_SAMPLES => Record::LostSamples {
            lost: c.u64("lost")?,
        },
        sys::PERF_RECORD_SWITCH => Record::Switch,
        sys::PERF_RECORD_SWITCH_CPU_WIDE => Record::SwitchCpuWide {
            next_prev_pid: c.u32("next_prev_pid")?,
            next_prev_tid: c.u32("next_prev_tid")?,
        },
        sys::PERF_RECORD_NAMESPACES => {
            let (pid, tid) = (c.u32("pid")?, c.u32("tid")?);
            let nr = c.u64("nr_namespaces")?;
            Record::Namespaces {
                pid,
                tid,
                links: c.u64s(nr.saturating_mul(2), "namespaces")?,
            }
        }
        sys::PERF_RECORD_KSYMBOL => Record::Ksymbol {
            addr: c.u64("addr")?,
            len: c.u32("len")?,
            ksym_type: c.u16("ksym_type")?,
            flags: c.u16("flags")?,
            name: cstr(c.rest()),
        },
        sys::PERF_RECORD_BPF_EVENT => Record::BpfEvent {
            kind: c.u16("type")?,
            flags: c.u16("flags")?,
            id: c.u32("id")?,
            tag: c.bytes(8, "tag")?,
        },
        sys::PERF_RECORD_CGROUP => Record::Cgroup {
            id: c.u64("id")?,
            path: cstr(c.rest()),
        },
        sys::PERF_RECORD_TEXT_POKE => {
            let (addr, old_len, new_len) = (c.u64("addr")?, c.u16("old_len")?, c.u16("new_len")?);
            let bytes = c.bytes(old_len as usize + new_len as usize, "bytes")?;
            Record::TextPoke {
                addr,
                old_len,
                new_len,
                bytes,
            }
        }
        sys::PERF_RECORD_AUX_OUTPUT_HW_ID => Record::AuxOutputHwId {
            hw_id: c.u64("hw_id")?,
        },
        sys::PERF_RECORD_CALLCHAIN_DEFERRED => {
            let cookie = c.u64("cookie")?;
            let nr = c.u64("nr")?;
            Record::CallchainDeferred {
                cookie,
                ips: c.u64s(nr, "ips")?,
            }
        }
        kind => Record::Unknown {
            kind,
            body: c.rest(),
        },
    })
}

#[cfg(test)]
mod test_util;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_decode;
#[cfg(test)]
mod tests_layout;
