//! The batch reader on a simulated ring: an anonymous mapping laid out like
//! the kernel's (metadata page + data pages), written the way the kernel
//! writes records. Real-kernel behaviour is in tests/ring/ring_kernel.rs.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::*;
use crate::record::{self, Record, SampleLayout};
use core::ops::ControlFlow;
use std::vec::Vec;

fn simulated(pages: usize) -> RingBuffer {
    let page = page_size();
    let len = page * (1 + pages);
    let map = crate::linux::mmap::Mapping::anonymous(len).expect("anonymous mapping");
    RingBuffer {
        base: map.as_ptr(),
        _map: map,
        data_offset: page,
        data_size: len - page,
        writable: true,
    }
}

/// Writes `bytes` at ring position `pos` (wrapping), as the kernel does.
fn put(ring: &RingBuffer, pos: u64, bytes: &[u8]) {
    for (i, b) in bytes.iter().enumerate() {
        let at = ring.data_offset + ((pos as usize + i) & (ring.data_size - 1));
        // SAFETY: inside the simulated mapping; no reader is active.
        unsafe { *ring.base.as_ptr().add(at) = *b };
    }
}

fn set_head(ring: &RingBuffer, head: u64) {
    ring.meta_atomic(offset_of!(sys::perf_event_mmap_page, data_head))
        .store(head as usize, Ordering::Release);
}

fn lost(id: u64, n: u64) -> Vec<u8> {
    let mut r = Vec::new();
    r.extend(sys::PERF_RECORD_LOST.to_ne_bytes());
    r.extend(0u16.to_ne_bytes());
    r.extend(24u16.to_ne_bytes());
    r.extend(id.to_ne_bytes());
    r.extend(n.to_ne_bytes());
    r
}

#[test]
fn records_that_wrap_parse_like_those_that_do_not() {
    let mut ring = simulated(1);
    let size = ring.data_size as u64;
    // Start 8 bytes before the end so the second record straddles the wrap.
    let start = size * 3 - 16;
    ring.set_tail(start);
    for i in 0..4u64 {
        put(&ring, start + i * 24, &lost(i, 100 + i));
    }
    set_head(&ring, start + 4 * 24);
    let layout = SampleLayout::default();
    let mut seen = Vec::new();
    let mut wrapped = 0;
    let mut batch = ring.records();
    while let Some(rec) = batch.next() {
        let rec = rec.unwrap();
        wrapped += rec.wraps() as u32;
        let mut scratch = [0u8; 64];
        let p = rec.parse(&layout, &mut scratch).unwrap();
        match p.record {
            Record::Lost { id, lost } => seen.push((id, lost)),
            other => panic!("{other:?}"),
        }
    }
    drop(batch);
    assert_eq!(wrapped, 1);
    let want: Vec<(u64, u64)> = (0..4).map(|i| (i, 100 + i)).collect();
    assert_eq!(seen, want);
    assert_eq!(ring.tail(), start + 96, "tail advanced after the batch");
    let _ = record::Header::SIZE;
}

#[test]
fn overrun_and_corrupt_headers_are_reported_with_bytes_skipped() {
    let mut ring = simulated(1);
    let size = ring.data_size as u64;
    set_head(&ring, size + 64);
    let mut batch = ring.records();
    assert_eq!(
        batch.next(),
        Some(Err(RingError::Overrun {
            head: size + 64,
            tail: 0,
            skipped: size + 64
        }))
    );
    assert_eq!(batch.next(), None);
    drop(batch);
    assert_eq!(ring.tail(), size + 64);

    // A size below the header, then a size running past head.
    let base = ring.tail();
    put(&ring, base, &[9, 0, 0, 0, 0, 0, 4, 0]);
    set_head(&ring, base + 32);
    let mut batch = ring.records();
    assert_eq!(
        batch.next(),
        Some(Err(RingError::Corrupt {
            at: base,
            size: 4,
            skipped: 32
        }))
    );
    drop(batch);
    let base = ring.tail();
    put(&ring, base, &lost(1, 1));
    set_head(&ring, base + 16);
    let mut batch = ring.records();
    assert_eq!(
        batch.next(),
        Some(Err(RingError::Corrupt {
            at: base,
            size: 24,
            skipped: 16
        }))
    );
}

#[test]
fn page_counts_must_be_powers_of_two() {
    for bad in [0usize, 3, 5, 6, 12] {
        // The check happens before any mmap, so any fd value is fine here.
        // SAFETY: -1 is never closed by this EventFd (forgotten below).
        let fd = unsafe { crate::fd::EventFd::from_raw(-1, 0) };
        assert_eq!(
            RingBuffer::map(&fd, bad).unwrap_err(),
            RingError::PageCount { pages: bad }
        );
        core::mem::forget(fd);
    }
}

#[test]
fn spans_lend_the_bytes_between_two_walked_positions_across_the_wrap() {
    let ring = simulated(1);
    let size = ring.data_size as u64;
    let start = size * 2 - 16;
    ring.set_tail(start);
    let mut written = Vec::new();
    for i in 0..4u64 {
        let r = lost(i, 7);
        put(&ring, start + i * 24, &r);
        written.extend(r);
    }
    set_head(&ring, start + 96);
    let mut peek = ring.peek(start);
    while let Some(r) = peek.next() {
        r.unwrap();
    }
    // The whole walk, wrapping after its first 16 bytes.
    let (a, b) = peek.span(start, peek.pos()).unwrap();
    assert_eq!((a.len(), b.len()), (16, 80));
    assert_eq!([a, b].concat(), written);
    // A part of it that does not wrap, and an empty one.
    let (a, b) = peek.span(start + 24, start + 48).unwrap();
    assert_eq!((a, b.len()), (&written[24..48], 0));
    assert_eq!(peek.span(start + 48, start + 48), Some((&[][..], &[][..])));
    // Outside [tail, head], or backwards: nothing.
    assert_eq!(peek.span(start - 8, start + 8), None);
    assert_eq!(peek.span(start, start + 104), None);
    assert_eq!(peek.span(start + 48, start + 24), None);
}

#[test]
fn each_walks_as_next_stops_when_asked_and_resumes_after_an_error() {
    let ring = simulated(1);
    let size = ring.data_size as u64;
    // Six records wrapping the end, then a corrupt header (size 4).
    let start = size * 2 - 40;
    ring.set_tail(start);
    for i in 0..6u64 {
        put(&ring, start + i * 24, &lost(i, 10 + i));
    }
    put(&ring, start + 144, &[9, 0, 0, 0, 0, 0, 4, 0]);
    set_head(&ring, start + 160);

    // What next() walks, record by record.
    let mut by_next = Vec::new();
    let mut peek = ring.peek(start);
    while let Some(item) = peek.next() {
        by_next.push(item.map(|(at, rec)| (at, rec.parts().0.to_vec(), rec.parts().1.to_vec())));
    }

    // each(): stopped after two records, then resumed to the end.
    let mut by_each = Vec::new();
    let mut peek = ring.peek(start);
    let mut seen = 0;
    let stop = peek.each(|at, after, rec| {
        assert_eq!(after, at + rec.len() as u64);
        by_each.push(Ok((at, rec.parts().0.to_vec(), rec.parts().1.to_vec())));
        seen += 1;
        if seen == 2 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    assert_eq!((stop, peek.pos()), (None, start + 48));
    let err = peek.each(|at, _, rec| {
        by_each.push(Ok((at, rec.parts().0.to_vec(), rec.parts().1.to_vec())));
        ControlFlow::Continue(())
    });
    by_each.extend(err.map(Err));
    assert_eq!(
        err,
        Some(RingError::Corrupt {
            at: start + 144,
            size: 4,
            skipped: 16
        })
    );
    // After the error the walk is at the head: nothing more.
    assert_eq!(peek.pos(), start + 160);
    assert_eq!(peek.each(|_, _, _| unreachable!("past the head")), None);
    assert_eq!(by_each, by_next);
    assert_eq!(by_each.len(), 7);
    // One record wrapped the end (16 bytes before it, 8 after).
    assert!(by_each
        .iter()
        .any(|r| matches!(r, Ok((_, a, b)) if a.len() == 16 && b.len() == 8)));
}
