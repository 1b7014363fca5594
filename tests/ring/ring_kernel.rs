//! The ring buffer and record parser against the running kernel.

use crate::kernel_support;
use crate::lab_support;

use kernel_support::{prctls, tracepoint_id};
use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Software};
use perf_event_core::fd::EventFd;
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::record::{Record, SampleLayout};
use perf_event_core::ring::RingBuffer;
use perf_event_core::sys;

const TID_TIME: u64 = (sys::PERF_SAMPLE_TID | sys::PERF_SAMPLE_TIME) as u64;

fn this_thread(attr: &Attr) -> EventFd {
    open(attr, Scope::this_thread(), None, OpenFlags::new()).unwrap_or_else(|e| panic!("{e}"))
}

/// How many 4 KiB pages one page of this machine holds (16 with ppc64el's
/// 64 KiB pages): tests that must fill a one-page ring write that much more.
fn pages_of_4k() -> u32 {
    (perf_event_core::linux::mmap::page_size() / 4096).max(1) as u32
}

fn prctl_samples(sample_type: u64) -> Option<Attr> {
    if let Err(why) = kernel_support::syscall_tracepoints() {
        lab_support::not_applicable(lab_support::Need::SyscallTracepoints, &why);
        return None;
    }
    let id = tracepoint_id("syscalls", "sys_enter_prctl");
    Some(
        Attr::new(Event::Tracepoint(id))
            .disabled(true)
            .sample_period(1)
            .sample_type_raw(sample_type),
    )
}

fn gettid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u32 }
}

/// Every record in the ring now, as (type, owned summary) via a callback.
fn drain(ring: &mut RingBuffer, layout: &SampleLayout, mut each: impl FnMut(&Record<'_>)) {
    let mut batch = ring.records();
    while let Some(rec) = batch.next() {
        let rec = rec.unwrap_or_else(|e| panic!("{e}"));
        let mut scratch = [0u8; 1 << 16];
        let parsed = rec
            .parse(layout, &mut scratch)
            .unwrap_or_else(|e| panic!("{e}"));
        each(&parsed.record);
    }
}

#[test]
fn a_hundred_prctls_give_a_hundred_samples_with_tid_and_rising_time() {
    let Some(attr) = prctl_samples(TID_TIME) else {
        return;
    };
    let fd = this_thread(&attr);
    let mut ring = RingBuffer::map(&fd, 4).unwrap();
    let layout = SampleLayout::from_attr(&attr);
    fd.enable(false).unwrap();
    prctls(100);
    fd.disable(false).unwrap();
    let (mut n, mut last_time) = (0, 0);
    let tid = gettid();
    drain(&mut ring, &layout, |r| {
        let Record::Sample(s) = r else {
            panic!("unexpected {r:?}")
        };
        assert_eq!(s.pid_tid().map(|p| p.1), Some(tid));
        let t = s.time().unwrap();
        assert!(t > last_time, "time {t} after {last_time}");
        last_time = t;
        n += 1;
    });
    assert_eq!(n, 100);
}

#[test]
fn a_sleeping_thread_gives_context_switch_records() {
    let attr = Attr::new(Event::Software(Software::Dummy))
        .disabled(true)
        .context_switch(true);
    let fd = this_thread(&attr);
    let mut ring = RingBuffer::map(&fd, 2).unwrap();
    fd.enable(false).unwrap();
    for _ in 0..5 {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    fd.disable(false).unwrap();
    let (mut out, mut into) = (0, 0);
    let layout = SampleLayout::from_attr(&attr);
    let mut batch = ring.records();
    while let Some(rec) = batch.next() {
        let rec = rec.unwrap();
        if rec.header.kind == sys::PERF_RECORD_SWITCH {
            if rec.header.misc & sys::PERF_RECORD_MISC_SWITCH_OUT as u16 != 0 {
                out += 1;
            } else {
                into += 1;
            }
        }
        let mut scratch = [0u8; 256];
        rec.parse(&layout, &mut scratch).unwrap();
    }
    assert!(
        out >= 5 && into >= 5,
        "{out} switches out, {into} in, for 5 sleeps"
    );
}

#[test]
fn an_executable_mapping_gives_an_mmap2_record_naming_the_file() {
    let attr = Attr::new(Event::Software(Software::Dummy))
        .disabled(true)
        .mmap(true)
        .mmap2(true);
    let fd = this_thread(&attr);
    let mut ring = RingBuffer::map(&fd, 2).unwrap();
    let exe = std::fs::File::open("/proc/self/exe").unwrap();
    let path = std::fs::read_link("/proc/self/exe").unwrap();
    fd.enable(false).unwrap();
    // SAFETY: mapping one page of our own executable read+exec, unmapped below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_EXEC,
            libc::MAP_PRIVATE,
            std::os::fd::AsRawFd::as_raw_fd(&exe),
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    fd.disable(false).unwrap();
    // SAFETY: unmapping what was mapped above.
    unsafe { libc::munmap(p, 4096) };
    let mut found = false;
    drain(&mut ring, &SampleLayout::from_attr(&attr), |r| {
        if let Record::Mmap2 { addr, filename, .. } = r {
            if *addr == p as u64 {
                assert_eq!(*filename, path.as_os_str().as_encoded_bytes());
                found = true;
            }
        }
    });
    assert!(found, "no MMAP2 record for the mapping at {p:?}");
}

#[test]
fn a_child_gives_fork_comm_and_exit_records() {
    let attr = Attr::new(Event::Software(Software::Dummy))
        .disabled(true)
        .inherit(true)
        .task(true)
        .comm(true)
        .comm_exec(true)
        .sample_id_all(true)
        .sample_type_raw(TID_TIME);
    // The kernel refuses to mmap an inherited per-thread (cpu -1) event: one
    // event and ring per CPU, as perf record does.
    // SAFETY: sysconf has no preconditions.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) } as u32;
    let mut events: Vec<(EventFd, RingBuffer)> = (0..cpus)
        .map(|cpu| {
            let fd = open(&attr, Scope::this_thread_on(cpu), None, OpenFlags::new()).unwrap();
            let ring = RingBuffer::map(&fd, 4).unwrap();
            (fd, ring)
        })
        .collect();
    let this = open(&attr, Scope::this_thread(), None, OpenFlags::new()).unwrap();
    assert_eq!(
        RingBuffer::map(&this, 1).unwrap_err(),
        perf_event_core::ring::RingError::Map(perf_event_core::linux::errno::Errno(libc::EINVAL))
    );
    for (fd, _) in &events {
        fd.enable(false).unwrap();
    }
    let status = std::process::Command::new("/bin/true").status().unwrap();
    assert!(status.success());
    for (fd, _) in &events {
        fd.disable(false).unwrap();
    }
    // (kind, pid, ppid, comm) of every task record, from all CPUs' rings.
    let mut seen: Vec<(&str, u32, u32, Vec<u8>)> = Vec::new();
    let layout = SampleLayout::from_attr(&attr);
    for (_, ring) in &mut events {
        drain(ring, &layout, |r| match *r {
            Record::Fork { pid, ppid, .. } => seen.push(("fork", pid, ppid, Vec::new())),
            Record::Comm { pid, comm, .. } => seen.push(("comm", pid, 0, comm.to_vec())),
            Record::Exit { pid, ppid, .. } => seen.push(("exit", pid, ppid, Vec::new())),
            _ => {}
        });
    }
    let me = std::process::id();
    let fork = seen
        .iter()
        .find(|s| s.0 == "fork" && s.2 == me)
        .map(|s| s.1);
    let comm = seen
        .iter()
        .any(|s| s.0 == "comm" && Some(s.1) == fork && s.3 == b"true");
    let exit = seen.iter().any(|s| s.0 == "exit" && Some(s.1) == fork);
    assert!(
        fork.is_some() && comm && exit,
        "fork {fork:?}, comm {comm}, exit {exit}"
    );
}

#[test]
fn samples_plus_lost_equal_the_burst_exactly() {
    const N: u64 = 5000;
    let Some(attr) = prctl_samples(TID_TIME) else {
        return;
    };
    let fd = this_thread(&attr);
    let mut ring = RingBuffer::map(&fd, 1).unwrap();
    let layout = SampleLayout::from_attr(&attr);
    fd.enable(false).unwrap();
    prctls(N as u32);
    // Read what fit, then one more call: the kernel writes the LOST record
    // for the dropped samples when it next has room.
    let (mut samples, mut lost) = (0u64, 0u64);
    let mut count = |r: &Record<'_>| match r {
        Record::Sample(_) => samples += 1,
        Record::Lost { lost: n, .. } => lost += n,
        other => panic!("unexpected {other:?}"),
    };
    drain(&mut ring, &layout, &mut count);
    prctls(1);
    fd.disable(false).unwrap();
    drain(&mut ring, &layout, &mut count);
    assert!(lost > 0, "a one-page buffer must overflow with {N} samples");
    assert_eq!(samples + lost, N + 1);
}

#[test]
fn records_straddling_the_wrap_parse_like_the_others() {
    let raw = (sys::PERF_SAMPLE_RAW | sys::PERF_SAMPLE_TID) as u64;
    let Some(attr) = prctl_samples(raw) else {
        return;
    };
    let fd = this_thread(&attr);
    let mut ring = RingBuffer::map(&fd, 1).unwrap();
    let layout = SampleLayout::from_attr(&attr);
    let (mut wrapped, mut total, mut first_raw): (u32, u32, Option<Vec<u8>>) = (0, 0, None);
    // 40 rounds of 20 wrap a 4 KiB page several times; as many more for
    // larger pages (ppc64el's 6.1: 64 KiB).
    let rounds = 40 * pages_of_4k();
    fd.enable(false).unwrap();
    for _ in 0..rounds {
        prctls(20);
        let mut batch = ring.records();
        while let Some(rec) = batch.next() {
            let rec = rec.unwrap();
            wrapped += rec.wraps() as u32;
            let mut scratch = [0u8; 512];
            let Record::Sample(s) = rec.parse(&layout, &mut scratch).unwrap().record else {
                panic!()
            };
            // The raw tracepoint data (syscall nr, option 3, args 0) is the
            // same for every call: wrapped copies must equal the others.
            // Bytes 2..4 are trace_entry's common_flags and preempt count,
            // which the kernel sets per event (irqs-off, need-resched...).
            let mut data = s.raw().unwrap().to_vec();
            data[2..4].fill(0);
            match &first_raw {
                None => first_raw = Some(data),
                Some(f) => assert_eq!(&data, f),
            }
            total += 1;
        }
    }
    fd.disable(false).unwrap();
    assert_eq!(total, rounds * 20);
    assert!(
        wrapped >= 3,
        "only {wrapped} of {total} records straddled the wrap"
    );
}

#[test]
fn overwrite_snapshots_return_the_newest_records_first() {
    let Some(attr) = prctl_samples(TID_TIME) else {
        return;
    };
    // Sample times on CLOCK_MONOTONIC, so they compare with clock_gettime.
    let attr = attr.write_backward(true).clockid(libc::CLOCK_MONOTONIC);
    let fd = this_thread(&attr);
    let ring = RingBuffer::map_overwrite(&fd, 1).unwrap();
    let layout = SampleLayout::from_attr(&attr);
    let now = || {
        // SAFETY: clock_gettime on a valid timespec.
        unsafe {
            let mut ts: libc::timespec = std::mem::zeroed();
            libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
            ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
        }
    };
    // Far more than a 4 KiB page holds (1000 calls), or a larger page.
    let calls = 1000 * pages_of_4k();
    fd.enable(false).unwrap();
    prctls(calls - 1);
    let before_last = now();
    prctls(1);
    let after_last = now();
    let mut buf = vec![0u8; ring.data_size()];
    let snap = ring.snapshot(&fd, &mut buf).unwrap();
    let times: Vec<u64> = snap
        .records()
        .map(
            |r| match perf_event_core::record::parse(&layout, r).unwrap().record {
                Record::Sample(s) => s.time().unwrap(),
                other => panic!("{other:?}"),
            },
        )
        .collect();
    fd.disable(false).unwrap();
    assert!(
        times.len() > 50 && times.len() < calls as usize,
        "{} records in a one-page snapshot of {calls} calls",
        times.len()
    );
    assert!(times.windows(2).all(|w| w[0] > w[1]), "newest first");
    assert!(
        (before_last..=after_last).contains(&times[0]),
        "the first record is the last call's: {} not in [{before_last}, {after_last}]",
        times[0]
    );
}

#[test]
fn poll_wakes_after_wakeup_events_samples() {
    let Some(attr) = prctl_samples(TID_TIME) else {
        return;
    };
    let attr = attr.wakeup_events(10);
    let fd = this_thread(&attr);
    let _ring = RingBuffer::map(&fd, 2).unwrap();
    fd.enable(false).unwrap();
    prctls(5);
    assert!(
        !RingBuffer::wait(&fd, 0).unwrap(),
        "5 samples: below wakeup_events = 10"
    );
    prctls(5);
    assert!(RingBuffer::wait(&fd, 100).unwrap(), "10 samples: readable");
    fd.disable(false).unwrap();
}
