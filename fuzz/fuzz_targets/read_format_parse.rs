//! read(2) buffers of any content and length under any read_format: parse
//! or fail, and scaling never divides by zero or overflows.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perf_event_core::read_format::ReadFormat;

fuzz_target!(|data: &[u8]| {
    let Some((&bits, buf)) = data.split_first() else { return };
    let format = ReadFormat(u64::from(bits & 0x1f));
    if let Ok(reading) = format.parse(buf) {
        for v in reading.values() {
            let _ = v.value;
        }
        let _ = reading.counts().scaled();
    }
});
