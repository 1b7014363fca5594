//! `perf stat -M`: perf's choice of metrics for a list of names and groups,
//! the events it opens for them, and each metric's value from the counts
//! (`tools/perf/util/metricgroup.c` and `stat-shadow.c`, Linux 6.12).
//!
//! [`MetricSelection::select`] takes a model's table and the `-M` argument
//! (`IPC,TopdownL1`, `tma_backend_bound:u`): each metric whose name or one
//! of whose groups is a listed item (ignoring case; `all` is every metric),
//! its expression's ids found on the machine ([`ExprEnv`]: its literals
//! fold `if #smt_on` as perf folds them), the metrics it names expanded in
//! its place (a cycle is an error), and the event strings perf parses to
//! open them (`INST_RETIRED.ANY/metric-id=INST_RETIRED.ANY/`,
//! `cpu/X,cmask=1,metric-id=cpu!3X!0cmask!21!3/`, tool events such as
//! `duration_time` as themselves), grouped `{...}:W` unless the metric or
//! the options say otherwise. [`SelectedMetric::evaluate`] then computes the
//! value from the counts by id, with the referenced metrics, the
//! threshold, and the `ScaleUnit` applied.
//!
//! ```
//! use perf_event_vendor::expr::{ExprInputs, ExprLiteral};
//! use perf_event_vendor::metricgroup::{MetricOptions, MetricSelection};
//! # #[cfg(target_arch = "x86_64")] {
//! let model = perf_event_vendor::model("skylake").unwrap();
//! // The machine: what the expressions' literals are on it.
//! let mut machine = ExprInputs::new();
//! machine.set_literal(ExprLiteral::SmtOn, 1.0);
//! let selection =
//!     MetricSelection::select(model, "tma_info_thread_ipc", &machine, &MetricOptions::new())?;
//! // The metric reads another, tma_info_thread_clks, whose event it needs too.
//! let ipc = &selection.metrics()[0];
//! assert_eq!(ipc.ids(), ["INST_RETIRED.ANY", "CPU_CLK_UNHALTED.THREAD"]);
//! assert_eq!(
//!     selection.events(),
//!     "{INST_RETIRED.ANY/metric-id=INST_RETIRED.ANY/,\
//!       CPU_CLK_UNHALTED.THREAD/metric-id=CPU_CLK_UNHALTED.THREAD/}:W"
//! );
//! // The counts, by id, beside the machine's literals.
//! machine.insert("INST_RETIRED.ANY", 3e9);
//! machine.insert("CPU_CLK_UNHALTED.THREAD", 2e9);
//! let reading = ipc.evaluate(&machine);
//! assert_eq!(reading.value, Some(1.5));
//! # }
//! # Ok::<(), perf_event_vendor::metricgroup::MetricSelectError>(())
//! ```
//!
//! Not here: the metrics of sys tables (perf adds those whose `Compat`
//! matches an uncore PMU's identifier; search [`Model::is_sys`] tables
//! yourself), and perf's hash-table order of a metric's events (the events
//! are in the order the expressions first name them; perf's order is its
//! `hashmap`'s, which changes only the order inside a list).

use crate::expr::{Expr, ExprEnv, ExprError, ExprEvalError, ExprLiteral};
use crate::{EventGrouping, Metric, Model};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;

/// perf's tool events, in `enum perf_tool_event`'s order: ids that are
/// opened as themselves, outside any group.
pub const TOOL_EVENTS: [&str; 3] = ["duration_time", "user_time", "system_time"];

/// `perf stat`'s metric options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricOptions {
    pmu: String,
    no_group: bool,
    no_merge: bool,
    no_threshold: bool,
    nmi_watchdog: bool,
    runtime_count: u32,
}

impl Default for MetricOptions {
    fn default() -> MetricOptions {
        MetricOptions {
            pmu: "all".to_owned(),
            no_group: false,
            no_merge: false,
            no_threshold: false,
            nmi_watchdog: false,
            runtime_count: 1,
        }
    }
}

impl MetricOptions {
    /// perf stat's defaults: every PMU's metrics, grouped, merged, with
    /// thresholds, the NMI watchdog off, one runtime.
    pub fn new() -> MetricOptions {
        MetricOptions::default()
    }

    /// `--cputype PMU`: only metrics of that PMU (`cpu_core`); `all` (the
    /// default) for every one.
    pub fn pmu(mut self, pmu: &str) -> MetricOptions {
        pmu.clone_into(&mut self.pmu);
        self
    }

    /// `--metric-no-group`: never group a metric's events.
    pub fn no_group(mut self, yes: bool) -> MetricOptions {
        self.no_group = yes;
        self
    }

    /// `--metric-no-merge`: never share events between metrics.
    pub fn no_merge(mut self, yes: bool) -> MetricOptions {
        self.no_merge = yes;
        self
    }

    /// `--metric-no-threshold`: do not open what only thresholds need.
    pub fn no_threshold(mut self, yes: bool) -> MetricOptions {
        self.no_threshold = yes;
        self
    }

    /// Whether the NMI watchdog is on (`/proc/sys/kernel/nmi_watchdog`):
    /// metrics constrained `NO_GROUP_EVENTS_NMI` are not grouped then.
    pub fn nmi_watchdog(mut self, on: bool) -> MetricOptions {
        self.nmi_watchdog = on;
        self
    }

    /// How many runtime values a metric whose expression has `?` takes
    /// (perf's `arch_get_runtimeparam`: powerpc's chips; 1 elsewhere). Each
    /// is a metric of its own, runtime 0, 1, ...
    pub fn runtime_count(mut self, count: u32) -> MetricOptions {
        self.runtime_count = count;
        self
    }
}

/// Why perf refuses a metric list.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum MetricSelectError {
    /// ``Cannot find metric or group `NAME'``.
    NotFound(String),
    /// A metric that names itself, directly or through others
    /// (`recursion detected for NAME`).
    Recursion(String),
    /// A metric's expression or threshold that does not parse.
    Syntax {
        /// The metric.
        metric: String,
        /// Why.
        error: ExprError,
    },
    /// A metric whose ids cannot be found (`%` by zero).
    Eval {
        /// The metric.
        metric: String,
        /// Why.
        error: ExprEvalError,
    },
    /// A metric whose ids are not among the events of the list it reads
    /// (`Cannot resolve IDs for NAME`: a metric with a modifier and no
    /// grouping, when others share an ungrouped list).
    Unresolved(String),
}

impl fmt::Display for MetricSelectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetricSelectError::NotFound(name) => write!(f, "Cannot find metric or group `{name}'"),
            MetricSelectError::Recursion(name) => write!(f, "recursion detected for {name}"),
            MetricSelectError::Syntax { metric, error } => write!(f, "metric {metric}: {error}"),
            MetricSelectError::Eval { metric, error } => write!(f, "metric {metric}: {error}"),
            MetricSelectError::Unresolved(name) => write!(f, "Cannot resolve IDs for {name}"),
        }
    }
}

impl std::error::Error for MetricSelectError {}

/// A metric's `ScaleUnit` (`100%`, `1GHz`, `9.765625e-4KB`): the leading
/// number the value is multiplied by and the unit after it, as perf's
/// `perf_pmu__convert_scale` (C's `strtod`) splits it.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleUnit {
    /// The factor (`100`); 0 when the text has no number, as `strtod`
    /// returns.
    pub scale: f64,
    /// The rest (`%`, `GHz`, `per_1k_instr`).
    pub unit: String,
}

impl ScaleUnit {
    /// Splits a `ScaleUnit` as perf does.
    pub fn parse(text: &str) -> ScaleUnit {
        let (scale, len) = strtod(text);
        ScaleUnit {
            scale,
            unit: text[len..].to_owned(),
        }
    }
}

/// C's `strtod` in the C locale, for decimal numbers, `inf`, `infinity`
/// and `nan`: the value and the bytes read (0, 0 when none).
fn strtod(text: &str) -> (f64, usize) {
    let b = text.as_bytes();
    let mut i = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    let negative = matches!(b.get(i), Some(b'-'));
    if matches!(b.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    let sign = if negative { -1.0 } else { 1.0 };
    let lower = text[i..].to_ascii_lowercase();
    for (word, v) in [
        ("infinity", f64::INFINITY),
        ("inf", f64::INFINITY),
        ("nan", f64::NAN),
    ] {
        if lower.starts_with(word) {
            return (sign * v, i + word.len());
        }
    }
    let start = i;
    let digits = |i: &mut usize| {
        let n = b[*i..].iter().take_while(|c| c.is_ascii_digit()).count();
        *i += n;
        n
    };
    let mut n = digits(&mut i);
    if b.get(i) == Some(&b'.') {
        let mut j = i + 1;
        let m = digits(&mut j);
        if n + m > 0 {
            i = j;
            n += m;
        }
    }
    if n == 0 {
        return (0.0, 0);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if digits(&mut j) > 0 {
            i = j;
        }
    }
    let v: f64 = text[start..i].parse().unwrap_or(0.0);
    (sign * v, i)
}

/// `match_metric`: whether `sought` is `all`, or one of the `;`-separated
/// names (ignoring ASCII case), or `No_group` for a metric without groups.
fn match_metric(names: Option<&str>, sought: &str) -> bool {
    if sought == "all" {
        return true;
    }
    let Some(mut names) = names else {
        return sought.eq_ignore_ascii_case("No_group");
    };
    loop {
        let n = sought.len();
        if names.len() >= n
            && names.as_bytes()[..n].eq_ignore_ascii_case(sought.as_bytes())
            && matches!(names.as_bytes().get(n), None | Some(b';'))
        {
            return true;
        }
        match names.find(';') {
            Some(at) => names = &names[at + 1..],
            None => return false,
        }
    }
}

/// `metric-id` encoding: `,` `-` `=` `@` as `!0` to `!3`.
fn encode_metric_id(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for c in id.chars() {
        match ",-=@".find(c) {
            Some(i) => {
                out.push('!');
                out.push(char::from(b'0' + i as u8));
            }
            None => out.push(c),
        }
    }
    out
}

/// The perf event string for one id of a metric, as
/// `metricgroup__build_event_string` writes it: `pmu@terms@mods` as
/// `pmu/terms,metric-id=ENCODED/mods`, `NAME:mods` as
/// `NAME/metric-id=ENCODED/mods`, `NAME` as `NAME/metric-id=ENCODED/`,
/// the modifier of `-M NAME:MOD` appended; a tool event as itself.
pub fn metric_event(id: &str, modifier: Option<&str>) -> String {
    if TOOL_EVENTS.contains(&id) {
        return id.to_owned();
    }
    let mut out = String::new();
    let rest = if let Some(first) = id.find('@') {
        let last = id.rfind('@').expect("one @ at least");
        out.push_str(&id[..first]);
        out.push('/');
        // perf's pointer arithmetic assumes a second `@`; with one, no terms.
        if last > first {
            out.push_str(&id[first + 1..last]);
        }
        out.push_str(",metric-id=");
        &id[last + 1..]
    } else if let Some(colon) = id.find(':') {
        out.push_str(&id[..colon]);
        out.push_str("/metric-id=");
        &id[colon + 1..]
    } else {
        out.push_str(id);
        out.push_str("/metric-id=");
        ""
    };
    out.push_str(&encode_metric_id(id));
    out.push('/');
    out.push_str(rest);
    if let Some(m) = modifier {
        out.push_str(m);
    }
    out
}

/// One list of events perf parses for metrics (`parse_ids`), as it parses
/// it: the events of the ungrouped metrics together, or one metric's
/// events (`{...}:W` when grouped), tool events last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricEvents {
    events: String,
    ids: Vec<String>,
    grouped: bool,
}

impl MetricEvents {
    /// The event string (`{A/metric-id=A/,B/metric-id=B/}:W,duration_time`).
    pub fn events(&self) -> &str {
        &self.events
    }

    /// The ids it counts, in the string's order (tool events included).
    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    /// Whether its events are a weak group.
    pub fn grouped(&self) -> bool {
        self.grouped
    }
}

/// `metricgroup__build_event_string`.
fn build_events(ids: &[String], modifier: Option<&str>, group: bool) -> MetricEvents {
    let mut events = String::new();
    let mut first = true;
    let mut order = Vec::new();
    for id in ids.iter().filter(|id| !TOOL_EVENTS.contains(&id.as_str())) {
        if first {
            if group {
                events.push('{');
            }
            first = false;
        } else {
            events.push(',');
        }
        events.push_str(&metric_event(id, modifier));
        order.push(id.clone());
    }
    if !first && group {
        events.push_str("}:W");
    }
    for tool in TOOL_EVENTS {
        if ids.iter().any(|id| id == tool) {
            if !first {
                events.push(',');
            }
            first = false;
            events.push_str(tool);
            order.push(tool.to_owned());
        }
    }
    MetricEvents {
        events,
        ids: order,
        grouped: group,
    }
}

/// A metric another one names, as it is evaluated.
#[derive(Clone, Debug)]
struct Reference {
    metric: &'static Metric,
    expr: Expr,
}

/// One metric `perf stat -M` computes: a metric of the list, its
/// references expanded.
#[derive(Clone, Debug)]
pub struct SelectedMetric {
    metric: &'static Metric,
    modifier: Option<String>,
    runtime: Option<u32>,
    group_events: bool,
    ids: Vec<String>,
    refs: Vec<Reference>,
    expr: Expr,
    threshold: Option<Expr>,
    events: usize,
}

impl SelectedMetric {
    /// The table's metric.
    pub fn metric(&self) -> &'static Metric {
        self.metric
    }

    /// Its name as perf shows it: with the list's modifier (`IPC:u`).
    pub fn name(&self) -> String {
        match &self.modifier {
            Some(m) => format!("{}:{m}", self.metric.name),
            None => self.metric.name.to_owned(),
        }
    }

    /// The modifier of `-M NAME:MOD`.
    pub fn modifier(&self) -> Option<&str> {
        self.modifier.as_deref()
    }

    /// The runtime value of a metric whose expression has `?` (perf shows
    /// it as `NAME_RUNTIME`).
    pub fn runtime(&self) -> Option<u32> {
        self.runtime
    }

    /// Whether its events are grouped.
    pub fn group_events(&self) -> bool {
        self.group_events
    }

    /// The ids whose counts it reads: events and tool events, the
    /// referenced metrics replaced by theirs.
    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    /// The metrics it reads by name, in the order perf adds them (the
    /// metric itself among them when its threshold names it).
    pub fn references(&self) -> impl Iterator<Item = &'static Metric> + '_ {
        self.refs.iter().map(|r| r.metric)
    }

    /// The expression perf evaluates: the table's, as jevents compiles it
    /// ([`Expr::simplify`]), `?` filled in.
    pub fn expr(&self) -> &Expr {
        &self.expr
    }

    /// The threshold expression, as written, `?` filled in.
    pub fn threshold(&self) -> Option<&Expr> {
        self.threshold.as_ref()
    }

    /// The index in [`MetricSelection::event_lists`] of the events it reads.
    pub fn event_list(&self) -> usize {
        self.events
    }

    /// The metric's value from the counts (`generic_metric`): `env` gives
    /// each id's value ([`SelectedMetric::ids`]: an event's count by its
    /// metric id, NaN for one perf could not count, the tool events in
    /// seconds) and the machine's literals; the metrics it references are
    /// computed from the same values. The value is scaled by the
    /// `ScaleUnit`; the threshold is evaluated when the value could be.
    pub fn evaluate(&self, env: &(impl ExprEnv + ?Sized)) -> MetricReading {
        let refs = WithReferences {
            refs: &self.refs,
            inner: &env,
            values: RefCell::new(HashMap::new()),
        };
        let unit = self.metric.unit.map(ScaleUnit::parse);
        let raw = self.expr.eval(&refs).ok();
        let threshold = match (&self.threshold, raw) {
            (Some(t), Some(_)) => t.eval(&refs).ok().filter(|t| !t.is_nan()).map(|t| t != 0.0),
            _ => None,
        };
        MetricReading {
            value: raw.map(|v| unit.as_ref().map_or(v, |u| v * u.scale)),
            unit: unit.map_or_else(String::new, |u| u.unit),
            threshold,
            raw,
        }
    }
}

/// A metric's value.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct MetricReading {
    /// The value, scaled by the `ScaleUnit`; `None` when perf's parser
    /// fails on it (a literal the machine did not give, `%` by zero).
    pub value: Option<f64>,
    /// The unit (`%`, `GHz`; empty without a `ScaleUnit`).
    pub unit: String,
    /// The threshold: `Some(true)` when it is crossed (perf prints the
    /// value red), `Some(false)` when not (green), `None` without one or
    /// when it is NaN.
    pub threshold: Option<bool>,
    /// The value before scaling.
    pub raw: Option<f64>,
}

/// The environment of an evaluation: the referenced metrics by name, each
/// computed once (perf's `EXPR_ID_DATA__REF` entries), then the caller's.
struct WithReferences<'a> {
    refs: &'a [Reference],
    inner: &'a dyn ExprEnv,
    values: RefCell<HashMap<String, f64>>,
}

impl ExprEnv for WithReferences<'_> {
    fn value(&self, id: &str) -> Option<f64> {
        let Some(r) = self.refs.iter().find(|r| r.metric.name == id) else {
            return self.inner.value(id);
        };
        if let Some(v) = self.values.borrow().get(id) {
            return Some(*v);
        }
        // perf marks the reference computed before it parses it, with the
        // value 0 until the parse succeeds: a failed one reads NaN here and
        // 0 afterwards.
        self.values.borrow_mut().insert(id.to_owned(), 0.0);
        let v = r.expr.eval(self).ok()?;
        self.values.borrow_mut().insert(id.to_owned(), v);
        Some(v)
    }
    fn source_count(&self, id: &str) -> Option<f64> {
        if self.refs.iter().any(|r| r.metric.name == id) {
            return None;
        }
        self.inner.source_count(id)
    }
    fn literal(&self, literal: ExprLiteral) -> Option<f64> {
        self.inner.literal(literal)
    }
    fn has_event(&self, id: &str) -> Option<bool> {
        self.inner.has_event(id)
    }
    fn cpuid_matches(&self, id: &str) -> Option<bool> {
        self.inner.cpuid_matches(id)
    }
}

/// While ids are found for a metric: the machine, and for `has_event` the
/// ids already found (perf's context holds them).
struct Finding<'a> {
    machine: &'a dyn ExprEnv,
    found: &'a [String],
}

impl ExprEnv for Finding<'_> {
    fn literal(&self, literal: ExprLiteral) -> Option<f64> {
        self.machine.literal(literal)
    }
    fn has_event(&self, id: &str) -> Option<bool> {
        if self.found.iter().any(|f| f == id) {
            return Some(true);
        }
        self.machine.has_event(id)
    }
    fn cpuid_matches(&self, id: &str) -> Option<bool> {
        self.machine.cpuid_matches(id)
    }
}

/// The metrics of a table in the order perf's compiled table has them:
/// by PMU, name, compiled expression and description.
fn table_order(model: &Model) -> Vec<(&'static Metric, String)> {
    let mut metrics: Vec<(&'static Metric, String)> = model
        .metrics
        .iter()
        .map(|m| {
            let text = Expr::parse(m.expr)
                .map_or_else(|_| m.expr.to_owned(), |e| e.simplify().to_string());
            (*m, text)
        })
        .collect();
    metrics.sort_by(|(a, ea), (b, eb)| {
        (a.pmu, a.name, ea.as_str(), a.desc.unwrap_or("")).cmp(&(
            b.pmu,
            b.name,
            eb.as_str(),
            b.desc.unwrap_or(""),
        ))
    });
    metrics
}

/// A root metric being expanded (`struct metric`).
struct Expansion<'a> {
    table: &'a [(&'static Metric, String)],
    machine: &'a dyn ExprEnv,
    runtime: u32,
    ids: Vec<String>,
    refs: Vec<Reference>,
}

impl Expansion<'_> {
    fn syntax(metric: &Metric, error: ExprError) -> MetricSelectError {
        MetricSelectError::Syntax {
            metric: metric.name.to_owned(),
            error,
        }
    }

    /// The expression perf runs for a metric: jevents' compiled form.
    fn compiled(&self, metric: &Metric) -> Result<Expr, MetricSelectError> {
        let e = Expr::parse(metric.expr).map_err(|e| Self::syntax(metric, e))?;
        Ok(e.simplify().with_runtime(self.runtime))
    }

    /// `expr__find_ids` into the root's context.
    fn find_ids(&mut self, metric: &Metric, expr: &Expr) -> Result<(), MetricSelectError> {
        let finding = Finding {
            machine: self.machine,
            found: &self.ids,
        };
        let found = expr
            .ids_with(&finding)
            .map_err(|error| MetricSelectError::Eval {
                metric: metric.name.to_owned(),
                error,
            })?;
        for id in found {
            if !self.ids.contains(&id) {
                self.ids.push(id);
            }
        }
        Ok(())
    }

    /// `metricgroup__find_metric`: the first metric of the PMU the name
    /// matches.
    fn find_metric(&self, pmu: &str, name: &str) -> Option<&'static Metric> {
        self.table
            .iter()
            .map(|(m, _)| *m)
            .find(|m| (pmu == "all" || m.pmu == pmu) && match_metric(Some(m.name), name))
    }

    /// `resolve_metric`: the ids that name metrics become references.
    fn resolve(&mut self, pmu: &str, visited: &[&str]) -> Result<(), MetricSelectError> {
        let pending: Vec<(String, &'static Metric)> = self
            .ids
            .iter()
            .filter_map(|id| self.find_metric(pmu, id).map(|m| (id.clone(), m)))
            .collect();
        self.ids.retain(|id| !pending.iter().any(|(p, _)| p == id));
        for (_, metric) in pending {
            self.add_reference(metric, visited)?;
        }
        Ok(())
    }

    /// `__add_metric` of a referenced metric.
    fn add_reference(
        &mut self,
        metric: &'static Metric,
        visited: &[&str],
    ) -> Result<(), MetricSelectError> {
        if visited.contains(&metric.name) {
            return Err(MetricSelectError::Recursion(metric.name.to_owned()));
        }
        if self.refs.iter().any(|r| r.metric.name == metric.name) {
            return Ok(());
        }
        let expr = self.compiled(metric)?;
        self.refs.push(Reference {
            metric,
            expr: expr.clone(),
        });
        self.find_ids(metric, &expr)?;
        let mut visited = visited.to_vec();
        visited.push(metric.name);
        self.resolve(metric.pmu, &visited)
    }
}

/// perf's choice of metrics for a `-M` list, and the events it opens.
#[derive(Clone, Debug)]
pub struct MetricSelection {
    metrics: Vec<SelectedMetric>,
    event_lists: Vec<MetricEvents>,
}

impl MetricSelection {
    /// perf stat's `-M LIST` on the table `model` (`metricgroup__parse_groups`):
    /// `LIST` is comma-separated metric and group names, each with an
    /// optional `:MODIFIER`. `machine` answers the expressions' questions
    /// while their ids are found (literals such as `#smt_on`,
    /// `has_event`, `strcmp_cpuid_str`); what it does not know, perf's
    /// folding takes as unknown, and both sides of a choice are opened.
    /// The metrics are in perf's order: the most events first.
    pub fn select(
        model: &Model,
        list: &str,
        machine: &(impl ExprEnv + ?Sized),
        options: &MetricOptions,
    ) -> Result<MetricSelection, MetricSelectError> {
        let machine: &dyn ExprEnv = &machine;
        let table = table_order(model);
        let smt_on = machine
            .literal(ExprLiteral::SmtOn)
            .is_some_and(|v| v != 0.0);
        let mut found = Vec::new();
        for item in list.split(',') {
            let (name, modifier) = match item.split_once(':') {
                Some((n, m)) => (n, Some(m.to_owned())),
                None => (item, None),
            };
            let mut matched = false;
            for (metric, _) in &table {
                let pmu_ok = options.pmu == "all" || metric.pmu == options.pmu;
                if !pmu_ok
                    || !(match_metric(metric.groups, name) || match_metric(Some(metric.name), name))
                {
                    continue;
                }
                matched = true;
                let no_group = options.no_group || match_metric(metric.no_group_groups, name);
                let group_events = !no_group
                    && match metric.event_grouping {
                        Some(EventGrouping::NoGroupEvents) => false,
                        Some(EventGrouping::NoGroupEventsNmi) => !options.nmi_watchdog,
                        Some(EventGrouping::NoGroupEventsSmt) => !smt_on,
                        None => true,
                    };
                let runtimes = if metric.expr.contains('?') {
                    (0..options.runtime_count).map(Some).collect()
                } else {
                    vec![None]
                };
                for runtime in runtimes {
                    found.push(Self::add_root(
                        &table,
                        machine,
                        metric,
                        modifier.clone(),
                        runtime,
                        group_events,
                        options,
                    )?);
                }
            }
            if !matched {
                return Err(MetricSelectError::NotFound(name.to_owned()));
            }
        }
        // perf adds each at the head of its list, then sorts by the number
        // of events, tool events aside (a stable sort).
        found.reverse();
        let count = |m: &SelectedMetric| {
            m.ids
                .iter()
                .filter(|id| !TOOL_EVENTS.contains(&id.as_str()))
                .count()
        };
        found.sort_by_key(|m| std::cmp::Reverse(count(m)));
        if list == "Default" {
            found.sort_by(|l, r| {
                let key =
                    |m: &SelectedMetric| (m.metric.default_groups.unwrap_or(""), m.metric.name);
                key(r).cmp(&key(l))
            });
        }
        Self::build_lists(found, options)
    }

    /// `__add_metric` of a metric of the list.
    fn add_root(
        table: &[(&'static Metric, String)],
        machine: &dyn ExprEnv,
        metric: &'static Metric,
        modifier: Option<String>,
        runtime: Option<u32>,
        group_events: bool,
        options: &MetricOptions,
    ) -> Result<SelectedMetric, MetricSelectError> {
        let mut x = Expansion {
            table,
            machine,
            runtime: runtime.unwrap_or(0),
            ids: Vec::new(),
            refs: Vec::new(),
        };
        let expr = x.compiled(metric)?;
        let threshold = match metric.threshold {
            Some(t) => Some(
                Expr::parse(t)
                    .map_err(|e| Expansion::syntax(metric, e))?
                    .with_runtime(x.runtime),
            ),
            None => None,
        };
        // A threshold is computed from the metric's own value: its ids are
        // the threshold's (or, without thresholds, the metric's by name),
        // the metric among the references.
        let (first, visited) = match &threshold {
            Some(_) if options.no_threshold => (Expr::Id(metric.name.to_owned()), "__threshold__"),
            Some(t) => (t.clone(), "__threshold__"),
            None => (expr.clone(), metric.name),
        };
        x.find_ids(metric, &first)?;
        x.resolve(metric.pmu, &[visited])?;
        Ok(SelectedMetric {
            metric,
            modifier,
            runtime,
            group_events,
            ids: x.ids,
            refs: x.refs,
            expr,
            threshold,
            events: 0,
        })
    }

    /// `parse_groups`' event lists: the ungrouped metrics' together, a
    /// metric's own, or an earlier metric's that has all its events.
    fn build_lists(
        mut metrics: Vec<SelectedMetric>,
        options: &MetricOptions,
    ) -> Result<MetricSelection, MetricSelectError> {
        let tools: Vec<String> = TOOL_EVENTS
            .iter()
            .filter(|t| {
                !options.no_merge && metrics.iter().any(|m| m.ids.iter().any(|id| id == *t))
            })
            .map(|t| (*t).to_owned())
            .collect();
        // parse_ids: every tool event any metric reads, or duration_time
        // where there is nothing to open.
        let with_tools = |ids: &mut Vec<String>| {
            if !options.no_merge || ids.is_empty() {
                for t in &tools {
                    if !ids.contains(t) {
                        ids.push(t.clone());
                    }
                }
                if tools.is_empty() && ids.is_empty() {
                    ids.push("duration_time".to_owned());
                }
            }
        };
        let mut lists = Vec::new();
        let mut combined = false;
        if !options.no_merge {
            let mut ids: Vec<String> = Vec::new();
            for m in metrics
                .iter()
                .filter(|m| !m.group_events && m.modifier.is_none())
            {
                for id in &m.ids {
                    if !ids.contains(id) {
                        ids.push(id.clone());
                    }
                }
            }
            if !ids.is_empty() {
                with_tools(&mut ids);
                lists.push(build_events(&ids, None, false));
                combined = true;
            }
        }
        // Which metric owns each list after the combined one.
        let mut owner: Vec<Option<usize>> = vec![None; metrics.len()];
        for i in 0..metrics.len() {
            let m = &metrics[i];
            let mut list = None;
            if combined && !m.group_events {
                list = Some(0);
            } else if !options.no_merge {
                list = (0..i).find_map(|j| {
                    let n = &metrics[j];
                    let own = owner[j]?;
                    let same = n.modifier == m.modifier && n.metric.pmu == m.metric.pmu;
                    (same && m.ids.iter().all(|id| n.ids.contains(id))).then_some(own)
                });
            }
            let index = match list {
                Some(index) => index,
                None => {
                    let m = &mut metrics[i];
                    with_tools(&mut m.ids);
                    lists.push(build_events(&m.ids, m.modifier.as_deref(), m.group_events));
                    owner[i] = Some(lists.len() - 1);
                    lists.len() - 1
                }
            };
            let m = &mut metrics[i];
            if !m.ids.iter().all(|id| lists[index].ids.contains(id)) {
                return Err(MetricSelectError::Unresolved(m.name()));
            }
            m.events = index;
        }
        Ok(MetricSelection {
            metrics,
            event_lists: lists,
        })
    }

    /// The metrics, in perf's order.
    pub fn metrics(&self) -> &[SelectedMetric] {
        &self.metrics
    }

    /// The event lists perf parses, in order: the ungrouped metrics'
    /// together first, then each metric's own.
    pub fn event_lists(&self) -> &[MetricEvents] {
        &self.event_lists
    }

    /// All the events as one `-e` argument (the lists joined by `,`).
    pub fn events(&self) -> String {
        self.event_lists
            .iter()
            .map(|l| l.events.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Every id whose count the metrics read, once each (tool events too).
    pub fn ids(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for list in &self.event_lists {
            for id in &list.ids {
                if !out.contains(&id.as_str()) {
                    out.push(id);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
