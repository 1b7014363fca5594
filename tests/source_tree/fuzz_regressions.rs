//! Replays the fuzz corpora and every checked-in fuzz finding
//! (`fuzz/corpus/<target>`, `fuzz/regressions/<target>`) through the same
//! harness logic as `fuzz/fuzz_targets/*.rs`: none may panic, and every
//! corpus seed (well-formed by construction) must parse.

use perf_event_core::byte_order::ByteOrder;
use perf_event_core::read_format::ReadFormat;
use perf_event_core::record::{parse, Record, SampleLayout};

/// The record_parse target's input decoding (kept identical to it).
fn record_parse(data: &[u8]) -> Option<bool> {
    if data.len() < 12 {
        return None;
    }
    let word = |i: usize| u32::from_le_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]);
    let layout = SampleLayout {
        sample_type: u64::from(word(0)) & ((1 << 25) - 1),
        read_format: ReadFormat(u64::from(data[4] & 0x1f)),
        branch_sample_type: u64::from(word(5)) << 10,
        regs_user: u32::from(data[9] & 63),
        regs_intr: u32::from(data[10] & 63),
        sample_id_all: data[11] & 1 != 0,
        byte_order: if data[11] & 2 != 0 {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        },
    };
    // The same bytes as a stored attr of that byte order.
    if perf_event_core::record::attr_from_bytes(&data[12..], layout.byte_order).is_ok() {
        assert!(SampleLayout::from_attr_bytes(&data[12..], layout.byte_order).is_ok());
    }
    Some(
        parse(&layout, &data[12..])
            .map(|p| {
                if let Record::Sample(s) = p.record {
                    // An Ok parse returns every field the layout says is present.
                    assert_eq!(s.unreturned_field(), None);
                }
                !format!("{p:?}").is_empty()
            })
            .is_ok(),
    )
}

/// The read_format_parse target's input decoding.
fn read_format_parse(data: &[u8]) -> Option<bool> {
    let (&bits, buf) = data.split_first()?;
    let reading = ReadFormat(u64::from(bits & 0x1f)).parse(buf);
    Some(
        reading
            .map(|r| (r.values().count(), r.counts().scaled()))
            .is_ok(),
    )
}

/// The trace_format target's input decoding (kept identical to it).
fn trace_format(data: &[u8]) -> Option<bool> {
    use perf_event_core::byte_order::ByteOrder;
    use perf_event_host::sysfs::{TraceFormat, TraceValue};
    let (&flags, rest) = data.split_first()?;
    if rest.len() < 2 {
        return None;
    }
    let n = usize::from(u16::from_le_bytes([rest[0], rest[1]])).min(rest.len() - 2);
    let (text, payload) = rest[2..].split_at(n);
    let order = if flags & 1 == 0 {
        ByteOrder::Little
    } else {
        ByteOrder::Big
    };
    let Ok(f) = TraceFormat::parse(&String::from_utf8_lossy(text)) else {
        return Some(false);
    };
    for field in &f.fields {
        if let Ok(TraceValue::Array(a)) = f.value(field, payload, order) {
            assert!((0..a.len().min(64)).all(|i| a.get(i).is_some()));
        }
    }
    Some(f.decode(payload, order).is_ok())
}

fn inputs(dir: &str) -> Vec<(String, Vec<u8>)> {
    let root = crate::root().join("fuzz").join(dir);
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_none_or(|x| x != "md"))
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect()
}

#[test]
fn corpus_seeds_parse_and_findings_do_not_panic() {
    type Harness = fn(&[u8]) -> Option<bool>;
    let targets: [(&str, Harness); 3] = [
        ("record_parse", record_parse),
        ("read_format_parse", read_format_parse),
        ("trace_format", trace_format),
    ];
    for (target, harness) in targets {
        let seeds = inputs(&format!("corpus/{target}"));
        assert!(
            seeds.len() >= 3,
            "{target}: the checked-in corpus is missing"
        );
        for (path, data) in &seeds {
            assert_eq!(harness(data), Some(true), "seed {path} must parse");
        }
        for (_path, data) in inputs(&format!("regressions/{target}")) {
            let _ = harness(&data);
        }
    }
}
