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
    assert_eq!(s.ip, Some(0x1234));
    assert_eq!(s.id.pid_tid, Some((10, 11)));
    assert_eq!(s.id.time, Some(999));
    assert_eq!(s.id.cpu, Some(3));
    assert_eq!(s.period, Some(1));
    assert_eq!(s.callchain.unwrap().iter().collect::<Vec<_>>(), [0xa, 0xb]);
    assert_eq!(s.raw, Some(&[1u8, 2, 3, 4][..]));
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
        let body = u64s(&[0; 8]);
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
