//! A mini `perf list` of the vendor events (needs feature `vendor`): the
//! events perf's tables give this machine's PMUs (the running CPU's table,
//! or `PERF_CPUID`'s), per topic, as perf 6.1's `perf list` prints them.
//!
//! ```sh
//! cargo run -p perf-event-host --features vendor --example list -- [--details] [--deprecated] [metric|metricgroup]
//! PERF_CPUID=GenuineIntel-6-55-4 cargo run -p perf-event-host --features vendor --example list
//! ```
//!
//! `--details` adds each event's encoding (`cpu/event=0xc0,period=0x1e8483/`)
//! and each metric's expression, `--deprecated` shows the events perf hides
//! as deprecated. With no argument the events are followed by the metric
//! groups with their metrics; `metric` lists the metrics alone, `metricgroup`
//! the groups' names, as `perf list metric` and `perf list metricgroup`
//! (perf 6.1's `metricgroup__print`). `--vendor-kernel X.Y` (not perf's)
//! takes the events and metrics from the tables of another embedded kernel
//! (`perf_event_vendor::kernels()`; 6.1's with feature
//! `perf-event-vendor/linux-6-1`). The generalized, software and
//! tracepoint events that perf lists too are not listed here.

use perf_event_host::parse::System;
use perf_event_host::sysfs::{Alias, TermValue};
use perf_event_host::vendor::{VendorAlias, VendorSystem};
use perf_event_vendor::{Model, Tables};
use std::collections::{BTreeMap, BTreeSet};

/// The options, as perf list 6.1 spells them.
struct Options {
    details: bool,
    deprecated: bool,
    /// What to list: everything, `metric` or `metricgroup`.
    only: Only,
    /// `--vendor-kernel`: the tables the metrics come from.
    tables: &'static Tables,
}

/// `perf list`'s event type argument, of those this example knows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Only {
    All,
    Metrics,
    MetricGroups,
}

fn usage(problem: &str) -> ! {
    eprintln!(
        "usage: list [--details] [--deprecated] [--vendor-kernel X.Y] [metric|metricgroup]\n{problem}"
    );
    std::process::exit(129);
}

fn options() -> Options {
    let mut opts = Options {
        details: false,
        deprecated: false,
        only: Only::All,
        tables: &perf_event_vendor::kernels()[0],
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--details" => opts.details = true,
            "--deprecated" => opts.deprecated = true,
            "--vendor-kernel" => {
                let kernel = args
                    .next()
                    .unwrap_or_else(|| usage("--vendor-kernel needs X.Y"));
                opts.tables = perf_event_vendor::tables(&kernel).unwrap_or_else(|| {
                    let have: Vec<&str> = perf_event_vendor::kernels()
                        .iter()
                        .map(|t| t.kernel())
                        .collect();
                    usage(&format!(
                        "no tables of kernel {kernel} in this build (it has {}; 6.1's need \
                         feature perf-event-vendor/linux-6-1)",
                        have.join(", ")
                    ))
                });
            }
            "metric" | "metrics" => opts.only = Only::Metrics,
            "metricgroup" | "metricgroups" => opts.only = Only::MetricGroups,
            _ => usage(&format!("unknown option {arg}")),
        }
    }
    opts
}

/// The column perf 6.1 wraps descriptions before when its output is not a
/// terminal (measured against `perf list`: 78).
const WRAP: usize = 78;

/// perf 6.1's `wordwrap`: the words of `text` from column `start`, a new
/// line indented to `start` before a word that would reach `max`.
fn wordwrap(text: &str, start: usize, max: usize) -> String {
    let mut out = String::new();
    let mut column = start;
    for word in text.split([' ', '\t', '\n']).filter(|w| !w.is_empty()) {
        if column + word.len() >= max && column > start {
            out.push('\n');
            out.push_str(&" ".repeat(start));
            column = start;
        }
        if column > start {
            out.push(' ');
            column += 1;
        }
        out.push_str(word);
        column += word.len();
    }
    out
}

/// An alias's terms as perf 6.1 prints them: `name=%#x` for numbers (0 as
/// `0`), names alone otherwise. perf 6.1's `%#x` shows the low 32 bits of
/// a value; this prints it whole.
fn encoding(alias: &Alias) -> String {
    let terms: Vec<String> = alias
        .terms()
        .filter_map(Result::ok)
        .map(|t| match t.value {
            TermValue::Number(0) => format!("{}=0", t.name),
            TermValue::Number(n) => format!("{}={n:#x}", t.name),
            _ => t.name.to_owned(),
        })
        .collect();
    terms.join(",")
}

/// The events to list, in perf 6.1's order (`cmp_sevent`: topic, core
/// PMUs first, name), one per name and table PMU.
fn sorted<'a>(system: &'a VendorSystem, opts: &Options) -> Vec<&'a VendorAlias> {
    let core = |pmu: &str| {
        let pmu = system.system().pmus.get(pmu);
        pmu.is_some_and(|p| p.name() == "cpu" || p.cpus().is_some())
    };
    let mut events: Vec<&VendorAlias> = system
        .aliases()
        .iter()
        .filter(|a| opts.deprecated || !a.event.deprecated)
        .collect();
    events.sort_by(|a, b| {
        (a.event.topic, !core(&a.pmu), a.event.name).cmp(&(
            b.event.topic,
            !core(&b.pmu),
            b.event.name,
        ))
    });
    // One line for the numbered instances of an uncore PMU (the first).
    events.dedup_by(|b, a| a.event.name == b.event.name && a.event.pmu == b.event.pmu);
    events
}

/// One event: its name, its description in brackets, with `--details` its
/// encoding.
fn print_event(system: &VendorSystem, event: &VendorAlias, opts: &Options) {
    println!("  {:<50}", event.event.name);
    if let Some(desc) = event.event.desc {
        // The events of a named PMU say which (perf list's "Unit:").
        let desc = match event.event.pmu {
            "default_core" => desc.to_owned(),
            pmu if desc.ends_with('.') => format!("{desc} Unit: {pmu}"),
            pmu => format!("{desc}. Unit: {pmu}"),
        };
        println!("       [{}]", wordwrap(&desc, 8, WRAP));
    }
    if opts.details {
        let alias = system
            .system()
            .pmus
            .get(&event.pmu)
            .and_then(|p| p.alias(event.event.name));
        if let Some(alias) = alias {
            println!("        {}/{}/ ", event.pmu, encoding(alias));
        }
    }
}

/// The metrics of `model` as perf 6.1's `metricgroup__print` lists them:
/// each metric as `name\n       [desc]` (and `\n       [expr]` with
/// `--details`), once under each of its groups (`;`-separated, an empty
/// one or none is `No_group`), groups and entries in `strcmp` order and
/// without repeats (perf's rblist and strlist).
fn print_metrics(model: &Model, opts: &Options) {
    let mut groups: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for metric in &model.metrics {
        // A JSON entry with an EventName and a MetricName but no group is
        // listed as an event only (6.1's tables hold it as both; the event
        // is the one of the same name).
        if metric.groups.is_none() && model.events_named(metric.name).next().is_some() {
            continue;
        }
        // perf 6.1 prints a missing description as glibc prints NULL.
        let mut entry = format!(
            "{}\n{:>8}{}]",
            metric.name,
            "[",
            metric.desc.unwrap_or("(null)")
        );
        if opts.details {
            entry = format!("{entry}\n{:>8}{}]", "[", metric.expr);
        }
        for group in metric.groups.unwrap_or("").split(';') {
            let group = group.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
            let group = if group.is_empty() { "No_group" } else { group };
            groups.entry(group).or_default().insert(entry.clone());
        }
    }
    match opts.only {
        Only::Metrics => {
            println!("\nMetrics:\n");
            let all: BTreeSet<&String> = groups.values().flatten().collect();
            for entry in all {
                println!("  {entry}");
            }
        }
        Only::MetricGroups => {
            println!("\nMetric Groups:\n");
            for group in groups.keys() {
                println!("{group}");
            }
        }
        Only::All => {
            println!("\nMetric Groups:\n");
            for (group, entries) in &groups {
                println!("{group}:");
                for entry in entries {
                    println!("  {entry}");
                }
            }
        }
    }
}

fn main() {
    let opts = options();
    let system = System::discover()
        .map_err(|e| e.to_string())
        .and_then(|system| {
            VendorSystem::with_kernel_tables(system, opts.tables, None).map_err(|e| e.to_string())
        })
        .unwrap_or_else(|e| {
            eprintln!("list: {e}");
            std::process::exit(1);
        });
    if opts.only == Only::All {
        print_events(&system, &opts);
    }
    // perf 6.1 takes the metrics of one table, the CPU's (`PERF_CPUID`'s).
    let cpuid = system.tables().iter().find_map(|t| t.cpuid.clone());
    match cpuid
        .as_deref()
        .and_then(|id| opts.tables.model_for_cpuid(id))
    {
        Some(model) => print_metrics(model, &opts),
        None if opts.only == Only::All => {}
        None => eprintln!(
            "list: no metrics: no table of Linux {}'s for CPU id {}",
            opts.tables.kernel(),
            cpuid.as_deref().unwrap_or("(none)")
        ),
    }
}

/// The vendor events, per topic.
fn print_events(system: &VendorSystem, opts: &Options) {
    let mut topic = None;
    for event in sorted(system, opts) {
        if topic != Some(event.event.topic) {
            if topic.is_some() {
                println!();
            }
            println!("{}:", event.event.topic);
            topic = Some(event.event.topic);
        }
        print_event(system, event, opts);
    }
    if topic.is_none() {
        for table in system.tables() {
            eprintln!(
                "{}: CPU id {}, {}",
                table.pmu,
                table.cpuid.as_deref().unwrap_or("none"),
                table.model.unwrap_or("no vendor table")
            );
        }
    }
}
