//! Hardware counters read from user space on aarch64 (Linux 5.17+): with
//! `perf_user_access` enabled and `attr.config1` bit 1 set, a thread's own
//! PMU events show `cap_user_rdpmc` and a counter index in their mmap'ed
//! `perf_event_mmap_page`, and EL0 reads the counter registers directly
//! (`PMCCNTR_EL0` for index 32, `PMEVCNTR<index-1>_EL0` otherwise).
//!
//! These tests need an aarch64 PMU. On other machines, or with
//! `perf_user_access` off, they report `LAB-NOT-APPLICABLE ... needs=
//! aarch64-pmu` and return; `cargo xtask lab` runs them in its aarch64 QEMU
//! guests (`-cpu max,pmu=on` and `-cpu cortex-a72`, `-icount shift=0`) and
//! fails unless they pass in every one.
//!
//! The page is shared with the kernel, which updates it at any time: it is
//! read only through raw pointers with volatile loads, the lock word with
//! an atomic Acquire load, under the seqlock protocol of `perf_event.h`.

use crate::lab_support;

#[cfg(target_arch = "aarch64")]
mod arm {
    //! The aarch64 side: opening, the page reader and the counter registers.

    pub use super::lab_support::{close, errno_name, perf_event_open};
    use super::sign_extend;
    use perf_event_core::sys;
    use std::sync::atomic::{fence, AtomicU32, Ordering};

    /// `attr.config1` bit 0: a 64-bit counter (arm64 PMU format `long`).
    pub const CONFIG1_LONG: u64 = 1 << 0;
    /// `attr.config1` bit 1: user-space access (arm64 PMU format `rdpmc`).
    pub const CONFIG1_RDPMC: u64 = 1 << 1;
    /// `cap_user_rdpmc` in `perf_event_mmap_page::capabilities` (bit 2).
    pub const CAP_USER_RDPMC: u64 = 1 << 2;
    /// The page index of the cycle counter `PMCCNTR_EL0` (counter 31, plus 1).
    pub const CYCLE_COUNTER_INDEX: u32 = 32;

    /// An open hardware event of the calling thread with its mmap'ed page.
    pub struct Counter {
        pub fd: libc::c_int,
        page: *const sys::perf_event_mmap_page,
        len: usize,
    }

    /// A consistent snapshot of the page and the counter.
    #[derive(Debug, Clone, Copy)]
    pub struct Snapshot {
        pub capabilities: u64,
        pub index: u32,
        pub pmc_width: u16,
        /// `offset` plus the sign-extended counter when `index != 0`.
        pub value: u64,
    }

    impl Counter {
        /// Opens `PERF_TYPE_HARDWARE` `config` for the calling thread (pid
        /// 0, cpu -1), user space only, and maps its first page.
        pub fn open(config: u32, config1: u64) -> Result<Self, i32> {
            Self::open_on(config, config1, 0, -1)
        }

        /// As [`Counter::open`] for any pid and cpu.
        pub fn open_on(config: u32, config1: u64, pid: i32, cpu: i32) -> Result<Self, i32> {
            let mut attr = sys::perf_event_attr {
                type_: sys::PERF_TYPE_HARDWARE,
                size: core::mem::size_of::<sys::perf_event_attr>() as u32,
                config: u64::from(config),
                ..Default::default()
            };
            attr.__bindgen_anon_3.config1 = config1;
            attr.set_exclude_kernel(1);
            attr.set_exclude_hv(1);
            // SAFETY: a whole perf_event_attr whose size is its own size.
            let fd = unsafe {
                perf_event_open(
                    &mut attr,
                    pid,
                    cpu,
                    -1,
                    libc::c_ulong::from(sys::PERF_FLAG_FD_CLOEXEC),
                )
            }?;
            // SAFETY: sysconf has no memory-safety preconditions.
            let len = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
            // SAFETY: a fresh shared read-only mapping of the event's first
            // page; the kernel keeps it valid until munmap.
            let page = unsafe {
                libc::mmap(
                    core::ptr::null_mut(),
                    len,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    fd,
                    0,
                )
            };
            if page == libc::MAP_FAILED {
                let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
                close(fd);
                return Err(errno);
            }
            Ok(Counter {
                fd,
                page: page.cast(),
                len,
            })
        }

        /// Reads the page under its seqlock, and the counter register when
        /// the page says user space may.
        pub fn snapshot(&self) -> Snapshot {
            let p = self.page;
            loop {
                // SAFETY: `lock` is an aligned u32 inside the live mapping;
                // the kernel writes it concurrently, so it is read atomically.
                let lock =
                    unsafe { AtomicU32::from_ptr(core::ptr::addr_of!((*p).lock).cast_mut()) };
                let seq = lock.load(Ordering::Acquire);
                // SAFETY: fields of the live mapping, read with volatile
                // loads through raw pointers (never references) because the
                // kernel may change them; a torn read is caught by the lock.
                let (capabilities, index, pmc_width, offset) = unsafe {
                    (
                        core::ptr::addr_of!((*p).__bindgen_anon_1.capabilities).read_volatile(),
                        core::ptr::addr_of!((*p).index).read_volatile(),
                        core::ptr::addr_of!((*p).pmc_width).read_volatile(),
                        core::ptr::addr_of!((*p).offset).read_volatile(),
                    )
                };
                let mut value = offset as u64;
                if capabilities & CAP_USER_RDPMC != 0 && index != 0 {
                    let raw = read_counter(index - 1);
                    value = value.wrapping_add(sign_extend(raw, pmc_width));
                }
                fence(Ordering::Acquire);
                if seq & 1 == 0 && lock.load(Ordering::Relaxed) == seq {
                    return Snapshot {
                        capabilities,
                        index,
                        pmc_width,
                        value,
                    };
                }
            }
        }

        /// The count through `read(2)` (read_format 0: one u64).
        pub fn read(&self) -> u64 {
            let mut value = 0u64;
            // SAFETY: 8 writable bytes, the size of a read with read_format 0.
            let n = unsafe { libc::read(self.fd, (&mut value as *mut u64).cast(), 8) };
            assert_eq!(n, 8, "read: {}", std::io::Error::last_os_error());
            value
        }
    }

    impl Drop for Counter {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `open`, not used after this.
            unsafe { libc::munmap(self.page.cast_mut().cast(), self.len) };
            close(self.fd);
        }
    }

    /// Generates the read of event counter `n` for every `n` the ISA has.
    macro_rules! event_counter {
        ($n:expr, $($i:literal)*) => {
            match $n {
                $($i => {
                    let v: u64;
                    // SAFETY: an EL0 read of PMEVCNTR<n>_EL0, which the
                    // kernel permits for this thread's own event (the page
                    // said cap_user_rdpmc and gave this index).
                    unsafe {
                        core::arch::asm!(
                            concat!("mrs {v}, pmevcntr", stringify!($i), "_el0"),
                            v = out(reg) v,
                            options(nomem, nostack, preserves_flags)
                        )
                    };
                    v
                })*
                other => panic!("the page gave counter {other}, which aarch64 does not have"),
            }
        };
    }

    /// Reads hardware counter `counter` (the page's index minus one).
    pub fn read_counter(counter: u32) -> u64 {
        if counter == 31 {
            let v: u64;
            // SAFETY: an EL0 read of PMCCNTR_EL0, permitted as above.
            unsafe {
                core::arch::asm!("mrs {v}, pmccntr_el0", v = out(reg) v,
                                 options(nomem, nostack, preserves_flags))
            };
            return v;
        }
        event_counter!(counter, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30)
    }

    /// `CPU implementer` and `CPU part` from /proc/cpuinfo.
    pub fn cpu_id() -> (String, String) {
        let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            info.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split(':').nth(1))
                .map(|v| v.trim().to_owned())
                .unwrap_or_default()
        };
        (field("CPU implementer"), field("CPU part"))
    }
}

/// Sign-extends the low `width` bits of `raw` (the page's `pmc_width`): the
/// kernel programs 32-bit counters from the upper half, so their raw values
/// are negative offsets from `offset`.
fn sign_extend(raw: u64, width: u16) -> u64 {
    if width == 0 || width >= 64 {
        return raw;
    }
    let shift = 64 - u32::from(width);
    (((raw << shift) as i64) >> shift) as u64
}

/// The tests' bodies: aarch64 only.
#[cfg(target_arch = "aarch64")]
mod checks {
    use super::arm::*;
    use super::lab_support::{self, Need};
    use perf_event_core::sys;

    /// Whether this machine can run the tests; if not, says so for the lab.
    pub fn pmu_available() -> bool {
        if let Err(e) = Counter::open(sys::PERF_COUNT_HW_CPU_CYCLES, CONFIG1_RDPMC) {
            lab_support::not_applicable(
                Need::Aarch64Pmu,
                &format!(
                    "hardware cycles do not open ({}): no PMU on this machine",
                    errno_name(e)
                ),
            );
            return false;
        }
        let access =
            std::fs::read_to_string("/proc/sys/kernel/perf_user_access").unwrap_or_default();
        if access.trim() != "1" {
            lab_support::not_applicable(
                Need::Aarch64Pmu,
                &format!(
                    "/proc/sys/kernel/perf_user_access is {:?}: as root, \
                     `sysctl kernel.perf_user_access=1` lets user space read counters",
                    access.trim()
                ),
            );
            return false;
        }
        true
    }

    /// Work whose length the compiler cannot shorten.
    fn work(iterations: u64) {
        let mut x = 0u64;
        for i in 0..iterations {
            x = std::hint::black_box(x ^ i.wrapping_mul(31));
        }
    }

    pub fn cycles_and_instructions_are_read_from_user_space() {
        for (name, config) in [
            ("cycles", sys::PERF_COUNT_HW_CPU_CYCLES),
            ("instructions", sys::PERF_COUNT_HW_INSTRUCTIONS),
        ] {
            let counter = Counter::open(config, CONFIG1_RDPMC)
                .unwrap_or_else(|e| panic!("{name}: perf_event_open: {}", errno_name(e)));
            let first = counter.snapshot();
            println!("{name}: {first:?}");
            assert_eq!(
                first.capabilities & CAP_USER_RDPMC,
                CAP_USER_RDPMC,
                "{name}: cap_user_rdpmc"
            );
            assert_ne!(
                first.index, 0,
                "{name}: no counter index, user space may not read"
            );
            if config == sys::PERF_COUNT_HW_CPU_CYCLES {
                assert_eq!(
                    first.index, CYCLE_COUNTER_INDEX,
                    "cycles live in PMCCNTR_EL0"
                );
            } else {
                assert!(
                    first.index < CYCLE_COUNTER_INDEX,
                    "instructions: an event counter"
                );
            }
            assert_eq!(
                first.pmc_width, 32,
                "{name}: config1 without `long` is 32 bits wide"
            );
            let mut last_delta = 0u64;
            for round in 0..5u32 {
                let before = counter.snapshot().value;
                work(100_000 << round);
                let user_before_read = counter.snapshot().value;
                let by_read = counter.read();
                let user_after_read = counter.snapshot().value;
                let delta = user_before_read - before;
                println!(
                    "{name} round {round}: delta {delta}, user {user_before_read} <= read() \
                     {by_read} <= user {user_after_read}"
                );
                assert!(
                    delta > last_delta,
                    "{name}: delta {delta} after {last_delta}"
                );
                assert!(
                    user_before_read <= by_read && by_read <= user_after_read,
                    "{name}: read() {by_read} is not between the user-space reads \
                     {user_before_read} and {user_after_read}"
                );
                let gap = user_after_read - user_before_read;
                assert!(
                    gap * 1000 <= by_read,
                    "{name}: user space and read() differ by {gap} of {by_read}, over 0.1 %"
                );
                last_delta = delta;
            }
        }
        lab_support::deliberate_failure_point();
    }

    pub fn long_counters_match_the_cpu() {
        let (implementer, part) = cpu_id();
        // Arm Ltd (0x41) part 0xd08 is the Cortex-A72: PMUv3 without 64-bit
        // event counters. QEMU's `-cpu max` says implementer 0x00 part 0x051
        // and has PMUv3p5. Other CPUs: whatever they answer must be coherent.
        let cortex_a72 = implementer == "0x41" && part == "0xd08";
        let qemu_max = implementer == "0x00" && part == "0x051";
        println!(
            "CPU implementer {implementer} part {part}: Cortex-A72 {cortex_a72}, QEMU max {qemu_max}"
        );
        let cycles = Counter::open(sys::PERF_COUNT_HW_CPU_CYCLES, CONFIG1_RDPMC | CONFIG1_LONG)
            .unwrap_or_else(|e| panic!("64-bit cycles: {}", errno_name(e)));
        let s = cycles.snapshot();
        assert_eq!(
            (s.index, s.pmc_width),
            (CYCLE_COUNTER_INDEX, 64),
            "64-bit cycles"
        );
        match Counter::open(
            sys::PERF_COUNT_HW_INSTRUCTIONS,
            CONFIG1_RDPMC | CONFIG1_LONG,
        ) {
            Ok(counter) => {
                assert!(
                    !cortex_a72,
                    "a Cortex-A72 opened a 64-bit instructions counter"
                );
                let s = counter.snapshot();
                assert!(
                    s.index != 0 && s.index < CYCLE_COUNTER_INDEX,
                    "index {}",
                    s.index
                );
                assert_eq!(s.pmc_width, 64, "64-bit instructions");
                let before = counter.snapshot().value;
                work(100_000);
                assert!(
                    counter.snapshot().value > before,
                    "64-bit instructions move"
                );
            }
            Err(e) => {
                assert_eq!(errno_name(e), errno_name(libc::EOPNOTSUPP));
                assert!(
                    !qemu_max,
                    "QEMU's -cpu max has PMUv3p5 yet refused 64-bit instructions"
                );
            }
        }
    }

    pub fn user_access_needs_a_task_event() {
        match Counter::open_on(sys::PERF_COUNT_HW_CPU_CYCLES, CONFIG1_RDPMC, -1, 0) {
            Ok(_) => panic!("a CPU-wide event got user-space access"),
            Err(e) => assert_eq!(errno_name(e), errno_name(libc::EINVAL)),
        }
    }
}

/// Off aarch64: these tests read Arm PMU registers, so they report that
/// they did not run here.
#[cfg(not(target_arch = "aarch64"))]
fn not_on_this_architecture() {
    lab_support::not_applicable(
        lab_support::Need::Aarch64Pmu,
        &format!(
            "reads the Arm PMU's counter registers; this machine is {}",
            std::env::consts::ARCH
        ),
    );
}

/// Cycles (the cycle counter, index 32) and instructions (an event counter)
/// are readable from user space: `cap_user_rdpmc` is 1, the index is
/// non-zero, 32-bit counters say `pmc_width` 32. Over five loops of growing
/// length, each delta read from user space is strictly larger than the last,
/// and the user-space value agrees with `read(2)` on the same fd within
/// 0.1 %, bracketed by user-space reads taken just before and after.
#[test]
fn cycles_and_instructions_are_read_from_user_space() {
    #[cfg(target_arch = "aarch64")]
    if checks::pmu_available() {
        checks::cycles_and_instructions_are_read_from_user_space();
    }
    #[cfg(not(target_arch = "aarch64"))]
    not_on_this_architecture();
}

/// 64-bit event counters (`config1` bit 0, `long`) with user access need
/// PMUv3p5: QEMU's `-cpu max` has it, so instructions open with
/// `pmc_width` 64; a Cortex-A72 has 32-bit event counters only and refuses
/// with EOPNOTSUPP (the kernel will not chain counters for user access).
/// Cycles use the 64-bit cycle counter and open on both.
#[test]
fn long_counters_match_the_cpu() {
    #[cfg(target_arch = "aarch64")]
    if checks::pmu_available() {
        checks::long_counters_match_the_cpu();
    }
    #[cfg(not(target_arch = "aarch64"))]
    not_on_this_architecture();
}

/// User access is only for events that follow a task: a CPU-wide event
/// (pid -1, cpu 0) with `config1` bit 1 is refused with EINVAL.
#[test]
fn user_access_needs_a_task_event() {
    #[cfg(target_arch = "aarch64")]
    if checks::pmu_available() {
        checks::user_access_needs_a_task_event();
    }
    #[cfg(not(target_arch = "aarch64"))]
    not_on_this_architecture();
}

/// The reader's sign extension, on every machine.
#[test]
fn sign_extension_follows_pmc_width() {
    assert_eq!(sign_extend(0x8000_0000, 32), 0xffff_ffff_8000_0000);
    assert_eq!(sign_extend(0x7fff_ffff, 32), 0x7fff_ffff);
    assert_eq!(
        sign_extend(0xffff_ffff_8000_0000, 32),
        0xffff_ffff_8000_0000
    );
    assert_eq!(sign_extend(u64::MAX, 64), u64::MAX);
    // offset + sign-extended raw: a 32-bit counter started at 2^31 below
    // its wrap point reads back the count since then.
    let offset = 5u64.wrapping_sub(sign_extend(0x8000_0000, 32));
    assert_eq!(offset.wrapping_add(sign_extend(0x8000_0007, 32)), 12);
}
