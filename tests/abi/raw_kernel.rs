//! The vendored host bindings against the running kernel: the syscall number
//! opens events, and the kernel recognises every PERF_EVENT_IOC_* number
//! (its perf ioctl handler answers ENOTTY for any number it does not know,
//! so a wrong `_IOC` encoding cannot pass). Software events and hardware
//! breakpoints only: this works without a hardware PMU.

use crate::kernel_support;

use perf_event_core::sys;
use std::io::Error;

fn attr(type_: u32, config: u64) -> sys::perf_event_attr {
    let mut attr = sys::perf_event_attr {
        type_,
        size: core::mem::size_of::<sys::perf_event_attr>() as u32,
        config,
        ..Default::default()
    };
    attr.set_disabled(1);
    attr
}

fn open(attr: &sys::perf_event_attr) -> Result<libc::c_int, Error> {
    // SAFETY: `attr` is a valid perf_event_attr whose `size` is its own size.
    let fd = unsafe {
        libc::syscall(
            libc::c_long::from(sys::__NR_perf_event_open),
            attr as *const sys::perf_event_attr,
            0 as libc::pid_t,
            -1 as libc::c_int,
            -1 as libc::c_int,
            libc::c_ulong::from(sys::PERF_FLAG_FD_CLOEXEC),
        )
    };
    if fd < 0 {
        Err(Error::last_os_error())
    } else {
        Ok(fd as libc::c_int)
    }
}

fn software(config: u32) -> libc::c_int {
    open(&attr(sys::PERF_TYPE_SOFTWARE, u64::from(config)))
        .unwrap_or_else(|e| panic!("perf_event_open(software {config}): {e}"))
}

/// ioctl returning the errno (0 on success).
fn ioctl(fd: libc::c_int, request: u32, arg: libc::c_ulong) -> i32 {
    // SAFETY: every argument passed below is either a plain integer or a
    // pointer to a live object of the type the request expects.
    let r = unsafe { libc::ioctl(fd, request as _, arg) };
    if r < 0 {
        Error::last_os_error().raw_os_error().unwrap_or(-1)
    } else {
        0
    }
}

fn close(fd: libc::c_int) {
    // SAFETY: `fd` was opened by this test and is not used afterwards.
    unsafe { libc::close(fd) };
}

fn read_count(fd: libc::c_int) -> u64 {
    let mut value = 0u64;
    // SAFETY: 8 writable bytes, the size of a read with read_format 0.
    let n = unsafe { libc::read(fd, (&mut value as *mut u64).cast(), 8) };
    assert_eq!(n, 8, "read: {}", Error::last_os_error());
    value
}

fn burn() {
    let mut x = 0u64;
    for i in 0..2_000_000u64 {
        x = std::hint::black_box(x ^ i.wrapping_mul(31));
    }
}

#[test]
fn syscall_number_opens_a_software_event_and_it_counts() {
    let fd = software(sys::PERF_COUNT_SW_TASK_CLOCK);
    assert_eq!(ioctl(fd, sys::PERF_EVENT_IOC_ENABLE, 0), 0);
    burn();
    assert_eq!(ioctl(fd, sys::PERF_EVENT_IOC_DISABLE, 0), 0);
    let counted = read_count(fd);
    assert!(counted > 0, "task-clock counted nothing");
    // Disabled: the count stands still. RESET sets it to zero.
    burn();
    assert_eq!(read_count(fd), counted);
    assert_eq!(ioctl(fd, sys::PERF_EVENT_IOC_RESET, 0), 0);
    assert_eq!(read_count(fd), 0);
    close(fd);
}

#[test]
fn id_ioctl_writes_the_event_id_through_its_pointer() {
    let fd = software(sys::PERF_COUNT_SW_CPU_CLOCK);
    let mut id = 0u64;
    assert_eq!(
        ioctl(
            fd,
            sys::PERF_EVENT_IOC_ID,
            &mut id as *mut u64 as libc::c_ulong
        ),
        0
    );
    assert_ne!(id, 0, "PERF_EVENT_IOC_ID left the id at 0");
    close(fd);
}

#[test]
fn period_ioctl_takes_a_pointer_to_u64() {
    let mut a = attr(
        sys::PERF_TYPE_SOFTWARE,
        u64::from(sys::PERF_COUNT_SW_CPU_CLOCK),
    );
    a.__bindgen_anon_1.sample_period = 1_000_000;
    let fd = open(&a).expect("sampling cpu-clock");
    let period = 2_000_000u64;
    assert_eq!(
        ioctl(
            fd,
            sys::PERF_EVENT_IOC_PERIOD,
            &period as *const u64 as libc::c_ulong
        ),
        0
    );
    // A zero period is refused with EINVAL: the kernel did read our u64.
    let zero = 0u64;
    assert_eq!(
        ioctl(
            fd,
            sys::PERF_EVENT_IOC_PERIOD,
            &zero as *const u64 as libc::c_ulong
        ),
        libc::EINVAL
    );
    close(fd);
}

#[test]
fn the_kernel_knows_every_ioctl_number() {
    let fd = software(sys::PERF_COUNT_SW_CPU_CLOCK);
    let mut id = 0u64;
    let period = 1_000_000u64;
    let filter = c"common_pid != 0";
    let mut query = [0u32; 4]; // perf_event_query_bpf: ids_len, prog_cnt, ids[]
    query[0] = 2;
    let requests: [(&str, u32, libc::c_ulong); 12] = [
        ("ENABLE", sys::PERF_EVENT_IOC_ENABLE, 0),
        ("DISABLE", sys::PERF_EVENT_IOC_DISABLE, 0),
        ("REFRESH", sys::PERF_EVENT_IOC_REFRESH, 1),
        ("RESET", sys::PERF_EVENT_IOC_RESET, 0),
        (
            "PERIOD",
            sys::PERF_EVENT_IOC_PERIOD,
            &period as *const u64 as _,
        ),
        ("SET_OUTPUT", sys::PERF_EVENT_IOC_SET_OUTPUT, -1i64 as _),
        (
            "SET_FILTER",
            sys::PERF_EVENT_IOC_SET_FILTER,
            filter.as_ptr() as _,
        ),
        ("ID", sys::PERF_EVENT_IOC_ID, &mut id as *mut u64 as _),
        ("SET_BPF", sys::PERF_EVENT_IOC_SET_BPF, -1i64 as _),
        ("PAUSE_OUTPUT", sys::PERF_EVENT_IOC_PAUSE_OUTPUT, 1),
        (
            "QUERY_BPF",
            sys::PERF_EVENT_IOC_QUERY_BPF,
            query.as_mut_ptr() as _,
        ),
        (
            "MODIFY_ATTRIBUTES",
            sys::PERF_EVENT_IOC_MODIFY_ATTRIBUTES,
            0,
        ),
    ];
    for (name, request, arg) in requests {
        let errno = ioctl(fd, request, arg);
        assert_ne!(
            errno,
            libc::ENOTTY,
            "PERF_EVENT_IOC_{name} = {request:#x} is not a perf ioctl for this kernel"
        );
    }
    // A number one off is refused, so the assertion above can fail.
    assert_eq!(ioctl(fd, sys::PERF_EVENT_IOC_ID + 1, 0), libc::ENOTTY);
    close(fd);
}

#[test]
fn modify_attributes_moves_a_hardware_breakpoint() {
    if !kernel_support::hw_breakpoints() {
        return;
    }
    static WATCHED: [u64; 2] = [0; 2];
    let mut a = attr(sys::PERF_TYPE_BREAKPOINT, 0);
    a.bp_type = sys::HW_BREAKPOINT_W;
    a.__bindgen_anon_3.bp_addr = WATCHED.as_ptr() as u64;
    a.__bindgen_anon_4.bp_len = kernel_support::WATCH_LEN;
    let fd = match open(&a) {
        Ok(fd) => fd,
        Err(e) => panic!("hardware breakpoint: {e} (the test machines support them)"),
    };
    a.__bindgen_anon_3.bp_addr = WATCHED[1..].as_ptr() as u64;
    let arg = &a as *const sys::perf_event_attr as libc::c_ulong;
    assert_eq!(ioctl(fd, sys::PERF_EVENT_IOC_MODIFY_ATTRIBUTES, arg), 0);
    close(fd);
}

#[test]
fn prctl_disables_and_enables_the_threads_counters() {
    let fd = software(sys::PERF_COUNT_SW_TASK_CLOCK);
    assert_eq!(ioctl(fd, sys::PERF_EVENT_IOC_ENABLE, 0), 0);
    // SAFETY: plain prctl calls without pointer arguments.
    let r = unsafe { libc::prctl(sys::PR_TASK_PERF_EVENTS_DISABLE as libc::c_int, 0, 0, 0, 0) };
    assert_eq!(
        r,
        0,
        "prctl(PR_TASK_PERF_EVENTS_DISABLE): {}",
        Error::last_os_error()
    );
    let stopped = read_count(fd);
    burn();
    assert_eq!(
        read_count(fd),
        stopped,
        "counter ran while disabled by prctl"
    );
    // SAFETY: as above.
    let r = unsafe { libc::prctl(sys::PR_TASK_PERF_EVENTS_ENABLE as libc::c_int, 0, 0, 0, 0) };
    assert_eq!(
        r,
        0,
        "prctl(PR_TASK_PERF_EVENTS_ENABLE): {}",
        Error::last_os_error()
    );
    burn();
    assert!(
        read_count(fd) > stopped,
        "counter did not resume after prctl enable"
    );
    close(fd);
}
