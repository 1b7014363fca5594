//! What a sample holds, computed once per event from its attr: the
//! `sample_type` / `read_format` / `branch_sample_type` / register-mask /
//! `sample_id_all` words, and the one ordered table of PERF_RECORD_SAMPLE
//! fields that [`super::Sample::parse`] walks (perf_event_open(2),
//! "PERF_RECORD_SAMPLE"; the order is the kernel's `perf_output_sample`).

use super::cursor::{ByteOrder, Cursor};
use super::RecordError;
use crate::attr::Attr;
use crate::read_format::ReadFormat;
use crate::sys;

const fn bit(b: u32) -> u64 {
    b as u64
}

pub(crate) const IDENTIFIER: u64 = bit(sys::PERF_SAMPLE_IDENTIFIER);
pub(crate) const TID: u64 = bit(sys::PERF_SAMPLE_TID);
pub(crate) const TIME: u64 = bit(sys::PERF_SAMPLE_TIME);
pub(crate) const ID: u64 = bit(sys::PERF_SAMPLE_ID);
pub(crate) const STREAM_ID: u64 = bit(sys::PERF_SAMPLE_STREAM_ID);
pub(crate) const CPU: u64 = bit(sys::PERF_SAMPLE_CPU);
pub(crate) const READ: u64 = bit(sys::PERF_SAMPLE_READ);
pub(crate) const HW_INDEX: u64 = sys::PERF_SAMPLE_BRANCH_HW_INDEX as u64;
pub(crate) const COUNTERS: u64 = sys::PERF_SAMPLE_BRANCH_COUNTERS as u64;

/// How a field's length is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// One u64 (TID and CPU are two u32 in one u64).
    Word,
    /// The read_format values (`nr` first for groups).
    Read,
    /// `nr` then `nr` u64.
    Callchain,
    /// `u32 size` then `size` bytes.
    Raw,
    /// `nr`, [hw_idx], `nr` entries of 3 u64, [`nr` counters].
    Branch,
    /// `abi`, then popcount(mask) u64 unless abi is 0.
    Regs { intr: bool },
    /// `size`, `size` bytes, then `dyn_size` unless size is 0.
    Stack,
    /// `size` then `size` bytes.
    Aux,
}

/// One PERF_RECORD_SAMPLE field: the sample_type bit(s) that put it in the
/// record, its name (as errors report it) and how its length is found.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Field {
    pub(crate) bits: u64,
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
}

const fn f(bits: u32, name: &'static str, kind: Kind) -> Field {
    Field {
        bits: bits as u64,
        name,
        kind,
    }
}

/// Every sample field in record order. Index = the field's slot in
/// [`super::Sample`]. The first [`PREFIX`] are one word each and sit at
/// offsets that follow from `sample_type` alone.
pub(crate) const FIELDS: [Field; 24] = [
    f(sys::PERF_SAMPLE_IDENTIFIER, "identifier", Kind::Word),
    f(sys::PERF_SAMPLE_IP, "ip", Kind::Word),
    f(sys::PERF_SAMPLE_TID, "pid/tid", Kind::Word),
    f(sys::PERF_SAMPLE_TIME, "time", Kind::Word),
    f(sys::PERF_SAMPLE_ADDR, "addr", Kind::Word),
    f(sys::PERF_SAMPLE_ID, "id", Kind::Word),
    f(sys::PERF_SAMPLE_STREAM_ID, "stream_id", Kind::Word),
    f(sys::PERF_SAMPLE_CPU, "cpu/res", Kind::Word),
    f(sys::PERF_SAMPLE_PERIOD, "period", Kind::Word),
    f(sys::PERF_SAMPLE_READ, "read", Kind::Read),
    f(sys::PERF_SAMPLE_CALLCHAIN, "callchain", Kind::Callchain),
    f(sys::PERF_SAMPLE_RAW, "raw", Kind::Raw),
    f(sys::PERF_SAMPLE_BRANCH_STACK, "branch_stack", Kind::Branch),
    f(
        sys::PERF_SAMPLE_REGS_USER,
        "regs_user",
        Kind::Regs { intr: false },
    ),
    f(sys::PERF_SAMPLE_STACK_USER, "stack_user", Kind::Stack),
    f(
        sys::PERF_SAMPLE_WEIGHT | sys::PERF_SAMPLE_WEIGHT_STRUCT,
        "weight",
        Kind::Word,
    ),
    f(sys::PERF_SAMPLE_DATA_SRC, "data_src", Kind::Word),
    f(sys::PERF_SAMPLE_TRANSACTION, "transaction", Kind::Word),
    f(
        sys::PERF_SAMPLE_REGS_INTR,
        "regs_intr",
        Kind::Regs { intr: true },
    ),
    f(sys::PERF_SAMPLE_PHYS_ADDR, "phys_addr", Kind::Word),
    f(sys::PERF_SAMPLE_CGROUP, "cgroup", Kind::Word),
    f(
        sys::PERF_SAMPLE_DATA_PAGE_SIZE,
        "data_page_size",
        Kind::Word,
    ),
    f(
        sys::PERF_SAMPLE_CODE_PAGE_SIZE,
        "code_page_size",
        Kind::Word,
    ),
    f(sys::PERF_SAMPLE_AUX, "aux", Kind::Aux),
];

/// Number of leading one-word fields (everything before READ).
pub(crate) const PREFIX: usize = {
    let mut i = 0;
    while matches!(FIELDS[i].kind, Kind::Word) {
        i += 1;
    }
    i
};

/// sample_type bits of the prefix fields.
pub(crate) const PREFIX_MASK: u64 = {
    let mut m = 0;
    let mut i = 0;
    while i < PREFIX {
        m |= FIELDS[i].bits;
        i += 1;
    }
    m
};

/// For prefix field `i`: the bits of the prefix fields before it, so its
/// offset is `8 * (sample_type & BEFORE[i]).count_ones()`.
pub(crate) const BEFORE: [u64; PREFIX] = {
    let mut b = [0; PREFIX];
    let mut i = 1;
    while i < PREFIX {
        b[i] = b[i - 1] | FIELDS[i - 1].bits;
        i += 1;
    }
    b
};

/// Bits 0..10 of sample_type, where every prefix field but IDENTIFIER is.
const LOW: u64 = 0x3ff;
const _: () = assert!(PREFIX_MASK & !LOW == IDENTIFIER, "the prefix bits moved");

/// Set bits of each 10-bit value (a table: baseline x86_64 has no popcnt).
const POP10: [u8; 1024] = {
    let mut t = [0u8; 1024];
    let mut i = 0;
    while i < 1024 {
        t[i] = (i as u32).count_ones() as u8;
        i += 1;
    }
    t
};

/// `8 *` the number of prefix fields in `bits` (a subset of [`PREFIX_MASK`]):
/// the byte offset of what follows them.
#[inline(always)]
pub(crate) const fn prefix_bytes(bits: u64) -> usize {
    8 * (POP10[(bits & LOW) as usize] as usize + (bits & IDENTIFIER != 0) as usize)
}

/// Everything needed to parse samples and sample_id trailers of one event,
/// computed once from its attr.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SampleLayout {
    /// `sample_type`.
    pub sample_type: u64,
    /// `read_format` (for PERF_SAMPLE_READ and PERF_RECORD_READ).
    pub read_format: ReadFormat,
    /// `branch_sample_type`.
    pub branch_sample_type: u64,
    /// Number of registers in PERF_SAMPLE_REGS_USER (popcount of the mask).
    pub regs_user: u32,
    /// Number of registers in PERF_SAMPLE_REGS_INTR.
    pub regs_intr: u32,
    /// Whether non-sample records carry the sample_id trailer.
    pub sample_id_all: bool,
    /// The byte order of the records ([`ByteOrder::NATIVE`] for this
    /// machine's ring buffers; a perf.data file's or another machine's
    /// order otherwise).
    pub byte_order: ByteOrder,
}

impl SampleLayout {
    /// The layout of `attr`'s records, in this machine's byte order.
    pub const fn from_attr(attr: &Attr) -> SampleLayout {
        let raw = attr.to_raw();
        SampleLayout {
            sample_type: raw.sample_type,
            read_format: ReadFormat(raw.read_format),
            branch_sample_type: raw.branch_sample_type,
            regs_user: raw.sample_regs_user.count_ones(),
            regs_intr: raw.sample_regs_intr.count_ones(),
            sample_id_all: attr.get_flag(crate::abi::bitfield::attr_flags::SAMPLE_ID_ALL) != 0,
            byte_order: ByteOrder::NATIVE,
        }
    }

    /// The layout of an attr stored as bytes in `order` (a perf.data
    /// file's attr section, or an attr captured on another machine; see
    /// [`super::attr_from_bytes`]).
    pub fn from_attr_bytes(bytes: &[u8], order: ByteOrder) -> Result<SampleLayout, RecordError> {
        let raw = super::attr_from_bytes(bytes, order)?;
        Ok(SampleLayout::from_attr(&Attr::from_raw(raw)).with_byte_order(order))
    }

    /// The same layout for records in `order`.
    pub const fn with_byte_order(mut self, order: ByteOrder) -> SampleLayout {
        self.byte_order = order;
        self
    }

    pub(crate) const fn has(&self, b: u64) -> bool {
        self.sample_type & b != 0
    }

    /// Bytes of the sample_id trailer on non-sample records (0 without
    /// `sample_id_all`).
    pub const fn sample_id_size(&self) -> usize {
        if !self.sample_id_all {
            return 0;
        }
        8 * (self.sample_type & (TID | TIME | ID | STREAM_ID | CPU | IDENTIFIER)).count_ones()
            as usize
    }
}

/// The identity fields shared by samples and the sample_id trailer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SampleId {
    /// PERF_SAMPLE_TID: (pid, tid).
    pub pid_tid: Option<(u32, u32)>,
    /// PERF_SAMPLE_TIME.
    pub time: Option<u64>,
    /// PERF_SAMPLE_ID (or IDENTIFIER).
    pub id: Option<u64>,
    /// PERF_SAMPLE_STREAM_ID.
    pub stream_id: Option<u64>,
    /// PERF_SAMPLE_CPU: (cpu, reserved).
    pub cpu: Option<u32>,
}

impl SampleId {
    /// Parses the trailer of a non-sample record (order: TID, TIME, ID,
    /// STREAM_ID, CPU, IDENTIFIER; `struct sample_id` in perf_event.h).
    pub(crate) fn parse_trailer<const SWAP: bool>(
        layout: &SampleLayout,
        c: &mut Cursor<'_, SWAP>,
    ) -> Result<SampleId, RecordError> {
        let mut id = SampleId::default();
        if layout.has(TID) {
            id.pid_tid = Some((c.u32("sample_id.pid")?, c.u32("sample_id.tid")?));
        }
        if layout.has(TIME) {
            id.time = Some(c.u64("sample_id.time")?);
        }
        if layout.has(ID) {
            id.id = Some(c.u64("sample_id.id")?);
        }
        if layout.has(STREAM_ID) {
            id.stream_id = Some(c.u64("sample_id.stream_id")?);
        }
        if layout.has(CPU) {
            id.cpu = Some(c.u32("sample_id.cpu")?);
            c.u32("sample_id.res")?;
        }
        if layout.has(IDENTIFIER) {
            id.id = Some(c.u64("sample_id.identifier")?);
        }
        Ok(id)
    }
}
