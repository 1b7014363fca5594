//! Reads a data file of `src/tables/` (written by `cargo xtask
//! vendor-events`, its format in the file's header) into [`Decoded`]. Each
//! distinct event and metric is one value; the models point at them.
//! Strings are slices of the embedded text; the few with an escape (a
//! metric expression's `\\`, a description's newline) and the records are
//! allocated once and kept for the life of the program, like the text.

use crate::metric::{EventGrouping, MetricAggrMode};
use crate::model::Origin;
use crate::{MapRow, Metric, Model, VendorEvent};

/// One architecture's tables of one kernel.
#[derive(Debug, Default)]
pub(crate) struct Decoded {
    /// The `s` record.
    pub origin: Option<Origin>,
    /// The `c` records.
    pub map: Vec<MapRow>,
    /// The `m` records.
    pub models: Vec<Model>,
}

/// A field: unescaped, borrowed from the text when it has no escape.
fn field(raw: &'static str) -> Result<&'static str, String> {
    if !raw.contains('\\') {
        return Ok(raw);
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next() {
            Some('\\') => '\\',
            Some('t') => '\t',
            Some('n') => '\n',
            Some('r') => '\r',
            other => return Err(format!("bad escape \\{other:?} in {raw:?}")),
        });
    }
    Ok(Box::leak(out.into_boxed_str()))
}

/// An optional field: empty is unset.
fn optional(raw: &'static str) -> Result<Option<&'static str>, String> {
    Ok(if raw.is_empty() {
        None
    } else {
        Some(field(raw)?)
    })
}

/// The record numbers of a model line (`0-3,7`).
fn numbers(raw: &str, count: usize) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in raw.split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let parse = |s: &str| s.parse::<usize>().map_err(|e| format!("{part:?}: {e}"));
        let (a, b) = (parse(a)?, parse(b)?);
        if a > b || b >= count {
            return Err(format!("{part:?}: not a range of the {count} records"));
        }
        out.extend(a..=b);
    }
    Ok(out)
}

fn event(f: &[&'static str]) -> Result<VendorEvent, String> {
    let [name, pmu, terms, topic, flags, unit, desc, compat] = f else {
        return Err(format!("an event has 8 fields, not {}", f.len()));
    };
    if let Some(c) = flags.chars().find(|c| !matches!(c, 'd' | 'p')) {
        return Err(format!("unknown event flag {c:?}"));
    }
    Ok(VendorEvent {
        name: field(name)?,
        pmu: field(pmu)?,
        terms: field(terms)?,
        topic: field(topic)?,
        desc: optional(desc)?,
        unit: optional(unit)?,
        compat: optional(compat)?,
        deprecated: flags.contains('d'),
        perpkg: flags.contains('p'),
    })
}

fn metric(f: &[&'static str]) -> Result<Metric, String> {
    let [name, pmu, expr, groups, threshold, unit, desc, compat, aggr, grouping, no_group, default] =
        f
    else {
        return Err(format!("a metric has 12 fields, not {}", f.len()));
    };
    Ok(Metric {
        name: field(name)?,
        pmu: field(pmu)?,
        expr: field(expr)?,
        groups: optional(groups)?,
        threshold: optional(threshold)?,
        unit: optional(unit)?,
        desc: optional(desc)?,
        compat: optional(compat)?,
        aggr_mode: match *aggr {
            "" => None,
            "PerChip" => Some(MetricAggrMode::PerChip),
            "PerCore" => Some(MetricAggrMode::PerCore),
            other => return Err(format!("unknown aggregation mode {other:?}")),
        },
        event_grouping: match *grouping {
            "" => None,
            "NoGroupEvents" => Some(EventGrouping::NoGroupEvents),
            "NoGroupEventsNmi" => Some(EventGrouping::NoGroupEventsNmi),
            "NoGroupEventsSmt" => Some(EventGrouping::NoGroupEventsSmt),
            other => return Err(format!("unknown event grouping {other:?}")),
        },
        no_group_groups: optional(no_group)?,
        default_groups: optional(default)?,
    })
}

/// Decodes a data file.
pub(crate) fn decode(text: &'static str) -> Result<Decoded, String> {
    let mut tables = Decoded::default();
    let mut events = Vec::new();
    let mut metrics = Vec::new();
    let mut models = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let at = |e: String| format!("line {}: {e}", index + 1);
        if line.starts_with('#') {
            continue;
        }
        let fields: Vec<&'static str> = line.split('\t').collect();
        match fields[..] {
            ["s", package, version, sha256] => {
                tables.origin = Some(Origin {
                    package: field(package).map_err(at)?,
                    version: field(version).map_err(at)?,
                    sha256: field(sha256).map_err(at)?,
                });
            }
            ["c", cpuid, version, model, kind] => tables.map.push(MapRow {
                cpuid: field(cpuid).map_err(at)?,
                version: field(version).map_err(at)?,
                model: field(model).map_err(at)?,
                kind: field(kind).map_err(at)?,
            }),
            ["e", ..] => events.push(event(&fields[1..]).map_err(at)?),
            ["x", ..] => metrics.push(metric(&fields[1..]).map_err(at)?),
            ["m", name, e, m] => models.push((
                field(name).map_err(at)?,
                numbers(e, events.len()).map_err(at)?,
                numbers(m, metrics.len()).map_err(at)?,
            )),
            _ => return Err(at(format!("not a record: {line:?}"))),
        }
    }
    let events: &'static [VendorEvent] = Box::leak(events.into_boxed_slice());
    let metrics: &'static [Metric] = Box::leak(metrics.into_boxed_slice());
    tables.models = models
        .into_iter()
        .map(|(name, e, m)| Model {
            name,
            events: e.into_iter().map(|i| &events[i]).collect(),
            metrics: m.into_iter().map(|i| &metrics[i]).collect(),
        })
        .collect();
    for row in &tables.map {
        if !tables.models.iter().any(|m| m.name == row.model) {
            return Err(format!("mapfile row {row:?}: no model {}", row.model));
        }
    }
    Ok(tables)
}

#[cfg(test)]
mod tests {
    use crate::tables;
    use std::collections::HashSet;

    #[test]
    fn every_data_file_decodes_into_whole_tables() {
        for t in tables::all() {
            let (kernel, arch, tables) = (t.kernel, t.arch, &t.tables);
            let origin = tables.origin.as_ref().expect("an origin record");
            assert_eq!(origin.package, format!("linux-source-{kernel}"), "{arch}");
            assert!(
                !tables.map.is_empty() && !tables.models.is_empty(),
                "{kernel} {arch}"
            );
            for model in &tables.models {
                // 6.1's jevents writes a table for every leaf directory and
                // does not refuse a name twice; 6.12's does both.
                let v6_12 = kernel == "6.12";
                assert!(
                    !v6_12 || !model.events.is_empty() || !model.metrics.is_empty(),
                    "{arch} {}: jevents writes no empty table",
                    model.name
                );
                let mut names = HashSet::new();
                for e in &model.events {
                    assert!(
                        !v6_12 || names.insert((e.pmu, e.name)),
                        "{arch} {}: {}/{} twice (jevents asserts against it)",
                        model.name,
                        e.pmu,
                        e.name
                    );
                    assert!(!e.terms.is_empty() && e.name == e.name.to_lowercase());
                }
                for m in &model.metrics {
                    assert!(!m.expr.is_empty(), "{arch} {}: {}", model.name, m.name);
                }
            }
        }
    }

    #[test]
    fn escapes_and_damage() {
        assert_eq!(super::field("a\\tb\\\\c\\nd"), Ok("a\tb\\c\nd"));
        assert!(super::field("a\\x").is_err());
        assert_eq!(super::numbers("0-2,5,3-3", 6), Ok(vec![0, 1, 2, 5, 3]));
        assert!(super::numbers("4-6", 6).is_err(), "past the records");
        assert!(super::numbers("3-1", 6).is_err());
        assert!(super::decode("e\tname\n").is_err(), "an event of one field");
        assert!(
            super::decode("c\tx\tv1\tnowhere\tcore\n").is_err(),
            "a row without its model"
        );
        assert!(super::decode("q\tx\n").is_err());
    }
}
