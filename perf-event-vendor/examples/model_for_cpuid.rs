//! The model perf chooses for a CPU id, and what its table holds.
//!
//! ```sh
//! cargo run --release -p perf-event-vendor --example model_for_cpuid               # this CPU
//! cargo run --release -p perf-event-vendor --example model_for_cpuid -- GenuineIntel-6-55-4
//! ```
//!
//! Without an argument the CPU id is this machine's, built as perf's
//! `get_cpuid_str` builds it: on x86 `vendor-family-model-stepping` from
//! /proc/cpuinfo, on arm64 the MIDR of CPU 0 from sysfs.

use std::process::ExitCode;

/// This machine's CPU id as perf builds it, where the example knows how.
fn this_cpuid() -> Option<String> {
    if cfg!(target_arch = "aarch64") {
        let midr = "/sys/devices/system/cpu/cpu0/regs/identification/midr_el1";
        return Some(std::fs::read_to_string(midr).ok()?.trim().to_owned());
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let field = |name: &str| {
        cpuinfo
            .lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_owned())
    };
    let number = |name: &str| field(name)?.parse::<u32>().ok();
    Some(format!(
        "{}-{}-{:X}-{:X}",
        field("vendor_id")?,
        number("cpu family")?,
        number("model")?,
        number("stepping")?
    ))
}

fn main() -> ExitCode {
    let Some(arch) = perf_event_vendor::ARCH else {
        eprintln!("perf has no vendor tables for this architecture");
        return ExitCode::FAILURE;
    };
    let Some(cpuid) = std::env::args().nth(1).or_else(this_cpuid) else {
        eprintln!("usage: model_for_cpuid CPUID (this machine's could not be read)");
        return ExitCode::FAILURE;
    };
    let Some(model) = perf_event_vendor::model_for_cpuid(&cpuid) else {
        println!("{cpuid}: no model in perf's {arch} mapfile");
        return ExitCode::SUCCESS;
    };
    println!(
        "{cpuid}: {arch}/{}, {} events, {} metrics",
        model.name,
        model.events.len(),
        model.metrics.len()
    );
    for event in model.events.iter().take(3) {
        println!("  {}/{}/ = {}", event.pmu, event.name, event.terms);
    }
    ExitCode::SUCCESS
}
