//! The self-monitoring API: on the host through read(2) (software events,
//! no user access), in the lab's aarch64 guests through the counter
//! instruction (asserted), measuring a loop; there, no system call per
//! region, and the instructions of a fixed loop within 1 % of its static
//! count through the measuring API.

use crate::kernel_support;
use crate::lab_support;

use lab_support::{not_applicable, Need};
use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Hardware, Software};
use perf_event_core::monitor::{Counter, Monitor, Threads};
use perf_event_host::measure::stats::{measure, Runs};

fn work(n: u64) -> u64 {
    (0..n).fold(0u64, |a, i| {
        std::hint::black_box(a.wrapping_mul(31).wrapping_add(i))
    })
}

#[test]
fn software_events_are_measured_through_read() {
    let mut m = Monitor::open([
        Attr::new(Event::Software(Software::TaskClock)),
        Attr::new(Event::Software(Software::PageFaults)),
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    let mut last = 0;
    // One unmeasured round first: under QEMU's TCG the first run of the
    // closure also pays for translating its code (and the first page
    // faults), which can take longer than the next, larger round.
    m.measure(|| work(200_000)).unwrap();
    for n in [1u64, 4, 16] {
        let (_, [clock, faults]) = m
            .measure(|| {
                let v = vec![1u8; 64 << 10];
                work(n * 200_000) + u64::from(v[n as usize])
            })
            .unwrap();
        assert!(
            !clock.used_counter() && !faults.used_counter(),
            "software events have no user-space counter"
        );
        assert!(
            clock.counts.value > last,
            "task-clock grows with the work: {} after {last}",
            clock.counts.value
        );
        assert_eq!(clock.counts.enabled, clock.counts.running);
        last = clock.counts.value;
    }
}

/// perf_user_access enabled and an arm64 PMU present.
fn user_access() -> Result<(), String> {
    if !cfg!(target_arch = "aarch64") {
        return Err("user-space counter reads are checked on aarch64 (the lab's guests)".into());
    }
    match std::fs::read_to_string("/proc/sys/kernel/perf_user_access") {
        Ok(v) if v.trim() == "1" => Ok(()),
        Ok(v) => Err(format!("perf_user_access is {}", v.trim())),
        Err(e) => Err(format!("no perf_user_access: {e}")),
    }
}

#[test]
fn hardware_events_are_measured_in_user_space() {
    if let Err(why) = user_access() {
        not_applicable(Need::Aarch64Pmu, &why);
        return;
    }
    // config1 bit 1: arm64 user-space counter access for this event.
    let hw = |h| {
        Attr::new(Event::Hardware(h))
            .exclude_kernel(true)
            .exclude_hv(true)
            .config1(0x2)
    };
    let mut m = Monitor::open([hw(Hardware::CpuCycles), hw(Hardware::Instructions)])
        .unwrap_or_else(|e| panic!("{e}"));
    let mut last = 0;
    for n in [1u64, 2, 4, 8] {
        let (_, [cycles, instructions]) = m.measure(|| work(n * 100_000)).unwrap();
        assert!(
            cycles.used_counter() && instructions.used_counter(),
            "both reads took the instruction path"
        );
        assert!(
            instructions.counts.value > last,
            "{} instructions after {last}",
            instructions.counts.value
        );
        assert!(cycles.counts.value > 0);
        last = instructions.counts.value;
    }
}

#[test]
fn instructions_of_a_fixed_loop_match_its_static_count() {
    if let Err(why) = user_access() {
        not_applicable(Need::Aarch64Pmu, &why);
        return;
    }
    const N: u64 = 10_000;
    let mut m =
        Counter::open(&[Counter::Instructions], Threads::Caller).unwrap_or_else(|e| panic!("{e}"));
    let report = measure(&mut m, &Runs::new(31), || {
        kernel_support::additions(std::hint::black_box(N))
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let s = &report.counters[0];
    assert!(s.user_space, "read with the counter instruction");
    assert!(s.overhead.subtracted, "the empty region is subtracted");
    let expected = 3.0 * N as f64;
    let off = (s.median - expected).abs() / expected;
    println!(
        "instructions per call: median {:.1}, min {:.1}, mean {:.1} +- {:.1}; static {expected}; \
         empty region {:.1} subtracted; off by {:.3} %",
        s.median,
        s.min,
        s.mean,
        s.deviation,
        s.overhead.median,
        off * 100.0
    );
    assert!(off <= 0.01, "{:.3} % from the static count", off * 100.0);
    assert_eq!(s.running_fraction, 1.0, "never multiplexed");
}

#[test]
fn the_user_space_path_makes_no_syscall() {
    if let Err(why) = user_access() {
        not_applicable(Need::Aarch64Pmu, &why);
        return;
    }
    kernel_support::tracefs().unwrap_or_else(|e| panic!("{e}"));
    let enter = kernel_support::tracepoint_id("raw_syscalls", "sys_enter");
    let mut syscalls =
        Monitor::open([Attr::new(Event::Tracepoint(enter))]).unwrap_or_else(|e| panic!("{e}"));
    let mut m = Counter::open(
        // QEMU's arm64 PMU has no branch-miss event: the two it has.
        &[Counter::Instructions, Counter::Cycles],
        Threads::Caller,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    syscalls.start().unwrap();
    m.start().unwrap();
    let [instructions, cycles] = m.stop().unwrap();
    let [n] = syscalls.stop().unwrap();
    assert!(instructions.used_counter() && cycles.used_counter());
    // The closing read(2) of the syscall counter counts itself.
    assert_eq!(n.counts.value - 1, 0, "syscalls in a user-space region");
}
