//! `-M METRIC_OR_GROUP`: perf 6.1's metrics (feature `vendor`). The
//! selection is perf-event-vendor's (`MetricSelection`: the metrics, their
//! event lists with `metric-id=` terms, tool events such as
//! `duration_time`), over the tables of the perf compared with
//! (`--vendor-kernel`, ours), the literals (`#smt_on`, `#num_cpus`, ...)
//! this machine's (`VendorSystem::set_literals`). Each list is parsed with
//! the vendor aliases and appended to the events after `-e`'s; each event
//! keeps its id. After the run each metric is computed from its list's
//! counts (perf's `prepare_metric`: the count as scaled for multiplexing,
//! not by the event's unit; the tool events in seconds) and printed on the
//! line of the first of its list's events it reads (`generic_metric`;
//! the text as `metric_format.rs` writes it).

use crate::metric_format::Printed;
#[cfg(feature = "vendor")]
use crate::metric_format::{format_metric, tool_scale};
use crate::run::{Outcome, Wanted};

/// The metrics of a run (none without `-M`).
#[derive(Default)]
pub struct Metrics {
    #[cfg(feature = "vendor")]
    selected: Vec<Selected>,
    /// The machine's literals (`#smt_on`, ...).
    #[cfg(feature = "vendor")]
    literals: perf_event_vendor::expr::ExprInputs,
    /// The event-set modes: where the tool events sit among the events
    /// (their index and name), which the set does not open.
    tools: Vec<(usize, String)>,
}

#[cfg(feature = "vendor")]
struct Selected {
    metric: perf_event_vendor::metricgroup::SelectedMetric,
    /// The events of its list: indices into the run's events.
    events: std::ops::Range<usize>,
    /// The ids of its list, one per event of `events`.
    ids: Vec<String>,
    /// The event whose line it is printed on (none for a metric that
    /// reads no event).
    line: Option<usize>,
}

#[cfg(feature = "vendor")]
pub use with_vendor::select;

/// `-M` (or `--vendor-kernel`) without the vendor tables: built without
/// feature `vendor`, a clear error (status 129); with it, when the vendor events could not be
/// read (already said), no metrics.
pub fn unavailable() -> Metrics {
    if cfg!(not(feature = "vendor")) {
        eprintln!(
            "-M and --vendor-kernel need perf's tables: build the stat example with `--features vendor` \
             (`--features vendor-6-1` for perf 6.1's, with `--vendor-kernel 6.1`)"
        );
        std::process::exit(129)
    }
    Metrics::default()
}

impl Metrics {
    /// For the event-set modes (`-a`, `-C`, `-p`, `-t`): the metrics over
    /// `wanted` (tool events included) when the set opened each other
    /// event once (`opened` of them; a hybrid machine's events expanded per
    /// core PMU are not served: no metrics then, said so).
    pub fn with_events(mut self, wanted: &[Wanted], opened: usize) -> Metrics {
        if self.is_empty() {
            return self;
        }
        self.tools = wanted
            .iter()
            .enumerate()
            .filter(|(_, w)| w.tool)
            .map(|(i, w)| (i, w.name.clone()))
            .collect();
        if wanted.len() - self.tools.len() != opened {
            eprintln!(
                "metrics: the events were opened per core PMU; this example computes -M's \
                 metrics only where each event opens once"
            );
            return Metrics::default();
        }
        self
    }

    /// Whether there are no metrics.
    pub fn is_empty(&self) -> bool {
        #[cfg(feature = "vendor")]
        {
            self.selected.is_empty()
        }
        #[cfg(not(feature = "vendor"))]
        true
    }

    /// The event-set modes' report events and outcomes with the tool
    /// events put back where the metrics index them, counted as perf 6.1
    /// counts them (`duration_time`: the elapsed ns; `user_time` and
    /// `system_time`: 0, no command of this tool's measured).
    pub fn report_events(
        &self,
        events: &[Wanted],
        outcomes: Vec<Outcome>,
        elapsed: std::time::Duration,
    ) -> (Vec<Wanted>, Vec<Outcome>) {
        let (mut all, mut counted) = (events.to_vec(), outcomes);
        for (i, name) in &self.tools {
            let value = if name == "duration_time" {
                elapsed.as_nanos() as u64
            } else {
                0
            };
            all.insert(*i, Wanted::tool(name));
            counted.insert(
                *i,
                Outcome::Counted(perf_event_core::read_format::Counts {
                    value,
                    enabled: Some(value),
                    running: Some(value),
                }),
            );
        }
        (all, counted)
    }

    /// The metrics printed on event `i`'s line, in perf 6.1's order, computed
    /// from `value` (each event's count: `None` when it was not counted).
    pub fn for_event(&self, i: usize, value: &dyn Fn(usize) -> Option<f64>) -> Vec<Printed> {
        #[cfg(feature = "vendor")]
        {
            // perf 6.1 adds each metric at the head of its event's list
            // (`list_add`): the last selected prints first.
            self.selected
                .iter()
                .rev()
                .filter(|s| s.line == Some(i))
                .map(|s| s.print(&self.literals, value))
                .collect()
        }
        #[cfg(not(feature = "vendor"))]
        {
            let _ = (i, value);
            Vec::new()
        }
    }
}

#[cfg(feature = "vendor")]
impl Selected {
    fn print(
        &self,
        literals: &perf_event_vendor::expr::ExprInputs,
        value: &dyn Fn(usize) -> Option<f64>,
    ) -> Printed {
        use perf_event_vendor::metricgroup::ScaleUnit;
        let table = self.metric.metric();
        let mut inputs = literals.clone();
        let mut complete = true;
        for (j, id) in self.events.clone().zip(&self.ids) {
            match value(j) {
                Some(v) => {
                    inputs.insert(id.clone(), v * tool_scale(id).unwrap_or(1.0));
                }
                None => complete = false,
            }
        }
        let reading = complete.then(|| self.metric.evaluate(&inputs));
        // perf 6.1 scales by the ScaleUnit only when the unit parses.
        let unit = table.unit.map(ScaleUnit::parse);
        let value = reading.and_then(|r| r.raw).map(|raw| match &unit {
            Some(u) => raw * u.scale,
            None => raw,
        });
        format_metric(
            table.name,
            unit.as_ref()
                .map(|u| (u.unit.as_str(), table.expr.contains('?'))),
            self.metric.runtime().unwrap_or(0),
            value,
        )
    }
}

#[cfg(feature = "vendor")]
mod with_vendor {
    use super::{Metrics, Selected};
    use crate::args::Options;
    use crate::run::{self, Wanted};
    use perf_event_host::sysfs::CpuList;
    use perf_event_host::vendor::{LiteralMachine, VendorSystem};
    use perf_event_vendor::expr::ExprInputs;
    use perf_event_vendor::metricgroup::{MetricOptions, MetricSelection, TOOL_EVENTS};

    /// perf stat's `-M`: the metrics of `opts.metrics` on `vendor`'s core
    /// PMU table, their events appended to `events`. perf 6.1 prints
    /// ``Cannot find metric or group `X'`` for an unknown name and goes
    /// on without metrics (its default events when there is no `-e`).
    pub fn select(opts: &Options, vendor: &VendorSystem, events: &mut Vec<Wanted>) -> Metrics {
        let Some(list) = opts.metrics.as_deref() else {
            return Metrics::default();
        };
        let machine = literals(opts, vendor);
        let Some(model) = vendor.core_model() else {
            eprintln!("Cannot find metric or group `{list}'");
            return no_metrics(opts, vendor, events);
        };
        let options = MetricOptions::new()
            .no_group(opts.metric_no_group)
            .no_merge(opts.metric_no_merge);
        let selection = match MetricSelection::select(model, list, &machine, &options) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{e}");
                return no_metrics(opts, vendor, events);
            }
        };
        let Some(ranges) = push_lists(opts, vendor, &selection, events) else {
            return no_metrics(opts, vendor, events);
        };
        let selected = selection
            .metrics()
            .iter()
            .map(|m| {
                let events = ranges[m.event_list()].clone();
                let ids: Vec<String> = selection.event_lists()[m.event_list()].ids().to_vec();
                // perf 6.1 attaches a metric to the first of its events: one
                // that reads none (`#smt_on` folded them away, in a list
                // shared with others) is printed nowhere.
                let line = events
                    .clone()
                    .zip(&ids)
                    .find(|(_, id)| m.ids().contains(id))
                    .map(|(j, _)| j);
                Selected {
                    metric: m.clone(),
                    events,
                    ids,
                    line,
                }
            })
            .collect();
        Metrics {
            selected,
            literals: machine,
            tools: Vec::new(),
        }
    }

    /// The machine's literals for this run (perf's `#core_wide`:
    /// system-wide with `-a` or `-C`, the `-C` list).
    fn literals(opts: &Options, vendor: &VendorSystem) -> ExprInputs {
        let mut machine = ExprInputs::new();
        let literal_machine = LiteralMachine::running().and_then(|mut m| {
            m.system_wide = opts.set.all_cpus || opts.set.cpus.is_some();
            m.cpus = opts
                .set
                .cpus
                .as_deref()
                .and_then(|c| CpuList::parse(c).ok());
            vendor.set_literals(&mut machine, &m)?;
            Ok(m)
        });
        if let Err(e) = literal_machine {
            eprintln!("metrics: {e}");
        }
        machine
    }

    /// Parses each of the selection's event lists and appends its events
    /// (then its tool events) to `events`: each list's range there; `None`
    /// (nothing appended) when a list does not parse.
    fn push_lists(
        opts: &Options,
        vendor: &VendorSystem,
        selection: &MetricSelection,
        events: &mut Vec<Wanted>,
    ) -> Option<Vec<std::ops::Range<usize>>> {
        let mut ranges = Vec::new();
        let first = events.len();
        for list in selection.event_lists() {
            let start = events.len();
            let text = strip_tools(list.events(), list.ids());
            if let Err(e) = run::try_push_events(opts, vendor, &text, events) {
                // perf 6.1 prints the parser's error and goes on without
                // the metrics (its return value is not checked).
                eprintln!("event syntax error: {e}");
                events.truncate(first);
                return None;
            }
            for tool in list
                .ids()
                .iter()
                .filter(|id| TOOL_EVENTS.contains(&id.as_str()))
            {
                events.push(Wanted::tool(tool));
            }
            if events.len() - start != list.ids().len() {
                eprintln!(
                    "metrics: the events {} expand to {} events, not one per id",
                    list.events(),
                    events.len() - start
                );
                std::process::exit(255);
            }
            ranges.push(start..events.len());
        }
        Some(ranges)
    }

    /// perf 6.1 after a metric list it cannot use: the `-e` events, or
    /// its default ones.
    fn no_metrics(opts: &Options, vendor: &VendorSystem, events: &mut Vec<Wanted>) -> Metrics {
        if events.is_empty() && opts.events.is_empty() {
            run::push_events(opts, vendor, crate::DEFAULT_EVENTS, events);
        }
        Metrics::default()
    }

    /// A list's event string without its tool events (the last entries,
    /// `,duration_time`), which this tool counts itself, and without the
    /// `metric-id=` terms (each event's id is kept by its position):
    /// `NAME/metric-id=ID/MODS` becomes `NAME:MODS`, `PMU/TERMS,metric-id=ID/`
    /// `PMU/TERMS/` (perf-event-host's parser takes neither an alias with
    /// terms nor the `!` of an encoded id yet).
    pub fn strip_tools(events: &str, ids: &[String]) -> String {
        let mut text = events.to_owned();
        for tool in ids
            .iter()
            .rev()
            .filter(|id| TOOL_EVENTS.contains(&id.as_str()))
        {
            if let Some(rest) = text.strip_suffix(tool.as_str()) {
                text = rest.strip_suffix(',').unwrap_or(rest).to_owned();
            }
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(at) = rest.find("metric-id=") {
            let before = &rest[..at];
            let after = &rest[at..];
            let end = after.find('/').unwrap_or(after.len());
            let tail = &after[end..];
            if let Some(head) = before.strip_suffix(',') {
                out.push_str(head);
                rest = tail;
            } else if let Some(head) = before.strip_suffix('/') {
                // `NAME/metric-id=ID/MODS`: the alias alone, `:MODS`.
                out.push_str(head);
                let tail = &tail[1.min(tail.len())..];
                let mods = tail.find([',', '}']).unwrap_or(tail.len());
                if mods > 0 {
                    out.push(':');
                }
                rest = tail;
            } else {
                out.push_str(before);
                rest = tail;
            }
        }
        out.push_str(rest);
        out
    }
}
