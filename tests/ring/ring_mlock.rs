//! A ring larger than an ordinary user may lock, mapped by an ordinary
//! user (a thread with uid 65534 and no capabilities): the kernel refuses
//! it with EPERM, and the error names perf_event_mlock_kb and
//! RLIMIT_MEMLOCK with their values and perf record's remedies.

use crate::lab_support;
use crate::seccomp_support;

use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Software};
use perf_event_core::linux::errno::{Errno, EACCES};
use perf_event_core::linux::mmap::page_size;
use perf_event_core::linux::system::{
    getrlimit, online_cpus, perf_event_mlock_kb, perf_event_paranoid, Resource,
};
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::ring::{RingBuffer, RingError};

#[test]
fn a_ring_beyond_the_locked_memory_limits_names_them() {
    let name = "a_ring_beyond_the_locked_memory_limits_names_them";
    if perf_event_paranoid().is_some_and(|p| p.0 < 0) {
        lab_support::skip(
            name,
            "perf_event_paranoid is -1: the kernel lifts the mlock limit",
        );
        return;
    }
    let (Some(kb), Some(cpus)) = (perf_event_mlock_kb(), online_cpus()) else {
        lab_support::skip(
            name,
            "perf_event_mlock_kb or the online CPU count is unreadable",
        );
        return;
    };
    let memlock = getrlimit(Resource::LockedMemory).unwrap();
    let Some(rlimit) = memlock.soft else {
        lab_support::skip(name, "RLIMIT_MEMLOCK is unlimited: no ring is beyond it");
        return;
    };
    // Data pages: a power of two above everything the user may lock.
    let page = page_size() as u64;
    let allowed = (kb * 1024 * u64::from(cpus) + rlimit) / page;
    let data_pages = (allowed + 1).next_power_of_two() as usize;
    if data_pages > 1 << 20 {
        lab_support::skip(
            name,
            "the limits are too high for a refused ring of a sane size",
        );
        return;
    }
    let result = seccomp_support::as_nobody(move || {
        let attr = Attr::new(Event::Software(Software::TaskClock))
            .exclude_kernel(true)
            .exclude_hv(true)
            .sample_period(1_000_000);
        let fd = open(&attr, Scope::this_thread(), None, OpenFlags::new())?;
        // One page of data is within the limits: the mapping itself is allowed.
        let small = RingBuffer::map(&fd, 1).map(drop);
        Ok::<_, perf_event_core::open::OpenError>((
            small,
            RingBuffer::map(&fd, data_pages).map(drop),
        ))
    });
    let Some(opened) = result else {
        lab_support::skip(name, "not root: cannot run a thread as uid 65534");
        return;
    };
    let (small, big) = match opened {
        Ok(rings) => rings,
        // Debian's level 3 (the default of its kernels, as in the lab's
        // guests) closes perf_event_open to ordinary users: no ring to map.
        Err(e)
            if e.errno == Some(Errno(EACCES))
                && perf_event_paranoid().is_some_and(|p| p.0 >= 3) =>
        {
            lab_support::skip(
                name,
                &format!("perf_event_paranoid >= 3 refuses every open to uid 65534: {e}"),
            );
            return;
        }
        Err(e) => panic!("uid 65534 could not open a user-space task-clock: {e}"),
    };
    small.expect("a one-page ring is within the limits");
    let Err(RingError::LockedMemory(l)) = big else {
        panic!("{data_pages} data pages beyond {allowed} lockable: {big:?}");
    };
    assert_eq!(l.pages, data_pages + 1);
    assert_eq!(l.mlock_kb, Some(kb));
    assert_eq!(l.online_cpus, Some(cpus));
    assert_eq!(l.memlock, Some(memlock));
    assert!(!l.caller.ipc_lock);
    let text = RingError::LockedMemory(l).to_string();
    println!("{text}");
    for part in [
        format!("kernel.perf_event_mlock_kb = {kb} KiB per CPU x {cpus} online CPUs"),
        format!("RLIMIT_MEMLOCK = {} KiB", rlimit / 1024),
        "map fewer pages (perf record -m)".to_owned(),
        "sysctl -w kernel.perf_event_mlock_kb=".to_owned(),
        "CAP_IPC_LOCK".to_owned(),
    ] {
        assert!(text.contains(&part), "{part:?} in {text}");
    }
}
