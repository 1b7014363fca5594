//! perf-event-core benchmarks, all in one run (numbers go to BENCHMARKS.md):
//!
//! ```sh
//! cargo run --release -p bench
//! ```
//!
//! 1. The cost per read through `read(2)` on one event (task-clock, this
//!    thread, read_format TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING, opened by
//!    perf-event2 so all three read the same fd): perf-event-core's
//!    `RawCounterFd::read_counts`, a raw `libc::read`, perf-event2's
//!    `Counter::read`; and the whole `CounterReader::read` (page check,
//!    then `read(2)`: software events have no counter to read in user space).
//! 2. The seqlock snapshot on a simulated page: perf-event-core's
//!    `snapshot::read` with the production loads, and the man page's C loop
//!    (-O2) on the same page; wall time and, under callgrind, instructions.
//!
//! 3. Parsing the same buffer of real records with perf-event-core,
//!    linux-perf-event-reader and perf-event-data, against a header-walk floor.
//! 4. One measured region of a 3-event group: `Monitor` start + stop
//!    against perf-event2's `Group` enable + disable + read, with the system
//!    calls per region from `strace -c` (`bench region` runs only this).
//!
//! 5. Event sets: 4 events x every CPU x 8 threads opened, enabled, read
//!    and closed by perf-event-core's `set::EventSet` and perf-event2's
//!    `Group`; read-all alone and its system-call count (`bench sets`;
//!    BENCHMARKS.md section 8).
//!
//! `bench callgrind-target rust|c N` is what the benchmark runs under
//! valgrind, `bench region-target ours|perf-event2 N` what it runs under
//! strace; they are not meant to be run by hand.

use perf_event::events::Software;
use perf_event::Builder;
use perf_event_core::abi::bitfield::mmap_caps;
use perf_event_core::sys;
use perf_event_core::userpage::sim::{PageState, SimPage};
use perf_event_core::userpage::snapshot::{self, Snapshot};
use perf_event_core::userpage::{
    CounterFd, CounterReader, EventTarget, PagePtr, RawCounterFd, UserPage, REQUIRED_READ_FORMAT,
};
use std::hint::black_box;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::time::Instant;

// Links the package library, which carries the C loop built by build.rs.
use perf_bench as _;

mod records;
mod region;
mod sets;
mod timing;

/// What the C loop returns (its locals after the loop).
#[repr(C)]
#[derive(Default)]
struct ManpageResult {
    count: u64,
    enabled: u64,
    running: u64,
    cyc: u64,
    time_offset: u64,
    seq: u32,
    idx: u32,
    time_mult: u32,
    time_shift: u32,
}

extern "C" {
    fn bench_c_manpage_read(page: *const sys::perf_event_mmap_page, out: *mut ManpageResult);
}

/// perf-event-core's snapshot, not inlined so callgrind can count it alone.
#[no_mangle]
#[inline(never)]
fn bench_rust_snapshot(page: &PagePtr<'_>, out: &mut Snapshot) -> bool {
    // SAFETY: the benchmark page has index 0, so the counter instruction
    // never runs (as for an event not on the PMU).
    unsafe { snapshot::read_into(page, true, out) }.is_ok()
}

#[no_mangle]
#[inline(never)]
fn bench_c_snapshot(page: &PagePtr<'_>, out: &mut ManpageResult) {
    // SAFETY: a valid page and a valid out pointer.
    unsafe { bench_c_manpage_read(page.as_ptr(), out) };
}

/// The benchmark page: cap_user_rdpmc and cap_user_time set, enabled !=
/// running (so both readers take the timestamp branch), index 0 (no
/// counter instruction: the host has no PMU for it, and valgrind does not
/// emulate `rdpmc`).
fn bench_page() -> SimPage {
    SimPage::new(&PageState {
        index: 0,
        offset: 123_456,
        time_enabled: 2_000_000,
        time_running: 1_000_000,
        capabilities: mmap_caps::CAP_BIT0_IS_DEPRECATED.mask()
            | mmap_caps::CAP_USER_RDPMC.mask()
            | mmap_caps::CAP_USER_TIME.mask(),
        pmc_width: 48,
        time_shift: 31,
        time_mult: 1_234_567,
        time_offset: 0u64.wrapping_sub(1 << 40),
        ..Default::default()
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("callgrind-target") {
        callgrind_target(&args[1..]);
        return;
    }
    if args.first().map(String::as_str) == Some("region-target") {
        region::target(&args[1..]);
        return;
    }
    println!(
        "perf-event-core bench on {} ({} cores), {}",
        cpu_model(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        kernel()
    );
    // `bench records` / `bench region` / `bench read` / `bench sets` run
    // only section 3 / 5 / 1 / 8.
    match args.first().map(String::as_str) {
        Some("records") => records::run(),
        Some("region") => region::run(),
        Some("read") => read_paths(),
        Some("sets") => sets::run(),
        _ => {
            read_paths();
            snapshots();
            records::run();
            region::run();
            sets::run();
        }
    }
}

fn read_paths() {
    let mut counter = Builder::new(Software::TASK_CLOCK)
        .enabled(true)
        .build()
        .expect("perf-event2: task-clock");
    let fd = counter.as_raw_fd();
    // SAFETY: perf-event2's counter keeps its perf event fd open until the
    // end of this function, past every read of `ours` and `reader`.
    let ours = unsafe { RawCounterFd::new(fd, REQUIRED_READ_FORMAT) }.expect("read_format 0x3");
    let reader = CounterReader::new(
        // SAFETY: as above; `fd` is perf-event2's open perf event fd.
        unsafe { UserPage::map_raw(fd) }.expect("mmap the event's page"),
        ours,
        EventTarget::as_opened(0, -1),
    );
    let mut buf = [0u64; 3];
    println!("\n## read(2) paths, one task-clock event (ns per read, median of rounds)\n");
    let results = timing::compare(
        61,
        20_000,
        &mut [
            ("raw libc::read (24 bytes)", &mut || {
                // SAFETY: 24 writable bytes.
                let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), 24) };
                black_box((n, buf));
            }),
            ("perf-event-core RawCounterFd::read_counts", &mut || {
                black_box(ours.read_counts().expect("read"));
            }),
            ("perf-event2 Counter::read", &mut || {
                black_box(counter.read().expect("read"));
            }),
            (
                "perf-event-core CounterReader::read (page check + read(2))",
                &mut || {
                    black_box(reader.read().expect("read"));
                },
            ),
        ],
    );
    timing::print(&results);
    let ratio = results[1].ratio_to_first;
    println!(
        "\nread(2) path vs raw libc::read: {:+.2} % (target: within 2 %) -> {}",
        (ratio - 1.0) * 100.0,
        if (ratio - 1.0).abs() <= 0.02 {
            "met"
        } else {
            "NOT met"
        }
    );
}

fn snapshots() {
    let sim = bench_page();
    let page = sim.page_ptr();
    let mut snap = Snapshot::default();
    let mut c_out = ManpageResult::default();
    assert!(bench_rust_snapshot(&page, &mut snap), "stable page");
    bench_c_snapshot(&page, &mut c_out);
    assert_eq!(
        (snap.offset as u64, snap.time_enabled),
        (c_out.count, c_out.enabled)
    );
    println!("\n## seqlock snapshot of a simulated page (ns per snapshot, median of rounds)\n");
    let results = timing::compare(
        21,
        1_000_000,
        &mut [
            (
                "perf-event-core snapshot::read_into (PagePtr, rdtsc)",
                &mut || {
                    black_box(bench_rust_snapshot(&page, &mut snap));
                    black_box(&snap);
                },
            ),
            ("man page C loop, gcc -O2 (rdtsc)", &mut || {
                bench_c_snapshot(&page, &mut c_out);
                black_box(&c_out);
            }),
            (
                "perf-event-core SimPage::snapshot (simulated counter/clock)",
                &mut || {
                    black_box(sim.snapshot().ok());
                },
            ),
        ],
    );
    timing::print(&results);
    instruction_counts();
}

fn instruction_counts() {
    println!("\n## instructions per snapshot (callgrind, same page)\n");
    let calls = 100_000u64;
    let count = |which: &str, symbol: &str| -> Result<f64, String> {
        let out = std::env::temp_dir().join(format!("bench-callgrind-{which}.out"));
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let status = Command::new("valgrind")
            .arg("--tool=callgrind")
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(format!("--toggle-collect={symbol}"))
            .arg("--quiet")
            .arg(exe)
            .args(["callgrind-target", which, &calls.to_string()])
            .status()
            .map_err(|e| format!("valgrind: {e} (install valgrind)"))?;
        if !status.success() {
            return Err(format!("valgrind failed: {status}"));
        }
        let text = std::fs::read_to_string(&out).map_err(|e| e.to_string())?;
        let total: u64 = text
            .lines()
            .find_map(|l| {
                l.strip_prefix("totals: ")
                    .or_else(|| l.strip_prefix("summary: "))
            })
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .ok_or("no totals line in the callgrind output")?;
        Ok(total as f64 / calls as f64)
    };
    match (
        count("rust", "bench_rust_snapshot"),
        count("c", "bench_c_manpage_read"),
    ) {
        (Ok(rust), Ok(c)) => {
            println!("| reader | instructions per snapshot |\n|---|---:|");
            println!("| perf-event-core snapshot::read_into | {rust:.1} |");
            println!("| man page C loop (gcc -O2) | {c:.1} |");
            println!(
                "\nsnapshot vs C loop: {rust:.1} vs {c:.1} instructions (target: no more) -> {}",
                if rust <= c { "met" } else { "NOT met" }
            );
        }
        (rust, c) => println!("callgrind unavailable: rust {rust:?}, c {c:?}"),
    }
}

/// Runs N snapshots of one reader; valgrind counts only inside the symbol.
fn callgrind_target(args: &[String]) {
    let n: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let sim = bench_page();
    let page = sim.page_ptr();
    let start = Instant::now();
    match args.first().map(String::as_str) {
        Some("rust") => {
            let mut out = Snapshot::default();
            for _ in 0..n {
                black_box(bench_rust_snapshot(&page, &mut out));
                black_box(&out);
            }
        }
        Some("c") => {
            let mut out = ManpageResult::default();
            for _ in 0..n {
                bench_c_snapshot(&page, &mut out);
                black_box(&out);
            }
        }
        other => panic!("callgrind-target rust|c N, not {other:?}"),
    }
    black_box(start.elapsed());
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or_else(
            || std::env::consts::ARCH.to_owned(),
            |m| m.trim().to_owned(),
        )
}

fn kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| format!("Linux {}", s.trim()))
        .unwrap_or_default()
}
