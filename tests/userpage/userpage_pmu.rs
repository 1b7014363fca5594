//! The user-space reader on a real (emulated) aarch64 PMUv3: with
//! `/proc/sys/kernel/perf_user_access = 1` and `attr.config1` bit 1 (user
//! access; bit 0: 64-bit counter), the page of a thread's own hardware event
//! shows `cap_user_rdpmc = 1` and an index (32: PMCCNTR_EL0 for cycles;
//! 1..=31: PMEVCNTR<index-1>_EL0), and the reader must take the instruction
//! path over five loops of growing length, each `read(2)` between the
//! user-space reads taken just before and after it.
//!
//! On riscv64 (SBI PMU with Sscofpmf, Linux 6.6+ with `perf_user_access`
//! = 1, the default) the page of a thread's own user-only cycles or
//! instructions event shows `cap_user_rdpmc = 1`, `pmc_width` 64 and an
//! index whose counter CSR (`0xC00 + index - 1`) user space reads with
//! `csrr`; the same five loops, each `read(2)` bracketed the same way.
//!
//! On 32-bit Arm the ARMv7 PMU counts cycles and instructions, but arm32
//! gives user space no counter access: the page says `cap_user_rdpmc = 0`,
//! and the reader must fall back to `read(2)` and still count. The same on
//! 64-bit POWER (QEMU's pseries POWER10 PMU): the page names the PMC in
//! `index` but says `cap_user_rdpmc = 0`.
//!
//! `cargo xtask lab` runs this in its aarch64 QEMU guests (`-cpu max,pmu=on`
//! and `-cpu cortex-a72`), riscv64 guests (`-cpu max`), armhf guests
//! (`-cpu max`, PMU node `arm,cortex-a15-pmu`) and ppc64el guests
//! (`-M pseries -cpu POWER10`), all with `-icount shift=0` so instructions
//! count. Elsewhere each test prints `LAB-NOT-APPLICABLE <test>
//! needs=<aarch64-pmu|riscv64-pmu|armhf-pmu|ppc64el-pmu>: <reason>` and
//! passes; the lab fails unless they pass in every guest that has the PMU.

use perf_event_core::sys;
use perf_event_core::userpage::{
    CounterReader, CounterReading, EventTarget, RawCounterFd, ReadPath, UserPage,
    REQUIRED_READ_FORMAT,
};
use std::io::Error;

use crate::lab_support;

/// `attr.config1` bit 0 of the arm64 PMU: a 64-bit counter (`long`).
pub(crate) const CONFIG1_LONG: u64 = 1 << 0;
/// `attr.config1` bit 1 of the arm64 PMU: user-space access (`rdpmc`).
pub(crate) const CONFIG1_USER: u64 = 1 << 1;
/// Iterations of the first measured loop; each next loop doubles it.
const FIRST_LOOP: u64 = 200_000;

/// Says for the lab that this test did not run here, and why.
fn not_applicable(reason: &str) {
    not_applicable_for(lab_support::Need::Aarch64Pmu, reason);
}

fn not_applicable_for(need: lab_support::Need, reason: &str) {
    lab_support::not_applicable(need, reason);
}

pub(crate) fn open(config: u32, config1: u64) -> Result<libc::c_int, i32> {
    let mut attr = sys::perf_event_attr {
        type_: sys::PERF_TYPE_HARDWARE,
        size: core::mem::size_of::<sys::perf_event_attr>() as u32,
        config: u64::from(config),
        read_format: REQUIRED_READ_FORMAT.bits(),
        ..Default::default()
    };
    attr.__bindgen_anon_3.config1 = config1;
    attr.set_exclude_kernel(1);
    attr.set_exclude_hv(1);
    open_attr(&attr)
}

/// `perf_event_open(attr)` on this thread, any CPU, close-on-exec: the fd,
/// or the errno.
pub(crate) fn open_attr(attr: &sys::perf_event_attr) -> Result<libc::c_int, i32> {
    // SAFETY: a whole perf_event_attr whose size is its own size.
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
        Err(Error::last_os_error().raw_os_error().unwrap_or(0))
    } else {
        Ok(fd as libc::c_int)
    }
}

/// `CPU part` of /proc/cpuinfo (`0xd08`: Cortex-A72).
fn cpu_part() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("CPU part"))
        .and_then(|l| l.split(':').nth(1))
        .map(|v| v.trim().to_owned())
        .unwrap_or_default()
}

/// Whether this machine can run the tests; if not, says why for the lab.
pub(crate) fn pmu_with_user_access() -> bool {
    if !cfg!(target_arch = "aarch64") {
        not_applicable(&format!(
            "this is {}, not aarch64 (the reader falls back to read(2) here; \
             tests/userpage/userpage_host.rs covers that)",
            std::env::consts::ARCH
        ));
        return false;
    }
    match open(sys::PERF_COUNT_HW_CPU_CYCLES, CONFIG1_USER) {
        Ok(fd) => {
            // SAFETY: the fd just opened.
            unsafe { libc::close(fd) };
        }
        Err(errno) => {
            not_applicable(&format!(
                "hardware cycles do not open (errno {errno}): no PMU on this machine"
            ));
            return false;
        }
    }
    let access = std::fs::read_to_string("/proc/sys/kernel/perf_user_access").unwrap_or_default();
    if access.trim() != "1" {
        not_applicable(&format!(
            "/proc/sys/kernel/perf_user_access is {:?}, not 1 (Linux 5.17+; as root: \
             sysctl kernel.perf_user_access=1)",
            access.trim()
        ));
        return false;
    }
    true
}

fn spin(iterations: u64) {
    let mut x = 0u64;
    for i in 0..iterations {
        x = std::hint::black_box(x.wrapping_add(i));
    }
}

/// The instruction path, then `read(2)`, then the instruction path again:
/// the kernel's count must lie between the two user-space reads (a counter
/// only grows), whatever ran between them. An agreement within a share
/// failed where the PMU counts the kernel too: QEMU's riscv64 cycles
/// counter has no mode filter, and an interrupt between two reads added
/// 3,369 cycles to one delta of 1.2 million (0.27 %, against 0.1 %).
fn bracket(
    name: &str,
    reader: &CounterReader<UserPage, RawCounterFd>,
) -> (CounterReading, u64, CounterReading) {
    let user = reader.read().expect("read");
    let direct = reader.fd().read_counts_checked();
    let after = reader.read().expect("read");
    assert!(
        user.counts.value <= direct && direct <= after.counts.value,
        "{name}: read(2) {direct} is not between the user-space reads around it \
         ({user:?}, {after:?})"
    );
    (user, direct, after)
}

/// Whether this is a riscv64 machine whose PMU user space may read; if
/// not, says why for the lab.
pub(crate) fn riscv64_pmu_with_user_access() -> bool {
    if !cfg!(target_arch = "riscv64") {
        not_applicable_for(
            lab_support::Need::Riscv64Pmu,
            &format!(
                "reads riscv64 counter CSRs with csrr; this machine is {}",
                std::env::consts::ARCH
            ),
        );
        return false;
    }
    // The probe's fd is closed at once: QEMU's PMU counts each event type on
    // one counter at a time, so a second open cycles event would stay at 0.
    match open(sys::PERF_COUNT_HW_CPU_CYCLES, 0) {
        // SAFETY: the fd just opened.
        Ok(fd) => unsafe {
            libc::close(fd);
        },
        Err(errno) => {
            not_applicable_for(
                lab_support::Need::Riscv64Pmu,
                &format!(
                    "user-only hardware cycles do not open (errno {errno}): no SBI PMU, or no \
                 Sscofpmf for mode filtering (QEMU: -cpu max or rv64,sscofpmf=true)"
                ),
            );
            return false;
        }
    }
    let access = std::fs::read_to_string("/proc/sys/kernel/perf_user_access").unwrap_or_default();
    if access.trim() != "1" {
        not_applicable_for(
            lab_support::Need::Riscv64Pmu,
            &format!(
                "/proc/sys/kernel/perf_user_access is {:?}, not 1 (Linux 6.6+ on riscv; \
                 as root: sysctl kernel.perf_user_access=1)",
                access.trim()
            ),
        );
        return false;
    }
    true
}

/// Opens `config` with `config1`, checks the page and the instruction
/// path, and compares five loops of growing length with `read(2)`.
fn check(name: &str, config: u32, config1: u64, expect_index: Option<u32>) {
    if !pmu_with_user_access() {
        return;
    }
    let width = if config1 & CONFIG1_LONG != 0 { 64 } else { 32 };
    check_on_pmu(name, config, config1, expect_index, width);
}

/// [`check`] on a PMU this machine has: `width` is the expected `pmc_width`.
fn check_on_pmu(name: &str, config: u32, config1: u64, expect_index: Option<u32>, width: u16) {
    let fd = match open(config, config1) {
        Ok(fd) => fd,
        Err(errno) if errno == libc::EOPNOTSUPP && config1 & CONFIG1_LONG != 0 => {
            let part = cpu_part();
            assert_eq!(
                part, "0xd08",
                "{name}: a 64-bit counter was refused (EOPNOTSUPP) on CPU part {part}; only \
                 Cortex-A72 (0xd08, no FEAT_PMUv3p5) may refuse it"
            );
            println!("{name}: Cortex-A72 has no 64-bit event counters (EOPNOTSUPP), as expected");
            return;
        }
        Err(errno) => panic!("{name}: perf_event_open failed with errno {errno}"),
    };
    let reader = CounterReader::new(
        // SAFETY: an open perf event fd, closed after the reader is dropped.
        unsafe { UserPage::map_raw(fd) }.unwrap_or_else(|e| panic!("{name}: {e}")),
        // SAFETY: as above.
        unsafe { RawCounterFd::new(fd, REQUIRED_READ_FORMAT) }.expect("read_format 0x3"),
        EventTarget::as_opened(0, -1),
    );
    assert!(reader.may_use_counter(), "pid 0, cpu -1 is this thread");
    let snap = reader.snapshot().expect("stable page");
    assert!(
        snap.cap_user_rdpmc(),
        "{name}: cap_user_rdpmc is 0: {snap:?}"
    );
    assert_ne!(snap.index, 0, "{name}: index is 0: {snap:?}");
    if let Some(index) = expect_index {
        assert_eq!(snap.index, index, "{name}: {snap:?}");
    }
    assert_eq!(snap.pmc_width, width, "{name}: {snap:?}");
    if cfg!(target_arch = "riscv64") {
        let csr = perf_event_core::userpage::riscv64_csr_for_index(snap.index);
        assert!(
            csr.is_some(),
            "{name}: no counter CSR for index {}",
            snap.index
        );
        println!(
            "{name}: index {} -> csrr {}",
            snap.index,
            csr.unwrap_or_default()
        );
    }

    let mut user_before = reader.read().expect("read");
    let mut last_delta = 0;
    for step in 0..5 {
        spin(FIRST_LOOP << step);
        let (user, direct, after) = bracket(name, &reader);
        for read in [&user, &after] {
            match read.path {
                ReadPath::Counter { index, .. } => assert_eq!(index, snap.index, "{name}"),
                other => panic!("{name}: loop {step} read through {other:?}"),
            }
        }
        let user_delta = user.counts.value - user_before.counts.value;
        println!(
            "{name}: loop {step}: user-space {} (delta {user_delta}), read(2) {direct}, \
             user-space again {}, index {}, pmc_width {}",
            user.counts.value, after.counts.value, snap.index, snap.pmc_width
        );
        // Each loop doubles the last: its delta is larger whatever else
        // the counter saw (an interrupt's cycles are thousands, a loop's
        // growth a million).
        assert!(
            user_delta > last_delta,
            "{name}: loop {step}: delta {user_delta} not above the previous {last_delta}"
        );
        last_delta = user_delta;
        user_before = user;
    }
    drop(reader);
    // SAFETY: the fd opened above, no longer used.
    unsafe { libc::close(fd) };
}

trait ReadChecked {
    fn read_counts_checked(&self) -> u64;
}

impl ReadChecked for RawCounterFd {
    fn read_counts_checked(&self) -> u64 {
        use perf_event_core::userpage::CounterFd;
        let counts = self.read_counts().expect("read(2)");
        assert_eq!(counts.enabled, counts.running, "multiplexed");
        counts.value
    }
}

#[test]
fn user_read_of_cycles_32bit() {
    check(
        "cycles, 32-bit",
        sys::PERF_COUNT_HW_CPU_CYCLES,
        CONFIG1_USER,
        Some(32),
    );
}

#[test]
fn user_read_of_cycles_64bit() {
    check(
        "cycles, 64-bit",
        sys::PERF_COUNT_HW_CPU_CYCLES,
        CONFIG1_USER | CONFIG1_LONG,
        Some(32),
    );
}

#[test]
fn user_read_of_instructions_32bit() {
    check(
        "instructions, 32-bit",
        sys::PERF_COUNT_HW_INSTRUCTIONS,
        CONFIG1_USER,
        None,
    );
}

#[test]
fn user_read_of_instructions_64bit() {
    check(
        "instructions, 64-bit",
        sys::PERF_COUNT_HW_INSTRUCTIONS,
        CONFIG1_USER | CONFIG1_LONG,
        None,
    );
}

/// PERF_EVENT_IOC_RESET reads the counter and rewrites the page with the
/// raw (unextended) register as prev_count: the rdpmc_jump transient. The
/// reader must still agree with read(2) right after the reset.
#[test]
fn user_read_right_after_reset_agrees_with_read() {
    if !pmu_with_user_access() {
        return;
    }
    for (name, config1) in [
        ("32-bit", CONFIG1_USER),
        ("64-bit", CONFIG1_USER | CONFIG1_LONG),
    ] {
        let fd = match open(sys::PERF_COUNT_HW_CPU_CYCLES, config1) {
            Ok(fd) => fd,
            Err(errno) => panic!("cycles {name}: perf_event_open failed with errno {errno}"),
        };
        let reader = CounterReader::new(
            // SAFETY: an open perf event fd, closed after the reader is dropped.
            unsafe { UserPage::map_raw(fd) }.unwrap_or_else(|e| panic!("{e}")),
            // SAFETY: as above.
            unsafe { RawCounterFd::new(fd, REQUIRED_READ_FORMAT) }.expect("read_format 0x3"),
            EventTarget::as_opened(0, -1),
        );
        for round in 0..3 {
            spin(FIRST_LOOP);
            // SAFETY: RESET takes no argument.
            let r = unsafe { libc::ioctl(fd, sys::PERF_EVENT_IOC_RESET as _, 0) };
            assert_eq!(r, 0, "RESET: {}", Error::last_os_error());
            spin(FIRST_LOOP);
            let (user, direct, _) = bracket(name, &reader);
            println!("cycles {name} after RESET {round}: user-space {user:?}, read(2) {direct}");
            assert!(user.used_counter(), "{user:?}");
        }
        drop(reader);
        // SAFETY: the fd opened above, no longer used.
        unsafe { libc::close(fd) };
    }
}

/// riscv64: user-only cycles on the SBI PMU; the reader must take the
/// `csrr` path (cap_user_rdpmc, a nonzero index, pmc_width 64) over five
/// loops, each `read(2)` between the user-space reads around it.
#[test]
fn riscv64_user_read_of_cycles() {
    if riscv64_pmu_with_user_access() {
        check_on_pmu("riscv64 cycles", sys::PERF_COUNT_HW_CPU_CYCLES, 0, None, 64);
        lab_support::deliberate_failure_point();
    }
}

/// riscv64: user-only instructions on the SBI PMU, the same checks.
#[test]
fn riscv64_user_read_of_instructions() {
    if riscv64_pmu_with_user_access() {
        check_on_pmu(
            "riscv64 instructions",
            sys::PERF_COUNT_HW_INSTRUCTIONS,
            0,
            None,
            64,
        );
    }
}

/// riscv64: the reader right after PERF_EVENT_IOC_RESET still takes the
/// `csrr` path and agrees with `read(2)`.
#[test]
fn riscv64_user_read_right_after_reset_agrees_with_read() {
    if !riscv64_pmu_with_user_access() {
        return;
    }
    let fd = open(sys::PERF_COUNT_HW_INSTRUCTIONS, 0).expect("instructions open");
    let reader = CounterReader::new(
        // SAFETY: an open perf event fd, closed after the reader is dropped.
        unsafe { UserPage::map_raw(fd) }.unwrap_or_else(|e| panic!("{e}")),
        // SAFETY: as above.
        unsafe { RawCounterFd::new(fd, REQUIRED_READ_FORMAT) }.expect("read_format 0x3"),
        EventTarget::as_opened(0, -1),
    );
    for round in 0..3 {
        spin(FIRST_LOOP);
        // SAFETY: RESET takes no argument.
        let r = unsafe { libc::ioctl(fd, sys::PERF_EVENT_IOC_RESET as _, 0) };
        assert_eq!(r, 0, "RESET: {}", Error::last_os_error());
        spin(FIRST_LOOP);
        let (user, direct, _) = bracket("instructions", &reader);
        println!("instructions after RESET {round}: user-space {user:?}, read(2) {direct}");
        assert!(user.used_counter(), "{user:?}");
    }
    drop(reader);
    // SAFETY: the fd opened above, no longer used.
    unsafe { libc::close(fd) };
}

/// 32-bit Arm: cycles and instructions count on the ARMv7 PMU through
/// `read(2)`; the page offers no user-space read (`cap_user_rdpmc` 0), so
/// the reader falls back to `read(2)` and its values follow the counts.
/// With `-icount shift=0` instructions and cycles grow with the loop.
#[test]
fn armhf_pmu_counts_through_read_and_the_reader_falls_back() {
    counts_through_read_only(
        cfg!(target_arch = "arm"),
        lab_support::Need::ArmhfPmu,
        "a 32-bit Arm PMU",
        "QEMU: -cpu max and a device tree whose PMU node is arm,cortex-a15-pmu",
    );
}

/// 64-bit POWER (little-endian): QEMU's pseries POWER10 PMU counts cycles
/// (PMC6) and instructions (PMC5) through `read(2)`; powerpc publishes
/// no user-space counter read (`cap_user_rdpmc` 0, although the page's
/// `index` names the PMC), so the reader falls back to `read(2)`.
#[test]
fn ppc64el_pmu_counts_through_read_and_the_reader_falls_back() {
    counts_through_read_only(
        cfg!(all(target_arch = "powerpc64", target_endian = "little")),
        lab_support::Need::Ppc64elPmu,
        "a 64-bit POWER PMU",
        "QEMU: -M pseries -cpu POWER9 or POWER10",
    );
}

/// A PMU the kernel binds but user space cannot read: cycles and
/// instructions count through `read(2)`, the page says `cap_user_rdpmc`
/// 0, and the reader takes the `read(2)` path with values that follow the
/// counts; each of four growing loops counts more than the last.
fn counts_through_read_only(here: bool, need: lab_support::Need, pmu: &str, qemu: &str) {
    if !here {
        not_applicable_for(
            need,
            &format!(
                "counts on {pmu}; this machine is {}",
                std::env::consts::ARCH
            ),
        );
        return;
    }
    let arch = std::env::consts::ARCH;
    for (name, config) in [
        ("cycles", sys::PERF_COUNT_HW_CPU_CYCLES),
        ("instructions", sys::PERF_COUNT_HW_INSTRUCTIONS),
    ] {
        let fd = match open(config, 0) {
            Ok(fd) => fd,
            Err(errno) => {
                not_applicable_for(
                    need,
                    &format!("hardware {name} do not open (errno {errno}): no PMU bound ({qemu})"),
                );
                return;
            }
        };
        let reader = CounterReader::new(
            // SAFETY: an open perf event fd, closed after the reader is dropped.
            unsafe { UserPage::map_raw(fd) }.unwrap_or_else(|e| panic!("{name}: {e}")),
            // SAFETY: as above.
            unsafe { RawCounterFd::new(fd, REQUIRED_READ_FORMAT) }.expect("read_format 0x3"),
            EventTarget::as_opened(0, -1),
        );
        let snap = reader.snapshot().expect("stable page");
        println!("{arch} {name}: page {snap:?}");
        assert!(
            !snap.cap_user_rdpmc(),
            "{arch} offers no user access: {snap:?}"
        );
        if cfg!(target_arch = "arm") {
            assert_eq!(snap.index, 0, "{name}: {snap:?}");
        }
        let mut last = reader.fd().read_counts_checked();
        let mut last_delta = 0;
        for step in 0..4 {
            let iterations = FIRST_LOOP << step;
            spin(iterations);
            let user = reader.read().expect("read");
            let direct = reader.fd().read_counts_checked();
            assert!(
                matches!(user.path, ReadPath::Syscall { .. }),
                "{name}: the reader took {:?} on {arch}",
                user.path
            );
            let delta = direct - last;
            println!(
                "{arch} {name} loop {step}: {iterations} iterations, read(2) delta {delta}, \
                 reader {} via {:?}",
                user.counts.value, user.path
            );
            assert!(
                user.counts.value >= last && user.counts.value <= direct,
                "{user:?} vs {direct}"
            );
            assert!(
                delta >= iterations,
                "{name}: {delta} counted for {iterations} iterations of a loop of several \
                 instructions"
            );
            assert!(delta > last_delta, "{name}: {delta} after {last_delta}");
            (last, last_delta) = (direct, delta);
        }
        drop(reader);
        // SAFETY: the fd opened above, no longer used.
        unsafe { libc::close(fd) };
    }
    lab_support::deliberate_failure_point();
}
