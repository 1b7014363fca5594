//! 3. Parsing the same buffer of real records (captured on this machine by
//!    `cargo run --release -p bench --bin capture_records`, checked in as
//!    `bench/fixtures/records.bin`) with perf-event-core, linux-perf-event-reader
//!    and perf-event-data; and a loop that only walks the record headers, the
//!    floor any parser pays.

use crate::timing;
use perf_event_core::attr::Attr;
use perf_event_core::record::{self, SampleLayout};
use perf_event_core::sys;
use std::hint::black_box;

const FIXTURE: &[u8] = include_bytes!("../fixtures/records.bin");
const ATTR_SIZE: usize = std::mem::size_of::<sys::perf_event_attr>();

fn header(buf: &[u8], pos: usize) -> (u32, u16, usize) {
    let b = &buf[pos..pos + 8];
    let kind = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
    let misc = u16::from_ne_bytes([b[4], b[5]]);
    let size = u16::from_ne_bytes([b[6], b[7]]) as usize;
    (kind, misc, size)
}

/// Runs the comparison and prints the table.
pub fn run() {
    let (attr_bytes, records) = FIXTURE.split_at(ATTR_SIZE);
    // SAFETY: the fixture starts with the raw attr it was captured with.
    let raw: sys::perf_event_attr = unsafe { std::ptr::read_unaligned(attr_bytes.as_ptr().cast()) };
    let layout = SampleLayout::from_attr(&Attr::from_raw(raw));

    let mut count = 0usize;
    let mut pos = 0;
    while pos < records.len() {
        pos += header(records, pos).2;
        count += 1;
    }

    // linux-perf-event-reader: its own attr parser over the same bytes.
    use linux_perf_event_reader as lper;
    let (lper_attr, _) =
        lper::PerfEventAttr::parse::<_, byteorder_native::Native>(attr_bytes).expect("attr");
    let lper_info = lper::RecordParseInfo::new(&lper_attr, lper::Endianness::LittleEndian);

    // perf-event-data: its bindings' attr, copied from the same bytes.
    let mut ped_attr = perf_event_open_sys::bindings::perf_event_attr::default();
    let n = std::mem::size_of_val(&ped_attr).min(ATTR_SIZE);
    // SAFETY: both are plain C structs; the first `n` bytes have the same layout.
    unsafe {
        std::ptr::copy_nonoverlapping(attr_bytes.as_ptr(), &mut ped_attr as *mut _ as *mut u8, n)
    };
    let ped_config =
        perf_event_data::parse::ParseConfig::<perf_event_data::endian::Native>::from(ped_attr);

    let mut walk = || {
        let (mut pos, mut n) = (0, 0);
        while pos < records.len() {
            pos += black_box(header(records, pos)).2;
            n += 1;
        }
        assert_eq!(n, count);
    };
    let mut ours = || {
        let (mut pos, mut n) = (0, 0);
        while pos < records.len() {
            let size = header(records, pos).2;
            let parsed =
                record::parse(&layout, &records[pos..pos + size]).expect("perf-event-core parses");
            black_box(&parsed);
            pos += size;
            n += 1;
        }
        assert_eq!(n, count);
    };
    // The hot path of a profiler: parse, then read ip, pid/tid and time.
    let mut ours_fields = || {
        let (mut pos, mut n) = (0, 0);
        while pos < records.len() {
            let size = header(records, pos).2;
            let parsed =
                record::parse(&layout, &records[pos..pos + size]).expect("perf-event-core parses");
            if let record::Record::Sample(s) = parsed.record {
                black_box((s.ip(), s.pid_tid(), s.time()));
            }
            pos += size;
            n += 1;
        }
        assert_eq!(n, count);
    };
    // The same three fields through offsets computed once per layout.
    let prefix = layout.prefix();
    let mut prefix_fields = || {
        let (mut pos, mut n) = (0, 0);
        while pos < records.len() {
            let size = header(records, pos).2;
            let rec = &records[pos..pos + size];
            if prefix.is_sample(rec) {
                black_box((prefix.ip(rec), prefix.pid_tid(rec), prefix.time(rec)));
            }
            pos += size;
            n += 1;
        }
        assert_eq!(n, count);
    };
    // The same three fields read at the fixed offsets this fixture's
    // sample_type gives them (IP, TID, TIME first): the floor for them.
    let fixed = (sys::PERF_SAMPLE_IP | sys::PERF_SAMPLE_TID | sys::PERF_SAMPLE_TIME) as u64;
    assert_eq!(layout.sample_type & fixed, fixed);
    assert_eq!(layout.sample_type & (sys::PERF_SAMPLE_IDENTIFIER as u64), 0);
    let mut raw_fields = || {
        let (mut pos, mut n) = (0, 0);
        while pos < records.len() {
            let (kind, _, size) = header(records, pos);
            if kind == sys::PERF_RECORD_SAMPLE {
                let b = &records[pos + 8..pos + size];
                let u = |at: usize| u64::from_ne_bytes(b[at..at + 8].try_into().unwrap());
                let t = u32::from_ne_bytes(b[12..16].try_into().unwrap());
                let p = u32::from_ne_bytes(b[8..12].try_into().unwrap());
                black_box((u(0), (p, t), u(16)));
            }
            pos += size;
            n += 1;
        }
        assert_eq!(n, count);
    };
    let mut lper_parse = || {
        let (mut pos, mut n) = (0, 0);
        while pos < records.len() {
            let (kind, misc, size) = header(records, pos);
            let raw = lper::RawEventRecord::new(
                lper::RecordType(kind),
                misc,
                lper::RawData::Single(&records[pos + 8..pos + size]),
                lper_info,
            );
            let parsed = raw.parse().expect("linux-perf-event-reader parses");
            black_box(&parsed);
            pos += size;
            n += 1;
        }
        assert_eq!(n, count);
    };
    let mut ped_parse = || {
        let mut parser = perf_event_data::parse::Parser::new(records, ped_config.clone());
        let mut n = 0;
        for _ in 0..count {
            let record: perf_event_data::Record = parser.parse().expect("perf-event-data parses");
            black_box(&record);
            n += 1;
        }
        assert_eq!(n, count);
    };

    let rounds = 31;
    let results = timing::compare(
        rounds,
        5,
        &mut [
            ("header walk only (floor)", &mut walk),
            ("perf-event-core record::parse", &mut ours),
            (
                "linux-perf-event-reader 0.10 RawEventRecord::parse",
                &mut lper_parse,
            ),
            (
                "perf-event-data 0.1 Parser::parse::<Record>",
                &mut ped_parse,
            ),
        ],
    );
    println!(
        "\n## 3. Parsing {count} real records ({} bytes, {} rounds of 5 passes)\n",
        records.len(),
        rounds
    );
    println!("| what | records per second | MB per second | ns per record |\n|---|---:|---:|---:|");
    for r in &results {
        let per_pass = r.ns; // ns for one pass over the buffer
        println!(
            "| {} | {:.1} M | {:.0} | {:.1} |",
            r.name,
            count as f64 / per_pass * 1e3,
            records.len() as f64 / per_pass * 1e3,
            per_pass / count as f64
        );
    }
    let ours_ns = results[1].ns;
    let faster_peer = results[2].ns.min(results[3].ns);
    println!(
        "\nperf-event-core vs the faster peer: {:.2}x the throughput (target: at least 2x); \
         vs the header-walk floor: {:.2}x its time",
        faster_peer / ours_ns,
        ours_ns / results[0].ns
    );

    // The hot path of a profiler (ip, pid/tid, time of each sample), in a
    // group of its own so that the comparison above keeps its candidates.
    let hot = timing::compare(
        rounds,
        5,
        &mut [
            (
                "raw reader: ip, pid/tid, time at fixed offsets",
                &mut raw_fields,
            ),
            (
                "perf-event-core SamplePrefix: ip, pid_tid, time",
                &mut prefix_fields,
            ),
            (
                "perf-event-core record::parse + ip, pid_tid, time",
                &mut ours_fields,
            ),
        ],
    );
    println!(
        "\n| reading ip, pid/tid and time | ns per record | vs the raw reader |\n|---|---:|---:|"
    );
    for r in &hot {
        println!(
            "| {} | {:.1} | {:.2}x |",
            r.name,
            r.ns / count as f64,
            r.ns / hot[0].ns
        );
    }
}

/// The byteorder type linux-perf-event-reader's attr parser wants, native.
mod byteorder_native {
    #[cfg(target_endian = "little")]
    pub type Native = byteorder::LittleEndian;
    #[cfg(target_endian = "big")]
    pub type Native = byteorder::BigEndian;
}
