//! One JSON event or metric as perf's `tools/perf/pmu-events/jevents.py`
//! (Linux 6.12, class `JsonEvent`) reads it: the term string from
//! `EventCode`/`ExtSel`/`ConfigCode`/`EventidCode`, the `event_fields` in
//! their order (`is_zero`, `canonicalize_value`), `Filter`, the MSR table,
//! `real_event`'s fixed names, `unit_to_pmu`, `fixdesc` and the precise /
//! errata notes, and `ArchStdEvent` inheritance of every unset attribute.
//!
//! Strings are kept as perf's compiled tables hold them at run time: jevents
//! escapes `\n`, `"` and `\r` of descriptions for the C compiler, which
//! turns them back into the characters, so they are not escaped here.
//! Python's truthiness is kept: an empty string counts as unset everywhere
//! jevents tests a value (`if x`, `not getattr(...)`), and perf's tables
//! decode an empty string as `NULL`.
//!
//! Linux 6.1's jevents.py differs: `json_event_6_1.rs`, chosen by
//! [`Jevents`].
//!
//! Where jevents would stop with an exception (a number Python's `int`
//! rejects, an unknown MSR, a missing `ArchStdEvent`), this is an error too.

use serde_json::{Map, Value};
use std::collections::HashMap;

/// An object of a JSON file, read as jevents' `JsonEvent` reads it (the
/// attributes of its `__dict__` that perf's tables keep, plus `event`).
#[derive(Clone, Debug, Default)]
pub struct JsonEvent {
    pub name: Option<String>,
    pub topic: Option<String>,
    pub compat: Option<String>,
    pub desc: Option<String>,
    pub pmu: Option<String>,
    pub unit: Option<String>,
    pub perpkg: Option<String>,
    pub aggr_mode: Option<String>,
    pub deprecated: Option<String>,
    pub metric_name: Option<String>,
    pub metric_group: Option<String>,
    pub metricgroup_no_group: Option<String>,
    pub default_metricgroup_name: Option<String>,
    pub event_grouping: Option<String>,
    /// The `MetricExpr` string as written (jevents parses it with metric.py:
    /// an object, true whenever the key is there).
    pub metric_expr: Option<String>,
    pub metric_threshold: Option<String>,
    /// The perf term string (`event=0xc0,period=2000003`).
    pub event: Option<String>,
}

/// Architecture standard events by lower-cased event and metric name
/// (jevents' `_arch_std_events`).
pub type ArchStd = HashMap<String, JsonEvent>;

/// Which kernel's jevents.py rules read the JSON files: perf compiles in
/// what the jevents.py of its own kernel made of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jevents {
    /// Linux 6.1 (`json_event_6_1.rs`: one struct for events and metrics,
    /// terms as the JSON spells them, `Unit: ` in descriptions).
    V6_1,
    /// Linux 6.12 (this file and `walk.rs`).
    V6_12,
}

impl Jevents {
    /// The rules of the kernel series `series` (`6.12`).
    pub fn of_series(series: &str) -> Result<Jevents, String> {
        match series {
            "6.1" => Ok(Jevents::V6_1),
            "6.12" => Ok(Jevents::V6_12),
            other => Err(format!(
                "no jevents.py rules for Linux {other}: read its \
                 tools/perf/pmu-events/jevents.py and add them (xtask/src/vendor_events/)"
            )),
        }
    }

    /// `JsonEvent(jd)` by these rules.
    pub fn event(self, jd: &Map<String, Value>, std: &ArchStd) -> Result<JsonEvent, String> {
        match self {
            Jevents::V6_1 => super::json_event_6_1::new(jd, std),
            Jevents::V6_12 => JsonEvent::new(jd, std),
        }
    }
}

/// Python's truth value of an optional string.
pub fn truthy(s: &Option<String>) -> bool {
    s.as_deref().is_some_and(|s| !s.is_empty())
}

/// The string value of `key`, if present; another JSON type is an error
/// (jevents uses these values as strings).
pub(super) fn get_str(jd: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match jd.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("`{key}` is {other}, not a string")),
    }
}

/// The value of `key`, which must be present.
pub(super) fn present_str(jd: &Map<String, Value>, key: &str) -> Result<String, String> {
    get_str(jd, key)?.ok_or_else(|| format!("no `{key}`"))
}

/// Python's truth value of a JSON value.
pub(super) fn value_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Python's `int(s, base)` for base 0, 10 or 16: surrounding whitespace,
/// a sign, the prefix the base allows, single underscores between digits
/// (and after a prefix), no leading zero in base 0 unless the value is 0.
pub fn py_int(s: &str, base: u32) -> Result<i128, String> {
    let bad = || format!("int({s:?}, {base}): invalid literal");
    let t = s.trim();
    let (negative, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = t.to_ascii_lowercase();
    let prefix = |p: &str| lower.starts_with(p);
    let (radix, digits, prefixed) = match base {
        0 if prefix("0x") => (16, &t[2..], true),
        0 if prefix("0o") => (8, &t[2..], true),
        0 if prefix("0b") => (2, &t[2..], true),
        0 => (10, t, false),
        16 if prefix("0x") => (16, &t[2..], true),
        16 | 10 => (base, t, false),
        _ => return Err(bad()),
    };
    let digits = if prefixed {
        digits.strip_prefix('_').unwrap_or(digits)
    } else {
        digits
    };
    if digits.is_empty() || digits.starts_with('_') || digits.ends_with('_') {
        return Err(bad());
    }
    if digits.contains("__") {
        return Err(bad());
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    let value = i128::from_str_radix(&clean, radix).map_err(|_| bad())?;
    if base == 0 && !prefixed && clean.starts_with('0') && value != 0 {
        return Err(bad());
    }
    Ok(if negative { -value } else { value })
}

/// jevents' `llx`: `%#llx` but plain decimal for 0..9 (Python's `hex`,
/// so a negative value is `-0x..`).
pub fn llx(x: i128) -> String {
    if (0..10).contains(&x) {
        x.to_string()
    } else if x < 0 {
        format!("-{:#x}", -x)
    } else {
        format!("{x:#x}")
    }
}

/// jevents 6.1's `llx`: `0`, else Python's `hex`.
pub fn llx_6_1(x: i128) -> String {
    match x {
        0 => "0".to_owned(),
        x if x < 0 => format!("-{:#x}", -x),
        x => format!("{x:#x}"),
    }
}

/// jevents' `is_zero` and `canonicalize_value` at once: `None` for zero,
/// else the canonical text (hex for a `0x` value, decimal otherwise).
fn canonical_nonzero(val: &str) -> Result<Option<String>, String> {
    let (value, hex) = if val.starts_with("0x") {
        (py_int(val, 16)?, true)
    } else {
        (py_int(val, 10)?, false)
    };
    Ok((value != 0).then(|| if hex { llx(value) } else { value.to_string() }))
}

/// jevents' `fixdesc`, as perf holds the result at run time.
pub(super) fn fixdesc(s: Option<String>) -> Option<String> {
    s.map(|s| {
        let s = s.strip_suffix(".  ").unwrap_or(&s);
        let s = s.strip_suffix(". ").unwrap_or(s);
        s.strip_suffix('.').unwrap_or(s).to_owned()
    })
}

/// jevents' `unit_to_pmu`.
fn unit_to_pmu(unit: &Option<String>) -> String {
    let Some(unit) = unit.as_deref().filter(|u| !u.is_empty()) else {
        return "default_core".to_owned();
    };
    let mapped = match unit {
        "CBO" => "uncore_cbox",
        "QPI LL" => "uncore_qpi",
        "SBO" => "uncore_sbox",
        "iMPH-U" => "uncore_arb",
        "CPU-M-CF" => "cpum_cf",
        "CPU-M-SF" => "cpum_sf",
        "PAI-CRYPTO" => "pai_crypto",
        "PAI-EXT" => "pai_ext",
        "UPI LL" => "uncore_upi",
        "hisi_sicl,cpa" | "hisi_sccl,ddrc" | "hisi_sccl,hha" | "hisi_sccl,l3c" | "imx8_ddr"
        | "imx9_ddr" | "cpu_core" | "cpu_atom" | "ali_drw" | "arm_cmn" => unit,
        "L3PMC" => "amd_l3",
        "DFPMC" => "amd_df",
        "UMCPMC" => "amd_umc",
        _ => return format!("uncore_{}", unit.to_lowercase()),
    };
    mapped.to_owned()
}

/// jevents' `lookup_msr`: the term an MSR number (the first of a list) is
/// written as.
fn lookup_msr(num: &Option<String>) -> Result<Option<&'static str>, String> {
    let Some(num) = num.as_deref().filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    let first = num.split(',').next().unwrap_or(num);
    match py_int(first, 0)? {
        0x3F6 => Ok(Some("ldlat=")),
        0x1A6 | 0x1A7 => Ok(Some("offcore_rsp=")),
        0x3F7 => Ok(Some("frontend=")),
        other => Err(format!("MSRIndex {other:#x} is not in jevents' MSR table")),
    }
}

/// jevents' `real_event`: the fixed term strings of six well-known names.
pub(super) fn real_event(name: &Option<String>, event: Option<String>) -> Option<String> {
    let name = name.as_deref().filter(|n| !n.is_empty())?;
    let fixed = match name.to_lowercase().as_str() {
        "inst_retired.any" | "inst_retired.any_p" => "event=0xc0,period=2000003",
        "cpu_clk_unhalted.ref" => "event=0x0,umask=0x03,period=2000003",
        "cpu_clk_unhalted.thread" | "cpu_clk_unhalted.core" => "event=0x3c,period=2000003",
        "cpu_clk_unhalted.thread_any" => "event=0x3c,any=1,period=2000003",
        _ => return event,
    };
    Some(fixed.to_owned())
}

/// The `event_fields` of jevents, in its order: JSON key, term.
const EVENT_FIELDS: [(&str, &str); 14] = [
    ("AnyThread", "any="),
    ("PortMask", "ch_mask="),
    ("CounterMask", "cmask="),
    ("EdgeDetect", "edge="),
    ("FCMask", "fc_mask="),
    ("Invert", "inv="),
    ("SampleAfterValue", "period="),
    ("UMask", "umask="),
    ("NodeType", "type="),
    ("RdWrMask", "rdwrmask="),
    ("EnAllCores", "enallcores="),
    ("EnAllSlices", "enallslices="),
    ("SliceId", "sliceid="),
    ("ThreadMask", "threadmask="),
];

/// jevents' `convert_aggr_mode`, named as perf's `enum aggr_mode_class`.
fn aggr_mode(v: Option<String>) -> Result<Option<String>, String> {
    Ok(match v.as_deref() {
        None | Some("") => None,
        Some("PerChip") => Some("PerChip".to_owned()),
        Some("PerCore") => Some("PerCore".to_owned()),
        Some(other) => return Err(format!("AggregationMode {other:?} is not known to jevents")),
    })
}

/// jevents' `convert_metric_constraint`, named as perf's
/// `enum metric_event_groups` (`NO_NMI_WATCHDOG` is jevents' alias of
/// `NO_GROUP_EVENTS_NMI`).
fn event_grouping(v: Option<String>) -> Result<Option<String>, String> {
    Ok(match v.as_deref() {
        None | Some("") => None,
        Some("NO_GROUP_EVENTS") => Some("NoGroupEvents".to_owned()),
        Some("NO_GROUP_EVENTS_NMI" | "NO_NMI_WATCHDOG") => Some("NoGroupEventsNmi".to_owned()),
        Some("NO_GROUP_EVENTS_SMT") => Some("NoGroupEventsSmt".to_owned()),
        Some(other) => {
            return Err(format!(
                "MetricConstraint {other:?} is not known to jevents"
            ))
        }
    })
}

impl JsonEvent {
    /// `JsonEvent(jd)` with the architecture standard events `std`.
    pub fn new(jd: &Map<String, Value>, std: &ArchStd) -> Result<JsonEvent, String> {
        let mut eventcode: i128 = 0;
        if jd.contains_key("EventCode") {
            let code = present_str(jd, "EventCode")?;
            eventcode = py_int(code.split(',').next().unwrap_or(&code), 0)?;
        }
        if jd.contains_key("ExtSel") {
            eventcode |= py_int(&present_str(jd, "ExtSel")?, 10)? << 8;
        }
        let configcode = match get_str(jd, "ConfigCode")? {
            Some(c) => Some(py_int(&c, 0)?),
            None => None,
        };
        let eventidcode = match get_str(jd, "EventidCode")? {
            Some(c) => Some(py_int(&c, 0)?),
            None => None,
        };
        let mut e = JsonEvent {
            name: get_str(jd, "EventName")?.map(|n| n.to_lowercase()),
            topic: None,
            compat: get_str(jd, "Compat")?,
            desc: fixdesc(get_str(jd, "BriefDescription")?),
            pmu: Some(unit_to_pmu(&get_str(jd, "Unit")?)),
            unit: get_str(jd, "ScaleUnit")?,
            perpkg: get_str(jd, "PerPkg")?,
            aggr_mode: aggr_mode(get_str(jd, "AggregationMode")?)?,
            deprecated: get_str(jd, "Deprecated")?,
            metric_name: get_str(jd, "MetricName")?,
            metric_group: get_str(jd, "MetricGroup")?,
            metricgroup_no_group: get_str(jd, "MetricgroupNoGroup")?,
            default_metricgroup_name: get_str(jd, "DefaultMetricgroupName")?,
            event_grouping: event_grouping(get_str(jd, "MetricConstraint")?)?,
            metric_expr: get_str(jd, "MetricExpr")?,
            metric_threshold: get_str(jd, "MetricThreshold")?,
            event: None,
        };
        let msr = lookup_msr(&get_str(jd, "MSRIndex")?)?;
        let mut extra_desc = String::new();
        if jd.contains_key("Data_LA") {
            extra_desc += "  Supports address when precise";
            if jd.contains_key("Errata") {
                extra_desc += ".";
            }
        }
        if jd.contains_key("Errata") {
            extra_desc += "  Spec update: ";
            extra_desc += &present_str(jd, "Errata")?;
        }
        let precise = jd.get("PEBS");
        if let (Some(precise), Some(desc)) = (precise, e.desc.as_deref()) {
            if value_truthy(precise) && !desc.is_empty() && !desc.contains("(Precise Event)") {
                extra_desc += if precise == &Value::String("2".to_owned()) {
                    " (Must be precise)"
                } else {
                    " (Precise event)"
                };
            }
        }
        let mut event = if let Some(c) = configcode {
            format!("config={}", llx(c))
        } else if let Some(c) = eventidcode {
            format!("eventid={}", llx(c))
        } else {
            format!("event={}", llx(eventcode))
        };
        for (key, term) in EVENT_FIELDS {
            if jd.contains_key(key) {
                if let Some(value) = canonical_nonzero(&present_str(jd, key)?)? {
                    event += &format!(",{term}{value}");
                }
            }
        }
        if let Some(filter) = get_str(jd, "Filter")?.filter(|f| !f.is_empty()) {
            event += &format!(",{filter}");
        }
        if let Some(msr) = msr {
            // Python formats a missing MSRValue as `None`, and so does perf's
            // table (nehalem's MEM_INST_RETIRED.LATENCY_ABOVE_THRESHOLD_0).
            let value = get_str(jd, "MSRValue")?.unwrap_or_else(|| "None".to_owned());
            event += &format!(",{msr}{value}");
        }
        if truthy(&e.desc) && !extra_desc.is_empty() {
            e.desc.as_mut().expect("truthy").push_str(&extra_desc);
        }
        let mut event = Some(event);
        if let Some(arch_std) = get_str(jd, "ArchStdEvent")?.filter(|a| !a.is_empty()) {
            let from = std
                .get(&arch_std.to_lowercase())
                .ok_or_else(|| format!("Cannot find arch std event: {arch_std}"))?;
            event.clone_from(&from.event);
            e.inherit(from);
        }
        e.event = real_event(&e.name, event);
        Ok(e)
    }

    /// Copies every attribute jevents finds unset (false in Python) from
    /// the architecture standard event `from`.
    fn inherit(&mut self, from: &JsonEvent) {
        let fields: [(&mut Option<String>, &Option<String>); 15] = [
            (&mut self.name, &from.name),
            (&mut self.topic, &from.topic),
            (&mut self.compat, &from.compat),
            (&mut self.desc, &from.desc),
            (&mut self.pmu, &from.pmu),
            (&mut self.unit, &from.unit),
            (&mut self.perpkg, &from.perpkg),
            (&mut self.aggr_mode, &from.aggr_mode),
            (&mut self.deprecated, &from.deprecated),
            (&mut self.metric_name, &from.metric_name),
            (&mut self.metric_group, &from.metric_group),
            (&mut self.metricgroup_no_group, &from.metricgroup_no_group),
            (
                &mut self.default_metricgroup_name,
                &from.default_metricgroup_name,
            ),
            (&mut self.event_grouping, &from.event_grouping),
            (&mut self.metric_threshold, &from.metric_threshold),
        ];
        for (mine, theirs) in fields {
            if !truthy(mine) {
                mine.clone_from(theirs);
            }
        }
        // metric_expr is an object in jevents: true whenever it is set.
        if self.metric_expr.is_none() {
            self.metric_expr.clone_from(&from.metric_expr);
        }
    }
}

impl JsonEvent {
    /// jevents 6.1's inheritance from the architecture standard event
    /// `from`: every attribute that is falsy, the expression too (a string
    /// there, not metric.py's object).
    pub fn inherit_6_1(&mut self, from: &JsonEvent) {
        self.inherit(from);
        if !truthy(&self.metric_expr) {
            self.metric_expr.clone_from(&from.metric_expr);
        }
    }
}

/// Every object of a JSON file as jevents' `read_json_events` reads it
/// (without the topic, which the caller sets).
pub fn read_json_events(
    text: &str,
    std: &ArchStd,
    rules: Jevents,
) -> Result<Vec<JsonEvent>, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let Value::Array(items) = value else {
        return Err("not a JSON array of events".to_owned());
    };
    items
        .iter()
        .map(|item| match item {
            Value::Object(jd) => rules.event(jd, std),
            other => Err(format!("{other} is not a JSON object")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(json: &str) -> JsonEvent {
        let Value::Object(jd) = serde_json::from_str(json).unwrap() else {
            panic!("an object")
        };
        JsonEvent::new(&jd, &ArchStd::new()).unwrap()
    }

    #[test]
    fn python_int_rules() {
        assert_eq!(py_int("0x1f", 0), Ok(31));
        assert_eq!(py_int(" 0X1F ", 0), Ok(31));
        assert_eq!(py_int("0x_1f", 16), Ok(31));
        assert_eq!(py_int("1_000", 10), Ok(1000));
        assert_eq!(py_int("00", 0), Ok(0));
        assert_eq!(py_int("007", 10), Ok(7));
        assert!(py_int("010", 0).is_err(), "base 0: no leading zero");
        assert!(py_int("1__0", 10).is_err());
        assert!(py_int("0x", 16).is_err());
        assert!(py_int("0x10", 10).is_err());
        assert_eq!(llx(9), "9");
        assert_eq!(llx(10), "0xa");
        assert_eq!(llx(-5), "-0x5");
    }

    #[test]
    fn terms_as_jevents_builds_them() {
        let e = event(
            r#"{"EventCode": "0xD1, 0xD2", "UMask": "0x01", "SampleAfterValue": "100003",
                "CounterMask": "0", "EdgeDetect": "0x0", "Invert": "00", "AnyThread": "1",
                "EventName": "MEM_LOAD.L1_HIT", "BriefDescription": "Loads.  ",
                "PEBS": "2", "Data_LA": "1", "Errata": "SKL057", "MSRIndex": "0x3F6",
                "MSRValue": "0x4", "Filter": "edge=1"}"#,
        );
        assert_eq!(
            e.event.as_deref(),
            Some("event=0xd1,any=1,period=100003,umask=1,edge=1,ldlat=0x4")
        );
        assert_eq!(e.name.as_deref(), Some("mem_load.l1_hit"));
        assert_eq!(
            e.desc.as_deref(),
            Some("Loads  Supports address when precise.  Spec update: SKL057 (Must be precise)")
        );
        assert_eq!(e.pmu.as_deref(), Some("default_core"));
    }

    #[test]
    fn fixed_names_and_units() {
        let e = event(r#"{"EventName": "INST_RETIRED.ANY", "UMask": "0x1", "Unit": "iMC"}"#);
        assert_eq!(e.event.as_deref(), Some("event=0xc0,period=2000003"));
        assert_eq!(e.pmu.as_deref(), Some("uncore_imc"));
        let e = event(r#"{"EventName": "X", "ConfigCode": "0x10", "Unit": "CPU-M-CF"}"#);
        assert_eq!(e.event.as_deref(), Some("config=0x10"));
        assert_eq!(e.pmu.as_deref(), Some("cpum_cf"));
        let e = event(r#"{"EventName": "X", "MSRIndex": "0x3F6"}"#);
        assert_eq!(e.event.as_deref(), Some("event=0,ldlat=None"));
    }

    #[test]
    fn arch_std_inheritance_fills_what_is_unset() {
        let mut std = ArchStd::new();
        let Value::Object(jd) = serde_json::from_str(
            r#"{"EventCode": "0x11", "EventName": "CPU_CYCLES", "BriefDescription": "Cycle."}"#,
        )
        .unwrap() else {
            panic!()
        };
        std.insert(
            "cpu_cycles".into(),
            JsonEvent::new(&jd, &ArchStd::new()).unwrap(),
        );
        let Value::Object(jd) =
            serde_json::from_str(r#"{"ArchStdEvent": "CPU_CYCLES", "EventCode": "0x99"}"#).unwrap()
        else {
            panic!()
        };
        let e = JsonEvent::new(&jd, &std).unwrap();
        assert_eq!(e.name.as_deref(), Some("cpu_cycles"));
        assert_eq!(
            e.event.as_deref(),
            Some("event=0x11"),
            "the std event's terms win"
        );
        assert_eq!(e.desc.as_deref(), Some("Cycle"));
        let Value::Object(jd) = serde_json::from_str(r#"{"ArchStdEvent": "NOPE"}"#).unwrap() else {
            panic!()
        };
        assert!(JsonEvent::new(&jd, &std).is_err());
    }
}
