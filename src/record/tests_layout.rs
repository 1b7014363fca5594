//! Layouts from attr bytes of either byte order, and the prefix offsets
//! computed once per layout, against the full parse.

// The sys enums' C types differ per architecture.
#![allow(clippy::unnecessary_cast)]

use super::test_util::*;
use super::*;
use std::vec::Vec;

/// An attr written as bytes in both orders reads back to the same attr and
/// layout: every field at the generated struct's offset, the bit-field
/// words numbered from the other end on a big-endian machine.
#[test]
fn attrs_from_bytes_in_both_orders() {
    use crate::attr::Attr;
    type A = sys::perf_event_attr;
    let mut raw = A {
        type_: sys::PERF_TYPE_TRACEPOINT,
        size: sys::PERF_ATTR_SIZE_VER8,
        config: 0x1234,
        sample_type: (sys::PERF_SAMPLE_IP | sys::PERF_SAMPLE_READ | sys::PERF_SAMPLE_REGS_USER)
            as u64,
        read_format: sys::PERF_FORMAT_ID as u64,
        bp_type: 3,
        branch_sample_type: sys::PERF_SAMPLE_BRANCH_HW_INDEX as u64,
        sample_regs_user: 0b1011,
        sample_stack_user: 4096,
        clockid: -7,
        sample_regs_intr: 0b1,
        aux_watermark: 77,
        sample_max_stack: 127,
        aux_sample_size: 9,
        sig_data: 0xfeed,
        config3: 33,
        config4: 44,
        ..Default::default()
    };
    raw.__bindgen_anon_1.sample_period = 1000;
    raw.__bindgen_anon_2.wakeup_events = 5;
    raw.__bindgen_anon_3.config1 = 0x11;
    raw.__bindgen_anon_4.config2 = 0x22;
    raw.set_sample_id_all(1);
    raw.set_disabled(1);
    raw.set_precise_ip(2);
    raw.set_sigtrap(1);
    let mut aux = sys::perf_event_attr__bindgen_ty_5__bindgen_ty_1::default();
    aux.set_aux_pause(1);
    raw.__bindgen_anon_5.__bindgen_anon_1 = aux;
    let want_layout = SampleLayout::from_attr(&Attr::from_raw(raw));
    assert!(want_layout.sample_id_all);
    for order in [ByteOrder::Little, ByteOrder::Big] {
        let bytes = attr_bytes(&raw, &aux, order);
        let got = attr_from_bytes(&bytes, order).unwrap();
        let words = |a: &A| {
            (
                (
                    a.type_,
                    a.size,
                    a.config,
                    a.sample_type,
                    a.read_format,
                    a.bp_type,
                ),
                (
                    a.branch_sample_type,
                    a.sample_regs_user,
                    a.sample_stack_user,
                    a.clockid,
                ),
                (
                    a.sample_regs_intr,
                    a.aux_watermark,
                    a.sample_max_stack,
                    a.aux_sample_size,
                ),
                (a.sig_data, a.config3, a.config4),
            )
        };
        assert_eq!(words(&got), words(&raw), "{order:?}");
        assert_eq!(
            (
                got.disabled(),
                got.precise_ip(),
                got.sample_id_all(),
                got.sigtrap()
            ),
            (1, 2, 1, 1)
        );
        assert_eq!((got.inherit(), got.exclude_kernel()), (0, 0));
        assert_eq!(got.aux_action(), raw.aux_action(), "{order:?}");
        assert_ne!(raw.aux_action(), 0);
        assert_eq!(
            SampleLayout::from_attr_bytes(&bytes, order),
            Ok(want_layout.with_byte_order(order))
        );
        // An older, shorter attr (VER0, 64 bytes) leaves the rest zero.
        let old = attr_from_bytes(&bytes[..64], order).unwrap();
        assert_eq!(
            (old.sample_type, old.sample_regs_user),
            (raw.sample_type, 0)
        );
        assert!(attr_from_bytes(&bytes[..60], order).is_err());
    }
}

/// The attr as a machine of byte order `order` stores it, field by field.
fn attr_bytes(
    raw: &sys::perf_event_attr,
    aux: &sys::perf_event_attr__bindgen_ty_5__bindgen_ty_1,
    order: ByteOrder,
) -> Vec<u8> {
    use core::mem::offset_of;
    type A = sys::perf_event_attr;
    let big = order == ByteOrder::Big;
    // Bit-field words: declaration bit 0 is the top bit on big-endian.
    let mut flags = (0..64).fold(0u64, |w, i| w | (raw._bitfield_1.get_bit(i) as u64) << i);
    let mut aux_word = (0..32).fold(0u32, |w, i| w | (aux._bitfield_1.get_bit(i) as u32) << i);
    if big {
        flags = flags.reverse_bits();
        aux_word = aux_word.reverse_bits();
    }
    let mut out = vec![0u8; core::mem::size_of::<A>()];
    let mut put = |at: usize, v: u64, n: usize| {
        let b = if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        let b = if big { &b[8 - n..] } else { &b[..n] };
        out[at..at + n].copy_from_slice(b);
    };
    put(offset_of!(A, type_), raw.type_.into(), 4);
    put(offset_of!(A, size), raw.size.into(), 4);
    put(offset_of!(A, config), raw.config, 8);
    put(offset_of!(A, __bindgen_anon_1), 1000, 8);
    put(offset_of!(A, sample_type), raw.sample_type, 8);
    put(offset_of!(A, read_format), raw.read_format, 8);
    put(offset_of!(A, _bitfield_1), flags, 8);
    put(offset_of!(A, __bindgen_anon_2), 5, 4);
    put(offset_of!(A, bp_type), raw.bp_type.into(), 4);
    put(offset_of!(A, __bindgen_anon_3), 0x11, 8);
    put(offset_of!(A, __bindgen_anon_4), 0x22, 8);
    put(offset_of!(A, branch_sample_type), raw.branch_sample_type, 8);
    put(offset_of!(A, sample_regs_user), raw.sample_regs_user, 8);
    put(
        offset_of!(A, sample_stack_user),
        raw.sample_stack_user.into(),
        4,
    );
    put(offset_of!(A, clockid), raw.clockid as u32 as u64, 4);
    put(offset_of!(A, sample_regs_intr), raw.sample_regs_intr, 8);
    put(offset_of!(A, aux_watermark), raw.aux_watermark.into(), 4);
    put(
        offset_of!(A, sample_max_stack),
        raw.sample_max_stack.into(),
        2,
    );
    put(
        offset_of!(A, aux_sample_size),
        raw.aux_sample_size.into(),
        4,
    );
    put(offset_of!(A, __bindgen_anon_5), aux_word.into(), 4);
    put(offset_of!(A, sig_data), raw.sig_data, 8);
    put(offset_of!(A, config3), raw.config3, 8);
    put(offset_of!(A, config4), raw.config4, 8);
    out
}

/// The prefix read straight from the record agrees with the full parse, for
/// random layouts in both byte orders.
#[test]
fn sample_prefix_agrees_with_the_full_parse() {
    let mut rng = Rng(4242);
    // Under miri (the interpreter, ~1000x slower; this test alone took most
    // of CI's miri step) the first tenth of the rounds: every round runs the
    // same accessors, and 500 random layouts set each of the 24 sample_type
    // bits in about half of them, in both byte orders.
    let rounds = if cfg!(miri) { 500 } else { 5000 };
    for round in 0..rounds {
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
