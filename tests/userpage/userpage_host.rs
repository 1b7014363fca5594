//! The user-space reader against the host kernel, with software events
//! (no hardware PMU needed): their page says `index == 0` (and, on the
//! hosts we run on, `cap_user_rdpmc == 0`), so every read must fall back to
//! `read(2)` and agree with it exactly. Events that do not monitor the
//! calling thread must never take the instruction path. The page is mapped
//! with the system page size, never an assumed 4096.

use perf_event_core::linux::errno::Errno;
use perf_event_core::linux::mmap::page_size;
use perf_event_core::read_format::{ReadError, ReadFormat, Scaled};
use perf_event_core::sys;
use perf_event_core::userpage::{
    CounterFd, CounterReader, EventTarget, FallbackReason, RawCounterFd, ReadPath, UserPage,
    REQUIRED_READ_FORMAT,
};
use std::io::Error;

const TIMES: u64 = REQUIRED_READ_FORMAT.bits();

fn open(config: u32, read_format: u64, pid: libc::pid_t, cpu: libc::c_int) -> libc::c_int {
    let mut attr = sys::perf_event_attr {
        type_: sys::PERF_TYPE_SOFTWARE,
        size: core::mem::size_of::<sys::perf_event_attr>() as u32,
        config: u64::from(config),
        read_format,
        ..Default::default()
    };
    attr.set_disabled(1);
    attr.set_exclude_kernel(1);
    attr.set_exclude_hv(1);
    // SAFETY: a whole perf_event_attr whose size is its own size.
    let fd = unsafe {
        libc::syscall(
            libc::c_long::from(sys::__NR_perf_event_open),
            &attr as *const sys::perf_event_attr,
            pid,
            cpu,
            -1 as libc::c_int,
            libc::c_ulong::from(sys::PERF_FLAG_FD_CLOEXEC),
        )
    };
    assert!(
        fd >= 0,
        "perf_event_open(software {config}, pid {pid}, cpu {cpu}): {}",
        Error::last_os_error()
    );
    fd as libc::c_int
}

fn ioctl(fd: libc::c_int, request: u32) {
    // SAFETY: ENABLE / DISABLE / RESET take no pointer.
    let r = unsafe { libc::ioctl(fd, request as _, 0) };
    assert_eq!(r, 0, "ioctl {request:#x}: {}", Error::last_os_error());
}

fn close(fd: libc::c_int) {
    // SAFETY: an fd this test opened and no longer uses.
    unsafe { libc::close(fd) };
}

/// One event's value and times as `read(2)` returned them.
struct Direct {
    value: u64,
    time_enabled: u64,
    time_running: u64,
}

/// `read(2)` with read_format TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING,
/// written out here so the reader is compared with an independent read.
fn raw_read(fd: libc::c_int) -> Direct {
    let mut buf = [0u64; 3];
    // SAFETY: 24 writable bytes.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), 24) };
    assert_eq!(n, 24, "read: {}", Error::last_os_error());
    Direct {
        value: buf[0],
        time_enabled: buf[1],
        time_running: buf[2],
    }
}

fn burn() {
    let mut x = 0u64;
    for i in 0..3_000_000u64 {
        x = std::hint::black_box(x ^ i.wrapping_mul(31));
    }
}

fn make_reader(fd: libc::c_int, target: EventTarget) -> CounterReader<UserPage, RawCounterFd> {
    // SAFETY: the callers' open perf event fd, closed after the reader is dropped.
    let page = unsafe { UserPage::map_raw(fd) }.unwrap_or_else(|e| panic!("{e}"));
    // SAFETY: as above.
    let fd = unsafe { RawCounterFd::new(fd, ReadFormat(TIMES)) }.expect("0x3");
    CounterReader::new(page, fd, target)
}

fn expect_fallback(path: ReadPath) -> FallbackReason {
    match path {
        ReadPath::Syscall { reason } => reason,
        other => panic!("a software event took the instruction path: {other:?}"),
    }
}

#[test]
fn page_size_comes_from_sysconf() {
    // SAFETY: sysconf has no preconditions.
    let sys_page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    assert_eq!(page_size(), sys_page);
}

#[test]
fn software_event_falls_back_and_agrees_with_read_exactly() {
    let fd = open(sys::PERF_COUNT_SW_TASK_CLOCK, TIMES, 0, -1);
    let reader = make_reader(fd, EventTarget::as_opened(0, -1));
    assert!(
        reader.may_use_counter(),
        "pid 0, cpu -1 monitors this thread"
    );
    ioctl(fd, sys::PERF_EVENT_IOC_ENABLE);
    burn();
    ioctl(fd, sys::PERF_EVENT_IOC_DISABLE);
    // Disabled: value and times stand still, so both reads must be equal.
    for _ in 0..1000 {
        let reading = reader.read().unwrap_or_else(|e| panic!("{e}"));
        let reason = expect_fallback(reading.path);
        let snap = reader.snapshot().expect("stable page");
        let expected = if snap.cap_user_rdpmc() {
            FallbackReason::NotOnPmu
        } else {
            FallbackReason::NoUserAccess
        };
        assert_eq!(reason, expected, "page: {snap:?}");
        assert_eq!(snap.index, 0, "a software event has no hardware counter");
        let direct = raw_read(fd);
        assert!(direct.value > 0, "task-clock counted nothing");
        assert_eq!(
            (
                reading.counts.value,
                reading.counts.enabled,
                reading.counts.running
            ),
            (
                direct.value,
                Some(direct.time_enabled),
                Some(direct.time_running)
            )
        );
        assert_eq!(
            reading.counts.scaled(),
            Scaled::Exact(direct.value),
            "never multiplexed"
        );
    }
    drop(reader);
    close(fd);
}

#[test]
fn running_software_event_reads_between_two_direct_reads() {
    let fd = open(sys::PERF_COUNT_SW_TASK_CLOCK, TIMES, 0, -1);
    let reader = make_reader(fd, EventTarget::as_opened(0, -1));
    ioctl(fd, sys::PERF_EVENT_IOC_ENABLE);
    let mut last = 0;
    for _ in 0..200 {
        burn_a_little();
        let before = raw_read(fd);
        let reading = reader.read().expect("read");
        let after = raw_read(fd);
        expect_fallback(reading.path);
        assert!(before.value <= reading.counts.value && reading.counts.value <= after.value);
        assert!(Some(before.time_enabled) <= reading.counts.enabled);
        assert!(reading.counts.enabled <= Some(after.time_enabled));
        assert!(reading.counts.value >= last, "task-clock went backwards");
        last = reading.counts.value;
        // The page's offset is the count at its last update (index 0).
        let snap = reader.snapshot().expect("stable page");
        assert!(snap.offset as u64 <= raw_read(fd).value, "{snap:?}");
    }
    assert!(last > 0);
    drop(reader);
    close(fd);
}

fn burn_a_little() {
    let mut x = 0u64;
    for i in 0..20_000u64 {
        x = std::hint::black_box(x ^ i);
    }
}

#[test]
fn events_of_other_threads_or_cpus_never_use_the_instruction() {
    // pid 0 on CPU 0 only: counts this thread, but only while it runs there.
    let fd = open(sys::PERF_COUNT_SW_TASK_CLOCK, TIMES, 0, 0);
    let reader = make_reader(fd, EventTarget::as_opened(0, 0));
    assert!(!reader.may_use_counter());
    let reading = reader.read().expect("read");
    assert_eq!(expect_fallback(reading.path), FallbackReason::OtherThread);
    drop(reader);
    close(fd);

    // Opened here for this thread, read from another thread.
    let fd = open(sys::PERF_COUNT_SW_TASK_CLOCK, TIMES, 0, -1);
    let target = EventTarget::as_opened(0, -1);
    assert!(target.monitors_calling_thread());
    std::thread::spawn(move || {
        assert!(!target.monitors_calling_thread());
        let reader = make_reader(fd, target);
        assert!(!reader.may_use_counter());
        let reading = reader.read().expect("read");
        assert_eq!(expect_fallback(reading.path), FallbackReason::OtherThread);
    })
    .join()
    .expect("reader thread");
    close(fd);

    // pid = own tid is this thread; another tid is not; pid -1 never.
    let me = perf_event_core::linux::system::gettid();
    assert!(EventTarget::as_opened(me, -1).monitors_calling_thread());
    assert!(!EventTarget::as_opened(me + 1, -1).monitors_calling_thread());
    assert!(!EventTarget::as_opened(-1, 0).monitors_calling_thread());
}

#[test]
fn the_fallback_parses_exactly_what_read_format_implies() {
    let id = sys::PERF_FORMAT_ID as u64;
    let lost = sys::PERF_FORMAT_LOST as u64;
    // PERF_FORMAT_LOST is Linux 6.0: older kernels (the lab's 5.10 guests)
    // refuse it with EINVAL.
    let has_lost = perf_event_core::linux::system::kernel_version()
        .is_some_and(|k| k.at_least(perf_event_core::abi::KernelVersion::new(6, 0, 0)));
    let formats = [TIMES, TIMES | id, TIMES | lost, TIMES | id | lost];
    for format in formats.into_iter().filter(|f| has_lost || f & lost == 0) {
        let fd = open(sys::PERF_COUNT_SW_TASK_CLOCK, format, 0, -1);
        // SAFETY: an open perf event fd, closed at the end of the iteration.
        let raw = unsafe { RawCounterFd::new(fd, ReadFormat(format)) }.expect("valid format");
        assert_eq!(raw.read_size(), 8 * (1 + format.count_ones() as usize));
        ioctl(fd, sys::PERF_EVENT_IOC_ENABLE);
        burn_a_little();
        ioctl(fd, sys::PERF_EVENT_IOC_DISABLE);
        let counts = raw.read_counts().expect("read");
        let mut buf = [0u64; 5];
        // SAFETY: 40 writable bytes; the kernel writes read_size of them.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), 40) };
        assert_eq!(n as usize, raw.read_size());
        assert_eq!(
            (counts.value, counts.enabled, counts.running),
            (buf[0], Some(buf[1]), Some(buf[2]))
        );
        // The same fd with a read_format it was not opened with: the size
        // does not match, and the reader says so instead of guessing.
        let wrong = if format & id != 0 {
            format & !id
        } else {
            format | id
        };
        // SAFETY: as above.
        let err = unsafe { RawCounterFd::new(fd, ReadFormat(wrong)) }
            .expect("valid format")
            .read_counts()
            .expect_err("wrong size accepted");
        assert!(
            matches!(err, ReadError::Size { .. } | ReadError::Errno(_)),
            "{err}"
        );
        close(fd);
    }
    assert_eq!(
        // SAFETY: a refused format makes no value to read fd 3 with.
        unsafe { RawCounterFd::new(3, ReadFormat(1)) }.unwrap_err(),
        ReadError::MissingTimes
    );
    assert_eq!(
        // SAFETY: as above.
        unsafe { RawCounterFd::new(3, ReadFormat(TIMES) | ReadFormat::GROUP) }.unwrap_err(),
        ReadError::GroupFormat
    );
    assert_eq!(
        // SAFETY: as above.
        unsafe { RawCounterFd::new(3, ReadFormat(TIMES | 1 << 5)) }.unwrap_err(),
        ReadError::UnknownFormat { bits: 1 << 5 }
    );
    // SAFETY: -1 is never an open fd: reads fail with EBADF.
    let closed = unsafe { RawCounterFd::new(-1, ReadFormat(TIMES)) }.expect("valid format");
    assert_eq!(
        closed.read_counts().unwrap_err(),
        ReadError::Errno(Errno(libc::EBADF))
    );
}

#[test]
fn mapping_a_non_event_fd_is_an_explained_error() {
    // SAFETY: -1 is never an open fd: mmap fails with EBADF.
    let err = unsafe { UserPage::map_raw(-1) }.expect_err("fd -1 mapped");
    let text = err.to_string();
    assert!(
        text.contains("errno 9") && text.contains("not an open perf event"),
        "{text}"
    );
}

#[test]
fn the_first_page_of_a_ring_buffer_mapping_serves_the_reader() {
    let fd = open(sys::PERF_COUNT_SW_TASK_CLOCK, TIMES, 0, -1);
    let len = page_size() * (1 + 2);
    // SAFETY: a new shared mapping of 1 + 2^1 pages of the event, read-write.
    let ring = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    assert_ne!(
        ring,
        libc::MAP_FAILED,
        "mmap ring: {}",
        Error::last_os_error()
    );
    let first = std::ptr::NonNull::new(ring).expect("mapped");
    // SAFETY: the first page of the live RW ring mapping, unmapped only
    // after the reader is dropped.
    let page = unsafe { UserPage::from_ring_mapping(first) };
    let reader = CounterReader::new(
        page,
        // SAFETY: an open perf event fd, closed after the reader is dropped.
        unsafe { RawCounterFd::new(fd, ReadFormat(TIMES)) }.expect("0x3"),
        EventTarget::as_opened(0, -1),
    );
    ioctl(fd, sys::PERF_EVENT_IOC_ENABLE);
    burn();
    ioctl(fd, sys::PERF_EVENT_IOC_DISABLE);
    let reading = reader.read().expect("read");
    expect_fallback(reading.path);
    let direct = raw_read(fd);
    assert_eq!(reading.counts.value, direct.value);
    assert!(reader.snapshot().expect("stable").time_enabled <= direct.time_enabled);
    drop(reader); // borrowed: must not unmap the ring
                  // SAFETY: `lock` of the ring's first page. Were the ring unmapped by the
                  // reader's drop, this load would fault and fail the test.
    let lock = unsafe { std::ptr::read_volatile(ring.cast::<u32>().add(2)) };
    assert!(lock > 0 && lock % 2 == 0, "lock {lock}");
    // SAFETY: the ring mapped above, no longer used.
    assert_eq!(unsafe { libc::munmap(ring, len) }, 0);
    close(fd);
}

/// The owned fd is a [`CounterFd`]: mapped and read through `&EventFd`,
/// it gives what its own `read_counts` and an independent `read(2)` give.
#[test]
fn the_owned_event_fd_serves_the_reader() {
    use perf_event_core::fd::EventFd;
    let raw = open(sys::PERF_COUNT_SW_TASK_CLOCK, TIMES, 0, -1);
    // SAFETY: the perf event fd just opened, owned by the EventFd from now on.
    let fd = unsafe { EventFd::from_raw(raw, TIMES) };
    let reader = CounterReader::new(
        UserPage::map(&fd).unwrap_or_else(|e| panic!("{e}")),
        &fd,
        EventTarget::as_opened(0, -1),
    );
    fd.enable(false).expect("enable");
    burn();
    fd.disable(false).expect("disable");
    let reading = reader.read().expect("read");
    let counts = CounterFd::read_counts(&fd).expect("read(2)");
    let direct = raw_read(fd.raw());
    assert!(direct.value > 0, "task-clock counted nothing");
    assert_eq!(
        (
            reading.counts.value,
            reading.counts.enabled,
            reading.counts.running
        ),
        (
            direct.value,
            Some(direct.time_enabled),
            Some(direct.time_running)
        )
    );
    assert_eq!(
        (counts.value, counts.enabled, counts.running),
        (
            direct.value,
            Some(direct.time_enabled),
            Some(direct.time_running)
        )
    );
}
