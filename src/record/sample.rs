//! PERF_RECORD_SAMPLE and the sample_id trailer, laid out by the attr's
//! `sample_type`, `read_format`, `branch_sample_type`, register masks and
//! `sample_id_all` (perf_event_open(2), "PERF_RECORD_SAMPLE").

use super::cursor::{Cursor, U64s};
use super::RecordError;
use crate::attr::Attr;
use crate::read_format::{ReadFormat, Reading};
use crate::sys;

const fn bit(b: u32) -> u64 {
    b as u64
}

const IDENTIFIER: u64 = bit(sys::PERF_SAMPLE_IDENTIFIER);
const IP: u64 = bit(sys::PERF_SAMPLE_IP);
const TID: u64 = bit(sys::PERF_SAMPLE_TID);
const TIME: u64 = bit(sys::PERF_SAMPLE_TIME);
const ADDR: u64 = bit(sys::PERF_SAMPLE_ADDR);
const ID: u64 = bit(sys::PERF_SAMPLE_ID);
const STREAM_ID: u64 = bit(sys::PERF_SAMPLE_STREAM_ID);
const CPU: u64 = bit(sys::PERF_SAMPLE_CPU);
const PERIOD: u64 = bit(sys::PERF_SAMPLE_PERIOD);
const READ: u64 = bit(sys::PERF_SAMPLE_READ);
const CALLCHAIN: u64 = bit(sys::PERF_SAMPLE_CALLCHAIN);
const RAW: u64 = bit(sys::PERF_SAMPLE_RAW);
const BRANCH_STACK: u64 = bit(sys::PERF_SAMPLE_BRANCH_STACK);
const REGS_USER: u64 = bit(sys::PERF_SAMPLE_REGS_USER);
const STACK_USER: u64 = bit(sys::PERF_SAMPLE_STACK_USER);
const WEIGHT: u64 = bit(sys::PERF_SAMPLE_WEIGHT);
const WEIGHT_STRUCT: u64 = bit(sys::PERF_SAMPLE_WEIGHT_STRUCT);
const DATA_SRC: u64 = bit(sys::PERF_SAMPLE_DATA_SRC);
const TRANSACTION: u64 = bit(sys::PERF_SAMPLE_TRANSACTION);
const REGS_INTR: u64 = bit(sys::PERF_SAMPLE_REGS_INTR);
const PHYS_ADDR: u64 = bit(sys::PERF_SAMPLE_PHYS_ADDR);
const CGROUP: u64 = bit(sys::PERF_SAMPLE_CGROUP);
const DATA_PAGE_SIZE: u64 = bit(sys::PERF_SAMPLE_DATA_PAGE_SIZE);
const CODE_PAGE_SIZE: u64 = bit(sys::PERF_SAMPLE_CODE_PAGE_SIZE);
const AUX: u64 = bit(sys::PERF_SAMPLE_AUX);
const HW_INDEX: u64 = sys::PERF_SAMPLE_BRANCH_HW_INDEX as u64;
const COUNTERS: u64 = sys::PERF_SAMPLE_BRANCH_COUNTERS as u64;

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
}

impl SampleLayout {
    /// The layout of `attr`'s records.
    pub const fn from_attr(attr: &Attr) -> SampleLayout {
        let raw = attr.to_raw();
        SampleLayout {
            sample_type: raw.sample_type,
            read_format: ReadFormat(raw.read_format),
            branch_sample_type: raw.branch_sample_type,
            regs_user: raw.sample_regs_user.count_ones(),
            regs_intr: raw.sample_regs_intr.count_ones(),
            sample_id_all: attr.get_flag(crate::abi::bitfield::attr::SAMPLE_ID_ALL) != 0,
        }
    }

    const fn has(&self, b: u64) -> bool {
        self.sample_type & b != 0
    }

    /// Bytes of the sample_id trailer on non-sample records (0 without
    /// `sample_id_all`).
    pub const fn sample_id_size(&self) -> usize {
        if !self.sample_id_all {
            return 0;
        }
        8 * (self.has(TID) as usize
            + self.has(TIME) as usize
            + self.has(ID) as usize
            + self.has(STREAM_ID) as usize
            + self.has(CPU) as usize
            + self.has(IDENTIFIER) as usize)
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
    /// Parses the trailer of a non-sample record.
    pub(crate) fn parse_trailer(
        layout: &SampleLayout,
        c: &mut Cursor<'_>,
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

/// PERF_SAMPLE_BRANCH_STACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BranchStack<'a> {
    /// PERF_SAMPLE_BRANCH_HW_INDEX.
    pub hw_idx: Option<u64>,
    /// `{from, to, flags}` per branch, as u64 triples.
    pub entries: U64s<'a>,
    /// PERF_SAMPLE_BRANCH_COUNTERS: one u64 per branch.
    pub counters: Option<U64s<'a>>,
}

/// PERF_SAMPLE_REGS_USER / PERF_SAMPLE_REGS_INTR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Regs<'a> {
    /// `PERF_SAMPLE_REGS_ABI_*` (0: no registers, e.g. a kernel thread).
    pub abi: u64,
    /// The registers of the mask, lowest bit first (empty when abi is 0).
    pub values: U64s<'a>,
}

/// A parsed PERF_RECORD_SAMPLE, borrowing the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Sample<'a> {
    /// Identity fields (TID, TIME, ID/IDENTIFIER, STREAM_ID, CPU).
    pub id: SampleId,
    /// PERF_SAMPLE_IP.
    pub ip: Option<u64>,
    /// PERF_SAMPLE_ADDR.
    pub addr: Option<u64>,
    /// PERF_SAMPLE_PERIOD.
    pub period: Option<u64>,
    /// PERF_SAMPLE_READ, in the event's read_format.
    pub read: Option<&'a [u8]>,
    /// PERF_SAMPLE_CALLCHAIN (with PERF_CONTEXT_* markers).
    pub callchain: Option<U64s<'a>>,
    /// PERF_SAMPLE_RAW (not ABI: tracepoint fields or PMU data).
    pub raw: Option<&'a [u8]>,
    /// PERF_SAMPLE_BRANCH_STACK.
    pub branch_stack: Option<BranchStack<'a>>,
    /// PERF_SAMPLE_REGS_USER.
    pub regs_user: Option<Regs<'a>>,
    /// PERF_SAMPLE_STACK_USER: (data, dyn_size).
    pub stack_user: Option<(&'a [u8], u64)>,
    /// PERF_SAMPLE_WEIGHT or PERF_SAMPLE_WEIGHT_STRUCT (the raw u64).
    pub weight: Option<u64>,
    /// PERF_SAMPLE_DATA_SRC (`perf_mem_data_src`).
    pub data_src: Option<u64>,
    /// PERF_SAMPLE_TRANSACTION.
    pub transaction: Option<u64>,
    /// PERF_SAMPLE_REGS_INTR.
    pub regs_intr: Option<Regs<'a>>,
    /// PERF_SAMPLE_PHYS_ADDR.
    pub phys_addr: Option<u64>,
    /// PERF_SAMPLE_CGROUP.
    pub cgroup: Option<u64>,
    /// PERF_SAMPLE_DATA_PAGE_SIZE.
    pub data_page_size: Option<u64>,
    /// PERF_SAMPLE_CODE_PAGE_SIZE.
    pub code_page_size: Option<u64>,
    /// PERF_SAMPLE_AUX.
    pub aux: Option<&'a [u8]>,
}

impl<'a> Sample<'a> {
    /// The PERF_SAMPLE_READ values parsed with the layout's read_format.
    pub fn read_values(&self, layout: &SampleLayout) -> Option<Reading<'a>> {
        self.read.and_then(|r| layout.read_format.parse(r).ok())
    }

    fn regs(c: &mut Cursor<'a>, n: u32, field: &'static str) -> Result<Regs<'a>, RecordError> {
        let abi = c.u64(field)?;
        let values = if abi == 0 {
            U64s::default()
        } else {
            c.u64s(u64::from(n), field)?
        };
        Ok(Regs { abi, values })
    }

    /// Parses a sample body (after the header).
    pub(crate) fn parse(layout: &SampleLayout, body: &'a [u8]) -> Result<Sample<'a>, RecordError> {
        let mut c = Cursor::new(body);
        let mut s = Sample::default();
        let l = layout;
        if l.has(IDENTIFIER) {
            s.id.id = Some(c.u64("identifier")?);
        }
        if l.has(IP) {
            s.ip = Some(c.u64("ip")?);
        }
        if l.has(TID) {
            s.id.pid_tid = Some((c.u32("pid")?, c.u32("tid")?));
        }
        if l.has(TIME) {
            s.id.time = Some(c.u64("time")?);
        }
        if l.has(ADDR) {
            s.addr = Some(c.u64("addr")?);
        }
        if l.has(ID) {
            s.id.id = Some(c.u64("id")?);
        }
        if l.has(STREAM_ID) {
            s.id.stream_id = Some(c.u64("stream_id")?);
        }
        if l.has(CPU) {
            s.id.cpu = Some(c.u32("cpu")?);
            c.u32("res")?;
        }
        if l.has(PERIOD) {
            s.period = Some(c.u64("period")?);
        }
        if l.has(READ) {
            let f = l.read_format;
            let len = if f.is_group() {
                // nr comes first; the size follows from it.
                let mut peek = c;
                let nr = peek.u64("read.nr")?;
                let per = f.size(2) - f.size(1);
                usize::try_from(nr)
                    .ok()
                    .and_then(|nr| nr.checked_mul(per))
                    .and_then(|v| v.checked_add(f.size(1) - per))
                    .ok_or(RecordError::Truncated {
                        field: "read",
                        at: 0,
                        len: body.len(),
                    })?
            } else {
                f.size(1)
            };
            s.read = Some(c.bytes(len, "read")?);
        }
        if l.has(CALLCHAIN) {
            let nr = c.u64("callchain.nr")?;
            s.callchain = Some(c.u64s(nr, "callchain.ips")?);
        }
        if l.has(RAW) {
            let size = c.u32("raw.size")?;
            s.raw = Some(c.bytes(size as usize, "raw.data")?);
        }
        if l.has(BRANCH_STACK) {
            let nr = c.u64("branch_stack.nr")?;
            let hw_idx = if l.branch_sample_type & HW_INDEX != 0 {
                Some(c.u64("branch_stack.hw_idx")?)
            } else {
                None
            };
            let entries = c.u64s(nr.saturating_mul(3), "branch_stack.entries")?;
            let counters = if l.branch_sample_type & COUNTERS != 0 {
                Some(c.u64s(nr, "branch_stack.counters")?)
            } else {
                None
            };
            s.branch_stack = Some(BranchStack {
                hw_idx,
                entries,
                counters,
            });
        }
        if l.has(REGS_USER) {
            s.regs_user = Some(Self::regs(&mut c, l.regs_user, "regs_user")?);
        }
        if l.has(STACK_USER) {
            let size = c.u64("stack_user.size")?;
            let data = c.bytes(
                usize::try_from(size).unwrap_or(usize::MAX),
                "stack_user.data",
            )?;
            let dyn_size = if size == 0 {
                0
            } else {
                c.u64("stack_user.dyn_size")?
            };
            s.stack_user = Some((data, dyn_size));
        }
        if l.has(WEIGHT) || l.has(WEIGHT_STRUCT) {
            s.weight = Some(c.u64("weight")?);
        }
        if l.has(DATA_SRC) {
            s.data_src = Some(c.u64("data_src")?);
        }
        if l.has(TRANSACTION) {
            s.transaction = Some(c.u64("transaction")?);
        }
        if l.has(REGS_INTR) {
            s.regs_intr = Some(Self::regs(&mut c, l.regs_intr, "regs_intr")?);
        }
        if l.has(PHYS_ADDR) {
            s.phys_addr = Some(c.u64("phys_addr")?);
        }
        if l.has(CGROUP) {
            s.cgroup = Some(c.u64("cgroup")?);
        }
        if l.has(DATA_PAGE_SIZE) {
            s.data_page_size = Some(c.u64("data_page_size")?);
        }
        if l.has(CODE_PAGE_SIZE) {
            s.code_page_size = Some(c.u64("code_page_size")?);
        }
        if l.has(AUX) {
            let size = c.u64("aux.size")?;
            s.aux = Some(c.bytes(usize::try_from(size).unwrap_or(usize::MAX), "aux.data")?);
        }
        Ok(s)
    }
}
