//! The ring set's merge and id/time peek over arbitrary ring contents,
//! shared by the `ringset_merge` fuzz target and its corpus replay in
//! `tests/source_tree/fuzz_corpus.rs`. Input: byte 0 = rings (1-4), byte 1 = which
//! sample fields the events have, byte 2 = merge capacity, byte 3 = where
//! each ring's reader starts, byte 4 = round pattern; the rest is split
//! into the rings' data areas (each cut to a power of two).
//!
//! Checked: no panic and no out-of-bounds read; every record taken into the
//! merge comes out exactly once; when no release was forced and each ring's
//! times rise, the merged times never go down.

use perf_event_core::record::SampleLayout;
use perf_event_core::ring::RawRecord;
use perf_event_host::ringset::{Identify, KeyOffsets, Merge};

const FIELDS: [u64; 7] = [
    1 << 16, // IDENTIFIER
    1 << 0,  // IP
    1 << 1,  // TID
    1 << 2,  // TIME
    1 << 6,  // ID
    1 << 9,  // STREAM_ID
    1 << 7,  // CPU
];

/// Returns how many records went through the merge.
pub fn check(data: &[u8]) -> usize {
    if data.len() < 5 {
        return 0;
    }
    let rings = usize::from(data[0] % 4) + 1;
    let mut sample_type = 0;
    for (i, f) in FIELDS.iter().enumerate() {
        if data[1] & (1 << i) != 0 {
            sample_type |= f;
        }
    }
    let layout = SampleLayout {
        sample_type,
        sample_id_all: data[1] & 0x80 != 0,
        ..SampleLayout::default()
    };
    // Two events with the same layout, so ids map and the uniform path runs;
    // a third with IDENTIFIER forced exercises the mixed path.
    let mut mixed = layout;
    mixed.sample_type |= 1 << 16;
    let ident = Identify::new(vec![layout, layout]).expect("same layouts");
    let mixed_ident = Identify::new(vec![
        mixed,
        SampleLayout {
            sample_type: (1 << 16) | (1 << 2),
            ..mixed
        },
    ]);
    let offsets = KeyOffsets::of(&layout);
    let capacity = usize::from(data[2] % 16) + 1;
    let body = &data[5..];
    let chunk = body.len() / rings;
    let mut areas = Vec::new();
    for r in 0..rings {
        let part = &body[r * chunk..(r + 1) * chunk];
        let size = if part.is_empty() {
            0
        } else {
            1usize << (usize::BITS - 1 - part.len().leading_zeros())
        };
        areas.push(&part[..size]);
    }
    // Walk each ring the way the set does, remembering what each ring holds.
    let mut queues: Vec<Vec<(u64, u32, Option<u64>)>> = Vec::new();
    for area in &areas {
        let mut q = Vec::new();
        if area.is_empty() {
            queues.push(q);
            continue;
        }
        let start = u64::from(data[3]) * 8 % area.len() as u64;
        let head = start + area.len() as u64;
        let mut pos = start;
        while pos != head {
            match RawRecord::at(area, pos, head) {
                Ok(rec) => {
                    assert!(rec.len() >= 8 && rec.len() <= area.len());
                    let key = offsets.key(&rec);
                    let (k2, _) = ident.peek(&rec, Some(0));
                    assert_eq!(key, k2);
                    if let Ok(m) = &mixed_ident {
                        let _ = m.peek(&rec, None);
                    }
                    q.push((pos, rec.len() as u32, key.time));
                    pos += rec.len() as u64;
                }
                Err(_) => break,
            }
        }
        queues.push(q);
    }
    // Feed the merge in rounds; a ring counts as drained only once all of
    // its records are in (what the round barrier guarantees of a real ring),
    // and a round has a barrier's bound when the merge is blocked, as in
    // `RingSet::fill`.
    let mut merge = Merge::new(rings, capacity);
    let mut next = vec![0usize; rings];
    let mut out = Vec::new();
    let mut pattern = data[4];
    loop {
        let bound = if merge.blocked() {
            merge.seen_max()
        } else {
            None
        };
        merge.begin_round(bound, true);
        let mut progressed = false;
        for r in 0..rings {
            let take = usize::from(pattern & 3) + 1;
            pattern = pattern.rotate_left(2);
            for _ in 0..take {
                let Some(&(pos, len, time)) = queues[r].get(next[r]) else {
                    break;
                };
                if !merge.push(r, pos, len, time, None) {
                    break;
                }
                next[r] += 1;
                progressed = true;
            }
            if next[r] == queues[r].len() {
                merge.drained(r);
            }
        }
        while let Some(p) = merge.pop() {
            out.push(p);
            progressed = true;
        }
        if !progressed && next.iter().zip(&queues).all(|(n, q)| *n == q.len()) {
            break;
        }
        if !progressed && merge.held() == 0 {
            break;
        }
    }
    while let Some(p) = merge.flush() {
        out.push(p);
    }
    let total: usize = queues.iter().map(Vec::len).sum();
    assert_eq!(out.len(), total, "every record comes out once");
    let mut seen: Vec<(u32, u64)> = out.iter().map(|p| (p.ring, p.pos)).collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), total);
    let rising = queues.iter().all(|q| {
        let times: Vec<u64> = q.iter().filter_map(|x| x.2).collect();
        times.windows(2).all(|w| w[0] <= w[1])
    });
    let all_timed = queues.iter().flatten().all(|x| x.2.is_some());
    if merge.stats().forced == 0 && rising && all_timed {
        assert!(
            out.windows(2).all(|w| w[0].time <= w[1].time),
            "merged out of order"
        );
        assert_eq!(merge.stats().out_of_order, 0);
    }
    total
}
