//! A mini `perf list` of the vendor events (needs feature `vendor`): the
//! events perf's tables give this machine's PMUs (the running CPU's table,
//! or `PERF_CPUID`'s), per topic, as perf 6.1's `perf list` prints them.
//!
//! ```sh
//! cargo run -p perf-event-host --features vendor --example list -- [--details] [--deprecated]
//! PERF_CPUID=GenuineIntel-6-55-4 cargo run -p perf-event-host --features vendor --example list
//! ```
//!
//! `--details` adds each event's encoding (`cpu/event=0xc0,period=0x1e8483/`),
//! `--deprecated` shows the events perf hides as deprecated. The generalized,
//! software and tracepoint events and the metrics that perf lists too are
//! not listed here.

use perf_event_host::sysfs::{Alias, TermValue};
use perf_event_host::vendor::{VendorAlias, VendorSystem};

/// The options, as perf list 6.1 spells them.
struct Options {
    details: bool,
    deprecated: bool,
}

fn options() -> Options {
    let mut opts = Options {
        details: false,
        deprecated: false,
    };
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--details" => opts.details = true,
            "--deprecated" => opts.deprecated = true,
            _ => {
                eprintln!("usage: list [--details] [--deprecated]\nunknown option {arg}");
                std::process::exit(129);
            }
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

fn main() {
    let opts = options();
    let system = VendorSystem::discover().unwrap_or_else(|e| {
        eprintln!("list: {e}");
        std::process::exit(1);
    });
    let mut topic = None;
    for event in sorted(&system, &opts) {
        if topic != Some(event.event.topic) {
            if topic.is_some() {
                println!();
            }
            println!("{}:", event.event.topic);
            topic = Some(event.event.topic);
        }
        print_event(&system, event, &opts);
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
