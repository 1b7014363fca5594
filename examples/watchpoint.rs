//! A hardware write watchpoint on a variable: how many writes it saw, and
//! a sample (with the writing instruction's address) for each.
//!
//! ```sh
//! cargo run --example watchpoint
//! ```

use perf_event_core::attr::Attr;
use perf_event_core::event::{BreakpointType, Event};
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::record::SampleLayout;
use perf_event_core::ring::RingBuffer;
use perf_event_core::sys;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

static WATCHED: AtomicU64 = AtomicU64::new(0);

#[inline(never)]
fn bump(n: u64) {
    WATCHED.fetch_add(n, Ordering::Relaxed);
}

#[inline(never)]
fn reset() {
    WATCHED.store(0, Ordering::Relaxed);
}

fn main() {
    let addr = WATCHED.as_ptr() as u64;
    let attr = Attr::new(Event::Breakpoint {
        kind: BreakpointType::Write,
        addr,
        // A machine word: 32-bit x86 watches at most 4 bytes (8 only with
        // AMD's breakpoint extension); the 8-byte writes still hit it.
        len: std::mem::size_of::<usize>() as u64,
    })
    .disabled(true)
    .exclude_kernel(true)
    .exclude_hv(true)
    .sample_period(1)
    .sample_type_raw((sys::PERF_SAMPLE_IP | sys::PERF_SAMPLE_TID) as u64);
    let fd = open(&attr, Scope::this_thread(), None, OpenFlags::new()).unwrap_or_else(|e| {
        eprintln!("watchpoint: {e}");
        std::process::exit(1)
    });
    let mut ring = RingBuffer::map(&fd, 8).unwrap_or_else(|e| panic!("{e}"));
    fd.enable(false).unwrap();
    for i in 0..10 {
        bump(i);
    }
    reset();
    let _ = WATCHED.load(Ordering::Relaxed); // reads do not trigger a write watchpoint
    fd.disable(false).unwrap();
    let count = fd.read_counts().unwrap().value;
    // The sample's ip, read through the layout's prefix (offsets computed
    // once; `RawRecord::parse` would decode the whole record).
    let prefix = SampleLayout::from_attr(&attr).prefix();
    let mut by_ip: BTreeMap<u64, u64> = BTreeMap::new();
    let mut batch = ring.records();
    let mut scratch = [0u8; 64];
    while let Some(Ok(rec)) = batch.next() {
        match rec.bytes(&mut scratch) {
            Ok(bytes) if prefix.is_sample(bytes) => {
                *by_ip.entry(prefix.ip(bytes).unwrap_or(0)).or_default() += 1;
            }
            _ => {}
        }
    }
    println!("watchpoint on {addr:#x}: {count} writes (10 in bump, 1 in reset)");
    // The trap comes right after the writing instruction: these are the
    // addresses of the instructions following each write.
    for (ip, n) in &by_ip {
        println!("  {n:3} samples at {ip:#x}");
    }
    println!(
        "  (bump is at {:#x}, reset at {:#x})",
        bump as fn(u64) as usize, reset as fn() as usize
    );
    assert_eq!(count, 11, "a write watchpoint counts exactly the writes");
}
