//! Which event a record belongs to, and its time, without a full parse.
//!
//! With several events writing into one ring (shared rings, groups), the
//! kernel tags each record with the event's sample id: PERF_SAMPLE_IDENTIFIER
//! (since Linux 3.12) puts it first in a sample and last in the sample_id
//! trailer of every other record (`sample_id_all`, since 2.6.38), at a fixed
//! place whatever the rest of the layout. perf does the same lookup
//! (`evlist__event2id`): when every event shares one layout the id is found
//! by that layout; otherwise every event must carry IDENTIFIER.

use perf_event_core::record::{Header, SampleLayout};
use perf_event_core::ring::RawRecord;
use perf_event_core::sys;
use std::collections::HashMap;
use std::fmt;

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

/// Where the time and id sit in one layout's records, computed once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyOffsets {
    /// Offset of TIME in a PERF_RECORD_SAMPLE, from the record start.
    sample_time: Option<u16>,
    /// Offset of the id (IDENTIFIER or ID) in a sample.
    sample_id: Option<u16>,
    /// Bytes of the sample_id trailer of other records (0: none).
    trailer: u16,
    /// Offset of TIME inside the trailer.
    trailer_time: Option<u16>,
    /// Offset of the id inside the trailer.
    trailer_id: Option<u16>,
}

impl KeyOffsets {
    /// The offsets of `layout`'s records.
    pub fn of(layout: &SampleLayout) -> KeyOffsets {
        let st = layout.sample_type;
        let has = |b: u64| (st & b != 0) as u16;
        let h = Header::SIZE as u16;
        // Sample: IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, ...
        let time_at = h + 8 * (has(IDENTIFIER) + has(IP) + has(TID));
        let sample_time = if st & TIME != 0 { Some(time_at) } else { None };
        let sample_id = if st & IDENTIFIER != 0 {
            Some(h)
        } else if st & ID != 0 {
            Some(time_at + 8 * (has(TIME) + has(ADDR)))
        } else {
            None
        };
        // Trailer: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER.
        let (trailer, trailer_time, trailer_id) = if layout.sample_id_all {
            let len =
                8 * (has(TID) + has(TIME) + has(ID) + has(STREAM_ID) + has(CPU) + has(IDENTIFIER));
            let time = if st & TIME != 0 {
                Some(8 * has(TID))
            } else {
                None
            };
            let id = if st & IDENTIFIER != 0 {
                Some(len - 8)
            } else if st & ID != 0 {
                Some(8 * (has(TID) + has(TIME)))
            } else {
                None
            };
            (len, time, id)
        } else {
            (0, None, None)
        };
        KeyOffsets {
            sample_time,
            sample_id,
            trailer,
            trailer_time,
            trailer_id,
        }
    }

    /// The time and id of `rec` under this layout (`None` for a field the
    /// layout lacks or a record too short to hold it).
    #[inline]
    pub fn key(&self, rec: &RawRecord<'_>) -> Key {
        if rec.header.kind == sys::PERF_RECORD_SAMPLE {
            return Key {
                time: self.sample_time.and_then(|o| u64_at(rec, o as usize)),
                id: self.sample_id.and_then(|o| u64_at(rec, o as usize)),
            };
        }
        let len = rec.len();
        let t = self.trailer as usize;
        if t == 0 || len < Header::SIZE + t {
            return Key::default();
        }
        let base = len - t;
        Key {
            time: self
                .trailer_time
                .and_then(|o| u64_at(rec, base + o as usize)),
            id: self.trailer_id.and_then(|o| u64_at(rec, base + o as usize)),
        }
    }
}

/// A record's time and sample id, as far as its layout has them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Key {
    /// PERF_SAMPLE_TIME (the sample's, or the sample_id trailer's).
    pub time: Option<u64>,
    /// PERF_SAMPLE_IDENTIFIER or PERF_SAMPLE_ID.
    pub id: Option<u64>,
}

/// The u64 at byte `off` of a record lent in one or two parts.
#[inline(always)]
pub(crate) fn u64_at(rec: &RawRecord<'_>, off: usize) -> Option<u64> {
    let (a, b) = rec.parts();
    if let Some(s) = a.get(off..off + 8) {
        return Some(u64::from_ne_bytes(s.try_into().ok()?));
    }
    u64_across(a, b, off)
}

/// [`u64_at`] for a field that wraps the ring's end (rare: out of line).
#[cold]
#[inline(never)]
fn u64_across(a: &[u8], b: &[u8], off: usize) -> Option<u64> {
    let mut out = [0u8; 8];
    for (i, o) in out.iter_mut().enumerate() {
        let at = off + i;
        *o = if at < a.len() {
            a[at]
        } else {
            *b.get(at - a.len())?
        };
    }
    Some(u64::from_ne_bytes(out))
}

/// Why records cannot be told apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MixedLayouts {
    /// Event indices whose layouts lack PERF_SAMPLE_IDENTIFIER.
    pub without_identifier: Vec<usize>,
}

impl fmt::Display for MixedLayouts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the events have different sample layouts, so a record's event can only be found \
             from PERF_SAMPLE_IDENTIFIER (Linux 3.12), which events {:?} lack: add it to their \
             sample_type (and set sample_id_all so non-sample records carry it too)",
            self.without_identifier
        )
    }
}

impl std::error::Error for MixedLayouts {}

/// The map from a record to its event: the events' layouts, the sample id
/// of each event (PERF_EVENT_IOC_ID) and how ids are found.
#[derive(Clone, Debug)]
pub struct Identify {
    layouts: Vec<SampleLayout>,
    offsets: Vec<KeyOffsets>,
    /// Every event has the same key offsets: one lookup serves all.
    uniform: Option<KeyOffsets>,
    by_id: HashMap<u64, usize>,
}

impl Identify {
    /// Events with `layouts` (index = event). Layouts that place the time
    /// or id differently must all carry PERF_SAMPLE_IDENTIFIER.
    pub fn new(layouts: Vec<SampleLayout>) -> Result<Identify, MixedLayouts> {
        let offsets: Vec<KeyOffsets> = layouts.iter().map(KeyOffsets::of).collect();
        let uniform = match offsets.first() {
            Some(first) if offsets.iter().all(|o| o == first) => Some(*first),
            _ => None,
        };
        if uniform.is_none() && offsets.len() > 1 {
            let without_identifier: Vec<usize> = layouts
                .iter()
                .enumerate()
                .filter(|(_, l)| l.sample_type & IDENTIFIER == 0)
                .map(|(i, _)| i)
                .collect();
            if !without_identifier.is_empty() {
                return Err(MixedLayouts { without_identifier });
            }
        }
        Ok(Identify {
            layouts,
            offsets,
            uniform,
            by_id: HashMap::new(),
        })
    }

    /// Records that sample id `id` belongs to `event`.
    pub fn add_id(&mut self, id: u64, event: usize) {
        self.by_id.insert(id, event);
    }

    /// Where every sample's time sits, when every event has the same layout
    /// and it has TIME (what [`Identify::peek`] reads for a sample).
    #[inline]
    pub(crate) fn uniform_sample_time(&self) -> Option<u16> {
        self.uniform.and_then(|o| o.sample_time)
    }

    /// The event of sample id `id`.
    #[inline]
    pub fn event_of(&self, id: u64) -> Option<usize> {
        self.by_id.get(&id).copied()
    }

    /// The layout of `event`.
    pub fn layout(&self, event: usize) -> Option<&SampleLayout> {
        self.layouts.get(event)
    }

    /// Number of events.
    pub fn events(&self) -> usize {
        self.layouts.len()
    }

    /// The time, id and event of `rec` without parsing it; `fallback` is
    /// the event assumed when the id is missing or unknown (the ring's only
    /// event, when it has one).
    #[inline(always)]
    pub fn peek(&self, rec: &RawRecord<'_>, fallback: Option<usize>) -> (Key, Option<usize>) {
        if let Some(off) = self.uniform {
            let key = off.key(rec);
            let event = key.id.and_then(|id| self.event_of(id)).or(fallback);
            return (key, event);
        }
        // Mixed layouts: every event has IDENTIFIER, at a fixed place.
        let id = if rec.header.kind == sys::PERF_RECORD_SAMPLE {
            u64_at(rec, Header::SIZE)
        } else if rec.len() >= Header::SIZE + 8 {
            u64_at(rec, rec.len() - 8)
        } else {
            None
        };
        let event = id.and_then(|id| self.event_of(id)).or(fallback);
        match event.and_then(|e| self.offsets.get(e)) {
            Some(off) => (off.key(rec), event),
            None => (Key { time: None, id }, event),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perf_event_core::record::{self, Record};

    const FIELDS: [u64; 7] = [IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID];

    /// A record of `kind` whose every u64 after the header is distinct.
    fn bytes(kind: u32, words: usize) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&kind.to_ne_bytes());
        b.extend_from_slice(&0u16.to_ne_bytes());
        b.extend_from_slice(&(8 + 8 * words as u16).to_ne_bytes());
        for w in 0..words as u64 {
            b.extend_from_slice(&(0x1000 + w).to_ne_bytes());
        }
        b
    }

    fn raw(data: &[u8]) -> RawRecord<'_> {
        let size = data.len().next_power_of_two();
        let leaked: &'static mut [u8] = Box::leak(vec![0u8; size].into_boxed_slice());
        leaked[..data.len()].copy_from_slice(data);
        RawRecord::at(leaked, 0, data.len() as u64).unwrap()
    }

    #[test]
    fn the_peeked_time_and_id_are_the_parsed_ones_for_every_layout() {
        for mask in 0..1u32 << FIELDS.len() {
            let mut sample_type = CPU; // after the peeked fields: must not move them
            for (i, f) in FIELDS.iter().enumerate() {
                if mask & (1 << i) != 0 {
                    sample_type |= f;
                }
            }
            let layout = SampleLayout {
                sample_type,
                sample_id_all: true,
                ..SampleLayout::default()
            };
            let off = KeyOffsets::of(&layout);
            // A sample: one word per field.
            let words = (sample_type.count_ones()) as usize;
            let b = bytes(sys::PERF_RECORD_SAMPLE, words);
            let Record::Sample(s) = record::parse(&layout, &b).unwrap().record else {
                panic!()
            };
            let key = off.key(&raw(&b));
            assert_eq!(key.time, s.time(), "sample_type {sample_type:#x}");
            assert_eq!(key.id, s.id(), "sample_type {sample_type:#x}");
            // PERF_RECORD_LOST (id, lost) + the sample_id trailer.
            let trailer = layout.sample_id_size() / 8;
            let b = bytes(sys::PERF_RECORD_LOST, 2 + trailer);
            let parsed = record::parse(&layout, &b).unwrap();
            let sid = parsed.sample_id.unwrap_or_default();
            let key = off.key(&raw(&b));
            assert_eq!(key.time, sid.time, "trailer of {sample_type:#x}");
            assert_eq!(key.id, sid.id, "trailer of {sample_type:#x}");
        }
    }

    #[test]
    fn mixed_layouts_need_identifier_and_say_which_events_lack_it() {
        let a = SampleLayout {
            sample_type: TIME,
            ..SampleLayout::default()
        };
        let b = SampleLayout {
            sample_type: TID | TIME,
            ..SampleLayout::default()
        };
        let e = Identify::new(vec![a, b]).unwrap_err();
        assert_eq!(e.without_identifier, [0, 1]);
        let a = SampleLayout {
            sample_type: IDENTIFIER | TIME,
            sample_id_all: true,
            ..a
        };
        let b = SampleLayout {
            sample_type: IDENTIFIER | TID | TIME,
            sample_id_all: true,
            ..b
        };
        let mut ident = Identify::new(vec![a, b]).unwrap();
        ident.add_id(0x1000, 1);
        // A sample of event 1: IDENTIFIER 0x1000, TID 0x1001, TIME 0x1002.
        let rec = bytes(sys::PERF_RECORD_SAMPLE, 3);
        let (key, event) = ident.peek(&raw(&rec), None);
        assert_eq!(
            (key.time, key.id, event),
            (Some(0x1002), Some(0x1000), Some(1))
        );
    }

    #[test]
    fn a_record_wrapping_the_ring_end_is_peeked_across_its_two_parts() {
        let layout = SampleLayout {
            sample_type: IDENTIFIER | TIME,
            sample_id_all: true,
            ..SampleLayout::default()
        };
        let rec = bytes(sys::PERF_RECORD_LOST, 4);
        let mut area = [0u8; 64];
        for (i, b) in rec.iter().enumerate() {
            area[(48 + i) % 64] = *b;
        }
        let r = RawRecord::at(&area, 48, 48 + rec.len() as u64).unwrap();
        assert!(r.wraps());
        let key = KeyOffsets::of(&layout).key(&r);
        let sid = record::parse(&layout, &rec).unwrap().sample_id.unwrap();
        assert_eq!((key.time, key.id), (sid.time, sid.id));
        assert_eq!(key.time, Some(0x1002));
    }
}
