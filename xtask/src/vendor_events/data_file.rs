//! The data file of one architecture (`perf-event-vendor/src/tables/<arch>.tsv`),
//! the format perf-event-vendor's `decode` module reads: one record a line,
//! fields separated by tabs, `\\`, tab, newline and carriage return escaped
//! as `\\`, `\t`, `\n`, `\r`, an empty field for an unset value. Identical
//! event and metric records are written once and tables list them by
//! number, which halves x86's file (many models share most events).

use super::json_event::{Jevents, JsonEvent};
use super::walk::Arch;
use std::collections::HashMap;

/// Where the tables come from (the `s` record).
pub struct Origin<'a> {
    pub package: &'a str,
    pub version: &'a str,
    pub sha256: &'a str,
}

/// Escapes one field.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

/// A value jevents writes into its C source as it is: a backslash, quote
/// or newline there would not be this string in perf.
fn raw_c(what: &str, v: &Option<String>) -> Result<String, String> {
    let s = v.clone().unwrap_or_default();
    if s.contains(['\\', '"', '\n']) {
        return Err(format!(
            "{what} {s:?}: jevents writes it into C unescaped, where it would not be this string"
        ));
    }
    Ok(escape(&s))
}

/// The PMU: perf 6.1's table holds none (`NULL`) where the JSON names no
/// `Unit`, and perf takes the CPU's core PMU then, which 6.12's jevents
/// names `default_core`: both are written `default_core`.
fn pmu(v: &Option<String>) -> Result<String, String> {
    match v.as_deref() {
        None | Some("") => Ok("default_core".to_owned()),
        Some(_) => raw_c("PMU", v),
    }
}

/// A description: jevents escapes newline, quote and carriage return, not
/// a backslash.
fn desc(v: &Option<String>) -> Result<String, String> {
    let s = v.clone().unwrap_or_default();
    if s.contains('\\') {
        return Err(format!(
            "description {s:?}: jevents leaves its backslash to the C compiler"
        ));
    }
    Ok(escape(&s))
}

/// perf's `*p - '0'` flags: unset, "0" or "1".
fn flag(what: &str, v: &Option<String>) -> Result<bool, String> {
    match v.as_deref() {
        None | Some("") | Some("0") => Ok(false),
        Some("1") => Ok(true),
        Some(other) => Err(format!(
            "{what} {other:?}: jevents writes the string where perf reads one digit"
        )),
    }
}

/// perf 6.1's flags, strings in its `struct pmu_event`: an event is
/// deprecated when the string is set at all (`if (deprecated)`), per
/// package when `sscanf(perpkg, "%d")` reads 1.
fn flags_6_1(e: &JsonEvent) -> (bool, bool) {
    let deprecated = e.deprecated.as_deref().is_some_and(|d| !d.is_empty());
    let perpkg = e.perpkg.as_deref().is_some_and(|p| {
        let p = p.trim_start();
        let sign = usize::from(p.starts_with(['+', '-']));
        let digits = p[sign..].len()
            - p[sign..]
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .len();
        p[..sign + digits].parse::<i64>() == Ok(1)
    });
    (deprecated, perpkg)
}

fn event_record(e: &JsonEvent, rules: Jevents) -> Result<String, String> {
    let (deprecated, perpkg) = match rules {
        Jevents::V6_1 => flags_6_1(e),
        Jevents::V6_12 => (
            flag("Deprecated", &e.deprecated)?,
            flag("PerPkg", &e.perpkg)?,
        ),
    };
    let mut flags = String::new();
    if deprecated {
        flags.push('d');
    }
    if perpkg {
        flags.push('p');
    }
    let fields = [
        raw_c("event name", &e.name)?,
        pmu(&e.pmu)?,
        raw_c("event terms", &e.event)?,
        raw_c("topic", &e.topic)?,
        flags,
        raw_c("ScaleUnit", &e.unit)?,
        desc(&e.desc)?,
        raw_c("Compat", &e.compat)?,
    ];
    Ok(format!("e\t{}", fields.join("\t")))
}

fn metric_record(m: &JsonEvent) -> Result<String, String> {
    let expr = m
        .metric_expr
        .as_deref()
        .ok_or_else(|| format!("metric {:?} has no MetricExpr", m.metric_name))?;
    let threshold = m.metric_threshold.clone().unwrap_or_default();
    if threshold.contains(['"', '\n']) {
        return Err(format!("MetricThreshold {threshold:?}: not one C string"));
    }
    let fields = [
        raw_c("metric name", &m.metric_name)?,
        pmu(&m.pmu)?,
        escape(expr),
        raw_c("MetricGroup", &m.metric_group)?,
        escape(&threshold),
        raw_c("ScaleUnit", &m.unit)?,
        desc(&m.desc)?,
        raw_c("Compat", &m.compat)?,
        m.aggr_mode.clone().unwrap_or_default(),
        m.event_grouping.clone().unwrap_or_default(),
        raw_c("MetricgroupNoGroup", &m.metricgroup_no_group)?,
        raw_c("DefaultMetricgroupName", &m.default_metricgroup_name)?,
    ];
    Ok(format!("x\t{}", fields.join("\t")))
}

/// Numbers records in order of first appearance.
#[derive(Default)]
struct Numbered {
    lines: Vec<String>,
    index: HashMap<String, usize>,
}

impl Numbered {
    fn number(&mut self, line: String) -> usize {
        if let Some(&i) = self.index.get(&line) {
            return i;
        }
        let i = self.lines.len();
        self.index.insert(line.clone(), i);
        self.lines.push(line);
        i
    }
}

/// `0-3,7,9-10`: the numbers in their order, runs of consecutive numbers
/// as ranges.
pub fn ranges(numbers: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < numbers.len() {
        let mut j = i;
        while j + 1 < numbers.len() && numbers[j + 1] == numbers[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            numbers[i].to_string()
        } else {
            format!("{}-{}", numbers[i], numbers[j])
        });
        i = j + 1;
    }
    out.join(",")
}

/// The data file of the architecture perf calls `name`.
pub fn render(name: &str, arch: &Arch, origin: &Origin, rules: Jevents) -> Result<String, String> {
    let mut out = format!(
        "# perf's vendor event tables for {name}: generated by `cargo xtask vendor-events` from \
         tools/perf/pmu-events/arch/{name} of {} {}, as perf's jevents.py reads them; do not edit\n\
         # One record a line, tab-separated; \\\\ \\t \\n \\r escaped; an empty field is unset.\n\
         # s package version sha256-of-the-deb\n\
         # c cpuid version model kind: a mapfile row perf keeps, in the mapfile's order\n\
         # e name pmu terms topic flags(d: deprecated, p: per package) unit desc compat\n\
         # x name pmu expr groups threshold unit desc compat aggr_mode event_grouping \
         no_group_groups default_groups\n\
         # m model events metrics: a table in walk order, its e and x records numbered from 0 \
         (a-b: a range)\n",
        origin.package, origin.version
    );
    out += &format!(
        "s\t{}\t{}\t{}\n",
        escape(origin.package),
        escape(origin.version),
        escape(origin.sha256)
    );
    for row in &arch.map {
        out += &format!(
            "c\t{}\t{}\t{}\t{}\n",
            escape(&row.cpuid),
            escape(&row.version),
            escape(&row.model),
            escape(&row.kind)
        );
    }
    let mut events = Numbered::default();
    let mut metrics = Numbered::default();
    let mut models = Vec::new();
    for table in &arch.tables {
        let context = |e: String| format!("{}: {e}", table.dir);
        let e: Vec<usize> = table
            .events
            .iter()
            .map(|e| event_record(e, rules).map(|r| events.number(r)))
            .collect::<Result<_, _>>()
            .map_err(context)?;
        let m: Vec<usize> = table
            .metrics
            .iter()
            .map(|m| metric_record(m).map(|r| metrics.number(r)))
            .collect::<Result<_, _>>()
            .map_err(context)?;
        models.push(format!(
            "m\t{}\t{}\t{}\n",
            escape(&table.dir),
            ranges(&e),
            ranges(&m)
        ));
    }
    for line in events.lines.iter().chain(&metrics.lines) {
        out += line;
        out.push('\n');
    }
    for line in models {
        out += &line;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_6_1_reads_its_flags_as_strings() {
        let e = |d: Option<&str>, p: Option<&str>| JsonEvent {
            deprecated: d.map(str::to_owned),
            perpkg: p.map(str::to_owned),
            ..JsonEvent::default()
        };
        assert_eq!(flags_6_1(&e(Some("1"), Some("1"))), (true, true));
        assert_eq!(
            flags_6_1(&e(Some("0"), Some("0"))),
            (true, false),
            "set is deprecated"
        );
        assert_eq!(
            flags_6_1(&e(None, Some(" 01x"))),
            (false, true),
            "sscanf %d"
        );
        assert_eq!(flags_6_1(&e(Some(""), Some("2"))), (false, false));
        assert_eq!(flags_6_1(&e(None, Some("x1"))), (false, false));
        assert!(
            flag("PerPkg", &Some("2".to_owned())).is_err(),
            "6.12 reads one digit"
        );
    }

    #[test]
    fn ranges_and_escapes() {
        assert_eq!(ranges(&[0, 1, 2, 3, 7, 9, 10]), "0-3,7,9-10");
        assert_eq!(ranges(&[5, 4, 3]), "5,4,3");
        assert_eq!(ranges(&[]), "");
        assert_eq!(escape("a\tb\\c\nd\re"), "a\\tb\\\\c\\nd\\re");
    }
}
