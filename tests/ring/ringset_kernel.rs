//! The ring set against the running kernel: per-CPU rings fed by threads
//! pinned to each CPU, exact loss accounting, the time-ordered merge,
//! POLLHUP when the monitored process exits, shared rings told apart by
//! sample id, held records pinning the tail. The overload tests are in
//! `ringset_overload.rs`.

use crate::kernel_support;
use crate::ringset_support;
use crate::set_support::{self, RoleChild};

use perf_event_core::attr::Attr;
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::record::{Record, SampleLayout};
use perf_event_core::ring::RawRecord;
use perf_event_core::sys;
use perf_event_host::ringset::{Entry, Held, Options, RingSet, RingSetError, Sharing};
use ringset_support::*;
use std::collections::HashMap;
use std::time::{Duration, Instant};

#[derive(Default)]
struct Tally {
    /// Samples per (cpu, event).
    received: HashMap<(u32, usize), u64>,
    last_time: u64,
    backwards: u64,
    /// Each event's layout.
    layouts: Vec<SampleLayout>,
    /// Rounds through `RingSet::drain_ordered` rather than `fill` +
    /// `next_ordered` / `flush_next` + `release`.
    internal: bool,
}

impl Tally {
    /// One merge round; `flush`: every record held, safe or not.
    fn round(&mut self, set: &mut RingSet, flush: bool) {
        if self.internal {
            set.drain_ordered(flush, |h, rec| self.one(h, rec));
            return;
        }
        set.fill();
        loop {
            let held = if flush {
                set.flush_next()
            } else {
                set.next_ordered()
            };
            let Some(h) = held else { break };
            self.one(&h, &set.record(&h).unwrap());
            set.release(h);
        }
    }
    fn one(&mut self, h: &Held, rec: &RawRecord<'_>) {
        let event = h.event().expect("every record's event is found by its id");
        let layout = self.layouts[event];
        let mut scratch = [0u8; 256];
        if let Record::Sample(s) = parse(&layout, rec, &mut scratch) {
            *self.received.entry((s.cpu().unwrap(), event)).or_default() += 1;
            assert_eq!(h.time(), s.time(), "the peeked time is the parsed one");
        }
        let t = h.time().expect("sample_id_all: every record has a time");
        if t < self.last_time {
            self.backwards += 1;
        }
        self.last_time = self.last_time.max(t);
    }
}

#[test]
fn per_cpu_rings_account_for_every_event_and_merge_in_time_order() {
    per_cpu_rings_merged(false);
}

#[test]
fn drain_ordered_accounts_for_every_event_in_time_order_as_the_held_records_do() {
    per_cpu_rings_merged(true);
}

/// Every CPU's worker fires two tracepoints n times into per-CPU rings,
/// merged round by round while they run (`internal`: through
/// `RingSet::drain_ordered`): every event accounted for, in time order.
fn per_cpu_rings_merged(internal: bool) {
    let Some((prctl_attr, getppid_attr)) = tracepoints() else {
        return;
    };
    let cpus = cpus();
    // Each CPU's two tracepoints fill its 4-page ring many times over
    // either way (a record is 40 bytes); a lab guest emulates every one of
    // them (40-46 s for 20,000 on s390x 6.1 on a loaded host).
    let n: u32 = if crate::lab_support::lab_guest() {
        5_000
    } else {
        20_000
    };
    let w = workers(&cpus, n, None, &[prctl, getppid]);
    let mut entries = Vec::new();
    for &(cpu, tid) in &w.tids {
        for (event, attr) in [&prctl_attr, &getppid_attr].into_iter().enumerate() {
            let fd = open(
                attr,
                Scope::thread_on(tid, cpu as u32),
                None,
                OpenFlags::new(),
            )
            .unwrap_or_else(|e| panic!("{e}"));
            entries.push(Entry {
                fd,
                event,
                layout: SampleLayout::from_attr(attr),
                cpu: cpu as i32,
                thread: tid,
            });
        }
    }
    let opts = Options {
        data_pages: 4,
        sharing: Sharing::SameCpu,
        // Room for every record the rings can hold: order is never forced.
        max_held: cpus.len() * (4 * perf_event_core::linux::mmap::page_size() / 40 + 1),
    };
    let mut set = RingSet::new(entries, opts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(set.rings().len(), cpus.len(), "{:?}", set.unshared());
    for e in 0..set.entries() {
        set.fd(e).unwrap().enable(false).unwrap();
    }
    let mut tally = Tally {
        layouts: vec![
            SampleLayout::from_attr(&prctl_attr),
            SampleLayout::from_attr(&getppid_attr),
        ],
        internal,
        ..Tally::default()
    };
    w.go.wait();
    let mut finished = 0;
    // A hang guard only, far beyond any pace: a guest's slowest run took 46 s.
    let deadline = Instant::now() + Duration::from_secs(600);
    while finished < cpus.len() {
        assert!(Instant::now() < deadline, "workers did not finish in 600 s");
        set.wait(1).unwrap();
        tally.round(&mut set, false);
        finished += w.done.try_iter().count();
    }
    // Everything out, so the rings are empty for the pending LOST records.
    tally.round(&mut set, true);
    w.extra.wait();
    for _ in &cpus {
        w.done.recv().unwrap();
    }
    for e in 0..set.entries() {
        set.fd(e).unwrap().disable(false).unwrap();
    }
    tally.round(&mut set, true);
    for h in w.handles {
        h.join().unwrap();
    }

    let generated = u64::from(n) + 1;
    let mut total = 0;
    for (r, ring) in set.rings().iter().enumerate() {
        let (_, cpu, _, _) = set.entry(ring.entries()[0]).unwrap();
        let got: u64 = (0..2).map(|e| tally.received[&(cpu as u32, e)]).sum();
        let l = ring.losses();
        println!("ring {r} (cpu {cpu}): received {got}, lost {l:?}");
        assert_eq!((l.overruns, l.corrupt, l.lost_samples), (0, 0, 0));
        assert_eq!(got + l.lost, 2 * generated, "cpu {cpu}");
        total += got + l.lost;
    }
    // Per event: a shared ring's PERF_RECORD_LOST counts the ring's losses
    // (the kernel keeps one counter per ring) and names the event that
    // wrote next, so only the sum over the ring's events is exact.
    let per_event: u64 = (0..2)
        .map(|e| {
            let got: u64 = cpus.iter().map(|&c| tally.received[&(c as u32, e)]).sum();
            got + set.event_losses(e).lost
        })
        .sum();
    assert_eq!(per_event, 2 * generated * cpus.len() as u64);
    assert_eq!(total, 2 * generated * cpus.len() as u64);
    let stats = set.merge_stats();
    println!("merge: {stats:?}, total lost {:?}", set.total_losses());
    assert_eq!(stats.forced, 0, "the merge never had to break order");
    assert_eq!(stats.unguarded_rounds, 0, "every round barrier was granted");
    assert_eq!(tally.backwards, 0, "merged stream went back in time");
}

const POLLHUP_TEST: &str = "pollhup_arrives_when_the_monitored_process_exits_and_the_rest_drains";

#[test]
fn pollhup_arrives_when_the_monitored_process_exits_and_the_rest_drains() {
    if set_support::role().is_some() {
        // The child: one worker thread, which makes the calls on cue.
        set_support::run_workers(1);
    }
    let Some((attr, _)) = tracepoints() else {
        return;
    };
    const K: u32 = 500;
    // This test binary re-run as the child; its worker says its tid and
    // waits, so the events are open before it makes a call.
    let mut child = RoleChild::spawn(
        &set_support::libtest_name(module_path!(), POLLHUP_TEST),
        "workers",
        None,
    );
    let worker = child.tids()[0];
    let layout = SampleLayout::from_attr(&attr);
    let entries = cpus()
        .into_iter()
        .map(|cpu| Entry {
            fd: open(
                &attr,
                Scope::thread_on(worker, cpu as u32),
                None,
                OpenFlags::new(),
            )
            .unwrap_or_else(|e| panic!("{e}")),
            event: 0,
            layout,
            cpu: cpu as i32,
            thread: worker,
        })
        .collect();
    let mut set = RingSet::new(entries, Options::default()).unwrap();
    for e in 0..set.entries() {
        set.fd(e).unwrap().enable(false).unwrap();
    }
    // K prctl calls on the worker, then the child exits (and its worker
    // with it).
    child.send(&format!("go 0 {K}"));
    assert_eq!(child.line(), "done");
    child.send("exit");
    // A hang guard only: the child is exiting, the hang-ups are due.
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut hung_up = Vec::new();
    while !set.all_gone() {
        assert!(
            Instant::now() < deadline,
            "no POLLHUP in 600 s; got {hung_up:?}"
        );
        hung_up.extend_from_slice(&set.wait(100).unwrap().hung_up);
    }
    hung_up.sort();
    assert_eq!(hung_up, (0..set.entries()).collect::<Vec<_>>());
    let pid = child.pid();
    assert!(child.finish().success(), "the child failed");
    let mut samples = 0;
    set.drain(|_, event, rec| {
        assert_eq!(event, Some(0));
        let mut scratch = [0u8; 256];
        if let Record::Sample(s) = parse(&layout, rec, &mut scratch) {
            let (p, t) = s.pid_tid().unwrap();
            assert_eq!((p as i32, t as i32), (pid, worker));
            samples += 1;
        }
    });
    let lost = set.total_losses();
    assert_eq!(lost.dropped(), 0, "{lost:?}");
    assert_eq!(samples, u64::from(K));
    // After the hang-up the set reports it no more...
    assert!(set.wait(0).unwrap().hung_up.is_empty());
    // ...while the single-ring wait says "ready" (POLLHUP) instead of
    // timing out on a ring that will never fill again.
    let fd = set.fd(0).unwrap();
    assert_eq!(perf_event_core::ring::RingBuffer::wait(fd, 1000), Ok(true));
}

#[test]
fn an_entry_borrowing_an_fd_reads_that_event_s_ring() {
    let Some((attr, _)) = tracepoints() else {
        return;
    };
    let fd = open(&attr, Scope::this_thread(), None, OpenFlags::new()).unwrap();
    let layout = SampleLayout::from_attr(&attr);
    let entry = Entry::borrowing(&fd, 0, layout, -1, 0).unwrap();
    let mut set = RingSet::new(vec![entry], Options::default()).unwrap();
    // The original fd drives the event the set reads.
    fd.enable(false).unwrap();
    for _ in 0..10 {
        prctl();
    }
    fd.disable(false).unwrap();
    let mut n = 0;
    set.drain(|_, event, rec| {
        assert_eq!(event, Some(0));
        n += usize::from(rec.header.kind == sys::PERF_RECORD_SAMPLE);
    });
    assert_eq!(n, 10);
    assert_eq!(set.fd(0).unwrap().id().unwrap(), fd.id().unwrap());
}

#[test]
fn held_records_pin_the_tail_until_released_in_any_order() {
    let Some((attr, _)) = tracepoints() else {
        return;
    };
    let layout = SampleLayout::from_attr(&attr);
    let mut set = rings_of_this_thread(&attr, 2);
    prctls_sampled_by_every_entry(&set, 3);
    set.fill();
    let mut held = Vec::new();
    while let Some(h) = set.next_ordered().or_else(|| set.flush_next()) {
        held.push(h);
    }
    assert_eq!(held.len(), 6, "3 samples in each of 2 rings");
    // Every record is readable at once, from both rings, without a copy.
    let times: Vec<u64> = held
        .iter()
        .map(|h| {
            let rec = set.record(h).unwrap();
            let mut scratch = [0u8; 256];
            let Record::Sample(s) = parse(&layout, &rec, &mut scratch) else {
                panic!("not a sample")
            };
            s.time().unwrap()
        })
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    let tails =
        |set: &RingSet| -> Vec<u64> { set.rings().iter().map(|r| r.buffer().tail()).collect() };
    let heads: Vec<u64> = set.rings().iter().map(|r| r.buffer().head()).collect();
    assert_eq!(tails(&set), [0, 0]);
    // Ring 0's records, newest first: the tail stays until the oldest goes.
    let mut ring0: Vec<_> = Vec::new();
    let mut ring1: Vec<_> = Vec::new();
    for h in held {
        if h.ring() == 0 {
            ring0.push(h)
        } else {
            ring1.push(h)
        }
    }
    let first_len = ring0[0].len() as u64;
    set.release(ring0.pop().unwrap());
    set.release(ring0.pop().unwrap());
    assert_eq!(
        tails(&set),
        [0, 0],
        "the oldest record of ring 0 is still held"
    );
    set.release(ring0.pop().unwrap());
    assert_eq!(tails(&set), [heads[0], 0]);
    set.release(ring1.remove(0));
    assert_eq!(tails(&set), [heads[0], first_len]);
    for h in ring1 {
        set.release(h);
    }
    assert_eq!(tails(&set), heads);
}

#[test]
fn two_events_of_one_thread_share_a_ring_and_are_told_apart_by_id() {
    let Some((prctl_attr, getppid_attr)) = tracepoints() else {
        return;
    };
    let entries = |attrs: [&Attr; 2]| {
        attrs
            .into_iter()
            .enumerate()
            .map(|(event, attr)| Entry {
                fd: open(attr, Scope::this_thread(), None, OpenFlags::new()).unwrap(),
                event,
                layout: SampleLayout::from_attr(attr),
                cpu: -1,
                thread: gettid(),
            })
            .collect::<Vec<_>>()
    };
    let opts = Options {
        sharing: Sharing::SameCpu,
        ..Options::default()
    };
    // Without a sample id the shared ring's records could not be told apart.
    let no_id = |a: &Attr| a.sample_type_raw(SAMPLE & !(sys::PERF_SAMPLE_IDENTIFIER as u64));
    let (a, b) = (no_id(&prctl_attr), no_id(&getppid_attr));
    match RingSet::new(entries([&a, &b]), opts) {
        Err(e @ RingSetError::NoSampleId { .. }) => println!("{e}"),
        other => panic!("expected NoSampleId, got {other:?}"),
    }
    let mut set = RingSet::new(entries([&prctl_attr, &getppid_attr]), opts).unwrap();
    assert_eq!(set.rings().len(), 1, "{:?}", set.unshared());
    for e in 0..2 {
        set.fd(e).unwrap().enable(false).unwrap();
    }
    for _ in 0..7 {
        prctl();
    }
    for _ in 0..4 {
        getppid();
    }
    for e in 0..2 {
        set.fd(e).unwrap().disable(false).unwrap();
    }
    let mut per_event = [0; 2];
    set.drain(|_, event, rec| {
        if rec.header.kind == sys::PERF_RECORD_SAMPLE {
            per_event[event.expect("found by its id")] += 1;
        }
    });
    assert_eq!(per_event, [7, 4]);
}

/// The ring set built from an event set (`RingSet::from_event_set`): this
/// thread's two tracepoint events placed on every online CPU by the set,
/// one ring per CPU shared by both events; the thread moves from CPU to
/// CPU making a known number of calls on each, and every CPU's ring holds
/// exactly those samples (or counts them lost), each found by sample id to
/// the set's own event index.
#[test]
fn a_ring_set_over_an_event_set_reads_every_cpu_s_samples() {
    use perf_event_host::set::{BudgetPolicy, CpuSet, EventSet, EventSpec, Target, ThreadSet};
    let Some((prctl_attr, getppid_attr)) = tracepoints() else {
        return;
    };
    const PER_CPU: u64 = 300;
    let cpus = cpus();
    let tid = gettid();
    let group = vec![
        EventSpec::new("syscalls:sys_enter_prctl", prctl_attr),
        EventSpec::new("syscalls:sys_enter_getppid", getppid_attr),
    ];
    let target = Target::Threads {
        threads: ThreadSet::from_tids([tid]),
        cpus: Some(CpuSet::from_cpus(cpus.iter().map(|&c| c as u32))),
        inherit: false,
    };
    let events = EventSet::open(vec![group], target, BudgetPolicy::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(events.fd_count(), 2 * cpus.len());
    let opts = Options {
        data_pages: 8,
        sharing: Sharing::SameCpu,
        ..Options::default()
    };
    let mut set = RingSet::from_event_set(&events, opts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(set.rings().len(), cpus.len(), "{:?}", set.unshared());
    events.enable().unwrap();
    for &cpu in &cpus {
        pin_to(cpu);
        for _ in 0..PER_CPU {
            prctl();
            getppid();
        }
    }
    events.disable().unwrap();
    let mut got: HashMap<(u32, usize), u64> = HashMap::new();
    set.fill();
    while let Some(h) = set.flush_next() {
        let event = h.event().expect("the record's event is found by its id");
        let layout = *set.layout(event).unwrap();
        let rec = set.record(&h).unwrap();
        let mut scratch = [0u8; 256];
        if let Record::Sample(s) = parse(&layout, &rec, &mut scratch) {
            assert_eq!(s.pid_tid().map(|(_, t)| t), Some(tid as u32));
            *got.entry((s.cpu().unwrap(), event)).or_default() += 1;
        }
        set.release(h);
    }
    for (r, ring) in set.rings().iter().enumerate() {
        let (_, cpu, _, _) = set.entry(ring.entries()[0]).unwrap();
        let received: u64 = (0..2)
            .map(|e| got.get(&(cpu as u32, e)).copied().unwrap_or(0))
            .sum();
        let lost = ring.losses().lost;
        println!("ring {r} (cpu {cpu}): received {received}, lost {lost}");
        assert_eq!(received + lost, 2 * PER_CPU, "cpu {cpu}");
    }
}

#[test]
fn a_layout_without_time_never_calls_the_round_barrier() {
    let Some((attr, _)) = tracepoints() else {
        return;
    };
    // IP and TID only: the merge has no time to order by, so a barrier
    // could cover nothing.
    let attr = attr.sample_type_raw((sys::PERF_SAMPLE_IP | sys::PERF_SAMPLE_TID) as u64);
    let mut set = rings_of_this_thread(&attr, 2);
    // Counts this thread's membarrier(2) calls while the set fills.
    let membarriers = open(
        &Attr::new(perf_event_core::event::Event::Tracepoint(
            kernel_support::tracepoint_id("syscalls", "sys_enter_membarrier"),
        ))
        .disabled(true),
        Scope::this_thread(),
        None,
        OpenFlags::new(),
    )
    .unwrap();
    prctls_sampled_by_every_entry(&set, 3);
    membarriers.enable(false).unwrap();
    for _ in 0..3 {
        set.fill();
        assert!(
            set.next_ordered().is_none(),
            "nothing is safe without times"
        );
    }
    membarriers.disable(false).unwrap();
    let mut n = 0;
    while let Some(h) = set.flush_next() {
        set.release(h);
        n += 1;
    }
    assert_eq!(n, 6, "3 samples in each of 2 rings, all flushed");
    assert_eq!(
        membarriers.read_counts().unwrap().value,
        0,
        "membarrier calls"
    );
    let stats = set.merge_stats();
    assert_eq!((stats.barriers, stats.unguarded_rounds), (0, 0));
}

/// Enables every entry of `set`, makes `n` prctl calls, disables them again:
/// `n` samples in each entry's ring.
fn prctls_sampled_by_every_entry(set: &RingSet, n: u32) {
    for e in 0..set.entries() {
        set.fd(e).unwrap().enable(false).unwrap();
    }
    for _ in 0..n {
        prctl();
    }
    for e in 0..set.entries() {
        set.fd(e).unwrap().disable(false).unwrap();
    }
}

/// `n` entries of `attr` on this thread (any CPU), each with its own ring.
fn rings_of_this_thread(attr: &Attr, n: usize) -> RingSet {
    let layout = SampleLayout::from_attr(attr);
    let entries = (0..n)
        .map(|_| Entry {
            fd: open(attr, Scope::this_thread(), None, OpenFlags::new()).unwrap(),
            event: 0,
            layout,
            cpu: -1,
            thread: 0,
        })
        .collect();
    RingSet::new(entries, Options::default()).unwrap()
}

/// A ring set written to perf.data through its time-ordered merge
/// (`Writer::write_ordered`, one FINISHED_ROUND per merge round) and read
/// back with the crate's reader: every sample, each told to its event by
/// its id, in time order, the attrs with their ids.
#[test]
fn a_ring_set_written_through_the_merge_reads_back_in_time_order() {
    use perf_data_file::{Features, PerfData, RecordedEvent, Writer};
    let Some((prctl_attr, _)) = tracepoints() else {
        return;
    };
    let mut set = rings_of_this_thread(&prctl_attr, 3);
    let ids: Vec<u64> = (0..3).map(|e| set.fd(e).unwrap().id().unwrap()).collect();
    let path = std::env::temp_dir().join(format!("ringset-perf-data-{}", std::process::id()));
    let event = RecordedEvent {
        attr: prctl_attr,
        name: "syscalls:sys_enter_prctl".into(),
        ids: ids.clone(),
    };
    let file = std::fs::File::create(&path).unwrap();
    let mut w = Writer::create(file, vec![event], Features::default()).unwrap();
    const N: u32 = 300;
    prctls_sampled_by_every_entry(&set, N);
    let mut written = w.write_ordered(&mut set, false).unwrap();
    written += w.write_ordered(&mut set, true).unwrap();
    let stats = w.stats();
    w.finish().unwrap();
    let data = PerfData::open(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(data.attrs[0].ids, ids);
    let (mut samples, mut last, mut rounds) = (0, 0, 0);
    for rec in data.records() {
        let (_, bytes) = rec.unwrap();
        if bytes[..4] == 68u32.to_ne_bytes() {
            rounds += 1;
            continue;
        }
        if let Record::Sample(s) = data.parse(bytes).unwrap().record {
            let t = s.time().unwrap();
            assert!(t >= last, "time order");
            last = t;
            samples += 1;
        }
    }
    let lost = set.total_losses().dropped();
    println!("{written} written, {samples} samples, {rounds} rounds, {lost} lost, {stats:?}");
    assert_eq!(samples as u64 + lost, 3 * u64::from(N));
    assert!(rounds >= 1 && rounds as u64 == stats.rounds);
}
