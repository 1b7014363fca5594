//! Any bytes read as a perf.data file (file or pipe mode, either byte
//! order) give a file or an error: never a panic. Every record of a file
//! that reads is walked, identified and parsed (errors allowed).
#![no_main]

use libfuzzer_sys::fuzz_target;
use perf_data_file::PerfData;

fuzz_target!(|data: &[u8]| {
    let Ok(file) = PerfData::from_bytes(data.to_vec()) else {
        return;
    };
    assert!(file.data.start <= file.data.end && file.data.end <= data.len());
    for rec in file.records() {
        let Ok((at, bytes)) = rec else {
            break;
        };
        assert!(at >= file.data.start && at + bytes.len() <= file.data.end);
        let _ = file.event_of(bytes);
        let _ = file.parse(bytes);
    }
    if let Some(ids) = &file.features.build_ids {
        for b in ids {
            assert!(b.id.len() <= 20);
        }
    }
});
