//! perf's vendor event names on a real PMU (perf-event-host's feature
//! `vendor`), where the lab gives one whose CPU perf has a table for: the
//! aarch64 6.12 guest with `-cpu cortex-a72` (`-icount shift=0`). The
//! running CPU's MIDR selects perf's arm/cortex-a57-a72 table; its
//! `inst_retired` and `cpu_cycles` (`"EventCode": "0x08"` and `"0x11"` in
//! arm64's common-and-microarch.json) are parsed by name, opened in one
//! group with the generic `instructions` and `cycles`, and count a loop of
//! a known static instruction count.
//!
//! - The vendor events are the PMU's raw events 0x08 and 0x11.
//! - `inst_retired` is within 1 % of the loop's static count, the bound of
//!   the lab's other static-count tests (QEMU's `-icount` is one count for
//!   the whole machine: another vCPU's work can add a little).
//! - Each vendor count is within 1 % of its generic twin (the same hardware
//!   events, counted in the same group over the same window).
//! - A metric evaluated from them: the cortex-a57-a72 table has none, so
//!   perf's `ipc` of the arm64 tables that have it (`INST_RETIRED /
//!   CPU_CYCLES`, ScaleUnit `1per cycle`; the Neoverse tables) is parsed
//!   and evaluated by perf-event-vendor's metric expressions from the
//!   vendor counts by id, within 2 % of `instructions / cycles`.

use crate::kernel_support;
use crate::lab_support::{self, Need};

use perf_event_core::monitor::Monitor;
use perf_event_host::parse::parse;
use perf_event_host::vendor::VendorSystem;
use perf_event_vendor::expr::{Expr, ExprInputs};
use perf_event_vendor::metricgroup::ScaleUnit;

/// Iterations of `kernel_support::additions` (3 instructions each).
const LOOPS: u64 = 1_000_000;

/// `|a - b| / b`.
fn off(a: f64, b: f64) -> f64 {
    (a - b).abs() / b
}

#[test]
fn vendor_names_count_as_the_generic_events_on_a_cortex_a72() {
    if !cfg!(target_arch = "aarch64") {
        lab_support::not_applicable(
            Need::CortexA72,
            &format!(
                "perf's cortex-a72 table is arm64's (this is {})",
                std::env::consts::ARCH
            ),
        );
        return;
    }
    let system = VendorSystem::discover().unwrap_or_else(|e| panic!("vendor events: {e}"));
    let Some(table) = system
        .tables()
        .iter()
        .find(|t| t.model == Some("arm/cortex-a57-a72"))
    else {
        let ids: Vec<String> = system
            .tables()
            .iter()
            .filter(|t| t.cpuid.is_some())
            .map(|t| format!("{} {:?} -> {:?}", t.pmu, t.cpuid, t.model))
            .collect();
        lab_support::not_applicable(
            Need::CortexA72,
            &format!("no PMU here has a Cortex-A72's table: {}", ids.join(", ")),
        );
        return;
    };
    let list = parse("{inst_retired,cpu_cycles,instructions,cycles}:u", &system)
        .unwrap_or_else(|e| panic!("{e}"));
    let events = list.events();
    assert_eq!(events.len(), 4, "one core PMU, one event each");
    let pmu = events[0]
        .pmu
        .expect("inst_retired is an alias of the core PMU");
    assert_eq!(pmu.name(), table.pmu);
    for (event, code) in [(&events[0], 0x08), (&events[1], 0x11)] {
        let raw = event.attr.to_raw();
        assert_eq!(
            (raw.type_, raw.config),
            (pmu.type_id(), code),
            "{}",
            event.text
        );
    }
    // Counting: no sample period (arm64's JSON has none either).
    let attrs = [0, 1, 2, 3].map(|i| events[i].attr.sample_period(0));
    let mut monitor = Monitor::open(attrs).unwrap_or_else(|e| {
        panic!("the a72 guest's PMU must count (aarch64-pmu): {e}");
    });
    let (_, [inst_retired, cpu_cycles, instructions, cycles]) = monitor
        .measure(|| kernel_support::additions(std::hint::black_box(LOOPS)))
        .unwrap();
    let [inst_retired, cpu_cycles, instructions, cycles] =
        [inst_retired, cpu_cycles, instructions, cycles].map(|r| r.counts.value as f64);
    let static_count = (3 * LOOPS) as f64;
    let generic_ipc = instructions / cycles;
    // perf's `ipc` metric of the arm64 tables, evaluated from the counts.
    let metric = perf_event_vendor::models()
        .iter()
        .flat_map(|m| m.metrics_named("ipc"))
        .next()
        .expect("the arm64 tables have perf's ipc metric");
    let expr = Expr::parse(metric.expr).unwrap_or_else(|e| panic!("{}: {e}", metric.expr));
    let ids = expr.ids().unwrap();
    assert_eq!(ids, ["INST_RETIRED", "CPU_CYCLES"], "{}", metric.expr);
    let counts: ExprInputs = [("INST_RETIRED", inst_retired), ("CPU_CYCLES", cpu_cycles)]
        .into_iter()
        .collect();
    let scale = ScaleUnit::parse(metric.unit.unwrap_or("1"));
    let ipc = expr.eval(&counts).unwrap() * scale.scale;
    println!(
        "inst_retired {inst_retired} (static {static_count}), instructions {instructions}, \
         cpu_cycles {cpu_cycles}, cycles {cycles}; IPC {ipc:.4} against {generic_ipc:.4}"
    );
    assert!(
        off(inst_retired, static_count) <= 0.01,
        "inst_retired {inst_retired} against the static {static_count}"
    );
    assert!(
        off(inst_retired, instructions) <= 0.01,
        "inst_retired {inst_retired}, instructions {instructions}"
    );
    assert!(cycles > 0.0, "cycles counted");
    assert!(
        off(cpu_cycles, cycles) <= 0.01,
        "cpu_cycles {cpu_cycles}, cycles {cycles}"
    );
    assert!(
        off(ipc, generic_ipc) <= 0.02,
        "IPC {ipc} against {generic_ipc}"
    );
}
