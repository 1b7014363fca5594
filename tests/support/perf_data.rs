//! A minimal perf.data reader for the tests that compare this crate with
//! the perf tool: the file header, the attr section with each attr's ids,
//! and the data section's records, each parsed with the layout of the
//! event it belongs to (perf's `tools/perf/Documentation/perf.data-file-format.txt`).
//! The byte order is the magic's: `PERFILE2` read as a little- or
//! big-endian u64.

#![allow(dead_code)] // each test file uses a part

use perf_event_core::record::{self, ByteOrder, Parsed, Record, SampleLayout};

/// `PERFILE2` as a little-endian u64.
const MAGIC: u64 = 0x3245_4c49_4652_4550;

/// One attr of the file.
pub struct FileAttr {
    /// `type`.
    pub kind: u32,
    /// `config` (a tracepoint's id).
    pub config: u64,
    /// The layout of its records.
    pub layout: SampleLayout,
    /// `sample_period` (a fixed period is not in the samples).
    pub sample_period: u64,
    /// `sample_regs_user`.
    pub regs_user: u64,
    /// The sample ids of its fds.
    pub ids: Vec<u64>,
}

/// A perf.data file in memory.
pub struct PerfData {
    pub bytes: Vec<u8>,
    pub order: ByteOrder,
    pub attrs: Vec<FileAttr>,
    pub data: (usize, usize),
}

fn u64_in(b: &[u8], at: usize, order: ByteOrder) -> u64 {
    let w: [u8; 8] = b[at..at + 8].try_into().unwrap();
    match order {
        ByteOrder::Little => u64::from_le_bytes(w),
        ByteOrder::Big => u64::from_be_bytes(w),
    }
}

fn u32_in(b: &[u8], at: usize, order: ByteOrder) -> u32 {
    let w: [u8; 4] = b[at..at + 4].try_into().unwrap();
    match order {
        ByteOrder::Little => u32::from_le_bytes(w),
        ByteOrder::Big => u32::from_be_bytes(w),
    }
}

impl PerfData {
    /// Reads the header and the attrs.
    pub fn new(bytes: Vec<u8>) -> PerfData {
        let order = if u64_in(&bytes, 0, ByteOrder::Little) == MAGIC {
            ByteOrder::Little
        } else if u64_in(&bytes, 0, ByteOrder::Big) == MAGIC {
            ByteOrder::Big
        } else {
            panic!("not a perf.data file (magic {:x?})", &bytes[..8]);
        };
        let w = |at| u64_in(&bytes, at, order) as usize;
        let attr_size = w(16);
        let (attrs_at, attrs_len) = (w(24), w(32));
        let data = (w(40), w(48));
        let mut attrs = Vec::new();
        for i in 0..attrs_len / attr_size {
            let at = attrs_at + i * attr_size;
            let attr = &bytes[at..at + attr_size - 16];
            let raw = record::attr_from_bytes(attr, order).expect("attr");
            let layout = SampleLayout::from_attr_bytes(attr, order).expect("attr");
            let (ids_at, ids_len) = (w(at + attr_size - 16), w(at + attr_size - 8));
            let ids = (0..ids_len / 8)
                .map(|k| u64_in(&bytes, ids_at + 8 * k, order))
                .collect();
            attrs.push(FileAttr {
                kind: raw.type_,
                config: raw.config,
                layout,
                sample_period: raw.sample_period(),
                regs_user: raw.sample_regs_user,
                ids,
            });
        }
        PerfData {
            bytes,
            order,
            attrs,
            data,
        }
    }

    /// The attr a record belongs to: the only one, or the one whose ids
    /// hold the record's sample id. Like perf, this needs the id at the same
    /// place for every event: PERF_SAMPLE_IDENTIFIER, or the same
    /// sample_type everywhere (then the id is found with any attr's layout).
    pub fn attr_of(&self, record: &[u8]) -> &FileAttr {
        if self.attrs.len() == 1 {
            return &self.attrs[0];
        }
        let first = &self.attrs[0].layout;
        assert!(
            self.attrs
                .iter()
                .all(|a| a.layout.sample_type == first.sample_type
                    && a.layout.sample_id_all == first.sample_id_all),
            "events with different sample_type: their ids cannot be found"
        );
        let parsed = record::parse(first, record).unwrap_or_else(|e| panic!("{e}"));
        let id = match parsed.record {
            Record::Sample(s) => s.id(),
            _ => parsed.sample_id.and_then(|i| i.id),
        };
        // perf's own records (types >= 64) have no id; records perf
        // synthesizes (COMM, MMAP of running processes) have id 0: perf
        // gives both to the first event.
        let Some(id) = id.filter(|id| *id != 0) else {
            return &self.attrs[0];
        };
        self.attrs
            .iter()
            .find(|a| a.ids.contains(&id))
            .unwrap_or_else(|| panic!("no attr has id {id}"))
    }

    /// Every record of the data section: (file offset, bytes).
    pub fn records(&self) -> Vec<(usize, &[u8])> {
        let (start, len) = self.data;
        let mut out = Vec::new();
        let mut at = start;
        while at + 8 <= start + len {
            let size = match self.order {
                ByteOrder::Little => u16::from_le_bytes([self.bytes[at + 6], self.bytes[at + 7]]),
                ByteOrder::Big => u16::from_be_bytes([self.bytes[at + 6], self.bytes[at + 7]]),
            } as usize;
            assert!(size >= 8, "record at {at:#x} has size {size}");
            out.push((at, &self.bytes[at..at + size]));
            at += size;
        }
        out
    }

    /// Parses a record with its event's layout.
    pub fn parse<'a>(&self, record: &'a [u8]) -> Parsed<'a> {
        let attr = self.attr_of(record);
        record::parse(&attr.layout, record).unwrap_or_else(|e| panic!("{e}"))
    }
}
