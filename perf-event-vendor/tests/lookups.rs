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

#[test]
fn the_free_functions_read_the_newest_kernel_decoded_once() {
    use perf_event_vendor::{kernels, tables};
    let newest = &kernels()[0];
    assert_eq!(newest.kernel(), "6.12");
    assert!(std::ptr::eq(tables("6.12").unwrap(), newest));
    assert!(std::ptr::eq(models(), newest.models()), "one decoding");
    assert!(std::ptr::eq(map(), newest.map()));
    assert_eq!(origin(), newest.origin());
    assert_eq!(newest.cpuid_rule(), CpuidRule::TARGET);
    if let Some(origin) = origin() {
        assert_eq!(origin.package, "linux-source-6.12");
    }
    assert!(tables("5.10").is_none());
    let debug = format!("{newest:?}");
    assert!(
        debug.starts_with("Tables { kernel: \"6.12\"") && debug.len() < 200,
        "{debug}"
    );
    // Feature linux-6-1 adds Linux 6.1's; a default build has the one.
    assert_eq!(tables("6.1").is_some(), cfg!(feature = "linux-6-1"));
    assert_eq!(
        kernels().len(),
        if cfg!(feature = "linux-6-1") { 2 } else { 1 }
    );
}

#[cfg(feature = "linux-6-1")]
#[test]
fn linux_6_1_tables_are_their_own() {
    let v6_1 = perf_event_vendor::tables("6.1").expect("feature linux-6-1");
    assert_eq!(v6_1.kernel(), "6.1");
    assert!(std::ptr::eq(v6_1.models(), v6_1.models()), "decoded once");
    if ARCH == Some("riscv") || ARCH.is_none() {
        assert!(v6_1.models().is_empty() && v6_1.origin().is_none());
        return;
    }
    assert_eq!(v6_1.origin().unwrap().package, "linux-source-6.1");
    for row in v6_1.map() {
        let m = v6_1.model(row.model).expect("the row's model");
        assert!(!m.is_sys(), "{}", row.model);
    }
    for m in v6_1.models() {
        assert!(std::ptr::eq(v6_1.model(m.name).unwrap(), m));
        for x in &m.metrics {
            assert!(
                x.threshold.is_none() && x.default_groups.is_none() && x.no_group_groups.is_none()
            );
        }
    }
}

#[cfg(all(feature = "linux-6-1", target_arch = "x86_64"))]
#[test]
fn x86_in_perf_6_1() {
    let v6_1 = perf_event_vendor::tables("6.1").unwrap();
    let skx = v6_1
        .model_for_cpuid("GenuineIntel-6-55-4")
        .expect("Skylake-SP");
    assert_eq!(skx.name, "skylakex");
    // 6.1 writes the JSON's spelling; 6.12 canonicalizes it.
    let l1d = skx.events_named("l1d.replacement").next().unwrap();
    assert_eq!(l1d.terms, "event=0x51,period=2000003,umask=0x1");
    let newest = model("skylakex").unwrap();
    let l1d = newest.events_named("l1d.replacement").next().unwrap();
    assert_eq!(l1d.terms, "event=0x51,period=2000003,umask=1");
    let cas = skx
        .events
        .iter()
        .find(|e| e.pmu == "uncore_imc")
        .expect("an uncore event");
    assert!(
        cas.desc.unwrap().ends_with(". Unit: uncore_imc "),
        "{:?}",
        cas.desc
    );
    assert!(
        v6_1.model_for_cpuid("GenuineIntel-6-AD-1").is_none(),
        "no Granite Rapids in 6.1"
    );
    assert!(
        model_for_cpuid("GenuineIntel-6-AD-1").is_some(),
        "6.12 has it"
    );
}
