//! perf's pipe format, for a stream (stdout, a socket): a 16-byte header
//! (magic and size), then only records: each event as
//! PERF_RECORD_HEADER_ATTR (the attr and its ids), each feature as
//! PERF_RECORD_HEADER_FEATURE (its number and its section's bytes) but the
//! tracing data, which is PERF_RECORD_HEADER_TRACING_DATA (a 12-byte
//! record with the data's size, the data after it, outside its size), the
//! data, and at the end PERF_RECORD_HEADER_BUILD_ID records and the
//! sample time span. The reader's side is [`read`].

use super::features::{decode_build_id, encode_build_ids, BuildId, Features};
use super::header::{align, feature, kind, Bytes, FileHeader, MAGIC, PIPE_HEADER_SIZE};
use super::reader::{attr_entry, ids_at, record_len, FileAttr, PerfData};
use super::spool::Out;
use super::writer::{attr_bytes, attr_size_of, header_bytes, RecordedEvent, Writer};
use super::PerfDataError;
use perf_event_core::sys;
use std::io::{self, Write};

impl<W: Write> Writer<W> {
    /// Starts perf's pipe format on `out` (stdout, a socket): the short
    /// header, then each event as PERF_RECORD_HEADER_ATTR, the features
    /// known now as PERF_RECORD_HEADER_FEATURE and, with tracepoint events,
    /// their formats as PERF_RECORD_HEADER_TRACING_DATA (read from tracefs
    /// as [`Writer::create`] does, the same error when they cannot be); the
    /// sample time span and the build ids (PERF_RECORD_HEADER_BUILD_ID)
    /// follow the data.
    pub fn pipe(out: W, events: Vec<RecordedEvent>, mut features: Features) -> io::Result<Self> {
        if features.tracing_data.is_none() {
            features.tracing_data = super::tracing_data::for_events(&events)?;
        }
        let attr_size = attr_size_of(&events);
        let mut w = Writer::new(
            Out::Direct(out),
            events,
            features,
            attr_size,
            FileHeader::default(),
        );
        let mut head = MAGIC.to_ne_bytes().to_vec();
        head.extend_from_slice(&PIPE_HEADER_SIZE.to_ne_bytes());
        for e in &w.events {
            let mut body = attr_bytes(&e.attr, attr_size);
            for id in &e.ids {
                body.extend_from_slice(&id.to_ne_bytes());
            }
            head.extend(header_bytes(kind::HEADER_ATTR, 0, 8 + body.len())?);
            head.extend(body);
        }
        for (f, body) in w.features.encode(attr_size) {
            if f == feature::TRACING_DATA {
                // Its own record, the data after it (perf reads it from
                // the stream): PERF_RECORD_HEADER_TRACING_DATA.
                let aligned = align(body.len(), 8);
                let size = u32::try_from(aligned).map_err(|_| {
                    io::Error::new(io::ErrorKind::InvalidInput, "tracing data over 4 GiB")
                })?;
                head.extend(header_bytes(kind::HEADER_TRACING_DATA, 0, 12)?);
                head.extend_from_slice(&size.to_ne_bytes());
                head.extend_from_slice(&body);
                head.resize(head.len() + aligned - body.len(), 0);
            } else {
                feature_record(&mut head, f, &body);
            }
        }
        w.out.write_all(&head)?;
        w.out.flush()?;
        Ok(w)
    }
}

/// Appends PERF_RECORD_HEADER_FEATURE for feature `f` (skipped when it
/// does not fit a record's 64 KiB).
pub(super) fn feature_record(out: &mut Vec<u8>, f: u32, body: &[u8]) {
    // Records stay 8-aligned: the padding is part of the record.
    let size = align(16 + body.len(), 8);
    let Ok(h) = header_bytes(kind::HEADER_FEATURE, 0, size) else {
        return;
    };
    let start = out.len();
    out.extend(h);
    out.extend_from_slice(&u64::from(f).to_ne_bytes());
    out.extend_from_slice(body);
    out.resize(start + size, 0);
}

/// What a pipe ends with: the build ids as records, the time span.
pub(super) fn tail(ids: &[BuildId], times: Option<(u64, u64)>) -> Vec<u8> {
    let mut tail = encode_build_ids(ids, Some(kind::HEADER_BUILD_ID));
    if let Some((a, b)) = times {
        let body = [a.to_ne_bytes(), b.to_ne_bytes()].concat();
        feature_record(&mut tail, feature::SAMPLE_TIME, &body);
    }
    tail
}

/// Reads a pipe-mode stream into `me`: the attrs, features and build ids
/// its records carry; the data are every record after the header (a stream
/// cut short: up to its last whole record).
pub(super) fn read(me: &mut PerfData, b: Bytes<'_>) -> Result<(), PerfDataError> {
    let start = PIPE_HEADER_SIZE as usize;
    let end = b.b.len();
    let mut at = start;
    while at < end {
        let len = match record_len(b, at, end) {
            Ok(len) => len,
            // A stream cut short: the records up to there.
            Err(PerfDataError::Truncated { .. }) => {
                me.recovered = true;
                break;
            }
            Err(e) => return Err(e),
        };
        let rec = Bytes {
            b: &b.b[at..at + len],
            order: b.order,
        };
        match b.u32(at, "record type")? {
            kind::HEADER_ATTR => {
                let size = match rec.u32(8 + 4, "attr size")? {
                    0 => sys::PERF_ATTR_SIZE_VER0 as usize,
                    s => s as usize,
                };
                let attr = rec.slice(8, size, "attr")?;
                let (raw, layout) = attr_entry(b, attr)?;
                let n = (len - (8 + size).min(len)) / 8;
                me.attrs.push(FileAttr {
                    raw,
                    layout,
                    ids: ids_at(rec, 8 + size, n)?,
                    name: None,
                });
            }
            kind::HEADER_FEATURE => {
                let f = rec.u64(8, "feature id")?;
                let f = u32::try_from(f).map_err(|_| PerfDataError::Invalid {
                    what: "feature id",
                    at: at + 8,
                })?;
                me.features.decode(
                    f,
                    Bytes {
                        b: &rec.b[16.min(len)..],
                        order: b.order,
                    },
                )?;
            }
            kind::HEADER_TRACING_DATA => {
                let size = b.u16(at + 6, "record size")? as usize;
                me.features.tracing_data = Some(rec.b[size.min(len)..].to_vec());
            }
            kind::HEADER_BUILD_ID => {
                let (id, _) = decode_build_id(rec)?;
                me.features.build_ids.get_or_insert_with(Vec::new).push(id);
            }
            _ => {}
        }
        at += len;
    }
    me.data = start..at;
    Ok(())
}
