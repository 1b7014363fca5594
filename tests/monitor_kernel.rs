//! The self-monitoring API: on the host through read(2) (software events,
//! no user access), in the lab's aarch64 guests through the counter
//! instruction (asserted), measuring a loop.

mod lab_support;

use lab_support::{not_applicable, Need};
use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Hardware, Software};
use perf_event_core::monitor::Monitor;

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
            !clock.user_space && !faults.user_space,
            "software events have no user-space counter"
        );
        assert!(
            clock.value > last,
            "task-clock grows with the work: {} after {last}",
            clock.value
        );
        assert_eq!(clock.time_enabled, clock.time_running);
        last = clock.value;
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
            cycles.user_space && instructions.user_space,
            "both reads took the instruction path"
        );
        assert!(
            instructions.value > last,
            "{} instructions after {last}",
            instructions.value
        );
        assert!(cycles.value > 0);
        last = instructions.value;
    }
}
