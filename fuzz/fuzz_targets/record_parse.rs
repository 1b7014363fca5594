//! Any bytes, under any sample layout, parse or fail with an error: never a
//! panic, never an out-of-bounds read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perf_event_core::read_format::ReadFormat;
use perf_event_core::record::{parse, Callchain, DataSrc, RegNames, Record, Sample, SampleLayout, Txn, Weight};
use perf_event_core::abi::arch::RegsArch;
use perf_event_core::byte_order::ByteOrder;

/// Runs every decoder over what the sample lends out.
fn touch_decoders(s: &Sample<'_>) {
    if let Some(b) = s.branch_stack() {
        for e in b.iter() {
            let _ = (e.counter(1, 2), e.flags.is_extended());
        }
    }
    if let Some(c) = s.callchain() {
        let n: usize = Callchain::new(c).segments().map(|(_, ips)| ips.len() + 1).sum();
        assert!(n >= c.len());
    }
    let names = RegNames::of(RegsArch::X86);
    for regs in [s.regs_user(), s.regs_intr()].into_iter().flatten() {
        let _ = names.named(&regs, u64::MAX).count();
    }
    let w = s.weight().unwrap_or(0);
    assert_eq!(Weight::from_word(w).to_word(), w);
    let _ = (DataSrc::from_word(s.data_src().unwrap_or(0)), Txn(w).abort_code());
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 12 {
        return;
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
    if let Ok(raw) = perf_event_core::record::attr_from_bytes(&data[12..], layout.byte_order) {
        assert!(SampleLayout::from_attr_bytes(&data[12..], layout.byte_order).is_ok());
        let _ = raw.sample_type;
    }
    if let Ok(p) = parse(&layout, &data[12..]) {
        // Touch everything the parse lends out.
        let _ = format!("{p:?}");
        if let Record::Sample(s) = p.record {
            // An Ok parse returns every field the layout says is present.
            assert_eq!(s.unreturned_field(), None);
            touch_decoders(&s);
        }
    }
});
