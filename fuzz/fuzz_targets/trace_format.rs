//! Any `format` file text and any payload: the tracefs format parser and
//! the raw-payload decoder return a value or an error naming the line or
//! field, never a panic, never an out-of-bounds read.
//!
//! Input: byte 0 bit 0 = payload byte order (0 little, 1 big), bytes 1..3 =
//! text length (u16 LE), then the text, then the payload.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perf_event_core::byte_order::ByteOrder;
use perf_event_host::sysfs::{TraceFormat, TraceValue};

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    if rest.len() < 2 {
        return;
    }
    let n = usize::from(u16::from_le_bytes([rest[0], rest[1]])).min(rest.len() - 2);
    let (text, payload) = rest[2..].split_at(n);
    let order = if flags & 1 == 0 {
        ByteOrder::Little
    } else {
        ByteOrder::Big
    };
    let Ok(f) = TraceFormat::parse(&String::from_utf8_lossy(text)) else {
        return;
    };
    for field in &f.fields {
        if let Ok(TraceValue::Array(a)) = f.value(field, payload, order) {
            for i in 0..a.len().min(64) {
                assert!(a.get(i).is_some());
            }
        }
    }
    if let Ok(values) = f.decode(payload, order) {
        assert_eq!(values.len(), f.fields.len());
    }
});
