//! Counts the task-clock of the calling thread with the raw bindings only:
//! `perf_event_open(2)` through its syscall number, ENABLE/DISABLE ioctls,
//! and a `read()` with `PERF_FORMAT_TOTAL_TIME_ENABLED | _RUNNING`.
//!
//! Run with `cargo run --example hello`. Software events work everywhere,
//! including VMs without a hardware PMU.

use perf_event_core::sys;
use std::io::Error;

fn main() {
    // The software clock of this thread, in nanoseconds; starts disabled.
    let mut attr = sys::perf_event_attr {
        type_: sys::PERF_TYPE_SOFTWARE,
        // Only fields of the first ABI version are used, so the smallest size
        // is right on every kernel since 2.6.31.
        size: sys::PERF_ATTR_SIZE_VER0,
        config: u64::from(sys::PERF_COUNT_SW_TASK_CLOCK),
        read_format: u64::from(
            sys::PERF_FORMAT_TOTAL_TIME_ENABLED | sys::PERF_FORMAT_TOTAL_TIME_RUNNING,
        ),
        ..Default::default()
    };
    attr.set_disabled(1);

    // pid 0 = this thread, cpu -1 = any cpu, no group, close on exec.
    // SAFETY: `attr` is a valid perf_event_attr that outlives the call and
    // `size` says how much of it the kernel may read.
    let fd = unsafe {
        libc::syscall(
            libc::c_long::from(sys::__NR_perf_event_open),
            &attr as *const sys::perf_event_attr,
            0 as libc::pid_t,
            -1 as libc::c_int,
            -1 as libc::c_int,
            libc::c_ulong::from(sys::PERF_FLAG_FD_CLOEXEC),
        )
    };
    if fd < 0 {
        let err = Error::last_os_error();
        eprintln!("perf_event_open(task-clock) failed: {err}");
        eprintln!(
            "(EACCES/EPERM: see /proc/sys/kernel/perf_event_paranoid; ENOSYS: no perf support)"
        );
        std::process::exit(1);
    }
    let fd = fd as libc::c_int;

    ioctl(fd, sys::PERF_EVENT_IOC_ENABLE, "PERF_EVENT_IOC_ENABLE");
    let mut x = 0u64;
    for i in 0..20_000_000u64 {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
    ioctl(fd, sys::PERF_EVENT_IOC_DISABLE, "PERF_EVENT_IOC_DISABLE");

    // value, time_enabled, time_running: three u64 for this read_format.
    let mut values = [0u64; 3];
    // SAFETY: `values` is 24 writable bytes, exactly what the kernel returns
    // for a single event with TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING.
    let n = unsafe { libc::read(fd, values.as_mut_ptr().cast(), 24) };
    if n != 24 {
        eprintln!("read() returned {n}: {}", Error::last_os_error());
        std::process::exit(1);
    }
    // SAFETY: `fd` is owned by this function and not used afterwards.
    unsafe { libc::close(fd) };

    let [count, enabled, running] = values;
    println!(
        "task-clock: {count} ns ({:.3} ms) of CPU time for 20M multiply-adds",
        count as f64 / 1e6
    );
    println!("time enabled {enabled} ns, time running {running} ns (checksum {x})");
}

fn ioctl(fd: libc::c_int, request: u32, name: &str) {
    // SAFETY: ENABLE and DISABLE take no argument beyond the flags word 0.
    let r = unsafe { libc::ioctl(fd, request as _, 0) };
    if r != 0 {
        eprintln!("ioctl({name}) failed: {}", Error::last_os_error());
        std::process::exit(1);
    }
}
