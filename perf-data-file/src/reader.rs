//! The reader: a whole perf.data file in memory, file or pipe mode, in
//! either byte order; the attrs with their ids, the feature sections, and
//! the records, each parsed by [`perf_event_core::record::parse`] with the layout of
//! the event its sample id names.
//!
//! perf's directory format (`perf record --threads`) is its `data` file
//! with the per-thread `data.N` record streams appended, walked after the
//! data section.
//!
//! A file whose writer was killed is read up to its last complete round:
//! a header with no data size (perf record's until it ends) or with no
//! feature sections and bytes past its data size (this module's writer
//! brings the size up to date at every round, and writes the features
//! last) is walked record by record and cut after the last whole
//! PERF_RECORD_FINISHED_ROUND ([`PerfData::recovered`]).

use super::features::Features;
use super::header::{feature, kind, order_of, Bytes, FileHeader, Section, PIPE_HEADER_SIZE};
use super::PerfDataError;
use perf_event_core::byte_order::ByteOrder;
use perf_event_core::record::{self, attr_from_bytes, Parsed, Record, SampleLayout};
use perf_event_core::sys;
use std::collections::HashMap;
use std::ops::Range;

/// One event of the file.
#[derive(Clone, Debug)]
pub struct FileAttr {
    /// Its attr (in this machine's order).
    pub raw: sys::perf_event_attr,
    /// The layout of its records (in the file's byte order).
    pub layout: SampleLayout,
    /// The ids of its fds.
    pub ids: Vec<u64>,
    /// Its name, from HEADER_EVENT_DESC.
    pub name: Option<String>,
}

/// A perf.data file in memory.
#[derive(Debug)]
pub struct PerfData {
    bytes: Vec<u8>,
    /// The file's byte order (its magic's).
    pub order: ByteOrder,
    /// Pipe mode (records only, attrs and features among them).
    pub pipe: bool,
    /// File mode: the header as read (pipe mode: all zero).
    pub header: FileHeader,
    /// The events.
    pub attrs: Vec<FileAttr>,
    /// The records' byte range (file: the data section, or what was
    /// recovered of it; pipe: everything after the header). In perf's
    /// directory format (`perf record --threads`) the `data` file's: the
    /// per-thread streams follow in [`PerfData::bytes`], and
    /// [`PerfData::records`] walks them after this range.
    pub data: Range<usize>,
    /// The feature sections.
    pub features: Features,
    /// Whether the data were recovered from a file whose writer did not
    /// finish (see the module docs).
    pub recovered: bool,
    by_id: HashMap<u64, usize>,
    /// Directory format: each `data.N` stream's range in `bytes`.
    streams: Vec<Range<usize>>,
}

/// The records of a file: `(offset, bytes)` each, or the error that ended
/// the walk.
pub struct Records<'a> {
    b: Bytes<'a>,
    at: usize,
    end: usize,
    failed: bool,
    /// The ranges still to walk after `at..end` (directory format).
    more: &'a [Range<usize>],
}

/// The size of the record at `at` (AUXTRACE: with its trailing data).
pub(super) fn record_len(b: Bytes<'_>, at: usize, end: usize) -> Result<usize, PerfDataError> {
    if end - at < 8 {
        return Err(PerfDataError::Truncated {
            what: "record header",
            at,
        });
    }
    let kind_ = b.u32(at, "record type")?;
    let size = b.u16(at + 6, "record size")? as usize;
    if size < 8 {
        return Err(PerfDataError::Invalid {
            what: "record size",
            at: at + 6,
        });
    }
    // Records whose payload follows them, outside their size: AUXTRACE's
    // trace (a u64 size) and, in pipe mode, the tracing data (a u32).
    let trailing = match kind_ {
        kind::AUXTRACE => Some((b.u64(at + 8, "auxtrace size")?, "auxtrace size")),
        kind::HEADER_TRACING_DATA => Some((
            u64::from(b.u32(at + 8, "tracing data size")?),
            "tracing data size",
        )),
        _ => None,
    };
    let mut len = size;
    if let Some((extra, what)) = trailing {
        len = usize::try_from(extra)
            .ok()
            .and_then(|e| len.checked_add(e))
            .ok_or(PerfDataError::Invalid { what, at: at + 8 })?;
    }
    if len > end - at {
        return Err(PerfDataError::Truncated { what: "record", at });
    }
    Ok(len)
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<(usize, &'a [u8]), PerfDataError>;

    fn next(&mut self) -> Option<Self::Item> {
        while self.at >= self.end && !self.failed {
            let (next, rest) = self.more.split_first()?;
            (self.at, self.end, self.more) = (next.start, next.end, rest);
        }
        if self.failed {
            return None;
        }
        match record_len(self.b, self.at, self.end) {
            Ok(len) => {
                let at = self.at;
                self.at += len;
                Some(Ok((at, &self.b.b[at..at + len])))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// The end of the last complete round in `start..end` (`start` if none).
fn last_round_end(b: Bytes<'_>, start: usize, end: usize) -> usize {
    let (mut at, mut good) = (start, start);
    while let Ok(len) = record_len(b, at, end) {
        if b.u32(at, "record type").ok() == Some(kind::FINISHED_ROUND) {
            good = at + len;
        }
        at += len;
    }
    good
}

pub(super) fn attr_entry(
    b: Bytes<'_>,
    bytes: &[u8],
) -> Result<(sys::perf_event_attr, SampleLayout), PerfDataError> {
    let raw = attr_from_bytes(bytes, b.order).map_err(PerfDataError::Record)?;
    let layout = SampleLayout::from_attr_bytes(bytes, b.order).map_err(PerfDataError::Record)?;
    Ok((raw, layout))
}

pub(super) fn ids_at(b: Bytes<'_>, at: usize, n: usize) -> Result<Vec<u64>, PerfDataError> {
    // Never more ids than bytes.
    b.slice(
        at,
        n.checked_mul(8)
            .ok_or(PerfDataError::Invalid { what: "ids", at })?,
        "ids",
    )?;
    (0..n).map(|k| b.u64(at + 8 * k, "id")).collect()
}

impl PerfData {
    /// Reads the file at `path`, or perf's directory format (`perf record
    /// --threads`, HEADER_DIR_FORMAT): the directory's `data` file, then
    /// its `data.N` record streams in the order of N, after it.
    pub fn open(path: impl AsRef<std::path::Path>) -> Result<PerfData, PerfDataError> {
        let path = path.as_ref();
        if !path.is_dir() {
            return PerfData::from_bytes(std::fs::read(path).map_err(PerfDataError::Io)?);
        }
        let mut me =
            PerfData::from_bytes(std::fs::read(path.join("data")).map_err(PerfDataError::Io)?)?;
        let mut streams = Vec::new();
        for entry in std::fs::read_dir(path).map_err(PerfDataError::Io)? {
            let name = entry.map_err(PerfDataError::Io)?.file_name();
            let n = name.to_str().and_then(|n| n.strip_prefix("data."));
            if let Some(n) = n.and_then(|n| n.parse::<u32>().ok()) {
                streams.push((n, path.join(&name)));
            }
        }
        streams.sort();
        for (_, file) in streams {
            let bytes = std::fs::read(file).map_err(PerfDataError::Io)?;
            let start = me.bytes.len();
            me.bytes.extend_from_slice(&bytes);
            me.streams.push(start..me.bytes.len());
        }
        Ok(me)
    }

    /// Reads a file (or a pipe-mode stream) held in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<PerfData, PerfDataError> {
        let order = order_of(&bytes)?;
        let mut me = PerfData {
            bytes: Vec::new(),
            order,
            pipe: false,
            header: FileHeader::default(),
            attrs: Vec::new(),
            data: 0..0,
            features: Features::default(),
            recovered: false,
            by_id: HashMap::new(),
            streams: Vec::new(),
        };
        let b = Bytes { b: &bytes, order };
        let size = b.u64(8, "header size")?;
        if size == PIPE_HEADER_SIZE {
            me.pipe = true;
            super::pipe::read(&mut me, b)?;
        } else {
            me.read_file(b)?;
        }
        if let Some(desc) = &me.features.event_desc {
            for d in desc {
                for a in me.attrs.iter_mut() {
                    if a.name.is_none() && d.ids.iter().any(|id| a.ids.contains(id)) {
                        a.name = Some(d.name.clone());
                    }
                }
            }
            if me.attrs.len() == desc.len() {
                for (a, d) in me.attrs.iter_mut().zip(desc) {
                    a.name.get_or_insert_with(|| d.name.clone());
                }
            }
        }
        for (i, a) in me.attrs.iter().enumerate() {
            for &id in &a.ids {
                me.by_id.entry(id).or_insert(i);
            }
        }
        me.bytes = bytes;
        Ok(me)
    }

    fn read_file(&mut self, b: Bytes<'_>) -> Result<(), PerfDataError> {
        let h = FileHeader::read(b)?;
        self.header = h;
        if h.attr_size < 16 + u64::from(sys::PERF_ATTR_SIZE_VER0) {
            return Err(PerfDataError::Invalid {
                what: "attr_size",
                at: 16,
            });
        }
        let entries = h.attrs.range(b.b.len()).ok_or(PerfDataError::Truncated {
            what: "attrs section",
            at: 24,
        })?;
        let attr_size = h.attr_size as usize;
        for i in 0..entries.len() / attr_size {
            let at = entries.start + i * attr_size;
            let (raw, layout) = attr_entry(b, &b.b[at..at + attr_size - 16])?;
            let ids = b.section(at + attr_size - 16, "attr ids")?;
            let ids_at_ = usize::try_from(ids.offset).map_err(|_| PerfDataError::Invalid {
                what: "attr ids",
                at,
            })?;
            let n = usize::try_from(ids.size / 8).map_err(|_| PerfDataError::Invalid {
                what: "attr ids",
                at,
            })?;
            self.attrs.push(FileAttr {
                raw,
                layout,
                ids: ids_at(b, ids_at_, n)?,
                name: None,
            });
        }
        let len = b.b.len();
        let start = usize::try_from(h.data.offset)
            .ok()
            .filter(|&s| s <= len)
            .ok_or(PerfDataError::Truncated {
                what: "data section",
                at: 40,
            })?;
        let no_features = h.features == [0; 4];
        match h.data.range(len) {
            Some(r) if h.data.size != 0 && !(no_features && r.end < len) => self.data = r,
            _ => {
                // An unfinished writer: up to the last whole round.
                self.data = start..last_round_end(b, start, len);
                self.recovered = true;
                return Ok(());
            }
        }
        // The feature table: one section per bit, in bit order.
        let mut at = self.data.end;
        for f in 0..feature::BITS {
            if !h.has(f) {
                continue;
            }
            let s: Section = b.section(at, "feature table")?;
            at += 16;
            let r = s.range(len).ok_or(PerfDataError::Truncated {
                what: "feature section",
                at: at - 16,
            })?;
            self.features.decode(
                f,
                Bytes {
                    b: &b.b[r],
                    order: b.order,
                },
            )?;
        }
        Ok(())
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Every record of the data (pipe mode: perf's header records too;
    /// directory format: then each `data.N` stream's): `(offset in
    /// [`PerfData::bytes`], bytes)`.
    pub fn records(&self) -> Records<'_> {
        Records {
            b: Bytes {
                b: &self.bytes,
                order: self.order,
            },
            at: self.data.start,
            end: self.data.end,
            failed: false,
            more: &self.streams,
        }
    }

    /// The index of the event a record belongs to: the only one, or the
    /// one whose ids hold the record's sample id (found with
    /// PERF_SAMPLE_IDENTIFIER, or with the first event's layout when all
    /// share their sample_type, as perf finds it). Records without an id
    /// (id 0: synthesized ones; perf's own types) go to the first event.
    pub fn event_of(&self, bytes: &[u8]) -> Result<usize, PerfDataError> {
        if self.attrs.len() <= 1 {
            return if self.attrs.is_empty() {
                Err(PerfDataError::NoEvent { id: None })
            } else {
                Ok(0)
            };
        }
        let b = Bytes {
            b: bytes,
            order: self.order,
        };
        let kind_ = b.u32(0, "record type")?;
        if kind_ >= 64 {
            return Ok(0);
        }
        let first = &self.attrs[0].layout;
        let ident = sys::PERF_SAMPLE_IDENTIFIER as u64;
        let id = if self.attrs.iter().all(|a| a.layout.sample_type & ident != 0) {
            if kind_ == sys::PERF_RECORD_SAMPLE {
                Some(b.u64(8, "sample id")?)
            } else if first.sample_id_all {
                Some(b.u64(bytes.len().saturating_sub(8).max(8), "sample id")?)
            } else {
                None
            }
        } else if self.attrs.iter().all(|a| {
            a.layout.sample_type == first.sample_type
                && a.layout.sample_id_all == first.sample_id_all
        }) {
            let parsed = record::parse(first, bytes).map_err(PerfDataError::Record)?;
            match parsed.record {
                Record::Sample(s) => s.id(),
                _ => parsed.sample_id.and_then(|i| i.id),
            }
        } else {
            return Err(PerfDataError::MixedLayouts);
        };
        match id.filter(|&id| id != 0) {
            None => Ok(0),
            Some(id) => self
                .by_id
                .get(&id)
                .copied()
                .ok_or(PerfDataError::NoEvent { id: Some(id) }),
        }
    }

    /// The event a record belongs to ([`PerfData::event_of`]).
    pub fn attr_of(&self, bytes: &[u8]) -> Result<&FileAttr, PerfDataError> {
        Ok(&self.attrs[self.event_of(bytes)?])
    }

    /// Parses a record with its event's layout.
    pub fn parse<'a>(&self, bytes: &'a [u8]) -> Result<Parsed<'a>, PerfDataError> {
        let attr = self.attr_of(bytes)?;
        record::parse(&attr.layout, bytes).map_err(PerfDataError::Record)
    }
}
