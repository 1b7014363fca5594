//! Captures real records from this machine into `bench/fixtures/records.bin`
//! for the record-parsing benchmark: the raw `perf_event_attr` (144 bytes)
//! followed by every record, as the kernel wrote them.
//!
//! ```sh
//! cargo run --release -p bench --bin capture_records
//! ```
//!
//! One cpu-clock sampling event on this thread with a rich sample_type
//! (IP, TID, TIME, ID, CPU, PERIOD, CALLCHAIN) and mmap/mmap2/comm/task
//! side-band with sample_id_all, while the thread works, maps files and
//! spawns short processes.

use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Software};
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::ring::RingBuffer;
use perf_event_core::sys;

fn main() {
    let sample_type = (sys::PERF_SAMPLE_IP
        | sys::PERF_SAMPLE_TID
        | sys::PERF_SAMPLE_TIME
        | sys::PERF_SAMPLE_ID
        | sys::PERF_SAMPLE_CPU
        | sys::PERF_SAMPLE_PERIOD
        | sys::PERF_SAMPLE_CALLCHAIN) as u64;
    let attr = Attr::new(Event::Software(Software::CpuClock))
        .disabled(true)
        .sample_period(20_000)
        .sample_type_raw(sample_type)
        .mmap(true)
        .mmap2(true)
        .comm(true)
        .task(true)
        .sample_id_all(true)
        .exclude_hv(true);
    let fd =
        open(&attr, Scope::this_thread(), None, OpenFlags::new()).unwrap_or_else(|e| panic!("{e}"));
    let mut ring = RingBuffer::map(&fd, 64).unwrap_or_else(|e| panic!("{e}"));
    let raw = attr.to_raw();
    // SAFETY: perf_event_attr is plain integers; viewing its bytes is sound.
    let attr_bytes = unsafe {
        std::slice::from_raw_parts(
            (&raw as *const sys::perf_event_attr).cast::<u8>(),
            std::mem::size_of_val(&raw),
        )
    };
    let mut out = attr_bytes.to_vec();
    let (mut records, mut kinds) = (0u64, std::collections::BTreeMap::<u32, u64>::new());
    fd.enable(false).unwrap();
    let exe = std::fs::File::open("/proc/self/exe").unwrap();
    let mut x = 0u64;
    while records < 10_000 {
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
        // SAFETY: mapping and unmapping one page of our own executable.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_EXEC,
                libc::MAP_PRIVATE,
                std::os::fd::AsRawFd::as_raw_fd(&exe),
                0,
            );
            libc::munmap(p, 4096);
        }
        let _ = std::process::Command::new("/bin/true").status();
        let mut batch = ring.records();
        while let Some(rec) = batch.next() {
            let rec = rec.unwrap_or_else(|e| panic!("{e}"));
            let mut buf = [0u8; 1 << 16];
            out.extend_from_slice(rec.copy_into(&mut buf).unwrap());
            *kinds.entry(rec.header.kind).or_default() += 1;
            records += 1;
        }
    }
    fd.disable(false).unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/records.bin");
    std::fs::write(path, &out).unwrap();
    println!(
        "{records} records, {} bytes -> {path}; by type: {kinds:?} (checksum {x})",
        out.len() - 144
    );
}
