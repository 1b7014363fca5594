//! Round trips through the writer and the reader: attrs, ids, names and
//! features come back; a writer dropped mid-round (killed) leaves a file
//! read up to its last round; every cut and many mangled copies of a file
//! give errors or fewer records, never a panic.

use super::*;
use perf_event_core::attr::Attr;
use perf_event_core::event::{Event as Ev, Software};
use perf_event_core::record::{Record, SampleLayout};
use perf_event_core::sys;

fn attr(sw: Software) -> Attr {
    Attr::new(Ev::Software(sw))
        .sample_period(1000)
        .sample_type_raw(
            (sys::PERF_SAMPLE_IDENTIFIER
                | sys::PERF_SAMPLE_IP
                | sys::PERF_SAMPLE_TID
                | sys::PERF_SAMPLE_TIME) as u64,
        )
        .sample_id_all(true)
}

fn events() -> Vec<RecordedEvent> {
    vec![
        RecordedEvent {
            attr: attr(Software::CpuClock),
            name: "cpu-clock".into(),
            ids: vec![11, 12],
        },
        RecordedEvent {
            attr: attr(Software::TaskClock),
            name: "task-clock".into(),
            ids: vec![13],
        },
    ]
}

/// A sample of id `id` at `time`, in this machine's order.
fn sample(id: u64, ip: u64, time: u64) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&sys::PERF_RECORD_SAMPLE.to_ne_bytes());
    v.extend_from_slice(&(sys::PERF_RECORD_MISC_USER as u16).to_ne_bytes());
    v.extend_from_slice(&40u16.to_ne_bytes());
    v.extend_from_slice(&id.to_ne_bytes());
    v.extend_from_slice(&ip.to_ne_bytes());
    v.extend_from_slice(&7u32.to_ne_bytes());
    v.extend_from_slice(&8u32.to_ne_bytes());
    v.extend_from_slice(&time.to_ne_bytes());
    v
}

fn temp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("perf-data-unit-{}-{name}", std::process::id()))
}

/// A finished file with two rounds of samples.
fn written(name: &str) -> (std::path::PathBuf, Vec<u8>) {
    let path = temp(name);
    let mut w = Writer::create(
        std::fs::File::create(&path).unwrap(),
        events(),
        Features::from_system(),
    )
    .unwrap();
    w.write_bytes(Some(0), &sample(11, 0x1000, 50)).unwrap();
    w.write_bytes(Some(1), &sample(13, 0x2000, 40)).unwrap();
    w.finish_round().unwrap();
    w.write_bytes(None, &sample(12, 0x3000, 90)).unwrap();
    let stats = w.stats();
    assert_eq!((stats.records, stats.rounds), (3, 1));
    w.finish().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

#[test]
#[cfg_attr(
    miri,
    ignore = "files and /proc: miri isolates the file system (the module is safe code)"
)]
fn a_written_file_reads_back() {
    let (path, bytes) = written("roundtrip");
    let f = PerfData::from_bytes(bytes).unwrap();
    let _ = std::fs::remove_file(path);
    assert!(!f.pipe && !f.recovered);
    assert_eq!(f.attrs.len(), 2);
    assert_eq!(f.attrs[0].ids, [11, 12]);
    assert_eq!(f.attrs[1].name.as_deref(), Some("task-clock"));
    assert_eq!(
        f.attrs[0].layout,
        SampleLayout::from_attr(&attr(Software::CpuClock))
    );
    let sys_f = Features::from_system();
    assert_eq!(f.features.hostname, sys_f.hostname);
    assert_eq!(f.features.nrcpus, sys_f.nrcpus);
    assert_eq!(f.features.cpu_topology, sys_f.cpu_topology);
    assert_eq!(f.features.sample_time, Some((40, 90)));
    assert_eq!(f.features.event_desc.as_ref().unwrap()[1].ids, [13]);
    let recs: Vec<_> = f.records().map(Result::unwrap).collect();
    // Two samples, a round, a sample, the last round.
    assert_eq!(recs.len(), 5);
    let mut seen = Vec::new();
    for (_, b) in &recs {
        let kind = u32::from_ne_bytes(b[..4].try_into().unwrap());
        if kind == header::kind::FINISHED_ROUND {
            seen.push((usize::MAX, 0));
            continue;
        }
        let Record::Sample(s) = f.parse(b).unwrap().record else {
            panic!()
        };
        seen.push((f.event_of(b).unwrap(), s.ip().unwrap()));
    }
    assert_eq!(
        seen,
        [
            (0, 0x1000),
            (1, 0x2000),
            (usize::MAX, 0),
            (0, 0x3000),
            (usize::MAX, 0)
        ]
    );
}

/// perf's directory format (`perf record --threads`): the header, attrs,
/// features and the first records in `DIR/data`, each thread's records in
/// `DIR/data.N`, read after them (data.2 after data.10: numeric order).
#[test]
#[cfg_attr(
    miri,
    ignore = "files and /proc: miri isolates the file system (the module is safe code)"
)]
fn perfs_directory_format_reads_every_stream() {
    let (path, bytes) = written("dir-main");
    let _ = std::fs::remove_file(path);
    let dir = temp("dir");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("data"), &bytes).unwrap();
    std::fs::write(dir.join("data.0"), []).unwrap();
    std::fs::write(dir.join("data.10"), sample(12, 0x5000, 110)).unwrap();
    let two = [sample(11, 0x4000, 100), sample(13, 0x4100, 105)].concat();
    std::fs::write(dir.join("data.2"), two).unwrap();
    // Not a stream.
    std::fs::write(dir.join("data.old"), [1, 2, 3]).unwrap();
    let f = PerfData::open(&dir).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!f.pipe && !f.recovered);
    assert_eq!(f.attrs[1].name.as_deref(), Some("task-clock"));
    let ips: Vec<u64> = f
        .records()
        .map(Result::unwrap)
        .filter_map(|(_, b)| match f.parse(b).unwrap().record {
            Record::Sample(s) => s.ip(),
            _ => None,
        })
        .collect();
    assert_eq!(ips, [0x1000, 0x2000, 0x3000, 0x4000, 0x4100, 0x5000]);
    // Each record's offset is where its bytes are in `bytes()`.
    for (at, b) in f.records().map(Result::unwrap) {
        assert_eq!(&f.bytes()[at..at + b.len()], b);
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "files and /proc: miri isolates the file system (the module is safe code)"
)]
fn pipe_mode_reads_back() {
    let mut w = Writer::pipe(Vec::new(), events(), Features::from_system()).unwrap();
    w.write_bytes(Some(0), &sample(11, 0x1000, 50)).unwrap();
    w.finish_round().unwrap();
    w.write_bytes(Some(1), &sample(13, 0x2000, 60)).unwrap();
    let bytes = w.finish().unwrap();
    let f = PerfData::from_bytes(bytes).unwrap();
    assert!(f.pipe);
    assert_eq!(f.attrs.len(), 2);
    assert_eq!(f.attrs[1].ids, [13]);
    assert_eq!(f.attrs[0].name.as_deref(), Some("cpu-clock"));
    assert_eq!(f.features.sample_time, Some((50, 60)));
    assert_eq!(f.features.osrelease, Features::from_system().osrelease);
    assert_eq!(sample_ips(&f), [0x1000, 0x2000]);
}

/// Pipe mode carries the tracing data as perf does: a 12-byte
/// PERF_RECORD_HEADER_TRACING_DATA with the data's size (8-aligned), the
/// data after it; the records after it are read as records.
#[test]
fn tracing_data_in_pipe_mode_reads_back() {
    let features = Features {
        tracing_data: Some(b"formats".to_vec()),
        ..Features::default()
    };
    let mut w = Writer::pipe(Vec::new(), events(), features).unwrap();
    w.write_bytes(Some(0), &sample(11, 0x1000, 50)).unwrap();
    let bytes = w.finish().unwrap();
    let record = [
        &66u32.to_ne_bytes()[..],
        &0u16.to_ne_bytes(),
        &12u16.to_ne_bytes(),
        &8u32.to_ne_bytes(),
        b"formats\0",
    ]
    .concat();
    assert!(bytes.windows(record.len()).any(|w| w == record));
    let f = PerfData::from_bytes(bytes).unwrap();
    assert_eq!(f.features.tracing_data.as_deref(), Some(&b"formats\0"[..]));
    assert_eq!(sample_ips(&f), [0x1000]);
}

/// The ips of a file's samples, in file order.
fn sample_ips(f: &PerfData) -> Vec<u64> {
    f.records()
        .map(Result::unwrap)
        .filter_map(|(_, b)| match f.parse(b).ok()?.record {
            Record::Sample(s) if b[..4] == sys::PERF_RECORD_SAMPLE.to_ne_bytes() => s.ip(),
            _ => None,
        })
        .collect()
}

#[test]
#[cfg_attr(
    miri,
    ignore = "files and /proc: miri isolates the file system (the module is safe code)"
)]
fn a_killed_writer_is_read_up_to_its_last_round() {
    let path = temp("killed");
    let mut w = Writer::create(
        std::fs::File::create(&path).unwrap(),
        events(),
        Features::default(),
    )
    .unwrap();
    w.write_bytes(Some(0), &sample(11, 0x1000, 50)).unwrap();
    w.finish_round().unwrap();
    w.write_bytes(Some(0), &sample(11, 0x1100, 60)).unwrap();
    w.finish_round().unwrap();
    w.write_bytes(Some(0), &sample(11, 0x1200, 70)).unwrap();
    // Dropped without finish: the buffer reaches the file, the
    // features and the last round do not.
    drop(w);
    let mut bytes = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    // And a half-written record after it.
    bytes.extend_from_slice(&sample(11, 0x1300, 80)[..20]);
    let f = PerfData::from_bytes(bytes.clone()).unwrap();
    assert!(f.recovered);
    let ips: Vec<u64> = f
        .records()
        .map(Result::unwrap)
        .filter_map(|(_, b)| match f.parse(b).ok()?.record {
            Record::Sample(s) => s.ip(),
            _ => None,
        })
        .collect();
    assert_eq!(ips, [0x1000, 0x1100]);
    // Killed before its first round: no records, no error.
    let start = f.data.start;
    let f = PerfData::from_bytes(bytes[..start + 30].to_vec()).unwrap();
    assert_eq!(f.records().count(), 0);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "files and /proc: miri isolates the file system (the module is safe code)"
)]
fn every_cut_and_mangled_file_gives_an_error_or_records_never_a_panic() {
    let (path, bytes) = written("mangled");
    let _ = std::fs::remove_file(path);
    let walk = |b: Vec<u8>| {
        if let Ok(f) = PerfData::from_bytes(b) {
            for (_, rec) in f.records().map_while(Result::ok) {
                let _ = f.parse(rec);
            }
        }
    };
    for cut in 0..bytes.len() {
        walk(bytes[..cut].to_vec());
    }
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..3000 {
        let mut b = bytes.clone();
        for _ in 0..4 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let at = (x as usize) % b.len();
            b[at] = (x >> 32) as u8;
        }
        walk(b);
    }
    // A pipe stream, mangled.
    let mut w = Writer::pipe(Vec::new(), events(), Features::from_system()).unwrap();
    w.write_bytes(Some(0), &sample(11, 0x1000, 50)).unwrap();
    let pipe = w.finish().unwrap();
    for cut in 0..pipe.len() {
        walk(pipe[..cut].to_vec());
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "files and threads: miri isolates the file system (the module is safe code)"
)]
fn the_spooled_file_holds_every_round_in_order_and_the_thread_keeps_off_a_pinned_callers_cpu() {
    use perf_event_core::linux::system::{set_thread_affinity, thread_affinity};
    // Pinned to one CPU, as a recorder may be: the file's thread must not
    // share it (where there is another).
    let all = thread_affinity().unwrap();
    let first = all.iter().enumerate().find(|(_, w)| **w != 0).unwrap();
    let mut one = [0u64; 16];
    one[first.0] = 1 << first.1.trailing_zeros();
    set_thread_affinity(&one).unwrap();
    let path = temp("spooled");
    let mut w = Writer::create(
        std::fs::File::create(&path).unwrap(),
        events(),
        Features::default(),
    )
    .unwrap();
    // More rounds than the spool's chunks hold at once, so chunks return.
    let n = (super::SPOOL_CHUNKS * 2 * (64 << 10) / 32) as u64;
    for i in 0..n {
        w.write_bytes(Some(0), &sample(11, i, i)).unwrap();
        if i % 1000 == 999 {
            w.finish_round().unwrap();
        }
    }
    // The file's thread, by its name, and the CPUs it may use.
    let mut allowed = None;
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let dir = task.unwrap().path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim() == "perf.data write" {
            let status = std::fs::read_to_string(dir.join("status")).unwrap();
            allowed = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(|v| perf_event_host::sysfs::CpuList::parse(v.trim()).unwrap());
        }
    }
    let file = w.finish().unwrap();
    set_thread_affinity(&all).unwrap();
    let allowed = allowed.expect("the writer's thread is running");
    let cpu = (first.0 * 64) as u32 + first.1.trailing_zeros();
    if all.iter().map(|w| w.count_ones()).sum::<u32>() > 1 {
        assert!(!allowed.contains(cpu), "CPU {cpu} is the caller's");
    } else {
        assert!(allowed.contains(cpu), "one CPU: the thread runs there too");
    }
    drop(file);
    let f = PerfData::open(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(!f.recovered);
    let mut next = 0;
    for (_, b) in f.records().map(Result::unwrap) {
        if let Ok(Record::Sample(s)) = f.parse(b).map(|p| p.record) {
            assert_eq!(s.ip(), Some(next), "every sample once, in order");
            next += 1;
        }
    }
    assert_eq!(next, n);
    assert_eq!(f.features.sample_time, Some((0, n - 1)));
}
