//! Records captured on a big-endian machine (an s390x QEMU guest running
//! `tests/examples/record_dump`; `tests/fixtures/s390x/capture.sh` made the
//! fixture) parsed here in their foreign byte order: every value this crate
//! decodes (header, sample fields, read values, callchain segments, s390
//! registers by name, user stack, tracepoint fields by name, side-band
//! records and their sample_id trailers) must equal what the guest printed
//! when it parsed the same bytes natively.
//!
//! The same comparison also runs on a capture made right here (native byte
//! order), so the harness itself is checked on every machine.

mod describe;
use crate::{kernel_support, lab_support};

use perf_event_core::record::{self, RegNames, SampleLayout};

use perf_event_core::abi::arch::RegsArch;

use perf_event_core::byte_order::ByteOrder;
use perf_event_host::sysfs::TraceFormat;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// Parses a `record_dump` output with this crate and checks each `VAL`
/// line; returns (records, samples) compared.
fn replay(text: &str) -> (usize, usize) {
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key} line"))
    };
    let order = match field("ORDER ") {
        "Big" => ByteOrder::Big,
        "Little" => ByteOrder::Little,
        o => panic!("order {o}"),
    };
    let arch = match field("ARCH ") {
        "X86" => RegsArch::X86,
        "S390" => RegsArch::S390,
        "Arm64" => RegsArch::Arm64,
        "Riscv" => RegsArch::Riscv,
        "Powerpc" => RegsArch::Powerpc,
        "Loongarch" => RegsArch::Loongarch,
        "Mips" => RegsArch::Mips,
        "Arm" => RegsArch::Arm,
        a => panic!("arch {a}"),
    };
    let layout = SampleLayout::from_attr_bytes(&unhex(field("ATTR ")), order).unwrap();
    let mask = u64::from_str_radix(field("REGS 0x"), 16).unwrap();
    let format_text = String::from_utf8(unhex(field("FORMAT "))).unwrap();
    let format = TraceFormat::parse(&format_text).unwrap();
    let names = RegNames::of(arch);
    let (mut records, mut samples) = (0, 0);
    let mut lines = text
        .lines()
        .filter(|l| l.starts_with("REC ") || l.starts_with("VAL "));
    while let Some(rec) = lines.next() {
        let bytes = unhex(rec.strip_prefix("REC ").unwrap());
        let want = lines.next().unwrap().strip_prefix("VAL ").unwrap();
        let parsed = record::parse(&layout, &bytes).unwrap_or_else(|e| panic!("{e}: {rec}"));
        let got = describe::describe(&parsed, &layout, mask, &names, Some(&format));
        assert_eq!(got, want, "record {records}");
        if let record::Record::Sample(s) = parsed.record {
            assert_eq!(s.unreturned_field(), None);
            samples += 1;
        }
        records += 1;
    }
    (records, samples)
}

#[test]
fn s390x_records_parse_here_to_the_guests_values() {
    // Compiled in: the lab's guests run this binary without the source tree.
    let text = include_str!("fixtures/s390x/records.txt");
    assert!(
        text.starts_with("ORDER Big\nARCH S390\n"),
        "{}",
        &text[..40]
    );
    let (records, samples) = replay(text);
    println!("{records} s390x records ({samples} samples) give the guest's values");
    // The comparison can tell: read as little-endian, the same bytes do not
    // give the guest's values (or do not parse at all).
    let native = text.replacen("ORDER Big", "ORDER Little", 1);
    assert!(std::panic::catch_unwind(|| replay(&native)).is_err());
    assert!(
        samples >= 5 && records > samples,
        "{records} records, {samples} samples"
    );
}

#[test]
fn a_native_capture_replays_to_its_own_values() {
    if let Err(why) = kernel_support::syscall_tracepoints() {
        lab_support::not_applicable(lab_support::Need::SyscallTracepoints, &why);
        return;
    }
    let text = match describe::capture() {
        Ok(text) => text,
        Err(e) => {
            let why = format!("cannot record prctl tracepoint samples here: {e}");
            lab_support::not_applicable(lab_support::Need::Tracefs, &why);
            return;
        }
    };
    let (records, samples) = replay(&text);
    assert!(samples >= 5, "{records} records, {samples} samples");
}

/// The s390x capture as a big-endian perf.data file (header, the guest's
/// attr with no ids, the records), read with the crate's perf_data
/// reader: the records it lends, parsed with the attr it read, give the
/// guest's values.
#[test]
fn s390x_records_in_a_big_endian_perf_data_file_read_to_the_guests_values() {
    use perf_data_file::PerfData;
    let text = include_str!("fixtures/s390x/records.txt");
    let field = |key: &str| text.lines().find_map(|l| l.strip_prefix(key)).unwrap();
    let attr = unhex(field("ATTR "));
    let recs: Vec<Vec<u8>> = text
        .lines()
        .filter_map(|l| l.strip_prefix("REC "))
        .map(unhex)
        .collect();
    let vals: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("VAL "))
        .collect();
    let attr_size = attr.len() as u64 + 16;
    let data_len: u64 = recs.iter().map(|r| r.len() as u64).sum();
    let mut file = Vec::new();
    for w in [
        0x3245_4c49_4652_4550u64, // PERFILE2
        104,
        attr_size,
        104,
        attr_size,
        104 + attr_size,
        data_len,
        0,
        0,
        0,
        0,
        0,
        0,
    ] {
        file.extend_from_slice(&w.to_be_bytes());
    }
    file.extend_from_slice(&attr);
    file.extend_from_slice(&[0; 16]);
    for r in &recs {
        file.extend_from_slice(r);
    }
    let data = PerfData::from_bytes(file).unwrap();
    assert_eq!(data.order, ByteOrder::Big);
    assert_eq!(data.attrs.len(), 1);
    let layout = data.attrs[0].layout;
    assert_eq!(
        layout,
        SampleLayout::from_attr_bytes(&attr, ByteOrder::Big).unwrap()
    );
    let mask = u64::from_str_radix(field("REGS 0x"), 16).unwrap();
    let format = TraceFormat::parse(&String::from_utf8(unhex(field("FORMAT "))).unwrap()).unwrap();
    let names = RegNames::of(RegsArch::S390);
    let mut n = 0;
    for (rec, want) in data.records().zip(&vals) {
        let (_, bytes) = rec.unwrap();
        let parsed = data.parse(bytes).unwrap();
        let got = describe::describe(&parsed, &layout, mask, &names, Some(&format));
        assert_eq!(got, *want, "record {n}");
        n += 1;
    }
    assert_eq!(n, recs.len());
    assert_eq!(n, vals.len());
}
