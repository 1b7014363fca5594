//! Records built by hand as the header documents them.

use super::*;
use std::vec::Vec;

fn record(kind: u32, misc: u16, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend(kind.to_ne_bytes());
    out.extend(misc.to_ne_bytes());
    out.extend(((8 + body.len()) as u16).to_ne_bytes());
    out.extend(body);
    out
}

fn u64s(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn pid_tid(pid: u32, tid: u32) -> Vec<u8> {
    let mut v = pid.to_ne_bytes().to_vec();
    v.extend(tid.to_ne_bytes());
    v
}

#[test]
fn sample_with_many_fields() {
    let layout = SampleLayout {
        sample_type: (sys::PERF_SAMPLE_IP
            | sys::PERF_SAMPLE_TID
            | sys::PERF_SAMPLE_TIME
            | sys::PERF_SAMPLE_CALLCHAIN
            | sys::PERF_SAMPLE_RAW
            | sys::PERF_SAMPLE_CPU
            | sys::PERF_SAMPLE_PERIOD) as u64,
        ..Default::default()
    };
    let mut body = u64s(&[0x1234]);
    body.extend(pid_tid(10, 11));
    body.extend(u64s(&[999]));
    body.extend(pid_tid(3, 0));
    body.extend(u64s(&[1, 2, 0xa, 0xb]));
    body.extend(4u32.to_ne_bytes());
    body.extend([1, 2, 3, 4]);
    let bytes = record(sys::PERF_RECORD_SAMPLE, 2, &body);
    let p = parse(&layout, &bytes).unwrap();
    let Record::Sample(s) = p.record else {
        panic!()
    };
    assert_eq!(s.ip(), Some(0x1234));
    assert_eq!(s.pid_tid(), Some((10, 11)));
    assert_eq!(s.time(), Some(999));
    assert_eq!(s.cpu(), Some(3));
    assert_eq!(s.period(), Some(1));
    assert_eq!(
        s.callchain().unwrap().iter().collect::<Vec<_>>(),
        [0xa, 0xb]
    );
    assert_eq!(s.raw(), Some(&[1u8, 2, 3, 4][..]));
    assert_eq!(
        (s.addr(), s.id(), s.weight(), s.aux()),
        (None, None, None, None)
    );
}

#[test]
fn non_sample_records_with_trailer() {
    let layout = SampleLayout {
        sample_type: (sys::PERF_SAMPLE_TID | sys::PERF_SAMPLE_TIME) as u64,
        sample_id_all: true,
        ..Default::default()
    };
    let mut body = pid_tid(5, 6);
    body.extend(b"bash\0\0\0\0");
    body.extend(pid_tid(5, 6));
    body.extend(u64s(&[77]));
    let bytes = record(sys::PERF_RECORD_COMM, 0, &body);
    let p = parse(&layout, &bytes).unwrap();
    assert_eq!(
        p.record,
        Record::Comm {
            pid: 5,
            tid: 6,
            comm: b"bash"
        }
    );
    assert_eq!(p.sample_id.unwrap().time, Some(77));
}

#[test]
fn sample_with_every_field_finds_each_in_order() {
    let st = (sys::PERF_SAMPLE_MAX as u64 - 1) & !(sys::PERF_SAMPLE_WEIGHT_STRUCT as u64);
    let layout = SampleLayout {
        sample_type: st,
        read_format: crate::read_format::ReadFormat(sys::PERF_FORMAT_ID as u64),
        branch_sample_type: sys::PERF_SAMPLE_BRANCH_HW_INDEX as u64,
        regs_user: 2,
        regs_intr: 1,
        sample_id_all: false,
        ..Default::default()
    };
    // identifier ip pid/tid time addr id stream_id cpu/res period
    let mut body = u64s(&[1, 2]);
    body.extend(pid_tid(3, 4));
    body.extend(u64s(&[5, 6, 7, 8]));
    body.extend(pid_tid(9, 0));
    body.extend(u64s(&[10]));
    body.extend(u64s(&[11, 12])); // read: value, id
    body.extend(u64s(&[1, 13])); // callchain
    body.extend(4u32.to_ne_bytes());
    body.extend([14, 14, 14, 14]); // raw
    body.extend(u64s(&[1, 15, 16, 17, 18])); // branch: nr, hw_idx, from/to/flags
    body.extend(u64s(&[1, 19, 20])); // regs_user: abi, 2 regs
    body.extend(u64s(&[8, 21, 8])); // stack_user: size, data, dyn_size
    body.extend(u64s(&[22, 23, 24])); // weight, data_src, transaction
    body.extend(u64s(&[1, 25])); // regs_intr
    body.extend(u64s(&[26, 27, 28, 29])); // phys, cgroup, data/code page size
    body.extend(u64s(&[8, 30])); // aux
    let bytes = record(sys::PERF_RECORD_SAMPLE, 0, &body);
    let Record::Sample(s) = parse(&layout, &bytes).unwrap().record else {
        panic!()
    };
    assert_eq!(
        (s.id(), s.ip(), s.pid_tid(), s.time(), s.addr()),
        (Some(1), Some(2), Some((3, 4)), Some(5), Some(6))
    );
    assert_eq!(
        (s.stream_id(), s.cpu(), s.period()),
        (Some(8), Some(9), Some(10))
    );
    let read = s.read_values().unwrap().get(0).unwrap();
    assert_eq!((read.value, read.id), (11, Some(12)));
    assert_eq!(s.callchain().unwrap().get(0), Some(13));
    assert_eq!(s.raw(), Some(&[14u8; 4][..]));
    let b = s.branch_stack().unwrap();
    assert_eq!(
        (b.hw_idx, b.entries.len(), b.entries.get(2)),
        (Some(15), 3, Some(18))
    );
    assert_eq!(
        s.regs_user().unwrap().values.iter().collect::<Vec<_>>(),
        [19, 20]
    );
    assert_eq!(s.stack_user().map(|(d, n)| (d.len(), n)), Some((8, 8)));
    assert_eq!(
        (s.weight(), s.data_src(), s.transaction()),
        (Some(22), Some(23), Some(24))
    );
    assert_eq!(s.regs_intr().unwrap().values.get(0), Some(25));
    assert_eq!(
        (
            s.phys_addr(),
            s.cgroup(),
            s.data_page_size(),
            s.code_page_size()
        ),
        (Some(26), Some(27), Some(28), Some(29))
    );
    assert_eq!(s.aux(), Some(&30u64.to_ne_bytes()[..]));
    for cut in 0..body.len() {
        assert!(
            parse(&layout, &record(sys::PERF_RECORD_SAMPLE, 0, &body[..cut])).is_err(),
            "cut at {cut}"
        );
    }
}

#[test]
fn mmap2_with_build_id() {
    let mut body = pid_tid(1, 2);
    body.extend(u64s(&[0x1000, 0x2000, 0]));
    body.extend([3, 0, 0, 0]);
    body.extend([0xaa, 0xbb, 0xcc]);
    body.extend([0u8; 17]);
    body.extend(5u32.to_ne_bytes());
    body.extend(2u32.to_ne_bytes());
    body.extend(b"/bin/x\0\0");
    let bytes = record(
        sys::PERF_RECORD_MMAP2,
        sys::PERF_RECORD_MISC_MMAP_BUILD_ID as u16,
        &body,
    );
    let p = parse(&SampleLayout::default(), &bytes).unwrap();
    let Record::Mmap2 {
        id, filename, prot, ..
    } = p.record
    else {
        panic!()
    };
    assert_eq!(id, MappingId::BuildId(&[0xaa, 0xbb, 0xcc]));
    assert_eq!((filename, prot), (&b"/bin/x"[..], 5));
}

#[test]
fn every_known_type_parses_a_well_formed_body_and_rejects_a_short_one() {
    let layout = SampleLayout::default();
    for kind in 1..sys::PERF_RECORD_MAX {
        // READ holds exactly pid/tid and the read_format's values (one u64).
        let words = if kind == sys::PERF_RECORD_READ { 2 } else { 8 };
        let body = u64s(&[0; 8][..words]);
        let bytes = record(kind, 0, &body);
        assert!(parse(&layout, &bytes).is_ok(), "type {kind}");
        for cut in 0..body.len() {
            let short = record(kind, 0, &body[..cut]);
            // Truncated or parsed as far as the data goes: never a panic.
            let _ = parse(&layout, &short);
        }
    }
    let unknown = record(999, 0, &[1, 2, 3]);
    assert_eq!(
        parse(&layout, &unknown).unwrap().record,
        Record::Unknown {
            kind: 999,
            body: &[1, 2, 3]
        }
    );
}

#[test]
fn malformed_sizes_are_errors() {
    let layout = SampleLayout::default();
    let mut bytes = record(sys::PERF_RECORD_LOST, 0, &u64s(&[1, 2]));
    bytes[6] = 4;
    assert_eq!(
        parse(&layout, &bytes),
        Err(RecordError::SizeBelowHeader { size: 4 })
    );
    bytes[6] = 200;
    assert!(matches!(
        parse(&layout, &bytes),
        Err(RecordError::Truncated { .. })
    ));
    let sample = SampleLayout {
        sample_type: sys::PERF_SAMPLE_CALLCHAIN as u64,
        ..Default::default()
    };
    let huge = record(sys::PERF_RECORD_SAMPLE, 0, &u64s(&[u64::MAX]));
    assert!(matches!(
        parse(&sample, &huge),
        Err(RecordError::Truncated {
            field: "callchain.ips",
            ..
        })
    ));
}

#[test]
fn aux_flags() {
    let f = AuxFlags(0x1 | 0x4 | 0x0300);
    assert!(f.truncated() && f.partial() && !f.overwrite() && !f.collision());
    assert_eq!(f.pmu_format_type(), 3);
}
