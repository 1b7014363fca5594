//! open / EventFd / read against the running kernel with software events.

use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Hardware, Software};
use perf_event_core::open::{open, OpenFlags, PreSyscall, Scope};
use perf_event_core::read_format::{ReadFormat, Scaled};
use perf_event_core::sys;

const TIMES: u64 =
    (sys::PERF_FORMAT_TOTAL_TIME_ENABLED | sys::PERF_FORMAT_TOTAL_TIME_RUNNING) as u64;

fn sw(kind: Software) -> Attr {
    Attr::new(Event::Software(kind))
        .disabled(true)
        .read_format_raw(TIMES)
}

fn burn(n: u64) -> u64 {
    (0..n).fold(0u64, |a, i| {
        std::hint::black_box(a.wrapping_mul(31).wrapping_add(i))
    })
}

#[test]
fn task_clock_grows_with_work() {
    let fd = open(
        &sw(Software::TaskClock),
        Scope::this_thread(),
        None,
        OpenFlags::new(),
    )
    .unwrap();
    fd.enable(false).unwrap();
    let mut last = 0;
    for round in 1..=4 {
        burn(round * 1_000_000);
        let c = fd.read_counts().unwrap();
        assert!(c.value > last, "round {round}: {} <= {last}", c.value);
        assert_eq!(
            c.scaled(),
            Scaled::Exact(c.value),
            "software events are never multiplexed"
        );
        last = c.value;
    }
}

#[test]
fn touching_n_fresh_pages_gives_at_least_n_page_faults() {
    const PAGES: usize = 256;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let fd = open(
        &sw(Software::PageFaults),
        Scope::this_thread(),
        None,
        OpenFlags::new(),
    )
    .unwrap();
    // SAFETY: a fresh anonymous private mapping, unmapped below.
    let mem = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            PAGES * page,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(mem, libc::MAP_FAILED);
    // No transparent huge pages: with 64 KiB pages (ppc64el's 6.1) the
    // mapping spans 2 MiB-aligned ranges that one fault each would fill.
    // SAFETY: advice on the mapping just made.
    unsafe { libc::madvise(mem, PAGES * page, libc::MADV_NOHUGEPAGE) };
    fd.enable(false).unwrap();
    for i in 0..PAGES {
        // SAFETY: within the mapping.
        unsafe { std::ptr::write_volatile((mem as *mut u8).add(i * page), 1) };
    }
    fd.disable(false).unwrap();
    // SAFETY: unmapping what was mapped above.
    unsafe { libc::munmap(mem, PAGES * page) };
    let faults = fd.read_counts().unwrap().value;
    assert!(
        faults >= PAGES as u64,
        "{faults} page faults for {PAGES} fresh pages"
    );
}

#[test]
fn a_group_reads_consistently() {
    let fmt = TIMES | (sys::PERF_FORMAT_GROUP | sys::PERF_FORMAT_ID) as u64;
    let leader = open(
        &sw(Software::TaskClock).read_format_raw(fmt),
        Scope::this_thread(),
        None,
        OpenFlags::new(),
    )
    .unwrap();
    let member_attr = |k| Attr::new(Event::Software(k)).read_format_raw(fmt);
    let faults = open(
        &member_attr(Software::PageFaults),
        Scope::this_thread(),
        Some(&leader),
        OpenFlags::new(),
    )
    .unwrap();
    let switches = open(
        &member_attr(Software::ContextSwitches),
        Scope::this_thread(),
        Some(&leader),
        OpenFlags::new(),
    )
    .unwrap();
    leader.enable(true).unwrap();
    let v: Vec<u8> = vec![1; 1 << 20];
    std::thread::sleep(std::time::Duration::from_millis(5));
    burn(1_000_000 + v.len() as u64);
    leader.disable(true).unwrap();
    let mut buf = [0u8; 128];
    assert_eq!(ReadFormat(fmt).size(3), 8 * (3 + 3 * 2));
    let reading = leader.read_into(&mut buf).unwrap();
    assert_eq!(reading.len(), 3);
    let ids = [
        leader.id().unwrap(),
        faults.id().unwrap(),
        switches.id().unwrap(),
    ];
    let got: Vec<u64> = reading.values().map(|v| v.id.unwrap()).collect();
    assert_eq!(
        got, ids,
        "group order is leader, then members in open order"
    );
    let values: Vec<u64> = reading.values().map(|v| v.value).collect();
    assert!(
        values[0] > 0 && values[1] > 0 && values[2] >= 1,
        "{values:?}"
    );
    assert_eq!(reading.time_enabled(), reading.time_running());
    // Disabled as a group: a second read gives the same values.
    let mut again = [0u8; 128];
    let second: Vec<u64> = leader
        .read_into(&mut again)
        .unwrap()
        .values()
        .map(|v| v.value)
        .collect();
    assert_eq!(second, values);
    // A buffer smaller than the group read is refused by the kernel.
    let mut small = [0u8; 16];
    assert!(leader.read_into(&mut small).is_err());
}

#[test]
fn hardware_events_explain_the_missing_pmu() {
    let attr = Attr::new(Event::Hardware(Hardware::Instructions));
    match open(&attr, Scope::this_thread(), None, OpenFlags::new()) {
        Ok(_) => println!("this machine has a hardware PMU: nothing to explain"),
        Err(e) => {
            let text = e.to_string();
            assert!(text.contains("no hardware PMU"), "{text}");
            assert!(
                matches!(e.errno.map(|e| e.0), Some(libc::ENOENT | libc::EOPNOTSUPP)),
                "{e:?}"
            );
        }
    }
}

#[test]
fn any_task_on_any_cpu_never_reaches_the_kernel() {
    let err = Scope::raw(-1, -1).unwrap_err();
    assert_eq!(err.pre, Some(PreSyscall::AnyTaskAnyCpu));
    assert_eq!(err.errno, None);
    assert!(err.to_string().contains("any task on any CPU"));
    assert!(Scope::raw(-2, 0).is_err());
    assert!(Scope::raw(0, -1).unwrap().is_self_any_cpu());
}

#[test]
fn a_nonexistent_pid_gives_esrch_with_its_explanation() {
    // pid_max is at most 2^22; this pid cannot exist.
    let err = open(
        &sw(Software::TaskClock),
        Scope::thread(0x7fff_fff0),
        None,
        OpenFlags::new(),
    )
    .unwrap_err();
    assert_eq!(err.errno.map(|e| e.0), Some(libc::ESRCH), "{err}");
    assert!(
        err.to_string().contains("no such process: pid 2147483632"),
        "{err}"
    );
}

#[test]
fn invalid_attrs_are_refused_before_the_syscall() {
    let err = open(
        &sw(Software::TaskClock).precise_ip(9),
        Scope::this_thread(),
        None,
        OpenFlags::new(),
    )
    .unwrap_err();
    assert!(matches!(err.pre, Some(PreSyscall::Attr(_))));
    assert_eq!(err.errno, None);
}

#[test]
fn std_fd_traits_round_trip() {
    use perf_event_core::fd::EventFd;
    use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};
    let fd = open(
        &sw(Software::CpuClock),
        Scope::this_thread(),
        None,
        OpenFlags::new(),
    )
    .unwrap();
    let raw = fd.into_raw_fd();
    // SAFETY: `raw` came from into_raw_fd and is owned from here on.
    let owned = unsafe { OwnedFd::from_raw_fd(raw) };
    // std's OwnedFd can be any fd: turning it back into a perf fd is the
    // caller's promise.
    // SAFETY: `owned` holds the perf event fd opened above.
    let back = unsafe { EventFd::from_raw(owned.into_raw_fd(), 0) };
    assert_eq!(back.as_raw_fd(), raw);
    assert!(back.id().is_ok());
    let std_owned: OwnedFd = back.into();
    assert_eq!(std_owned.as_raw_fd(), raw);
}

#[test]
fn cloexec_is_on_by_default() {
    let fd = open(
        &sw(Software::CpuClock),
        Scope::this_thread(),
        None,
        OpenFlags::new(),
    )
    .unwrap();
    // SAFETY: F_GETFD on an open fd.
    let flags = unsafe { libc::fcntl(fd.raw(), libc::F_GETFD) };
    assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
    let keep = open(
        &sw(Software::CpuClock),
        Scope::this_thread(),
        None,
        OpenFlags::new().inherit_across_exec(),
    )
    .unwrap();
    // SAFETY: as above.
    let flags = unsafe { libc::fcntl(keep.raw(), libc::F_GETFD) };
    assert_eq!(flags & libc::FD_CLOEXEC, 0);
}

#[test]
fn open_with_size_passes_the_exact_size() {
    use perf_event_core::attr::Diagnosis;
    use perf_event_core::linux::fields::ATTR_SIZE;
    use perf_event_core::open::open_with_size;
    let attr = sw(Software::CpuClock);
    let here = || (Scope::this_thread(), None, OpenFlags::new());
    // 0 is PERF_ATTR_SIZE_VER0 for the kernel.
    let (scope, group, flags) = here();
    assert!(open_with_size(&attr, 0, scope, group, flags).is_ok());
    // 1 is below every published size: E2BIG, with the kernel's own size
    // written back and reported.
    let (scope, group, flags) = here();
    let err = open_with_size(&attr, 1, scope, group, flags).unwrap_err();
    assert_eq!(err.errno.map(|e| e.0), Some(libc::E2BIG));
    match err.diagnosis {
        Some(Diagnosis::TooBig(b)) => assert!(b.kernel_size >= 64, "{b:?}"),
        other => panic!("{other:?}"),
    }
    // Above the struct: refused before the call.
    let (scope, group, flags) = here();
    let err = open_with_size(&attr, ATTR_SIZE as u32 + 8, scope, group, flags).unwrap_err();
    assert_eq!(
        err.pre,
        Some(PreSyscall::SizeBeyondStruct {
            size: ATTR_SIZE as u32 + 8,
            max: ATTR_SIZE as u32
        })
    );
    assert!(err.to_string().contains("larger buffer"), "{err}");
}

#[test]
fn open_flags_round_trip_raw_bits() {
    for bits in [0u64, 1, 2, 4, 8, 1 | 8, 0xff] {
        assert_eq!(OpenFlags::from_bits(bits).bits(), bits);
    }
    assert_eq!(
        OpenFlags::from_bits(sys::PERF_FLAG_FD_CLOEXEC as u64),
        OpenFlags::new()
    );
    // Flags without CLOEXEC open an fd that survives exec.
    let fd = open(
        &sw(Software::CpuClock),
        Scope::this_thread(),
        None,
        OpenFlags::from_bits(0),
    )
    .unwrap();
    // SAFETY: F_GETFD on an open fd.
    let fd_flags = unsafe { libc::fcntl(fd.raw(), libc::F_GETFD) };
    assert_eq!(fd_flags & libc::FD_CLOEXEC, 0);
}
