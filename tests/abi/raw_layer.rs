//! The raw layer used the way perf-event-open-sys users use theirs: a
//! `sys::perf_event_attr` filled by hand (union members by their kernel
//! names, bindgen's bit-field setters), the raw `linux::perf_event_open`
//! returning `-1` + errno, one raw function per ioctl, a ring mapped with
//! `linux::mmap::Mapping`. Nothing of the typed layer (`attr`, `open`,
//! `fd`, `ring`) is used here.
//!
//! Software events, the `sys_enter_prctl` tracepoint (when tracefs can be
//! mounted) and hardware breakpoints: all work without a hardware PMU. The
//! sampling ioctls (PERIOD, SET_OUTPUT, REFRESH, PAUSE_OUTPUT) count write
//! breakpoints where they fire, else `raw_syscalls:sys_enter` filtered to
//! prctl(2) ([`Source`]), so they run on every machine.

use crate::kernel_support;
use crate::lab_support;

use kernel_support::{prctls, tracefs, tracepoint_id};
use perf_event_core::abi::bitfield;
use perf_event_core::linux::errno::{self, E2BIG, EBADF, EINVAL};
use perf_event_core::linux::mmap::{page_size, Mapping, Protection};
use perf_event_core::linux::types::c_int;
use perf_event_core::linux::{io, ioctl, perf_event_open, prctl};
use perf_event_core::sys;
use std::sync::atomic::{AtomicU64, Ordering};

/// `sizeof(struct perf_event_attr)` of these bindings.
const ATTR_SIZE: u32 = core::mem::size_of::<sys::perf_event_attr>() as u32;

fn attr(type_: u32, config: u64) -> sys::perf_event_attr {
    let mut attr = sys::perf_event_attr {
        type_,
        size: ATTR_SIZE,
        config,
        ..Default::default()
    };
    attr.set_disabled(1);
    attr.set_exclude_kernel(1);
    attr.set_exclude_hv(1);
    attr
}

fn software(config: u32) -> sys::perf_event_attr {
    attr(sys::PERF_TYPE_SOFTWARE, config as u64)
}

/// A write breakpoint on `addr` (a machine word:
/// [`kernel_support::WATCH_LEN`]), sampling every write.
fn write_breakpoint(addr: u64) -> sys::perf_event_attr {
    let mut bp = attr(sys::PERF_TYPE_BREAKPOINT, 0);
    bp.bp_type = sys::HW_BREAKPOINT_W;
    bp.set_bp_addr(addr);
    bp.set_bp_len(kernel_support::WATCH_LEN);
    bp.set_sample_period(1);
    bp
}

/// The sys_enter_prctl tracepoint, or `None` (with the lab's marker) when
/// tracefs cannot be had here.
fn prctl_tracepoint() -> Option<sys::perf_event_attr> {
    if let Err(why) = kernel_support::syscall_tracepoints() {
        lab_support::not_applicable(lab_support::Need::SyscallTracepoints, &why);
        return None;
    }
    let mut tp = attr(
        sys::PERF_TYPE_TRACEPOINT,
        tracepoint_id("syscalls", "sys_enter_prctl"),
    );
    // Tracepoints fire in the kernel: count them there.
    tp.set_exclude_kernel(0);
    Some(tp)
}

/// The raw call on this thread, any CPU, close-on-exec: the fd or the errno.
fn open(attr: &mut sys::perf_event_attr) -> Result<Fd, c_int> {
    open_group(attr, -1)
}

fn open_group(attr: &mut sys::perf_event_attr, group: c_int) -> Result<Fd, c_int> {
    // SAFETY: `attr` is a whole, writable perf_event_attr whose size is at
    // most its own.
    let fd = unsafe { perf_event_open(attr, 0, -1, group, sys::PERF_FLAG_FD_CLOEXEC as _) };
    if fd < 0 {
        Err(errno::last())
    } else {
        Ok(Fd(fd))
    }
}

/// A raw fd, closed on drop (what a perf-event-open-sys user writes).
struct Fd(c_int);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: the fd was opened by this test and is closed once.
        unsafe { io::close(self.0) };
    }
}

/// Asserts that a raw call returned 0.
#[track_caller]
fn ok(r: c_int) {
    assert!(r >= 0, "raw call failed: errno {}", errno::last());
}

/// Asserts that a raw call failed with `want`.
#[track_caller]
fn fails_with(r: c_int, want: c_int) {
    assert_eq!(r, -1, "the raw call succeeded");
    assert_eq!(errno::last(), want);
}

fn read_u64s(fd: &Fd, words: usize) -> Vec<u64> {
    let mut buf = vec![0u8; words * 8];
    // SAFETY: `fd` keeps its perf event fd open for the call.
    let n = unsafe { io::read(fd.0, &mut buf) }.expect("read");
    assert_eq!(n, words * 8);
    buf.chunks(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

/// A ring mapped with the raw layer: metadata page + 2^order data pages.
struct Ring(Mapping);

impl Ring {
    fn map(fd: &Fd, order: u32) -> Ring {
        let len = page_size() * (1 + (1 << order));
        // SAFETY: `fd` keeps its perf event fd open for the call.
        let map = unsafe { Mapping::shared_raw(fd.0, len, 0, Protection::ReadWrite) };
        Ring(map.expect("mmap"))
    }

    /// `data_head`, Acquire as the kernel requires.
    fn data_head(&self) -> u64 {
        let off = core::mem::offset_of!(sys::perf_event_mmap_page, data_head);
        // SAFETY: an aligned u64 of the mapped metadata page, written by the
        // kernel concurrently: read atomically.
        let head = unsafe { AtomicU64::from_ptr(self.0.as_ptr().as_ptr().add(off).cast()) };
        head.load(Ordering::Acquire)
    }
}

impl Ring {
    /// `(type, body words)` of each record up to data_head (the tests stay
    /// well inside the data area: no wrap).
    fn records(&self) -> Vec<(u32, Vec<u64>)> {
        let head = self.data_head() as usize;
        let page = page_size();
        assert!(head <= self.0.len() - page, "the test overran the ring");
        let word = |at: usize| {
            // SAFETY: an aligned u64 of the data area below data_head (read
            // after the Acquire load of data_head).
            unsafe {
                std::ptr::read_volatile(self.0.as_ptr().as_ptr().add(page + at).cast::<u64>())
            }
        };
        let mut out = Vec::new();
        let mut at = 0;
        while at + 8 <= head {
            // struct perf_event_header { u32 type; u16 misc; u16 size; }
            let b = word(at).to_ne_bytes();
            let type_ = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
            let size = u16::from_ne_bytes([b[6], b[7]]) as usize;
            assert!(
                size >= 8 && at + size <= head,
                "bad record at {at}: size {size}"
            );
            out.push((type_, (8..size).step_by(8).map(|o| word(at + o)).collect()));
            at += size;
        }
        out
    }
}

/// What the sampling-ioctl tests count, one event per [`Source::fire`]
/// unit: a write breakpoint on a boxed cell where this machine's
/// breakpoints fire, else the `raw_syscalls:sys_enter` tracepoint with the
/// filter `id == SYS_prctl` (QEMU's pseries accepts breakpoints that never
/// fire, mips64el has none, and a 64-bit MIPS kernel's `syscalls:*`
/// tracepoints never fire for n64 calls; `raw_syscalls` fire everywhere).
enum Source {
    /// A write breakpoint on the cell.
    Breakpoint(Box<u64>),
    /// `raw_syscalls:sys_enter`'s attr.
    Prctl(sys::perf_event_attr),
}

impl Source {
    /// A write breakpoint where one fires, else the prctl tracepoint, or
    /// `None` (after reporting the running test as not applicable) when
    /// there is neither.
    fn new() -> Option<Source> {
        if kernel_support::hw_breakpoint_problem().is_none() {
            return Some(Source::Breakpoint(Box::new(0)));
        }
        if let Err(why) = tracefs() {
            lab_support::not_applicable(lab_support::Need::Tracefs, &why);
            return None;
        }
        let mut tp = attr(
            sys::PERF_TYPE_TRACEPOINT,
            tracepoint_id("raw_syscalls", "sys_enter"),
        );
        tp.set_exclude_kernel(0);
        tp.set_sample_period(1);
        Some(Source::Prctl(tp))
    }

    /// Opens a sampling event on the source (period 1, sample_type 0,
    /// disabled unless `edit` says otherwise), filtered to prctl(2) for
    /// the tracepoint.
    fn open(&self, edit: impl FnOnce(&mut sys::perf_event_attr)) -> Fd {
        let mut attr = match self {
            Source::Breakpoint(cell) => write_breakpoint(&**cell as *const u64 as u64),
            Source::Prctl(tp) => *tp,
        };
        edit(&mut attr);
        // Opened disabled and enabled after the filter: the SET_FILTER
        // call itself must not count.
        let enable = attr.disabled() == 0;
        attr.set_disabled(1);
        let fd = open(&mut attr).expect("sampling event");
        if let Source::Prctl(_) = self {
            let filter = std::ffi::CString::new(format!("id == {}", libc::SYS_prctl)).unwrap();
            // SAFETY: a perf event fd; a NUL-terminated filter.
            ok(unsafe { ioctl::set_filter(fd.0, filter.as_ptr()) });
        }
        if enable {
            // SAFETY: a perf event fd of this test.
            ok(unsafe { ioctl::enable(fd.0, 0) });
        }
        fd
    }

    /// Makes the event fire `n` times.
    fn fire(&self, n: u64) {
        match self {
            Source::Breakpoint(cell) => write_n(&**cell as *const u64 as u64, n),
            Source::Prctl(_) => prctls(n as u32),
        }
    }
}

/// Writes `n` times to the u64 at `addr`.
fn write_n(addr: u64, n: u64) {
    for i in 0..n {
        // SAFETY: every caller passes the address of a live, boxed u64.
        unsafe { std::ptr::write_volatile(addr as *mut u64, i) };
    }
}

#[test]
fn a_deliberate_size_1_gets_e2big_and_the_kernels_size_written_back() {
    let mut a = software(sys::PERF_COUNT_SW_CPU_CLOCK);
    a.size = 1;
    fails_with(
        // SAFETY: a whole perf_event_attr; the kernel reads at most 64 bytes.
        unsafe { perf_event_open(&mut a, 0, -1, -1, 0) },
        E2BIG,
    );
    // perf_copy_attr writes sizeof(struct perf_event_attr) of the running
    // kernel: one of the published sizes.
    let published = [
        sys::PERF_ATTR_SIZE_VER0,
        sys::PERF_ATTR_SIZE_VER1,
        sys::PERF_ATTR_SIZE_VER2,
        sys::PERF_ATTR_SIZE_VER3,
        sys::PERF_ATTR_SIZE_VER4,
        sys::PERF_ATTR_SIZE_VER5,
        sys::PERF_ATTR_SIZE_VER6,
        sys::PERF_ATTR_SIZE_VER7,
        sys::PERF_ATTR_SIZE_VER8,
        sys::PERF_ATTR_SIZE_VER9,
    ];
    assert!(
        published.contains(&a.size) || a.size > ATTR_SIZE,
        "kernel wrote back size {}",
        a.size
    );
    println!("kernel's perf_event_attr size: {}", a.size);

    // Larger than the kernel's with a non-zero byte beyond it: E2BIG too,
    // and the same size written back.
    let kernel_size = a.size;
    #[repr(C)]
    struct Bigger {
        attr: sys::perf_event_attr,
        tail: [u64; 2],
    }
    let mut big = Bigger {
        attr: software(sys::PERF_COUNT_SW_CPU_CLOCK),
        tail: [0, 1],
    };
    big.attr.size = ATTR_SIZE + 16;
    // SAFETY: `big` is ATTR_SIZE + 16 writable bytes starting with the attr.
    let r = unsafe { perf_event_open(&mut big.attr, 0, -1, -1, 0) };
    fails_with(r, E2BIG);
    assert_eq!(big.attr.size, kernel_size);
}

#[test]
fn size_0_opens_as_ver0() {
    // `__reserved_2` lies beyond the first 64 bytes, and the kernel refuses
    // a non-zero one (EINVAL)...
    let mut full = software(sys::PERF_COUNT_SW_CPU_CLOCK);
    full.__reserved_2 = 1;
    assert_eq!(open(&mut full).err(), Some(EINVAL));
    // ...but with size 0 the kernel copies PERF_ATTR_SIZE_VER0 (64) bytes
    // and never sees it.
    let mut ver0 = full;
    ver0.size = 0;
    let fd = open(&mut ver0).expect("size 0 opens");
    assert_eq!(ver0.size, 0, "nothing is written back on success");
    // It is a working counter: enable, sleep, read.
    // SAFETY: a perf event fd of this test.
    ok(unsafe { ioctl::enable(fd.0, 0) });
    std::thread::sleep(std::time::Duration::from_millis(2));
    // SAFETY: as above.
    ok(unsafe { ioctl::disable(fd.0, 0) });
    assert!(read_u64s(&fd, 1)[0] > 0, "cpu-clock counted nothing");
}

#[test]
fn period_changes_the_period() {
    let Some(source) = Source::new() else {
        return;
    };
    let fd = source.open(|a| a.set_sample_period(2));
    let ring = Ring::map(&fd, 1);
    // SAFETY: a perf event fd of this test.
    ok(unsafe { ioctl::enable(fd.0, 0) });
    source.fire(10);
    // sample_type 0: each sample is a bare 8-byte header.
    assert_eq!(ring.data_head(), 5 * 8, "period 2: 10 events, 5 samples");
    let period: u64 = 5;
    // The kernel reads the new period through the pointer.
    // SAFETY: a perf event fd; `period` is a live u64.
    ok(unsafe { ioctl::period(fd.0, &period) });
    source.fire(20);
    // Since Linux 3.14 the new period applies at once; what was left of the
    // old one is dropped, so the first sample may come early.
    let samples = ring.data_head() / 8 - 5;
    assert!(
        (4..=5).contains(&samples),
        "period 5 over 20 events gave {samples} samples (period 2: 10)"
    );
    let zero: u64 = 0;
    // SAFETY: as above.
    fails_with(unsafe { ioctl::period(fd.0, &zero) }, EINVAL);
}

#[test]
fn set_output_minus_one_detaches() {
    let Some(source) = Source::new() else {
        return;
    };
    // `a` owns the ring and never fires (a dummy event).
    let mut a_attr = software(sys::PERF_COUNT_SW_DUMMY);
    a_attr.set_disabled(0);
    let a = open(&mut a_attr).expect("dummy a");
    let ring = Ring::map(&a, 1);
    let b = source.open(|a| a.set_disabled(0));

    // SAFETY: perf event fds of this test.
    ok(unsafe { ioctl::set_output(b.0, a.0) });
    source.fire(3);
    assert_eq!(ring.data_head(), 3 * 8, "b's samples go to a's ring");

    // -1 reaches the kernel as -1 (sign-extended), not 0xffffffff (EBADF).
    // SAFETY: as above.
    ok(unsafe { ioctl::set_output(b.0, -1) });
    source.fire(3);
    assert_eq!(
        ring.data_head(),
        3 * 8,
        "detached: b's samples no longer arrive"
    );
    // b counts on: 6 events.
    assert_eq!(read_u64s(&b, 1)[0], 6);
    // A fd that is not a perf event: EBADF from the kernel's fdget.
    // SAFETY: as above.
    fails_with(unsafe { ioctl::set_output(b.0, c_int::MAX) }, EBADF);
}

#[test]
fn id_returns_the_same_id_as_perf_format_id() {
    let mut a = software(sys::PERF_COUNT_SW_TASK_CLOCK);
    a.read_format = sys::PERF_FORMAT_ID as u64;
    let fd = open(&mut a).expect("task-clock");
    let mut id = 0u64;
    // SAFETY: a perf event fd; `id` is a live, writable u64.
    ok(unsafe { ioctl::id(fd.0, &mut id) });
    let read = read_u64s(&fd, 2);
    assert_ne!(id, 0);
    assert_eq!(read[1], id, "PERF_FORMAT_ID and PERF_EVENT_IOC_ID agree");
}

#[test]
fn enable_disable_reset_and_the_group_flag() {
    let mut leader = software(sys::PERF_COUNT_SW_DUMMY);
    leader.read_format = sys::PERF_FORMAT_GROUP as u64;
    let leader_fd = open(&mut leader).expect("leader");
    let mut member = software(sys::PERF_COUNT_SW_TASK_CLOCK);
    member.set_disabled(0);
    let member_fd = open_group(&mut member, leader_fd.0).expect("member");
    let group = sys::PERF_IOC_FLAG_GROUP;
    // SAFETY: perf event fds of this test.
    ok(unsafe { ioctl::enable(leader_fd.0, group) });
    std::thread::sleep(std::time::Duration::from_millis(2));
    // SAFETY: as above.
    ok(unsafe { ioctl::disable(leader_fd.0, group) });
    // { nr, leader value, member value }
    let before = read_u64s(&leader_fd, 3);
    assert_eq!(before[0], 2);
    assert!(before[2] > 0, "the member counted task-clock");
    // SAFETY: as above.
    ok(unsafe { ioctl::reset(leader_fd.0, group) });
    assert_eq!(
        read_u64s(&leader_fd, 3)[2],
        0,
        "RESET with the group flag zeroes members"
    );
    assert_eq!(read_u64s(&member_fd, 1)[0], 0);
}

#[test]
fn refresh_allows_n_overflows_then_disables() {
    let Some(source) = Source::new() else {
        return;
    };
    let fd = source.open(|_| ());
    let _ring = Ring::map(&fd, 0);
    // SAFETY: a perf event fd of this test; an integer argument.
    ok(unsafe { ioctl::refresh(fd.0, 3) });
    source.fire(10);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let counted = read_u64s(&fd, 1)[0];
    if cfg!(any(target_arch = "mips", target_arch = "mips64")) {
        // The disable at the limit runs as irq_work, which MIPS (no
        // irq_work interrupt) runs at the next timer tick: a few more
        // events may count first, none after it (seen: 9 of 10).
        assert!((3..=10).contains(&counted), "REFRESH(3): {counted} counted");
    } else {
        assert_eq!(counted, 3, "REFRESH(3) disables after 3 overflows");
    }
    source.fire(5);
    assert_eq!(read_u64s(&fd, 1)[0], counted, "disabled after the limit");
    // Only sampling events have overflows to count.
    let counting = open(&mut software(sys::PERF_COUNT_SW_TASK_CLOCK)).expect("task-clock");
    // SAFETY: a perf event fd of this test; an integer argument.
    fails_with(unsafe { ioctl::refresh(counting.0, 1) }, EINVAL);
}

#[test]
fn pause_output_stops_and_resumes_the_ring() {
    let Some(source) = Source::new() else {
        return;
    };
    let fd = source.open(|a| a.set_disabled(0));
    let ring = Ring::map(&fd, 1);
    source.fire(2);
    assert_eq!(ring.data_head(), 2 * 8);
    // SAFETY: a perf event fd of this test; an integer argument.
    ok(unsafe { ioctl::pause_output(fd.0, 1) });
    source.fire(4);
    assert_eq!(ring.data_head(), 2 * 8, "paused: nothing written");
    // SAFETY: as above.
    ok(unsafe { ioctl::pause_output(fd.0, 0) });
    source.fire(1);
    // On resume the kernel first reports what the pause dropped: a
    // PERF_RECORD_LOST { id, lost: 4 }, then the new sample.
    let records = ring.records();
    assert_eq!(
        records.iter().map(|r| r.0).collect::<Vec<_>>(),
        [
            sys::PERF_RECORD_SAMPLE,
            sys::PERF_RECORD_SAMPLE,
            sys::PERF_RECORD_LOST,
            sys::PERF_RECORD_SAMPLE
        ],
        "resumed"
    );
    assert_eq!(records[2].1[1], 4, "LOST counts the 4 paused events");
}

#[test]
fn modify_attributes_moves_a_breakpoint() {
    if !kernel_support::hw_breakpoints() {
        return;
    }
    let cells = Box::new([0u64; 2]);
    let (a, b) = (
        &cells[0] as *const u64 as u64,
        &cells[1] as *const u64 as u64,
    );
    let mut bp = write_breakpoint(a);
    bp.set_disabled(0);
    let fd = open(&mut bp).expect("breakpoint");
    write_n(a, 4);
    write_n(b, 4);
    assert_eq!(read_u64s(&fd, 1)[0], 4);
    let mut moved = bp;
    moved.set_bp_addr(b);
    assert_eq!(moved.bp_addr(), b);
    assert_eq!(moved.config1(), b, "bp_addr and config1 are one union");
    // SAFETY: a perf event fd; `moved` is a whole, writable attr.
    ok(unsafe { ioctl::modify_attributes(fd.0, &mut moved) });
    write_n(a, 4);
    write_n(b, 2);
    assert_eq!(
        read_u64s(&fd, 1)[0],
        6,
        "only writes to the new address count"
    );
}

/// MODIFY_ATTRIBUTES on any machine (a software event; only breakpoints
/// can be modified): the kernel copies the new attr through the pointer
/// first, so a too-small size gives E2BIG with the kernel's size written
/// back (a wrong request number would give ENOTTY, a pointer that does not
/// reach the kernel EFAULT), and a whole attr is refused only after the
/// copy: EOPNOTSUPP (Linux 6.1, 7.2) or EINVAL (the host's 6.18).
#[test]
fn modify_attributes_reads_and_writes_the_attr_through_its_pointer() {
    let mut clock = software(sys::PERF_COUNT_SW_TASK_CLOCK);
    let fd = open(&mut clock).expect("task-clock");
    let mut small = clock;
    small.size = 1;
    // SAFETY: a perf event fd; `small` is a whole, writable attr.
    fails_with(unsafe { ioctl::modify_attributes(fd.0, &mut small) }, E2BIG);
    assert!(
        small.size >= sys::PERF_ATTR_SIZE_VER5,
        "the kernel wrote its attr size back: {}",
        small.size
    );
    let mut same = clock;
    // SAFETY: as above.
    let r = unsafe { ioctl::modify_attributes(fd.0, &mut same) };
    assert_eq!(r, -1, "a software event was modified");
    let e = errno::last();
    assert!(
        e == errno::EOPNOTSUPP || e == EINVAL,
        "errno {e}: expected EOPNOTSUPP or EINVAL"
    );
}

#[test]
fn tracepoint_set_filter_set_bpf_and_query_bpf() {
    let Some(mut tp) = prctl_tracepoint() else {
        return;
    };
    let fd = open(&mut tp).expect("tracepoint");
    // option == 3 is PR_GET_DUMPABLE, which `prctls` calls.
    // SAFETY: a perf event fd; a NUL-terminated filter.
    ok(unsafe { ioctl::set_filter(fd.0, c"option == 3".as_ptr()) });
    // SAFETY: as above.
    ok(unsafe { ioctl::enable(fd.0, 0) });
    prctls(7);
    // Filtered out: PR_GET_TIMERSLACK (30), through the raw prctl too.
    for _ in 0..5 {
        // SAFETY: PR_GET_TIMERSLACK takes no pointer.
        unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    }
    // SAFETY: as above.
    ok(unsafe { ioctl::disable(fd.0, 0) });
    assert_eq!(read_u64s(&fd, 1)[0], 7);
    // SAFETY: as above.
    // A filter the kernel cannot parse is refused (EINVAL; 6.x kernels may
    // answer EEXIST when a filter is already set).
    // SAFETY: as above.
    let r = unsafe { ioctl::set_filter(fd.0, c"no_such_field == 1".as_ptr()) };
    assert_eq!(r, -1, "a bad filter was accepted");
    // SAFETY: as above; -1 is no BPF program.
    fails_with(unsafe { ioctl::set_bpf(fd.0, -1) }, EBADF);
    // struct perf_event_query_bpf { u32 ids_len; u32 prog_cnt; u32 ids[]; }
    let mut query = [4u32, 99, 0, 0, 0, 0];
    // SAFETY: the header plus room for ids_len (4) ids.
    ok(unsafe { ioctl::query_bpf(fd.0, query.as_mut_ptr().cast()) });
    assert_eq!(query[1], 0, "no program attached");
}

#[test]
fn prctl_disables_and_enables_the_threads_events() {
    let mut a = software(sys::PERF_COUNT_SW_TASK_CLOCK);
    a.set_disabled(0);
    let fd = open(&mut a).expect("task-clock");
    ok(prctl::task_perf_events_disable());
    let off = read_u64s(&fd, 1)[0];
    let t = std::time::Instant::now();
    while t.elapsed() < std::time::Duration::from_millis(3) {}
    assert_eq!(read_u64s(&fd, 1)[0], off, "disabled by prctl");
    ok(prctl::task_perf_events_enable());
    let t = std::time::Instant::now();
    while t.elapsed() < std::time::Duration::from_millis(3) {}
    assert!(read_u64s(&fd, 1)[0] > off, "enabled again by prctl");
}

#[test]
fn union_members_and_bit_fields_by_kernel_name() {
    let mut a = sys::perf_event_attr::default();
    a.set_sample_freq(4000);
    assert_eq!(
        a.sample_period(),
        4000,
        "sample_period and sample_freq share bytes"
    );
    a.set_wakeup_watermark(4096);
    assert_eq!(a.wakeup_events(), 4096);
    a.set_kprobe_func(0x1000);
    assert_eq!(
        (a.bp_addr(), a.uprobe_path(), a.config1()),
        (0x1000, 0x1000, 0x1000)
    );
    a.set_probe_offset(8);
    assert_eq!((a.bp_len(), a.kprobe_addr(), a.config2()), (8, 8, 8));
    a.set_freq(1);
    a.set_watermark(1);
    a.set_aux_pause(1);
    assert_eq!(
        (a.freq(), a.watermark(), a.aux_pause(), a.aux_resume()),
        (1, 1, 1, 0)
    );
    // The word as this target's C compiler lays the bit out (bit 1 on
    // little-endian targets, bit 30 on big-endian ones).
    assert_eq!(a.aux_action() as u64, bitfield::aux_action::PAUSE.mask());
    // Debug shows the unions as their members and the bits by name.
    let shown = format!("{a:?}");
    for needle in [
        "sample_freq: 4000",
        "wakeup_watermark: 4096",
        "\"freq\": 1",
        "\"aux_pause\": 1",
    ] {
        assert!(shown.contains(needle), "{needle} not in {shown}");
    }
    let mut page = sys::perf_event_mmap_page::default();
    page.set_cap_user_rdpmc(1);
    page.set_cap_user_time_short(1);
    assert_eq!(
        page.capabilities(),
        bitfield::mmap_caps::CAP_USER_RDPMC.mask()
            | bitfield::mmap_caps::CAP_USER_TIME_SHORT.mask()
    );
    assert_eq!((page.cap_user_rdpmc(), page.cap_user_time()), (1, 0));
}
