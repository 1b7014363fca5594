//! The public lookups on the target's tables.

use perf_event_vendor::{map, model, model_for_cpuid, models, origin, CpuidRule, ARCH};

#[test]
fn every_row_leads_to_its_model_and_every_model_is_found_by_name() {
    assert_eq!(ARCH.is_some(), !models().is_empty());
    assert_eq!(ARCH.is_some(), CpuidRule::TARGET.is_some());
    assert_eq!(ARCH.is_some(), origin().is_some());
    for row in map() {
        let m = model(row.model).expect("the row's model");
        assert!(!m.is_sys(), "{}: perf maps CPUs to core tables", row.model);
    }
    for m in models() {
        assert!(std::ptr::eq(model(m.name).unwrap(), m));
    }
    assert!(model("no-such-model").is_none());
}

#[test]
fn the_first_matching_row_wins() {
    let Some(rule) = CpuidRule::TARGET else {
        assert!(model_for_cpuid("anything").is_none());
        return;
    };
    // A row's own id matches it on every architecture but where it is a
    // pattern; where it matches, the first matching row decides.
    for row in map() {
        if rule.matches(row.cpuid, row.cpuid) {
            let first = map()
                .iter()
                .find(|r| rule.matches(r.cpuid, row.cpuid))
                .unwrap();
            assert_eq!(model_for_cpuid(row.cpuid).unwrap().name, first.model);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn x86_events_and_metrics() {
    let skx = model_for_cpuid("GenuineIntel-6-55-4").expect("Skylake-SP");
    assert_eq!(skx.name, "skylakex");
    let inst: Vec<_> = skx.events_named("INST_RETIRED.ANY").collect();
    assert_eq!(inst.len(), 1, "names compare ignoring case");
    assert_eq!(
        inst[0].terms, "event=0xc0,period=2000003",
        "jevents' fixed terms"
    );
    assert_eq!(inst[0].pmu, "default_core");
    let ipc = skx
        .metrics_named("TMA_INFO_THREAD_IPC")
        .next()
        .expect("IPC");
    assert!(ipc.expr.contains("INST_RETIRED.ANY"), "{}", ipc.expr);
    assert!(skx.events.iter().any(|e| e.pmu.starts_with("uncore_")));
    // Hybrid: one name on both core PMUs.
    let adl = model_for_cpuid("GenuineIntel-6-97-2").expect("Alder Lake");
    let mut pmus: Vec<&str> = adl
        .events_named("inst_retired.any")
        .map(|e| e.pmu)
        .collect();
    pmus.sort_unstable();
    assert_eq!(pmus, ["cpu_atom", "cpu_core"]);
    assert!(adl
        .metrics
        .iter()
        .any(|m| m.group_names().any(|g| g == "TopdownL1")));
}

#[cfg(target_arch = "aarch64")]
#[test]
fn arm64_events() {
    let n1 = model_for_cpuid("0x00000000413fd0c1").expect("Neoverse N1");
    assert_eq!(n1.name, "arm/neoverse-n1");
    let cycles = n1.events_named("cpu_cycles").next().expect("cpu_cycles");
    assert_eq!(
        cycles.terms, "event=0x11",
        "from the architecture standard events"
    );
}
