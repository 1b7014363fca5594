//! Any bytes, under any sample layout, parse or fail with an error: never a
//! panic, never an out-of-bounds read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perf_event_core::read_format::ReadFormat;
use perf_event_core::record::{parse, SampleLayout};

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
    };
    if let Ok(p) = parse(&layout, &data[12..]) {
        // Touch everything the parse lends out.
        let _ = format!("{p:?}");
    }
});
