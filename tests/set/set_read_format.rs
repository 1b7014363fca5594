//! How the set reads its groups: a group of several events with one
//! `PERF_FORMAT_GROUP` read of its leader, a group of one event as a
//! single event (no GROUP bit: the kernel's group read costs more), both
//! exact against a known number of tracepoint firings.

use crate::kernel_support;
use crate::lab_support;

use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Software};
use perf_event_core::linux::system::gettid;
use perf_event_core::sys;
use perf_event_host::set::{BudgetPolicy, EventSet, EventSpec, Target, ThreadSet};

const GROUP: u64 = sys::PERF_FORMAT_GROUP as u64;
const TIMES: u64 =
    (sys::PERF_FORMAT_TOTAL_TIME_ENABLED | sys::PERF_FORMAT_TOTAL_TIME_RUNNING) as u64;

fn prctl_spec() -> EventSpec {
    let id = kernel_support::tracepoint_id("syscalls", "sys_enter_prctl");
    EventSpec::new("syscalls:sys_enter_prctl", Attr::new(Event::Tracepoint(id)))
}

#[test]
fn a_group_of_one_is_read_without_the_group_bit_and_both_layouts_count_exactly() {
    const N: u64 = 1000;
    // The count is checked against this thread's prctl calls, which the
    // per-syscall tracepoints do not see everywhere (64-bit MIPS).
    if let Err(why) = kernel_support::syscall_tracepoints() {
        lab_support::not_applicable(lab_support::Need::SyscallTracepoints, &why);
        return;
    }
    let target = Target::Threads {
        threads: ThreadSet::from_tids([gettid()]),
        cpus: None,
        inherit: false,
    };
    // Event 0: a group of one; events 1 and 2: a group of two.
    let groups = vec![vec![prctl_spec()], vec![prctl_spec(), prctl_spec()]];
    let mut set = EventSet::open(groups, target, BudgetPolicy::Fail).unwrap();
    assert_eq!((set.fd_count(), set.group_count()), (3, 2));
    let format = |e: usize| set.opened_attr(e).unwrap().read_format_word();
    assert_eq!(format(0), TIMES, "a group of one: the times, no GROUP bit");
    assert_eq!(format(1), TIMES | GROUP);
    assert_eq!(format(2), TIMES | GROUP);
    set.enable().unwrap();
    for _ in 0..N {
        // SAFETY: PR_GET_DUMPABLE takes no pointer.
        unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) };
    }
    set.disable().unwrap();
    let counts = set.read_all().unwrap().to_vec();
    assert_eq!(counts.len(), 3, "one count per fd: {counts:?}");
    for e in 0..3 {
        let c = counts.iter().find(|c| c.placement.event == e).unwrap();
        assert_eq!(c.counts.value, N, "event {e}: {c:?}");
        let (enabled, running) = (c.counts.enabled.unwrap(), c.counts.running.unwrap());
        assert!(enabled > 0 && running == enabled, "event {e}: {c:?}");
    }
}

#[test]
fn an_empty_group_is_skipped_and_the_groups_after_it_keep_their_own_read_format() {
    let task_clock = || {
        EventSpec::new(
            "task-clock",
            Attr::new(Event::Software(Software::TaskClock)),
        )
    };
    let target = Target::Threads {
        threads: ThreadSet::from_tids([gettid()]),
        cpus: None,
        inherit: false,
    };
    // Events 0 and 1: a group of two; event 2: a group of one.
    let groups = vec![vec![], vec![task_clock(), task_clock()], vec![task_clock()]];
    let mut set = EventSet::open(groups, target, BudgetPolicy::Fail).unwrap();
    assert_eq!((set.fd_count(), set.group_count()), (3, 2));
    let group = |e: usize| set.events()[e].group;
    assert_eq!((group(0), group(1), group(2)), (0, 0, 1));
    let format = |e: usize| set.opened_attr(e).unwrap().read_format_word();
    assert_eq!(
        (format(0), format(1), format(2)),
        (TIMES | GROUP, TIMES | GROUP, TIMES)
    );
    set.enable().unwrap();
    let counts = set.read_all().unwrap();
    assert_eq!(counts.len(), 3, "one count per fd: {counts:?}");
}
