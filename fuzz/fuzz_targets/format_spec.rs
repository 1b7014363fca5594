//! The sysfs file parsers on arbitrary text: `format/*` specs (with their
//! invariants: the rendering parses back to the same format, packing and
//! unpacking are inverse), `events/*` term lists, CPU lists, `.scale`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perf_event_host::sysfs::{Alias, CpuList, Format, Scale, TermLexer};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Format::parse(text) {
        Ok(format) => {
            let rendered = format.to_string();
            assert_eq!(Format::parse(&rendered), Ok(format), "{rendered}");
            assert_eq!(format.mask().count_ones(), format.width());
            let value =
                (data.len() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) & format.max_value();
            let packed = format.pack(value).expect("a value within max_value packs");
            assert_eq!(packed & !format.mask(), 0);
            assert_eq!(format.unpack(packed), value);
            if format.width() < 64 {
                assert_eq!(format.pack(format.max_value() + 1), None);
            }
        }
        Err(e) => assert!(e.position <= text.len(), "{e}"),
    }
    for term in TermLexer::new(text, 7) {
        match term {
            Ok(t) => {
                assert!(t.at >= 7 && t.value_at >= t.at && t.at + t.name.len() <= text.len() + 7)
            }
            Err(e) => assert!(e.position <= text.len() + 7, "{e}"),
        }
    }
    let _ = Alias::new("fuzz", text).map(|a| a.to_string());
    if let Ok(list) = CpuList::parse(text) {
        assert_eq!(CpuList::parse(&list.to_string()), Ok(list));
    }
    let _ = Scale::parse(text);
});
