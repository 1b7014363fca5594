//! One JSON event or metric as Linux 6.1's `tools/perf/pmu-events/jevents.py`
//! (class `JsonEvent`) reads it, where its rules differ from 6.12's
//! (`json_event.rs`):
//!
//! - one `struct pmu_event` holds events and metrics alike (an object with
//!   `MetricName` is a metric, one with `EventName` an event, as perf 6.1's
//!   alias and metric code reads the table); no `MetricThreshold`,
//!   `MetricgroupNoGroup`, `DefaultMetricgroupName` or `EventidCode`, no
//!   metric.py: the expression is the JSON's string;
//! - the terms: `llx` is `0` or `hex(x)` (`event=0x5`, not `event=5`), and
//!   only 8 `event_fields` (`AnyThread` .. `UMask`), each written as the
//!   JSON spells it unless the string is exactly `0` (`umask=0x01`,
//!   `cmask=0x0`);
//! - `unit_to_pmu` has a shorter table and gives no PMU without `Unit` (perf
//!   6.1 takes the CPU's core PMU then), and a PMU adds `Unit: <pmu> ` to
//!   the description (`. ` before it unless the description ends so);
//! - `MetricConstraint` is kept as written: perf 6.1 knows only
//!   `NO_NMI_WATCHDOG`;
//! - an `ArchStdEvent` jevents does not know is ignored, not an error, and
//!   every attribute (the expression too) is inherited when it is falsy.

use super::json_event::{
    fixdesc, get_str, llx_6_1, present_str, py_int, real_event, value_truthy, ArchStd, JsonEvent,
};
use serde_json::{Map, Value};

/// jevents 6.1's `unit_to_pmu`: `None` without a unit.
fn unit_to_pmu(unit: &Option<String>) -> Option<String> {
    let unit = unit.as_deref().filter(|u| !u.is_empty())?;
    let mapped = match unit {
        "CBO" => "uncore_cbox",
        "QPI LL" => "uncore_qpi",
        "SBO" => "uncore_sbox",
        "iMPH-U" => "uncore_arb",
        "CPU-M-CF" => "cpum_cf",
        "CPU-M-SF" => "cpum_sf",
        "PAI-CRYPTO" => "pai_crypto",
        "UPI LL" => "uncore_upi",
        "hisi_sicl,cpa" | "hisi_sccl,ddrc" | "hisi_sccl,hha" | "hisi_sccl,l3c" | "imx8_ddr"
        | "cpu_core" | "cpu_atom" => unit,
        "L3PMC" => "amd_l3",
        "DFPMC" => "amd_df",
        _ => return Some(format!("uncore_{}", unit.to_lowercase())),
    };
    Some(mapped.to_owned())
}

/// jevents 6.1's `lookup_msr` (a `KeyError` for another number).
fn lookup_msr(num: &Option<String>) -> Result<Option<&'static str>, String> {
    let Some(num) = num.as_deref().filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    let first = num.split(',').next().unwrap_or(num);
    match py_int(first, 0)? {
        0x3F6 => Ok(Some("ldlat=")),
        0x1A6 | 0x1A7 => Ok(Some("offcore_rsp=")),
        0x3F7 => Ok(Some("frontend=")),
        other => Err(format!(
            "MSRIndex {other:#x} is not in jevents 6.1's MSR table"
        )),
    }
}

/// jevents 6.1's `event_fields`, in its order.
const EVENT_FIELDS: [(&str, &str); 8] = [
    ("AnyThread", "any="),
    ("PortMask", "ch_mask="),
    ("CounterMask", "cmask="),
    ("EdgeDetect", "edge="),
    ("FCMask", "fc_mask="),
    ("Invert", "inv="),
    ("SampleAfterValue", "period="),
    ("UMask", "umask="),
];

/// `MetricConstraint` as perf 6.1 reads it: `NO_NMI_WATCHDOG` (not in a
/// group while the NMI watchdog is on) is the one value its metric code
/// tests.
fn metric_constraint(v: Option<String>) -> Result<Option<String>, String> {
    Ok(match v.as_deref() {
        None | Some("") => None,
        Some("NO_NMI_WATCHDOG") => Some("NoGroupEventsNmi".to_owned()),
        Some(other) => {
            return Err(format!(
                "MetricConstraint {other:?}: perf 6.1 knows only NO_NMI_WATCHDOG"
            ))
        }
    })
}

/// `JsonEvent(jd)` of jevents 6.1 with the architecture standard events
/// `std`.
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
    let aggr_mode = match get_str(jd, "AggregationMode")?.as_deref() {
        None | Some("") => None,
        Some(m @ ("PerChip" | "PerCore")) => Some(m.to_owned()),
        Some(other) => return Err(format!("AggregationMode {other:?} is not known to jevents")),
    };
    let mut e = JsonEvent {
        name: get_str(jd, "EventName")?.map(|n| n.to_lowercase()),
        topic: Some(String::new()),
        compat: get_str(jd, "Compat")?,
        desc: fixdesc(get_str(jd, "BriefDescription")?),
        pmu: unit_to_pmu(&get_str(jd, "Unit")?),
        unit: get_str(jd, "ScaleUnit")?,
        perpkg: get_str(jd, "PerPkg")?,
        aggr_mode,
        deprecated: get_str(jd, "Deprecated")?,
        metric_name: get_str(jd, "MetricName")?,
        metric_group: get_str(jd, "MetricGroup")?,
        event_grouping: metric_constraint(get_str(jd, "MetricConstraint")?)?,
        metric_expr: get_str(jd, "MetricExpr")?,
        ..JsonEvent::default()
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
    if let (Some(precise), Some(desc)) = (jd.get("PEBS"), e.desc.as_deref()) {
        if value_truthy(precise) && !desc.is_empty() && !desc.contains("(Precise Event)") {
            extra_desc += if precise == &Value::String("2".to_owned()) {
                " (Must be precise)"
            } else {
                " (Precise event)"
            };
        }
    }
    let mut event = match configcode {
        Some(c) => format!("config={}", llx_6_1(c)),
        None => format!("event={}", llx_6_1(eventcode)),
    };
    for (key, term) in EVENT_FIELDS {
        if jd.contains_key(key) {
            let value = present_str(jd, key)?;
            if value != "0" {
                event += &format!(",{term}{value}");
            }
        }
    }
    if let Some(filter) = get_str(jd, "Filter")?.filter(|f| !f.is_empty()) {
        event += &format!(",{filter}");
    }
    if let Some(msr) = msr {
        let value = get_str(jd, "MSRValue")?.unwrap_or_else(|| "None".to_owned());
        event += &format!(",{msr}{value}");
    }
    let desc_set = e.desc.as_deref().is_some_and(|d| !d.is_empty());
    if desc_set && !extra_desc.is_empty() {
        e.desc.as_mut().expect("set").push_str(&extra_desc);
    }
    if let Some(pmu) = e.pmu.as_deref().filter(|p| !p.is_empty()) {
        let mut desc = e.desc.take().unwrap_or_default();
        if !desc.is_empty() && !desc.ends_with(". ") {
            desc += ". ";
        }
        e.desc = Some(format!("{desc}Unit: {pmu} "));
    }
    let mut event = Some(event);
    if let Some(arch_std) = get_str(jd, "ArchStdEvent")?.filter(|a| !a.is_empty()) {
        // jevents 6.1 ignores a name it does not know.
        if let Some(from) = std.get(&arch_std.to_lowercase()) {
            event.clone_from(&from.event);
            e.inherit_6_1(from);
        }
    }
    e.event = real_event(&e.name, event);
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(json: &str) -> JsonEvent {
        let Value::Object(jd) = serde_json::from_str(json).unwrap() else {
            panic!("an object")
        };
        new(&jd, &ArchStd::new()).unwrap()
    }

    #[test]
    fn terms_as_jevents_6_1_writes_them() {
        let e = event(
            r#"{"EventCode": "0x5", "UMask": "0x01", "SampleAfterValue": "100003",
                "CounterMask": "0", "EdgeDetect": "0x0", "NodeType": "0x1",
                "EventName": "X.Y", "BriefDescription": "Loads.", "Unit": "iMC"}"#,
        );
        assert_eq!(
            e.event.as_deref(),
            Some("event=0x5,edge=0x0,period=100003,umask=0x01")
        );
        assert_eq!(e.pmu.as_deref(), Some("uncore_imc"));
        assert_eq!(e.desc.as_deref(), Some("Loads. Unit: uncore_imc "));
        let e = event(r#"{"EventName": "Z", "EventCode": "0"}"#);
        assert_eq!(e.event.as_deref(), Some("event=0"));
        assert_eq!(e.pmu, None, "no Unit: the core PMU");
        let e = event(r#"{"EventName": "Z", "Unit": "UMCPMC"}"#);
        assert_eq!(e.desc.as_deref(), Some("Unit: uncore_umcpmc "));
    }

    #[test]
    fn metrics_and_unknown_standard_events() {
        let e = event(
            r#"{"MetricName": "IPC", "MetricExpr": "a \\ b", "MetricThreshold": "x > 1",
                "MetricConstraint": "NO_NMI_WATCHDOG", "ArchStdEvent": "nope"}"#,
        );
        assert_eq!(e.metric_expr.as_deref(), Some("a \\ b"));
        assert_eq!(e.metric_threshold, None, "6.1 reads no threshold");
        assert_eq!(e.event_grouping.as_deref(), Some("NoGroupEventsNmi"));
        let Value::Object(jd) =
            serde_json::from_str(r#"{"MetricName": "X", "MetricConstraint": "NO_GROUP_EVENTS"}"#)
                .unwrap()
        else {
            panic!()
        };
        assert!(new(&jd, &ArchStd::new()).is_err());
    }
}
