//! The defect's regression tests, the "every present field is returned"
//! rule over random layouts, foreign byte order, and every decoder checked
//! against the bit layouts of the generated bindings (bindgen's own
//! bit-field setters and unions write the words that are decoded here).

// The sys enums' C types differ per architecture.
#![allow(clippy::unnecessary_cast)]

use super::test_util::*;
use super::*;
use crate::read_format::ReadFormat;
use std::vec::Vec;

/// The defect: READ last with bytes after it parsed Ok but read_values()
/// was None (the read section ran to the end of the record).
#[test]
fn read_last_with_trailing_bytes_keeps_its_values() {
    let layout = SampleLayout {
        sample_type: (sys::PERF_SAMPLE_TID | sys::PERF_SAMPLE_READ) as u64,
        read_format: ReadFormat((sys::PERF_FORMAT_ID | sys::PERF_FORMAT_TOTAL_TIME_ENABLED) as u64),
        ..Default::default()
    };
    let n = ByteOrder::NATIVE;
    // tid, then value, time_enabled, id, then 8 stray bytes.
    let bytes = record_in(
        sys::PERF_RECORD_SAMPLE,
        &words(&[7, 100, 50, 9, 0xdead], n),
        n,
    );
    let s = sample(&layout, &bytes).unwrap();
    assert_eq!(s.read().map(<[u8]>::len), Some(24));
    let r = s
        .read_values()
        .expect("the READ values the layout promises");
    assert_eq!(r.get(0).map(|v| (v.value, v.id)), Some((100, Some(9))));
    assert_eq!(r.time_enabled(), Some(50));
    assert_eq!(s.unreturned_field(), None);
}

/// The defect's second half: a group read with nr == 0 was accepted by
/// the sample parser and refused by ReadFormat::parse.
#[test]
fn group_read_with_zero_members_is_an_error_naming_the_field() {
    let layout = SampleLayout {
        sample_type: (sys::PERF_SAMPLE_IP | sys::PERF_SAMPLE_READ) as u64,
        read_format: ReadFormat(sys::PERF_FORMAT_GROUP as u64),
        ..Default::default()
    };
    let n = ByteOrder::NATIVE;
    let bytes = record_in(sys::PERF_RECORD_SAMPLE, &words(&[1, 0], n), n);
    assert_eq!(
        sample(&layout, &bytes),
        Err(RecordError::Invalid {
            field: "read",
            at: 8,
            why: crate::read_format::ReadError::EmptyGroup.reason(),
        })
    );
    assert_eq!(
        ReadFormat(sys::PERF_FORMAT_GROUP as u64)
            .parse(&words(&[0], n))
            .err(),
        Some(crate::read_format::ReadError::EmptyGroup)
    );
}

/// The general rule, over random layouts and random (often malformed)
/// bodies in both byte orders: Ok implies every present field is returned;
/// a failure names a field of the table or a part of one.
#[test]
fn ok_parses_return_every_present_field() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut ok, mut failed) = (0, 0);
    // Under miri (the interpreter, ~1000x slower) a sample of the rounds.
    let rounds = if cfg!(miri) { 200 } else { 40_000 };
    for round in 0..rounds {
        let layout = SampleLayout {
            sample_type: rng.next() & ((1 << 25) - 1),
            read_format: ReadFormat(rng.next() & 0x1f),
            branch_sample_type: rng.next() & (layout::HW_INDEX | layout::COUNTERS),
            regs_user: (rng.next() % 4) as u32,
            regs_intr: (rng.next() % 4) as u32,
            sample_id_all: false,
            byte_order: if round % 2 == 0 {
                ByteOrder::Little
            } else {
                ByteOrder::Big
            },
        };
        // Small words so that counts and sizes are often plausible.
        let n = (rng.next() % 24) as usize;
        let vals: Vec<u64> = (0..n).map(|_| rng.next() % 4).collect();
        let mut body = words(&vals, layout.byte_order);
        body.truncate(body.len() - (rng.next() % 8) as usize % (body.len() + 1));
        let bytes = record_in(sys::PERF_RECORD_SAMPLE, &body, layout.byte_order);
        match sample(&layout, &bytes) {
            Ok(s) => {
                ok += 1;
                assert_eq!(s.unreturned_field(), None, "{layout:?} {vals:?}");
            }
            Err(RecordError::Truncated { field, .. } | RecordError::Invalid { field, .. }) => {
                failed += 1;
                let base = field.split('.').next().unwrap();
                assert!(
                    layout::FIELDS.iter().any(|f| f.name == base) || base == "sample",
                    "{field}"
                );
            }
            Err(e) => panic!("{e}"),
        }
    }
    let enough = rounds / 40;
    assert!(ok > enough && failed > enough, "ok {ok} failed {failed}");
}

/// The same sample written big- and little-endian parses to the same values.
#[test]
fn foreign_byte_order_gives_the_same_values() {
    let st = (sys::PERF_SAMPLE_IP
        | sys::PERF_SAMPLE_TID
        | sys::PERF_SAMPLE_TIME
        | sys::PERF_SAMPLE_READ
        | sys::PERF_SAMPLE_CALLCHAIN
        | sys::PERF_SAMPLE_CPU
        | sys::PERF_SAMPLE_REGS_USER) as u64;
    let rf = ReadFormat((sys::PERF_FORMAT_GROUP | sys::PERF_FORMAT_ID) as u64);
    let mut values = Vec::new();
    for order in [ByteOrder::Little, ByteOrder::Big] {
        let layout = SampleLayout {
            sample_type: st,
            read_format: rf,
            regs_user: 2,
            ..Default::default()
        }
        .with_byte_order(order);
        let w = |v: &[u64]| words(v, order);
        let u32s = |a: u32, b: u32| -> Vec<u8> {
            match order {
                ByteOrder::Little => [a.to_le_bytes(), b.to_le_bytes()].concat(),
                ByteOrder::Big => [a.to_be_bytes(), b.to_be_bytes()].concat(),
            }
        };
        let mut body = w(&[0xffff_8000_1234]);
        body.extend(u32s(41, 42));
        body.extend(w(&[1_000_000]));
        body.extend(u32s(3, 0));
        body.extend(w(&[2, 11, 101, 12, 102])); // group: nr, {value, id} x 2
        body.extend(w(&[3, sys::PERF_CONTEXT_USER as u64, 0x400000, 0x400100]));
        body.extend(w(&[sys::PERF_SAMPLE_REGS_ABI_64 as u64, 0x7ff0, 0x401000]));
        let bytes = record_in(sys::PERF_RECORD_SAMPLE, &body, order);
        let s = sample(&layout, &bytes).unwrap();
        assert_eq!(s.byte_order(), order);
        let r = s.read_values().unwrap();
        values.push((
            s.ip(),
            s.pid_tid(),
            s.time(),
            s.cpu(),
            r.values().map(|v| (v.value, v.id)).collect::<Vec<_>>(),
            s.callchain().unwrap().iter().collect::<Vec<_>>(),
            s.regs_user().unwrap().values.iter().collect::<Vec<_>>(),
        ));
    }
    assert_eq!(values[0], values[1]);
    assert_eq!(values[0].4, [(11, Some(101)), (12, Some(102))]);
    // A non-sample record with a trailer, both orders.
    for order in [ByteOrder::Little, ByteOrder::Big] {
        let layout = SampleLayout {
            sample_type: sys::PERF_SAMPLE_TIME as u64,
            sample_id_all: true,
            ..Default::default()
        }
        .with_byte_order(order);
        let bytes = record_in(sys::PERF_RECORD_LOST, &words(&[5, 6, 77], order), order);
        let p = parse(&layout, &bytes).unwrap();
        assert_eq!(p.record, Record::Lost { id: 5, lost: 6 });
        assert_eq!(p.sample_id.unwrap().time, Some(77));
    }
}

#[test]
fn branch_flags_match_the_bindgen_bit_fields() {
    let mut rng = Rng(12345);
    // Every round calls every setter and decoder; under miri (~1000x
    // slower, ~50 s for 2000 rounds) a tenth of them.
    for _ in 0..if cfg!(miri) { 200 } else { 2000 } {
        let r = rng.next();
        let mut e = sys::perf_branch_entry::default();
        e.set_mispred(r & 1);
        e.set_predicted((r >> 1) & 1);
        e.set_in_tx((r >> 2) & 1);
        e.set_abort((r >> 3) & 1);
        e.set_cycles((r >> 4) & 0xffff);
        e.set_type((r >> 20) & 0xf);
        e.set_spec((r >> 24) & 3);
        e.set_new_type((r >> 26) & 0xf);
        e.set_priv((r >> 30) & 7);
        // The word exactly as this machine's kernel would store it.
        let word = flags_word(&e);
        let f = BranchFlags::from_word(word, ByteOrder::NATIVE);
        assert_eq!(
            (f.mispred, f.predicted, f.in_tx, f.abort),
            (
                e.mispred() != 0,
                e.predicted() != 0,
                e.in_tx() != 0,
                e.abort() != 0
            )
        );
        assert_eq!(
            (
                f.cycles as u64,
                f.kind as u64,
                f.spec as u64,
                f.new_type as u64,
                f.privilege as u64
            ),
            (e.cycles(), e.type_(), e.spec(), e.new_type(), e.priv_())
        );
        assert_eq!(f.to_word(ByteOrder::NATIVE), word);
        // The mirror layout a big-endian kernel writes round-trips too.
        let other = ByteOrder::NATIVE.reversed();
        assert_eq!(BranchFlags::from_word(f.to_word(other), other), f);
    }
    let e = BranchEntry {
        counters: Some(0b10_01_11),
        ..Default::default()
    };
    assert_eq!(
        (
            e.counter(0, 2),
            e.counter(1, 2),
            e.counter(2, 2),
            e.counter(32, 2)
        ),
        (Some(3), Some(1), Some(2), None)
    );
}

/// The flags word of `e` as the u64 its memory holds on this machine:
/// bindgen's bit `i` is memory byte `i / 8`, bit `i % 8` from the least
/// significant end on little-endian machines and from the most significant
/// end on big-endian ones.
fn flags_word(e: &sys::perf_branch_entry) -> u64 {
    (0..64).fold(0, |w, i| {
        let bit = e._bitfield_1.get_bit(i) as u64;
        let at = if cfg!(target_endian = "little") {
            i
        } else {
            63 - i
        };
        w | bit << at
    })
}

#[test]
fn data_src_matches_the_bindgen_bit_fields() {
    let mut rng = Rng(777);
    // Every round calls every setter and decoder; under miri (~1000x
    // slower, ~50 s for 2000 rounds) a tenth of them.
    for _ in 0..if cfg!(miri) { 200 } else { 2000 } {
        let r = rng.next();
        let mut u = sys::perf_mem_data_src::default();
        // SAFETY-free: the union is written through bindgen's setters on its
        // bit-field struct and read back as `val`, as perf does.
        let mut b = sys::perf_mem_data_src__bindgen_ty_1::default();
        b.set_mem_op(r & 0x1f);
        b.set_mem_lvl((r >> 5) & 0x3fff);
        b.set_mem_snoop((r >> 19) & 0x1f);
        b.set_mem_lock((r >> 24) & 3);
        b.set_mem_dtlb((r >> 26) & 0x7f);
        b.set_mem_lvl_num((r >> 33) & 0xf);
        b.set_mem_remote((r >> 37) & 1);
        b.set_mem_snoopx((r >> 38) & 3);
        b.set_mem_blk((r >> 40) & 7);
        b.set_mem_hops((r >> 43) & 7);
        b.set_mem_region((r >> 46) & 0x1f);
        u.__bindgen_anon_1 = b;
        let word = mem_word(&b);
        let d = DataSrc::from_word(word);
        assert_eq!(
            (
                d.op as u64,
                d.lvl as u64,
                d.snoop as u64,
                d.lock as u64,
                d.dtlb as u64
            ),
            (
                b.mem_op(),
                b.mem_lvl(),
                b.mem_snoop(),
                b.mem_lock(),
                b.mem_dtlb()
            )
        );
        assert_eq!(
            (
                d.lvl_num as u64,
                d.remote as u64,
                d.snoopx as u64,
                d.blk as u64
            ),
            (b.mem_lvl_num(), b.mem_remote(), b.mem_snoopx(), b.mem_blk())
        );
        assert_eq!(
            (d.hops as u64, d.region as u64),
            (b.mem_hops(), b.mem_region())
        );
        assert_eq!(d.to_word(), word);
        // The kernel's own composition macro gives the same word.
        assert_eq!(
            DataSrc::from_word(
                (d.op as u64) << sys::PERF_MEM_OP_SHIFT
                    | (d.lvl_num as u64) << sys::PERF_MEM_LVLNUM_SHIFT
            )
            .lvl_num,
            d.lvl_num
        );
        let _ = u;
    }
}

/// The `val` of `perf_mem_data_src` from its bit-field struct (same
/// numbering rule as [`flags_word`]; on big-endian machines the kernel
/// reverses the declaration so that the value's bits are the same).
fn mem_word(b: &sys::perf_mem_data_src__bindgen_ty_1) -> u64 {
    (0..64).fold(0, |w, i| {
        let bit = b._bitfield_1.get_bit(i) as u64;
        let at = if cfg!(target_endian = "little") {
            i
        } else {
            63 - i
        };
        w | bit << at
    })
}

#[test]
fn weight_struct_matches_the_bindgen_union() {
    let mut rng = Rng(99);
    for _ in 0..1000 {
        let r = rng.next();
        let parts = sys::perf_sample_weight__bindgen_ty_1 {
            var1_dw: r as u32,
            var2_w: (r >> 32) as u16,
            var3_w: (r >> 48) as u16,
        };
        // The struct's fields in memory order, read back as the u64 `full`.
        let mut mem = Vec::new();
        if cfg!(target_endian = "little") {
            mem.extend(parts.var1_dw.to_ne_bytes());
            mem.extend(parts.var2_w.to_ne_bytes());
            mem.extend(parts.var3_w.to_ne_bytes());
        } else {
            mem.extend(parts.var3_w.to_ne_bytes());
            mem.extend(parts.var2_w.to_ne_bytes());
            mem.extend(parts.var1_dw.to_ne_bytes());
        }
        assert_eq!(
            core::mem::offset_of!(sys::perf_sample_weight__bindgen_ty_1, var1_dw),
            if cfg!(target_endian = "little") { 0 } else { 4 }
        );
        let full = u64::from_ne_bytes(mem.try_into().unwrap());
        let w = Weight::from_word(full);
        assert_eq!(
            (w.var1_dw, w.var2_w, w.var3_w),
            (parts.var1_dw, parts.var2_w, parts.var3_w)
        );
        assert_eq!(w.to_word(), full);
    }
}

#[test]
fn txn_flags_and_abort_code() {
    let t = Txn(
        (sys::PERF_TXN_TRANSACTION | sys::PERF_TXN_CONFLICT | sys::PERF_TXN_RETRY) as u64
            | 0xabcd << sys::PERF_TXN_ABORT_SHIFT,
    );
    assert!(t.transaction() && t.conflict() && t.retry());
    assert!(!t.elision() && !t.sync() && !t.is_async());
    assert!(!t.capacity_read() && !t.capacity_write());
    assert_eq!((t.abort_code(), t.unknown_bits()), (0xabcd, 0));
    assert_eq!(Txn(1 << 20).unknown_bits(), 1 << 20);
}

#[test]
fn callchain_segments_split_at_the_markers() {
    let n = ByteOrder::NATIVE;
    let chain = [
        sys::PERF_CONTEXT_KERNEL as u64,
        0xffff_0001,
        0xffff_0002,
        sys::PERF_CONTEXT_USER as u64,
        0x401,
        sys::PERF_CONTEXT_GUEST as u64,
        sys::PERF_CONTEXT_GUEST_USER as u64,
        0x77,
    ];
    let bytes = words(&chain, n);
    let c = Callchain::new(U64s::new(&bytes, false));
    let segs: Vec<(Context, Vec<u64>)> = c
        .segments()
        .map(|(ctx, ips)| (ctx, ips.iter().collect()))
        .collect();
    assert_eq!(
        segs,
        [
            (Context::Kernel, vec![0xffff_0001, 0xffff_0002]),
            (Context::User, vec![0x401]),
            (Context::Guest, vec![]),
            (Context::GuestUser, vec![0x77]),
        ]
    );
    assert_eq!(c.addresses(Context::User).collect::<Vec<_>>(), [0x401]);
    assert!(Context::GuestUser.is_guest() && !Context::User.is_guest());
    let bare = words(&[5, 6], n);
    let segs: Vec<_> = Callchain::new(U64s::new(&bare, false)).segments().collect();
    assert_eq!(segs.len(), 1);
    assert_eq!(segs[0].0, Context::Unmarked);
}

#[test]
fn branch_stack_entries_with_counters_and_hw_idx() {
    let layout = SampleLayout {
        sample_type: sys::PERF_SAMPLE_BRANCH_STACK as u64,
        branch_sample_type: layout::HW_INDEX | layout::COUNTERS,
        ..Default::default()
    };
    let n = ByteOrder::NATIVE;
    let f0 = BranchFlags {
        mispred: true,
        cycles: 300,
        kind: sys::PERF_BR_CALL as u8,
        privilege: sys::PERF_BR_PRIV_USER as u8,
        ..Default::default()
    };
    let f1 = BranchFlags {
        predicted: true,
        kind: sys::PERF_BR_EXTEND_ABI as u8,
        new_type: sys::PERF_BR_NEW_FAULT_DATA as u8,
        spec: sys::PERF_BR_SPEC_CORRECT_PATH as u8,
        ..Default::default()
    };
    let body = words(
        &[
            2,
            17,
            0x10,
            0x20,
            f0.to_word(n),
            0x30,
            0x40,
            f1.to_word(n),
            0b0110,
            0b1001,
        ],
        n,
    );
    let bytes = record_in(sys::PERF_RECORD_SAMPLE, &body, n);
    let s = sample(&layout, &bytes).unwrap();
    let b = s.branch_stack().unwrap();
    assert_eq!((b.hw_idx, b.len()), (Some(17), 2));
    let e: Vec<BranchEntry> = b.iter().collect();
    assert_eq!((e[0].from, e[0].to, e[0].flags), (0x10, 0x20, f0));
    assert_eq!((e[1].from, e[1].to, e[1].flags), (0x30, 0x40, f1));
    assert!(e[1].flags.is_extended());
    assert_eq!((e[0].counter(0, 2), e[0].counter(1, 2)), (Some(2), Some(1)));
    assert_eq!(e[1].counters, Some(0b1001));
}

/// PERF_RECORD_READ keeps the same rule: the values must be exactly what
/// the read_format says.
#[test]
fn read_records_hold_exactly_their_values() {
    let n = ByteOrder::NATIVE;
    let layout = SampleLayout {
        read_format: ReadFormat((sys::PERF_FORMAT_ID | sys::PERF_FORMAT_GROUP) as u64),
        ..Default::default()
    };
    let mut body = vec![1, 0, 0, 0, 2, 0, 0, 0];
    body.extend(words(&[1, 10, 11], n)); // nr 1: value, id
    let ok = record_in(sys::PERF_RECORD_READ, &body, n);
    let Record::Read { pid, values, .. } = parse(&layout, &ok).unwrap().record else {
        panic!()
    };
    assert_eq!(pid, u32::from_ne_bytes([1, 0, 0, 0]));
    let r = layout.read_format.parse_in(values, n).unwrap();
    assert_eq!(r.get(0).map(|v| (v.value, v.id)), Some((10, Some(11))));
    body.extend(words(&[0], n)); // a stray word
    let bad = record_in(sys::PERF_RECORD_READ, &body, n);
    assert!(matches!(
        parse(&layout, &bad),
        Err(RecordError::Invalid {
            field: "read.values",
            at: 8,
            ..
        })
    ));
}
