//! The metric expressions' literals on fixture trees
//! (`VendorSystem::set_literals`, perf's `expr__get_literal`): SMT on and
//! off (by `smt/active` and by the sibling lists), two packages, offline
//! CPUs, `-a` / `-C` for `#core_wide`, perf 6.1's NaN for the literals it
//! does not know; and the stat example's metric text as perf 6.1 prints it
//! (`examples/stat/metric_format.rs`, included here).

use crate::sysfs_support::Tree;
use perf_event_host::parse::System;
use perf_event_host::sysfs::{CpuList, Pmus};
use perf_event_host::vendor::{LiteralMachine, VendorSystem};
use perf_event_vendor::expr::{ExprEnv, ExprInputs, ExprLiteral};

#[path = "../../perf-event-host/examples/stat/metric_format.rs"]
mod metric_format;

/// A machine of `cpus` CPUs (`present`), `online` of them online, each
/// CPU's (package, die, core) sibling lists as written.
fn machine(tree: &Tree, present: &str, online: &str, cpus: &[(u32, &str, &str, &str)]) {
    tree.file("sys/devices/system/cpu/present", present);
    tree.file("sys/devices/system/cpu/online", online);
    for (cpu, package, die, core) in cpus {
        let dir = format!("sys/devices/system/cpu/cpu{cpu}/topology");
        tree.file(&format!("{dir}/package_cpus_list"), package);
        tree.file(&format!("{dir}/die_cpus_list"), die);
        tree.file(&format!("{dir}/core_cpus_list"), core);
    }
}

fn literals(tree: &Tree, kernel: &str, system_wide: bool, cpus: Option<&str>) -> ExprInputs {
    tree.pmu("cpu", 4).format("event", "config:0-7");
    let pmus = Pmus::read_from(&tree.devices()).unwrap();
    let tables = perf_event_vendor::tables(kernel).unwrap();
    let vendor = VendorSystem::with_kernel_tables(
        System::new(pmus, None),
        tables,
        Some("GenuineIntel-6-55-4"),
    )
    .unwrap();
    let machine = LiteralMachine {
        sysfs: tree.root().join("sys"),
        cpuinfo:
            "vendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6154 CPU @ 3.00GHz\n"
                .to_owned(),
        system_wide,
        cpus: cpus.map(|c| CpuList::parse(c).unwrap()),
    };
    let mut inputs = ExprInputs::new();
    vendor.set_literals(&mut inputs, &machine).unwrap();
    inputs
}

fn get(inputs: &ExprInputs, literal: ExprLiteral) -> f64 {
    inputs.literal(literal).unwrap()
}

/// Two packages of two cores with two threads each (CPUs n and n+4 are
/// siblings), CPU 7 offline, `smt/active` 1.
fn two_packages(tree: &Tree) {
    let mut cpus = Vec::new();
    for cpu in 0..7u32 {
        let package = if cpu % 4 < 2 { "0-1,4-5" } else { "2-3,6-7" };
        let core = ["0,4", "1,5", "2,6", "3,7"][(cpu % 4) as usize];
        cpus.push((cpu, package, package, core));
    }
    machine(tree, "0-7", "0-6", &cpus);
    tree.file("sys/devices/system/cpu/smt/active", "1");
}

#[test]
fn two_packages_with_smt() {
    let tree = Tree::new("literals-2p");
    two_packages(&tree);
    let l = literals(&tree, "6.12", false, None);
    assert_eq!(get(&l, ExprLiteral::NumCpus), 8.0); // highest present + 1
    assert_eq!(get(&l, ExprLiteral::NumCpusOnline), 7.0);
    assert_eq!(get(&l, ExprLiteral::SmtOn), 1.0);
    assert_eq!(get(&l, ExprLiteral::NumPackages), 2.0);
    let dies = if cfg!(any(target_arch = "x86_64", target_arch = "s390x")) {
        2.0
    } else {
        0.0
    };
    assert_eq!(get(&l, ExprLiteral::NumDies), dies);
    assert_eq!(get(&l, ExprLiteral::NumCores), 4.0);
    assert_eq!(get(&l, ExprLiteral::CoreWide), 0.0); // not system-wide
    assert_eq!(get(&l, ExprLiteral::HasPmem), 0.0);
    assert!(get(&l, ExprLiteral::Slots).is_nan());
    let tsc = if cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
        3e9
    } else {
        0.0
    };
    assert_eq!(get(&l, ExprLiteral::SystemTscFreq), tsc);
}

#[test]
fn core_wide_needs_system_wide_and_whole_cores() {
    let tree = Tree::new("literals-cw");
    two_packages(&tree);
    assert_eq!(
        get(&literals(&tree, "6.12", true, None), ExprLiteral::CoreWide),
        1.0
    );
    let whole = literals(&tree, "6.12", true, Some("0,4"));
    assert_eq!(get(&whole, ExprLiteral::CoreWide), 1.0);
    let half = literals(&tree, "6.12", true, Some("0-1"));
    assert_eq!(get(&half, ExprLiteral::CoreWide), 0.0);
}

#[test]
fn smt_from_the_sibling_lists_without_smt_active() {
    let tree = Tree::new("literals-nosmt");
    machine(
        &tree,
        "0-1",
        "0-1",
        &[(0, "0-1", "0-1", "0"), (1, "0-1", "0-1", "1")],
    );
    let l = literals(&tree, "6.12", true, Some("0"));
    assert_eq!(get(&l, ExprLiteral::SmtOn), 0.0);
    // SMT off: every run is core-wide once system-wide.
    assert_eq!(get(&l, ExprLiteral::CoreWide), 1.0);
    assert_eq!(get(&l, ExprLiteral::NumCores), 2.0);
    assert_eq!(get(&l, ExprLiteral::NumPackages), 1.0);
    let tree = Tree::new("literals-smt-lists");
    machine(
        &tree,
        "0-1",
        "0-1",
        &[(0, "0", "0", "0-1"), (1, "0", "0", "0-1")],
    );
    assert_eq!(
        get(&literals(&tree, "6.12", false, None), ExprLiteral::SmtOn),
        1.0
    );
    // smt/active wins over the lists.
    tree.file("sys/devices/system/cpu/smt/active", "0");
    assert_eq!(
        get(&literals(&tree, "6.12", false, None), ExprLiteral::SmtOn),
        0.0
    );
}

#[test]
fn perf_6_1_knows_fewer_literals() {
    let tree = Tree::new("literals-61");
    two_packages(&tree);
    tree.file("sys/firmware/acpi/tables/NFIT", "");
    let l = literals(&tree, "6.1", false, None);
    for unknown in [
        ExprLiteral::NumCpusOnline,
        ExprLiteral::Slots,
        ExprLiteral::HasPmem,
    ] {
        assert!(get(&l, unknown).is_nan(), "{}", unknown.name());
    }
    assert_eq!(get(&l, ExprLiteral::NumCores), 4.0);
    let l = literals(&tree, "6.12", false, None);
    assert_eq!(get(&l, ExprLiteral::HasPmem), 1.0);
}

#[test]
fn metric_text_as_perf_6_1_prints_it() {
    use metric_format::{csv_metric, format_metric, std_metric};
    // `%8.2f NAME` without a ScaleUnit.
    let ipc = format_metric("IPC", None, 0, Some(1.0003));
    assert_eq!(ipc.value.as_deref(), Some("    1.00"));
    assert_eq!(std_metric(&ipc), format!(" #     1.00 {:<23}", "IPC"));
    assert_eq!(csv_metric(&ipc, ","), ",1.00,IPC");
    // `%8.1f UNIT  NAME` with one; `_RUNTIME` for an expression with `?`.
    let pct = format_metric("tma_retiring", Some(("%", false)), 0, Some(25.04));
    assert_eq!(std_metric(&pct), " #     25.0 %  tma_retiring        ");
    assert_eq!(csv_metric(&pct, ";"), ";25.0;%  tma_retiring");
    let runtime = format_metric("M", Some(("GHz", true)), 2, Some(1.0));
    assert_eq!(runtime.unit, "GHz  M_2");
    // perf's CSV cuts the value at its first character that is no digit
    // or `.`: a negative value or NaN prints empty.
    let negative = format_metric("tma_backend_bound", Some(("%", false)), 0, Some(-25.0));
    assert_eq!(csv_metric(&negative, ","), ",,%  tma_backend_bound");
    let nan = format_metric("CPI", None, 0, Some(f64::NAN));
    assert_eq!(nan.value.as_deref(), Some("     nan"));
    assert_eq!(csv_metric(&nan, ","), ",,CPI");
    // Not computable: nothing on the line (35 blanks; two separators).
    let none = format_metric("CPI", None, 0, None);
    assert_eq!(std_metric(&none), " ".repeat(35));
    assert_eq!(csv_metric(&none, ","), ",,");
    // A long value: printf's `%-*s` with a negative width pads by its size.
    let long = format_metric("X", None, 0, Some(1e30));
    let text = long.value.clone().unwrap();
    assert_eq!(text.len(), 34);
    assert_eq!(std_metric(&long), format!(" # {text} X  "));
}
