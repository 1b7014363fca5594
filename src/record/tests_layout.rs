//! Layouts from attr bytes of either byte order, and the prefix offsets
//! computed once per layout, against the full parse.

// The sys enums' C types differ per architecture.
#![allow(clippy::unnecessary_cast)]

use super::test_util::*;
use super::*;
use std::vec::Vec;

/// An attr written as bytes in both orders gives the same layout; the
/// offsets used are the generated struct's.
#[test]
fn layout_from_attr_bytes_in_both_orders() {
    use crate::attr::Attr;
    assert_eq!(
        core::mem::offset_of!(sys::perf_event_attr, sample_type),
        layout::ATTR_SAMPLE_TYPE
    );
    assert_eq!(
        core::mem::offset_of!(sys::perf_event_attr, read_format),
        layout::ATTR_READ_FORMAT
    );
    assert_eq!(
        core::mem::offset_of!(sys::perf_event_attr, branch_sample_type),
        layout::ATTR_BRANCH_SAMPLE_TYPE
    );
    assert_eq!(
        core::mem::offset_of!(sys::perf_event_attr, sample_regs_user),
        layout::ATTR_REGS_USER
    );
    assert_eq!(
        core::mem::offset_of!(sys::perf_event_attr, sample_regs_intr),
        layout::ATTR_REGS_INTR
    );
    let mut raw = sys::perf_event_attr {
        sample_type: (sys::PERF_SAMPLE_IP | sys::PERF_SAMPLE_READ | sys::PERF_SAMPLE_REGS_USER)
            as u64,
        read_format: sys::PERF_FORMAT_ID as u64,
        branch_sample_type: sys::PERF_SAMPLE_BRANCH_HW_INDEX as u64,
        sample_regs_user: 0b1011,
        sample_regs_intr: 0b1,
        ..Default::default()
    };
    raw.set_sample_id_all(1);
    raw.set_disabled(1);
    let want = SampleLayout::from_attr(&Attr::from_raw(raw));
    assert!(want.sample_id_all);
    // Native bytes: the struct's words in this machine's order.
    let native = attr_words(&raw, ByteOrder::NATIVE);
    assert_eq!(
        SampleLayout::from_attr_bytes(&native, ByteOrder::NATIVE),
        Ok(want)
    );
    // What a machine of the other order writes: each word byte-swapped, the
    // bit-field word numbered from the other end.
    let other = ByteOrder::NATIVE.reversed();
    let foreign = attr_words(&raw, other);
    assert_eq!(
        SampleLayout::from_attr_bytes(&foreign, other),
        Ok(want.with_byte_order(other))
    );
    assert!(SampleLayout::from_attr_bytes(&native[..60], ByteOrder::NATIVE).is_err());
}

/// The attr's first 104 bytes as a machine of byte order `order` stores them.
fn attr_words(raw: &sys::perf_event_attr, order: ByteOrder) -> Vec<u8> {
    let mut flags = (0..64).fold(0u64, |w, i| w | (raw._bitfield_1.get_bit(i) as u64) << i);
    if order == ByteOrder::Big {
        flags = flags.reverse_bits(); // declaration bit 0 is the top bit
    }
    let w = |v: u64| match order {
        ByteOrder::Little => v.to_le_bytes(),
        ByteOrder::Big => v.to_be_bytes(),
    };
    let mut out = vec![0u8; 104];
    for (at, v) in [
        (layout::ATTR_SAMPLE_TYPE, raw.sample_type),
        (layout::ATTR_READ_FORMAT, raw.read_format),
        (layout::ATTR_FLAGS, flags),
        (layout::ATTR_BRANCH_SAMPLE_TYPE, raw.branch_sample_type),
        (layout::ATTR_REGS_USER, raw.sample_regs_user),
        (layout::ATTR_REGS_INTR, raw.sample_regs_intr),
    ] {
        out[at..at + 8].copy_from_slice(&w(v));
    }
    out
}

/// The prefix read straight from the record agrees with the full parse, for
/// random layouts in both byte orders.
#[test]
fn sample_prefix_agrees_with_the_full_parse() {
    let mut rng = Rng(4242);
    for round in 0..5000 {
        let order = if round % 2 == 0 {
            ByteOrder::Little
        } else {
            ByteOrder::Big
        };
        let layout = SampleLayout {
            sample_type: rng.next() & ((1 << 25) - 1) & !(sys::PERF_SAMPLE_READ as u64),
            ..Default::default()
        }
        .with_byte_order(order);
        let vals: Vec<u64> = (0..12).map(|_| rng.next() % 8).collect();
        let bytes = record_in(sys::PERF_RECORD_SAMPLE, &words(&vals, order), order);
        let p = layout.prefix();
        assert!(p.is_sample(&bytes));
        let Ok(s) = sample(&layout, &bytes) else {
            continue;
        };
        assert_eq!(
            (
                p.id(&bytes),
                p.ip(&bytes),
                p.pid_tid(&bytes),
                p.time(&bytes)
            ),
            (s.id(), s.ip(), s.pid_tid(), s.time())
        );
        assert_eq!(
            (
                p.addr(&bytes),
                p.stream_id(&bytes),
                p.cpu(&bytes),
                p.period(&bytes)
            ),
            (s.addr(), s.stream_id(), s.cpu(), s.period())
        );
    }
}
