//! The report of the event-set mode: the counts of each aggregation key
//! (CPU, thread, core, die, socket, node or the whole) as the lines perf
//! 6.1 prints, the deltas of `-I` intervals, and the report once counting
//! ended.

use crate::args::Options;
use crate::metrics::Metrics;
use crate::output;
use crate::run::{Outcome, Run, Wanted};
use crate::set_mode::{fail, SetOptions};
use perf_event_host::set::{
    aggregate, aggregate_topology, AggrKey, AggrMode, AggrValue, Aggregate, EventSet, HybridNames,
    PlacedCounts, TopologyLevel,
};
use perf_event_host::sysfs::Topology;
use std::collections::HashMap;
use std::time::Duration;

/// One [`Outcome`] per event for each key of `lines`, keys in order. An
/// event supported nowhere has one placeholder line: it shows under every
/// key as `<not supported>`.
pub fn outcomes_by_key(n: usize, lines: &[Aggregate]) -> Vec<(AggrKey, Vec<Outcome>)> {
    let unsupported = |l: &Aggregate| matches!(l.value, AggrValue::NotSupported(_));
    let mut keys: Vec<AggrKey> = lines
        .iter()
        .filter(|l| !unsupported(l))
        .map(|l| l.key.clone())
        .collect();
    keys.sort();
    keys.dedup();
    if keys.is_empty() {
        keys.push(AggrKey::Total);
    }
    let mut out: Vec<(AggrKey, Vec<Outcome>)> = keys
        .into_iter()
        .map(|k| (k, vec![Outcome::NotCounted; n]))
        .collect();
    for line in lines {
        for (key, outcomes) in &mut out {
            if unsupported(line) {
                outcomes[line.index] = Outcome::NotSupported;
            } else if *key == line.key {
                outcomes[line.index] = match line.value {
                    AggrValue::Counted(_) => Outcome::Counted(line.counts),
                    _ => Outcome::NotCounted,
                };
            }
        }
    }
    out
}

/// The event lines of the report's table (or CSV) for one key.
fn table_lines(
    events: &[Wanted],
    outcomes: Vec<Outcome>,
    elapsed: Duration,
    csv: Option<&str>,
) -> Vec<String> {
    let run = counted(outcomes, elapsed);
    let text = output::report(
        &[String::new()],
        csv,
        events,
        &crate::metrics::Metrics::default(),
        std::slice::from_ref(&run),
    );
    let lines = text.lines().map(str::to_owned);
    if csv.is_some() {
        lines.collect()
    } else {
        // Skip the blank line, the header and the blank line after it.
        lines.skip(3).take_while(|l| !l.is_empty()).collect()
    }
}

/// The command name of every thread the set has fds for, read at open
/// (a thread may be gone by the time the report is printed).
pub fn read_comms(set: &EventSet) -> HashMap<i32, String> {
    let mut names = HashMap::new();
    for (placement, _) in set.fds() {
        names.entry(placement.tid).or_insert_with(|| {
            std::fs::read_to_string(format!("/proc/{}/comm", placement.tid))
                .map(|c| c.trim_end().to_owned())
                .unwrap_or_else(|_| "?".to_owned())
        });
    }
    names
}

/// perf's prefix for a key: `CPU0 ` (-A), `comm-tid ` (--per-thread).
pub fn key_prefix(
    key: &AggrKey,
    csv: Option<&str>,
    comms: &HashMap<i32, String>,
    nr: usize,
) -> String {
    let sep = csv.unwrap_or(" ");
    // perf 6.1's aggr_printout: the key, then (topology) how many CPUs.
    let nr = if csv.is_some() {
        format!("{nr}{sep}")
    } else {
        format!("{nr:>4}{sep}")
    };
    let w = |width: usize, v: i32| {
        if csv.is_some() {
            v.to_string()
        } else {
            format!("{v:<width$}")
        }
    };
    match key {
        AggrKey::Socket(s) => format!("S{}{sep}{nr}", w(5, *s)),
        AggrKey::Die { socket, die } => format!("S{socket}-D{}{sep}{nr}", w(8, *die)),
        AggrKey::Core { socket, die, core } => {
            format!("S{socket}-D{die}-C{}{sep}{nr}", w(8, *core))
        }
        AggrKey::Node(n) => format!("N{}{sep}{nr}", w(5, *n)),
        AggrKey::Cpu(c) if csv.is_some() => format!("CPU{c}{sep}"),
        AggrKey::Cpu(c) => format!("CPU{c:<7}{sep}"),
        AggrKey::Thread(t) => {
            let comm = comms.get(t).map_or("?", String::as_str);
            if csv.is_some() {
                format!("{comm}-{t}{sep}")
            } else {
                format!("{comm:>16}-{t:<8}{sep}")
            }
        }
        AggrKey::CoreType(p) => format!("{p}{sep}"),
        AggrKey::Total => String::new(),
        other => format!("{other:?}{sep}"),
    }
}

/// The aggregation the options ask for.
pub fn mode(s: &SetOptions) -> AggrMode {
    if s.no_aggr {
        AggrMode::PerCpu
    } else if s.per_thread {
        AggrMode::PerThread
    } else {
        AggrMode::Total
    }
}

/// How many of the counted CPUs the topology key `key` holds (0 without
/// a topology level).
fn cpus_of_key(
    counts: &[PlacedCounts],
    topology: Option<&(TopologyLevel, Topology)>,
    key: &AggrKey,
) -> usize {
    let Some((level, topo)) = topology else {
        return 0;
    };
    let mut cpus: Vec<i32> = counts
        .iter()
        .filter(|c| level.key(topo, c.placement.cpu).as_ref() == Some(key))
        .map(|c| c.placement.cpu)
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus.len()
}

/// Lines for `counts`, each key's lines prefixed (and by `stamp`).
pub fn lines_for(
    set: &EventSet,
    comms: &HashMap<i32, String>,
    (events, metrics): (&[Wanted], &Metrics),
    counts: &[PlacedCounts],
    opts: &Options,
    (elapsed, walltime): (Duration, Duration),
    stamp: &str,
) -> String {
    let topology = opts.set.per.map(|level| {
        let topo = Topology::read().unwrap_or_else(|e| fail(&e.to_string()));
        (level, topo)
    });
    let lines = match &topology {
        Some((level, topo)) => {
            aggregate_topology(set.events(), counts, *level, topo, HybridNames::Keep)
        }
        None => aggregate(set.events(), counts, mode(&opts.set), HybridNames::Keep),
    };
    let csv = opts.csv.as_deref();
    if let (false, Some(topology)) = (metrics.is_empty(), &topology) {
        let keyed = KeyedLines {
            lines: &lines,
            counts,
            topology,
            comms,
        };
        return per_key_metrics((events, metrics), &keyed, csv, (elapsed, walltime), stamp);
    }
    if !metrics.is_empty() && topology.is_none() && mode(&opts.set) == AggrMode::PerCpu {
        return per_cpu_metrics((events, metrics), &lines, csv, (elapsed, walltime), stamp);
    }
    let keyed: Vec<(String, Vec<Outcome>, Vec<String>)> = outcomes_by_key(events.len(), &lines)
        .into_iter()
        .map(|(key, outcomes)| {
            let text = table_lines(events, outcomes.clone(), walltime, csv);
            let nr = cpus_of_key(counts, topology.as_ref(), &key);
            (key_prefix(&key, csv, comms, nr), outcomes, text)
        })
        .collect();
    // Per topology key perf keeps each key's lines together; so do we
    // when a key's table is not one line per event.
    if topology.is_some() || keyed.iter().any(|(_, _, text)| text.len() != events.len()) {
        let mut out = String::new();
        for (prefix, _, text) in &keyed {
            for line in text {
                out.push_str(&format!("{stamp}{prefix}{line}\n"));
            }
        }
        return out;
    }
    event_by_event(events.len(), &keyed, mode(&opts.set), stamp)
}

/// The aggregated lines of one report with what their keys are made of:
/// the counts per placement, the topology level, the threads' names.
struct KeyedLines<'a> {
    lines: &'a [Aggregate],
    counts: &'a [PlacedCounts],
    topology: &'a (TopologyLevel, Topology),
    comms: &'a HashMap<i32, String>,
}

/// `--per-core`, `--per-socket`, ... with `-M`: each key's events and
/// metrics together, as perf 6.1 prints them.
fn per_key_metrics(
    (events, metrics): (&[Wanted], &Metrics),
    keyed: &KeyedLines,
    csv: Option<&str>,
    (elapsed, walltime): (Duration, Duration),
    stamp: &str,
) -> String {
    let (level, topo) = keyed.topology;
    // perf 6.1's tool events have one CPU, the first counted.
    let first = keyed.counts.iter().map(|c| c.placement.cpu).min();
    let tools_key = first.and_then(|cpu| level.key(topo, cpu));
    let mut out = String::new();
    for (key, outcomes) in outcomes_by_key(events.len(), keyed.lines) {
        let (all, mut outcomes) = metrics.report_events(events, outcomes, elapsed);
        let holds = tools_key.as_ref() == Some(&key);
        for (i, o) in outcomes.iter_mut().enumerate() {
            if all[i].tool && !holds {
                *o = Outcome::NotCounted;
            }
        }
        let run = counted(outcomes, walltime);
        let texts = output::event_texts(csv, &all, metrics, &run);
        for (e, text) in texts.iter().enumerate() {
            let n = if all[e].tool {
                usize::from(holds)
            } else {
                cpus_of_key(keyed.counts, Some(keyed.topology), &key)
            };
            let prefix = key_prefix(&key, csv, keyed.comms, n);
            for (j, line) in text.lines().enumerate() {
                // A metric's own line: in CSV two empty fields more
                // than the whole's (perf 6.1: one per node).
                let pad = match (csv, &key) {
                    (Some(sep), AggrKey::Node(_)) if j > 0 => sep.to_owned(),
                    (Some(sep), _) if j > 0 => sep.repeat(2),
                    _ => String::new(),
                };
                out.push_str(&format!("{stamp}{prefix}{pad}{line}\n"));
            }
        }
    }
    out
}

/// perf 6.1 prints event by event, each event's lines by key (CPU order
/// for -A; for --per-thread the largest count first).
fn event_by_event(
    events: usize,
    keyed: &[(String, Vec<Outcome>, Vec<String>)],
    mode: AggrMode,
    stamp: &str,
) -> String {
    let mut out = String::new();
    for e in 0..events {
        let mut order: Vec<usize> = (0..keyed.len()).collect();
        if mode == AggrMode::PerThread {
            let value = |k: usize| match keyed[k].1[e] {
                Outcome::Counted(c) => c.value,
                _ => 0,
            };
            order.sort_by_key(|&k| std::cmp::Reverse(value(k)));
        }
        for k in order {
            let (prefix, _, text) = &keyed[k];
            out.push_str(&format!("{stamp}{prefix}{}\n", text[e]));
        }
    }
    out
}

/// `-A` with `-M`: as perf 6.1 prints it, event by event, each event's
/// line and its metrics' lines per CPU, every line prefixed with the CPU
/// (a metric line's `#` one column right of the event's, in CSV one
/// empty field more than the whole's); each CPU's metrics from its
/// counts. The tool events (`duration_time`) are printed once, on the
/// first CPU's lines (perf 6.1's tool events have one CPU); every CPU's
/// metrics read them (`duration_time` as `walltime`, perf's wall-clock
/// stats).
fn per_cpu_metrics(
    (events, metrics): (&[Wanted], &Metrics),
    lines: &[Aggregate],
    csv: Option<&str>,
    (elapsed, walltime): (Duration, Duration),
    stamp: &str,
) -> String {
    let empty = HashMap::new();
    let keyed: Vec<(String, Vec<Wanted>, Vec<String>)> = outcomes_by_key(events.len(), lines)
        .into_iter()
        .map(|(key, outcomes)| {
            let (all, outcomes) = metrics.report_events(events, outcomes, elapsed);
            let run = counted(outcomes, walltime);
            let texts = output::event_texts(csv, &all, metrics, &run);
            (key_prefix(&key, csv, &empty, 0), all, texts)
        })
        .collect();
    let Some((_, all, _)) = keyed.first() else {
        return String::new();
    };
    let more = match csv {
        Some(sep) => sep.to_owned(),
        None => " ".repeat(8),
    };
    let mut out = String::new();
    for e in 0..all.len() {
        for (k, (prefix, all, texts)) in keyed.iter().enumerate() {
            if k > 0 && all[e].tool {
                continue;
            }
            for (n, line) in texts[e].lines().enumerate() {
                let pad = if n == 0 { "" } else { more.as_str() };
                out.push_str(&format!("{stamp}{prefix}{pad}{line}\n"));
            }
        }
    }
    out
}

/// `now - before`, per fd (the set reads its fds in the same order).
pub fn delta(now: &[PlacedCounts], before: &[PlacedCounts]) -> Vec<PlacedCounts> {
    now.iter()
        .enumerate()
        .map(|(i, c)| match before.get(i) {
            Some(b) => PlacedCounts {
                counts: b.counts.between(&c.counts),
                ..*c
            },
            None => *c,
        })
        .collect()
}

/// The report once counting ended, `label` naming the target in its
/// header: perf stat's own table (or CSV) of the whole, or the lines of
/// each key (`-A`, `--per-thread`, `--per-core`, ...).
pub fn summary(
    set: &mut EventSet,
    events: &[Wanted],
    metrics: &Metrics,
    comms: &HashMap<i32, String>,
    opts: &Options,
    label: &str,
    elapsed: Duration,
) -> String {
    let counts = set
        .read_all()
        .unwrap_or_else(|e| fail(&e.to_string()))
        .to_vec();
    if mode(&opts.set) == AggrMode::Total && opts.set.per.is_none() {
        let csv = opts.csv.as_deref();
        return total(set, events, metrics, &counts, csv, label, elapsed);
    }
    let lines = lines_for(
        set,
        comms,
        (events, metrics),
        &counts,
        opts,
        (elapsed, elapsed),
        "",
    );
    if opts.csv.is_some() {
        lines
    } else {
        format!(
            "\n Performance counter stats for {label}:\n\n{lines}\n {:17.9} seconds time \
             elapsed\n\n",
            elapsed.as_secs_f64()
        )
    }
}

/// The whole, as perf stat prints it for a command (`output::report`),
/// its header naming `label`, without the user and sys times.
fn total(
    set: &EventSet,
    events: &[Wanted],
    metrics: &Metrics,
    counts: &[PlacedCounts],
    csv: Option<&str>,
    label: &str,
    elapsed: Duration,
) -> String {
    let lines = aggregate(set.events(), counts, AggrMode::Total, HybridNames::Keep);
    let outcomes = outcomes_by_key(events.len(), &lines).remove(0).1;
    // With `-M`: the events as the metrics index them, tool events counted.
    let (events, outcomes) = metrics.report_events(events, outcomes, elapsed);
    let run = counted(outcomes, elapsed);
    let text = output::report(
        &["\u{0}".to_owned()],
        csv,
        &events,
        metrics,
        std::slice::from_ref(&run),
    );
    // perf's header names the target; no user/sys times without a
    // command of our own.
    text.replace("'\u{0}'", label)
        .lines()
        .filter(|l| !l.ends_with("seconds user") && !l.ends_with("seconds sys"))
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .trim_end()
        .to_owned()
        // CSV ends with its last line; the table with a blank one.
        + if csv.is_some() { "\n" } else { "\n\n" }
}

/// `-I` with `-M`: one interval's lines of the whole (perf 6.1's
/// `print_counter_aggr` with its metrics), each prefixed with `stamp`;
/// the tool events counted for the interval (`duration_time`: `elapsed`,
/// the interval's length, as perf 6.1 reads it per interval) and each
/// metric computed from the interval's counts, its `duration_time` (and
/// the clocks' `CPUs utilized`) from `walltime`: perf 6.1's wall-clock
/// stats, which `process_interval` sets to the `-I` period each interval
/// (the last, shorter one too).
pub fn interval_total(
    set: &EventSet,
    events: &[Wanted],
    metrics: &Metrics,
    counts: &[PlacedCounts],
    csv: Option<&str>,
    (elapsed, walltime): (Duration, Duration),
    stamp: &str,
) -> String {
    let lines = aggregate(set.events(), counts, AggrMode::Total, HybridNames::Keep);
    let outcomes = outcomes_by_key(events.len(), &lines).remove(0).1;
    let (events, outcomes) = metrics.report_events(events, outcomes, elapsed);
    let run = counted(outcomes, walltime);
    let text = output::report(
        &[String::new()],
        csv,
        &events,
        metrics,
        std::slice::from_ref(&run),
    );
    let lines: Vec<&str> = if csv.is_some() {
        text.lines().collect()
    } else {
        // Skip the blank line, the header and the blank line after it.
        text.lines().skip(3).take_while(|l| !l.is_empty()).collect()
    };
    lines.iter().map(|l| format!("{stamp}{l}\n")).collect()
}

/// The report of counts alone: no command's status or CPU times.
pub fn counted(outcomes: Vec<Outcome>, elapsed: Duration) -> Run {
    Run {
        outcomes,
        elapsed,
        status: 0,
        user: Duration::ZERO,
        sys: Duration::ZERO,
    }
}
