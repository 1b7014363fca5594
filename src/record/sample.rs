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

/// Which field each slot of [`Sample`]'s offset table holds, in record order.
#[derive(Clone, Copy)]
#[repr(usize)]
enum Slot {
    Identifier,
    Ip,
    Tid,
    Time,
    Addr,
    Id,
    StreamId,
    Cpu,
    Period,
    Read,
    Callchain,
    Raw,
    BranchStack,
    RegsUser,
    StackUser,
    Weight,
    DataSrc,
    Transaction,
    RegsIntr,
    PhysAddr,
    Cgroup,
    DataPageSize,
    CodePageSize,
    Aux,
}
const SLOTS: usize = Slot::Aux as usize + 1;
const ABSENT: u16 = u16::MAX;

/// The fixed-size fields that precede the first variable-length one, with
/// their sample_type bit and size.
const PREFIX: [(u64, Slot, u16); 9] = [
    (IDENTIFIER, Slot::Identifier, 8),
    (IP, Slot::Ip, 8),
    (TID, Slot::Tid, 8),
    (TIME, Slot::Time, 8),
    (ADDR, Slot::Addr, 8),
    (ID, Slot::Id, 8),
    (STREAM_ID, Slot::StreamId, 8),
    (CPU, Slot::Cpu, 8),
    (PERIOD, Slot::Period, 8),
];

/// The u64 fields after the variable-length part (WEIGHT .. CODE_PAGE_SIZE
/// minus REGS_INTR, which is variable).
const SUFFIX_U64: [(u64, Slot); 4] = [
    (DATA_SRC, Slot::DataSrc),
    (TRANSACTION, Slot::Transaction),
    (PHYS_ADDR, Slot::PhysAddr),
    (CGROUP, Slot::Cgroup),
];

/// A parsed PERF_RECORD_SAMPLE: the record's bytes plus where each present
/// field starts, found and bounds-checked once. Accessors read the field
/// from the record (zero-copy); absent fields are `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample<'a> {
    body: &'a [u8],
    at: [u16; SLOTS],
    regs_user: u8,
    regs_intr: u8,
    hw_idx: bool,
    counters: bool,
}

impl Default for Sample<'_> {
    fn default() -> Self {
        Sample {
            body: &[],
            at: [ABSENT; SLOTS],
            regs_user: 0,
            regs_intr: 0,
            hw_idx: false,
            counters: false,
        }
    }
}

#[inline]
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    let w = b.get(at..at + 8)?;
    Some(u64::from_ne_bytes([
        w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7],
    ]))
}

#[inline]
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let w = b.get(at..at + 4)?;
    Some(u32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
}

impl<'a> Sample<'a> {
    fn slot(&self, s: Slot) -> Option<usize> {
        let at = self.at[s as usize];
        (at != ABSENT).then_some(at as usize)
    }

    fn u64(&self, s: Slot) -> Option<u64> {
        self.slot(s).and_then(|at| u64_at(self.body, at))
    }

    /// PERF_SAMPLE_IDENTIFIER or PERF_SAMPLE_ID: the event id.
    pub fn id(&self) -> Option<u64> {
        self.u64(Slot::Identifier).or_else(|| self.u64(Slot::Id))
    }
    /// PERF_SAMPLE_IP.
    pub fn ip(&self) -> Option<u64> {
        self.u64(Slot::Ip)
    }
    /// PERF_SAMPLE_TID: (pid, tid).
    pub fn pid_tid(&self) -> Option<(u32, u32)> {
        let at = self.slot(Slot::Tid)?;
        Some((u32_at(self.body, at)?, u32_at(self.body, at + 4)?))
    }
    /// PERF_SAMPLE_TIME.
    pub fn time(&self) -> Option<u64> {
        self.u64(Slot::Time)
    }
    /// PERF_SAMPLE_ADDR.
    pub fn addr(&self) -> Option<u64> {
        self.u64(Slot::Addr)
    }
    /// PERF_SAMPLE_STREAM_ID.
    pub fn stream_id(&self) -> Option<u64> {
        self.u64(Slot::StreamId)
    }
    /// PERF_SAMPLE_CPU (the reserved half is dropped).
    pub fn cpu(&self) -> Option<u32> {
        self.slot(Slot::Cpu).and_then(|at| u32_at(self.body, at))
    }
    /// PERF_SAMPLE_PERIOD.
    pub fn period(&self) -> Option<u64> {
        self.u64(Slot::Period)
    }
    /// The identity fields together, as in the sample_id trailer.
    pub fn sample_id(&self) -> SampleId {
        SampleId {
            pid_tid: self.pid_tid(),
            time: self.time(),
            id: self.id(),
            stream_id: self.stream_id(),
            cpu: self.cpu(),
        }
    }
    /// PERF_SAMPLE_READ, in the event's read_format (see [`Sample::read_values`]).
    pub fn read(&self) -> Option<&'a [u8]> {
        let at = self.slot(Slot::Read)?;
        let end = self.next_after(Slot::Read)?;
        self.body.get(at..end)
    }
    /// The PERF_SAMPLE_READ values parsed with the layout's read_format.
    pub fn read_values(&self, layout: &SampleLayout) -> Option<Reading<'a>> {
        self.read().and_then(|r| layout.read_format.parse(r).ok())
    }
    /// PERF_SAMPLE_CALLCHAIN (with PERF_CONTEXT_* markers).
    pub fn callchain(&self) -> Option<U64s<'a>> {
        let at = self.slot(Slot::Callchain)?;
        let nr = u64_at(self.body, at)? as usize;
        Some(U64s::new(self.body.get(at + 8..at + 8 + 8 * nr)?))
    }
    /// PERF_SAMPLE_RAW (not ABI: tracepoint fields or PMU data).
    pub fn raw(&self) -> Option<&'a [u8]> {
        let at = self.slot(Slot::Raw)?;
        let size = u32_at(self.body, at)? as usize;
        self.body.get(at + 4..at + 4 + size)
    }
    /// PERF_SAMPLE_BRANCH_STACK.
    pub fn branch_stack(&self) -> Option<BranchStack<'a>> {
        let mut at = self.slot(Slot::BranchStack)?;
        let nr = u64_at(self.body, at)? as usize;
        at += 8;
        let hw_idx = if self.hw_idx {
            at += 8;
            Some(u64_at(self.body, at - 8)?)
        } else {
            None
        };
        let entries = U64s::new(self.body.get(at..at + 24 * nr)?);
        at += 24 * nr;
        let counters = if self.counters {
            Some(U64s::new(self.body.get(at..at + 8 * nr)?))
        } else {
            None
        };
        Some(BranchStack {
            hw_idx,
            entries,
            counters,
        })
    }
    fn regs(&self, s: Slot, n: u8) -> Option<Regs<'a>> {
        let at = self.slot(s)?;
        let abi = u64_at(self.body, at)?;
        let n = if abi == 0 { 0 } else { n as usize };
        Some(Regs {
            abi,
            values: U64s::new(self.body.get(at + 8..at + 8 + 8 * n)?),
        })
    }
    /// PERF_SAMPLE_REGS_USER.
    pub fn regs_user(&self) -> Option<Regs<'a>> {
        self.regs(Slot::RegsUser, self.regs_user)
    }
    /// PERF_SAMPLE_REGS_INTR.
    pub fn regs_intr(&self) -> Option<Regs<'a>> {
        self.regs(Slot::RegsIntr, self.regs_intr)
    }
    /// PERF_SAMPLE_STACK_USER: (data, dyn_size).
    pub fn stack_user(&self) -> Option<(&'a [u8], u64)> {
        let at = self.slot(Slot::StackUser)?;
        let size = u64_at(self.body, at)? as usize;
        let data = self.body.get(at + 8..at + 8 + size)?;
        let dyn_size = if size == 0 {
            0
        } else {
            u64_at(self.body, at + 8 + size)?
        };
        Some((data, dyn_size))
    }
    /// PERF_SAMPLE_WEIGHT or PERF_SAMPLE_WEIGHT_STRUCT (the raw u64).
    pub fn weight(&self) -> Option<u64> {
        self.u64(Slot::Weight)
    }
    /// PERF_SAMPLE_DATA_SRC (`perf_mem_data_src`).
    pub fn data_src(&self) -> Option<u64> {
        self.u64(Slot::DataSrc)
    }
    /// PERF_SAMPLE_TRANSACTION.
    pub fn transaction(&self) -> Option<u64> {
        self.u64(Slot::Transaction)
    }
    /// PERF_SAMPLE_PHYS_ADDR.
    pub fn phys_addr(&self) -> Option<u64> {
        self.u64(Slot::PhysAddr)
    }
    /// PERF_SAMPLE_CGROUP.
    pub fn cgroup(&self) -> Option<u64> {
        self.u64(Slot::Cgroup)
    }
    /// PERF_SAMPLE_DATA_PAGE_SIZE.
    pub fn data_page_size(&self) -> Option<u64> {
        self.u64(Slot::DataPageSize)
    }
    /// PERF_SAMPLE_CODE_PAGE_SIZE.
    pub fn code_page_size(&self) -> Option<u64> {
        self.u64(Slot::CodePageSize)
    }
    /// PERF_SAMPLE_AUX.
    pub fn aux(&self) -> Option<&'a [u8]> {
        let at = self.slot(Slot::Aux)?;
        let size = u64_at(self.body, at)? as usize;
        self.body.get(at + 8..at + 8 + size)
    }

    /// The start of the first present field after `s` (or the body's end).
    fn next_after(&self, s: Slot) -> Option<usize> {
        Some(
            self.at[s as usize + 1..]
                .iter()
                .find(|a| **a != ABSENT)
                .map_or(self.body.len(), |a| *a as usize),
        )
    }

    /// Finds and bounds-checks every field of a sample body (after the header).
    #[inline]
    pub(crate) fn parse(layout: &SampleLayout, body: &'a [u8]) -> Result<Sample<'a>, RecordError> {
        if body.len() >= ABSENT as usize {
            return Err(RecordError::Truncated {
                field: "sample",
                at: 0,
                len: body.len(),
            });
        }
        let l = layout;
        let mut s = Sample {
            body,
            at: [ABSENT; SLOTS],
            regs_user: l.regs_user.min(64) as u8,
            regs_intr: l.regs_intr.min(64) as u8,
            hw_idx: l.branch_sample_type & HW_INDEX != 0,
            counters: l.branch_sample_type & COUNTERS != 0,
        };
        // The fixed prefix: offsets follow from sample_type alone.
        let mut pos: u16 = 0;
        for (bit, slot, size) in PREFIX {
            if l.sample_type & bit != 0 {
                s.at[slot as usize] = pos;
                pos += size;
            }
        }
        if usize::from(pos) > body.len() {
            return Err(RecordError::Truncated {
                field: "sample fields",
                at: 0,
                len: body.len(),
            });
        }
        if l.sample_type & !(IDENTIFIER | IP | TID | TIME | ADDR | ID | STREAM_ID | CPU | PERIOD)
            == 0
        {
            return Ok(s);
        }
        let mut c = Cursor::new(body);
        c.bytes(usize::from(pos), "sample fields")?;
        let mark = |s: &mut Sample<'a>, slot: Slot, c: &Cursor<'_>| {
            s.at[slot as usize] = c.position() as u16
        };
        if l.has(READ) {
            mark(&mut s, Slot::Read, &c);
            let f = l.read_format;
            let len = if f.is_group() {
                let mut peek = c;
                let nr = peek.u64("read.nr")?;
                let per = f.size(2) - f.size(1);
                usize::try_from(nr)
                    .ok()
                    .and_then(|nr| nr.checked_mul(per))
                    .and_then(|v| v.checked_add(f.size(1) - per))
                    .ok_or(RecordError::Truncated {
                        field: "read",
                        at: c.position(),
                        len: body.len(),
                    })?
            } else {
                f.size(1)
            };
            c.bytes(len, "read")?;
        }
        if l.has(CALLCHAIN) {
            mark(&mut s, Slot::Callchain, &c);
            let nr = c.u64("callchain.nr")?;
            c.u64s(nr, "callchain.ips")?;
        }
        if l.has(RAW) {
            mark(&mut s, Slot::Raw, &c);
            let size = c.u32("raw.size")?;
            c.bytes(size as usize, "raw.data")?;
        }
        if l.has(BRANCH_STACK) {
            mark(&mut s, Slot::BranchStack, &c);
            let nr = c.u64("branch_stack.nr")?;
            if s.hw_idx {
                c.u64("branch_stack.hw_idx")?;
            }
            c.u64s(nr.saturating_mul(3), "branch_stack.entries")?;
            if s.counters {
                c.u64s(nr, "branch_stack.counters")?;
            }
        }
        if l.has(REGS_USER) {
            mark(&mut s, Slot::RegsUser, &c);
            if c.u64("regs_user.abi")? != 0 {
                c.u64s(u64::from(s.regs_user), "regs_user")?;
            }
        }
        if l.has(STACK_USER) {
            mark(&mut s, Slot::StackUser, &c);
            let size = c.u64("stack_user.size")?;
            c.bytes(
                usize::try_from(size).unwrap_or(usize::MAX),
                "stack_user.data",
            )?;
            if size != 0 {
                c.u64("stack_user.dyn_size")?;
            }
        }
        if l.has(WEIGHT) || l.has(WEIGHT_STRUCT) {
            mark(&mut s, Slot::Weight, &c);
            c.u64("weight")?;
        }
        for (bit, slot) in SUFFIX_U64[..2].iter().copied() {
            if l.has(bit) {
                mark(&mut s, slot, &c);
                c.u64(if bit == DATA_SRC {
                    "data_src"
                } else {
                    "transaction"
                })?;
            }
        }
        if l.has(REGS_INTR) {
            mark(&mut s, Slot::RegsIntr, &c);
            if c.u64("regs_intr.abi")? != 0 {
                c.u64s(u64::from(s.regs_intr), "regs_intr")?;
            }
        }
        for (bit, slot, field) in [
            (SUFFIX_U64[2].0, SUFFIX_U64[2].1, "phys_addr"),
            (SUFFIX_U64[3].0, SUFFIX_U64[3].1, "cgroup"),
            (DATA_PAGE_SIZE, Slot::DataPageSize, "data_page_size"),
            (CODE_PAGE_SIZE, Slot::CodePageSize, "code_page_size"),
        ] {
            if l.has(bit) {
                mark(&mut s, slot, &c);
                c.u64(field)?;
            }
        }
        if l.has(AUX) {
            mark(&mut s, Slot::Aux, &c);
            let size = c.u64("aux.size")?;
            c.bytes(usize::try_from(size).unwrap_or(usize::MAX), "aux.data")?;
        }
        Ok(s)
    }
}
