//! Part 4: the ring set drained into a perf.data file by
//! `perf_data::Writer` (one round per pass, as perf record writes them).

use super::attr;
use perf_data_file::Writer;
use perf_event_host::ringset::RingSet;

/// Where the benchmarks' perf.data files go: /dev/shm when there is one
/// (the writer's cost, not the disk's), else the temp directory.
pub fn perf_data_path(what: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new("/dev/shm");
    let dir = if dir.is_dir() {
        dir.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    dir.join(format!("bench-ringset-{what}-{}.data", std::process::id()))
}

/// A perf.data writer for the set's event (the tracepoint of `attr`).
pub fn perf_data_writer(path: &std::path::Path, id: u64, set: &RingSet) -> Writer<std::fs::File> {
    perf_bench::perf_file::perf_data_writer(path, attr(id), "syscalls:sys_enter_prctl", set)
}

/// One pass over the rings written to perf.data (a round:
/// `Writer::write_drained`, the rings' runs written as they are), counting
/// the samples (the records written less the loss records).
#[inline(never)]
pub fn write_ours<W: std::io::Write>(set: &mut RingSet, w: &mut Writer<W>) -> u64 {
    let (records, lost) = (w.stats().records, set.total_losses().lost_records);
    w.write_drained(set, |_, _, _| {}).unwrap();
    (w.stats().records - records) - (set.total_losses().lost_records - lost)
}
