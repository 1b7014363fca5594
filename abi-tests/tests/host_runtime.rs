//! The host architecture at run time: a C program built by the system C
//! compiler (not clang) prints every fact; the Rust side computes the same
//! facts with rustc's layout and bindgen's setters. Any gcc/clang/rustc
//! disagreement shows up here with the fact's label.

mod support;

use abi_tests::{cgen, check, ARCHES};
use perf_event_core::sys;
use std::collections::BTreeMap;
use std::process::Command;

include!(concat!(env!("OUT_DIR"), "/host_facts.rs"));

fn bytes_of<T>(v: &T) -> Vec<u8> {
    // SAFETY: `v` is a live, fully initialised plain-data object of
    // size_of::<T>() bytes (the perf structs have no padding bytes that are
    // uninitialised here: they were zeroed before the setter ran).
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), std::mem::size_of::<T>()) }
        .to_vec()
}

/// Runs the C program and returns label -> printed value.
fn c_program_output() -> BTreeMap<String, String> {
    let arch = ARCHES
        .iter()
        .find(|a| a.file == ARCH_FILE)
        .expect("host arch in table");
    let facts = abi_tests::arch_facts(&support::repo(), arch).expect("host facts");
    let dir = support::repo().join("target/abi-tests-host");
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("facts.c");
    let exe = dir.join("facts");
    std::fs::write(&source, cgen::host_program(&facts)).unwrap();
    let mut cc = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".to_owned()));
    cc.arg("-std=gnu11").arg("-iquote").arg(support::repo());
    for dir in support::include_dirs(arch.multiarch) {
        cc.arg("-isystem").arg(dir);
    }
    let out = cc
        .arg(&source)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run the system C compiler (cc)");
    assert!(
        out.status.success(),
        "cc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe)
        .output()
        .expect("run the C facts program");
    assert!(run.status.success());
    String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

#[test]
fn every_fact_agrees_between_rustc_and_the_system_c_compiler() {
    if !support::pinned("every_fact_agrees_between_rustc_and_the_system_c_compiler") {
        return;
    }
    let c = c_program_output();
    let arch = ARCHES.iter().find(|a| a.file == ARCH_FILE).unwrap();
    let facts = abi_tests::arch_facts(&support::repo(), arch).unwrap();
    let rust: BTreeMap<&str, i128> = rust_values().into_iter().collect();
    let mut problems = Vec::new();
    for a in &facts.asserts {
        let printed: i64 = c[&a.label].parse().expect("C printed a number");
        // The C program prints every value as long long.
        if i128::from(printed) != a.expected as i64 as i128 {
            problems.push(format!(
                "{}: C says {printed}, the Rust side states {}",
                a.label, a.expected
            ));
        }
        if let Some(v) = rust.get(a.label.as_str()) {
            if *v as i64 != printed {
                problems.push(format!("{}: C says {printed}, rustc computes {v}", a.label));
            }
        }
    }
    let probes: BTreeMap<&str, Vec<u8>> = rust_probes().into_iter().collect();
    for p in &facts.probes {
        let printed = &c[&p.label];
        let predicted: String = p.expected.iter().map(|b| format!("{b:02x}")).collect();
        if *printed != predicted {
            problems.push(format!(
                "{}: C bytes {printed}, predicted {predicted}",
                p.label
            ));
        }
        if let Some(bytes) = probes.get(p.label.as_str()) {
            let actual: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            if *printed != actual {
                problems.push(format!(
                    "{}: C bytes {printed}, bindgen setter {actual}",
                    p.label
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} disagreements:\n{}",
        problems.len(),
        problems.join("\n")
    );
    // Most facts were computed by rustc itself, not only stated.
    assert!(rust.len() > 700, "only {} rustc-computed facts", rust.len());
    assert!(probes.len() > 100, "only {} setter probes", probes.len());
    let _ = sys::PERF_ATTR_SIZE_VER9;
    let _ = check::hex(&[]);
}
