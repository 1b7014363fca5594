//! Drives a ring set from a mio event loop: the set's epoll fd (`AsFd`) is
//! registered with mio, and each wakeup is turned into the set's own
//! readiness (`wait(0)`: which rings, which tasks exited), then drained.
//!
//! ```sh
//! cargo run --example ringset_mio
//! ```
//!
//! Samples the `cpu-clock` software event (every 1 ms of CPU time) of a
//! busy child thread on every CPU, and stops when the thread exits
//! (EPOLLHUP on each of its fds).

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Software};
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::record::{Record, SampleLayout};
use perf_event_core::sys;
use perf_event_host::ringset::{Entry, Options, RingSet, Sharing};
use std::os::fd::{AsFd, AsRawFd};
use std::time::{Duration, Instant};

fn main() {
    let (tx, rx) = std::sync::mpsc::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        // SAFETY: gettid has no preconditions.
        tx.send(unsafe { libc::gettid() }).unwrap();
        go_rx.recv().unwrap();
        let end = Instant::now() + Duration::from_millis(300);
        let mut x = 0u64;
        while Instant::now() < end {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
    });
    let tid = rx.recv().unwrap();
    let attr = Attr::new(Event::Software(Software::CpuClock))
        .sample_period(1_000_000)
        .sample_type_raw(
            (sys::PERF_SAMPLE_TID | sys::PERF_SAMPLE_TIME | sys::PERF_SAMPLE_CPU) as u64,
        )
        .wakeup_events(1);
    let layout = SampleLayout::from_attr(&attr);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let entries = (0..cpus as u32)
        .map(|cpu| Entry {
            fd: open(&attr, Scope::thread_on(tid, cpu), None, OpenFlags::new())
                .unwrap_or_else(|e| panic!("cpu-clock on cpu {cpu}: {e}")),
            event: 0,
            layout,
            cpu: cpu as i32,
            thread: tid,
        })
        .collect();
    let opts = Options {
        data_pages: 8,
        sharing: Sharing::SameCpu,
        ..Options::default()
    };
    let mut set = RingSet::new(entries, opts).unwrap_or_else(|e| panic!("{e}"));

    let mut poll = Poll::new().unwrap();
    let raw = set.as_fd().as_raw_fd();
    poll.registry()
        .register(&mut SourceFd(&raw), Token(0), Interest::READABLE)
        .unwrap();
    go_tx.send(()).unwrap();

    let mut events = Events::with_capacity(8);
    let mut per_cpu = vec![0u64; cpus];
    let mut wakeups = 0;
    while !set.all_gone() {
        poll.poll(&mut events, Some(Duration::from_secs(5)))
            .unwrap();
        if events.is_empty() {
            eprintln!("no wakeup in 5 s");
            break;
        }
        wakeups += 1;
        let ready = set.wait(0).unwrap();
        if !ready.hung_up.is_empty() {
            println!("entries {:?}: the thread exited", ready.hung_up);
        }
        set.drain(|_, _, rec| {
            let mut scratch = [0u8; 256];
            if let Ok(p) = rec.parse(&layout, &mut scratch) {
                if let Record::Sample(s) = p.record {
                    per_cpu[s.cpu().unwrap_or(0) as usize] += 1;
                }
            }
        });
    }
    worker.join().unwrap();
    println!("{wakeups} wakeups; cpu-clock samples (1 per ms of CPU time) per CPU: {per_cpu:?}");
    println!("lost: {:?}", set.total_losses());
}
