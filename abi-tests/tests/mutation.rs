//! The checker can fail: three wrong Rust-side facts (one offset, one
//! constant, one ioctl number) and one wrong bit-field prediction are each
//! reported by clang, by name, and nothing else is.

mod support;

use abi_tests::check::{check, Compiler};
use abi_tests::ARCHES;

fn mutate(facts: &mut abi_tests::facts::Facts, label: &str, by: i128) {
    let fact = facts
        .asserts
        .iter_mut()
        .find(|a| a.label == label)
        .unwrap_or_else(|| panic!("no fact labelled {label:?}"));
    fact.expected += by;
}

#[test]
fn each_injected_error_is_reported_by_name() {
    if !support::pinned("each_injected_error_is_reported_by_name") {
        return;
    }
    for file in ["x86_64", "powerpc64"] {
        let arch = ARCHES.iter().find(|a| a.file == file).unwrap();
        let mut facts = abi_tests::arch_facts(&support::repo(), arch).unwrap();
        mutate(&mut facts, "offset perf_event_mmap_page::data_head", 8);
        mutate(&mut facts, "constant PERF_RECORD_SAMPLE", 1);
        mutate(
            &mut facts,
            "ioctl PERF_EVENT_IOC_ENABLE (const fn composer)",
            1,
        );
        let probe = facts
            .probes
            .iter_mut()
            .find(|p| p.label == "bitfield perf_event_attr::precise_ip = 1")
            .unwrap();
        probe.expected.reverse();

        let compiler = Compiler {
            clang: support::clang(),
            clang_target: arch.clang_target.to_owned(),
            include_dirs: support::include_dirs(arch.multiarch),
            wrapper_dir: support::repo(),
        };
        let work = support::repo().join("target/abi-tests-mutation").join(file);
        let report = check(&facts, &compiler, &work).unwrap();
        let mut named: Vec<&str> = report
            .failures
            .iter()
            .map(|f| f.split(": ").next().unwrap())
            .collect();
        named.sort_unstable();
        assert_eq!(
            named,
            [
                "bitfield perf_event_attr::precise_ip = 1",
                "constant PERF_RECORD_SAMPLE",
                "ioctl PERF_EVENT_IOC_ENABLE (const fn composer)",
                "offset perf_event_mmap_page::data_head",
            ],
            "{file}: failures were {:#?}",
            report.failures
        );
    }
}

#[test]
fn the_unmutated_facts_pass_so_the_failures_above_are_the_mutations() {
    if !support::pinned("the_unmutated_facts_pass_so_the_failures_above_are_the_mutations") {
        return;
    }
    let arch = ARCHES.iter().find(|a| a.file == "x86_64").unwrap();
    let facts = abi_tests::arch_facts(&support::repo(), arch).unwrap();
    let compiler = Compiler {
        clang: support::clang(),
        clang_target: arch.clang_target.to_owned(),
        include_dirs: support::include_dirs(arch.multiarch),
        wrapper_dir: support::repo(),
    };
    let work = support::repo().join("target/abi-tests-mutation/clean");
    let report = check(&facts, &compiler, &work).unwrap();
    assert_eq!(report.failures, Vec::<String>::new());
    assert!(report.asserts + report.probes > 1000);
}
