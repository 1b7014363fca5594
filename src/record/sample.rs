//! PERF_RECORD_SAMPLE: where each field the layout says is present starts,
//! found and bounds-checked once by walking the ordered field table
//! ([`super::layout`]); accessors then read the record in place.
//!
//! The rule every parse keeps: when [`Sample::parse`] returns `Ok`, every
//! field the layout says is present is returned by its accessor (never
//! `None`); otherwise the parse fails with [`RecordError`] naming the field
//! and its offset.

use super::cursor::{u32_at, u64_at, ByteOrder, Cursor, U64s};
use super::layout::{prefix_bytes, PREFIX_MASK, READ};
use super::layout::{Kind, SampleId, SampleLayout, BEFORE, COUNTERS, FIELDS, HW_INDEX, PREFIX};
use super::RecordError;
use crate::read_format::{ReadFormat, Reading};

/// Number of fields after the fixed prefix (READ .. AUX).
const TAIL: usize = FIELDS.len() - PREFIX;
const ABSENT: u16 = u16::MAX;

/// Slots of the table, by name.
mod slot {
    pub(super) const IDENTIFIER: usize = 0;
    pub(super) const IP: usize = 1;
    pub(super) const TID: usize = 2;
    pub(super) const TIME: usize = 3;
    pub(super) const ADDR: usize = 4;
    pub(super) const ID: usize = 5;
    pub(super) const STREAM_ID: usize = 6;
    pub(super) const CPU: usize = 7;
    pub(super) const PERIOD: usize = 8;
    pub(super) const READ: usize = 9;
    pub(super) const CALLCHAIN: usize = 10;
    pub(super) const RAW: usize = 11;
    pub(super) const BRANCH: usize = 12;
    pub(super) const REGS_USER: usize = 13;
    pub(super) const STACK_USER: usize = 14;
    pub(super) const WEIGHT: usize = 15;
    pub(super) const DATA_SRC: usize = 16;
    pub(super) const TRANSACTION: usize = 17;
    pub(super) const REGS_INTR: usize = 18;
    pub(super) const PHYS_ADDR: usize = 19;
    pub(super) const CGROUP: usize = 20;
    pub(super) const DATA_PAGE_SIZE: usize = 21;
    pub(super) const CODE_PAGE_SIZE: usize = 22;
    pub(super) const AUX: usize = 23;
}

/// PERF_SAMPLE_BRANCH_STACK (decode entries with [`super::BranchEntry`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BranchStack<'a> {
    /// PERF_SAMPLE_BRANCH_HW_INDEX (since Linux 5.7): the hardware index of
    /// the most recent entry (`-1` as u64 when unknown).
    pub hw_idx: Option<u64>,
    /// `{from, to, flags}` per branch, as u64 triples.
    pub entries: U64s<'a>,
    /// PERF_SAMPLE_BRANCH_COUNTERS (since Linux 6.8): one u64 per branch.
    pub counters: Option<U64s<'a>>,
    pub(crate) order: ByteOrder,
}

/// PERF_SAMPLE_REGS_USER / PERF_SAMPLE_REGS_INTR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Regs<'a> {
    /// `PERF_SAMPLE_REGS_ABI_*` (0: no registers, e.g. a kernel thread).
    pub abi: u64,
    /// The registers of the mask, lowest bit first (empty when abi is 0).
    pub values: U64s<'a>,
}

/// A parsed PERF_RECORD_SAMPLE: the record's bytes plus where each present
/// field starts, found and bounds-checked once. Accessors read the field
/// from the record (zero-copy); absent fields are `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample<'a> {
    body: &'a [u8],
    sample_type: u64,
    /// Offsets of the fields after the prefix (ABSENT when not present).
    at: [u16; TAIL],
    read_end: u16,
    read_format: ReadFormat,
    regs_user: u8,
    regs_intr: u8,
    hw_idx: bool,
    counters: bool,
    swap: bool,
}

impl Default for Sample<'_> {
    fn default() -> Self {
        Sample {
            body: &[],
            sample_type: 0,
            at: [ABSENT; TAIL],
            read_end: 0,
            read_format: ReadFormat(0),
            regs_user: 0,
            regs_intr: 0,
            hw_idx: false,
            counters: false,
            swap: false,
        }
    }
}

impl<'a> Sample<'a> {
    /// Offset of field `s`, if present.
    #[inline(always)]
    fn slot(&self, s: usize) -> Option<usize> {
        if s < PREFIX {
            let st = self.sample_type;
            (st & FIELDS[s].bits != 0).then(|| prefix_bytes(st & BEFORE[s]))
        } else {
            let at = self.at[s - PREFIX];
            (at != ABSENT).then_some(at as usize)
        }
    }

    #[inline(always)]
    fn u64(&self, s: usize) -> Option<u64> {
        u64_at(self.body, self.slot(s)?, self.swap)
    }

    #[inline(always)]
    fn u32(&self, at: usize) -> Option<u32> {
        u32_at(self.body, at, self.swap)
    }

    #[inline(always)]
    fn u64s(&self, at: usize, n: usize) -> Option<U64s<'a>> {
        let end = at.checked_add(n.checked_mul(8)?)?;
        Some(U64s::new(self.body.get(at..end)?, self.swap))
    }

    /// The byte order the sample is read in.
    pub fn byte_order(&self) -> ByteOrder {
        if self.swap {
            match ByteOrder::NATIVE {
                ByteOrder::Little => ByteOrder::Big,
                ByteOrder::Big => ByteOrder::Little,
            }
        } else {
            ByteOrder::NATIVE
        }
    }

    /// PERF_SAMPLE_IDENTIFIER or PERF_SAMPLE_ID: the event id.
    #[inline]
    pub fn id(&self) -> Option<u64> {
        self.u64(slot::IDENTIFIER).or_else(|| self.u64(slot::ID))
    }
    /// PERF_SAMPLE_IP.
    #[inline]
    pub fn ip(&self) -> Option<u64> {
        self.u64(slot::IP)
    }
    /// PERF_SAMPLE_TID: (pid, tid).
    #[inline]
    pub fn pid_tid(&self) -> Option<(u32, u32)> {
        let at = self.slot(slot::TID)?;
        Some((self.u32(at)?, self.u32(at + 4)?))
    }
    /// PERF_SAMPLE_TIME.
    #[inline]
    pub fn time(&self) -> Option<u64> {
        self.u64(slot::TIME)
    }
    /// PERF_SAMPLE_ADDR.
    #[inline]
    pub fn addr(&self) -> Option<u64> {
        self.u64(slot::ADDR)
    }
    /// PERF_SAMPLE_STREAM_ID.
    #[inline]
    pub fn stream_id(&self) -> Option<u64> {
        self.u64(slot::STREAM_ID)
    }
    /// PERF_SAMPLE_CPU (the reserved half is dropped).
    #[inline]
    pub fn cpu(&self) -> Option<u32> {
        self.u32(self.slot(slot::CPU)?)
    }
    /// PERF_SAMPLE_PERIOD.
    #[inline]
    pub fn period(&self) -> Option<u64> {
        self.u64(slot::PERIOD)
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
    /// PERF_SAMPLE_READ: exactly the bytes of the read values, in the
    /// event's read_format (see [`Sample::read_values`]).
    pub fn read(&self) -> Option<&'a [u8]> {
        let at = self.slot(slot::READ)?;
        self.body.get(at..self.read_end as usize)
    }
    /// The PERF_SAMPLE_READ values, parsed with the layout's read_format
    /// (checked by [`super::parse`]: present whenever the layout has READ).
    pub fn read_values(&self) -> Option<Reading<'a>> {
        let order = self.byte_order();
        self.read()
            .and_then(|r| self.read_format.parse_in(r, order).ok())
    }
    /// PERF_SAMPLE_CALLCHAIN (with PERF_CONTEXT_* markers; split them with
    /// [`super::Callchain`]).
    pub fn callchain(&self) -> Option<U64s<'a>> {
        let at = self.slot(slot::CALLCHAIN)?;
        let nr = usize::try_from(u64_at(self.body, at, self.swap)?).ok()?;
        self.u64s(at + 8, nr)
    }
    /// PERF_SAMPLE_RAW (not ABI: tracepoint fields or PMU data; decode
    /// tracepoint fields with `sysfs::TraceFormat`).
    pub fn raw(&self) -> Option<&'a [u8]> {
        let at = self.slot(slot::RAW)?;
        let size = self.u32(at)? as usize;
        self.body.get(at + 4..at + 4 + size)
    }
    /// PERF_SAMPLE_BRANCH_STACK.
    pub fn branch_stack(&self) -> Option<BranchStack<'a>> {
        let mut at = self.slot(slot::BRANCH)?;
        let nr = usize::try_from(u64_at(self.body, at, self.swap)?).ok()?;
        at += 8;
        let hw_idx = if self.hw_idx {
            at += 8;
            Some(u64_at(self.body, at - 8, self.swap)?)
        } else {
            None
        };
        let entries = self.u64s(at, nr.checked_mul(3)?)?;
        let counters = if self.counters {
            Some(self.u64s(at + 24 * nr, nr)?)
        } else {
            None
        };
        Some(BranchStack {
            hw_idx,
            entries,
            counters,
            order: self.byte_order(),
        })
    }
    fn regs(&self, s: usize, n: u8) -> Option<Regs<'a>> {
        let at = self.slot(s)?;
        let abi = u64_at(self.body, at, self.swap)?;
        let n = if abi == 0 { 0 } else { n as usize };
        Some(Regs {
            abi,
            values: self.u64s(at + 8, n)?,
        })
    }
    /// PERF_SAMPLE_REGS_USER (name them with [`super::RegNames`]).
    pub fn regs_user(&self) -> Option<Regs<'a>> {
        self.regs(slot::REGS_USER, self.regs_user)
    }
    /// PERF_SAMPLE_REGS_INTR.
    pub fn regs_intr(&self) -> Option<Regs<'a>> {
        self.regs(slot::REGS_INTR, self.regs_intr)
    }
    /// PERF_SAMPLE_STACK_USER: (data, dyn_size).
    pub fn stack_user(&self) -> Option<(&'a [u8], u64)> {
        let at = self.slot(slot::STACK_USER)?;
        let size = usize::try_from(u64_at(self.body, at, self.swap)?).ok()?;
        let data = self.body.get(at + 8..(at + 8).checked_add(size)?)?;
        let dyn_size = if size == 0 {
            0
        } else {
            u64_at(self.body, at + 8 + size, self.swap)?
        };
        Some((data, dyn_size))
    }
    /// PERF_SAMPLE_WEIGHT or PERF_SAMPLE_WEIGHT_STRUCT (the raw u64; split
    /// the struct form with [`super::Weight`]).
    pub fn weight(&self) -> Option<u64> {
        self.u64(slot::WEIGHT)
    }
    /// PERF_SAMPLE_DATA_SRC (`perf_mem_data_src`; decode with [`super::DataSrc`]).
    pub fn data_src(&self) -> Option<u64> {
        self.u64(slot::DATA_SRC)
    }
    /// PERF_SAMPLE_TRANSACTION (decode with [`super::Txn`]).
    pub fn transaction(&self) -> Option<u64> {
        self.u64(slot::TRANSACTION)
    }
    /// PERF_SAMPLE_PHYS_ADDR.
    pub fn phys_addr(&self) -> Option<u64> {
        self.u64(slot::PHYS_ADDR)
    }
    /// PERF_SAMPLE_CGROUP.
    pub fn cgroup(&self) -> Option<u64> {
        self.u64(slot::CGROUP)
    }
    /// PERF_SAMPLE_DATA_PAGE_SIZE.
    pub fn data_page_size(&self) -> Option<u64> {
        self.u64(slot::DATA_PAGE_SIZE)
    }
    /// PERF_SAMPLE_CODE_PAGE_SIZE.
    pub fn code_page_size(&self) -> Option<u64> {
        self.u64(slot::CODE_PAGE_SIZE)
    }
    /// PERF_SAMPLE_AUX.
    pub fn aux(&self) -> Option<&'a [u8]> {
        let at = self.slot(slot::AUX)?;
        let size = usize::try_from(u64_at(self.body, at, self.swap)?).ok()?;
        self.body.get(at + 8..(at + 8).checked_add(size)?)
    }

    /// The first field the layout says is present that its accessor does
    /// not return. Always `None` for a sample from [`super::parse`]: this
    /// is the parser's promise, checked by the tests and the fuzz targets.
    pub fn unreturned_field(&self) -> Option<&'static str> {
        let st = self.sample_type;
        let checks: [(usize, bool); 24] = [
            (slot::IDENTIFIER, self.u64(slot::IDENTIFIER).is_some()),
            (slot::IP, self.ip().is_some()),
            (slot::TID, self.pid_tid().is_some()),
            (slot::TIME, self.time().is_some()),
            (slot::ADDR, self.addr().is_some()),
            (slot::ID, self.id().is_some()),
            (slot::STREAM_ID, self.stream_id().is_some()),
            (slot::CPU, self.cpu().is_some()),
            (slot::PERIOD, self.period().is_some()),
            (slot::READ, self.read_values().is_some()),
            (slot::CALLCHAIN, self.callchain().is_some()),
            (slot::RAW, self.raw().is_some()),
            (slot::BRANCH, self.branch_stack().is_some()),
            (slot::REGS_USER, self.regs_user().is_some()),
            (slot::STACK_USER, self.stack_user().is_some()),
            (slot::WEIGHT, self.weight().is_some()),
            (slot::DATA_SRC, self.data_src().is_some()),
            (slot::TRANSACTION, self.transaction().is_some()),
            (slot::REGS_INTR, self.regs_intr().is_some()),
            (slot::PHYS_ADDR, self.phys_addr().is_some()),
            (slot::CGROUP, self.cgroup().is_some()),
            (slot::DATA_PAGE_SIZE, self.data_page_size().is_some()),
            (slot::CODE_PAGE_SIZE, self.code_page_size().is_some()),
            (slot::AUX, self.aux().is_some()),
        ];
        checks
            .iter()
            .find(|(i, ok)| st & FIELDS[*i].bits != 0 && !ok)
            .map(|(i, _)| FIELDS[*i].name)
    }

    /// Finds and bounds-checks every field of a sample body (after the
    /// header), walking [`FIELDS`] in order. The one-word prefix is checked
    /// with a single length comparison; its offsets follow from sample_type.
    #[inline]
    pub(crate) fn parse<const SWAP: bool>(
        layout: &SampleLayout,
        body: &'a [u8],
    ) -> Result<Sample<'a>, RecordError> {
        if body.len() >= ABSENT as usize {
            return Err(RecordError::Truncated {
                field: "sample",
                at: 0,
                len: body.len(),
            });
        }
        let st = layout.sample_type;
        let mut s = Sample {
            body,
            sample_type: st,
            at: [ABSENT; TAIL],
            read_end: 0,
            read_format: layout.read_format,
            regs_user: layout.regs_user.min(64) as u8,
            regs_intr: layout.regs_intr.min(64) as u8,
            hw_idx: layout.branch_sample_type & HW_INDEX != 0,
            counters: layout.branch_sample_type & COUNTERS != 0,
            swap: SWAP,
        };
        let prefix = prefix_bytes(st & PREFIX_MASK);
        if prefix > body.len() {
            return Err(Self::short_prefix(st, body.len()));
        }
        if st & !PREFIX_MASK == 0 {
            return Ok(s);
        }
        s.parse_tail::<SWAP>(layout, prefix)?;
        Ok(s)
    }

    /// The error for a body shorter than its one-word prefix: names the
    /// first field that does not fit.
    #[cold]
    fn short_prefix(st: u64, len: usize) -> RecordError {
        let mut at = 0;
        for f in &FIELDS[..PREFIX] {
            if st & f.bits != 0 {
                if at + 8 > len {
                    return RecordError::Truncated {
                        field: f.name,
                        at,
                        len,
                    };
                }
                at += 8;
            }
        }
        RecordError::Truncated {
            field: "sample",
            at,
            len,
        }
    }

    /// Walks the fields after the prefix: one [`Sample::step`] per table
    /// row, each with its row as a constant so that the match on its kind
    /// folds away.
    #[inline]
    fn parse_tail<const SWAP: bool>(
        &mut self,
        l: &SampleLayout,
        prefix: usize,
    ) -> Result<(), RecordError> {
        let mut c = Cursor::<SWAP>::new(self.body);
        c.bytes(prefix, "sample")?;
        macro_rules! walk {
            ($($i:literal)*) => { $( self.step::<$i, SWAP>(l, &mut c)?; )* };
        }
        walk!(9 10 11 12 13 14 15 16 17 18 19 20 21 22 23);
        const _: () = assert!(PREFIX == 9 && FIELDS.len() == 24, "walk! lists every row");
        debug_assert!(l.sample_type & READ == 0 || self.read_end != 0);
        Ok(())
    }

    /// Finds and skips field `I` of [`FIELDS`] if the layout has it.
    #[inline(always)]
    fn step<const I: usize, const SWAP: bool>(
        &mut self,
        l: &SampleLayout,
        c: &mut Cursor<'a, SWAP>,
    ) -> Result<(), RecordError> {
        let body = self.body;
        let f = const { FIELDS[I] };
        if l.sample_type & f.bits == 0 {
            return Ok(());
        }
        let at = c.position();
        self.at[I - PREFIX] = at as u16;
        match f.kind {
            Kind::Word => {
                c.u64(f.name)?;
            }
            Kind::Read => {
                let fmt = l.read_format;
                let len = if fmt.is_group() {
                    let nr = {
                        let mut peek = *c;
                        peek.u64("read.nr")?
                    };
                    let per = fmt.size(2) - fmt.size(1);
                    let len = usize::try_from(nr)
                        .ok()
                        .and_then(|nr| nr.checked_mul(per))
                        .and_then(|v| v.checked_add(fmt.size(1) - per));
                    len.ok_or(RecordError::Truncated {
                        field: "read.values",
                        at,
                        len: body.len(),
                    })?
                } else {
                    fmt.size(1)
                };
                let bytes = c.bytes(len, "read")?;
                if let Err(e) = fmt.parse_in(bytes, l.byte_order) {
                    return Err(RecordError::Invalid {
                        field: "read",
                        at,
                        why: e.reason(),
                    });
                }
                self.read_end = c.position() as u16;
            }
            Kind::Callchain => {
                let nr = c.u64("callchain.nr")?;
                c.u64s(nr, "callchain.ips")?;
            }
            Kind::Raw => {
                let size = c.u32("raw.size")?;
                c.bytes(size as usize, "raw.data")?;
            }
            Kind::Branch => {
                let nr = c.u64("branch_stack.nr")?;
                if self.hw_idx {
                    c.u64("branch_stack.hw_idx")?;
                }
                c.u64s(nr.saturating_mul(3), "branch_stack.entries")?;
                if self.counters {
                    c.u64s(nr, "branch_stack.counters")?;
                }
            }
            Kind::Regs { intr } => {
                let (n, abi, vals) = if intr {
                    (self.regs_intr, "regs_intr.abi", "regs_intr.values")
                } else {
                    (self.regs_user, "regs_user.abi", "regs_user.values")
                };
                if c.u64(abi)? != 0 {
                    c.u64s(u64::from(n), vals)?;
                }
            }
            Kind::Stack => {
                let size = c.u64("stack_user.size")?;
                c.bytes(
                    usize::try_from(size).unwrap_or(usize::MAX),
                    "stack_user.data",
                )?;
                if size != 0 {
                    c.u64("stack_user.dyn_size")?;
                }
            }
            Kind::Aux => {
                let size = c.u64("aux.size")?;
                c.bytes(usize::try_from(size).unwrap_or(usize::MAX), "aux.data")?;
            }
        }
        Ok(())
    }
}
