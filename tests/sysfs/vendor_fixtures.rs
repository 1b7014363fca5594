//! perf's vendor event names on fixture trees (feature `vendor` of
//! perf-event-host): the table chosen by a CPU id as perf with
//! `PERF_CPUID`, the events added to core, hybrid and uncore PMUs, a sysfs
//! alias replaced by the JSON event of its name, and the attrs the parser
//! makes of them, checked against the JSON files of Linux 6.12's
//! `tools/perf/pmu-events/arch/` (the values quoted in each test).

use crate::attr_want::{got, w, Want, U};
use crate::sysfs_support;

use perf_event_host::parse::{parse, System};
use perf_event_host::sysfs::Pmus;
use perf_event_host::vendor::{riscv_cpuid, x86_cpuid, PmuTable, VendorSystem};
use sysfs_support::*;

fn system(tree: &Tree, cpuid: &str) -> VendorSystem {
    let pmus = Pmus::read_from(&tree.devices()).unwrap();
    VendorSystem::with_cpuid(System::new(pmus, None), cpuid).unwrap()
}

fn wants(text: &str, system: &VendorSystem) -> Vec<Want> {
    let list = parse(text, system).unwrap_or_else(|e| panic!("{text}: {e}"));
    list.events().iter().map(got).collect()
}

const fn period(mut want: Want, period: u64) -> Want {
    want.period = period;
    want
}

fn table<'a>(system: &'a VendorSystem, pmu: &str) -> &'a PmuTable {
    system.tables().iter().find(|t| t.pmu == pmu).unwrap()
}

/// Whether the target embeds perf's x86 tables (x86 and x86_64): the
/// skylakex and alderlake cases need them; elsewhere (the lab's other
/// guests) the test is not applicable there.
fn has_x86_tables() -> bool {
    if cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
        return true;
    }
    crate::lab_support::not_applicable(
        crate::lab_support::Need::X86VendorTables,
        &format!(
            "the package embeds the target's tables only; this build has {}'s",
            std::env::consts::ARCH
        ),
    );
    false
}

#[test]
fn cpu_ids_are_built_as_perf_builds_them() {
    let skx = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n\
               model name\t: Intel(R) Xeon(R)\nstepping\t: 4\n\nprocessor\t: 1\n";
    assert_eq!(x86_cpuid(skx).unwrap(), "GenuineIntel-6-55-4");
    let zen3 = "vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nstepping\t: 1\n";
    assert_eq!(x86_cpuid(zen3).unwrap(), "AuthenticAMD-25-11-1");
    let err = x86_cpuid("vendor_id\t: GenuineIntel\ncpu family\t: 6\n").unwrap_err();
    assert!(err.to_string().contains("`model`"), "{err}");
    let u74 = "processor\t: 0\nhart\t\t: 1\nisa\t\t: rv64imafdc\nmmu\t\t: sv39\n\
               uarch\t\t: sifive,u74-mc\nmvendorid\t: 0x489\nmarchid\t\t: 0x8000000000000007\n\
               mimpid\t\t: 0x4210427\n";
    assert_eq!(
        riscv_cpuid(u74).unwrap(),
        "0x489-0x8000000000000007-0x4210427"
    );
}

/// skylakex/pipeline.json: INST_RETIRED.ANY is `"EventCode": "0xc0"`,
/// `"SampleAfterValue": "2000003"` (no UMask); BR_MISP_RETIRED.ALL_BRANCHES
/// `0xc5`, 400009; skylakex/uncore-memory.json: UNC_M_CAS_COUNT.RD is
/// `"EventCode": "0x4"`, `"UMask": "0x3"`, `"Unit": "iMC"`, `"PerPkg": "1"`;
/// LLC_MISSES.MEM_READ the same with `"ScaleUnit": "64Bytes"`.
#[test]
fn skylakex_names_resolve_on_cpu_and_uncore_imc() {
    if !has_x86_tables() {
        return;
    }
    let tree = Tree::new("vendor-skx");
    intel(&tree);
    let system = system(&tree, "GenuineIntel-6-55-4");
    assert_eq!(table(&system, "cpu").model, Some("skylakex"));
    assert_eq!(
        table(&system, "cpu").cpuid.as_deref(),
        Some("GenuineIntel-6-55-4")
    );
    let inst = period(w(4, 0xc0), 2000003);
    // perf compares alias names ignoring case (strcasecmp).
    for text in [
        "inst_retired.any",
        "cpu/inst_retired.any/",
        "cpu/event=inst_retired.any/",
        "INST_RETIRED.ANY",
        "cpu/Inst_Retired.Any/",
    ] {
        assert_eq!(wants(text, &system), [inst], "{text}");
    }
    // The user's terms come after the alias's: period= overrides its
    // period, a format term its bits; modifiers as for any event.
    let mut user = w(4, 0xc0 | 2 << 24);
    user.period = 1000;
    user.flags = U;
    assert_eq!(
        wants("cpu/inst_retired.any,period=1000,cmask=2/u", &system),
        [user]
    );
    assert_eq!(
        wants("{inst_retired.any,br_misp_retired.all_branches}", &system),
        [inst, period(w(4, 0xc5), 400009)]
    );
    // An uncore event on each numbered instance.
    assert_eq!(
        wants("unc_m_cas_count.rd", &system),
        [w(14, 0x0304), w(15, 0x0304)]
    );
    let list = parse("unc_m_cas_count.rd", &system).unwrap();
    assert!(list.events().iter().all(|e| e.alias.unwrap().per_pkg()));
    // LLC_MISSES.MEM_READ: the same encoding, `"ScaleUnit": "64Bytes"`.
    let list = parse("uncore_imc_0/llc_misses.mem_read/", &system).unwrap();
    let event = &list.events()[0];
    assert_eq!(got(event), w(14, 0x0304));
    let alias = event.alias.unwrap();
    assert_eq!(
        (alias.scale().map(|s| s.factor), alias.unit()),
        (Some(64.0), Some("Bytes"))
    );
    let imc0: Vec<_> = system
        .aliases()
        .iter()
        .filter(|a| a.pmu == "uncore_imc_0")
        .collect();
    assert!(imc0.iter().all(|a| a.model == "skylakex"));
    assert!(imc0.iter().any(|a| a.event.name == "unc_m_cas_count.rd"));
    // No uncore_imc event on the core PMU, no core event on the uncore one.
    let cpu_names: Vec<&str> = system
        .aliases()
        .iter()
        .filter(|a| a.pmu == "cpu")
        .map(|a| a.event.name)
        .collect();
    assert!(!cpu_names.contains(&"unc_m_cas_count.rd"));
    assert!(!imc0.iter().any(|a| a.event.name == "inst_retired.any"));
    // The sysfs aliases stay.
    assert_eq!(wants("cpu/mem-loads/", &system)[0].config1, 3);
    let err = parse("inst_retired.anyx", &system).unwrap_err();
    assert_eq!(err.position, 0, "{err}");
}

/// Without a table for the id, no vendor event: perf's behaviour for an
/// unknown CPU.
#[test]
fn an_unknown_cpu_id_adds_nothing() {
    let tree = Tree::new("vendor-none");
    intel(&tree);
    let system = system(&tree, "GenuineIntel-99-1-1");
    assert_eq!(table(&system, "cpu").model, None);
    assert!(system.aliases().is_empty());
    assert!(parse("inst_retired.any", &system).is_err());
}

/// alderlake/pipeline.json: INST_RETIRED.ANY with `"Unit": "cpu_core"` and
/// with `"Unit": "cpu_atom"`, both a fixed counter that jevents.py writes as
/// its `fixed` table says, `event=0xc0,period=2000003` (the JSON's UMask
/// dropped); TOPDOWN.SLOTS only for cpu_core (`0x00`, umask 4, 10000003).
#[test]
fn alderlake_hybrid_events_go_to_their_own_core_pmu() {
    if !has_x86_tables() {
        return;
    }
    let tree = Tree::new("vendor-adl");
    hybrid(&tree);
    let system = system(&tree, "GenuineIntel-6-97-2");
    assert_eq!(table(&system, "cpu_core").model, Some("alderlake"));
    assert_eq!(table(&system, "cpu_atom").model, Some("alderlake"));
    assert_eq!(
        wants("inst_retired.any", &system),
        [period(w(10, 0xc0), 2000003), period(w(4, 0xc0), 2000003)]
    );
    assert_eq!(
        wants("cpu_core/topdown.slots/", &system),
        [period(w(4, 0x0400), 10000003)]
    );
    assert_eq!(
        wants("topdown.slots", &system),
        [period(w(4, 0x0400), 10000003)]
    );
    assert!(parse("cpu_atom/topdown.slots/", &system).is_err());
}

/// A sysfs `events/` file named as a JSON event is replaced by it (perf
/// 6.12's `update_alias`): JSON terms and PerPkg; the sysfs scale and unit
/// stay when the JSON has no ScaleUnit.
#[test]
fn a_sysfs_alias_of_a_vendor_name_takes_the_json_terms() {
    if !has_x86_tables() {
        return;
    }
    let tree = Tree::new("vendor-merge");
    intel(&tree);
    tree.pmu("cpu", 4)
        .event("inst_retired.any", "event=0x99,umask=0x7")
        .event("inst_retired.any.scale", "2")
        .event("inst_retired.any.unit", "insns");
    let pmus = Pmus::read_from(&tree.devices()).unwrap();
    assert_eq!(
        pmus.get("cpu")
            .unwrap()
            .alias("inst_retired.any")
            .unwrap()
            .terms_text(),
        "event=0x99,umask=0x7"
    );
    let system = VendorSystem::with_cpuid(System::new(pmus, None), "GenuineIntel-6-55-4").unwrap();
    assert_eq!(
        wants("inst_retired.any", &system),
        [period(w(4, 0xc0), 2000003)]
    );
    let cpu = system.system().pmus.get("cpu").unwrap();
    let alias = cpu.alias("inst_retired.any").unwrap();
    assert_eq!(alias.terms_text(), "event=0xc0,period=2000003");
    assert_eq!(alias.scale().unwrap().factor, 2.0);
    assert_eq!(alias.unit(), Some("insns"));
    let listed = system
        .aliases()
        .iter()
        .find(|a| a.event.name == "inst_retired.any")
        .unwrap();
    assert!(listed.replaced_sysfs);
}

/// An arm64 PMU (`armv8_pmuv3_0`, with a `cpus` file) is a core PMU:
/// `default_core` events land on it. The x86 build has x86's tables only
/// (perf's too: its tables are the build architecture's), so the
/// cortex-a72 MIDR matches no row here; on aarch64 it selects
/// arm/cortex-a57-a72, whose INST_RETIRED (`0x08`) and CPU_CYCLES (`0x11`)
/// replace the sysfs aliases of those names.
#[test]
fn arm64_core_pmu_takes_default_core_events() {
    // arm64's tables on aarch64, x86's skylakex elsewhere; the other
    // architectures' tables have neither.
    if !cfg!(target_arch = "aarch64") && !has_x86_tables() {
        return;
    }
    let tree = Tree::new("vendor-arm64");
    arm64(&tree);
    let arm = system(&tree, "0x00000000410fd080");
    let table = table(&arm, "armv8_pmuv3_0");
    assert_eq!(table.cpuid.as_deref(), Some("0x00000000410fd080"));
    if cfg!(target_arch = "aarch64") {
        assert_eq!(table.model, Some("arm/cortex-a57-a72"));
        assert_eq!(wants("armv8_pmuv3_0/inst_retired/", &arm), [w(10, 0x08)]);
        assert_eq!(wants("armv8_pmuv3_0/cpu_cycles/", &arm), [w(10, 0x11)]);
    } else {
        assert_eq!(table.model, None);
        // x86's skylakex events on the arm64-shaped core PMUs: every
        // default_core event on each PMU with a `cpus` file.
        let system = system(&tree, "GenuineIntel-6-55-4");
        let on = |pmu: &str| system.aliases().iter().filter(|a| a.pmu == pmu).count();
        assert!(on("armv8_pmuv3_0") > 100);
        assert_eq!(on("armv8_pmuv3_0"), on("armv8_pmuv3_1"));
        assert_eq!(on("arm_spe_0"), 0);
    }
}

/// A sys table's events go to an uncore PMU (a `cpumask` file) whose name
/// matches the event's Unit and whose `identifier` matches its Compat as a
/// whole (perf's `pmu_add_sys_aliases`): arm64/freescale/imx8mm/sys/
/// ddrc.json has `imx8mm_ddr.read_cycles`, `"EventCode": "0x2a"`, `"Unit":
/// "imx8_ddr"`, `"Compat": "i.MX8MM"`. Sys tables are arm64's only, so the
/// test runs where the target's tables are arm64's.
#[test]
fn sys_table_events_follow_the_pmu_identifier() {
    if !cfg!(target_arch = "aarch64") {
        crate::lab_support::not_applicable(
            crate::lab_support::Need::Arm64VendorTables,
            &format!(
                "the sys tables (imx8mm, cmn, ...) are arm64's; this build has {}'s",
                std::env::consts::ARCH
            ),
        );
        return;
    }
    let tree = Tree::new("vendor-sys");
    for (name, ty, id) in [("imx8_ddr0", 20, "i.MX8MM"), ("imx8_ddr1", 21, "i.MX8MN")] {
        tree.pmu(name, ty)
            .format("event", "config:0-7")
            .file("cpumask", "0")
            .file("identifier", id);
    }
    // No CPU table: the sys events need none.
    let system = system(&tree, "0x0000000000000000");
    assert_eq!(
        wants("imx8mm_ddr.read_cycles", &system),
        [w(20, 0x2a)],
        "only the PMU whose identifier is i.MX8MM"
    );
    let on_ddr1 = system.aliases().iter().filter(|a| a.pmu == "imx8_ddr1");
    assert!(on_ddr1.clone().all(|a| a.model == "freescale/imx8mn/sys"));
    assert!(on_ddr1.count() > 0);
}
