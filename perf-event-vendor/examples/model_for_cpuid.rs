//! The model perf chooses for a CPU id, and what its table holds.
//!
//! ```sh
//! cargo run --release -p perf-event-vendor --example model_for_cpuid               # this CPU
//! cargo run --release -p perf-event-vendor --example model_for_cpuid -- GenuineIntel-6-55-4
//! cargo run --release -p perf-event-vendor --features linux-6-1 --example model_for_cpuid -- \
//!     --kernel 6.1 GenuineIntel-6-55-4                                              # perf 6.1's
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

/// `[--kernel X.Y] [CPUID]`: the kernel's tables (the default: the
/// newest) and the CPU id (the default: this machine's).
fn args() -> Result<(&'static perf_event_vendor::Tables, Option<String>), String> {
    let mut args = std::env::args().skip(1);
    let mut tables = &perf_event_vendor::kernels()[0];
    let mut cpuid = None;
    while let Some(arg) = args.next() {
        if arg == "--kernel" {
            let kernel = args.next().ok_or("--kernel needs X.Y")?;
            tables = perf_event_vendor::tables(&kernel).ok_or_else(|| {
                let embedded: Vec<_> = perf_event_vendor::kernels()
                    .iter()
                    .map(|t| t.kernel())
                    .collect();
                format!(
                    "no tables of Linux {kernel} here (embedded: {}; 6.1 needs feature linux-6-1)",
                    embedded.join(", ")
                )
            })?;
        } else {
            cpuid = Some(arg);
        }
    }
    Ok((tables, cpuid))
}

fn main() -> ExitCode {
    let Some(arch) = perf_event_vendor::ARCH else {
        eprintln!("perf has no vendor tables for this architecture");
        return ExitCode::FAILURE;
    };
    let (tables, cpuid) = match args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("usage: model_for_cpuid [--kernel X.Y] [CPUID]: {e}");
            return ExitCode::FAILURE;
        }
    };
    let Some(cpuid) = cpuid.or_else(this_cpuid) else {
        eprintln!("usage: model_for_cpuid [--kernel X.Y] CPUID (this machine's could not be read)");
        return ExitCode::FAILURE;
    };
    let kernel = tables.kernel();
    let Some(model) = tables.model_for_cpuid(&cpuid) else {
        println!("{cpuid}: no model in perf {kernel}'s {arch} mapfile");
        return ExitCode::SUCCESS;
    };
    println!(
        "{cpuid}: perf {kernel}'s {arch}/{}, {} events, {} metrics",
        model.name,
        model.events.len(),
        model.metrics.len()
    );
    for event in model.events.iter().take(3) {
        println!("  {}/{}/ = {}", event.pmu, event.name, event.terms);
    }
    ExitCode::SUCCESS
}
