//! The ring set under overload, against the running kernel: 1 + 1-page
//! rings under a tracepoint storm (every lost record accounted, no torn
//! record read, the loss written to perf.data as perf record writes it) and an overrun (reported with the bytes skipped).

use crate::ringset_support;

use perf_data_file::{Features, PerfData, RecordedEvent, Writer};
use perf_event_core::linux::mmap::page_size;
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::record::{Record, SampleLayout};
use perf_event_core::sys;
use perf_event_host::ringset::{Entry, Options, RingSet};
use ringset_support::*;

#[test]
fn one_page_rings_under_a_tracepoint_storm_account_every_lost_record() {
    let Some((attr, _)) = tracepoints() else {
        return;
    };
    let cpus = cpus();
    // Overload whatever the page size and the pace of writer and reader:
    // before the reader drains at all, each worker makes more records than
    // its 1-page ring holds (a record is at least its 8-byte header), and
    // waits for the reader; the rest of the storm meets a draining reader.
    let ring_bytes = page_size();
    let burst = (ring_bytes / 8 + 1) as u32;
    // Enough rounds after the held burst (at most 8,193 records, for 64 KiB
    // pages) for the ring to wrap many times under a draining reader; a lab
    // guest emulates every record (37 s for 30,000 on s390x 6.1 on a loaded
    // host), and 5,000 after the burst wrap its ring dozens of times.
    let n: u32 = if crate::lab_support::lab_guest() {
        burst + 5_000
    } else {
        30_000
    };
    let w = workers(&cpus, n, Some(burst), &[prctl]);
    let layout = SampleLayout::from_attr(&attr);
    let entries: Vec<Entry> = w
        .tids
        .iter()
        .map(|&(cpu, tid)| Entry {
            fd: open(
                &attr,
                Scope::thread_on(tid, cpu as u32),
                None,
                OpenFlags::new(),
            )
            .unwrap_or_else(|e| panic!("{e}")),
            event: 0,
            layout,
            cpu: cpu as i32,
            thread: tid,
        })
        .collect();
    let opts = Options {
        data_pages: 1,
        ..Options::default()
    };
    let mut set = RingSet::new(entries, opts).unwrap();
    let ids: Vec<u64> = (0..set.entries())
        .map(|e| set.fd(e).unwrap().id().unwrap())
        .collect();
    for e in 0..set.entries() {
        set.fd(e).unwrap().enable(false).unwrap();
    }
    let mut received = vec![0u64; set.rings().len()];
    let tid_of_ring: Vec<i32> = w.tids.iter().map(|t| t.1).collect();
    let check = |set: &mut RingSet, received: &mut Vec<u64>| {
        set.drain(|ring, _, rec| {
            let mut scratch = [0u8; 256];
            if let Record::Sample(s) = parse(&layout, rec, &mut scratch) {
                // A torn record would show a wrong tid, id or cpu here.
                assert_eq!(s.pid_tid().map(|p| p.1 as i32), Some(tid_of_ring[ring]));
                assert_eq!(s.id(), Some(ids[ring]));
                assert_eq!(s.cpu(), Some(w.tids[ring].0 as u32));
                received[ring] += 1;
            }
        });
    };
    w.go.wait();
    assert_eq!(set.rings()[0].buffer().data_size(), ring_bytes);
    w.held.as_ref().expect("a held burst").wait();
    let mut finished = 0;
    while finished < cpus.len() {
        check(&mut set, &mut received);
        finished += w.done.try_iter().count();
    }
    check(&mut set, &mut received);
    w.extra.wait();
    for _ in &cpus {
        w.done.recv().unwrap();
    }
    for e in 0..set.entries() {
        set.fd(e).unwrap().disable(false).unwrap();
    }
    check(&mut set, &mut received);
    for h in w.handles {
        h.join().unwrap();
    }
    let generated = u64::from(n) + 1;
    let mut lost_total = 0;
    for (r, ring) in set.rings().iter().enumerate() {
        let l = ring.losses();
        println!("ring {r}: received {}, {l:?}", received[r]);
        assert_eq!((l.overruns, l.corrupt), (0, 0));
        assert_eq!(received[r] + l.lost, generated, "ring {r}");
        lost_total += l.lost;
    }
    assert_eq!(set.event_losses(0).lost, lost_total);
    assert!(
        lost_total > 0,
        "1-page rings ({ring_bytes} bytes) lost nothing of a burst of {burst} records per CPU \
         made while the reader was held: the kernel kept records it had no room for"
    );
    // Written to perf.data as perf record ends a recording: one
    // LOST_SAMPLES with the event's lost count, naming its first id.
    let event = RecordedEvent {
        attr,
        name: "syscalls:sys_enter_prctl".into(),
        ids: ids.clone(),
    };
    let mut w = Writer::pipe(Vec::new(), vec![event], Features::default()).unwrap();
    w.write_lost_samples(&set).unwrap();
    let file = PerfData::from_bytes(w.finish().unwrap()).unwrap();
    let written: Vec<(u64, Option<u64>)> = file
        .records()
        .map_while(Result::ok)
        .filter_map(|(_, b)| {
            let p = file.parse(b).ok()?;
            match p.record {
                Record::LostSamples { lost } => Some((lost, p.sample_id.and_then(|i| i.id))),
                _ => None,
            }
        })
        .collect();
    assert_eq!(written, vec![(lost_total, Some(ids[0]))]);
}

#[test]
fn an_overrun_is_reported_with_the_bytes_skipped_and_reading_goes_on() {
    let Some((attr, _)) = tracepoints() else {
        return;
    };
    let fd = open(&attr, Scope::this_thread(), None, OpenFlags::new()).unwrap();
    let entry = Entry {
        fd,
        event: 0,
        layout: SampleLayout::from_attr(&attr),
        cpu: -1,
        thread: 0,
    };
    let mut set = RingSet::new(vec![entry], Options::default()).unwrap();
    let fd = set.fd(0).unwrap();
    fd.enable(false).unwrap();
    for _ in 0..10 {
        prctl();
    }
    fd.disable(false).unwrap();
    // Simulate a writer that passed the reader: data_tail more than the
    // ring's size behind data_head (the kernel never does this in the
    // default mode; a reader that lost track of its tail would).
    let ring = set.rings()[0].buffer();
    let (head, size) = (ring.head(), ring.data_size() as u64);
    let meta = ring.metadata().as_ptr();
    // The kernel's positions are `unsigned long`: the low word of the u64.
    let low = if cfg!(all(target_endian = "big", target_pointer_width = "32")) {
        4
    } else {
        0
    };
    let bogus = (head as usize).wrapping_sub(size as usize + 64);
    // SAFETY: data_tail is a u64 field of the mapped metadata page (8-aligned,
    // so its low word is usize-aligned) that only the reader writes; written
    // atomically, as the ring does.
    unsafe {
        let tail = std::ptr::addr_of_mut!((*meta).data_tail)
            .cast::<u8>()
            .add(low);
        (*(tail as *const std::sync::atomic::AtomicUsize))
            .store(bogus, std::sync::atomic::Ordering::Release);
    }
    let mut walked = 0;
    set.drain(|_, _, _| walked += 1);
    let l = set.rings()[0].losses();
    assert_eq!(
        (walked, l.overruns, l.bytes_skipped),
        (0, 1, size + 64),
        "{l:?}"
    );
    // The reader resynchronised at the head: new records read normally.
    let fd = set.fd(0).unwrap();
    fd.enable(false).unwrap();
    for _ in 0..5 {
        prctl();
    }
    fd.disable(false).unwrap();
    set.drain(|_, _, rec| walked += u32::from(rec.header.kind == sys::PERF_RECORD_SAMPLE));
    assert_eq!(walked, 5);
}
