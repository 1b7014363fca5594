//! Every ioctl's effect on the running kernel: tracepoint counts and
//! filters, breakpoints and MODIFY_ATTRIBUTES, REFRESH signals, PERIOD,
//! SET_OUTPUT and PAUSE_OUTPUT, inherit, enable_on_exec, prctl.

use crate::kernel_support;
use crate::lab_support;
use crate::set_support;

use kernel_support::*;
use perf_event_core::attr::Attr;
use perf_event_core::event::{BreakpointType, Event, Software};
use perf_event_core::fd::{disable_thread_events, enable_thread_events, EventFd};
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_host::workload::Workload;
use std::sync::atomic::Ordering;

/// The sys_enter_prctl tracepoint, or `None` (with the lab's not-applicable
/// marker printed) when tracefs cannot be mounted here.
fn prctl_tracepoint() -> Option<Attr> {
    if let Err(why) = syscall_tracepoints() {
        lab_support::not_applicable(lab_support::Need::SyscallTracepoints, &why);
        return None;
    }
    let id = tracepoint_id("syscalls", "sys_enter_prctl");
    Some(Attr::new(Event::Tracepoint(id)).disabled(true))
}

fn this_thread(attr: &Attr) -> EventFd {
    open(attr, Scope::this_thread(), None, OpenFlags::new()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn tracepoint_counts_exactly_and_set_filter_restricts() {
    let Some(tp) = prctl_tracepoint() else {
        return;
    };
    let fd = this_thread(&tp);
    fd.enable(false).unwrap();
    prctls(100);
    fd.disable(false).unwrap();
    assert_eq!(fd.read_counts().unwrap().value, 100);

    // option == 3 is PR_GET_DUMPABLE; PR_GET_NAME (16) calls are filtered out.
    fd.set_filter(c"option == 3").unwrap();
    fd.reset(false).unwrap();
    fd.enable(false).unwrap();
    prctls(10);
    let mut name = [0u8; 16];
    for _ in 0..25 {
        // SAFETY: PR_GET_NAME writes at most 16 bytes into `name`.
        unsafe { libc::prctl(libc::PR_GET_NAME, name.as_mut_ptr()) };
    }
    fd.disable(false).unwrap();
    assert_eq!(fd.read_counts().unwrap().value, 10);
    assert!(fd.set_filter(c"no_such_field == 1").is_err());
    // No BPF program is attached; QUERY_BPF says so through its header.
    let mut ids = [0u32; 6];
    let progs = fd.query_bpf(&mut ids).unwrap();
    assert_eq!((progs.attached, progs.ids.len()), (0, 0));
    assert_eq!(fd.set_bpf(-1).map_err(|e| e.0), Err(libc::EBADF));
}

#[test]
fn a_write_breakpoint_counts_exactly_the_writes_and_moves() {
    if !hw_breakpoints() {
        return;
    }
    let cells = Box::new([0u64; 2]);
    let (a, b) = (
        &cells[0] as *const u64 as u64,
        &cells[1] as *const u64 as u64,
    );
    let bp = |addr| {
        Attr::new(Event::Breakpoint {
            kind: BreakpointType::Write,
            addr,
            len: WATCH_LEN,
        })
        .disabled(true)
        .exclude_kernel(true)
        .exclude_hv(true)
    };
    let fd = this_thread(&bp(a));
    fd.enable(false).unwrap();
    for i in 0..37 {
        // SAFETY: `a` points into `cells`, alive and writable.
        unsafe { std::ptr::write_volatile(a as *mut u64, i) };
        // SAFETY: as above for `b`; not watched yet.
        unsafe { std::ptr::write_volatile(b as *mut u64, i) };
    }
    assert_eq!(fd.read_counts().unwrap().value, 37);
    // The new attr's `disabled` bit applies too: keep it enabled.
    fd.modify_attributes(&bp(b).disabled(false)).unwrap();
    for i in 0..5 {
        // SAFETY: as above.
        unsafe { std::ptr::write_volatile(a as *mut u64, i) };
        // SAFETY: as above.
        unsafe { std::ptr::write_volatile(b as *mut u64, i) };
    }
    assert_eq!(
        fd.read_counts().unwrap().value,
        37 + 5,
        "only writes to the new address count"
    );
}

#[test]
fn refresh_delivers_the_overflow_signal_n_times_then_disables() {
    let sig = libc::SIGRTMIN() + 1;
    count_signal(sig);
    let Some(tp) = prctl_tracepoint() else {
        return;
    };
    let attr = tp.sample_period(1).wakeup_events(1);
    let fd = this_thread(&attr);
    let _ring = RawRing::map(fd.raw(), 0);
    signal_this_thread_on_overflow(fd.raw(), sig);
    SIGNALS.store(0, Ordering::SeqCst);
    fd.refresh(3).unwrap();
    prctls(10);
    // Signals are delivered on return to user space; give them a moment.
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(SIGNALS.load(Ordering::SeqCst), 3);
    assert_eq!(
        fd.read_counts().unwrap().value,
        3,
        "REFRESH(3) disables after 3 overflows"
    );
}

#[test]
fn period_changes_the_sampling_period() {
    let Some(tp) = prctl_tracepoint() else {
        return;
    };
    let fd = this_thread(&tp.sample_period(2));
    let ring = RawRing::map(fd.raw(), 2);
    fd.enable(false).unwrap();
    prctls(10);
    // sample_type 0: each sample is a bare 8-byte header.
    assert_eq!(ring.data_head(), 5 * 8, "period 2: 10 calls, 5 samples");
    fd.period(5).unwrap();
    prctls(20);
    // The new period takes effect at once (Linux 3.14+): the count left of
    // the old period is dropped, so the first sample may come early.
    let samples = ring.data_head() / 8 - 5;
    assert!(
        (4..=5).contains(&samples),
        "period 5 over 20 calls gave {samples} samples (period 2: 10)"
    );
    assert!(fd.period(0).is_err(), "a zero period is refused");
}

#[test]
fn set_output_redirects_records_and_pause_output_stops_them() {
    let Some(tp) = prctl_tracepoint() else {
        return;
    };
    let a = this_thread(&tp.sample_period(1));
    let b = this_thread(&tp.sample_period(1));
    let ring = RawRing::map(a.raw(), 2);
    b.set_output(Some(&a)).unwrap();
    a.enable(false).unwrap();
    b.enable(false).unwrap();
    prctls(4);
    assert_eq!(
        ring.data_head(),
        2 * 4 * 8,
        "both events write into a's buffer"
    );
    a.pause_output(true).unwrap();
    prctls(4);
    assert_eq!(ring.data_head(), 2 * 4 * 8, "paused: no records");
    a.pause_output(false).unwrap();
    b.set_output(None).unwrap();
    prctls(1);
    // On resume the kernel reports what the pause dropped (PERF_RECORD_LOST,
    // 24 bytes), then a's sample; b's sample has no buffer any more.
    let (sample, lost) = (
        perf_event_core::sys::PERF_RECORD_SAMPLE,
        perf_event_core::sys::PERF_RECORD_LOST,
    );
    let mut want = vec![(sample, 8u16); 8];
    want.extend([(lost, 24), (sample, 8)]);
    assert_eq!(ring.headers(), want);
}

const INHERIT_TEST: &str = "inherit_counts_a_childs_work";

/// The child's work: 30 million rounds of a loop, then exit.
fn burn_and_exit() -> ! {
    let mut x = 0u64;
    for i in 0..30_000_000u64 {
        x = std::hint::black_box(x.wrapping_add(i));
    }
    std::hint::black_box(x);
    std::process::exit(0)
}

#[test]
fn inherit_counts_a_childs_work() {
    if set_support::role_value("burn").is_some() {
        burn_and_exit();
    }
    let clock = Attr::new(Event::Software(Software::TaskClock)).disabled(true);
    let with = this_thread(&clock.inherit(true));
    let without = this_thread(&clock);
    with.enable(false).unwrap();
    without.enable(false).unwrap();
    // The child: this test binary re-run as the burner, started by the
    // workload launcher, which forks it from this thread (so it inherits
    // `with`, and its threads after the exec inherit it in turn).
    let argv = set_support::child_argv(module_path!(), INHERIT_TEST, &["ROLE:burn=1".into()]);
    let mut child = Workload::hold(&argv).unwrap();
    child.release().unwrap();
    let exit = child.reap().unwrap();
    assert_eq!(exit.code(), Some(0), "the child burned: {exit:?}");
    with.disable(false).unwrap();
    without.disable(false).unwrap();
    let (w, wo) = (
        with.read_counts().unwrap().value,
        without.read_counts().unwrap().value,
    );
    assert!(
        w > wo + 5_000_000,
        "inherit: {w} ns, without: {wo} ns; the child burned > 5 ms"
    );
}

#[test]
fn enable_on_exec_starts_counting_at_exec() {
    // The shell is held before exec by the crate's launcher. Its loop runs
    // for well over 1 ms of task-clock: 20,000 rounds on the host, 5,000 in
    // a lab guest (every instruction emulated: 20,000 took 9-11 s of host
    // time on mips64el and riscv64; under `-icount` a guest's nanosecond is
    // one instruction, and a round is thousands).
    let rounds = if crate::lab_support::lab_guest() {
        5_000
    } else {
        20_000
    };
    let script = format!("i=0; while [ $i -lt {rounds} ]; do i=$((i+1)); done");
    let mut child = Workload::hold(&["/bin/sh", "-c", &script]).unwrap();
    let attr = Attr::new(Event::Software(Software::TaskClock))
        .disabled(true)
        .enable_on_exec(true);
    let fd = open(&attr, Scope::thread(child.pid()), None, OpenFlags::new()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(10));
    assert_eq!(fd.read_counts().unwrap().value, 0, "disabled until exec");
    child.release().unwrap();
    let exit = child.reap().unwrap();
    assert_eq!(exit.code(), Some(0), "the shell's loop ran");
    let ns = fd.read_counts().unwrap().value;
    assert!(ns > 1_000_000, "the exec'd shell ran {ns} ns");
}

#[test]
fn prctl_stops_and_restarts_the_threads_events() {
    let Some(tp) = prctl_tracepoint() else {
        return;
    };
    let fd = this_thread(&tp);
    fd.enable(false).unwrap();
    prctls(3);
    disable_thread_events().unwrap();
    prctls(3);
    enable_thread_events().unwrap();
    prctls(3);
    // sys_enter fires on entry: the disabling prctl enters while the event
    // is on and is counted; the enabling one enters while it is off.
    let n = fd.read_counts().unwrap().value;
    assert_eq!(
        n,
        3 + 1 + 3,
        "3 + the disabling call + (3 not counted, enabling call not counted) + 3"
    );
}
